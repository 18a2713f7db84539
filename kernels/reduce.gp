/* Built-in reductions, and the template of user-defined ones (src/core/reduce.c adds those).
 *
 * One kernel per reduction: every work-item folds many elements into a few independent
 * accumulators (16-byte vector loads, two in flight), then the group folds its work-items in
 * local memory and publishes one partial (tagged words, kernels/types.gp) in sync, whose first
 * word counts the groups done. The group that counts last folds the partials into out and
 * puts the counter back to zero: one launch per call, where a second kernel for the partials
 * cost a launch. Elements are combined in an order that depends on the launch, so combine must
 * be associative and commutative.
 *
 * Which elements a work-item g visits, in 16-byte vectors k of the aligned middle part:
 * k = g * first, then k += step while k < min(g * first + span, nvec). GPUs take
 * first = 1, step = the global size (neighbouring work-items read neighbouring vectors: the
 * loads coalesce); CPUs take first = span = a chunk, step = 1 (each work-item streams through
 * its own contiguous chunk, as one CPU thread runs a group's work-items one after another).
 */

/* A 16-byte vector of T (member access .x .y .z .w works in OpenCL C, CUDA and HIP). */
#if GP_TYPE == 1
#define GP_VEC float4
#elif GP_TYPE == 2
#define GP_VEC double2
#elif GP_TYPE == 3
#define GP_VEC int4
#elif GP_TYPE == 4
#define GP_VEC uint4
#elif GP_TYPE == 5
#define GP_VEC long2
#else
#define GP_VEC ulong2
#endif
#if GP_TYPE == 2 || GP_TYPE == 5 || GP_TYPE == 6
#define GP_VW 2
#define GP_FOLD_VEC(a0, a1, a2, a3, v, i, MAP, COMBINE)                                          \
    a0 = COMBINE(a0, MAP(v.x, (i)));                                                            \
    a1 = COMBINE(a1, MAP(v.y, (i) + 1));
#else
#define GP_VW 4
#define GP_FOLD_VEC(a0, a1, a2, a3, v, i, MAP, COMBINE)                                          \
    a0 = COMBINE(a0, MAP(v.x, (i)));                                                            \
    a1 = COMBINE(a1, MAP(v.y, (i) + 1));                                                       \
    a2 = COMBINE(a2, MAP(v.z, (i) + 2));                                                        \
    a3 = COMBINE(a3, MAP(v.w, (i) + 3));
#endif

/* CPUs (step == 1, each work-item its own chunk) in OpenCL C, where the folds apply to the
 * language's vectors as they are: the built-in sum, product, min and max of floating-point
 * types, and user reductions whose expressions compile for vectors (src/core/reduce.c tries).
 * Two 64-byte vectors of accumulators, GP_WIDE_N elements each; AT(e) is the (mapped) vector of
 * the elements from e, PER elements to a unit of k. The scalar folds below stay scalar code there
 * (floating-point sums may not be reordered): on 16 Xeon cores (pocl 5.0) they read 58-65
 * GB/s, these 97-120 GB/s, a vectorised C loop 79-99 GB/s. With WIDE 0 this is nothing. */
#if T_IS_FLOAT && defined(__OPENCL_VERSION__)
#define GP_WIDE_OK 1
#if GP_TYPE == 1
#define GP_WIDE_T float16
#define GP_WIDE_LOAD vload16
#define GP_WIDE_N 16
#else
#define GP_WIDE_T double8
#define GP_WIDE_LOAD vload8
#define GP_WIDE_N 8
#endif
#else
#define GP_WIDE_OK 0
#endif
#define GP_WIDE_CAT_(a, b) a##b
#define GP_WIDE_CAT(a, b) GP_WIDE_CAT_(a, b)
#define GP_WIDE_0(ACC, IDENT, AT, COMBINE_W, COMBINE, PER)
#define GP_WIDE_1(ACC, IDENT, AT, COMBINE_W, COMBINE, PER)                                     \
    if (step == 1) {                                                                           \
        GP_WIDE_T w0 = (GP_WIDE_T)(IDENT), w1 = w0;                                            \
        for (; k + 2 * GP_WIDE_N / (PER) <= end; k += 2 * GP_WIDE_N / (PER)) {                 \
            w0 = COMBINE_W(w0, AT(k * (PER)));                                                 \
            w1 = COMBINE_W(w1, AT(k * (PER) + GP_WIDE_N));                                     \
        }                                                                                      \
        w0 = COMBINE_W(w0, w1);                                                                \
        for (uint l_ = 0; l_ < GP_WIDE_N; l_ += 4) {                                           \
            a0 = COMBINE(a0, ((ACC *)&w0)[l_]);                                                \
            a1 = COMBINE(a1, ((ACC *)&w0)[l_ + 1]);                                            \
            a2 = COMBINE(a2, ((ACC *)&w0)[l_ + 2]);                                            \
            a3 = COMBINE(a3, ((ACC *)&w0)[l_ + 3]);                                            \
        }                                                                                      \
    }
