/* gpuport kernel dialect on CUDA C++ (NVRTC, or nvcc for prebuilt binaries). The rest of the
 * dialect is prelude_cuhip.h, joined after this file. */
#define GP_BACKEND_CUDA 1
#define GP__NVIDIA 1 /* an NVIDIA GPU: the kernels' tuning for it (prelude_hip.h says so on HIP's NVIDIA platform) */

/* Subgroups are warps, 32 wide on every NVIDIA GPU; the shuffles name all 32 lanes, so the
 * whole warp calls them together (prelude_cuhip.h builds the scans on them). */
#define GP_HAS_SUBGROUPS 1
#define gp_sub_group_size() 32u
#define gp_sub_group_barrier() __syncwarp()
#define gp__shfl(x, lane) __shfl_sync(0xffffffffu, (x), (lane))
#define gp__shfl_up(x, d) __shfl_up_sync(0xffffffffu, (x), (d))
static __device__ __forceinline__ unsigned gp_sub_group_local_id(void)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/* The FP64 matrix instructions of prelude_nv_mma.h, joined after this file. */
#if defined(__CUDA_ARCH__)
#define GP__MMA_ARCH (__CUDA_ARCH__ / 10)
#define GP__ASM asm
#endif

