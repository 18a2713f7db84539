/* Proves gp_map and user-defined maps against plain C on the host, for every op and type, at
 * edge sizes, offsets (aligned and odd) and in place, and that bad input is refused. */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes every op and type runs at; the largest sets the buffers' size. */
static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 257, 1024, 65536, 100003};
#define MAX_N 100003
#define MAX_OFF 16 /* at least the largest view offset below, in elements */
#define GUARD 8   /* elements after each out range that must stay untouched */

static const char *const op_names[] = {"copy", "fill", "scale", "axpy", "add", "sub", "mul", "div", "min",
                                       "max",  "abs",  "sqrt",  "exp",  "log", "sin", "cos", "pow"};
#define OP_COUNT (sizeof op_names / sizeof op_names[0])
static const char *const type_names[] = {"?", "f32", "f64", "i32", "u32", "i64", "u64"};

static int is_float(gp_type t) { return t == GP_F32 || t == GP_F64; }
static int is_signed(gp_type t) { return t == GP_I32 || t == GP_I64; }
static int uses_x(gp_map_op op) { return op != GP_MAP_FILL; }
static int uses_y(gp_map_op op)
{
    return op == GP_MAP_AXPY || (op >= GP_MAP_ADD && op <= GP_MAP_MAX) || op == GP_MAP_POW;
}
static int applies(gp_map_op op, gp_type t) { return is_float(t) || op <= GP_MAP_ABS; }

/* ---- Elements on the host ------------------------------------------------------------------ */

