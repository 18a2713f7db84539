/* Shared helpers of the per-device suite: the device under test, status assertions, test data. */
#ifndef GPUPORT_TESTS_COMMON_H
#define GPUPORT_TESTS_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpuport.h"

/* The device the current groups run on, and every device of the machine (for mismatch tests). */
extern gp_device *tst_dev;
extern gp_device_info tst_info;
extern gp_device **tst_all_devices;
extern size_t tst_all_count;

/* Fails the test with the status name and gp_last_error() unless the call succeeds. */
#define GP_OK(call)                                                                                \
    do {                                                                                           \
        gp_status gp__s = (call);                                                                  \
        if (gp__s != GP_SUCCESS)                                                                   \
            fail_msg("%s -> %s: %s", #call, gp_status_name(gp__s), gp_last_error());               \
    } while (0)

/* Fails the test unless the call returns exactly `want` and, when that is an error, sets its
 * own detail message: a sentinel message is planted first, and must be gone afterwards. */
void tst_plant_error_sentinel(void);
int tst_error_sentinel_present(void);
#define GP_EXPECT(call, want)                                                                      \
    do {                                                                                           \
        tst_plant_error_sentinel();                                                                \
        gp_status gp__s = (call);                                                                  \
        if (gp__s != (want))                                                                       \
            fail_msg("%s -> %s, expected %s (%s)", #call, gp_status_name(gp__s),                   \
                     gp_status_name(want), gp_last_error());                                       \
        if ((want) != GP_SUCCESS && (gp_last_error()[0] == '\0' || tst_error_sentinel_present()))  \
            fail_msg("%s -> %s without a message of its own", #call, gp_status_name(gp__s));       \
    } while (0)

/* Deterministic bytes and words for a seed (xorshift64*), so every run sees the same data. */
void tst_random_bytes(void *dst, size_t bytes, uint64_t seed);
/* Sets the environment variable name to value, or unsets it for NULL. */
void tst_set_env(const char *name, const char *value);
/* A copy of the variable's value (NULL when unset), to pass to tst_restore_env. */
char *tst_save_env(const char *name);
/* For primitives with a GPU and a CPU kernel variant: puts in force, through the environment
 * variable env, the one this device does not run by default (gpu_name on CPUs, cpu_name
 * elsewhere); returns the variable's old value (to pass to tst_restore_env). */
char *tst_other_variant(const char *env, const char *gpu_name, const char *cpu_name);
void tst_restore_env(const char *env, char *saved);
uint32_t tst_random_u32(uint64_t *state);

/* Allocation helpers that fail the test instead of returning NULL. */
void *tst_malloc(size_t bytes);
gp_buffer *tst_buffer(gp_memory memory, size_t bytes);
gp_program *tst_program(const char *source, const char *options);
gp_kernel *tst_kernel(gp_program *program, const char *name);

/* Asserts that the whole buffer holds exactly `expect`. */
void tst_check_buffer(gp_buffer *buffer, const void *expect, size_t bytes);
/* Index of the first differing byte, or (size_t)-1 when equal. */
size_t tst_first_diff(const void *a, const void *b, size_t bytes);

/* A work-group size that every device and kernel of the suite accepts: a power of two <= 64. */
size_t tst_group_size(void);

extern const struct CMUnitTest tst_device_tests[];
extern const size_t tst_device_tests_count;
extern const struct CMUnitTest tst_buffer_tests[];
extern const size_t tst_buffer_tests_count;
extern const struct CMUnitTest tst_copy_tests[];
extern const size_t tst_copy_tests_count;
extern const struct CMUnitTest tst_stream_tests[];
extern const size_t tst_stream_tests_count;
extern const struct CMUnitTest tst_kernel_tests[];
extern const size_t tst_kernel_tests_count;
extern const struct CMUnitTest tst_cuda_c_tests[];
extern const size_t tst_cuda_c_tests_count;
extern const struct CMUnitTest tst_launch_tests[];
extern const size_t tst_launch_tests_count;
extern const struct CMUnitTest tst_thread_tests[];
extern const size_t tst_thread_tests_count;
extern const struct CMUnitTest tst_bad_input_tests[];
extern const size_t tst_bad_input_tests_count;
extern const struct CMUnitTest tst_map_tests[];
extern const size_t tst_map_tests_count;
extern const struct CMUnitTest tst_reduce_tests[];
extern const size_t tst_reduce_tests_count;
extern const struct CMUnitTest tst_scan_tests[];
extern const size_t tst_scan_tests_count;
extern const struct CMUnitTest tst_stencil_tests[];
extern const size_t tst_stencil_tests_count;
extern const struct CMUnitTest tst_gemm_tests[];
extern const size_t tst_gemm_tests_count;
extern const struct CMUnitTest tst_cache_tests[];
extern const size_t tst_cache_tests_count;
extern const struct CMUnitTest tst_interop_tests[];
extern const size_t tst_interop_tests_count;
extern const struct CMUnitTest tst_pair_tests[];
extern const size_t tst_pair_tests_count;

#endif
