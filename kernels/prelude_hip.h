/* gpuport kernel dialect on HIP C++ (hiprtc, or hipcc for prebuilt code objects).
 * docs/kernel-dialect.md describes every name. Nothing here depends on the wavefront width:
 * it is 64 on most AMD GPUs and 32 on RDNA in wave32 mode. */
#define GP_BACKEND_HIP 1

/* hiprtc includes the runtime header itself (and has no others); hipcc -include puts this
 * file before the runtime header, so include it there. */
#ifndef __HIPCC_RTC__
#include <hip/hip_runtime.h>
#endif
/* The rest of the dialect is prelude_nv_mma.h and prelude_cuhip.h, joined after this file. */

/* HIP's NVIDIA platform compiles for an NVIDIA GPU (through NVRTC or nvcc): the kernels take
 * their NVIDIA tuning, and prelude_nv_mma.h its FP64 matrix instructions, as on CUDA. */
#ifdef __HIP_PLATFORM_NVIDIA__
#define GP__NVIDIA 1
#if defined(__CUDA_ARCH__)
#define GP__MMA_ARCH (__CUDA_ARCH__ / 10)
#define GP__ASM asm
#endif
#endif

/* Subgroups are wavefronts, warpSize wide (64, or 32 in wave32 mode): the kernel is compiled
 * per target, so it is a constant for each. LDS accesses of one wavefront are ordered only by
 * a fence: the subgroup barrier is one on each side of the scheduling barrier. */
#define GP_HAS_SUBGROUPS 1
#define gp_sub_group_size() ((unsigned)warpSize)
#define gp_sub_group_local_id() ((unsigned)__lane_id())
#define gp_sub_group_barrier()                                                                 \
    (__builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront"), __builtin_amdgcn_wave_barrier(),   \
     __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront"))
#define gp__shfl(x, lane) __shfl((x), (int)(lane))
#define gp__shfl_up(x, d) __shfl_up((x), (d))