/* The vector from element e of the one-input kernels' aligned part v. */
#define GP_WIDE_AT(e) GP_WIDE_LOAD(0, (GP_GLOBAL const T *)v + (e))

/* The largest work-group the host launches these kernels with. */
#define GP_REDUCE_GROUP 256

/* Folds tile[0 .. local size) into tile[0], read by work-item 0 only; every work-item of the
 * group must pass here. GP_RAKERS work-items fold strided columns (no bank conflicts), then
 * work-item 0 folds theirs: two barriers, none inside a loop (CPU compilers such as pocl's
 * take long over barriers in loops). */
#define GP_RAKERS 16
#define GP_REDUCE_FOLD(ACC, tile, t, COMBINE)                                                    \
    gp_barrier();                                                                              \
    if ((t) < GP_RAKERS) {                                                                     \
        ACC r_ = tile[t];                                                                      \
        for (uint k_ = (t) + GP_RAKERS; k_ < gp_local_size(0); k_ += GP_RAKERS) r_ = COMBINE(r_, tile[k_]); \
        tile[t] = r_;                                                                          \
    }                                                                                          \
    gp_barrier();                                                                              \
    if ((t) == 0) {                                                                            \
        ACC r_ = tile[0];                                                                      \
        for (uint k_ = 1; k_ < GP_RAKERS && k_ < gp_local_size(0); k_++) r_ = COMBINE(r_, tile[k_]); \
        tile[0] = r_;                                                                          \
    }

/* The parameters after the inputs, and the end of every reduction kernel (above), with the
 * group's value in tile[0] as GP_REDUCE_FOLD leaves it and last_l a local uint. */
#define GP_REDUCE_TAIL_PARAMS(OUT_T)                                                           \
    ulong n, ulong first, ulong span, ulong step, GP_GLOBAL uint *sync, uint stamp, GP_GLOBAL OUT_T *out, \
        ulong out_off
#define GP_REDUCE_END(ACC, IDENT, COMBINE, FINISH)                                             \
    GP_GLOBAL volatile ulong *words = (GP_GLOBAL volatile ulong *)(sync + 4);                  \
    if (t == 0) {                                                                              \
        GP_PUBLISH_WORDS(ACC, words + (ulong)gp_group_id(0) * GP_WORDS(ACC), stamp, tile[0]);  \
        last_l = gp_atomic_add(sync, 1u) == gp_num_groups(0) - 1;                              \
    }                                                                                          \
    gp_barrier();                                                                              \
    if (last_l) {                                                                              \
        ACC r_ = IDENT;                                                                        \
        for (uint j_ = t; j_ < gp_num_groups(0); j_ += gp_local_size(0)) {                     \
            ACC p_;                                                                            \
            uint tag_;                                                                         \
            do GP_READ_WORDS(ACC, words + (ulong)j_ * GP_WORDS(ACC), p_, tag_); while (tag_ != stamp); \
            r_ = COMBINE(r_, p_);                                                              \
        }                                                                                      \
        tile[t] = r_;                                                                          \
        GP_REDUCE_FOLD(ACC, tile, t, COMBINE)                                                  \
        if (t == 0) {                                                                          \
            out[out_off] = FINISH(tile[0]);                                                    \
            gp_atomic_xchg(sync, 0u);                                                          \
        }                                                                                      \
    }

