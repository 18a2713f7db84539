/* Proves a device's info is sane and that its spec names it back through gp_device_find. */
#include "common.h"

#include <stdio.h>
#include <string.h>

static void info_sane(void **state)
{
    (void)state;
    gp_device_info info;
    memset(&info, 0xab, sizeof info);
    GP_OK(gp_device_get_info(tst_dev, &info));
    assert_non_null(memchr(info.name, '\0', sizeof info.name));
    assert_true(strlen(info.name) > 0);
    assert_non_null(memchr(info.vendor, '\0', sizeof info.vendor));
    assert_true(strcmp(info.backend, "cuda") == 0 || strcmp(info.backend, "hip") == 0 ||
                strcmp(info.backend, "opencl") == 0);
    assert_true(info.type == GP_DEVICE_GPU || info.type == GP_DEVICE_CPU || info.type == GP_DEVICE_OTHER);
    assert_true(info.global_mem_bytes > 0);
    assert_true(info.local_mem_bytes > 0);
    assert_true(info.local_mem_own_bytes > 0 && info.local_mem_own_bytes <= info.local_mem_bytes);
    assert_true(info.compute_units >= 1);
    assert_true(info.max_work_group_size >= 1);
    for (int d = 0; d < 3; d++)
        assert_true(info.max_work_item_sizes[d] >= 1);
    assert_true(info.fp64 == 0 || info.fp64 == 1);
    assert_true(info.unified_memory == 0 || info.unified_memory == 1);
    assert_non_null(memchr(info.driver_version, '\0', sizeof info.driver_version));
    assert_non_null(memchr(info.runtime_version, '\0', sizeof info.runtime_version));
}

/* The vendor names the GPU's maker: NVIDIA through CUDA; through HIP, AMD, or NVIDIA where HIP
 * runs on its NVIDIA platform (the driver version says "nvidia platform"). HIP on NVIDIA once said AMD,
 * because shared code wrote the backend's default over what the platform had set. */
static void vendor_names_the_maker(void **state)
{
    (void)state;
    gp_device_info info;
    GP_OK(gp_device_get_info(tst_dev, &info));
    assert_true(strlen(info.vendor) > 0);
    int nvidia = strstr(info.vendor, "NVIDIA") != NULL, amd = strstr(info.vendor, "AMD") != NULL ||
                                                               strstr(info.vendor, "Advanced Micro Devices") != NULL;
    if (strcmp(info.backend, "cuda") == 0 && !nvidia)
        fail_msg("a CUDA device whose vendor is '%s'", info.vendor);
    if (strcmp(info.backend, "hip") == 0) {
        int on_nvidia = strstr(info.driver_version, "nvidia platform") != NULL;
        if (on_nvidia ? !nvidia || amd : !amd || nvidia)
            fail_msg("HIP on %s reports vendor '%s' (driver %s)", on_nvidia ? "NVIDIA's platform" : "AMD's platform",
                     info.vendor, info.driver_version);
    }
}

/* The backend string must be the name of an available backend that lists this many devices. */
static void backend_matches(void **state)
{
    (void)state;
    size_t n = 0;
    GP_OK(gp_backend_count(&n));
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        gp_backend_info b;
        GP_OK(gp_backend_get_info(i, &b));
        if (strcmp(b.name, tst_info.backend) == 0) {
            found = 1;
            assert_int_equal(b.available, 1);
            assert_true(tst_info.backend_index < b.device_count);
        }
    }
    assert_true(found);

    char spec[64];
    snprintf(spec, sizeof spec, "%s:%zu", tst_info.backend, tst_info.backend_index);
    gp_device *again = NULL;
    GP_OK(gp_device_find(spec, &again));
    assert_ptr_equal(again, tst_dev);
}

static void default_stream_and_sync(void **state)
{
    (void)state;
    gp_stream *a = NULL, *b = NULL;
    GP_OK(gp_stream_get_default(tst_dev, &a));
    GP_OK(gp_stream_get_default(tst_dev, &b));
    assert_non_null(a);
    assert_ptr_equal(a, b);
    GP_OK(gp_stream_synchronize(a));
    GP_OK(gp_device_synchronize(tst_dev));
}

const struct CMUnitTest tst_device_tests[] = {
    cmocka_unit_test(info_sane),
    cmocka_unit_test(vendor_names_the_maker),
    cmocka_unit_test(backend_matches),
    cmocka_unit_test(default_stream_and_sync),
};
const size_t tst_device_tests_count = sizeof tst_device_tests / sizeof tst_device_tests[0];