/* An integer element widened to 64 bits (sign-extended for signed types). */
static uint64_t get_int(gp_type t, const void *p, size_t i)
{
    switch (t) {
    case GP_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case GP_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}

static void put_int(gp_type t, void *p, size_t i, uint64_t v)
{
    if (gp_type_size(t) == 4) ((uint32_t *)p)[i] = (uint32_t)v;
    else ((uint64_t *)p)[i] = v;
}

static double get_float(gp_type t, const void *p, size_t i)
{
    return t == GP_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void put_float(gp_type t, void *p, size_t i, double v)
{
    if (t == GP_F32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

/* a as the kernel sees it, widened like get_int / get_float. */
static gp_scalar scalar_for(gp_type t)
{
    gp_scalar a;
    if (is_float(t)) a.f = 1.75;
    else if (is_signed(t)) a.i = -123457;
    else a.u = 0x9e3779b97f4a7c15u; /* truncated to its low bits for u32, as the header says */
    return a;
}

static uint64_t scalar_int(gp_type t, gp_scalar a)
{
    switch (t) {
    case GP_I32: return (uint64_t)(int64_t)(int32_t)a.i;
    case GP_U32: return (uint32_t)a.u;
    case GP_I64: return (uint64_t)a.i;
    default: return a.u;
    }
}

static double scalar_float(gp_type t, gp_scalar a) { return t == GP_F32 ? (double)(float)a.f : a.f; }

/* ---- The host reference ------------------------------------------------------------------ */

/* Integers wrap modulo 2^bits; DIV by 0 gives 0 and lowest / -1 wraps to lowest; |lowest| is
 * lowest. Operands arrive widened, the result is compared in the type's width. */
static uint64_t int_ref(gp_type t, gp_map_op op, uint64_t x, uint64_t y, uint64_t a)
{
    int s = is_signed(t);
    switch (op) {
    case GP_MAP_COPY: return x;
    case GP_MAP_FILL: return a;
    case GP_MAP_SCALE: return a * x;
    case GP_MAP_AXPY: return a * x + y;
    case GP_MAP_ADD: return x + y;
    case GP_MAP_SUB: return x - y;
    case GP_MAP_MUL: return x * y;
    case GP_MAP_DIV:
        if (y == 0) return 0;
        if (s && (int64_t)y == -1) return 0 - x;
        return s ? (uint64_t)((int64_t)x / (int64_t)y) : x / y;
    case GP_MAP_MIN: return (s ? (int64_t)x < (int64_t)y : x < y) ? x : y;
    case GP_MAP_MAX: return (s ? (int64_t)x > (int64_t)y : x > y) ? x : y;
    case GP_MAP_ABS: return s && (int64_t)x < 0 ? 0 - x : x;
    default: return 0;
    }
}

/* The spacing of type t's values at |v| (one ulp of a result of that size). */
static long double ulp(gp_type t, long double v)
{
    if (t == GP_F32) {
        float f = fabsf((float)v);
        return (long double)nextafterf(f, INFINITY) - f;
    }
    double d = fabs((double)v);
    return (long double)nextafter(d, INFINITY) - d;
}

/* Ops whose IEEE result is correctly rounded: the host's own arithmetic in the type gives the
 * one right answer (x86-64 evaluates float in float). */
static int exact_ref(gp_type t, gp_map_op op, double x, double y, double a, double *r)
{
    if (t == GP_F32) {
        float fx = (float)x, fy = (float)y, fa = (float)a;
        switch (op) {
        case GP_MAP_COPY: *r = fx; return 1;
        case GP_MAP_FILL: *r = fa; return 1;
        case GP_MAP_SCALE: *r = fa * fx; return 1;
        case GP_MAP_ADD: *r = fx + fy; return 1;
        case GP_MAP_SUB: *r = fx - fy; return 1;
        case GP_MAP_MUL: *r = fx * fy; return 1;
        case GP_MAP_DIV: *r = fx / fy; return 1;
        default: break;
        }
    } else {
        switch (op) {
        case GP_MAP_COPY: *r = x; return 1;
        case GP_MAP_FILL: *r = a; return 1;
        case GP_MAP_SCALE: *r = a * x; return 1;
        case GP_MAP_ADD: *r = x + y; return 1;
        case GP_MAP_SUB: *r = x - y; return 1;
        case GP_MAP_MUL: *r = x * y; return 1;
        case GP_MAP_DIV: *r = x / y; return 1;
        default: break;
        }
    }
    switch (op) {
    case GP_MAP_MIN: *r = fmin(x, y); return 1; /* NaN only when both are */
    case GP_MAP_MAX: *r = fmax(x, y); return 1;
    case GP_MAP_ABS: *r = fabs(x); return 1;
    default: return 0;
    }
}

/* Largest error allowed by the OpenCL 1.2 spec (section 7.4), in ulp of the exact result; CUDA's
 * and HIP's documented limits are within these. 0.5 is "correctly rounded". */
static double spec_ulp(gp_type t, gp_map_op op)
{
    int f32 = t == GP_F32;
    switch (op) {
    case GP_MAP_SQRT: return f32 ? 3 : 0.5;
    case GP_MAP_EXP: case GP_MAP_LOG: return 3;
    case GP_MAP_SIN: case GP_MAP_COS: return 4;
    case GP_MAP_POW: return 16;
    case GP_MAP_DIV: return f32 ? 2.5 : 0.5; /* OpenCL only: CUDA and HIP divide correctly rounded */
    default: return 0.5;
    }
}

/* 1 when the device's d is acceptable for op(x, y, a); ref and bound say what was expected. */
static int float_ok(gp_type t, gp_map_op op, double x, double y, double a, double d, long double *ref,
                    long double *bound)
{
    double r;
    int opencl_div = op == GP_MAP_DIV && strcmp(tst_info.backend, "opencl") == 0;
    if (!opencl_div && exact_ref(t, op, x, y, a, &r)) {
        *ref = r;
        *bound = 0;
        return (isnan(r) && isnan(d)) || r == d;
    }
    /* The host reference in more precision than t: double for f32, long double for f64; its
     * own error (glibc: within 1 ulp of its precision; we allow 2) is added to the bound. */
    long double lx = x, ly = y, la = a, v;
    if (t == GP_F32) {
        switch (op) {
        case GP_MAP_AXPY: v = la * lx + ly; break; /* exact product of two floats, one rounding */
        case GP_MAP_DIV: v = (double)x / y; break;
        case GP_MAP_SQRT: v = sqrt(x); break;
        case GP_MAP_EXP: v = exp(x); break;
        case GP_MAP_LOG: v = log(x); break;
        case GP_MAP_SIN: v = sin(x); break;
        case GP_MAP_COS: v = cos(x); break;
        default: v = pow(x, y); break;
        }
    } else {
        switch (op) {
        case GP_MAP_AXPY: v = la * lx + ly; break;
        case GP_MAP_DIV: v = lx / ly; break;
        case GP_MAP_SQRT: v = sqrtl(lx); break;
        case GP_MAP_EXP: v = expl(lx); break;
        case GP_MAP_LOG: v = logl(lx); break;
        case GP_MAP_SIN: v = sinl(lx); break;
        case GP_MAP_COS: v = cosl(lx); break;
        default: v = powl(lx, ly); break;
        }
    }
    long double host = 2 * (t == GP_F32 ? DBL_EPSILON : LDBL_EPSILON) * fabsl(v);
    if (op == GP_MAP_AXPY) {
        /* a * x + y with the product rounded or fused: at most two roundings of unit u, so
         * |d - v| <= u|ax| + u(|ax|(1 + u) + |y|). */
        long double u = (t == GP_F32 ? FLT_EPSILON : DBL_EPSILON) / 2.0L, ax = fabsl(la * lx);
        *bound = u * (2 + u) * ax + u * fabsl(ly) + 2 * LDBL_EPSILON * (ax + fabsl(ly));
    } else {
        *bound = spec_ulp(t, op) * ulp(t, v) + host;
    }
    *ref = v;
    return (isnan(v) && isnan(d)) || fabsl((long double)d - v) <= *bound;
}

/* ---- Test data ----------------------------------------------------------------------------- */

static double uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (tst_random_u32(state) / 4294967296.0);
}

/* n elements of x and y inside each op's domain: positive x for sqrt, log and pow, y away
 * from 0 for division, NaNs for min and max; integers over their whole range with the special
 * cases (divisors 0 and -1, the lowest value) sprinkled in. */
static void make_inputs(gp_type t, gp_map_op op, size_t n, void *x, void *y, uint64_t seed)
{
    uint64_t st = seed * 7919 + (uint64_t)op * 104729 + (uint64_t)t;
    size_t size = gp_type_size(t);
    if (!is_float(t)) {
        tst_random_bytes(x, n * size, st);
        tst_random_bytes(y, n * size, st + 1);
        uint64_t lowest = size == 4 ? 0x80000000u : 0x8000000000000000u;
        for (size_t i = 0; i < n; i++) {
            if (i % 13 == 5) put_int(t, y, i, 0);
            if (i % 17 == 4) put_int(t, y, i, UINT64_MAX);
            if (i % 19 == 7) put_int(t, x, i, lowest);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double xv = uniform(&st, -100, 100), yv = uniform(&st, -100, 100);
        switch (op) {
        case GP_MAP_DIV: yv = (yv < 0 ? -0.5 : 0.5) + yv; break;
        case GP_MAP_SQRT: case GP_MAP_LOG: xv = uniform(&st, 0.001, 1000); break;
        case GP_MAP_EXP: xv = uniform(&st, -30, 30); break;
        case GP_MAP_SIN: case GP_MAP_COS: xv = uniform(&st, -10, 10); break;
        case GP_MAP_POW: xv = uniform(&st, 0.01, 10), yv = uniform(&st, -6, 6); break;
        case GP_MAP_MIN: case GP_MAP_MAX:
            if (i % 7 == 3) xv = NAN;
            if (i % 5 == 2) yv = NAN;
            break;
        default: break;
        }
        put_float(t, x, i, xv);
        put_float(t, y, i, yv);
    }
}

/* ---- One map, checked ------------------------------------------------------------------------ */

/* Device buffers and host copies for one type: x and y hold cap elements of data. */
typedef struct ctx {
    gp_type type;
    size_t size, cap;
    void *hx, *hy, *got;
    gp_buffer *bx, *by, *bo;
} ctx;

static void ctx_init(ctx *c, gp_type t, size_t n)
{
    c->type = t;
    c->size = gp_type_size(t);
    c->cap = n + MAX_OFF + GUARD;
    c->hx = tst_malloc(c->cap * c->size);
    c->hy = tst_malloc(c->cap * c->size);
    c->got = tst_malloc(c->cap * c->size);
    c->bx = tst_buffer(GP_MEMORY_DEVICE, c->cap * c->size);
    c->by = tst_buffer(GP_MEMORY_DEVICE, c->cap * c->size);
    c->bo = tst_buffer(GP_MEMORY_DEVICE, c->cap * c->size);
}

static void ctx_free(ctx *c)
{
    free(c->hx);
    free(c->hy);
    free(c->got);
    GP_OK(gp_buffer_destroy(c->bx));
    GP_OK(gp_buffer_destroy(c->by));
    GP_OK(gp_buffer_destroy(c->bo));
}

static void ctx_inputs(ctx *c, gp_map_op op, uint64_t seed)
{
    make_inputs(c->type, op, c->cap, c->hx, c->hy, seed);
    GP_OK(gp_buffer_write(NULL, c->bx, 0, c->hx, c->cap * c->size));
    GP_OK(gp_buffer_write(NULL, c->by, 0, c->hy, c->cap * c->size));
}

/* Runs op over n elements at the offsets (in place: out is x's data, copied into bo at xo,
 * and the map reads and writes it there) and checks every element of out, and that the
 * elements around it kept their fill. */
static void check_map(ctx *c, gp_map_op op, size_t n, size_t oo, size_t xo, size_t yo, int in_place)
{
    const gp_type t = c->type;
    const size_t sz = c->size, span = (oo > xo ? oo : xo) + n + GUARD;
    const unsigned char fill = 0xa5;
    if (in_place) oo = xo;
    GP_OK(gp_buffer_fill(NULL, c->bo, 0, span * sz, &fill, 1));
    if (in_place && n) GP_OK(gp_buffer_copy(NULL, c->bo, xo * sz, c->bx, xo * sz, n * sz));
    gp_scalar a = scalar_for(t);
    gp_view out = GP_VIEW_AT(c->bo, oo), x = GP_VIEW_AT(in_place ? c->bo : c->bx, xo), y = GP_VIEW_AT(c->by, yo);
    GP_OK(gp_map(NULL, op, t, n, out, uses_x(op) ? x : GP_VIEW(NULL), uses_y(op) ? y : GP_VIEW(NULL), &a));
    GP_OK(gp_buffer_read(NULL, c->bo, 0, c->got, span * sz));

    const unsigned char *g = c->got;
    for (size_t b = 0; b < span * sz; b++) {
        size_t e = b / sz;
        if ((e < oo || e >= oo + n) && g[b] != fill)
            fail_msg("%s %s n=%zu out@%zu: element %zu outside the view was written", type_names[t], op_names[op], n,
                     oo, e);
    }
    for (size_t i = 0; i < n; i++) {
        if (is_float(t)) {
            double xv = get_float(t, c->hx, xo + i), yv = get_float(t, c->hy, yo + i);
            double d = get_float(t, c->got, oo + i);
            long double ref, bound;
            if (!float_ok(t, op, xv, yv, scalar_float(t, a), d, &ref, &bound))
                fail_msg("%s %s n=%zu offsets out %zu x %zu y %zu%s: [%zu] = %.17g, expected %.17Lg within %.3Lg "
                         "(x %.17g, y %.17g)",
                         type_names[t], op_names[op], n, oo, xo, yo, in_place ? " in place" : "", i, d, ref, bound,
                         xv, yv);
        } else {
            uint64_t xv = get_int(t, c->hx, xo + i), yv = get_int(t, c->hy, yo + i);
            uint64_t mask = sz == 4 ? 0xffffffffu : UINT64_MAX;
            uint64_t want = int_ref(t, op, xv, yv, scalar_int(t, a)) & mask, d = get_int(t, c->got, oo + i) & mask;
            if (want != d)
                fail_msg("%s %s n=%zu offsets out %zu x %zu y %zu%s: [%zu] = 0x%llx, expected 0x%llx (x 0x%llx, "
                         "y 0x%llx)",
                         type_names[t], op_names[op], n, oo, xo, yo, in_place ? " in place" : "", i,
                         (unsigned long long)d, (unsigned long long)want, (unsigned long long)xv,
                         (unsigned long long)yv);
        }
    }
}

/* Every op of the type at every size: views 16-byte aligned (the vector path on GPUs), at the
 * same odd offset (vectors after an unaligned head), at odd offsets apart (the scalar path),
 * and in place. */
static void every_op(gp_type t)
{
    if (t == GP_F64 && !tst_info.fp64) {
        print_message("skipped: %s has no double precision\n", tst_info.name);
        skip();
    }
    ctx c;
    ctx_init(&c, t, MAX_N);
    size_t lanes = 16 / c.size;
    for (unsigned op = 0; op < OP_COUNT; op++) {
        if (!applies((gp_map_op)op, t)) continue;
        ctx_inputs(&c, (gp_map_op)op, 1);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            check_map(&c, (gp_map_op)op, sizes[s], 0, lanes, 2 * lanes, 0);
            check_map(&c, (gp_map_op)op, sizes[s], 5, 5, 5 + lanes, 0);
            check_map(&c, (gp_map_op)op, sizes[s], 2, 1, 5, 0); /* odd distances: never vectors */
            if (uses_x((gp_map_op)op)) check_map(&c, (gp_map_op)op, sizes[s], 0, lanes, 3 * lanes, 1);
        }
    }
    ctx_free(&c);
}

static void map_f32(void **state) { (void)state; every_op(GP_F32); }
static void map_f64(void **state) { (void)state; every_op(GP_F64); }
static void map_i32(void **state) { (void)state; every_op(GP_I32); }
static void map_u32(void **state) { (void)state; every_op(GP_U32); }
static void map_i64(void **state) { (void)state; every_op(GP_I64); }
static void map_u64(void **state) { (void)state; every_op(GP_U64); }

/* A prime near 1e7 for one op of each family: the grid-stride and block loops wrap many times. */
/* f32 sin and cos where a CPU takes them from its own polynomial (|x| <= 8192) and where it
 * hands them to the builtin (beyond, infinities, NaN, in blocks mixed with the others), and
 * at the edges of both, in place and not: within the spec's 4 ulp, NaN where sin is. */
static void map_trig_edges(void **state)
{
    (void)state;
    static const float special[] = {0.0f, -0.0f, 1e-40f, -1e-30f, 0.78539816f, 1.5707964f, 3.1415927f, -4.712389f,
                                    8191.99f, 8192.0f, -8192.0f, 8192.001f, 1e4f, -65536.5f, 1e6f, 3.4e38f,
                                    INFINITY, -INFINITY, NAN, 123456.7f};
    enum { N = 1000 };
    float *host = tst_malloc(N * sizeof *host), *got = tst_malloc(N * sizeof *got);
    uint64_t st = 99;
    for (size_t i = 0; i < N; i++)
        host[i] = i % 50 < 20 && i / 50 % 3 != 1 ? special[i % 50] : (float)uniform(&st, -8200, 8200);
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, N * sizeof *host), *bo = tst_buffer(GP_MEMORY_DEVICE, N * sizeof *host);
    static const gp_map_op ops[] = {GP_MAP_SIN, GP_MAP_COS};
    for (int o = 0; o < 2; o++)
        for (int in_place = 0; in_place < 2; in_place++) {
            GP_OK(gp_buffer_write(NULL, bx, 0, host, N * sizeof *host));
            gp_buffer *out = in_place ? bx : bo;
            GP_OK(gp_map(NULL, ops[o], GP_F32, N, GP_VIEW(out), GP_VIEW(bx), GP_VIEW(NULL), NULL));
            GP_OK(gp_buffer_read(NULL, out, 0, got, N * sizeof *got));
            for (size_t i = 0; i < N; i++) {
                long double ref, bound;
                if (!float_ok(GP_F32, ops[o], host[i], 0, 0, got[i], &ref, &bound))
                    fail_msg("f32 %s(%.9g) = %.9g, expected %.9Lg within %.3Lg", op_names[ops[o]], host[i], got[i], ref,
                             bound);
            }
        }
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(bo));
    free(host);
    free(got);
}

static void map_large_prime(void **state)
{
    (void)state;
    enum { N = 10000019 };
    static const struct {
        gp_type type;
        gp_map_op op;
    } runs[] = {{GP_F32, GP_MAP_AXPY}, {GP_I64, GP_MAP_DIV}, {GP_U32, GP_MAP_MUL}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        ctx c;
        ctx_init(&c, runs[r].type, N);
        ctx_inputs(&c, runs[r].op, 2);
        check_map(&c, runs[r].op, N, 0, 16 / c.size, 0, 0);
        check_map(&c, runs[r].op, N, 1, 3, 2, 0);
        ctx_free(&c);
    }
}

/* 2^26 floats in place (x += y), out and x from element 1 and y from 2, 7 elements short of
 * the buffers: on CPUs a map this large stores past the caches (kernels/map.gp), where each
 * work-item's block starts off a 16-byte boundary and y lies off out's, and the last block
 * ends within a vector. The elements come from their index, so only one host array of that
 * size is needed. */
static float big_x(size_t i) { return (float)(i % 1000003) * 0.5f; }
static float big_y(size_t i) { return (float)(i % 999983) * -0.25f; }

static void map_huge(void **state)
{
    (void)state;
    const size_t n = (size_t)1 << 26, bytes = n * sizeof(float), m = n - 7;
    if (tst_info.global_mem_bytes < ((uint64_t)1 << 30)) {
        print_message("skipped: %s has %llu bytes of global memory, less than 1 GiB\n", tst_info.name,
                      (unsigned long long)tst_info.global_mem_bytes);
        skip();
    }
    float *h = tst_malloc(bytes);
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, bytes), *by = tst_buffer(GP_MEMORY_DEVICE, bytes);
    for (size_t i = 0; i < n; i++) h[i] = big_x(i);
    GP_OK(gp_buffer_write(NULL, bx, 0, h, bytes));
    for (size_t i = 0; i < n; i++) h[i] = big_y(i);
    GP_OK(gp_buffer_write(NULL, by, 0, h, bytes));
    gp_scalar a = {0};
    GP_OK(gp_map(NULL, GP_MAP_ADD, GP_F32, m, GP_VIEW_AT(bx, 1), GP_VIEW_AT(bx, 1), GP_VIEW_AT(by, 2), &a));
    GP_OK(gp_buffer_read(NULL, bx, 0, h, bytes));
    size_t bad = n;
    float want = 0;
    for (size_t i = 0; i < n && bad == n; i++) {
        want = i >= 1 && i <= m ? big_x(i) + big_y(i + 1) : big_x(i);
        if (h[i] != want) bad = i;
    }
    float got = bad < n ? h[bad] : 0;
    free(h);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
    if (bad < n) fail_msg("[%zu] = %.9g, expected %.9g", bad, got, want);
}

