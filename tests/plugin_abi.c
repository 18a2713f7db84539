/* Proves core refuses a plugin of another plugin ABI and says which versions it saw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

/* 1 when text holds the number n as a whole token, not as part of a longer number. */
static int has_number(const char *text, unsigned n)
{
    char want[16];
    int len = snprintf(want, sizeof want, "%u", n);
    for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) {
        int before = p > text && isdigit((unsigned char)p[-1]);
        int after = isdigit((unsigned char)p[len]);
        if (!before && !after)
            return 1;
    }
    return 0;
}

static void refused(void **state)
{
    (void)state;
    const char *path = getenv("GPUPORT_PLUGIN_PATH");
    if (!path || !*path)
        fail_msg("run this with GPUPORT_PLUGIN_PATH set to the fake plugin's folder");
    size_t n = 0;
    assert_int_equal(gp_backend_count(&n), GP_SUCCESS);
    gp_backend_info b;
    memset(&b, 0, sizeof b);
    size_t i = 0;
    for (; i < n; i++) {
        assert_int_equal(gp_backend_get_info(i, &b), GP_SUCCESS);
        if (strcmp(b.name, "hip") == 0)
            break;
    }
    assert_true(i < n);
    assert_int_equal(b.available, 0);
    assert_int_equal(b.device_count, 0);
    if (!has_number(b.reason, GP__PLUGIN_ABI) || !has_number(b.reason, GP__PLUGIN_ABI + 1))
        fail_msg("the reason does not name ABI %u and %u: %s", GP__PLUGIN_ABI, GP__PLUGIN_ABI + 1, b.reason);
    gp_device *d = NULL;
    assert_int_not_equal(gp_device_find("hip:0", &d), GP_SUCCESS);
    assert_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(refused)};
    return cmocka_run_group_tests_name("plugin_abi", tests, NULL, NULL) ? 1 : 0;
}
