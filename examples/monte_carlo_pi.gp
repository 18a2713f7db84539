/* Counts the points of the unit square that fall inside the quarter circle. Point i is drawn
 * from its index alone (splitmix64: a hash of seed + (i + 1) * golden ratio), so any work-item
 * can draw any point and every backend draws the same ones; x and y are 31-bit integers and
 * x^2 + y^2 < 2^62 is tested in 64-bit integers, so every backend counts the same. */
GP_FUNC ulong splitmix64(ulong z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

/* Each work-item counts a stride of the n points; the group adds its counts in local memory
 * (at most 256 work-items, a power of two) and adds them to *count with one atomic. */
GP_KERNEL void count_inside(ulong seed, uint n, GP_GLOBAL uint *count)
{
    GP_LOCAL uint part[256];
    uint t = gp_local_id(0), inside = 0;
    for (ulong i = gp_global_id(0); i < n; i += gp_global_size(0)) {
        ulong r = splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15UL), x = r >> 33, y = r & 0x7FFFFFFFUL;
        inside += x * x + y * y < (1UL << 62) ? 1 : 0;
    }
    part[t] = inside;
    gp_barrier();
    for (uint s = gp_local_size(0) / 2; s > 0; s /= 2) {
        if (t < s)
            part[t] += part[t + s];
        gp_barrier();
    }
    if (t == 0)
        gp_atomic_add(count, part[0]);
}
