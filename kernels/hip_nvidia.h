/* HIP's NVIDIA platform (src/backends/hip/nvidia.c): what gpuport's HIP prelude takes from AMD's
 * compiler, in CUDA's terms. libgpuport-hip-nvidia.so puts this before every program it hands
 * NVRTC; nvcc includes it first for the prebuilt kernels of that platform. */
#define __HIPCC_RTC__ 1
#define __HIP_PLATFORM_NVIDIA__ 1
static __device__ __forceinline__ unsigned __lane_id(void)
{
    unsigned l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
#define __shfl(x, lane) __shfl_sync(0xffffffffu, (x), (lane))
#define __shfl_up(x, d) __shfl_up_sync(0xffffffffu, (x), (d))
#define __builtin_amdgcn_fence(order, scope) __threadfence_block()
#define __builtin_amdgcn_wave_barrier() __syncwarp()
