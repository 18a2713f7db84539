/* The stencil primitives: the kernels of kernels/stencil.gp, launched in tiles. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tile: a work-group of bx x by work-items, each taking vx neighbouring cells of a row (one
 * vector load of up to 16 bytes, where every row is aligned; else 1) and marching `cells` cells in
 * y (z in 3D). Compile-time options of the kernels. GPUs: a row of 64 work-items reads and writes
 * 1 KiB of f32; a work-item's two halo rows (planes) are mostly L1/L2 hits. Chosen on an H100 and
 * an H200 (ratios to cudaMemcpy D2D, f32): 2D 64x4x3 with 4 cells each, 0.93-0.99 on the H100 from
 * 4096^2 to 16384^2 and 0.95-0.96 on the H200 at 8192^2 (one cell each, as before: 0.85-0.94 and
 * 0.81-0.82; 64x4x2 is 1-2% faster on the H100 but 8% slower for 3x3 on the H200; longer marches
 * are slower; NVIDIA's OpenCL allows 256 work-items); 3D, before its march was a pipeline, 16x8x4
 * with 2 cells each, 0.82-0.88 on the H100 at 256^3 to 768^3 (4 cells: 0.77-0.88; one cell in
 * 32x8x4, as before: 0.80-0.83; at 512^3, against 0.90 for this one: 16x8x8 0.87, 16x8x16 0.74,
 * 32x8x4 0.88, and 0.82 with the march not unrolled, whose loads then wait on each other). There
 * Nsight Compute has the L2 94% busy and the L1 serving 56% of the loads: the neighbours' rows and
 * the march's end planes come again from the L2 (2.2 times the grid's sectors read from it).
 * Groups that march each plane through local memory, the halo read once per group (one barrier a
 * plane), ran 0.87 there, and 0.63 through NVIDIA's OpenCL, with longer marches slower still. Its
 * warps wait on loads (82% of Nsight Compute's samples), DRAM 78% busy, at 48 registers and 10
 * groups an SM; 12 or 16 groups (launch bounds: 40 or 32 registers) ran 0.86 and 0.73, 9 to 6 (a
 * local array of 24 to 36 KiB, which also takes the L1's room) 0.79-0.75. Since the 3D march is a
 * pipeline (kernels/stencil.gp), 16x8x4 with 4 cells each: 0.90-0.91 / 0.92 / 0.95 / 0.94 / 0.94
 * at 256^3 / 384^3 / 512^3 / 640^3 / 768^3 (2 cells: 0.89-0.90 / 0.89 / 0.93 / 0.92 / 0.91; the
 * same through NVIDIA's OpenCL within 1%); marches of 8 and 16 planes ran 0.81-0.88 and 0.74-0.78
 * at 512^3, and of 2 planes (16x8x2) 1-3% faster on the H100 from 384^3 to 768^3 but 1% slower at
 * 256^3 and up to 2% slower on the H200 (0.86 against 0.88 at 768^3 through CUDA, 1-2% faster
 * through its OpenCL). On the H200 the default ran 0.82-0.83 / 0.87 / 0.88 at 256^3 / 512^3 /
 * 768^3, and none of 13 other tiles beat it there (8x16x4 tied; 16x16x4, 16x4x4, 32x4x4, 32x8x4,
 * 64x2x4 and 64x4x4 of 4 cells, 16x8x3, x6 and x8, and 2 cells at 16x8x4, 32x4x4 and 32x8x4:
 * 0.72-0.82 / 0.79-0.86 / 0.79-0.87), nor did more groups an SM: launch bounds of 10 or 12 (48 or
 * 40 registers instead of 64, some spilled) ran 0.73-0.81 and 0.61-0.70 at 256^3 to 768^3. Since
 * each group chooses the inner path for all its work-items (kernels/stencil.gp): 0.95-0.97 on the
 * H100 and 0.86-0.89 on the H200 at 256^3 to 768^3 (NVIDIA's OpenCL 0.95-0.98 and 0.87-0.92);
 * since the march issues all its loads first through CUDA, 0.96-0.99 and 0.90-0.93. Rows that
 * are not 16-byte aligned take fewer cells each (below). The GPU shapes are also prebuilt for
 * CUDA and HIP: the top-level CMakeLists.txt lists the same options, so keep them in step. CPUs
 * (pocl): one row of work-items, each marching further. GPUPORT_STENCIL_TILE="bx,by,cells[,vx]"
 * overrides them, for tuning. */
