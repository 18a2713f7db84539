/* n 8-byte words set to value: the one fill width the CUDA and HIP drivers have no memset for. */
GP_KERNEL void gp_fill8(GP_GLOBAL ulong *p, ulong n, ulong value)
{
    for (ulong i = gp_global_id(0); i < n; i += gp_global_size(0)) p[i] = value;
}
