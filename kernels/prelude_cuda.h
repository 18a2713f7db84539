/* gpuport kernel dialect on CUDA C++ (NVRTC, or nvcc for prebuilt binaries). The rest of the
 * dialect is prelude_cuhip.h, joined after this file. */
#define GP_BACKEND_CUDA 1

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

/* Copies of 16 bytes from global to local memory that bypass the registers and run while the
 * thread goes on (sm_80 on; gpuport's GEMM): gp__cp_async16 starts one, gp__cp_async_commit
 * closes the group of those started since the last, gp__cp_async_wait(n) waits until at most n
 * groups are in flight (a literal). A barrier after the wait shows them to the block. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GP__CP_ASYNC 1
static __device__ __forceinline__ void gp__cp_async16(void *dst, const void *src)
{
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(src) : "memory");
}
#define gp__cp_async_commit() asm volatile("cp.async.commit_group;" ::: "memory")
#define gp__cp_async_wait(n) asm volatile("cp.async.wait_group %0;" ::"n"(n) : "memory")
#endif
