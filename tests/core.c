/* Proves the device-independent API: versions, status texts, backend list, device lookup errors. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuport.h"

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        gp_status s_ = (call);                                                                     \
        if (s_ != (want))                                                                          \
            fail_msg("%s -> %s, expected %s", #call, gp_status_name(s_), gp_status_name(want));    \
        assert_true(gp_last_error()[0] != '\0');                                                   \
    } while (0)

static void version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", GP_VERSION_MAJOR, GP_VERSION_MINOR, GP_VERSION_PATCH);
    assert_int_equal(gp_version(), GP_VERSION_NUMBER);
    assert_int_equal(GP_VERSION_NUMBER, GP_VERSION_MAJOR * 10000 + GP_VERSION_MINOR * 100 + GP_VERSION_PATCH);
    assert_non_null(gp_version_string());
    assert_string_equal(gp_version_string(), want);
}

static void status_texts(void **state)
{
    (void)state;
    static const struct {
        gp_status status;
        const char *name, *text;
    } all[] = {
#define ROW(name, value, text) {name, #name, text},
        GP_STATUS_LIST(ROW)
#undef ROW
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_non_null(gp_status_name(all[i].status));
        assert_string_equal(gp_status_name(all[i].status), all[i].name);
        assert_non_null(gp_status_string(all[i].status));
        assert_string_equal(gp_status_string(all[i].status), all[i].text);
    }
    static const int unknown[] = {2, -15, 12345, -999999};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *name = gp_status_name((gp_status)unknown[i]), *text = gp_status_string((gp_status)unknown[i]);
        assert_non_null(name);
        assert_non_null(text);
        assert_true(name[0] != '\0');
        assert_true(text[0] != '\0');
        for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
            assert_string_not_equal(name, all[j].name);
    }
}

static void backends(void **state)
{
    (void)state;
    static const char *const names[] = {"cuda", "hip", "opencl"};
    size_t n = 0, devices = 0, total = 0;
    assert_int_equal(gp_backend_count(&n), GP_SUCCESS);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        gp_backend_info b;
        memset(&b, 0x5a, sizeof b);
        assert_int_equal(gp_backend_get_info(i, &b), GP_SUCCESS);
        assert_non_null(memchr(b.name, '\0', sizeof b.name));
        assert_non_null(memchr(b.reason, '\0', sizeof b.reason));
        assert_non_null(memchr(b.plugin_path, '\0', sizeof b.plugin_path));
        assert_string_equal(b.name, names[i]);
        assert_true(b.available == 0 || b.available == 1);
        if (!b.available) {
            assert_true(b.reason[0] != '\0');
            assert_int_equal(b.device_count, 0);
        }
        total += b.device_count;
    }
    gp_backend_info b;
    assert_int_not_equal(gp_backend_get_info(3, &b), GP_SUCCESS);
    assert_true(gp_last_error()[0] != '\0');
    assert_int_equal(gp_device_count(&devices), GP_SUCCESS);
    assert_int_equal(devices, total);
}

static void bad_default_device(void **state)
{
    (void)state;
    static const char *const specs[] = {"nosuch:0", "opencl:99", "cuda:x"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gp_device *d = NULL;
        assert_int_equal(setenv("GPUPORT_DEVICE", specs[i], 1), 0);
        EXPECT(gp_device_default(&d), GP_ERROR_NOT_FOUND);
        assert_null(d);
        if (!strstr(gp_last_error(), specs[i]))
            fail_msg("gp_last_error() does not name \"%s\": %s", specs[i], gp_last_error());
    }
    unsetenv("GPUPORT_DEVICE");
}

static void bad_find(void **state)
{
    (void)state;
    static const char *const specs[] = {"nosuch:0", "opencl:99", "cuda:x", "opencl:-1", "opencl:0x", "hip:1000000",
                                        "OPENCL:0 trailing", "gpu:0:0"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gp_device *d = NULL;
        gp_status s = gp_device_find(specs[i], &d);
        if (s != GP_ERROR_NOT_FOUND)
            fail_msg("gp_device_find(\"%s\") -> %s, expected GP_ERROR_NOT_FOUND", specs[i], gp_status_name(s));
        assert_null(d);
        assert_true(gp_last_error()[0] != '\0');
    }
    gp_device *d = NULL;
    EXPECT(gp_device_find(NULL, &d), GP_ERROR_INVALID_ARGUMENT);
    EXPECT(gp_device_find("opencl:0", NULL), GP_ERROR_INVALID_ARGUMENT);
}

static void null_out_pointers(void **state)
{
    (void)state;
    EXPECT(gp_backend_count(NULL), GP_ERROR_INVALID_ARGUMENT);
    EXPECT(gp_backend_get_info(0, NULL), GP_ERROR_INVALID_ARGUMENT);
    EXPECT(gp_device_count(NULL), GP_ERROR_INVALID_ARGUMENT);
    EXPECT(gp_device_get(0, NULL), GP_ERROR_INVALID_ARGUMENT);
    EXPECT(gp_device_default(NULL), GP_ERROR_INVALID_ARGUMENT);
}

static void device_index_out_of_range(void **state)
{
    (void)state;
    size_t n = 0;
    assert_int_equal(gp_device_count(&n), GP_SUCCESS);
    const size_t bad[] = {n, n + 1, SIZE_MAX};
    for (size_t i = 0; i < 3; i++) {
        gp_device *d = NULL;
        gp_status s = gp_device_get(bad[i], &d);
        if (s != GP_ERROR_NOT_FOUND && s != GP_ERROR_INVALID_ARGUMENT)
            fail_msg("gp_device_get(%zu) with %zu devices -> %s", bad[i], n, gp_status_name(s));
        assert_null(d);
        assert_true(gp_last_error()[0] != '\0');
    }
    /* Every index below the count gives a device. */
    for (size_t i = 0; i < n; i++) {
        gp_device *d = NULL;
        gp_device_info info;
        assert_int_equal(gp_device_get(i, &d), GP_SUCCESS);
        assert_non_null(d);
        assert_int_equal(gp_device_get_info(d, &info), GP_SUCCESS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version),
        cmocka_unit_test(status_texts),
        cmocka_unit_test(backends),
        cmocka_unit_test(bad_default_device),
        cmocka_unit_test(bad_find),
        cmocka_unit_test(null_out_pointers),
        cmocka_unit_test(device_index_out_of_range),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL) ? 1 : 0;
}
