/* gpuport kernel dialect on CUDA C++ (NVRTC or nvcc). docs/kernel-dialect.md describes every name. */
#define GP_BACKEND_CUDA 1
#define GP_HAS_FP64 1

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
extern __shared__ __align__(16) unsigned char gp__dynamic_local[];
#define GP_LOCAL_ARG(T, name) unsigned int name##_gp_offset
#define GP_LOCAL_BIND(T, name) T *name = (T *)(gp__dynamic_local + name##_gp_offset)
#define GP_LOCAL_PTR(T) T *

__device__ __forceinline__ uint gp__dim3(const uint3 v, int d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
__device__ __forceinline__ uint gp__dim3(const dim3 v, int d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
#define gp_local_id(d) gp__dim3(threadIdx, (d))
#define gp_group_id(d) gp__dim3(blockIdx, (d))
#define gp_local_size(d) gp__dim3(blockDim, (d))
#define gp_num_groups(d) gp__dim3(gridDim, (d))
#define gp_global_id(d) (gp_group_id(d) * gp_local_size(d) + gp_local_id(d))
#define gp_global_size(d) (gp_num_groups(d) * gp_local_size(d))

#define gp_barrier() __syncthreads()

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
