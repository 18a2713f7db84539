/* Proves writes, reads, copies and fills in every direction touch exactly the bytes asked for. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static const gp_memory kinds[] = {GP_MEMORY_DEVICE, GP_MEMORY_PINNED, GP_MEMORY_MAPPED};

static gp_status do_write(gp_stream *s, int async, gp_buffer *b, size_t off, const void *src, size_t n)
{
    return async ? gp_buffer_write_async(s, b, off, src, n) : gp_buffer_write(s, b, off, src, n);
}

static gp_status do_read(gp_stream *s, int async, gp_buffer *b, size_t off, void *dst, size_t n)
{
    return async ? gp_buffer_read_async(s, b, off, dst, n) : gp_buffer_read(s, b, off, dst, n);
}

static gp_status do_copy(gp_stream *s, int async, gp_buffer *d, size_t doff, gp_buffer *b, size_t soff, size_t n)
{
    return async ? gp_buffer_copy_async(s, d, doff, b, soff, n) : gp_buffer_copy(s, d, doff, b, soff, n);
}

static gp_status do_fill(gp_stream *s, int async, gp_buffer *b, size_t off, size_t n, const void *pat, size_t ps)
{
    return async ? gp_buffer_fill_async(s, b, off, n, pat, ps) : gp_buffer_fill(s, b, off, n, pat, ps);
}

/* Whole and partial writes build the same bytes as memcpy into a host model; partial reads
 * write exactly their range of the host destination. */
static void write_read_offsets(void **state)
{
    (void)state;
    enum { N = 10007 };
    static const size_t ranges[][2] = {{0, 1}, {1, 1}, {333, 4000}, {N - 7, 7}, {N - 1, 1}, {5, N - 5}};
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    unsigned char *model = tst_malloc(N), *data = tst_malloc(N), *got = tst_malloc(N + 32);
    for (size_t k = 0; k < 3; k++) {
        for (int async = 0; async < 2; async++) {
            gp_stream *st = async ? s : NULL;
            gp_buffer *b = tst_buffer(kinds[k], N);
            tst_random_bytes(model, N, 1 + k);
            GP_OK(do_write(st, async, b, 0, model, N));
            if (async)
                GP_OK(gp_stream_synchronize(s));
            for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
                size_t off = ranges[r][0], n = ranges[r][1];
                tst_random_bytes(data, n, 50 + r);
                GP_OK(do_write(st, async, b, off, data, n));
                if (async)
                    GP_OK(gp_stream_synchronize(s));
                memcpy(model + off, data, n);
            }
            tst_check_buffer(b, model, N);
            for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
                size_t off = ranges[r][0], n = ranges[r][1];
                memset(got, 0xee, N + 32);
                GP_OK(do_read(st, async, b, off, got + 16, n));
                if (async)
                    GP_OK(gp_stream_synchronize(s));
                assert_int_equal(tst_first_diff(got + 16, model + off, n), (size_t)-1);
                for (size_t i = 0; i < 16; i++) {
                    assert_int_equal(got[i], 0xee);
                    assert_int_equal(got[16 + n + i], 0xee);
                }
            }
            GP_OK(gp_buffer_destroy(b));
        }
    }
    free(model);
    free(data);
    free(got);
    GP_OK(gp_stream_destroy(s));
}

/* Every (source kind, destination kind) pair, blocking and queued: whole copies, then ranges
 * whose neighbours must keep their bytes. */
static void copy_every_direction(void **state)
{
    (void)state;
    enum { N = (1 << 20) + 37 }; /* over 1 MiB: copies within a CPU device run as a kernel */
    static const size_t ranges[][3] = {{0, 0, N}, {13, 101, 777}, {0, N - 1, 1}, {N - 300, 0, 300}, {7, 9, N - 16}};
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    unsigned char *src = tst_malloc(N), *model = tst_malloc(N);
    for (size_t a = 0; a < 3; a++) {
        for (size_t b = 0; b < 3; b++) {
            for (int async = 0; async < 2; async++) {
                gp_stream *st = async ? s : NULL;
                gp_buffer *bs = tst_buffer(kinds[a], N), *bd = tst_buffer(kinds[b], N);
                tst_random_bytes(src, N, 7 + a);
                GP_OK(gp_buffer_write(NULL, bs, 0, src, N));
                for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
                    size_t so = ranges[r][0], d = ranges[r][1], n = ranges[r][2];
                    tst_random_bytes(model, N, 1000 + r + b);
                    GP_OK(gp_buffer_write(NULL, bd, 0, model, N));
                    GP_OK(do_copy(st, async, bd, d, bs, so, n));
                    if (async)
                        GP_OK(gp_stream_synchronize(s));
                    memcpy(model + d, src + so, n);
                    tst_check_buffer(bd, model, N);
                }
                tst_check_buffer(bs, src, N);
                GP_OK(gp_buffer_destroy(bs));
                GP_OK(gp_buffer_destroy(bd));
            }
        }
    }
    free(src);
    free(model);
    GP_OK(gp_stream_destroy(s));
}

