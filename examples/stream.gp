/* BabelStream's four element-wise kernels in the dialect, each loop GP_FOR: a launch of any
 * size (docs/kernel-dialect.md). With -DGUARDED each is written as kernels come from CUDA
 * instead: one work-item an element, the store under `if (i < n)`.
 * Build options: -DT=float (or -DT=double), -DGUARDED. */
#ifdef GUARDED
#define EACH(i, n) \
    uint i = gp_global_id(0); \
    if (i < (n))
#else
#define EACH(i, n) GP_FOR(i, n)
#endif
GP_KERNEL void stream_copy(GP_GLOBAL const T *a, GP_GLOBAL T *c, uint n)
{
    EACH(i, n) c[i] = a[i];
}

GP_KERNEL void stream_mul(GP_GLOBAL T *b, GP_GLOBAL const T *c, T scalar, uint n)
{
    EACH(i, n) b[i] = scalar * c[i];
}

GP_KERNEL void stream_add(GP_GLOBAL const T *a, GP_GLOBAL const T *b, GP_GLOBAL T *c, uint n)
{
    EACH(i, n) c[i] = a[i] + b[i];
}

GP_KERNEL void stream_triad(GP_GLOBAL T *a, GP_GLOBAL const T *b, GP_GLOBAL const T *c, T scalar, uint n)
{
    EACH(i, n) a[i] = b[i] + scalar * c[i];
}