#define GP_REDUCE_W(NAME, ACC, IDENT, MAP, COMBINE, OUT_T, FINISH, WIDE, AT_W, COMBINE_W)      \
    GP_KERNEL void NAME(GP_GLOBAL const T *in, ulong off, GP_REDUCE_TAIL_PARAMS(OUT_T))        \
    {                                                                                          \
        GP_LOCAL ACC tile[GP_REDUCE_GROUP];                                                    \
        GP_LOCAL uint last_l;                                                                  \
        uint t = gp_local_id(0);                                                               \
        ulong g = gp_global_id(0);                                                             \
        in += off;                                                                             \
        /* The buffer starts 16-byte aligned: the first head elements precede the vectors. */  \
        ulong head = (GP_VW - off % GP_VW) % GP_VW;                                            \
        if (head > n) head = n;                                                                \
        ulong nvec = (n - head) / GP_VW, tail = head + nvec * GP_VW;                           \
        GP_GLOBAL const GP_VEC *v = (GP_GLOBAL const GP_VEC *)(in + head);                     \
        ACC a0 = IDENT, a1 = IDENT, a2 = IDENT, a3 = IDENT;                                    \
        ulong k = g * first, end = k < nvec ? (nvec - k < span ? nvec : k + span) : k;         \
        GP_WIDE_CAT(GP_WIDE_, WIDE)(ACC, IDENT, AT_W, COMBINE_W, COMBINE, GP_VW)               \
        for (; k + step < end; k += 2 * step) {                                                \
            GP_VEC x = v[k], y = v[k + step];                                                  \
            GP_FOLD_VEC(a0, a1, a2, a3, x, head + k * GP_VW, MAP, COMBINE)                     \
            GP_FOLD_VEC(a0, a1, a2, a3, y, head + (k + step) * GP_VW, MAP, COMBINE)            \
        }                                                                                      \
        if (k < end) {                                                                         \
            GP_VEC x = v[k];                                                                   \
            GP_FOLD_VEC(a0, a1, a2, a3, x, head + k * GP_VW, MAP, COMBINE)                     \
        }                                                                                      \
        if (g < head) a0 = COMBINE(a0, MAP(in[g], g));                                         \
        if (g < n - tail) a1 = COMBINE(a1, MAP(in[tail + g], tail + g));                       \
        tile[t] = COMBINE(COMBINE(a0, a1), COMBINE(a2, a3));                                   \
        GP_REDUCE_FOLD(ACC, tile, t, COMBINE)                                                  \
        GP_REDUCE_END(ACC, IDENT, COMBINE, FINISH)                                             \
    }

/* A user reduction over several inputs: src/core/reduce.c defines
 * GP_IN_PARAMS, the inputs' parameters, and GP_IN_AT(i), the elements at index i as the map's
 * arguments. Scalar loads (the inputs may differ in type and alignment), four elements a step
 * into four accumulators; the host counts in steps of four as it counts vectors above. With
 * GP_USER_WIDE 1, GP_USER_AT_W(e) is the mapped vector from element e (GP_WIDE_1 above). */
#define GP_REDUCE_N(NAME, ACC, IDENT, MAP, COMBINE, OUT_T, FINISH)                             \
    GP_KERNEL void NAME(GP_IN_PARAMS, GP_REDUCE_TAIL_PARAMS(OUT_T))                            \
    {                                                                                          \
        GP_LOCAL ACC tile[GP_REDUCE_GROUP];                                                    \
        GP_LOCAL uint last_l;                                                                  \
        uint t = gp_local_id(0);                                                               \
        ulong g = gp_global_id(0), nvec = n / 4, tail = nvec * 4;                              \
        ACC a0 = IDENT, a1 = IDENT, a2 = IDENT, a3 = IDENT;                                    \
        ulong k = g * first, end = k < nvec ? (nvec - k < span ? nvec : k + span) : k;         \
        GP_WIDE_CAT(GP_WIDE_, GP_USER_WIDE)(ACC, IDENT, GP_USER_AT_W, gp_user_combine_w, COMBINE, 4) \
        for (; k < end; k += step) {                                                           \
            ulong i = 4 * k;                                                                   \
            a0 = COMBINE(a0, MAP(GP_IN_AT(i), i));                                             \
            a1 = COMBINE(a1, MAP(GP_IN_AT(i + 1), i + 1));                                     \
            a2 = COMBINE(a2, MAP(GP_IN_AT(i + 2), i + 2));                                     \
            a3 = COMBINE(a3, MAP(GP_IN_AT(i + 3), i + 3));                                     \
        }                                                                                      \
        if (g < n - tail) a1 = COMBINE(a1, MAP(GP_IN_AT(tail + g), tail + g));                 \
        tile[t] = COMBINE(COMBINE(a0, a1), COMBINE(a2, a3));                                   \
        GP_REDUCE_FOLD(ACC, tile, t, COMBINE)                                                  \
        GP_REDUCE_END(ACC, IDENT, COMBINE, FINISH)                                             \
    }

