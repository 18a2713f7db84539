/* Proves eight threads can race the library's first use, the compile of one new program, the
 * built-in kernels' first compile and launches on shared and private streams, and all get right
 * answers: run under ThreadSanitizer in CI. Every thread is released at once by a barrier. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuport.h"

enum { THREADS = 8, ROUNDS = 3, N = 4096 };

static pthread_barrier_t start;
static char source[512]; /* new to the kernel cache in every round */
static const char *device_spec;

typedef struct worker {
    unsigned id;
    gp_stream *shared;
    int errors;
    char first[300];
} worker;

static void note(worker *w, const char *what)
{
    if (w->errors++ == 0) snprintf(w->first, sizeof w->first, "%s: %s", what, gp_last_error());
}

static void *storm(void *arg)
{
    worker *w = arg;
    gp_device *dev = NULL;
    gp_program *p = NULL;
    gp_kernel *k = NULL;
    gp_stream *own = NULL;
    gp_buffer *b = NULL;
    uint32_t host[N], n = N, add = w->id + 1;
    pthread_barrier_wait(&start);
    if (gp_device_find(device_spec, &dev) != GP_SUCCESS) { note(w, "gp_device_find"); return NULL; }
    if (gp_program_create(dev, source, NULL, &p) != GP_SUCCESS || gp_kernel_create(p, "bump", &k) != GP_SUCCESS) {
        note(w, "compiling the shared source");
        goto out;
    }
    if (gp_stream_create(dev, &own) != GP_SUCCESS || gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host, &b) != GP_SUCCESS) {
        note(w, "stream or buffer");
        goto out;
    }
    for (uint32_t i = 0; i < N; i++) host[i] = i;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n), GP_VALUE(add)};
    gp_stream *s = w->id % 2 ? own : w->shared; /* half the threads share one stream */
    uint32_t sum = 0;
    if (gp_buffer_write(s, b, 0, host, sizeof host) != GP_SUCCESS ||
        gp_kernel_launch(s, k, 1, &global, NULL, 3, args) != GP_SUCCESS ||
        gp_map(s, GP_MAP_SCALE, GP_U32, N, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &(gp_scalar){.u = 3}) != GP_SUCCESS ||
        gp_reduce_to_host(s, GP_REDUCE_SUM, GP_U32, N, GP_VIEW(b), &sum) != GP_SUCCESS ||
        gp_scan(s, GP_SCAN_SUM, 0, GP_U32, N, GP_VIEW(b), GP_VIEW(b)) != GP_SUCCESS ||
        gp_buffer_read(s, b, 0, host, sizeof host) != GP_SUCCESS) {
        note(w, "the work");
        goto out;
    }
    uint32_t want = 0, run = 0;
    for (uint32_t i = 0; i < N; i++) want += 3 * (i + add);
    int good = sum == want;
    for (uint32_t i = 0; i < N; i++) good &= host[i] == (run += 3 * (i + add));
    if (!good && w->errors++ == 0) snprintf(w->first, sizeof w->first, "thread %u: wrong results", w->id);
out:
    gp_buffer_destroy(b);
    gp_stream_destroy(own);
    gp_kernel_destroy(k);
    gp_program_destroy(p);
    return NULL;
}

static void eight_threads(void **state)
{
    (void)state;
    for (unsigned round = 0; round < ROUNDS; round++) {
        snprintf(source, sizeof source,
                 "GP_KERNEL void bump(GP_GLOBAL uint *v, uint n, uint add)\n"
                 "{\n"
                 "    uint i = gp_global_id(0);\n"
                 "    if (i < n) v[i] += add + %uu * 0u; /* round %u of process %ld */\n"
                 "}\n",
                 round, round, (long)getpid());
        worker w[THREADS];
        pthread_t t[THREADS];
        memset(w, 0, sizeof w);
        gp_stream *shared = NULL;
        if (round > 0) { /* round 0 races the first use itself */
            gp_device *dev = NULL;
            assert_int_equal(gp_device_find(device_spec, &dev), GP_SUCCESS);
            assert_int_equal(gp_stream_create(dev, &shared), GP_SUCCESS);
        }
        assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
        for (unsigned i = 0; i < THREADS; i++) {
            w[i].id = i;
            w[i].shared = shared; /* NULL in round 0: the default stream */
            assert_int_equal(pthread_create(&t[i], NULL, storm, &w[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&start);
        assert_int_equal(gp_stream_destroy(shared), GP_SUCCESS);
        for (unsigned i = 0; i < THREADS; i++)
            if (w[i].errors) fail_msg("round %u, thread %u: %s", round, i, w[i].first);
    }
}

int main(int argc, char **argv)
{
    device_spec = argc > 1 ? argv[1] : "opencl:0";
    const struct CMUnitTest tests[] = {cmocka_unit_test(eight_threads)};
    return cmocka_run_group_tests_name("storm", tests, NULL, NULL) ? 1 : 0;
}
