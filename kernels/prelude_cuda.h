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

/* FP64 matrix instructions (sm_80 on), for gpuport's GEMM: C (16 x 8) += A (16 x 8) B (8 x 8)
 * over a warp, with g = lane / 4 and t = lane % 4: a0..a3 are A[g][t], A[g+8][t], A[g][t+4],
 * A[g+8][t+4]; b0, b1 are B[t][g], B[t+4][g]; c0..c3 are C[g][2t], C[g][2t+1], C[g+8][2t],
 * C[g+8][2t+1]. sm_90 has this shape as one instruction; sm_80 only 8 x 8 x 4, run four times
 * (on sm_90 that shape runs at half the rate). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GP__MMA_F64 1
#if __CUDA_ARCH__ >= 900
#define gp__mma_f64_16x8x8(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1)                             \
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
        : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)                                               \
        : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1))
#else
#define gp__mma_f64_8x8x4(c0, c1, a, b)                                                        \
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"        \
        : "+d"(c0), "+d"(c1)                                                                   \
        : "d"(a), "d"(b))
#define gp__mma_f64_16x8x8(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1)                             \
    do {                                                                                       \
        gp__mma_f64_8x8x4(c0, c1, a0, b0);                                                     \
        gp__mma_f64_8x8x4(c0, c1, a2, b1);                                                     \
        gp__mma_f64_8x8x4(c2, c3, a1, b0);                                                     \
        gp__mma_f64_8x8x4(c2, c3, a3, b1);                                                     \
    } while (0)
#endif
#endif