/* ---- Bad input ------------------------------------------------------------------------------- */

static void map_bad_input(void **state)
{
    (void)state;
    enum { N = 64 };
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, N * 4), *c = tst_buffer(GP_MEMORY_DEVICE, N * 4);
    unsigned char before[N * 4];
    tst_random_bytes(before, sizeof before, 9);
    GP_OK(gp_buffer_write(NULL, b, 0, before, sizeof before));
    gp_scalar a = {0};
    gp_view v = GP_VIEW(b), w = GP_VIEW(c), none = GP_VIEW(NULL);

    GP_EXPECT(gp_map(NULL, (gp_map_op)99, GP_F32, N, v, w, w, &a), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map(NULL, (gp_map_op)-1, GP_F32, N, v, w, w, &a), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map(NULL, GP_MAP_ADD, (gp_type)0, N, v, w, w, &a), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map(NULL, GP_MAP_ADD, (gp_type)7, N, v, w, w, &a), GP_ERROR_INVALID_ARGUMENT);
    static const gp_map_op float_only[] = {GP_MAP_SQRT, GP_MAP_EXP, GP_MAP_LOG, GP_MAP_SIN, GP_MAP_COS, GP_MAP_POW};
    for (size_t i = 0; i < sizeof float_only / sizeof float_only[0]; i++) {
        GP_EXPECT(gp_map(NULL, float_only[i], GP_I32, N, v, w, w, &a), GP_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(gp_last_error(), "floating-point"));
    }
    /* NULL views where the op reads them, even for n == 0. */
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F32, N, none, w, none, &a), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F32, 0, v, none, none, &a), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map(NULL, GP_MAP_ADD, GP_F32, N, v, w, none, &a), GP_ERROR_INVALID_HANDLE);
    /* Out of range: too many elements, an offset past the end, 8-byte elements in a buffer of
     * N 4-byte ones. */
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F32, N + 1, v, w, none, &a), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F32, 1, v, GP_VIEW_AT(c, N), none, &a), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_map(NULL, GP_MAP_ADD, GP_I32, 2, v, w, GP_VIEW_AT(c, SIZE_MAX), &a), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_map(NULL, GP_MAP_FILL, GP_U64, N, v, none, none, &a), GP_ERROR_OUT_OF_RANGE);
    /* out overlapping an input other than element for element. */
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F32, 8, GP_VIEW_AT(b, 1), v, none, &a), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map(NULL, GP_MAP_ADD, GP_F32, 8, v, w, GP_VIEW_AT(b, 7), &a), GP_ERROR_INVALID_ARGUMENT);
    tst_check_buffer(b, before, sizeof before); /* nothing above changed out */

    /* Unused operands are ignored; in place is fine; n == 0 does nothing. */
    GP_OK(gp_map(NULL, GP_MAP_COPY, GP_F32, 0, v, w, none, &a));
    GP_OK(gp_map(NULL, GP_MAP_ABS, GP_I32, N, v, v, GP_VIEW_AT(NULL, 5), &a));
    GP_OK(gp_map(NULL, GP_MAP_FILL, GP_U32, N, v, GP_VIEW_AT(c, 1000), none, &a));

    /* Objects of another device. */
    for (size_t d = 0; d < tst_all_count; d++) {
        if (tst_all_devices[d] == tst_dev) continue;
        gp_buffer *o = NULL;
        gp_stream *os = NULL;
        GP_OK(gp_buffer_create(tst_all_devices[d], GP_MEMORY_DEVICE, N * 4, &o));
        GP_OK(gp_stream_get_default(tst_all_devices[d], &os));
        GP_EXPECT(gp_map(NULL, GP_MAP_ADD, GP_F32, N, v, w, GP_VIEW(o), &a), GP_ERROR_DEVICE_MISMATCH);
        GP_EXPECT(gp_map(os, GP_MAP_ADD, GP_F32, N, v, w, w, &a), GP_ERROR_DEVICE_MISMATCH);
        GP_OK(gp_buffer_destroy(o));
        break;
    }
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_buffer_destroy(c));
}

