/* c = a + b: GP_FOR takes each element i < n that falls to this work-item. */
GP_KERNEL void vector_add(GP_GLOBAL const float *a, GP_GLOBAL const float *b, GP_GLOBAL float *c, uint n)
{
    GP_FOR(i, n) c[i] = a[i] + b[i];
}
