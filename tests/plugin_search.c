/* Proves how core searches for plugins: one of another plugin ABI is refused with both versions
 * named (abi); it is passed over for a valid plugin further down the search path, and the reason
 * kept (passed-over); a relative folder, such as the current one, is never searched (relative). */
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

static const char *mode;

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

static gp_backend_info backend(const char *name)
{
    size_t n = 0;
    gp_backend_info b;
    memset(&b, 0, sizeof b);
    assert_int_equal(gp_backend_count(&n), GP_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(gp_backend_get_info(i, &b), GP_SUCCESS);
        if (strcmp(b.name, name) == 0)
            return b;
    }
    fail_msg("no backend %s", name);
    return b;
}

static int names_both_abis(const char *text)
{
    return has_number(text, GP__PLUGIN_ABI) && has_number(text, GP__PLUGIN_ABI + 1);
}

static void search(void **state)
{
    (void)state;
    const char *path = getenv("GPUPORT_PLUGIN_PATH");
    if (!path || !*path)
        fail_msg("run this with GPUPORT_PLUGIN_PATH set");
    if (strcmp(mode, "abi") == 0) {
        gp_backend_info b = backend("hip");
        assert_int_equal(b.available, 0);
        assert_int_equal(b.device_count, 0);
        if (!names_both_abis(b.reason))
            fail_msg("the reason does not name ABI %u and %u: %s", GP__PLUGIN_ABI, GP__PLUGIN_ABI + 1, b.reason);
        gp_device *d = NULL;
        assert_int_not_equal(gp_device_find("hip:0", &d), GP_SUCCESS);
        assert_null(d);
    } else if (strcmp(mode, "passed-over") == 0) {
        gp_backend_info b = backend("opencl");
        if (!b.available)
            fail_msg("a bad plugin in %s hid the good one: %s", path, b.reason);
        if (!strstr(b.reason, path) || !names_both_abis(b.reason))
            fail_msg("the reason does not say what was passed over: '%s'", b.reason);
        assert_null(strstr(b.plugin_path, path));
    } else if (strcmp(mode, "relative") == 0) {
        /* The current folder holds plugins of the wrong ABI for hip and opencl: never opened. */
        gp_backend_info hip = backend("hip"), cl = backend("opencl");
        if (names_both_abis(hip.reason))
            fail_msg("hip: a plugin in the current folder was opened: %s", hip.reason);
        if (!cl.available || cl.reason[0])
            fail_msg("opencl: available %d, reason '%s'", cl.available, cl.reason);
    } else {
        fail_msg("unknown mode %s", mode);
    }
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "abi";
    const struct CMUnitTest tests[] = {cmocka_unit_test(search)};
    return cmocka_run_group_tests_name(mode, tests, NULL, NULL) ? 1 : 0;
}
