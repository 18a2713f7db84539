/* The gpuport kernel dialect on CUDA and HIP C++, which spell it alike: put after
 * prelude_cuda.h or prelude_hip.h. docs/kernel-dialect.md describes every name. */
#define GP_HAS_FP64 1

/* OpenCL C's unsigned type names (HIP's headers declare the same; an identical typedef may repeat). */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

#define GP_KERNEL extern "C" __global__
#define GP_FUNC static __device__ __forceinline__
#define GP_GLOBAL
#define GP_LOCAL __shared__
#define GP_CONSTANT __constant__
#define GP_RESTRICT __restrict__

/* All GP_LOCAL_ARG parameters share the launch's dynamic shared memory; each parameter is the
 * byte offset of its part, and GP_LOCAL_BIND turns it into a pointer. */
extern __shared__ __attribute__((aligned(16))) unsigned char gp__dynamic_local[];
#define GP_LOCAL_ARG(T, name) unsigned int name##_gp_offset
#define GP_LOCAL_BIND(T, name) T *name = (T *)(gp__dynamic_local + name##_gp_offset)
#define GP_LOCAL_PTR(T) T *

/* threadIdx.x and friends are distinct types in HIP, so each is converted before choosing. */
#define GP__PICK(v, d) ((d) == 0 ? (uint)(v).x : (d) == 1 ? (uint)(v).y : (uint)(v).z)
#define gp_local_id(d) GP__PICK(threadIdx, (d))
#define gp_group_id(d) GP__PICK(blockIdx, (d))
#define gp_local_size(d) GP__PICK(blockDim, (d))
#define gp_num_groups(d) GP__PICK(gridDim, (d))
#define gp_global_id(d) (gp_group_id(d) * gp_local_size(d) + gp_local_id(d))
#define gp_global_size(d) (gp_num_groups(d) * gp_local_size(d))
/* The element loop of a one-dimensional launch of any size (see prelude_opencl.h). */
#define GP_FOR(i, n) for (uint i = gp_global_id(0); i < (n); i += gp_global_size(0))

/* A work-group-scope fence on every address space around the hardware barrier, so global
 * writes are seen too, as on the other backends. */
#define gp_barrier() __syncthreads()

/* 32-bit integer atomics on global or local memory; each returns the old value. */
#define gp_atomic_add(p, v) atomicAdd((p), (v))
#define gp_atomic_sub(p, v) atomicSub((p), (v))
#define gp_atomic_min(p, v) atomicMin((p), (v))
#define gp_atomic_max(p, v) atomicMax((p), (v))
#define gp_atomic_xchg(p, v) atomicExch((p), (v))
#define gp_atomic_cas(p, cmp, v) atomicCAS((p), (cmp), (v))

/* OpenCL C names the dialect keeps. */
#define mad(a, b, c) ((a) * (b) + (c))

/* Positive infinity of float and double. */
#define GP_INFINITY_F __int_as_float(0x7f800000)
#define GP_INFINITY_D __longlong_as_double(0x7ff0000000000000LL)

/* Subgroup operations on the vendor's shuffles (gp__shfl, gp__shfl_up): overloads for the six
 * element types. Every lane of the subgroup calls them together. */
GP_FUNC uint gp__local_linear_id(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
#define gp_sub_group_id() (gp__local_linear_id() / gp_sub_group_size())
#define gp_num_sub_groups() ((blockDim.x * blockDim.y * blockDim.z + gp_sub_group_size() - 1) / gp_sub_group_size())

/* Kogge-Stone over the lanes; the exclusive scan is the inclusive one moved up a lane. */
#define GP__SG_SCAN(V, NAME, OP, IDENT)                                                        \
    GP_FUNC V gp_sub_group_scan_inclusive_##NAME(V x)                                          \
    {                                                                                          \
        uint lane = gp_sub_group_local_id();                                                   \
        for (uint d = 1; d < gp_sub_group_size(); d <<= 1) {                                   \
            V y = gp__shfl_up(x, d);                                                           \
            if (lane >= d) x = OP(y, x);                                                       \
        }                                                                                      \
        return x;                                                                              \
    }                                                                                          \
    GP_FUNC V gp_sub_group_scan_exclusive_##NAME(V x)                                          \
    {                                                                                          \
        V y = gp__shfl_up(gp_sub_group_scan_inclusive_##NAME(x), 1u);                          \
        return gp_sub_group_local_id() ? y : (V)(IDENT);                                       \
    }
/* U: the type sums are done in (unsigned for integers, so that they wrap). */
#define GP__SG_TYPE(V, U, MIN, MAX, LOWEST, HIGHEST)                                           \
    GP_FUNC V gp_sub_group_broadcast(V x, uint lane) { return gp__shfl(x, lane); }              \
    GP_FUNC V gp__sg_add(V a, V b) { return (V)((U)a + (U)b); }                                 \
    GP__SG_SCAN(V, add, gp__sg_add, 0)                                                         \
    GP__SG_SCAN(V, min, MIN, HIGHEST)                                                          \
    GP__SG_SCAN(V, max, MAX, LOWEST)
#define GP__SG_MIN(a, b) ((b) < (a) ? (b) : (a))
#define GP__SG_MAX(a, b) ((b) > (a) ? (b) : (a))
GP__SG_TYPE(int, uint, GP__SG_MIN, GP__SG_MAX, -2147483647 - 1, 2147483647)
GP__SG_TYPE(uint, uint, GP__SG_MIN, GP__SG_MAX, 0u, 4294967295u)
GP__SG_TYPE(long, ulong, GP__SG_MIN, GP__SG_MAX, -9223372036854775807L - 1L, 9223372036854775807L)
GP__SG_TYPE(ulong, ulong, GP__SG_MIN, GP__SG_MAX, 0UL, 18446744073709551615UL)
GP__SG_TYPE(float, float, fminf, fmaxf, -GP_INFINITY_F, GP_INFINITY_F)
GP__SG_TYPE(double, double, fmin, fmax, -GP_INFINITY_D, GP_INFINITY_D)