#define GP_REDUCE(NAME, ACC, IDENT, MAP, COMBINE, OUT_T, FINISH, WIDE)                         \
    GP_REDUCE_W(NAME, ACC, IDENT, MAP, COMBINE, OUT_T, FINISH, WIDE, GP_WIDE_AT, COMBINE)

#define GP_MAP_X(x, i) (x)
#define GP_FINISH_ACC(a) (a)

#ifndef GP_REDUCE_USER

/* Integer sums and products wrap as unsigned C arithmetic does (signed overflow would be
 * undefined): the result is the exact value modulo 2^bits on every backend. */
#if T_IS_FLOAT
#define GP_ADD(a, b) ((a) + (b))
#define GP_MUL(a, b) ((a) * (b))
/* fmin/fmax ignore a NaN operand: NaN elements are skipped, as if absent. */
#define GP_MIN(a, b) fmin((a), (b))
#define GP_MAX(a, b) fmax((a), (b))
#else
#if GP_TYPE == 3 || GP_TYPE == 4
#define GP_UT uint
#else
#define GP_UT ulong
#endif
#define GP_ADD(a, b) ((T)((GP_UT)(a) + (GP_UT)(b)))
#define GP_MUL(a, b) ((T)((GP_UT)(a) * (GP_UT)(b)))
#define GP_MIN(a, b) ((b) < (a) ? (b) : (a))
#define GP_MAX(a, b) ((b) > (a) ? (b) : (a))
#endif

/* argmin/argmax fold (value, index) pairs; the smaller index wins a tie, and a NaN value
 * never wins (it compares false), so NaNs are skipped there too. */
typedef struct gp_vi {
    T v;
    ulong i;
} gp_vi;
GP_FUNC gp_vi gp_vi_make(T v, ulong i)
{
    gp_vi r;
    r.v = v;
    r.i = i;
    return r;
}
GP_FUNC gp_vi gp_vi_min(gp_vi a, gp_vi b) { return b.v < a.v || (b.v == a.v && b.i < a.i) ? b : a; }
GP_FUNC gp_vi gp_vi_max(gp_vi a, gp_vi b) { return b.v > a.v || (b.v == a.v && b.i < a.i) ? b : a; }
#define GP_VI_INDEX(a) ((a).i)

GP_REDUCE(gp_reduce_sum, T, ((T)0), GP_MAP_X, GP_ADD, T, GP_FINISH_ACC, GP_WIDE_OK)
GP_REDUCE(gp_reduce_prod, T, ((T)1), GP_MAP_X, GP_MUL, T, GP_FINISH_ACC, GP_WIDE_OK)
GP_REDUCE(gp_reduce_min, T, T_HIGHEST, GP_MAP_X, GP_MIN, T, GP_FINISH_ACC, GP_WIDE_OK)
GP_REDUCE(gp_reduce_max, T, T_LOWEST, GP_MAP_X, GP_MAX, T, GP_FINISH_ACC, GP_WIDE_OK)
GP_REDUCE(gp_reduce_argmin, gp_vi, gp_vi_make(T_HIGHEST, 18446744073709551615UL), gp_vi_make, gp_vi_min, ulong,
          GP_VI_INDEX, 0)
GP_REDUCE(gp_reduce_argmax, gp_vi, gp_vi_make(T_LOWEST, 18446744073709551615UL), gp_vi_make, gp_vi_max, ulong,
          GP_VI_INDEX, 0)

#endif
