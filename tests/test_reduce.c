/* gp_reduce, gp_reduce_to_host and user-defined reductions agree with a plain C reference on
 * the host: exactly for integers, min, max and indices; within the documented bound for sums
 * and products of floats; and bad input changes nothing. */
#include "values.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const op_names[] = {"sum", "prod", "min", "max", "argmin", "argmax"};

static tv_kind kind_of(gp_reduce_op op) { return op == GP_REDUCE_SUM ? TV_SUM : op == GP_REDUCE_PROD ? TV_PROD : TV_ORDER; }

/* The host reference of in[0..n): the value (or index) and, for float sums and products, the
 * largest difference a device result may have from it (docs/primitives.md):
 * sum: (n-1) u sum|x|; product: gamma(n-1) |P|, gamma(k) = k u / (1 - k u); u the type's unit
 * roundoff, with the reference's own error (the same forms with long double's u) added. */
static void reference(gp_reduce_op op, gp_type t, const void *in, size_t n, tv_val *value, uint64_t *index,
                      long double *exact, long double *bound)
{
    tv_val acc;
    memset(&acc, 0, sizeof acc);
    if (op == GP_REDUCE_PROD) acc.u64 = 1; /* 1 in the low half too: this host is little-endian */
    if (op == GP_REDUCE_MIN || op == GP_REDUCE_ARGMIN) acc = tv_highest(t);
    if (op == GP_REDUCE_MAX || op == GP_REDUCE_ARGMAX) acc = tv_lowest(t);
    long double s = op == GP_REDUCE_PROD ? 1 : 0, abs_sum = 0;
    *index = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        tv_val x = tv_get(t, in, i);
        switch (op) {
        case GP_REDUCE_SUM:
        case GP_REDUCE_PROD:
            if (tv_is_float(t)) {
                s = op == GP_REDUCE_SUM ? s + tv_ld(t, x) : s * tv_ld(t, x);
                abs_sum += fabsl(tv_ld(t, x));
            } else {
                acc = tv_wrap(t, acc, x, op == GP_REDUCE_PROD);
            }
            break;
        case GP_REDUCE_MIN: case GP_REDUCE_ARGMIN:
            if (tv_lt(t, x, acc) || (*index == UINT64_MAX && tv_eq(t, x, acc))) acc = x, *index = i;
            break;
        default:
            if (tv_lt(t, acc, x) || (*index == UINT64_MAX && tv_eq(t, x, acc))) acc = x, *index = i;
            break;
        }
    }
    *value = acc;
    *exact = s;
    long double m = n ? (long double)(n - 1) : 0, u = tv_is_float(t) ? tv_eps(t) : 0;
    *bound = op == GP_REDUCE_SUM ? m * (u + TV_EPS_REF) * abs_sum
                                 : (m * u / (1 - m * u) + m * TV_EPS_REF / (1 - m * TV_EPS_REF)) * fabsl(s);
}

/* Checks one device result (bytes of the result type) against the reference of in[0..n). */
static void check_result(gp_reduce_op op, gp_type t, const void *in, size_t n, const void *got, const char *what)
{
    tv_val want, have;
    uint64_t index;
    long double exact, bound;
    reference(op, t, in, n, &want, &index, &exact, &bound);
    if (op == GP_REDUCE_ARGMIN || op == GP_REDUCE_ARGMAX) {
        uint64_t g;
        memcpy(&g, got, sizeof g);
        if (g != index)
            fail_msg("%s %s %s n=%zu: index %llu, expected %llu", what, op_names[op], tv_type_names[t], n,
                     (unsigned long long)g, (unsigned long long)index);
        return;
    }
    have = tv_get(t, got, 0);
    if (tv_is_float(t) && (op == GP_REDUCE_SUM || op == GP_REDUCE_PROD)) {
        long double d = fabsl(tv_ld(t, have) - exact);
        if (!(d <= bound))
            fail_msg("%s %s %s n=%zu: %.17Lg, expected %.17Lg within %.3Lg (off by %.3Lg)", what, op_names[op],
                     tv_type_names[t], n, tv_ld(t, have), exact, bound, d);
    } else if (!tv_eq(t, have, want)) {
        fail_msg("%s %s %s n=%zu: %.17Lg, expected %.17Lg", what, op_names[op], tv_type_names[t], n, tv_ld(t, have),
                 tv_ld(t, want));
    }
}

