/* Built-in map kernels: out[i] = OP(x[i], y[i], a) for i < n, on views given as a buffer and an
 * element offset, one kernel per op, gp_map_<op>(out, out offset, x, x offset, y, y offset, a, n).
 * The launch shape picks the loop, the same for every work-item:
 *   groups of one work-item (CPUs): one contiguous block per work-item, a unit-stride loop
 *     that the device compiler vectorizes (pocl specializes the kernel for the group size, so
 *     the other branch vanishes);
 *   larger groups (GPUs): neighbouring work-items on neighbouring 16-byte vectors or elements
 *     (coalesced); core launches one work-item per vector or element, and a grid-stride loop
 *     (two vectors or four elements in flight per pass) covers what a capped grid leaves.
 * Operands an op does not read are still passed (out's view); their loads are dead code. */

/* Integer arithmetic is done unsigned, so that overflow wraps (modulo 2^bits) instead of being
 * undefined. */
#if T_IS_FLOAT
#define TA T
#elif GP_TYPE == 3 || GP_TYPE == 4
#define TA uint
#else
#define TA ulong
#endif

/* 16 bytes of T, the widest load every backend has. */
#if GP_TYPE == 1
#define TV float4
#elif GP_TYPE == 2
#define TV double2
#elif GP_TYPE == 3
#define TV int4
#elif GP_TYPE == 4
#define TV uint4
#elif GP_TYPE == 5
#define TV long2
#else
#define TV ulong2
#endif

#if GP_TYPE == 1 || GP_TYPE == 3 || GP_TYPE == 4
#define GP_MAP_LANES 4
#define GP_MAP_VEC(r, xv, yv, a, OP)                                                           \
    r.x = OP(xv.x, yv.x, a);                                                                   \
    r.y = OP(xv.y, yv.y, a);                                                                   \
    r.z = OP(xv.z, yv.z, a);                                                                   \
    r.w = OP(xv.w, yv.w, a)
#else
#define GP_MAP_LANES 2
#define GP_MAP_VEC(r, xv, yv, a, OP)                                                           \
    r.x = OP(xv.x, yv.x, a);                                                                   \
    r.y = OP(xv.y, yv.y, a)
#endif

#define GP_OP_COPY(x, y, a) (x)
#define GP_OP_FILL(x, y, a) (a)
#define GP_OP_SCALE(x, y, a) ((T)((TA)(a) * (TA)(x)))
/* Floats: the device compiler may fuse this into one fma (CUDA and OpenCL both allow it). */
#define GP_OP_AXPY(x, y, a) ((T)((TA)(a) * (TA)(x) + (TA)(y)))
#define GP_OP_ADD(x, y, a) ((T)((TA)(x) + (TA)(y)))
#define GP_OP_SUB(x, y, a) ((T)((TA)(x) - (TA)(y)))
#define GP_OP_MUL(x, y, a) ((T)((TA)(x) * (TA)(y)))

#if T_IS_FLOAT
#define GP_OP_DIV(x, y, a) ((x) / (y))
/* fmin and fmax: a NaN operand yields the other operand (NaN only when both are). */
#define GP_OP_MIN(x, y, a) fmin((x), (y))
#define GP_OP_MAX(x, y, a) fmax((x), (y))
#define GP_OP_ABS(x, y, a) fabs(x)
#define GP_OP_SQRT(x, y, a) sqrt(x)
#define GP_OP_EXP(x, y, a) exp(x)
#define GP_OP_LOG(x, y, a) log(x)
#define GP_OP_SIN(x, y, a) sin(x)
#define GP_OP_COS(x, y, a) cos(x)
#define GP_OP_POW(x, y, a) pow((x), (y))
#else
/* Division by 0 gives 0, and the one signed quotient that overflows (lowest / -1) wraps: both
 * trap or are undefined in plain C. */