/* f64 where the device has no double precision: refused, not computed in single. */
static void map_no_fp64(void **state)
{
    (void)state;
    if (tst_info.fp64) {
        print_message("skipped: %s has double precision\n", tst_info.name);
        skip();
    }
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 64);
    gp_scalar a = {0};
    GP_EXPECT(gp_map(NULL, GP_MAP_COPY, GP_F64, 8, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &a), GP_ERROR_UNSUPPORTED);
    gp_map_kernel *k = NULL;
    gp_type t = GP_F64;
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, &t, "(float)x", &k), GP_ERROR_UNSUPPORTED);
    assert_null(k);
    GP_OK(gp_buffer_destroy(b));
}

/* ---- Maps of the user's own ----------------------------------------------------------------- */

/* One input, an expression (with a // comment): a leaky ReLU in f32 at odd offsets, and the
 * index in i32. */
static void user_one_input(void **state)
{
    (void)state;
    enum { N = 100003 };
    float *x = tst_malloc(N * 4), *got = tst_malloc(N * 4);
    uint64_t st = 5;
    for (size_t i = 0; i < N; i++) x[i] = (float)uniform(&st, -50, 50);
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, (N + 3) * 4), *bo = tst_buffer(GP_MEMORY_DEVICE, (N + 3) * 4);
    GP_OK(gp_buffer_write(NULL, bx, 3 * 4, x, N * 4));
    gp_type f = GP_F32, i32 = GP_I32;
    gp_map_kernel *k = NULL;
    GP_OK(gp_map_kernel_create(tst_dev, GP_F32, 1, &f, "x > 0 ? x : a * x // a leaky ReLU", &k));
    gp_scalar a = {.f = 0.125};
    gp_view in = GP_VIEW_AT(bx, 3);
    GP_OK(gp_map_kernel_run(NULL, k, N, GP_VIEW_AT(bo, 1), &in, &a));
    GP_OK(gp_buffer_read(NULL, bo, 4, got, N * 4));
    for (size_t i = 0; i < N; i++) {
        float want = x[i] > 0 ? x[i] : 0.125f * x[i];
        if (got[i] != want) fail_msg("[%zu] = %.9g, expected %.9g", i, got[i], want);
    }
    GP_OK(gp_map_kernel_destroy(k));

    /* The index counts from the view, not the buffer; x is read but unused. */
    int32_t *gi = (int32_t *)got;
    GP_OK(gp_map_kernel_create(tst_dev, GP_I32, 1, &i32, "(int)i * a", &k));
    a.i = -3;
    GP_OK(gp_map_kernel_run(NULL, k, N, GP_VIEW_AT(bo, 2), &in, &a));
    GP_OK(gp_buffer_read(NULL, bo, 8, gi, N * 4));
    for (size_t i = 0; i < N; i++)
        if (gi[i] != -3 * (int32_t)i) fail_msg("[%zu] = %d, expected %d", i, gi[i], -3 * (int32_t)i);
    GP_OK(gp_map_kernel_destroy(k));
    free(x);
    free(got);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(bo));
}

