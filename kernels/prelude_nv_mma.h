/* FP64 matrix instructions on NVIDIA GPUs from sm_80 on, for gpuport's GEMM; joined after
 * prelude_cuda.h and prelude_opencl.h, which define GP__MMA_ARCH (the compute capability, as
 * 90) on NVIDIA GPUs that run double, and GP__ASM, their keyword for inline assembly (NVRTC
 * refuses __asm__). C (16 x 8) += A (16 x 8) B (8 x 8) over a warp, with g = lane / 4 and
 * t = lane % 4: a0..a3 are A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; b0, b1 are B[t][g],
 * B[t+4][g]; c0..c3 are C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]. sm_90 has this shape
 * as one instruction; sm_80 only 8 x 8 x 4, run four times (on sm_90 that shape runs at half
 * the rate). */
#if defined(GP__MMA_ARCH) && GP__MMA_ARCH >= 80
#define GP__MMA_F64 1
#if GP__MMA_ARCH >= 90
/* C (16 x 8) += A (16 x 16) B (16 x 8): as above, with a4..a7 A[g][t+8], A[g+8][t+8],
 * A[g][t+12], A[g+8][t+12] and b2, b3 B[t+8][g], B[t+12][g] */
#define gp__mma_f64_16x8x16(c0, c1, c2, c3, a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3)     \
    GP__ASM("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};" \
            : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)                                           \
            : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(a4), "d"(a5), "d"(a6), "d"(a7),           \
              "d"(b0), "d"(b1), "d"(b2), "d"(b3))
#define gp__mma_f64_16x8x8(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1)                             \
    GP__ASM("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
            : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)                                           \
            : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1))
#else
#define gp__mma_f64_8x8x4(c0, c1, a, b)                                                        \
    GP__ASM("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"    \
            : "+d"(c0), "+d"(c1)                                                               \
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

/* Copies of 16 bytes from global to local memory that bypass the registers and run while the
 * thread goes on (sm_80 on; gpuport's GEMM): gp__cp_async16 starts one, gp__cp_async_commit
 * closes the group of those started since the last, gp__cp_async_wait(n) waits until at most n
 * groups are in flight (a literal). A barrier after the wait shows them to the block. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* CUDA, and HIP's NVIDIA platform; not OpenCL */
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