GP_FUNC T gp_map_int_div(T x, T y)
{
    if (y == 0) return 0;
#if T_IS_SIGNED
    if (y == -1) return (T)((TA)0 - (TA)x);
#endif
    return x / y;
}
#define GP_OP_DIV(x, y, a) gp_map_int_div((x), (y))
#define GP_OP_MIN(x, y, a) ((x) < (y) ? (x) : (y))
#define GP_OP_MAX(x, y, a) ((x) > (y) ? (x) : (y))
#if T_IS_SIGNED
/* |lowest| wraps to lowest. */
#define GP_OP_ABS(x, y, a) ((x) < 0 ? (T)((TA)0 - (TA)(x)) : (x))
#else
#define GP_OP_ABS(x, y, a) (x)
#endif
#endif

/* Ops that ignore an operand leave its loaded values unused (the loads vanish): say so, for
 * the compilers that warn. */
#ifdef GP__NVIDIA /* nvcc and NVRTC, for CUDA and HIP's NVIDIA platform */
#pragma nv_diag_suppress 550
#endif
#define GP_MAP_UNUSED(p, q, r, s) ((void)(p), (void)(q), (void)(r), (void)(s))

#define GP_MAP_ARGS                                                                            \
    GP_GLOBAL T *out, ulong out_offset, GP_GLOBAL const T *x, ulong x_offset, GP_GLOBAL const T *y, \
        ulong y_offset, T a, ulong n

/* The GPU kernel first does the few elements before out reaches a 128-byte boundary (buffers start
 * on one), so that the stores of a warp or wavefront cover whole memory sectors: a partly
 * written sector can cost a read-modify-write (ECC memory), which halved the speed on an H100. */
#define GP_MAP_LINE (GP_MAP_LANES * 8) /* elements in 128 bytes */
GP_FUNC ulong gp_map_head(ulong out_offset, ulong n)
{
    ulong h = (GP_MAP_LINE - out_offset % GP_MAP_LINE) % GP_MAP_LINE;
    return h < n ? h : n;
}

/* The GPU kernel needs at least GP_MAP_LINE work-items (for the head and the vector tail). When
 * every input lies a multiple of 16 bytes from out (the host passes unused operands as out),
 * all are aligned after the head and the loop moves 16-byte vectors; the test is the same for
 * every work-item, so the branch costs nothing. */
/* The CPU path's loop over [s, e): the op itself, a plain loop the compiler vectorises. Where out
 * spans 64 MiB or more (as src/core/memory.c's CPU copies), its 16-byte vectors are stored past
 * the caches where the compiler offers it (clang's __builtin_nontemporal_store: pocl): a plain
 * store first reads the line it overwrites, a third more memory traffic for axpy. */
#if defined(__OPENCL_VERSION__) && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define GP_MAP_STREAM 1
#endif
#endif
#if GP_MAP_STREAM
#define GP_MAP_CAT_(a, b) a##b
#define GP_MAP_CAT(a, b) GP_MAP_CAT_(a, b)
#define GP_MAP_VLOAD(p) GP_MAP_CAT(vload, GP_MAP_LANES)(0, p)
#define GP_MAP_CPU_PLAIN(OP)                                                                   \
    if (n >= ((ulong)64 << 20) / sizeof(T)) {                                                  \
        for (; s < e && (ulong)(out + s) % 16; s++) out[s] = OP(x[s], y[s], a);                \
        for (; s + GP_MAP_LANES <= e; s += GP_MAP_LANES) {                                     \
            TV xv = GP_MAP_VLOAD(x + s), yv = GP_MAP_VLOAD(y + s), r;                           \
            GP_MAP_UNUSED(xv, yv, xv, yv);                                                     \
            GP_MAP_VEC(r, xv, yv, a, OP);                                                      \
            __builtin_nontemporal_store(r, (GP_GLOBAL TV *)(out + s));                         \
        }                                                                                      \
    }                                                                                          \
    for (ulong i = s; i < e; i++) out[i] = OP(x[i], y[i], a);
#else
#define GP_MAP_CPU_PLAIN(OP) for (ulong i = s; i < e; i++) out[i] = OP(x[i], y[i], a);
#endif

