/* Proves buffers of every memory kind and size hold what is written, map/unmap shows it, and a
 * device filled to refusal says so and then works again. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_memory kinds[] = {GP_MEMORY_DEVICE, GP_MEMORY_PINNED, GP_MEMORY_MAPPED};

static void every_kind_and_size(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 7, 4096, 1000003};
    for (size_t k = 0; k < 3; k++) {
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z];
            gp_buffer *b = tst_buffer(kinds[k], n);
            size_t got = 12345;
            gp_device *dev = NULL;
            GP_OK(gp_buffer_get_size(b, &got));
            assert_int_equal(got, n);
            GP_OK(gp_buffer_get_device(b, &dev));
            assert_ptr_equal(dev, tst_dev);

            unsigned char *src = tst_malloc(n), *dst = tst_malloc(n);
            tst_random_bytes(src, n, 100 + k * 10 + z);
            memset(dst, 0, n);
            GP_OK(gp_buffer_write(NULL, b, 0, src, n));
            GP_OK(gp_buffer_read(NULL, b, 0, dst, n));
            assert_int_equal(tst_first_diff(src, dst, n), (size_t)-1);
            /* Empty ranges are valid anywhere up to the end, even on an empty buffer. */
            GP_OK(gp_buffer_write(NULL, b, n, src, 0));
            GP_OK(gp_buffer_read(NULL, b, n, dst, 0));
            GP_OK(gp_buffer_copy(NULL, b, n, b, 0, 0));
            free(src);
            free(dst);
            GP_OK(gp_buffer_destroy(b));
        }
    }
}

static void large_buffer(void **state)
{
    (void)state;
    const size_t n = (size_t)256 << 20;
    if (tst_info.global_mem_bytes < 4 * (uint64_t)n) {
        print_message("skipping: %llu bytes of device memory is too little for a 256 MiB buffer\n",
                      (unsigned long long)tst_info.global_mem_bytes);
        skip();
    }
    uint32_t *src = tst_malloc(n), *dst = tst_malloc(n);
    for (size_t i = 0; i < n / 4; i++)
        src[i] = (uint32_t)(i * 2654435761u) ^ 0x5a5a5a5au;
    memset(dst, 0, n);
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, n);
    GP_OK(gp_buffer_write(NULL, b, 0, src, n));
    GP_OK(gp_buffer_read(NULL, b, 0, dst, n));
    size_t at = tst_first_diff(src, dst, n);
    /* The last page read alone: offsets above 2^27 must address the right bytes. */
    unsigned char tail[4096];
    GP_OK(gp_buffer_read(NULL, b, n - sizeof tail, tail, sizeof tail));
    int tail_ok = memcmp(tail, (unsigned char *)src + n - sizeof tail, sizeof tail) == 0;
    free(src);
    free(dst);
    GP_OK(gp_buffer_destroy(b));
    assert_int_equal(at, (size_t)-1);
    assert_true(tail_ok);
}

/* Host writes through the mapping are what the device then reads, and the reverse. */
static void map_unmap(void **state)
{
    (void)state;
    const size_t n = 10007;
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    for (size_t k = 1; k < 3; k++) {
        for (int use_stream = 0; use_stream < 2; use_stream++) {
            gp_stream *st = use_stream ? s : NULL;
            gp_buffer *b = tst_buffer(kinds[k], n);
            unsigned char *ref = tst_malloc(n), *got = tst_malloc(n);
            tst_random_bytes(ref, n, 200 + k);

            void *host = NULL;
            GP_OK(gp_buffer_map(st, b, &host));
            assert_non_null(host);
            memcpy(host, ref, n);
            GP_OK(gp_buffer_unmap(st, b));
            memset(got, 0, n);
            GP_OK(gp_buffer_read(st, b, 0, got, n));
            assert_int_equal(tst_first_diff(ref, got, n), (size_t)-1);

            tst_random_bytes(ref, n, 300 + k);
            GP_OK(gp_buffer_write(st, b, 0, ref, n));
            host = NULL;
            GP_OK(gp_buffer_map(st, b, &host));
            assert_non_null(host);
            size_t at = tst_first_diff(ref, host, n);
            GP_OK(gp_buffer_unmap(st, b));
            assert_int_equal(at, (size_t)-1);

            free(ref);
            free(got);
            GP_OK(gp_buffer_destroy(b));
        }
    }
    GP_OK(gp_stream_destroy(s));
}

