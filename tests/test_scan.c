/* gp_scan agrees with a plain C prefix computation on the host for every op and type,
 * inclusive and exclusive, at offsets and in place: exactly for integers, min and max, and
 * within the documented per-prefix bound for float sums; bad input changes nothing; the
 * dialect's subgroup scans and broadcast agree with the same prefixes over each subgroup. */
#include "values.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const op_names[] = {"sum", "min", "max"};

/* Checks out[0..n) against the scan of in[0..n). A float-sum prefix of m elements may differ
 * from the exact sum by (m-1) u sum|x| (docs/primitives.md), u the type's unit roundoff; the
 * reference's own error (in long double) is added. */

typedef struct prefix {
    tv_val acc;            /* integers, min and max: the exact prefix */
    long double s, abs_sum; /* float sums: the exact prefix and the sum of its |x| */
    size_t m;              /* its elements */
} prefix;

static void compare(gp_scan_op op, int exclusive, gp_type t, const prefix *p, tv_val have, size_t i, size_t n,
                    const char *what)
{
    long double u = tv_is_float(t) ? tv_eps(t) : 0;
    int sum = op == GP_SCAN_SUM && tv_is_float(t);
    int ok = sum ? fabsl(tv_ld(t, have) - p->s) <= (p->m ? p->m - 1 : 0) * (u + TV_EPS_REF) * p->abs_sum
                 : tv_eq(t, have, p->acc);
    if (!ok)
        fail_msg("%s %s %s %s n=%zu: out[%zu] = %.17Lg, expected %.17Lg", what, exclusive ? "exclusive" : "inclusive",
                 op_names[op], tv_type_names[t], n, i, tv_ld(t, have), sum ? p->s : tv_ld(t, p->acc));
}

static void check_scan(gp_scan_op op, int exclusive, gp_type t, const void *in, const void *out, size_t n,
                       const char *what)
{
    prefix p;
    memset(&p, 0, sizeof p);
    if (op == GP_SCAN_MIN) p.acc = tv_highest(t);
    if (op == GP_SCAN_MAX) p.acc = tv_lowest(t);
    for (size_t i = 0; i < n; i++) {
        tv_val x = tv_get(t, in, i), have = tv_get(t, out, i);
        if (exclusive) compare(op, exclusive, t, &p, have, i, n, what);
        p.m++;
        if (op == GP_SCAN_SUM && tv_is_float(t)) {
            p.s += tv_ld(t, x);
            p.abs_sum += fabsl(tv_ld(t, x));
        } else if (op == GP_SCAN_SUM) {
            p.acc = tv_wrap(t, p.acc, x, 0);
        } else if (op == GP_SCAN_MIN ? tv_lt(t, x, p.acc) : tv_lt(t, p.acc, x)) {
            p.acc = x; /* NaNs never compare: skipped */
        }
        if (!exclusive) compare(op, exclusive, t, &p, have, i, n, what);
    }
}

/* Scans in[off..off+n) into out[off+1..) of another buffer, then in place, and checks both. */
static void run_sizes(const size_t *sizes, size_t count, gp_scan_op first_op, gp_scan_op last_op,
                      const gp_type *types, size_t ntypes)
{
    size_t most = 0;
    for (size_t k = 0; k < count; k++)
        if (sizes[k] > most) most = sizes[k];
    for (size_t ti = 0; ti < ntypes; ti++) {
        gp_type t = types[ti];
        if (!tv_runs(t)) continue;
        size_t size = gp_type_size(t), bytes = (most + 4) * size;
        void *host = tst_malloc(bytes), *got = tst_malloc(bytes);
        gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, bytes), *out = tst_buffer(GP_MEMORY_DEVICE, bytes);
        for (gp_scan_op op = first_op; op <= last_op; op++) {
            tv_fill(t, host, most + 4, op == GP_SCAN_SUM ? TV_SUM : TV_ORDER, 200 + op * 8 + t);
            for (size_t k = 0; k < count; k++) {
                size_t off = k % 3, n = sizes[k];
                int exclusive = (int)(k / 3 % 2);
                GP_OK(gp_buffer_write(NULL, in, 0, host, bytes));
                GP_OK(gp_scan(NULL, op, exclusive, t, n, GP_VIEW_AT(in, off), GP_VIEW_AT(out, off + 1)));
                GP_OK(gp_buffer_read(NULL, out, (off + 1) * size, got, n * size));
                check_scan(op, exclusive, t, (char *)host + off * size, got, n, "gp_scan");
                GP_OK(gp_scan(NULL, op, !exclusive, t, n, GP_VIEW_AT(in, off), GP_VIEW_AT(in, off)));
                GP_OK(gp_buffer_read(NULL, in, off * size, got, n * size));
                check_scan(op, !exclusive, t, (char *)host + off * size, got, n, "gp_scan in place");
            }
        }
        gp_buffer_destroy(in);
        gp_buffer_destroy(out);
        free(host);
        free(got);
    }
}