#if GP_TYPE == 1 && defined(GP_HAS_FP64)
/* sin and cos of floats on CPUs, where the compilers' own cost about 13 ns an element on one
 * core (pocl 3.1) and keep the loop from vectorising: x reduced by pi/2 in double, so that
 * results near a zero of sin or cos keep their relative accuracy (a reduction in float lost up
 * to 6 ulp there), then Cephes's minimax polynomials on [-pi/4, pi/4] in float. For
 * |x| <= 8192; a block of 64 elements with a larger, infinite or NaN argument goes to the
 * builtin instead, element by element. */
GP_FUNC float gp_map_trigf(float x, int cosine)
{
    /* pi/2 as fdlibm splits it: its first 33 bits, so that q times them is exact for |q| < 2^20,
     * and the rest. No fma or rint: pocl leaves them as calls, which keep the loop scalar. */
    double q = ((double)x * 0.63661977236758134308 + 6755399441055744.0) - 6755399441055744.0; /* rint */
    float r = (float)(((double)x - q * 1.57079632673412561417) - q * 6.07710050650619224932e-11);
    int k = (int)q + cosine;
    float z = r * r;
    float sn = fma(r * z, fma(z, fma(z, -1.9515295891e-4f, 8.3321608736e-3f), -1.6666654611e-1f), r);
    float cs = fma(z * z, fma(z, fma(z, 2.443315711809948e-5f, -1.388731625493765e-3f), 4.166664568298827e-2f),
                   fma(-0.5f, z, 1.0f));
    float v = (k & 1) ? cs : sn;
    return (k & 2) ? -v : v;
}
#define GP_MAP_CPU_TRIG(COSINE, OP)                                                            \
    for (ulong b = s; b < e; b += 64) {                                                        \
        ulong m = b + 64 < e ? b + 64 : e;                                                     \
        int big = 0;                                                                           \
        for (ulong i = b; i < m; i++) big |= !(fabs(x[i]) <= 8192.0f);                         \
        if (big) {                                                                             \
            for (ulong i = b; i < m; i++) out[i] = fabs(x[i]) <= 8192.0f ? gp_map_trigf(x[i], COSINE) : OP(x[i], y[i], a); \
        } else {                                                                               \
            for (ulong i = b; i < m; i++) out[i] = gp_map_trigf(x[i], COSINE);                 \
        }                                                                                      \
    }
#define GP_MAP_CPU_SIN(OP) GP_MAP_CPU_TRIG(0, OP)
#define GP_MAP_CPU_COS(OP) GP_MAP_CPU_TRIG(1, OP)
#else
#define GP_MAP_CPU_SIN GP_MAP_CPU_PLAIN
#define GP_MAP_CPU_COS GP_MAP_CPU_PLAIN
#endif

