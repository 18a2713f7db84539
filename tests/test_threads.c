/* Proves four threads get correct results from one shared kernel, each on its own stream, and
 * from the primitives on one shared stream while its scratch memory is trimmed and regrown; and
 * that device-wide synchronization survives other threads creating and destroying streams. */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "GP_KERNEL void affine(GP_GLOBAL const uint *x, GP_GLOBAL uint *y, uint n, uint a, uint b)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + b + y[i];\n"
    "}\n";

enum { THREADS = 4, ITERS = 50, N = 4099 };

typedef struct worker {
    gp_kernel *kernel;
    unsigned id;
    int errors;
    char first[256]; /* what went wrong first, reported by the main thread */
} worker;

static void note(worker *w, const char *what, gp_status s)
{
    if (w->errors++ == 0)
        snprintf(w->first, sizeof w->first, "%s: %s %s", what, gp_status_name(s), gp_last_error());
}

/* cmocka's assertions jump out of the calling thread's stack, so workers only count errors. */
static void *run(void *arg)
{
    worker *w = arg;
    gp_stream *s = NULL;
    gp_buffer *bx = NULL, *by = NULL;
    uint32_t x[N], y[N], ref[N];
    gp_status st;
    if ((st = gp_stream_create(tst_dev, &s)) != GP_SUCCESS) {
        note(w, "stream", st);
        return NULL;
    }
    if ((st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, sizeof x, &bx)) != GP_SUCCESS ||
        (st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, sizeof y, &by)) != GP_SUCCESS) {
        note(w, "buffer", st);
        goto out;
    }
    uint64_t rs = 7000 + w->id;
    for (uint32_t it = 0; it < ITERS; it++) {
        uint32_t n = N - it * 13 - w->id, a = it + 2 + w->id, b = w->id * 1000 + it;
        for (uint32_t i = 0; i < N; i++) {
            x[i] = tst_random_u32(&rs);
            y[i] = tst_random_u32(&rs);
            ref[i] = i < n ? a * x[i] + b + y[i] : y[i];
        }
        size_t global = n;
        gp_arg args[] = {GP_BUFFER(bx), GP_BUFFER(by), GP_VALUE(n), GP_VALUE(a), GP_VALUE(b)};
        if ((st = gp_buffer_write_async(s, bx, 0, x, sizeof x)) != GP_SUCCESS ||
            (st = gp_buffer_write_async(s, by, 0, y, sizeof y)) != GP_SUCCESS ||
            (st = gp_kernel_launch(s, w->kernel, 1, &global, NULL, 5, args)) != GP_SUCCESS ||
            (st = gp_buffer_read_async(s, by, 0, y, sizeof y)) != GP_SUCCESS ||
            (st = gp_stream_synchronize(s)) != GP_SUCCESS) {
            note(w, "iteration", st);
            break;
        }
        if (memcmp(y, ref, sizeof y) != 0)
            note(w, "result differs from the host", GP_SUCCESS);
    }
out:
    gp_buffer_destroy(bx);
    gp_buffer_destroy(by);
    gp_stream_destroy(s);
    return NULL;
}

