/* A plugin built for the next plugin ABI (backend FAKE_NAME): core must pass it over without
 * calling any hook. */
#include "backends/backend.h"

__attribute__((visibility("default"))) const gp__backend *gp_plugin_entry(void);

/* Every hook is NULL: a core that used this table after the version check would crash. */
static const gp__backend table = {
    .abi = GP__PLUGIN_ABI + 1,
    .name = FAKE_NAME,
    .prelude = "",
};

const gp__backend *gp_plugin_entry(void)
{
    return &table;
}
