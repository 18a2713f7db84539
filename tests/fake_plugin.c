/* A plugin built for the next plugin ABI: core must refuse it without calling any hook. */
#include "backends/backend.h"

__attribute__((visibility("default"))) const gp__backend *gp_plugin_entry(void);

/* Every hook is NULL: a core that used this table after the version check would crash. */
static const gp__backend table = {
    .abi = GP__PLUGIN_ABI + 1,
    .name = "hip",
    .prelude = "",
};

const gp__backend *gp_plugin_entry(void)
{
    return &table;
}