typedef struct tile {
    unsigned bx, by, cells, vx;
} tile;
static const tile gpu_tile_2d = {64, 4, 3, 4}, gpu_tile_3d = {16, 8, 4, 4}, cpu_tile = {64, 1, 16, 4};

/* The kernels' variants: "tiled" above, and "rows" (-DSTENCIL_ROWS=1, kernels/stencil.gp), whose
 * work-groups are one work-item taking `rows` whole rows of the box, for CPUs. */
static const gp__variants variants = {"GPUPORT_STENCIL_KERNEL", {"tiled", "rows"}};
static const tile rows_tile = {1, 1, 32, 1};

static const char *const shape_names[] = {NULL, "5point", "3x3", "7point"};
static const unsigned weight_count[] = {0, 5, 9, 7};

/* The tile for the device: the default or the override, shrunk to what the device allows and
 * the views' alignment (align: the bytes, up to 16, that every row starts on). */
static gp_status choose_tile(const gp_device *dev, int rows, int three_d, size_t type_size, size_t align,
                             const char *fn, tile *t)
{
    const gp_device_info *info = &dev->info;
    *t = rows ? rows_tile : info->type == GP_DEVICE_CPU ? cpu_tile : three_d ? gpu_tile_3d : gpu_tile_2d;
    const char *env = getenv("GPUPORT_STENCIL_TILE");
    if (env && *env) {
        unsigned v[4] = {0, 0, 0, 4};
        const char *s = env;
        int ok = gp__parse_list(&s, ',', v, 3, 1024);
        if (ok && *s == ',') s++, ok = gp__parse_list(&s, ',', v + 3, 1, 4);
        if (!ok || *s || !v[0] || !v[1] || !v[2] || v[2] > 64 || (v[3] != 1 && v[3] != 2 && v[3] != 4))
            return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                            "%s: GPUPORT_STENCIL_TILE=\"%s\" is not \"bx,by,cells[,vx]\" (1 to 1024, 1 to 1024, 1 to "
                            "64, and 1, 2 or 4)",
                            fn, env);
        /* rows: the cells are rows per work-item */
        *t = rows ? (tile){1, 1, v[2], 1} : (tile){v[0], v[1], v[2], v[3]};
    }
    /* vx cells per work-item in x, up to 16 bytes, as one vector load where every row is aligned to
     * it. The 3D GPU tile keeps its rows of cells as wide where vx shrinks for alignment: bx grows as
     * much and by shrinks to keep the group's size. H100, f32: rows on 8 bytes (32x4x4, 2 cells each;
     * H200: 0.81 / 0.80) 0.88 at 510^3 and 0.87 at 766^3, against 0.72 / 0.69 at 16x8x4 and 0.80 /
     * 0.78 with 1 cell each; rows on 4 bytes (64x2x4, 1 cell; H200: 0.68) 0.80 at 513^3, against 0.75
     * at 16x8x4 (32x4x4 and 64x4x4 alike). Marches of 2 planes ran 0.63 and 0.49 there on the H200.
     * The 2D tile, 64 cells wide already, gained 1% or lost it at 256x1x3; there rows on 8 bytes (2
     * cells) ran 0.96-1.03 on the H100 and 0.89-0.96 on the H200 at 4094^2 to 16382^2, against
     * 0.85-0.94 and 0.77-0.83 with 1 cell. */
    while (t->vx > 1 && t->vx * type_size > 16) t->vx /= 2;
    int widen = three_d && !rows && !(env && *env) && info->type != GP_DEVICE_CPU;
    while (t->vx > 1 && t->vx * type_size > align) {
        t->vx /= 2;
        if (widen && t->by > 1) t->bx *= 2, t->by /= 2;
    }
    /* kernels/stencil.gp's ST_PRELOAD (CUDA, f32 rows read 16 bytes at a time) runs in groups
     * of 32 x 8: on an H200, 2026-11-27, two rounds, 0.92 / 0.95 / 0.96 / 0.94 at 256^3 / 384^3 /
     * 512^3 / 768^3 against 16 x 8's 0.90 / 0.90 / 0.92 / 0.93 (16x16x4 0.91 / 0.94 / 0.95,
     * 64x4x4 0.91-0.93 / 0.89 / 0.94, 32x8x3 0.85 / 0.89 / 0.89, 32x16x4 and 64x8x4 0.65-0.81).
     * Its pipeline (NVIDIA's OpenCL) ran 32 x 8 slower there, 0.85-0.86 / 0.90 against 0.86 /
     * 0.92 at 256^3 / 512^3, and so did rows on 8 or 4 bytes: 64x4x4 and 32x8x4 of 2 cells 0.80 /
     * 0.83 against 32x4x4's 0.85 at 510^3, 128x2x4 and 64x4x4 of 1 cell 0.62 / 0.64 against
     * 64x2x4's 0.67 at 513^3. */
    if (widen && t->vx == 4 && type_size == 4 && strcmp(info->backend, "cuda") == 0) t->bx = 32;
    while (t->by > 1 && ((size_t)t->bx * t->by > info->max_work_group_size || t->by > info->max_work_item_sizes[1]))
        t->by /= 2;
    while (t->bx > 1 && (t->bx > info->max_work_group_size || t->bx > info->max_work_item_sizes[0])) t->bx /= 2;
    return GP_SUCCESS;
}