static void four_threads(void **state)
{
    (void)state;
    gp_program *p = tst_program(src, NULL);
    gp_kernel *k = tst_kernel(p, "affine");
    worker w[THREADS];
    pthread_t t[THREADS];
    memset(w, 0, sizeof w);
    for (unsigned i = 0; i < THREADS; i++) {
        w[i].kernel = k;
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, run, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
    for (unsigned i = 0; i < THREADS; i++)
        if (w[i].errors)
            fail_msg("thread %u: %d errors, first: %s", i, w[i].errors, w[i].first);
}

/* Primitives on a stream every thread shares: each thread's reductions and scans must see only
 * its own data, while the sizes differ per thread (so the scratch regrows) and thread 0 trims it. */
typedef struct sharer {
    gp_stream *stream;
    unsigned id;
    int errors;
    char first[256];
} sharer;

static void *share(void *arg)
{
    sharer *w = arg;
    enum { BASE = 30011 };
    size_t n_max = BASE * (w->id + 1) * 4;
    uint32_t *x = malloc(n_max * sizeof *x), *got = malloc(n_max * sizeof *got);
    gp_buffer *bx = NULL, *by = NULL;
    gp_status st = GP_SUCCESS;
    if (x && got && (st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, n_max * sizeof *x, &bx)) == GP_SUCCESS)
        st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, n_max * sizeof *x, &by);
    uint64_t rs = 9100 + w->id;
    for (unsigned it = 0; st == GP_SUCCESS && bx && by && x && got && it < 12; it++) {
        size_t n = BASE * (w->id + 1) * (1 + it % 4) - it;
        uint32_t sum = 0, total = 0;
        for (size_t i = 0; i < n; i++)
            x[i] = tst_random_u32(&rs);
        if ((st = gp_buffer_write(w->stream, bx, 0, x, n * sizeof *x)) != GP_SUCCESS ||
            (st = gp_reduce_to_host(w->stream, GP_REDUCE_SUM, GP_U32, n, GP_VIEW(bx), &total)) != GP_SUCCESS ||
            (st = gp_scan(w->stream, GP_SCAN_SUM, 0, GP_U32, n, GP_VIEW(bx), GP_VIEW(by))) != GP_SUCCESS ||
            (st = gp_buffer_read(w->stream, by, 0, got, n * sizeof *got)) != GP_SUCCESS ||
            (w->id == 0 && it % 3 == 2 && (st = gp_stream_trim(w->stream)) != GP_SUCCESS))
            break;
        size_t bad = n;
        for (size_t i = 0; i < n; i++) {
            sum += x[i];
            if (got[i] != sum && bad == n) bad = i;
        }
        if ((total != sum || bad != n) && w->errors++ == 0)
            snprintf(w->first, sizeof w->first, "n=%zu: sum %u, expected %u; first wrong scan element %zu", n,
                     total, sum, bad);
    }
    if (st != GP_SUCCESS && w->errors++ == 0)
        snprintf(w->first, sizeof w->first, "%s %s", gp_status_name(st), gp_last_error());
    if ((!x || !got || !bx || !by) && w->errors++ == 0)
        snprintf(w->first, sizeof w->first, "no memory for the test's buffers");
    gp_buffer_destroy(bx);
    gp_buffer_destroy(by);
    free(x);
    free(got);
    return NULL;
}

static void primitives_on_one_stream(void **state)
{
    (void)state;
    sharer w[THREADS];
    pthread_t t[THREADS];
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    memset(w, 0, sizeof w);
    for (unsigned i = 0; i < THREADS; i++) {
        w[i].stream = s;
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, share, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    GP_OK(gp_stream_destroy(s));
    for (unsigned i = 0; i < THREADS; i++)
        if (w[i].errors)
            fail_msg("thread %u: %d errors, first: %s", i, w[i].errors, w[i].first);
}

/* One thread synchronizes the device over and over while others create a stream, queue work
 * on it and destroy it: the device's walk of its streams must never see a freed one. */
typedef struct churner {
    atomic_int *stop;
    int errors;
    char first[256];
} churner;

static void *churn(void *arg)
{
    churner *c = arg;
    gp_buffer *b = NULL;
    uint32_t pattern = 0x5a5a5a5au;
    gp_status st = gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, 4096, &b);
    for (unsigned i = 0; st == GP_SUCCESS && !atomic_load(c->stop); i++) {
        gp_stream *s = NULL;
        if ((st = gp_stream_create(tst_dev, &s)) == GP_SUCCESS)
            st = gp_buffer_fill_async(s, b, 0, 4096, &pattern, sizeof pattern);
        gp_status d = gp_stream_destroy(s);
        if (st == GP_SUCCESS) st = d;
    }
    if (st != GP_SUCCESS && c->errors++ == 0)
        snprintf(c->first, sizeof c->first, "%s %s", gp_status_name(st), gp_last_error());
    gp_buffer_destroy(b);
    return NULL;
}

static void device_sync_while_streams_churn(void **state)
{
    (void)state;
    enum { CHURNERS = 3, SYNCS = 3000 };
    atomic_int stop;
    atomic_init(&stop, 0);
    churner c[CHURNERS];
    pthread_t t[CHURNERS];
    memset(c, 0, sizeof c);
    for (unsigned i = 0; i < CHURNERS; i++) {
        c[i].stop = &stop;
        assert_int_equal(pthread_create(&t[i], NULL, churn, &c[i]), 0);
    }
    gp_status st = GP_SUCCESS;
    for (unsigned i = 0; i < SYNCS && st == GP_SUCCESS; i++)
        st = gp_device_synchronize(tst_dev);
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < CHURNERS; i++)
        pthread_join(t[i], NULL);
    if (st != GP_SUCCESS)
        fail_msg("gp_device_synchronize: %s %s", gp_status_name(st), gp_last_error());
    for (unsigned i = 0; i < CHURNERS; i++)
        if (c[i].errors)
            fail_msg("churner %u: %s", i, c[i].first);
}

const struct CMUnitTest tst_thread_tests[] = {
    cmocka_unit_test(four_threads),
    cmocka_unit_test(primitives_on_one_stream),
    cmocka_unit_test(device_sync_while_streams_churn),
};
const size_t tst_thread_tests_count = sizeof tst_thread_tests / sizeof tst_thread_tests[0];