static void test_sizes(void **state)
{
    (void)state;
    /* A tile is 4096 4-byte or 2048 8-byte elements on a 256-wide group, fewer on narrower
     * ones: the larger sizes span many tiles and exercise the look-back. */
    static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 2047, 2048, 2049,
                                   4095, 4096, 4097, 65536, 100003};
    run_sizes(sizes, sizeof sizes / sizeof sizes[0], GP_SCAN_SUM, GP_SCAN_MAX, tv_types,
              sizeof tv_types / sizeof tv_types[0]);
}

/* One op per type family at a prime near 1e7, and an f32 inclusive sum of 2^26 elements. */
static void test_large(void **state)
{
    (void)state;
    static const size_t prime[] = {10000019};
    static const gp_type floats[] = {GP_F32, GP_F64}, ints[] = {GP_I64, GP_U32};
    run_sizes(prime, 1, GP_SCAN_SUM, GP_SCAN_SUM, floats, 2);
    run_sizes(prime, 1, GP_SCAN_MAX, GP_SCAN_MAX, ints, 1);
    run_sizes(prime, 1, GP_SCAN_SUM, GP_SCAN_SUM, ints + 1, 1);
    size_t n = (size_t)1 << 26;
    if (tst_info.global_mem_bytes < ((uint64_t)1 << 30)) {
        print_message("2^26 elements skipped: the device has under 1 GiB\n");
        return;
    }
    float *host = tst_malloc(n * sizeof *host), *got = tst_malloc(n * sizeof *got);
    /* -1, 0 and +1 keep every prefix exact, so a tile that misses its carry shows at once. */
    tv_fill(GP_F32, host, n, TV_EXACT, 5);
    gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, n * sizeof *host), *out = tst_buffer(GP_MEMORY_DEVICE, n * sizeof *host);
    GP_OK(gp_buffer_write(NULL, in, 0, host, n * sizeof *host));
    GP_OK(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, n, GP_VIEW(in), GP_VIEW(out)));
    GP_OK(gp_buffer_read(NULL, out, 0, got, n * sizeof *got));
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += host[i];
        if ((double)got[i] != sum) fail_msg("gp_scan f32 2^26 exact values: out[%zu] = %.1f, expected %.1f", i, got[i], sum);
    }
    gp_buffer_destroy(in);
    gp_buffer_destroy(out);
    free(host);
    free(got);
}

/* Scans and reductions take turns on one stream of ours, at sizes that grow, shrink and grow
 * again, with the stream trimmed midway: they share the stream's published words and counter,
 * which each call must find as the last one left them. u32 sums wrap, so both are exact. */
static void test_beside_reduce(void **state)
{
    (void)state;
    static const size_t sizes[] = {70001, 3, 300007, 1000, 9000, 200000};
    enum { MOST = 300007 };
    uint32_t *host = tst_malloc(MOST * sizeof *host), *got = tst_malloc(MOST * sizeof *got);
    gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, MOST * sizeof *host), *out = tst_buffer(GP_MEMORY_DEVICE, MOST * sizeof *host);
    gp_stream *s = NULL;
    GP_OK(gp_stream_create(tst_dev, &s));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        tv_fill(GP_U32, host, n, TV_SUM, 40 + k);
        GP_OK(gp_buffer_write(s, in, 0, host, n * sizeof *host));
        uint32_t sum_before = 0, sum_after = 0;
        GP_OK(gp_reduce_to_host(s, GP_REDUCE_SUM, GP_U32, n, GP_VIEW(in), &sum_before));
        GP_OK(gp_scan(s, GP_SCAN_SUM, 0, GP_U32, n, GP_VIEW(in), GP_VIEW(out)));
        GP_OK(gp_reduce_to_host(s, GP_REDUCE_SUM, GP_U32, n, GP_VIEW(out), &sum_after));
        GP_OK(gp_buffer_read(s, out, 0, got, n * sizeof *got));
        uint32_t run = 0, runs = 0;
        for (size_t i = 0; i < n; i++) {
            run += host[i];
            runs += run;
            if (got[i] != run) fail_msg("round %zu, n=%zu: scan out[%zu] = %u, expected %u", k, n, i, got[i], run);
        }
        if (sum_before != run || sum_after != runs)
            fail_msg("round %zu, n=%zu: sums %u and %u, expected %u and %u", k, n, sum_before, sum_after, run, runs);
        if (k == 2) GP_OK(gp_stream_trim(s));
    }
    GP_OK(gp_stream_destroy(s));
    gp_buffer_destroy(in);
    gp_buffer_destroy(out);
    free(host);
    free(got);
}