static int overlap(gp_view a, gp_view b, size_t n)
{
    return a.buffer == b.buffer && a.offset < b.offset + n && b.offset < a.offset + n;
}

/* Everything a run needs checked before anything is queued: the first nwrites views are
 * written, and none of them may share an element with another view. */
static gp_status check(const char *fn, const gp_stencil *s, size_t nviews, const gp_view *views,
                       const char *const *names, size_t nwrites)
{
    if (!s) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: stencil is NULL", fn);
    if (s->shape < GP_STENCIL_5POINT || s->shape > GP_STENCIL_7POINT)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_stencil_shape", fn, (int)s->shape);
    if (s->type != GP_F32 && s->type != GP_F64)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: type %d; stencils are GP_F32 or GP_F64", fn, (int)s->type);
    if ((unsigned)s->boundary > GP_BOUNDARY_ZERO)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_boundary", fn, (int)s->boundary);
    if (!s->nx || !s->ny || !s->nz)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the grid is %zu x %zu x %zu; every side must be at least 1", fn,
                        s->nx, s->ny, s->nz);
    if (s->shape != GP_STENCIL_7POINT && s->nz != 1)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: nz is %zu; the 2D shape %s takes nz = 1", fn, s->nz,
                        shape_names[s->shape]);
    if (s->nx > UINT32_MAX || s->ny > UINT32_MAX || s->nz > UINT32_MAX)
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: the grid is %zu x %zu x %zu; each side must be below 2^32", fn,
                        s->nx, s->ny, s->nz);
    if (s->nx * s->ny > SIZE_MAX / s->nz)
        return gp__fail(GP_ERROR_OUT_OF_RANGE, "%s: %zu x %zu x %zu cells are more than any buffer holds", fn, s->nx,
                        s->ny, s->nz);
    size_t n = s->nx * s->ny * s->nz;
    for (size_t v = 0; v < nviews; v++) {
        gp_status st = gp__check_view(views[v], s->type, n, fn, names[v]);
        if (st != GP_SUCCESS) return st;
    }
    gp_device *dev = views[0].buffer->dev;
    for (size_t v = 1; v < nviews; v++)
        if (views[v].buffer->dev != dev)
            return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the %s buffer is on %s:%zu, %s on %s:%zu", fn, names[v],
                            views[v].buffer->dev->info.backend, views[v].buffer->dev->info.backend_index, names[0],
                            dev->info.backend, dev->info.backend_index);
    for (size_t w = 0; w < nwrites; w++)
        for (size_t v = 0; v < nviews; v++)
            if (v != w && overlap(views[w], views[v], n))
                return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                                "%s: %s (elements from %zu) and %s (elements from %zu) overlap in one buffer; a "
                                "stencil writes out of place",
                                fn, names[w], views[w].offset, names[v], views[v].offset);
    return GP_SUCCESS;
}

static size_t div_up(size_t a, size_t b) { return a / b + (a % b != 0); }

/* What a run launches: its tile, whether each group walks rows of a box (the rows variant), and
 * the groups; refused where one launch cannot hold them. */
