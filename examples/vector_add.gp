/* c = a + b, one work-item per element. */
GP_KERNEL void vector_add(GP_GLOBAL const float *a, GP_GLOBAL const float *b, GP_GLOBAL float *c, uint n)
{
    uint i = gp_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