/* Two inputs of different types, a snippet, and in place (out is x). */
static void user_two_inputs(void **state)
{
    (void)state;
    enum { N = 65537 };
    float *x = tst_malloc(N * 4), *got = tst_malloc(N * 4);
    uint32_t *y = tst_malloc(N * 4);
    uint64_t st = 6;
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)uniform(&st, -1000, 1000);
        y[i] = tst_random_u32(&st) >> 8; /* exact as a float */
    }
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, N * 4), *by = tst_buffer(GP_MEMORY_DEVICE, N * 4);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, N * 4));
    GP_OK(gp_buffer_write(NULL, by, 0, y, N * 4));
    gp_type in[2] = {GP_F32, GP_U32};
    gp_map_kernel *k = NULL;
    GP_OK(gp_map_kernel_create(tst_dev, GP_F32, 2, in,
                               "float t = (float)(y % 1000u);\n"
                               "if (x < t) r = t - x; else r = a;",
                               &k));
    gp_scalar a = {.f = -2.5};
    gp_view views[2] = {GP_VIEW(bx), GP_VIEW(by)};
    GP_OK(gp_map_kernel_run(NULL, k, N, GP_VIEW(bx), views, &a));
    GP_OK(gp_buffer_read(NULL, bx, 0, got, N * 4));
    for (size_t i = 0; i < N; i++) {
        float t = (float)(y[i] % 1000u), want = x[i] < t ? t - x[i] : -2.5f;
        if (got[i] != want) fail_msg("[%zu] = %.9g, expected %.9g", i, got[i], want);
    }
    GP_OK(gp_map_kernel_destroy(k));
    free(x);
    free(y);
    free(got);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
}

