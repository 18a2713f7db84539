/* The scan primitive: one pass with a decoupled look-back (kernels/scan.gp); its ticket and
 * published words live in the stream's tagged words (gp__sync), so one launch is the whole call. */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The shape the scan runs with: the widest group and elements per work-item for 4- and 8-byte
 * types, kernels/scan.gp's defaults (which nvcc and hipcc prebuild). */
#define GROUP 256
#define ITEMS(size) ((size) == 4 ? 32 : 16)
/* kernels/scan.gp: where the per-tile words start and their bytes per tile. */
#define STATE_HEAD 16
#define WORD_BYTES(size) ((size) == 4 ? 8 : 16)

/* The kernels' variants: "lookback" above, and "chunked" (-DGP_SCAN_CHUNKED=1, kernels/scan.gp),
 * three passes over a few contiguous chunks per core, for CPUs. */
static const gp__variants variants = {"GPUPORT_SCAN_KERNEL", {"lookback", "chunked"}};

/* The chunked variant; stream is begun (gp__primitive_begin) and n > 0. */
static gp_status scan_chunked(gp_stream *stream, gp_device *dev, const char *type_option, const char *name,
                              int exclusive, size_t size, size_t n, gp_view in, gp_view out)
{
    char options[64], fold[32], spine[32], chunks[32];
    snprintf(options, sizeof options, "%s -DGP_SCAN_CHUNKED=1", type_option);
    snprintf(fold, sizeof fold, "%s_fold", name);
    snprintf(spine, sizeof spine, "%s_spine", name);
    snprintf(chunks, sizeof chunks, "%s_chunks", name);
    gp_kernel *kf = NULL, *ks = NULL, *kc = NULL;
    gp_status st = gp__builtin_kernel(dev, gp__src_scan, options, fold, 5, &kf);
    if (st == GP_SUCCESS) st = gp__builtin_kernel(dev, gp__src_scan, options, spine, 2, &ks);
    if (st == GP_SUCCESS) st = gp__builtin_kernel(dev, gp__src_scan, options, chunks, 8, &kc);
    /* Four chunks per core, of at least 16 Ki elements. */
    uint64_t cores = dev->info.compute_units ? dev->info.compute_units : 1, per = (n + 4 * cores - 1) / (4 * cores);
    per = per < 16384 ? 16384 : per;
    uint32_t count = (uint32_t)((n + per - 1) / per);
    gp_buffer *partial = NULL;
    if (st == GP_SUCCESS) st = gp__scratch(stream, count * size, &partial);
    uint64_t in_off = in.offset, out_off = out.offset, nn = n;
    uint32_t excl = exclusive != 0;
    size_t global = count, one = 1;
    gp_arg fargs[] = {GP_BUFFER(in.buffer), GP_VALUE(in_off), GP_VALUE(nn), GP_VALUE(per), GP_BUFFER(partial)};
    gp_arg sargs[] = {GP_BUFFER(partial), GP_VALUE(count)};
    gp_arg cargs[] = {GP_BUFFER(in.buffer), GP_VALUE(in_off), GP_BUFFER(out.buffer), GP_VALUE(out_off),
                      GP_VALUE(nn),         GP_VALUE(per),    GP_VALUE(excl),        GP_BUFFER(partial)};
    if (st == GP_SUCCESS) st = gp_kernel_launch(stream, kf, 1, &global, &one, 5, fargs);
    if (st == GP_SUCCESS) st = gp_kernel_launch(stream, ks, 1, &one, &one, 2, sargs);
    if (st == GP_SUCCESS) st = gp_kernel_launch(stream, kc, 1, &global, &one, 8, cargs);
    return st;
}

