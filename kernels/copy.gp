/* gp_buffer_copy within a CPU device (src/core/memory.c): the driver's copy runs on one thread
 * (pocl), this on every core. Work-item g copies bytes [g * per, (g + 1) * per); the compiler
 * turns the loop into its own copy code. With stream set (copies larger than the caches), the
 * stores bypass the caches where the compiler offers it (clang's __builtin_nontemporal_store):
 * a plain store first reads the line it writes, which costs a copy a third more memory
 * traffic. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define GP_COPY_STREAM 1
#endif
#endif

GP_KERNEL void gp_copy_cpu(GP_GLOBAL uchar *GP_RESTRICT dst, ulong dst_offset, GP_GLOBAL const uchar *GP_RESTRICT src,
                           ulong src_offset, ulong n, ulong per, uint stream)
{
    ulong i = gp_global_id(0) * per, e = i + per < n ? i + per : n;
    dst += dst_offset;
    src += src_offset;
#if GP_COPY_STREAM
    if (stream) {
        for (; i < e && (ulong)(dst + i) % 16; i++) dst[i] = src[i];
        for (; i + 16 <= e; i += 16) __builtin_nontemporal_store(vload16(0, src + i), (GP_GLOBAL uchar16 *)(dst + i));
    }
#else
    (void)stream;
#endif
    for (; i < e; i++) dst[i] = src[i];
}