/* Every op and type on the given sizes, the input at offsets 0 to 3 (so that the 16-byte
 * aligned part starts anywhere) and the result at offset 1 of out. */
static void run_sizes(const size_t *sizes, size_t count)
{
    size_t most = 0;
    for (size_t k = 0; k < count; k++)
        if (sizes[k] > most) most = sizes[k];
    for (size_t ti = 0; ti < sizeof tv_types / sizeof tv_types[0]; ti++) {
        gp_type t = tv_types[ti];
        if (!tv_runs(t)) continue;
        size_t size = gp_type_size(t);
        void *host = tst_malloc((most + 3) * size);
        gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, (most + 3) * size), *out = tst_buffer(GP_MEMORY_DEVICE, 16);
        for (gp_reduce_op op = GP_REDUCE_SUM; op <= GP_REDUCE_ARGMAX; op++) {
            tv_fill(t, host, most + 3, kind_of(op), 100 + op * 8 + t);
            GP_OK(gp_buffer_write(NULL, in, 0, host, (most + 3) * size));
            for (size_t k = 0; k < count; k++) {
                size_t off = k % 4, n = sizes[k];
                unsigned char got[8];
                gp_type rt = op >= GP_REDUCE_ARGMIN ? GP_U64 : t;
                size_t rsize = gp_type_size(rt);
                unsigned char around[16], pattern = 0xa5;
                GP_OK(gp_buffer_fill(NULL, out, 0, 16, &pattern, 1));
                GP_OK(gp_reduce(NULL, op, t, n, GP_VIEW_AT(in, off), GP_VIEW_AT(out, 1)));
                GP_OK(gp_buffer_read(NULL, out, 0, around, 16));
                memcpy(got, around + rsize, rsize);
                check_result(op, t, (char *)host + off * size, n, got, "gp_reduce");
                for (size_t b = 0; b < 16; b++)
                    if ((b < rsize || b >= 2 * rsize) && around[b] != pattern)
                        fail_msg("gp_reduce %s %s n=%zu wrote byte %zu outside its result", op_names[op],
                                 tv_type_names[t], n, b);
            }
        }
        gp_buffer_destroy(in);
        gp_buffer_destroy(out);
        free(host);
    }
}

static void test_small_sizes(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1024, 2047,
                                   4096, 65536, 100003};
    run_sizes(sizes, sizeof sizes / sizeof sizes[0]);
}

/* One op per type family at a prime near 1e7 (to host), and f32 sum over 2^26 elements. */
static void test_large(void **state)
{
    (void)state;
    static const struct {
        gp_reduce_op op;
        gp_type t;
    } cases[] = {{GP_REDUCE_SUM, GP_F32}, {GP_REDUCE_MAX, GP_F64}, {GP_REDUCE_ARGMIN, GP_I32},
                 {GP_REDUCE_SUM, GP_U64}};
    size_t n = 10000019;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gp_type t = cases[c].t;
        if (!tv_runs(t)) continue;
        void *host = tst_malloc(n * gp_type_size(t));
        tv_fill(t, host, n, kind_of(cases[c].op), 7 + c);
        gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, n * gp_type_size(t));
        GP_OK(gp_buffer_write(NULL, in, 0, host, n * gp_type_size(t)));
        unsigned char got[8];
        GP_OK(gp_reduce_to_host(NULL, cases[c].op, t, n, GP_VIEW(in), got));
        check_result(cases[c].op, t, host, n, got, "gp_reduce_to_host");
        gp_buffer_destroy(in);
        free(host);
    }
    n = (size_t)1 << 26;
    if (tst_info.global_mem_bytes < ((uint64_t)1 << 30)) {
        print_message("2^26 elements skipped: the device has under 1 GiB\n");
        return;
    }
    /* Over so many elements the rounding bound says little: with -1, 0 and +1 every partial
     * sum is exact, so any lost or doubled partial shows as a wrong integer. */
    float *host = tst_malloc(n * sizeof *host);
    tv_fill(GP_F32, host, n, TV_EXACT, 3);
    gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, n * sizeof *host);
    GP_OK(gp_buffer_write(NULL, in, 0, host, n * sizeof *host));
    float got;
    GP_OK(gp_reduce_to_host(NULL, GP_REDUCE_SUM, GP_F32, n, GP_VIEW(in), &got));
    double exact = 0;
    for (size_t i = 0; i < n; i++) exact += host[i];
    if ((double)got != exact) fail_msg("gp_reduce_to_host f32 sum of 2^26 exact values: %.1f, expected %.1f", got, exact);
    gp_buffer_destroy(in);
    free(host);
}