gp_status gp_scan(gp_stream *stream, gp_scan_op op, int exclusive, gp_type type, size_t n, gp_view in, gp_view out)
{
    static const char fn[] = "gp_scan";
    static const char *const names[] = {"gp_scan_sum", "gp_scan_min", "gp_scan_max"};
    if ((unsigned)op > GP_SCAN_MAX) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_scan_op", fn, (int)op);
    if (!gp_type_size(type)) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_type", fn, (int)type);
    gp_status st = gp__check_view(in, type, n, fn, "in");
    if (st == GP_SUCCESS) st = gp__check_view(out, type, n, fn, "out");
    if (st != GP_SUCCESS) return st;
    gp_device *dev = in.buffer->dev;
    if (out.buffer->dev != dev)
        return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the out buffer is on %s:%zu, the in buffer on %s:%zu", fn,
                        out.buffer->dev->info.backend, out.buffer->dev->info.backend_index, dev->info.backend,
                        dev->info.backend_index);
    /* A tile reads all of its input before it writes: only the same range can be shared. */
    if (in.buffer == out.buffer && in.offset != out.offset && n && in.offset < out.offset + n &&
        out.offset < in.offset + n)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                        "%s: in [%zu, +%zu) and out [%zu, +%zu) overlap; out may be in only at the same offset", fn,
                        in.offset, n, out.offset, n);
    const char *type_option = gp__type_option(dev, type, fn);
    if (!type_option) return GP_ERROR_UNSUPPORTED;
    size_t size = gp_type_size(type);
    if ((st = gp__variant_check(&variants, fn)) != GP_SUCCESS) return st;
    if (gp__variant(dev, &variants)) {
        if ((st = gp__primitive_begin(&stream, dev, fn)) != GP_SUCCESS) return st;
        if (n > 0) st = scan_chunked(stream, dev, type_option, names[op], exclusive, size, n, in, out);
        gp__primitive_end(stream);
        return st;
    }
    int opencl = strcmp(dev->info.backend, "opencl") == 0, nvidia = strstr(dev->info.vendor, "NVIDIA") != NULL;
    gp_kernel *kernel = NULL;
    st = gp__builtin_kernel(dev, gp__src_scan, type_option, names[op], 9, &kernel);
    if (st == GP_SUCCESS) st = gp__primitive_begin(&stream, dev, fn);
    if (st != GP_SUCCESS || n == 0) {
        if (st == GP_SUCCESS) gp__primitive_end(stream);
        return st;
    }

    size_t limit = kernel->props.max_group_size, ls = GROUP;
    if (dev->info.max_work_group_size < limit) limit = dev->info.max_work_group_size;
    if (dev->info.max_work_item_sizes[0] < limit) limit = dev->info.max_work_item_sizes[0];
    while (ls > 1 && ls > limit) ls /= 2;
    if (ls < 64) { /* smaller tiles would need more than 1% of the input for their words */
        gp__primitive_end(stream);
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: %s:%zu allows work-groups of %zu; the scan needs 64", fn,
                        dev->info.backend, dev->info.backend_index, ls);
    }
    size_t tile = ls * ITEMS(size), tiles = n / tile + (n % tile != 0);
    if (tiles > UINT32_MAX) {
        gp__primitive_end(stream);
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %zu elements are more tiles than a 32-bit ticket counts", fn, n);
    }
    gp_buffer *sync = NULL;
    uint32_t stamp = 0;
    st = gp__sync(stream, STATE_HEAD + tiles * WORD_BYTES(size), &sync, &stamp);
    uint64_t in_off = in.offset, out_off = out.offset, count = n;
    uint32_t excl = exclusive != 0;
    /* NVIDIA's and AMD's GPUs start work-groups in id order, which CUDA and HIP scans rely on
     * too; no standard promises it, so every other device numbers tiles by a ticket. */
    int amd = strstr(dev->info.vendor, "Advanced Micro Devices") || strstr(dev->info.vendor, "AMD");
    int ordered = dev->info.type == GP_DEVICE_GPU && (!opencl || nvidia || amd);
    uint32_t ticket = !ordered;
    size_t global = tiles * ls;
    gp_arg args[] = {GP_BUFFER(in.buffer), GP_VALUE(in_off), GP_BUFFER(out.buffer), GP_VALUE(out_off),
                     GP_VALUE(count),      GP_VALUE(excl),   GP_VALUE(ticket),      GP_BUFFER(sync),
                     GP_VALUE(stamp)};
    if (st == GP_SUCCESS) st = gp_kernel_launch(stream, kernel, 1, &global, &ls, 9, args);
    gp__primitive_end(stream);
    return st;
}