/* The kernel variant the device does not run by default (kernels/scan.gp: lookback on GPUs,
 * chunked on CPUs) through the same checks; an unknown variant is refused. */
static void test_other_kernel(void **state)
{
    char *saved = tst_other_variant("GPUPORT_SCAN_KERNEL", "lookback", "chunked");
    test_sizes(state);
    test_large(state);
    test_beside_reduce(state);
    setenv("GPUPORT_SCAN_KERNEL", "blocked", 1);
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 64);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 4, GP_VIEW(b), GP_VIEW_AT(b, 8)), GP_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(gp_last_error(), "lookback or chunked"));
    tst_restore_env("GPUPORT_SCAN_KERNEL", saved);
    GP_OK(gp_buffer_destroy(b));
}

static void test_bad_input(void **state)
{
    (void)state;
    gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, 64 * 4), *out = tst_buffer(GP_MEMORY_DEVICE, 64 * 4);
    unsigned char mark[256];
    for (size_t i = 0; i < sizeof mark; i++) mark[i] = (unsigned char)i;
    GP_OK(gp_buffer_write(NULL, out, 0, mark, sizeof mark));
    GP_OK(gp_buffer_write(NULL, in, 0, mark, sizeof mark));
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 65, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 60, GP_VIEW(in), GP_VIEW_AT(out, 5)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 8, GP_VIEW(NULL), GP_VIEW(out)), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 8, GP_VIEW(in), GP_VIEW(NULL)), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_I64, 33, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, (gp_type)0, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_scan(NULL, (gp_scan_op)3, 0, GP_F32, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_INVALID_ARGUMENT);
    /* Overlapping at another offset: only the same offset is in place. */
    GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F32, 8, GP_VIEW(out), GP_VIEW_AT(out, 1)), GP_ERROR_INVALID_ARGUMENT);
    if (!tst_info.fp64)
        GP_EXPECT(gp_scan(NULL, GP_SCAN_SUM, 0, GP_F64, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_UNSUPPORTED);
    else
        print_message("the f64-without-fp64 check skipped: the device has fp64\n");
    tst_check_buffer(out, mark, sizeof mark);
    tst_check_buffer(in, mark, sizeof mark);
    gp_buffer_destroy(in);
    gp_buffer_destroy(out);
}

/* Every subgroup operation for one type, on small integers (sums exact in every type); each
 * work-item also says which subgroup and lane it is, so the host rebuilds the subgroups. */
static const char sg_source[] =
    "GP_KERNEL void sg(GP_GLOBAL const V *x, GP_GLOBAL V *out, GP_GLOBAL uint *who)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "#ifdef GP_HAS_SUBGROUPS\n"
    "    V v = x[i];\n"
    "    out[7 * i] = gp_sub_group_scan_inclusive_add(v);\n"
    "    out[7 * i + 1] = gp_sub_group_scan_inclusive_min(v);\n"
    "    out[7 * i + 2] = gp_sub_group_scan_inclusive_max(v);\n"
    "    out[7 * i + 3] = gp_sub_group_scan_exclusive_add(v);\n"
    "    out[7 * i + 4] = gp_sub_group_scan_exclusive_min(v);\n"
    "    out[7 * i + 5] = gp_sub_group_scan_exclusive_max(v);\n"
    "    out[7 * i + 6] = gp_sub_group_broadcast(v, gp_sub_group_size() - 1);\n"
    "    who[3 * i] = gp_group_id(0) * gp_num_sub_groups() + gp_sub_group_id();\n"
    "    who[3 * i + 1] = gp_sub_group_local_id();\n"
    "    who[3 * i + 2] = gp_sub_group_size();\n"
    "#else\n"
    "    if (i == 0) who[0] = 0xffffffffu;\n"
    "#endif\n"
    "}\n";