/* The edges of the NaN and tie rules: all NaN gives the identity and no index; elements equal
 * to the identity still win over it; the first of equal elements wins. */
static void test_edges(void **state)
{
    (void)state;
    for (size_t ti = 0; ti < sizeof tv_types / sizeof tv_types[0]; ti++) {
        gp_type t = tv_types[ti];
        if (!tv_runs(t)) continue;
        gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, 40 * gp_type_size(t));
        unsigned char host[40 * 8];
        for (int pass = 0; pass < 3; pass++) {
            for (size_t i = 0; i < 40; i++) {
                tv_val v = pass == 0 ? tv_highest(t) : tv_lowest(t);
                if (pass == 2) { /* NaN for floats, 0 otherwise */
                    memset(&v, 0, sizeof v);
                    if (t == GP_F32) v.f32 = NAN;
                    if (t == GP_F64) v.f64 = NAN;
                }
                tv_set(t, host, i, v);
            }
            GP_OK(gp_buffer_write(NULL, in, 0, host, 40 * gp_type_size(t)));
            for (gp_reduce_op op = GP_REDUCE_MIN; op <= GP_REDUCE_ARGMAX; op++) {
                unsigned char got[8];
                GP_OK(gp_reduce_to_host(NULL, op, t, 37, GP_VIEW_AT(in, 2), got));
                check_result(op, t, host + 2 * gp_type_size(t), 37, got, "edge");
            }
        }
        gp_buffer_destroy(in);
    }
}

/* User reductions: sum of squares (one more rounding per element in the bound), the largest
 * |x| (exact), the count of positive i32 into a u64 (exact), at an offset and to the host. */
