/* gp_buffer_copy within a CPU device (src/core/memory.c): the driver's copy runs on one thread
 * (pocl), this on every core. Work-item g copies bytes [g * per, (g + 1) * per); the compiler
 * turns the loop into its memcpy. */
GP_KERNEL void gp_copy_cpu(GP_GLOBAL uchar *GP_RESTRICT dst, ulong dst_offset, GP_GLOBAL const uchar *GP_RESTRICT src,
                           ulong src_offset, ulong n, ulong per)
{
    ulong s = gp_global_id(0) * per, e = s + per < n ? s + per : n;
    dst += dst_offset;
    src += src_offset;
    for (ulong i = s; i < e; i++) dst[i] = src[i];
}
