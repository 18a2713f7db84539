/* gpuport kernel dialect on OpenCL C 1.2. docs/kernel-dialect.md describes every name. */
#define GP_BACKEND_OPENCL 1
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define GP_HAS_FP64 1
#endif
/* Guarded: drivers warn about (or refuse) an enable pragma for an extension they lack. */
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define GP_KERNEL __kernel
#define GP_FUNC static inline
#define GP_GLOBAL __global
#define GP_LOCAL __local
#define GP_CONSTANT __constant
#define GP_RESTRICT restrict

/* Local memory sized at launch: a GP_LOCAL_ARG parameter, bound once at the top of the body. */
#define GP_LOCAL_ARG(T, name) __local T *name
#define GP_LOCAL_BIND(T, name) (void)0
#define GP_LOCAL_PTR(T) __local T *

#define gp_global_id(d) ((uint)get_global_id(d))
#define gp_local_id(d) ((uint)get_local_id(d))
#define gp_group_id(d) ((uint)get_group_id(d))
#define gp_local_size(d) ((uint)get_local_size(d))
#define gp_global_size(d) ((uint)get_global_size(d))
#define gp_num_groups(d) ((uint)get_num_groups(d))

#define gp_barrier() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

/* GP_FOR(i, n): the element loop of a one-dimensional launch of any size (a grid-stride loop:
 * each work-item takes its index, plus the launch's size, and so on).
 * On CPU devices (-DGP__CPU) the same loop carries a flag that is the same for the whole
 * work-group: its items all lie below n and the launch covers n, so each runs the body once,
 * unguarded. pocl's compiler splits the group's loop over work-items on that flag and
 * vectorises the unguarded copy as it does a kernel without a bounds check; the guarded copy
 * serves the last group and launches smaller than n (docs/kernel-dialect.md). */
#ifdef GP__CPU
#define GP_FOR(i, n)                                                                                        \
    for (uint i = gp_global_id(0),                                                                          \
              gp__whole = (get_group_id(0) + 1) * get_local_size(0) <= (n) && get_global_size(0) >= (n),   \
              gp__go = gp__whole || i < (n);                                                                \
         gp__go; gp__go = !gp__whole && (i += gp_global_size(0)) < (n))
#else
#define GP_FOR(i, n) for (uint i = gp_global_id(0); i < (n); i += gp_global_size(0))
#endif

/* 32-bit integer atomics on global or local memory; each returns the old value. */
#define gp_atomic_add(p, v) atomic_add((p), (v))
#define gp_atomic_sub(p, v) atomic_sub((p), (v))
#define gp_atomic_min(p, v) atomic_min((p), (v))
#define gp_atomic_max(p, v) atomic_max((p), (v))
#define gp_atomic_xchg(p, v) atomic_xchg((p), (v))
#define gp_atomic_cas(p, cmp, v) atomic_cmpxchg((p), (cmp), (v))

/* Positive infinity of float and double. */
#define GP_INFINITY_F INFINITY
#define GP_INFINITY_D ((double)INFINITY)

/* Subgroup operations. NVIDIA's OpenCL has no cl_khr_subgroups, but takes the same warp
 * shuffles as CUDA in inline PTX; the plugin says it is NVIDIA with -DGP_NV_SM (the compute
 * capability) on the build's command line, where the prelude sees it. Elsewhere
 * cl_khr_subgroups where the driver has it. */