/* The name is pasted here, before min, abs and the like could expand as macros. */
#define GP_MAP_KERNELS(name, OP) GP_MAP_KERNEL(gp_map_##name, OP, GP_MAP_CPU_PLAIN)
#define GP_MAP_KERNELS_CPU(name, OP, CPU_LOOP) GP_MAP_KERNEL(gp_map_##name, OP, CPU_LOOP)
#define GP_MAP_KERNEL(NAME, OP, CPU_LOOP)                                                      \
    GP_KERNEL void NAME(GP_MAP_ARGS)                                                           \
    {                                                                                          \
        if (gp_local_size(0) == 1) {                                                           \
            /* CPUs: a contiguous block per work-item, starting on a cache line. */            \
            ulong g = gp_global_size(0), per = ((n + g - 1) / g + 15) / 16 * 16;               \
            ulong s = gp_global_id(0) * per, e = s + per < n ? s + per : n;                    \
            out += out_offset;                                                                 \
            x += x_offset;                                                                     \
            y += y_offset;                                                                     \
            CPU_LOOP(OP)                                                                       \
            return;                                                                            \
        }                                                                                      \
        ulong h = gp_map_head(out_offset, n), g = gp_global_size(0), i = gp_global_id(0);      \
        if (i < h) out[out_offset + i] = OP(x[x_offset + i], y[y_offset + i], a);              \
        out += out_offset + h;                                                                 \
        x += x_offset + h;                                                                     \
        y += y_offset + h;                                                                     \
        n -= h;                                                                                \
        if ((x_offset - out_offset) % GP_MAP_LANES == 0 && (y_offset - out_offset) % GP_MAP_LANES == 0) { \
            GP_GLOBAL TV *ov = (GP_GLOBAL TV *)out;                                            \
            GP_GLOBAL const TV *xv = (GP_GLOBAL const TV *)x, *yv = (GP_GLOBAL const TV *)y;   \
            ulong nv = n / GP_MAP_LANES;                                                       \
            for (; i + g < nv; i += 2 * g) {                                                   \
                TV x0 = xv[i], x1 = xv[i + g], y0 = yv[i], y1 = yv[i + g], r0, r1;             \
                GP_MAP_UNUSED(x0, x1, y0, y1);                                                 \
                GP_MAP_VEC(r0, x0, y0, a, OP);                                                 \
                GP_MAP_VEC(r1, x1, y1, a, OP);                                                 \
                ov[i] = r0;                                                                    \
                ov[i + g] = r1;                                                                \
            }                                                                                  \
            if (i < nv) {                                                                      \
                TV x0 = xv[i], y0 = yv[i], r0;                                                 \
                GP_MAP_UNUSED(x0, y0, x0, y0);                                                 \
                GP_MAP_VEC(r0, x0, y0, a, OP);                                                 \
                ov[i] = r0;                                                                    \
            }                                                                                  \
            i = nv * GP_MAP_LANES + gp_global_id(0);                                           \
            if (i < n) out[i] = OP(x[i], y[i], a);                                             \
            return;                                                                            \
        }                                                                                      \
        /* All loads of an iteration are issued before its stores: in place is safe. */        \
        for (; i + 3 * g < n; i += 4 * g) {                                                    \
            T x0 = x[i], x1 = x[i + g], x2 = x[i + 2 * g], x3 = x[i + 3 * g];                  \
            T y0 = y[i], y1 = y[i + g], y2 = y[i + 2 * g], y3 = y[i + 3 * g];                  \
            GP_MAP_UNUSED(x0, x1, x2, x3);                                                     \
            GP_MAP_UNUSED(y0, y1, y2, y3);                                                     \
            out[i] = OP(x0, y0, a);                                                            \
            out[i + g] = OP(x1, y1, a);                                                        \
            out[i + 2 * g] = OP(x2, y2, a);                                                    \
            out[i + 3 * g] = OP(x3, y3, a);                                                    \
        }                                                                                      \
        for (; i < n; i += g) out[i] = OP(x[i], y[i], a);                                      \
    }                                                                                          \

GP_MAP_KERNELS(copy, GP_OP_COPY)
GP_MAP_KERNELS(fill, GP_OP_FILL)
GP_MAP_KERNELS(scale, GP_OP_SCALE)
GP_MAP_KERNELS(axpy, GP_OP_AXPY)
GP_MAP_KERNELS(add, GP_OP_ADD)
GP_MAP_KERNELS(sub, GP_OP_SUB)
GP_MAP_KERNELS(mul, GP_OP_MUL)
GP_MAP_KERNELS(div, GP_OP_DIV)
GP_MAP_KERNELS(min, GP_OP_MIN)
GP_MAP_KERNELS(max, GP_OP_MAX)
GP_MAP_KERNELS(abs, GP_OP_ABS)
#if T_IS_FLOAT
GP_MAP_KERNELS(sqrt, GP_OP_SQRT)
GP_MAP_KERNELS(exp, GP_OP_EXP)
GP_MAP_KERNELS(log, GP_OP_LOG)
GP_MAP_KERNELS_CPU(sin, GP_OP_SIN, GP_MAP_CPU_SIN)
GP_MAP_KERNELS_CPU(cos, GP_OP_COS, GP_MAP_CPU_COS)
GP_MAP_KERNELS(pow, GP_OP_POW)
#endif
