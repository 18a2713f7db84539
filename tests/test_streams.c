/* Proves streams order work, events order streams, events report completion and time, and a
 * NULL stream is the default stream in every call that takes one. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Enough arithmetic per item that a second stream not waiting would see stale data. */
static const char *produce_src =
    "GP_KERNEL void produce(GP_GLOBAL uint *out, uint n, uint rounds, uint seed)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    uint v = i ^ seed;\n"
    "    for (uint r = 0; r < rounds; r++) v = v * 1664525u + 1013904223u;\n"
    "    out[i] = v;\n"
    "}\n";

enum { N = 1 << 20, ROUNDS = 48 };

static uint32_t produce_ref(uint32_t i, uint32_t seed)
{
    uint32_t v = i ^ seed;
    for (uint32_t r = 0; r < ROUNDS; r++)
        v = v * 1664525u + 1013904223u;
    return v;
}

static void check_produced(const uint32_t *v, uint32_t seed)
{
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != produce_ref(i, seed))
            fail_msg("element %u is 0x%08x, expected 0x%08x (seed %u)", i, v[i], produce_ref(i, seed), seed);
}

static void launch_produce(gp_stream *s, gp_kernel *k, gp_buffer *out, uint32_t seed)
{
    uint32_t n = N, rounds = ROUNDS;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(out), GP_VALUE(n), GP_VALUE(rounds), GP_VALUE(seed)};
    GP_OK(gp_kernel_launch(s, k, 1, &global, NULL, 4, args));
}

typedef struct fixture {
    gp_program *p;
    gp_kernel *k;
    gp_buffer *a, *b;
    uint32_t *host;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    uint32_t zero = 0;
    if (gp_program_create(tst_dev, produce_src, NULL, &f->p) != GP_SUCCESS ||
        gp_kernel_create(f->p, "produce", &f->k) != GP_SUCCESS ||
        gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, N * 4, &f->a) != GP_SUCCESS ||
        gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, N * 4, &f->b) != GP_SUCCESS ||
        gp_buffer_fill(NULL, f->a, 0, N * 4, &zero, 4) != GP_SUCCESS ||
        gp_buffer_fill(NULL, f->b, 0, N * 4, &zero, 4) != GP_SUCCESS || !(f->host = calloc(N, 4))) {
        print_error("fixture: %s\n", gp_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    gp_buffer_destroy(f->a);
    gp_buffer_destroy(f->b);
    gp_kernel_destroy(f->k);
    gp_program_destroy(f->p);
    free(f->host);
    free(f);
    return 0;
}

/* Stream B waits for an event recorded after A's kernel, then copies A's output: the copy
 * must see the kernel's values. */
static void wait_event_across_streams(void **state)
{
    fixture *f = *state;
    gp_stream *sa = NULL, *sb = NULL;
    gp_event *ev = NULL;
    GP_OK(gp_stream_create(tst_dev, &sa));
    GP_OK(gp_stream_create(tst_dev, &sb));
    GP_OK(gp_event_create(tst_dev, &ev));
    launch_produce(sa, f->k, f->a, 11);
    GP_OK(gp_event_record(ev, sa));
    GP_OK(gp_stream_wait_event(sb, ev));
    GP_OK(gp_buffer_copy_async(sb, f->b, 0, f->a, 0, N * 4));
    GP_OK(gp_buffer_read_async(sb, f->b, 0, f->host, N * 4));
    GP_OK(gp_stream_synchronize(sb));
    check_produced(f->host, 11);
    GP_OK(gp_event_destroy(ev));
    GP_OK(gp_stream_destroy(sa));
    GP_OK(gp_stream_destroy(sb));
}

/* After gp_event_synchronize the work before the record is done and visible to any stream;
 * recording again moves the event past later work. */
static void record_sync_query(void **state)
{
    fixture *f = *state;
    gp_stream *s = NULL;
    gp_event *ev = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &ev));
    launch_produce(s, f->k, f->a, 21);
    GP_OK(gp_event_record(ev, s));
    GP_OK(gp_event_synchronize(ev));
    assert_int_equal(gp_event_query(ev), GP_SUCCESS);
    GP_OK(gp_buffer_read(NULL, f->a, 0, f->host, N * 4));
    check_produced(f->host, 21);

    launch_produce(s, f->k, f->a, 22);
    GP_OK(gp_event_record(ev, s));
    GP_OK(gp_event_synchronize(ev));
    assert_int_equal(gp_event_query(ev), GP_SUCCESS);
    GP_OK(gp_buffer_read(NULL, f->a, 0, f->host, N * 4));
    check_produced(f->host, 22);
    GP_OK(gp_event_destroy(ev));
    GP_OK(gp_stream_destroy(s));
}

static void elapsed_time(void **state)
{
    fixture *f = *state;
    gp_stream *s = NULL;
    gp_event *e0 = NULL, *e1 = NULL, *never = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &e0));
    GP_OK(gp_event_create(tst_dev, &e1));
    GP_OK(gp_event_create(tst_dev, &never));
    GP_OK(gp_event_record(e0, s));
    launch_produce(s, f->k, f->a, 31);
    GP_OK(gp_event_record(e1, s));
    GP_OK(gp_event_synchronize(e1));
    double ms = -1.0;
    GP_OK(gp_event_elapsed_ms(e0, e1, &ms));
    assert_true(isfinite(ms));
    assert_true(ms >= 0.0);
    /* The other way round, the same time negated; an event to itself, none. */
    double back = 1.0, none = 1.0;
    GP_OK(gp_event_elapsed_ms(e1, e0, &back));
    assert_true(back == -ms);
    GP_OK(gp_event_elapsed_ms(e0, e0, &none));
    assert_true(none == 0.0);

    ms = 12345.0;
    gp_status st = gp_event_elapsed_ms(e0, never, &ms);
    assert_int_not_equal(st, GP_SUCCESS);
    assert_true(gp_last_error()[0] != '\0');
    st = gp_event_elapsed_ms(never, e1, &ms);
    assert_int_not_equal(st, GP_SUCCESS);
    assert_true(gp_last_error()[0] != '\0');
    GP_OK(gp_event_destroy(e0));
    GP_OK(gp_event_destroy(e1));
    GP_OK(gp_event_destroy(never));
    GP_OK(gp_stream_destroy(s));
}

