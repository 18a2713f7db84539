/* Helpers shared by the per-device groups; they prove nothing on their own. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

gp_device *tst_dev;
gp_device_info tst_info;
gp_device **tst_all_devices;
size_t tst_all_count;

uint32_t tst_random_u32(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15u;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 0x2545f4914f6cdd1du) >> 32);
}

void tst_random_bytes(void *dst, size_t bytes, uint64_t seed)
{
    unsigned char *p = dst;
    uint64_t state = seed * 0x9e3779b97f4a7c15u + 1;
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)tst_random_u32(&state);
}

void *tst_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail_msg("malloc(%zu) failed", bytes);
    return p;
}

gp_buffer *tst_buffer(gp_memory memory, size_t bytes)
{
    gp_buffer *b = NULL;
    GP_OK(gp_buffer_create(tst_dev, memory, bytes, &b));
    assert_non_null(b);
    return b;
}

gp_program *tst_program(const char *source, const char *options)
{
    gp_program *p = NULL;
    GP_OK(gp_program_create(tst_dev, source, options, &p));
    assert_non_null(p);
    return p;
}

gp_kernel *tst_kernel(gp_program *program, const char *name)
{
    gp_kernel *k = NULL;
    GP_OK(gp_kernel_create(program, name, &k));
    assert_non_null(k);
    return k;
}

size_t tst_first_diff(const void *a, const void *b, size_t bytes)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < bytes; i++)
        if (x[i] != y[i])
            return i;
    return (size_t)-1;
}

void tst_check_buffer(gp_buffer *buffer, const void *expect, size_t bytes)
{
    unsigned char *got = tst_malloc(bytes);
    gp_status s = gp_buffer_read(NULL, buffer, 0, got, bytes);
    size_t at = s == GP_SUCCESS ? tst_first_diff(got, expect, bytes) : (size_t)-1;
    unsigned g = at != (size_t)-1 ? got[at] : 0, e = at != (size_t)-1 ? ((const unsigned char *)expect)[at] : 0;
    free(got);
    if (s != GP_SUCCESS)
        fail_msg("gp_buffer_read -> %s: %s", gp_status_name(s), gp_last_error());
    if (at != (size_t)-1)
        fail_msg("buffer byte %zu is 0x%02x, expected 0x%02x", at, g, e);
}

size_t tst_group_size(void)
{
    size_t g = 64;
    while (g > 1 && (g > tst_info.max_work_group_size || g > tst_info.max_work_item_sizes[0]))
        g /= 2;
    return g;
}

#define TST_SENTINEL "gp-test-sentinel-device"

void tst_plant_error_sentinel(void)
{
    gp_device *d = NULL;
    if (gp_device_find(TST_SENTINEL, &d) != GP_ERROR_NOT_FOUND || !strstr(gp_last_error(), TST_SENTINEL))
        fail_msg("could not plant the error sentinel: %s", gp_last_error());
}

int tst_error_sentinel_present(void) { return strstr(gp_last_error(), TST_SENTINEL) != NULL; }

void tst_set_env(const char *name, const char *value)
{
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}

char *tst_save_env(const char *name)
{
    const char *old = getenv(name);
    return old ? strdup(old) : NULL;
}

char *tst_other_variant(const char *env, const char *gpu_name, const char *cpu_name)
{
    char *saved = tst_save_env(env);
    setenv(env, tst_info.type == GP_DEVICE_CPU ? gpu_name : cpu_name, 1);
    return saved;
}

void tst_restore_env(const char *env, char *saved)
{
    tst_set_env(env, saved);
    free(saved);
}