/* A copy over 64 MiB, where a CPU device's copy stores past its caches: bytes before the
 * destination's first 16-byte boundary, then 16 at a time, then the tail; its neighbours keep
 * theirs. */
static void copy_large(void **state)
{
    (void)state;
    enum { N = (64 << 20) + 64, SO = 3, DO = 21, LEN = N - 40 };
    unsigned char *src = tst_malloc(N), *model = tst_malloc(N);
    tst_random_bytes(src, N, 5);
    tst_random_bytes(model, N, 6);
    gp_buffer *bs = tst_buffer(GP_MEMORY_DEVICE, N), *bd = tst_buffer(GP_MEMORY_DEVICE, N);
    GP_OK(gp_buffer_write(NULL, bs, 0, src, N));
    GP_OK(gp_buffer_write(NULL, bd, 0, model, N));
    GP_OK(gp_buffer_copy(NULL, bd, DO, bs, SO, LEN));
    memcpy(model + DO, src + SO, LEN);
    tst_check_buffer(bd, model, N);
    GP_OK(gp_buffer_destroy(bs));
    GP_OK(gp_buffer_destroy(bd));
    free(src);
    free(model);
}

/* Copies between disjoint ranges of one buffer. */
static void copy_within_buffer(void **state)
{
    (void)state;
    enum { N = 8192 };
    unsigned char *model = tst_malloc(N);
    tst_random_bytes(model, N, 77);
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, N);
    GP_OK(gp_buffer_write(NULL, b, 0, model, N));
    GP_OK(gp_buffer_copy(NULL, b, 5000, b, 3, 1500));
    memmove(model + 5000, model + 3, 1500);
    tst_check_buffer(b, model, N);
    GP_OK(gp_buffer_destroy(b));
    free(model);
}

/* A chain queued on one stream (write, copy, copy, read) is done in order; host memory is
 * looked at only after the synchronize. */
static void async_chain(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    unsigned char *src = tst_malloc(N), *dst = tst_malloc(N);
    tst_random_bytes(src, N, 4242);
    memset(dst, 0, N);
    gp_buffer *pin = tst_buffer(GP_MEMORY_PINNED, N), *dev = tst_buffer(GP_MEMORY_DEVICE, N),
              *map = tst_buffer(GP_MEMORY_MAPPED, N);
    GP_OK(gp_buffer_write_async(s, pin, 0, src, N));
    GP_OK(gp_buffer_copy_async(s, dev, 0, pin, 0, N));
    GP_OK(gp_buffer_copy_async(s, map, 0, dev, 0, N));
    GP_OK(gp_buffer_read_async(s, map, 0, dst, N));
    GP_OK(gp_stream_synchronize(s));
    size_t at = tst_first_diff(src, dst, N);
    free(src);
    free(dst);
    GP_OK(gp_buffer_destroy(pin));
    GP_OK(gp_buffer_destroy(dev));
    GP_OK(gp_buffer_destroy(map));
    GP_OK(gp_stream_destroy(s));
    assert_int_equal(at, (size_t)-1);
}

/* Fills of 1, 2, 4 and 8 byte patterns at offsets change exactly their range. */
static void fill_patterns(void **state)
{
    (void)state;
    enum { N = 4096 };
    static const unsigned char pat[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    unsigned char *model = tst_malloc(N);
    for (size_t k = 0; k < 3; k++) {
        for (int async = 0; async < 2; async++) {
            for (size_t ps = 1; ps <= 8; ps *= 2) {
                const size_t u = N / ps; /* the buffer in pattern units */
                const size_t spans[][2] = {{3, 101}, {0, 1}, {0, u}, {u - 1, 1}, {17, 0}, {1, u - 2}};
                for (size_t r = 0; r < sizeof spans / sizeof spans[0]; r++) {
                    size_t off = spans[r][0] * ps, n = spans[r][1] * ps;
                    gp_stream *st = async ? s : NULL;
                    gp_buffer *b = tst_buffer(kinds[k], N);
                    tst_random_bytes(model, N, 900 + r + ps);
                    GP_OK(gp_buffer_write(NULL, b, 0, model, N));
                    GP_OK(do_fill(st, async, b, off, n, pat, ps));
                    if (async)
                        GP_OK(gp_stream_synchronize(s));
                    for (size_t i = 0; i < n; i++)
                        model[off + i] = pat[i % ps];
                    tst_check_buffer(b, model, N);
                    GP_OK(gp_buffer_destroy(b));
                }
            }
        }
    }
    free(model);
    GP_OK(gp_stream_destroy(s));
}

const struct CMUnitTest tst_copy_tests[] = {
    cmocka_unit_test(write_read_offsets),
    cmocka_unit_test(copy_every_direction),
    cmocka_unit_test(copy_large),
    cmocka_unit_test(copy_within_buffer),
    cmocka_unit_test(async_chain),
    cmocka_unit_test(fill_patterns),
};
const size_t tst_copy_tests_count = sizeof tst_copy_tests / sizeof tst_copy_tests[0];