static const char *index_src =
    "GP_KERNEL void write_index(GP_GLOBAL uint *out, uint n, uint mul, uint add)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < n) out[i] = i * mul + add;\n"
    "}\n";

/* A kernel writes pinned and mapped buffers; mapping afterwards shows the kernel's values. */
static void kernel_then_map(void **state)
{
    (void)state;
    const uint32_t n = 4099, mul = 7, add = 3;
    gp_program *p = tst_program(index_src, NULL);
    gp_kernel *k = tst_kernel(p, "write_index");
    for (size_t m = 1; m < 3; m++) {
        gp_buffer *b = tst_buffer(kinds[m], n * sizeof(uint32_t));
        uint32_t zero = 0;
        GP_OK(gp_buffer_fill(NULL, b, 0, n * sizeof(uint32_t), &zero, sizeof zero));
        size_t global = n;
        gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n), GP_VALUE(mul), GP_VALUE(add)};
        GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 4, args));
        void *host = NULL;
        GP_OK(gp_buffer_map(NULL, b, &host));
        assert_non_null(host);
        const uint32_t *v = host;
        size_t bad = (size_t)-1;
        for (uint32_t i = 0; i < n && bad == (size_t)-1; i++)
            if (v[i] != i * mul + add)
                bad = i;
        GP_OK(gp_buffer_unmap(NULL, b));
        GP_OK(gp_buffer_destroy(b));
        if (bad != (size_t)-1)
            fail_msg("memory kind %zu: element %zu is wrong after the kernel", m, bad);
    }
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* Buffers of a sixth of the device's memory until one is refused: the refusal is
 * GP_ERROR_OUT_OF_DEVICE_MEMORY with a message (not an abort at first use, as pocl and NVIDIA's
 * OpenCL would give), and once they are freed the device works again. */
static void fill_to_refusal(void **state)
{
    (void)state;
    enum { MOST = 16 };
    const size_t chunk = (size_t)(tst_info.global_mem_bytes / 6) & ~(size_t)4095;
    gp_buffer *held[MOST] = {NULL};
    size_t n = 0;
    gp_status st = GP_SUCCESS;
    while (n < MOST && (st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, chunk, &held[n])) == GP_SUCCESS)
        n++;
    char why[512];
    snprintf(why, sizeof why, "%s", gp_last_error());
    for (size_t i = 0; i < n; i++)
        GP_OK(gp_buffer_destroy(held[i]));
    if (st != GP_ERROR_OUT_OF_DEVICE_MEMORY)
        fail_msg("after %zu buffers of %zu bytes: %s (%s), expected GP_ERROR_OUT_OF_DEVICE_MEMORY", n, chunk,
                 gp_status_name(st), why);
    assert_true(n >= 1 && n <= 6);
    assert_true(why[0] != '\0');

    uint32_t v[1000], back[1000];
    for (uint32_t i = 0; i < 1000; i++)
        v[i] = i * 7u + 1u;
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    GP_OK(gp_map(NULL, GP_MAP_SCALE, GP_U32, 1000, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &(gp_scalar){.u = 3}));
    GP_OK(gp_buffer_read(NULL, b, 0, back, sizeof back));
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(back[i], v[i] * 3u);
    GP_OK(gp_buffer_destroy(b));
}

const struct CMUnitTest tst_buffer_tests[] = {
    cmocka_unit_test(every_kind_and_size),
    cmocka_unit_test(large_buffer),
    cmocka_unit_test(fill_to_refusal),
    cmocka_unit_test(map_unmap),
    cmocka_unit_test(kernel_then_map),
};
const size_t tst_buffer_tests_count = sizeof tst_buffer_tests / sizeof tst_buffer_tests[0];