#if defined(GP_NV_SM)
#define GP_HAS_SUBGROUPS 1
#define GP__OVL static inline __attribute__((overloadable))
#define gp_sub_group_size() 32u
#define gp_sub_group_id() (gp__local_linear_id() / 32u)
#define gp_num_sub_groups() ((uint)(get_local_size(0) * get_local_size(1) * get_local_size(2) + 31) / 32u)
#define gp_sub_group_barrier() __asm__ volatile("bar.warp.sync 0xffffffff;" ::: "memory")
GP_FUNC uint gp__local_linear_id(void)
{
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}
GP_FUNC uint gp_sub_group_local_id(void)
{
    uint lane;
    __asm__("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
/* Full-warp shuffles of one 32-bit word: c = 0 for up (no lane below 0), 31 for an index. */
GP_FUNC uint gp__shfl_up_w(uint x, uint d)
{
    uint y;
    __asm__ volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(y) : "r"(x), "r"(d));
    return y;
}
GP_FUNC uint gp__shfl_w(uint x, uint lane)
{
    uint y;
    __asm__ volatile("shfl.sync.idx.b32 %0, %1, %2, 31, 0xffffffff;" : "=r"(y) : "r"(x), "r"(lane));
    return y;
}
#define GP__SHFL_TYPE(V)                                                                       \
    GP__OVL V gp__shfl(V x, uint l) { return as_##V(gp__shfl_w(as_uint(x), l)); }               \
    GP__OVL V gp__shfl_up(V x, uint d) { return as_##V(gp__shfl_up_w(as_uint(x), d)); }
#define GP__SHFL_TYPE2(V)                                                                      \
    GP__OVL V gp__shfl(V x, uint l)                                                            \
    {                                                                                          \
        uint2 w = as_uint2(x);                                                                 \
        return as_##V((uint2)(gp__shfl_w(w.x, l), gp__shfl_w(w.y, l)));                        \
    }                                                                                          \
    GP__OVL V gp__shfl_up(V x, uint d)                                                         \
    {                                                                                          \
        uint2 w = as_uint2(x);                                                                 \
        return as_##V((uint2)(gp__shfl_up_w(w.x, d), gp__shfl_up_w(w.y, d)));                  \
    }
GP__SHFL_TYPE(int)
GP__SHFL_TYPE(uint)
GP__SHFL_TYPE(float)
GP__SHFL_TYPE2(long)
GP__SHFL_TYPE2(ulong)
/* Kogge-Stone over the lanes, as prelude_cuhip.h does it. */
#define GP__SG_SCAN(V, NAME, OP, IDENT)                                                        \
    GP__OVL V gp_sub_group_scan_inclusive_##NAME(V x)                                          \
    {                                                                                          \
        uint lane = gp_sub_group_local_id();                                                   \
        for (uint d = 1; d < 32u; d <<= 1) {                                                   \
            V y = gp__shfl_up(x, d);                                                           \
            if (lane >= d) x = OP(y, x);                                                       \
        }                                                                                      \
        return x;                                                                              \
    }                                                                                          \
    GP__OVL V gp_sub_group_scan_exclusive_##NAME(V x)                                          \
    {                                                                                          \
        V y = gp__shfl_up(gp_sub_group_scan_inclusive_##NAME(x), 1u);                          \
        return gp_sub_group_local_id() ? y : (V)(IDENT);                                       \
    }
/* U: the type sums are done in (unsigned for integers, so that they wrap). */
#define GP__SG_TYPE(V, U, MIN, MAX, LOWEST, HIGHEST)                                           \
    GP__OVL V gp_sub_group_broadcast(V x, uint lane) { return gp__shfl(x, lane); }              \
    GP__OVL V gp__sg_add(V a, V b) { return (V)((U)a + (U)b); }                                 \
    GP__SG_SCAN(V, add, gp__sg_add, 0)                                                         \
    GP__SG_SCAN(V, min, MIN, HIGHEST)                                                          \
    GP__SG_SCAN(V, max, MAX, LOWEST)
GP__SG_TYPE(int, uint, min, max, -2147483647 - 1, 2147483647)
GP__SG_TYPE(uint, uint, min, max, 0u, 4294967295u)
GP__SG_TYPE(long, ulong, min, max, -9223372036854775807L - 1L, 9223372036854775807L)
GP__SG_TYPE(ulong, ulong, min, max, 0UL, 18446744073709551615UL)
GP__SG_TYPE(float, float, fmin, fmax, -INFINITY, INFINITY)
#ifdef GP_HAS_FP64
GP__SHFL_TYPE2(double)
GP__SG_TYPE(double, double, fmin, fmax, -INFINITY, INFINITY)
#endif
#elif defined(cl_khr_subgroups)
/* clang declares the functions without it, and newer clang warns about it under OpenCL C 1.2
 * (pocl 5.0 printed "1 warning generated." for every program). */
#ifndef __clang__
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#define GP_HAS_SUBGROUPS 1
#define gp_sub_group_size() ((uint)get_max_sub_group_size())
#define gp_sub_group_local_id() ((uint)get_sub_group_local_id())
#define gp_sub_group_id() ((uint)get_sub_group_id())
#define gp_num_sub_groups() ((uint)get_num_sub_groups())
#define gp_sub_group_barrier() sub_group_barrier(CLK_LOCAL_MEM_FENCE)
#define gp_sub_group_broadcast(x, lane) sub_group_broadcast((x), (lane))
#define gp_sub_group_scan_inclusive_add(x) sub_group_scan_inclusive_add(x)
#define gp_sub_group_scan_inclusive_min(x) sub_group_scan_inclusive_min(x)
#define gp_sub_group_scan_inclusive_max(x) sub_group_scan_inclusive_max(x)
#define gp_sub_group_scan_exclusive_add(x) sub_group_scan_exclusive_add(x)
#define gp_sub_group_scan_exclusive_min(x) sub_group_scan_exclusive_min(x)
#define gp_sub_group_scan_exclusive_max(x) sub_group_scan_exclusive_max(x)
#endif

/* The FP64 matrix instructions of prelude_nv_mma.h, joined after this file: NVIDIA's OpenCL
 * compiles the same inline PTX as CUDA. */
#if defined(GP_NV_SM) && defined(GP_HAS_FP64)
#define GP__MMA_ARCH GP_NV_SM
#define GP__ASM __asm__
#endif
