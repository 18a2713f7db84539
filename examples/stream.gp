/* BabelStream's four element-wise kernels in the dialect, each loop GP_FOR: a launch of any
 * size, and the form CPU compilers vectorise (docs/kernel-dialect.md).
 * Build options: -DT=float (or -DT=double). */
GP_KERNEL void stream_copy(GP_GLOBAL const T *a, GP_GLOBAL T *c, uint n)
{
    GP_FOR(i, n) c[i] = a[i];
}

GP_KERNEL void stream_mul(GP_GLOBAL T *b, GP_GLOBAL const T *c, T scalar, uint n)
{
    GP_FOR(i, n) b[i] = scalar * c[i];
}

GP_KERNEL void stream_add(GP_GLOBAL const T *a, GP_GLOBAL const T *b, GP_GLOBAL T *c, uint n)
{
    GP_FOR(i, n) c[i] = a[i] + b[i];
}

GP_KERNEL void stream_triad(GP_GLOBAL T *a, GP_GLOBAL const T *b, GP_GLOBAL const T *c, T scalar, uint n)
{
    GP_FOR(i, n) a[i] = b[i] + scalar * c[i];
}
