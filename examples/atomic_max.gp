/* The largest element of x, two ways; *result must hold the smallest int beforehand. */

/* One atomic per element: every work-item of the device contends for one word. */
GP_KERNEL void max_per_element(GP_GLOBAL const int *x, GP_GLOBAL int *result, uint n)
{
    uint i = gp_global_id(0);
    if (i < n)
        gp_atomic_max(result, x[i]);
}

/* One atomic per work-group (of at most 256 work-items, a power of two): each work-item takes
 * the largest of a stride of x, then the group folds those in local memory. */
GP_KERNEL void max_per_group(GP_GLOBAL const int *x, GP_GLOBAL int *result, uint n)
{
    GP_LOCAL int best[256];
    uint t = gp_local_id(0);
    int m = -2147483647 - 1;
    for (uint i = gp_global_id(0); i < n; i += gp_global_size(0))
        m = x[i] > m ? x[i] : m;
    best[t] = m;
    gp_barrier();
    for (uint s = gp_local_size(0) / 2; s > 0; s /= 2) {
        if (t < s && best[t + s] > best[t])
            best[t] = best[t + s];
        gp_barrier();
    }
    if (t == 0)
        gp_atomic_max(result, best[0]);
}
