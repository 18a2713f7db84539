/* Every dialect construct once, so each backend's compiler sees them all: launch-sized and
 * fixed local memory, barriers, atomics, 2D ids, a helper, and double where the device has it.
 * Launch with a 2D group of at most 256 work-items whose size is a power of two. */

GP_FUNC uint sample_rotate(uint x, uint r)
{
    return (x << r) | (x >> ((32u - r) & 31u));
}

/* Sums each group's tile of a w x h image into sums[group], counts the non-zero pixels in
 * *nonzero, and writes each pixel's rotated value to out. */
GP_KERNEL void dialect_sample(GP_GLOBAL const uint *GP_RESTRICT in, GP_GLOBAL uint *GP_RESTRICT out,
                              GP_GLOBAL uint *sums, GP_GLOBAL uint *nonzero, uint w, uint h,
                              GP_LOCAL_ARG(uint, tile))
{
    GP_LOCAL_BIND(uint, tile);
    GP_LOCAL uint group_nonzero[1];
    uint x = gp_global_id(0), y = gp_global_id(1);
    uint t = gp_local_id(1) * gp_local_size(0) + gp_local_id(0);
    uint items = gp_local_size(0) * gp_local_size(1);
    int inside = x < w && y < h;
    uint v = inside ? in[y * w + x] : 0u;

    if (t == 0)
        group_nonzero[0] = 0u;
    tile[t] = v;
    gp_barrier();
    if (v != 0u)
        gp_atomic_add(&group_nonzero[0], 1u);
    for (uint s = items / 2; s > 0; s /= 2) {
        if (t < s)
            tile[t] += tile[t + s];
        gp_barrier(); /* reached by every work-item, inside the image or not */
    }
    if (inside)
        out[y * w + x] = sample_rotate(v, (x + y) & 31u);
    if (t == 0) {
        sums[gp_group_id(1) * gp_num_groups(0) + gp_group_id(0)] = tile[0];
        gp_atomic_add(nonzero, group_nonzero[0]);
    }
}

#ifdef GP_HAS_FP64
/* Mean of each row in double, so large sums keep every bit. */
GP_KERNEL void dialect_sample_row_mean(GP_GLOBAL const uint *in, GP_GLOBAL double *mean, uint w, uint h)
{
    uint y = gp_global_id(0);
    if (y >= h)
        return;
    double s = 0.0;
    for (uint x = 0; x < w; x++)
        s += (double)in[y * w + x];
    mean[y] = w ? s / (double)w : 0.0;
}
#endif
