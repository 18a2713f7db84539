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