/* Three inputs of three types into a fourth, at offsets. */
static void user_three_inputs(void **state)
{
    (void)state;
    enum { N = 1031 };
    int32_t *x = tst_malloc(N * 4);
    uint32_t *y = tst_malloc(N * 4);
    int64_t *z = tst_malloc(N * 8), *got = tst_malloc(N * 8);
    uint64_t st = 7;
    for (size_t i = 0; i < N; i++) {
        x[i] = (int32_t)tst_random_u32(&st);
        y[i] = tst_random_u32(&st) >> 1; /* x * y - z + a * i stays inside int64 */
        z[i] = (int64_t)tst_random_u32(&st) << 20;
    }
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, (N + 1) * 4), *by = tst_buffer(GP_MEMORY_DEVICE, (N + 2) * 4),
              *bz = tst_buffer(GP_MEMORY_DEVICE, N * 8), *bo = tst_buffer(GP_MEMORY_DEVICE, (N + 5) * 8);
    GP_OK(gp_buffer_write(NULL, bx, 4, x, N * 4));
    GP_OK(gp_buffer_write(NULL, by, 8, y, N * 4));
    GP_OK(gp_buffer_write(NULL, bz, 0, z, N * 8));
    gp_type in[3] = {GP_I32, GP_U32, GP_I64};
    gp_map_kernel *k = NULL;
    GP_OK(gp_map_kernel_create(tst_dev, GP_I64, 3, in, "(long)x * (long)y - z + a * (long)i", &k));
    gp_scalar a = {.i = -1000003};
    gp_view views[3] = {GP_VIEW_AT(bx, 1), GP_VIEW_AT(by, 2), GP_VIEW(bz)};
    GP_OK(gp_map_kernel_run(NULL, k, N, GP_VIEW_AT(bo, 5), views, &a));
    GP_OK(gp_buffer_read(NULL, bo, 5 * 8, got, N * 8));
    for (size_t i = 0; i < N; i++) {
        int64_t want = (int64_t)x[i] * (int64_t)y[i] - z[i] + -1000003 * (int64_t)i;
        if (got[i] != want) fail_msg("[%zu] = %lld, expected %lld", i, (long long)got[i], (long long)want);
    }
    GP_OK(gp_map_kernel_destroy(k));
    free(x);
    free(y);
    free(z);
    free(got);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
    GP_OK(gp_buffer_destroy(bz));
    GP_OK(gp_buffer_destroy(bo));
}