/* An event never recorded counts as reached: waiting on it passes at once on every backend. */
static void never_recorded_event(void **state)
{
    (void)state;
    gp_stream *s = NULL;
    gp_event *ev = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &ev));
    GP_OK(gp_stream_wait_event(s, ev));
    GP_OK(gp_event_synchronize(ev));
    assert_int_equal(gp_event_query(ev), GP_SUCCESS);
    GP_OK(gp_stream_synchronize(s));
    GP_OK(gp_event_destroy(ev));
    GP_OK(gp_stream_destroy(s));
}

/* Destroying a stream waits for its work; device synchronize waits for every stream. */
static void destroy_and_device_sync_wait(void **state)
{
    fixture *f = *state;
    gp_stream *s1 = NULL, *s2 = NULL;
    GP_OK(gp_stream_create(tst_dev, &s1));
    launch_produce(s1, f->k, f->a, 41);
    GP_OK(gp_stream_destroy(s1));
    GP_OK(gp_buffer_read(NULL, f->a, 0, f->host, N * 4));
    check_produced(f->host, 41);

    GP_OK(gp_stream_create(tst_dev, &s1));
    GP_OK(gp_stream_create(tst_dev, &s2));
    gp_event *e1 = NULL, *e2 = NULL;
    GP_OK(gp_event_create(tst_dev, &e1));
    GP_OK(gp_event_create(tst_dev, &e2));
    launch_produce(s1, f->k, f->a, 42);
    GP_OK(gp_event_record(e1, s1));
    launch_produce(s2, f->k, f->b, 43);
    GP_OK(gp_event_record(e2, s2));
    GP_OK(gp_device_synchronize(tst_dev));
    assert_int_equal(gp_event_query(e1), GP_SUCCESS);
    assert_int_equal(gp_event_query(e2), GP_SUCCESS);
    GP_OK(gp_buffer_read(NULL, f->a, 0, f->host, N * 4));
    check_produced(f->host, 42);
    GP_OK(gp_buffer_read(NULL, f->b, 0, f->host, N * 4));
    check_produced(f->host, 43);
    GP_OK(gp_event_destroy(e1));
    GP_OK(gp_event_destroy(e2));
    GP_OK(gp_stream_destroy(s1));
    GP_OK(gp_stream_destroy(s2));
}

/* NULL is a default stream everywhere: work queued with NULL is waited for by
 * gp_stream_synchronize(NULL), ordered by gp_stream_wait_event(NULL, ...), and trimmed by
 * gp_stream_trim(NULL). */
static void null_is_the_default_stream(void **state)
{
    fixture *f = *state;
    gp_stream *s = NULL, *def = NULL;
    gp_event *ev = NULL;
    GP_OK(gp_stream_get_default(tst_dev, &def));
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &ev));
    /* s produces into a; the default stream waits for it, copies a to b and reads b back. */
    launch_produce(s, f->k, f->a, 77);
    GP_OK(gp_event_record(ev, s));
    GP_OK(gp_stream_wait_event(NULL, ev));
    GP_OK(gp_buffer_copy_async(NULL, f->b, 0, f->a, 0, N * 4));
    GP_OK(gp_buffer_read_async(NULL, f->b, 0, f->host, N * 4));
    GP_OK(gp_stream_synchronize(NULL));
    check_produced(f->host, 77);
    /* The primitives' scratch of the default stream, then freed through NULL. */
    uint32_t total = 0, want = 0;
    for (uint32_t i = 0; i < N; i++)
        want += f->host[i];
    GP_OK(gp_reduce_to_host(NULL, GP_REDUCE_SUM, GP_U32, N, GP_VIEW(f->b), &total));
    assert_int_equal(total, want);
    GP_OK(gp_stream_trim(NULL));
    GP_OK(gp_reduce_to_host(def, GP_REDUCE_SUM, GP_U32, N, GP_VIEW(f->b), &total));
    assert_int_equal(total, want);
    GP_OK(gp_stream_destroy(NULL));
    GP_OK(gp_event_destroy(ev));
    GP_OK(gp_stream_destroy(s));
}

const struct CMUnitTest tst_stream_tests[] = {
    cmocka_unit_test_setup_teardown(null_is_the_default_stream, setup, teardown),
    cmocka_unit_test_setup_teardown(wait_event_across_streams, setup, teardown),
    cmocka_unit_test_setup_teardown(record_sync_query, setup, teardown),
    cmocka_unit_test_setup_teardown(elapsed_time, setup, teardown),
    cmocka_unit_test_setup_teardown(destroy_and_device_sync_wait, setup, teardown),
    cmocka_unit_test(never_recorded_event),
};
const size_t tst_stream_tests_count = sizeof tst_stream_tests / sizeof tst_stream_tests[0];