static void test_user(void **state)
{
    (void)state;
    size_t n = 100003;
    float *x = tst_malloc(n * sizeof *x);
    int32_t *k = tst_malloc(n * sizeof *k);
    tv_fill(GP_F32, x, n, TV_SUM, 11);
    tv_fill(GP_I32, k, n, TV_ORDER, 12);
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, n * sizeof *x), *bk = tst_buffer(GP_MEMORY_DEVICE, n * sizeof *k);
    gp_buffer *out = tst_buffer(GP_MEMORY_DEVICE, 16);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, n * sizeof *x));
    GP_OK(gp_buffer_write(NULL, bk, 0, k, n * sizeof *k));

    /* On CPU devices the f32 ones run on OpenCL vectors (kernels/reduce.gp, GP_WIDE_1), where
     * the select of "positive" works lane by lane; "weighted" uses the index, which keeps it
     * scalar there, and "above" does not compile on vectors (its select's ints make an int
     * vector, which does not convert to float16), so that its creation falls back to the scalar
     * kernel. */
    gp_reduce_kernel *squares = NULL, *absmax = NULL, *count = NULL, *positive = NULL, *weighted = NULL, *above = NULL;
    gp_type f32 = GP_F32, i32 = GP_I32;
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x * x", "a + b", "0", &squares));
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "fabs(x)", "fmax(a, b)", "0", &absmax));
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &i32, GP_U64, "x > 0 ? 1 : 0", "a + b", "0", &count));
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x > 0 ? x : 0", "a + b", "0", &positive));
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x * (float)(i % 3)", "a + b", "0", &weighted));
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x > 0 ? 1 : 0", "a + b", "0", &above));
    for (size_t off = 0; off < 3; off++) {
        size_t m = n - off;
        long double ss = 0, sp = 0, sw = 0, sw_abs = 0;
        float amax = 0;
        uint64_t pos = 0, xpos = 0;
        for (size_t i = off; i < n; i++) {
            xpos += x[i] > 0;
            ss += (long double)x[i] * x[i];
            sp += x[i] > 0 ? x[i] : 0;
            sw += (long double)x[i] * (float)((i - off) % 3);
            sw_abs += fabsl((long double)x[i] * (float)((i - off) % 3));
            amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
            pos += k[i] > 0;
        }
        float got_ss, got_max, got_sp, got_sw, got_above;
        uint64_t got_pos;
        gp_view vx = GP_VIEW_AT(bx, off), vk = GP_VIEW_AT(bk, off);
        GP_OK(gp_reduce_kernel_run(NULL, squares, m, &vx, GP_VIEW_AT(out, 2)));
        GP_OK(gp_buffer_read(NULL, out, 8, &got_ss, sizeof got_ss));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, absmax, m, &vx, &got_max));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, count, m, &vk, &got_pos));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, positive, m, &vx, &got_sp));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, weighted, m, &vx, &got_sw));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, above, m, &vx, &got_above));
        /* Each square rounds once (u x^2), then the sum: (n-1) u sum x^2, plus the reference's.
         * The positive and weighted terms are exact (weights 0, 1, 2): (n-1) u sum |term|. */
        long double unit = (long double)m * tv_eps(GP_F32) + m * TV_EPS_REF;
        long double bound = unit * ss * (1 + tv_eps(GP_F32));
        if (!(fabsl(got_ss - ss) <= bound))
            fail_msg("sum of squares at %zu: %.9g, expected %.12Lg within %.3Lg", off, got_ss, ss, bound);
        assert_true(got_above == (float)xpos); /* sums of ones below 2^24: exact */
        if (!(fabsl(got_sp - sp) <= unit * sp))
            fail_msg("sum of positives at %zu: %.9g, expected %.12Lg within %.3Lg", off, got_sp, sp, unit * sp);
        if (!(fabsl(got_sw - sw) <= unit * sw_abs))
            fail_msg("weighted sum at %zu: %.9g, expected %.12Lg within %.3Lg", off, got_sw, sw, unit * sw_abs);
        assert_true(got_max == amax);
        assert_int_equal(got_pos, pos);
    }
    /* n == 0 gives the identity. */
    uint64_t none = 1;
    gp_view vk0 = GP_VIEW(bk);
    GP_OK(gp_reduce_kernel_run_to_host(NULL, count, 0, &vk0, &none));
    assert_int_equal(none, 0);
    gp_reduce_kernel_destroy(squares);
    gp_reduce_kernel_destroy(absmax);
    gp_reduce_kernel_destroy(count);
    gp_reduce_kernel_destroy(positive);
    gp_reduce_kernel_destroy(weighted);
    gp_reduce_kernel_destroy(above);
    gp_buffer_destroy(bx);
    gp_buffer_destroy(bk);
    gp_buffer_destroy(out);
    free(x);
    free(k);
}

/* Reductions of two and three inputs in one pass: a dot product (one rounding per product in
 * the bound), a mixed-type sum of x * y + z with an i32 z (exact in f64 for these values), and a
 * count of x > y; each input at its own offset, so their alignments differ, at every size class. */
