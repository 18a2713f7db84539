/* Proves a backend whose vendor driver cannot be loaded is reported unavailable, with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpuport.h"

static const char *backend; /* "cuda" or "hip", from argv */

static int loadable(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

static gp_backend_info find_backend(void)
{
    size_t n = 0;
    gp_backend_info b;
    memset(&b, 0, sizeof b);
    assert_int_equal(gp_backend_count(&n), GP_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(gp_backend_get_info(i, &b), GP_SUCCESS);
        if (strcmp(b.name, backend) == 0)
            return b;
    }
    fail_msg("no backend named %s", backend);
    return b;
}

static void cuda(void **state)
{
    (void)state;
    gp_backend_info b = find_backend();
    if (loadable("libcuda.so.1")) {
        if (!b.available)
            fail_msg("libcuda.so.1 loads here, yet cuda is unavailable: %s", b.reason);
        assert_true(b.device_count >= 1);
        return;
    }
    assert_int_equal(b.available, 0);
    assert_int_equal(b.device_count, 0);
    if (!strstr(b.reason, "libcuda.so.1"))
        fail_msg("the reason does not name libcuda.so.1: %s", b.reason);
    gp_device *d = NULL;
    assert_int_not_equal(gp_device_find("cuda:0", &d), GP_SUCCESS);
    assert_null(d);
    assert_true(gp_last_error()[0] != '\0');
}

static void hip(void **state)
{
    (void)state;
    gp_backend_info b = find_backend();
    assert_int_equal(b.available, 0);
    assert_int_equal(b.device_count, 0);
    /* Without the runtime the reason names the library; with it but no GPU, it says so. */
    const char *expect = loadable("libamdhip64.so.5") || loadable("libamdhip64.so") ? "no AMD GPU" : "libamdhip64";
    if (!strstr(b.reason, expect) && !strstr(b.reason, "not found"))
        fail_msg("the reason does not say '%s': %s", expect, b.reason);
    gp_device *d = NULL;
    assert_int_not_equal(gp_device_find("hip:0", &d), GP_SUCCESS);
    assert_null(d);
    assert_true(gp_last_error()[0] != '\0');
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "cuda") != 0 && strcmp(argv[1], "hip") != 0)) {
        fprintf(stderr, "usage: %s cuda|hip\n", argv[0]);
        return 2;
    }
    backend = argv[1];
    if (strcmp(backend, "hip") == 0 && access("/dev/kfd", F_OK) == 0) {
        fprintf(stderr, "/dev/kfd exists: this machine may have an AMD GPU, which the device tests cover\n");
        return 77;
    }
    const struct CMUnitTest cuda_tests[] = {cmocka_unit_test(cuda)};
    const struct CMUnitTest hip_tests[] = {cmocka_unit_test(hip)};
    int failed = strcmp(backend, "cuda") == 0 ? cmocka_run_group_tests_name("cuda_unavailable", cuda_tests, NULL, NULL)
                                              : cmocka_run_group_tests_name("hip_unavailable", hip_tests, NULL, NULL);
    return failed ? 1 : 0;
}
