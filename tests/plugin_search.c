/* Proves how core searches for plugins: one of another plugin ABI is refused with both versions
 * named (abi); it is passed over for a valid plugin further down the search path, and the reason
 * kept (passed-over); a relative folder, such as the current one, is never searched (relative);
 * a valid plugin in a GPUPORT_PLUGIN_PATH folder that others can write, or that others can write
 * itself, is never opened, and the reason says which and why (untrusted PLUGIN). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"

static const char *mode;
static char base[] = "/tmp/gpuport-untrusted-XXXXXX", open_folder[256], open_file[300]; /* the untrusted mode's */

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
    } else if (strcmp(mode, "untrusted") == 0) {
        gp_backend_info b = backend("opencl");
        if (strstr(b.plugin_path, "gpuport-untrusted"))
            fail_msg("an untrusted plugin was opened: %s", b.plugin_path);
        if (!strstr(b.reason, open_folder) || !strstr(b.reason, "mode 0777") || !strstr(b.reason, open_file) ||
            !strstr(b.reason, "mode 0666"))
            fail_msg("the reason does not name both plugins and their modes: '%s'", b.reason);
    } else {
        fail_msg("unknown mode %s", mode);
    }
}

/* Copies the plugin at from to folder/libgpuport-opencl.so, made perm. */
static int plant(const char *from, const char *folder, mode_t perm, char *to, size_t len)
{
    snprintf(to, len, "%s/libgpuport-opencl.so", folder);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out) ok = fclose(out) == 0 && ok;
    return ok && chmod(to, perm) == 0;
}

/* A folder anyone can write holding a good plugin, and a good folder holding a plugin anyone can
 * write, both named in GPUPORT_PLUGIN_PATH. */
static void untrusted_cleanup(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/libgpuport-opencl.so", open_folder);
    unlink(path);
    unlink(open_file);
    snprintf(path, sizeof path, "%s/good", base);
    rmdir(path);
    rmdir(open_folder);
    rmdir(base);
}

static int untrusted_setup(const char *plugin)
{
    char other[300], path[600];
    if (!plugin || !mkdtemp(base) || atexit(untrusted_cleanup) != 0) return 0;
    snprintf(open_folder, sizeof open_folder, "%s/open", base);
    snprintf(other, sizeof other, "%s/good", base);
    if (mkdir(open_folder, 0700) || chmod(open_folder, 0777) || mkdir(other, 0755) || chmod(other, 0755) ||
        !plant(plugin, open_folder, 0755, path, sizeof path) || !plant(plugin, other, 0666, open_file, sizeof open_file))
        return 0;
    snprintf(path, sizeof path, "%s:%s", open_folder, other);
    return setenv("GPUPORT_PLUGIN_PATH", path, 1) == 0;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "abi";
    if (strcmp(mode, "untrusted") == 0 && !untrusted_setup(argc > 2 ? argv[2] : NULL)) {
        fprintf(stderr, "untrusted: usage: %s untrusted PLUGIN (and a writable /tmp)\n", argv[0]);
        return 1;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(search)};
    return cmocka_run_group_tests_name(mode, tests, NULL, NULL) ? 1 : 0;
}