static void test_user_inputs(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 7, 4099, 100003};
    const size_t most = 100003 + 8;
    float *x = tst_malloc(most * 4), *y = tst_malloc(most * 4);
    int32_t *z = tst_malloc(most * 4);
    tv_fill(GP_F32, x, most, TV_SUM, 21);
    tv_fill(GP_F32, y, most, TV_SUM, 22);
    for (size_t i = 0; i < most; i++) z[i] = (int32_t)(i % 2001) - 1000;
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, most * 4), *by = tst_buffer(GP_MEMORY_DEVICE, most * 4);
    gp_buffer *bz = tst_buffer(GP_MEMORY_DEVICE, most * 4);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, most * 4));
    GP_OK(gp_buffer_write(NULL, by, 0, y, most * 4));
    GP_OK(gp_buffer_write(NULL, bz, 0, z, most * 4));
    gp_type ff[2] = {GP_F32, GP_F32}, mixed[3] = {GP_F32, GP_F32, GP_I32};
    gp_reduce_kernel *dot = NULL, *fma3 = NULL, *greater = NULL;
    GP_OK(gp_reduce_kernel_create(tst_dev, 2, ff, GP_F32, "x * y", "a + b", "0", &dot));
    GP_OK(gp_reduce_kernel_create(tst_dev, 2, ff, GP_U64, "x > y ? 1 : 0", "a + b", "0", &greater));
    int f64 = tst_info.fp64;
    if (f64) GP_OK(gp_reduce_kernel_create(tst_dev, 3, mixed, GP_F64, "(double)x * (double)y + (double)z", "a + b", "0",
                                           &fma3));
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s], ox = 1, oy = 2, oz = 3;
        long double d = 0, dabs = 0;
        double f = 0;
        uint64_t gt = 0;
        for (size_t i = 0; i < n; i++) {
            d += (long double)x[ox + i] * y[oy + i];
            dabs += fabsl((long double)x[ox + i] * y[oy + i]);
            f += (double)x[ox + i] * (double)y[oy + i] + (double)z[oz + i];
            gt += x[ox + i] > y[oy + i];
        }
        gp_view in[3] = {GP_VIEW_AT(bx, ox), GP_VIEW_AT(by, oy), GP_VIEW_AT(bz, oz)};
        float got_d = -1;
        uint64_t got_gt = 7;
        GP_OK(gp_reduce_kernel_run_to_host(NULL, dot, n, in, &got_d));
        GP_OK(gp_reduce_kernel_run_to_host(NULL, greater, n, in, &got_gt));
        long double bound = ((long double)n * tv_eps(GP_F32) + n * TV_EPS_REF) * dabs * (1 + tv_eps(GP_F32));
        if (!(fabsl(got_d - d) <= bound))
            fail_msg("dot of %zu: %.9g, expected %.12Lg within %.3Lg", n, got_d, d, bound);
        assert_int_equal(got_gt, gt);
        if (f64) {
            double got_f = -1;
            GP_OK(gp_reduce_kernel_run_to_host(NULL, fma3, n, in, &got_f));
            /* products of two f32 are exact in f64; their sums round: n u_64 of the total */
            double fb = (double)n * 2.3e-16 * (fabs(f) + (double)dabs + 1000.0 * (double)n);
            if (!(fabs(got_f - f) <= fb)) fail_msg("x*y+z over %zu: %.17g, expected %.17g", n, got_f, f);
        }
    }
    /* Views of another count than the kernel's inputs: the missing one is NULL. */
    gp_view one[3] = {GP_VIEW(bx), GP_VIEW(NULL), GP_VIEW(NULL)};
    float r = 0;
    GP_EXPECT(gp_reduce_kernel_run_to_host(NULL, dot, 4, one, &r), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_reduce_kernel_run_to_host(NULL, dot, 4, NULL, &r), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 0, ff, GP_F32, "x", "a + b", "0", &dot), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 4, ff, GP_F32, "x", "a + b", "0", &dot), GP_ERROR_INVALID_ARGUMENT);
    gp_reduce_kernel_destroy(dot);
    gp_reduce_kernel_destroy(greater);
    gp_reduce_kernel_destroy(fma3);
    gp_buffer_destroy(bx);
    gp_buffer_destroy(by);
    gp_buffer_destroy(bz);
    free(x);
    free(y);
    free(z);
}