static void user_bad_input(void **state)
{
    (void)state;
    gp_type t2[2] = {GP_F32, GP_F32}, bad_t[2] = {GP_F32, (gp_type)9};
    gp_map_kernel *k = NULL;
    GP_EXPECT(gp_map_kernel_create(NULL, GP_F32, 1, t2, "x", &k), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, t2, "x", NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 0, t2, "a", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 4, t2, "x", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, NULL, "x", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, t2, NULL, &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, t2, " \n", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, (gp_type)0, 1, t2, "x", &k), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 2, bad_t, "x", &k), GP_ERROR_INVALID_ARGUMENT);
    /* A compile error: the whole log, which names the bad identifier. */
    GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 1, t2, "x * no_such_thing_q", &k), GP_ERROR_BUILD_FAILED);
    if (!strstr(gp_last_error(), "no_such_thing_q")) fail_msg("the build log does not name the token: %s", gp_last_error());
    assert_null(k);
    /* Text that would leave its place in the generated kernel: close the body and declare a
     * kernel of its own, open a comment or literal that swallows the rest, or preprocess. */
    static const char *const escapes[] = {
        "x; } GP_KERNEL void evil(GP_GLOBAL float *p) { p[0] = 1; ",
        "x) + (y",
        "x /* unclosed",
        "r = x; } }",
        "(x",
        "x]",
        "\"abc",
        "x\n#define r 0\n",
        "x \\\n+ 1",
        "r = x; { ",
    };
    for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
        GP_EXPECT(gp_map_kernel_create(tst_dev, GP_F32, 2, t2, escapes[i], &k), GP_ERROR_INVALID_ARGUMENT);
        assert_null(k);
    }

    enum { N = 16 };
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, N * 4), *c = tst_buffer(GP_MEMORY_DEVICE, N * 4);
    GP_OK(gp_map_kernel_create(tst_dev, GP_F32, 2, t2, "x + y", &k));
    gp_scalar a = {0};
    gp_view two[2] = {GP_VIEW(c), GP_VIEW(c)}, one_short[2] = {GP_VIEW(c), GP_VIEW(NULL)};
    GP_EXPECT(gp_map_kernel_run(NULL, NULL, N, GP_VIEW(b), two, &a), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map_kernel_run(NULL, k, N, GP_VIEW(b), NULL, &a), GP_ERROR_INVALID_ARGUMENT);
    /* Fewer views than the kernel's two inputs: the missing one is NULL. */
    GP_EXPECT(gp_map_kernel_run(NULL, k, N, GP_VIEW(b), one_short, &a), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map_kernel_run(NULL, k, N, GP_VIEW(NULL), two, &a), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_map_kernel_run(NULL, k, N + 1, GP_VIEW(b), two, &a), GP_ERROR_OUT_OF_RANGE);
    gp_view shifted[2] = {GP_VIEW(c), GP_VIEW_AT(c, 1)};
    GP_EXPECT(gp_map_kernel_run(NULL, k, N, GP_VIEW(b), shifted, &a), GP_ERROR_OUT_OF_RANGE);
    gp_view overlap[2] = {GP_VIEW_AT(b, 2), GP_VIEW(c)};
    GP_EXPECT(gp_map_kernel_run(NULL, k, 4, GP_VIEW(b), overlap, &a), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_map_kernel_run(NULL, k, 0, GP_VIEW(b), two, &a));
    GP_OK(gp_map_kernel_destroy(k));
    GP_OK(gp_map_kernel_destroy(NULL));
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_buffer_destroy(c));
}

const struct CMUnitTest tst_map_tests[] = {
    cmocka_unit_test(map_f32),          cmocka_unit_test(map_f64),           cmocka_unit_test(map_i32),
    cmocka_unit_test(map_u32),          cmocka_unit_test(map_i64),           cmocka_unit_test(map_u64),
    cmocka_unit_test(map_trig_edges),
    cmocka_unit_test(map_large_prime),  cmocka_unit_test(map_huge),          cmocka_unit_test(map_bad_input),
    cmocka_unit_test(map_no_fp64),      cmocka_unit_test(user_one_input),    cmocka_unit_test(user_two_inputs),
    cmocka_unit_test(user_three_inputs), cmocka_unit_test(user_bad_input),
};
const size_t tst_map_tests_count = sizeof tst_map_tests / sizeof tst_map_tests[0];