static void test_subgroups(void **state)
{
    (void)state;
    static const char *const vtypes[] = {NULL, "float", "double", "int", "uint", "long", "ulong"};
    /* NVIDIA's OpenCL has them through inline PTX (docs/kernel-dialect.md). */
    int nv_ptx = strcmp(tst_info.backend, "opencl") == 0 && tst_info.type == GP_DEVICE_GPU &&
                 strstr(tst_info.vendor, "NVIDIA");
    /* CUDA, HIP and NVIDIA's OpenCL always have them: their absence there is a failure. */
    int required = strcmp(tst_info.backend, "opencl") != 0 || nv_ptx, absent = 0;
    enum { N = 512, GROUP = 64 };
    for (size_t ti = 0; ti < sizeof tv_types / sizeof tv_types[0]; ti++) {
        gp_type t = tv_types[ti];
        if (!tv_runs(t)) continue;
        char options[64];
        snprintf(options, sizeof options, "-DV=%s", vtypes[t]);
        size_t size = gp_type_size(t), local = GROUP, global = N;
        unsigned char *host = tst_malloc(N * size), *got = tst_malloc(7 * N * size);
        uint32_t *who = tst_malloc(3 * N * sizeof *who);
        tv_fill(t, host, N, TV_EXACT, 300 + t);
        gp_buffer *x = tst_buffer(GP_MEMORY_DEVICE, N * size), *out = tst_buffer(GP_MEMORY_DEVICE, 7 * N * size);
        gp_buffer *wb = tst_buffer(GP_MEMORY_DEVICE, 3 * N * sizeof *who);
        GP_OK(gp_buffer_write(NULL, x, 0, host, N * size));
        gp_program *program = tst_program(sg_source, options);
        gp_kernel *kernel = tst_kernel(program, "sg");
        gp_arg args[] = {GP_BUFFER(x), GP_BUFFER(out), GP_BUFFER(wb)};
        GP_OK(gp_kernel_launch(NULL, kernel, 1, &global, &local, 3, args));
        GP_OK(gp_buffer_read(NULL, out, 0, got, 7 * N * size));
        GP_OK(gp_buffer_read(NULL, wb, 0, who, 3 * N * sizeof *who));
        if (who[0] == 0xffffffffu) {
            if (required) fail_msg("%s: the dialect has no subgroups on %s", vtypes[t], tst_info.backend);
            absent = 1;
        } else {
            /* lane_of[s][l]: the work-item that is lane l of subgroup s (-1: none seen). */
            static long lane_of[N][GROUP];
            memset(lane_of, 0xff, sizeof lane_of);
            for (size_t i = 0; i < N; i++) {
                if (who[3 * i] >= N || who[3 * i + 1] >= who[3 * i + 2] || who[3 * i + 2] > GROUP ||
                    lane_of[who[3 * i]][who[3 * i + 1]] != -1)
                    fail_msg("%s: work-item %zu says subgroup %u lane %u of %u", vtypes[t], i, who[3 * i],
                             who[3 * i + 1], who[3 * i + 2]);
                lane_of[who[3 * i]][who[3 * i + 1]] = (long)i;
            }
            for (size_t s = 0; s < N; s++) {
                if (lane_of[s][0] == -1) continue;
                size_t width = who[3 * lane_of[s][0] + 2];
                tv_val acc[3] = {tv_highest(t), tv_highest(t), tv_lowest(t)}, last = tv_get(t, host, lane_of[s][width - 1]);
                memset(&acc[0], 0, sizeof acc[0]);
                for (size_t l = 0; l < width; l++) {
                    if (lane_of[s][l] == -1) fail_msg("%s: subgroup %zu has no lane %zu of %zu", vtypes[t], s, l, width);
                    size_t i = (size_t)lane_of[s][l];
                    tv_val v = tv_get(t, host, i), before[3] = {acc[0], acc[1], acc[2]};
                    if (t == GP_F32) acc[0].f32 += v.f32; /* exact: small integers */
                    else if (t == GP_F64) acc[0].f64 += v.f64;
                    else acc[0] = tv_wrap(t, acc[0], v, 0);
                    if (tv_lt(t, v, acc[1])) acc[1] = v;
                    if (tv_lt(t, acc[2], v)) acc[2] = v;
                    tv_val want[7] = {acc[0], acc[1], acc[2], before[0], before[1], before[2], last};
                    for (int k = 0; k < 7; k++)
                        if (!tv_eq(t, tv_get(t, got, 7 * i + k), want[k]))
                            fail_msg("%s: subgroup %zu lane %zu, result %d: %.17Lg, expected %.17Lg", vtypes[t], s, l,
                                     k, tv_ld(t, tv_get(t, got, 7 * i + k)), tv_ld(t, want[k]));
                }
            }
        }
        gp_kernel_destroy(kernel);
        gp_program_destroy(program);
        gp_buffer_destroy(x);
        gp_buffer_destroy(out);
        gp_buffer_destroy(wb);
        free(host);
        free(got);
        free(who);
    }
    if (absent) {
        print_message("skipped: %s has no subgroups (no cl_khr_subgroups)\n", tst_info.name);
        skip();
    }
}

const struct CMUnitTest tst_scan_tests[] = {
    cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_large),
    cmocka_unit_test(test_beside_reduce),
    cmocka_unit_test(test_bad_input),
    cmocka_unit_test(test_subgroups),
    cmocka_unit_test(test_other_kernel),
};
const size_t tst_scan_tests_count = sizeof tst_scan_tests / sizeof tst_scan_tests[0];