static void test_bad_input(void **state)
{
    (void)state;
    gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, 64 * 4), *out = tst_buffer(GP_MEMORY_DEVICE, 8);
    static const unsigned char mark[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    GP_OK(gp_buffer_write(NULL, out, 0, mark, 8));
    float r;
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F32, 65, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F32, 60, GP_VIEW_AT(in, 5), GP_VIEW(out)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F32, 8, GP_VIEW(NULL), GP_VIEW(out)), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F32, 8, GP_VIEW(in), GP_VIEW(NULL)), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F32, 8, GP_VIEW(in), GP_VIEW_AT(out, 2)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_ARGMAX, GP_F32, 8, GP_VIEW(in), GP_VIEW_AT(out, 1)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, (gp_type)0, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, (gp_type)7, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce(NULL, (gp_reduce_op)6, GP_F32, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_to_host(NULL, GP_REDUCE_SUM, GP_F32, 8, GP_VIEW(in), NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_to_host(NULL, GP_REDUCE_SUM, GP_F32, 65, GP_VIEW(in), &r), GP_ERROR_OUT_OF_RANGE);
    if (!tst_info.fp64)
        GP_EXPECT(gp_reduce(NULL, GP_REDUCE_SUM, GP_F64, 8, GP_VIEW(in), GP_VIEW(out)), GP_ERROR_UNSUPPORTED);
    else
        print_message("the f64-without-fp64 check skipped: the device has fp64\n");
    tst_check_buffer(out, mark, 8);

    gp_reduce_kernel *k = NULL;
    gp_type f32 = GP_F32;
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x * nosuchname", "a + b", "0", &k),
              GP_ERROR_BUILD_FAILED);
    assert_non_null(strstr(gp_last_error(), "nosuchname"));
    assert_null(k);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, NULL, "a + b", "0", &k), GP_ERROR_INVALID_ARGUMENT);
    /* Each expression must stay inside its parentheses. */
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x); } GP_KERNEL void evil(void) { (0", "a + b", "0", &k),
              GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x", "a + b; return a", "0", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x", "a + b", "0 // c", &k), GP_SUCCESS);
    GP_OK(gp_reduce_kernel_destroy(k));
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x", "a + b", "0 /* c", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_F32, "x", "a + b", " ", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(tst_dev, 1, &f32, (gp_type)9, "x", "a + b", "0", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_reduce_kernel_create(NULL, 1, &f32, GP_F32, "x", "a + b", "0", &k), GP_ERROR_INVALID_HANDLE);
    GP_OK(gp_reduce_kernel_create(tst_dev, 1, &f32, GP_U64, "x > 0", "a + b", "0", &k));
    gp_view vin = GP_VIEW(in);
    GP_EXPECT(gp_reduce_kernel_run(NULL, k, 8, &vin, GP_VIEW_AT(out, 1)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce_kernel_run(NULL, NULL, 8, &vin, GP_VIEW(out)), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_reduce_kernel_run(NULL, k, 65, &vin, GP_VIEW(out)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_reduce_kernel_run_to_host(NULL, k, 8, &vin, NULL), GP_ERROR_INVALID_ARGUMENT);
    gp_reduce_kernel_destroy(k);
    tst_check_buffer(out, mark, 8);
    gp_buffer_destroy(in);
    gp_buffer_destroy(out);
}

const struct CMUnitTest tst_reduce_tests[] = {
    cmocka_unit_test(test_small_sizes), cmocka_unit_test(test_edges),     cmocka_unit_test(test_user),
    cmocka_unit_test(test_user_inputs), cmocka_unit_test(test_large),     cmocka_unit_test(test_bad_input),
};
const size_t tst_reduce_tests_count = sizeof tst_reduce_tests / sizeof tst_reduce_tests[0];