typedef struct launch_plan {
    tile t;
    int rows;
    size_t gx, gy, groups;
    const char *type_option;
} launch_plan;

static gp_status plan(const char *fn, gp_device *dev, const gp_stencil *s, const size_t *origin, const size_t *extent,
                      gp_view a, gp_view b, gp_view source, launch_plan *l)
{
    int with_source = source.buffer != NULL;
    const char *type_option = gp__type_option(dev, s->type, fn);
    if (!type_option) return GP_ERROR_UNSUPPORTED;
    l->type_option = type_option;
    tile t;
    gp_status st = gp__variant_check(&variants, fn);
    int rows = gp__variant(dev, &variants);
    /* Vector loads need every row of every view on their size: all views, the row length and the
     * box's edge. Rows of f32 on 8 bytes, not 16 (nx = 2 mod 4), take 2 cells a work-item. */
    size_t esize = gp_type_size(s->type), align = 16;
    while (align > esize && !(s->nx * esize % align == 0 && origin[0] * esize % align == 0 &&
                              gp__view_aligned(a, s->type, align) && gp__view_aligned(b, s->type, align) &&
                              (!with_source || gp__view_aligned(source, s->type, align))))
        align /= 2;
    if (st == GP_SUCCESS) st = choose_tile(dev, rows, s->shape == GP_STENCIL_7POINT, esize, align, fn, &t);
    if (st != GP_SUCCESS) return st;

    /* All groups are numbered in dimension 0 (the kernel splits the number), each row of
     * work-items reaching its cells with 32-bit indices; rows: a group per t.cells rows. */
    int flat = s->shape != GP_STENCIL_7POINT;
    size_t gx = div_up(extent[0], (size_t)t.bx * t.vx), gy = div_up(extent[1], flat ? (size_t)t.by * t.cells : t.by);
    size_t gz = flat ? 1 : div_up(extent[2], t.cells), groups = gx * gy * gz;
    if (rows) gx = groups = div_up(extent[1] * extent[2], t.cells), gy = 1;
    if (gx * t.bx * t.vx > UINT32_MAX || gy * t.by * (flat ? t.cells : 1) > UINT32_MAX || gz * t.cells > UINT32_MAX ||
        groups > INT32_MAX / t.bx)
        return gp__fail(GP_ERROR_UNSUPPORTED,
                        "%s: the %zu x %zu x %zu grid needs %zu work-groups of %u x %u; one launch takes at most %u",
                        fn, s->nx, s->ny, s->nz, groups, t.bx, t.by, (unsigned)(INT32_MAX / t.bx));

    l->t = t;
    l->rows = rows;
    l->gx = gx, l->gy = gy, l->groups = groups;
    return GP_SUCCESS;
}

/* a -> b -> a ... for steps steps over the box from origin of extent cells (NULL: the whole
 * grid); names are b's, a's and source's in messages, and the first nwrites of b, a are
 * written. */
