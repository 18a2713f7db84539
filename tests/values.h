/* Typed test data for the reduce and scan groups: elements of any gp_type read as one union,
 * compared and combined the way the host reference needs, and filled with seeded data. */
#ifndef GPUPORT_TESTS_VALUES_H
#define GPUPORT_TESTS_VALUES_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "common.h"

typedef union tv_val {
    float f32;
    double f64;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
} tv_val;

static const gp_type tv_types[] = {GP_F32, GP_F64, GP_I32, GP_U32, GP_I64, GP_U64};
static const char *const tv_type_names[] = {"", "f32", "f64", "i32", "u32", "i64", "u64"};

static inline int tv_is_float(gp_type t) { return t == GP_F32 || t == GP_F64; }
static inline int tv_is_signed(gp_type t) { return t == GP_I32 || t == GP_I64; }

/* 1 when the device runs the type (f64 needs fp64); says so when it does not. */
static inline int tv_runs(gp_type t)
{
    if (t == GP_F64 && !tst_info.fp64) {
        print_message("f64 skipped: the device has no fp64\n");
        return 0;
    }
    return 1;
}

static inline tv_val tv_get(gp_type t, const void *data, size_t i)
{
    tv_val v;
    memset(&v, 0, sizeof v);
    memcpy(&v, (const char *)data + i * gp_type_size(t), gp_type_size(t));
    return v;
}

static inline void tv_set(gp_type t, void *data, size_t i, tv_val v)
{
    memcpy((char *)data + i * gp_type_size(t), &v, gp_type_size(t));
}

static inline long double tv_ld(gp_type t, tv_val v)
{
    switch (t) {
    case GP_F32: return v.f32;
    case GP_F64: return v.f64;
    case GP_I32: return v.i32;
    case GP_U32: return v.u32;
    case GP_I64: return (long double)v.i64;
    default: return (long double)v.u64;
    }
}

static inline int tv_isnan(gp_type t, tv_val v) { return tv_is_float(t) && isnan(tv_ld(t, v)); }

/* a < b as the type compares (false when either is NaN). */
static inline int tv_lt(gp_type t, tv_val a, tv_val b)
{
    switch (t) {
    case GP_I32: case GP_I64: return (t == GP_I32 ? a.i32 : a.i64) < (t == GP_I32 ? b.i32 : b.i64);
    case GP_U32: return a.u32 < b.u32;
    case GP_U64: return a.u64 < b.u64;
    default: return tv_ld(t, a) < tv_ld(t, b);
    }
}

static inline int tv_eq(gp_type t, tv_val a, tv_val b)
{
    return tv_is_float(t) ? tv_ld(t, a) == tv_ld(t, b) : memcmp(&a, &b, gp_type_size(t)) == 0;
}

/* Integer sum and product modulo 2^bits, as the primitives define them. */
static inline tv_val tv_wrap(gp_type t, tv_val a, tv_val b, int mul)
{
    tv_val r;
    memset(&r, 0, sizeof r);
    uint64_t x = gp_type_size(t) == 4 ? a.u32 : a.u64, y = gp_type_size(t) == 4 ? b.u32 : b.u64;
    uint64_t z = mul ? x * y : x + y;
    if (gp_type_size(t) == 4) r.u32 = (uint32_t)z;
    else r.u64 = z;
    return r;
}

/* The unit roundoff of a float type, and of the long double the host reference sums in. */
static inline long double tv_eps(gp_type t) { return t == GP_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2; }
#define TV_EPS_REF (LDBL_EPSILON / 2)

static inline tv_val tv_highest(gp_type t)
{
    tv_val v;
    memset(&v, 0, sizeof v);
    switch (t) {
    case GP_F32: v.f32 = INFINITY; break;
    case GP_F64: v.f64 = INFINITY; break;
    case GP_I32: v.i32 = INT32_MAX; break;
    case GP_U32: v.u32 = UINT32_MAX; break;
    case GP_I64: v.i64 = INT64_MAX; break;
    default: v.u64 = UINT64_MAX; break;
    }
    return v;
}

static inline tv_val tv_lowest(gp_type t)
{
    tv_val v;
    memset(&v, 0, sizeof v);
    switch (t) {
    case GP_F32: v.f32 = -INFINITY; break;
    case GP_F64: v.f64 = -INFINITY; break;
    case GP_I32: v.i32 = INT32_MIN; break;
    case GP_I64: v.i64 = INT64_MIN; break;
    default: break;
    }
    return v;
}

typedef enum tv_kind {
    TV_SUM,   /* floats in [-1, 1); integers of every bit pattern (sums wrap) */
    TV_EXACT, /* -1, 0 or +1: every partial sum of up to 2^26 of them is exact in f32 */
    TV_PROD,  /* floats within 1/128 of 1, so that long products stay finite; odd integers */
    TV_ORDER  /* few distinct values, so that ties are common; floats with a NaN every 61 */
} tv_kind;

static inline void tv_fill(gp_type t, void *data, size_t n, tv_kind kind, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15u + 7;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = (uint64_t)tst_random_u32(&s) << 32 | tst_random_u32(&s);
        double f = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
        tv_val v;
        memset(&v, 0, sizeof v);
        if (tv_is_float(t)) {
            double x = kind == TV_SUM ? 2 * f - 1 : kind == TV_PROD ? 1 + (f - 0.5) / 64 : floor(f * 200) / 8 - 12;
            if (kind == TV_EXACT) x = floor(f * 3) - 1;
            if (kind == TV_ORDER && i % 61 == 60) x = NAN;
            if (t == GP_F32) v.f32 = (float)x;
            else v.f64 = x;
        } else {
            v.u64 = kind == TV_SUM ? r : kind == TV_PROD ? r | 1 : r % 2001;
            if (kind == TV_ORDER && tv_is_signed(t)) v.i64 = (int64_t)(r % 2001) - 1000;
            if (gp_type_size(t) == 4) { /* the low half, as this host is little-endian */
                uint32_t lo = (uint32_t)v.u64;
                memset(&v, 0, sizeof v);
                v.u32 = lo;
            }
        }
        tv_set(t, data, i, v);
    }
}

#endif