static gp_status run(const char *fn, gp_stream *stream, const gp_stencil *s, size_t steps, const size_t *origin,
                     const size_t *extent, gp_view a, gp_view b, gp_view source, const char *const *names,
                     size_t nwrites, gp_view *result)
{
    const gp_view views[3] = {b, a, source};
    int with_source = source.buffer != NULL;
    gp_status st = check(fn, s, 2 + (size_t)with_source, views, names, nwrites);
    if (st != GP_SUCCESS) return st;
    const size_t sides[3] = {s->nx, s->ny, s->nz}, whole[3] = {0, 0, 0};
    if (!origin) {
        origin = whole;
        extent = sides;
    }
    for (int d = 0; d < 3; d++)
        if (origin[d] > sides[d] || extent[d] > sides[d] - origin[d])
            return gp__fail(GP_ERROR_OUT_OF_RANGE,
                            "%s: the box from (%zu, %zu, %zu) of %zu x %zu x %zu cells leaves the %zu x %zu x %zu grid",
                            fn, origin[0], origin[1], origin[2], extent[0], extent[1], extent[2], s->nx, s->ny,
                            s->nz);
    if (!extent[0] || !extent[1] || !extent[2]) steps = 0;
    gp_device *dev = b.buffer->dev;
    launch_plan l = {.rows = 0};
    st = plan(fn, dev, s, origin, extent, a, b, source, &l);
    if (st != GP_SUCCESS) return st;
    tile t = l.t;
    int rows = l.rows;
    size_t gx = l.gx, gy = l.gy, groups = l.groups;
    const char *type_option = l.type_option;

    gp_kernel *k = NULL;
    if (steps > 0) {
        char options[112], name[32];
        snprintf(options, sizeof options, "%s -DSTENCIL_BX=%u -DSTENCIL_BY=%u -DSTENCIL_CELLS=%u -DSTENCIL_VX=%u%s",
                 type_option, t.bx, t.by, t.cells, t.vx, rows ? " -DSTENCIL_ROWS=1" : "");
        snprintf(name, sizeof name, "gp_stencil_%s%s", shape_names[s->shape], with_source ? "_src" : "");
        st = gp__builtin_kernel(dev, gp__src_stencil, options, name, 28, &k);
        if (st != GP_SUCCESS) return st;
    }
    st = gp__primitive_begin(&stream, dev, fn);
    if (st != GP_SUCCESS) return st;

    /* The grid's sides, the box's first cells and its ends, the group counts and the mode. */
    uint32_t u[12] = {(uint32_t)s->nx, (uint32_t)s->ny, (uint32_t)s->nz, (uint32_t)origin[0], (uint32_t)origin[1],
                      (uint32_t)origin[2], (uint32_t)(origin[0] + extent[0]), (uint32_t)(origin[1] + extent[1]),
                      (uint32_t)(origin[2] + extent[2]), (uint32_t)gx, (uint32_t)gy, (uint32_t)s->boundary};
    union {
        float f[10];
        double d[10];
    } w;
    gp_arg args[28];
    for (unsigned i = 0; i < 12; i++) args[6 + i] = GP_VALUE(u[i]);
    for (unsigned i = 0; i < 10; i++) {
        double v = i < weight_count[s->shape] ? s->weights[i] : i == 9 ? s->source_weight : 0;
        if (s->type == GP_F32) w.f[i] = (float)v;
        else w.d[i] = v;
        args[18 + i] = GP_VALUE_AS(s->type == GP_F32 ? (void *)&w.f[i] : (void *)&w.d[i], s->type);
    }
    uint64_t src_offset = with_source ? source.offset : a.offset;
    args[4] = GP_BUFFER(with_source ? source.buffer : a.buffer);
    args[5] = GP_VALUE(src_offset);
    size_t global[2] = {groups * t.bx, t.by}, local[2] = {t.bx, t.by};
    for (size_t i = 0; i < steps && st == GP_SUCCESS; i++) {
        gp_view in = i % 2 ? b : a, out = i % 2 ? a : b;
        uint64_t out_offset = out.offset, in_offset = in.offset;
        args[0] = GP_BUFFER(out.buffer);
        args[1] = GP_VALUE(out_offset);
        args[2] = GP_BUFFER(in.buffer);
        args[3] = GP_VALUE(in_offset);
        st = gp_kernel_launch(stream, k, 2, global, local, sizeof args / sizeof args[0], args);
    }
    gp__primitive_end(stream);
    if (st == GP_SUCCESS && result) *result = steps % 2 ? b : a;
    return st;
}

gp_status gp_stencil_apply(gp_stream *stream, const gp_stencil *stencil, gp_view out, gp_view in, gp_view source)
{
    static const char *const names[] = {"out", "in", "source"};
    return run("gp_stencil_apply", stream, stencil, 1, NULL, NULL, in, out, source, names, 1, NULL);
}

gp_status gp_stencil_apply_region(gp_stream *stream, const gp_stencil *stencil, const size_t origin[3],
                                  const size_t extent[3], gp_view out, gp_view in, gp_view source)
{
    static const char *const names[] = {"out", "in", "source"};
    if (!origin || !extent)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_stencil_apply_region: origin and extent must not be NULL");
    return run("gp_stencil_apply_region", stream, stencil, 1, origin, extent, in, out, source, names, 1, NULL);
}

gp_status gp_stencil_run(gp_stream *stream, const gp_stencil *stencil, size_t steps, gp_view a, gp_view b,
                         gp_view source, gp_view *result)
{
    static const char *const names[] = {"b", "a", "source"};
    return run("gp_stencil_run", stream, stencil, steps, NULL, NULL, a, b, source, names, 2, result);
}
