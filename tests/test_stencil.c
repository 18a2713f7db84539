/* Proves gp_stencil_apply and gp_stencil_run against plain C on the host: every shape, boundary
 * and type on edge-case grids, at offsets with the elements around out untouched, several
 * steps ping-ponged; gp_stencil_apply_region box by box against the whole grid, bit for bit;
 * and that bad input is refused and changes nothing. */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct grid {
    size_t nx, ny, nz;
} grid;

/* Rows of 4 and 8 cells (and their multiples) have 16-byte aligned rows, which the tiled variant
 * reads 16 bytes at a time (where the views are aligned too); f32 rows of 2 mod 4 cells, 8 bytes
 * at a time; the others cell by cell. The last 2D grid and the last three 3D ones end where a
 * group of the tiled variant ends (in 3D the tile of march_lengths below, the GPU tiles of 64 and
 * 128 cells by 8 rows, pocl's), with groups in between: the groups at the grid's ends take the
 * inner path with its ends, the others the one without. */
static const grid grids_2d[] = {{1, 1, 1},    {2, 2, 1},     {3, 3, 1},     {1, 7, 1},   {7, 1, 1},
                                {5, 3, 1},    {4, 6, 1},     {33, 17, 1},   {66, 37, 1}, {65, 130, 1},
                                {264, 40, 1}, {257, 129, 1}, {768, 40, 1}};
static const grid grids_3d[] = {{1, 1, 1},   {2, 2, 2},   {3, 3, 3},     {5, 3, 7},   {1, 4, 9},
                                {8, 3, 5},   {33, 9, 19}, {34, 10, 11},  {40, 37, 36}, {64, 20, 30},
                                {384, 24, 16}, {768, 3, 48}};

/* Each shape's neighbours, in the order of its weights. */
static const int offsets[4][9][3] = {
    {{0}},
    {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}},
    {{-1, -1, 0}, {0, -1, 0}, {1, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {-1, 1, 0}, {0, 1, 0}, {1, 1, 0}},
    {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}},
};
static const unsigned nweights[4] = {0, 5, 9, 7};
static const char *const shape_names[] = {"?", "5point", "3x3", "7point"};
static const char *const boundary_names[] = {"fixed", "clamp", "zero"};

#define GUARD 7 /* elements on each side of out that must keep their fill */
static const unsigned char fill = 0xa5;

static size_t cells(const gp_stencil *s) { return s->nx * s->ny * s->nz; }

static double to_type(gp_type t, double v) { return t == GP_F32 ? (double)(float)v : v; }

/* ---- The host reference ---------------------------------------------------------------------- */

/* A value as the device holds it, and the bound on how far the device's value may be from it. */
typedef struct cell {
    long double v, err;
} cell;

static int is_edge(const gp_stencil *s, size_t x, size_t y, size_t z)
{
    return x == 0 || x + 1 == s->nx || y == 0 || y + 1 == s->ny ||
           (s->shape == GP_STENCIL_7POINT && (z == 0 || z + 1 == s->nz));
}

/* One application, in long double, with the weights rounded to the type as the device rounds
 * them. The device's own rounding: any order of m = terms multiplies and adds, fused or not,
 * is within gamma(m) = m u / (1 - m u) of the exact sum, relative to sum |w_i x_i| (Higham,
 * 3.1); its inputs are each within err of the host's, which adds sum |w_i| err_i and widens
 * the sum of magnitudes. u also covers the host's own rounding in long double. */
static void host_step(const gp_stencil *s, const cell *in, const double *src, cell *out)
{
    const long double u = (s->type == GP_F32 ? FLT_EPSILON : DBL_EPSILON) / 2 + LDBL_EPSILON;
    const unsigned m = nweights[s->shape] + (src != NULL);
    const long double gamma = m * u / (1 - m * u);
    long double w[10];
    for (unsigned i = 0; i < nweights[s->shape]; i++) w[i] = to_type(s->type, s->weights[i]);
    const long double sw = to_type(s->type, s->source_weight);
    for (size_t z = 0; z < s->nz; z++)
        for (size_t y = 0; y < s->ny; y++)
            for (size_t x = 0; x < s->nx; x++) {
                size_t c = x + s->nx * (y + s->ny * z);
                if (s->boundary == GP_BOUNDARY_FIXED && is_edge(s, x, y, z)) {
                    out[c] = in[c];
                    continue;
                }
                long double sum = 0, mag = 0, prop = 0;
                for (unsigned i = 0; i < nweights[s->shape]; i++) {
                    long long nx = (long long)x + offsets[s->shape][i][0], ny = (long long)y + offsets[s->shape][i][1],
                              nz = (long long)z + offsets[s->shape][i][2];
                    int off = nx < 0 || ny < 0 || nz < 0 || nx >= (long long)s->nx || ny >= (long long)s->ny ||
                              nz >= (long long)s->nz;
                    if (off && s->boundary == GP_BOUNDARY_ZERO) continue;
                    nx = nx < 0 ? 0 : nx >= (long long)s->nx ? (long long)s->nx - 1 : nx;
                    ny = ny < 0 ? 0 : ny >= (long long)s->ny ? (long long)s->ny - 1 : ny;
                    nz = nz < 0 ? 0 : nz >= (long long)s->nz ? (long long)s->nz - 1 : nz;
                    const cell *n = &in[(size_t)nx + s->nx * ((size_t)ny + s->ny * (size_t)nz)];
                    sum += w[i] * n->v;
                    mag += fabsl(w[i]) * (fabsl(n->v) + n->err);
                    prop += fabsl(w[i]) * n->err;
                }
                if (src) {
                    sum += sw * src[c];
                    mag += fabsl(sw * src[c]);
                }
                out[c].v = sum;
                out[c].err = prop + gamma * mag;
            }
}

/* ---- Device data ------------------------------------------------------------------------------ */

static void put(gp_type t, void *p, size_t i, double v)
{
    if (t == GP_F32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

static double get(gp_type t, const void *p, size_t i)
{
    return t == GP_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static double uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (tst_random_u32(state) / 4294967296.0);
}

/* n values in [-1, 1] exactly representable in the type. */
static double *random_grid(gp_type t, size_t n, uint64_t seed)
{
    double *h = tst_malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = to_type(t, uniform(&seed, -1, 1));
    return h;
}

/* Writes n host values into buffer b from element offset off, as the type. */
static void upload(gp_type t, gp_buffer *b, size_t off, const double *h, size_t n)
{
    size_t size = gp_type_size(t);
    void *tmp = tst_malloc(n * size);
    for (size_t i = 0; i < n; i++) put(t, tmp, i, h[i]);
    GP_OK(gp_buffer_write(NULL, b, off * size, tmp, n * size));
    free(tmp);
}

static void expect_fill(const unsigned char *got, size_t from, size_t to, size_t size, const char *what)
{
    for (size_t i = from * size; i < to * size; i++)
        if (got[i] != fill) fail_msg("%s: element %zu was written", what, i / size);
}

/* The grid from element off of got against want, within each cell's bound (exactly where the
 * bound is 0: FIXED edges, no steps). */
static void check_cells(const gp_stencil *s, const unsigned char *got, size_t off, const cell *want,
                        const char *what)
{
    for (size_t c = 0; c < cells(s); c++) {
        double d = get(s->type, got, off + c);
        if (!(fabsl((long double)d - want[c].v) <= want[c].err))
            fail_msg("%s %s %s %s %zux%zux%zu: cell (%zu, %zu, %zu) = %.17g, expected %.17Lg within %.3Lg", what,
                     s->type == GP_F32 ? "f32" : "f64", shape_names[s->shape], boundary_names[s->boundary], s->nx,
                     s->ny, s->nz, c % s->nx, c / s->nx % s->ny, c / s->nx / s->ny, d, want[c].v, want[c].err);
    }
}

static cell *exact_cells(const double *h, size_t n)
{
    cell *c = tst_malloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++) c[i] = (cell){h[i], 0};
    return c;
}

/* ---- One application, checked ------------------------------------------------------------- */

/* in at element 3 (aligned: 0) of one buffer with source after it (two read-only views may
 * share a buffer), out at GUARD (aligned: 8) of another buffer with GUARD elements of fill on
 * each side; in must not change. Aligned: every view starts on 16 bytes. */
static void check_apply(const gp_stencil *s, int with_source, int aligned, uint64_t seed)
{
    const gp_type t = s->type;
    const size_t n = cells(s), size = gp_type_size(t), io = aligned ? 0 : 3;
    const size_t so = aligned ? (n + 3) / 4 * 4 : io + n + 2, total_in = so + n + 1;
    const size_t oo = aligned ? 8 : GUARD, total_out = oo + n + GUARD;
    double *hin = random_grid(t, total_in, seed);
    gp_buffer *bin = tst_buffer(GP_MEMORY_DEVICE, total_in * size), *bout = tst_buffer(GP_MEMORY_DEVICE, total_out * size);
    upload(t, bin, 0, hin, total_in);
    GP_OK(gp_buffer_fill(NULL, bout, 0, total_out * size, &fill, 1));
    gp_view source = with_source ? GP_VIEW_AT(bin, so) : GP_VIEW(NULL);
    GP_OK(gp_stencil_apply(NULL, s, GP_VIEW_AT(bout, oo), GP_VIEW_AT(bin, io), source));

    cell *in = exact_cells(hin + io, n), *want = tst_malloc(n * sizeof *want);
    host_step(s, in, with_source ? hin + so : NULL, want);
    unsigned char *got = tst_malloc(total_out * size);
    GP_OK(gp_buffer_read(NULL, bout, 0, got, total_out * size));
    expect_fill(got, 0, oo, size, "before out");
    expect_fill(got, oo + n, total_out, size, "after out");
    check_cells(s, got, oo, want, with_source ? "apply with source" : "apply");
    free(got);

    void *expect = tst_malloc(total_in * size);
    for (size_t i = 0; i < total_in; i++) put(t, expect, i, hin[i]);
    tst_check_buffer(bin, expect, total_in * size);
    free(expect);
    free(in);
    free(want);
    free(hin);
    GP_OK(gp_buffer_destroy(bin));
    GP_OK(gp_buffer_destroy(bout));
}

static void random_weights(gp_stencil *s, uint64_t *state)
{
    for (unsigned i = 0; i < 9; i++) s->weights[i] = i < nweights[s->shape] ? uniform(state, -1, 1) : 0;
    s->source_weight = uniform(state, -1, 1);
}

static void skip_without_fp64(gp_type t)
{
    if (t == GP_F64 && !tst_info.fp64) {
        print_message("skipped: %s has no double precision\n", tst_info.name);
        skip();
    }
}

/* Every boundary on every grid of the shapes' dimension, with random weights, with and without
 * a source, with the views aligned and not. */
static void every_case(gp_type t, int three_d)
{
    skip_without_fp64(t);
    const grid *grids = three_d ? grids_3d : grids_2d;
    size_t ngrids = three_d ? sizeof grids_3d / sizeof grids_3d[0] : sizeof grids_2d / sizeof grids_2d[0];
    uint64_t state = 11 + (uint64_t)t;
    for (int shape = three_d ? GP_STENCIL_7POINT : GP_STENCIL_5POINT; shape <= (three_d ? 3 : 2); shape++)
        for (int b = GP_BOUNDARY_FIXED; b <= GP_BOUNDARY_ZERO; b++)
            for (size_t g = 0; g < ngrids; g++)
                for (int variant = 0; variant < 4; variant++) {
                    gp_stencil s = {(gp_stencil_shape)shape, t, (gp_boundary)b, grids[g].nx, grids[g].ny, grids[g].nz,
                                    {0}, 0};
                    random_weights(&s, &state);
                    check_apply(&s, variant & 1, variant >> 1, state);
                }
}

static void stencil_2d_f32(void **state) { (void)state; every_case(GP_F32, 0); }
static void stencil_2d_f64(void **state) { (void)state; every_case(GP_F64, 0); }
static void stencil_3d_f32(void **state) { (void)state; every_case(GP_F32, 1); }
static void stencil_3d_f64(void **state) { (void)state; every_case(GP_F64, 1); }

/* Grids of many work-groups in every direction, aligned: the Jacobi step with its source, the
 * 3x3 and the 7-point. */
static void stencil_large(void **state)
{
    (void)state;
    const double h = 1.0 / 999;
    gp_stencil jacobi = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_FIXED, 1000, 700, 1, {0, .25, .25, .25, .25},
                         h * h / 4};
    check_apply(&jacobi, 1, 1, 21);
    uint64_t st = 22;
    gp_stencil box = {GP_STENCIL_3X3, GP_F32, GP_BOUNDARY_ZERO, 1000, 700, 1, {0}, 0};
    random_weights(&box, &st);
    check_apply(&box, 0, 1, 23);
    gp_stencil cube = {GP_STENCIL_7POINT, tst_info.fp64 ? GP_F64 : GP_F32, GP_BOUNDARY_CLAMP, 130, 70, 45, {0}, 0};
    random_weights(&cube, &st);
    check_apply(&cube, 1, 1, 24);
    cube.nx = 132; /* f32 rows on 16 bytes */
    check_apply(&cube, 0, 1, 25);
}

/* ---- Several steps ------------------------------------------------------------------------ */

/* a at element 1 and b after it, GUARD apart, in one buffer; the host iterates alongside with
 * its error bounds, and the result must be in the view gp_stencil_run names. */
static void check_run(const gp_stencil *s, int with_source, size_t steps, uint64_t seed)
{
    const gp_type t = s->type;
    const size_t n = cells(s), size = gp_type_size(t), ao = 1, bo = ao + n + GUARD, total = bo + n + GUARD;
    double *ha = random_grid(t, n, seed), *hsrc = with_source ? random_grid(t, n, seed + 1) : NULL;
    gp_buffer *buf = tst_buffer(GP_MEMORY_DEVICE, total * size), *bsrc = NULL;
    GP_OK(gp_buffer_fill(NULL, buf, 0, total * size, &fill, 1));
    upload(t, buf, ao, ha, n);
    if (with_source) {
        bsrc = tst_buffer(GP_MEMORY_DEVICE, n * size);
        upload(t, bsrc, 0, hsrc, n);
    }
    gp_view a = GP_VIEW_AT(buf, ao), b = GP_VIEW_AT(buf, bo), result = GP_VIEW_AT(NULL, 12345);
    GP_OK(gp_stencil_run(NULL, s, steps, a, b, with_source ? GP_VIEW(bsrc) : GP_VIEW(NULL), &result));
    gp_view expect = steps % 2 ? b : a;
    if (result.buffer != expect.buffer || result.offset != expect.offset)
        fail_msg("%zu steps: the result is at element %zu, expected %zu", steps, result.offset, expect.offset);

    cell *u = exact_cells(ha, n), *v = tst_malloc(n * sizeof *v);
    for (size_t i = 0; i < steps; i++) {
        host_step(s, u, hsrc, v);
        cell *tmp = u;
        u = v;
        v = tmp;
    }
    /* Around a and b the fill stays, and with no steps so does b; a is then the result. */
    unsigned char *got = tst_malloc(total * size);
    GP_OK(gp_buffer_read(NULL, buf, 0, got, total * size));
    expect_fill(got, 0, ao, size, "before a");
    expect_fill(got, ao + n, bo, size, "between a and b");
    expect_fill(got, bo + n, total, size, "after b");
    if (steps == 0) expect_fill(got, bo, bo + n, size, "b after 0 steps");
    char what[64];
    snprintf(what, sizeof what, "run of %zu steps", steps);
    check_cells(s, got, expect.offset, u, what);
    free(got);
    free(u);
    free(v);
    free(ha);
    free(hsrc);
    GP_OK(gp_buffer_destroy(buf));
    GP_OK(gp_buffer_destroy(bsrc));
}

static void stencil_run(void **state)
{
    (void)state;
    static const size_t steps[] = {0, 1, 2, 5};
    const double h = 1.0 / 36;
    gp_stencil jacobi = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_FIXED, 37, 23, 1, {0, .25, .25, .25, .25}, h * h / 4};
    uint64_t st = 31;
    gp_stencil box = {GP_STENCIL_3X3, tst_info.fp64 ? GP_F64 : GP_F32, GP_BOUNDARY_ZERO, 19, 26, 1, {0}, 0};
    random_weights(&box, &st);
    gp_stencil cube = {GP_STENCIL_7POINT, GP_F32, GP_BOUNDARY_CLAMP, 9, 8, 7, {0}, 0};
    random_weights(&cube, &st);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        check_run(&jacobi, 1, steps[i], 32);
        check_run(&box, 0, steps[i], 33);
        check_run(&cube, 1, steps[i], 34);
    }
}

/* ---- Boxes ---------------------------------------------------------------------------------- */

/* The grid cut at random places along each axis into up to 4 x 4 x 4 boxes, each applied with
 * gp_stencil_apply_region, gives gp_stencil_apply's grid bit for bit (as docs/primitives.md
 * promises); a box alone leaves every cell outside it as it was. */
static void check_boxes(const gp_stencil *s, int with_source, uint64_t seed)
{
    const gp_type t = s->type;
    const size_t n = cells(s), size = gp_type_size(t), sides[3] = {s->nx, s->ny, s->nz};
    double *hin = random_grid(t, 2 * n, seed);
    gp_buffer *bin = tst_buffer(GP_MEMORY_DEVICE, 2 * n * size), *whole = tst_buffer(GP_MEMORY_DEVICE, n * size);
    gp_buffer *boxes = tst_buffer(GP_MEMORY_DEVICE, n * size);
    upload(t, bin, 0, hin, 2 * n);
    gp_view in = GP_VIEW(bin), source = with_source ? GP_VIEW_AT(bin, n) : GP_VIEW(NULL);
    GP_OK(gp_stencil_apply(NULL, s, GP_VIEW(whole), in, source));
    GP_OK(gp_buffer_fill(NULL, boxes, 0, n * size, &fill, 1));

    /* Cut points: 0, up to three random ones, the side. */
    size_t cuts[3][5], ncuts[3];
    for (int d = 0; d < 3; d++) {
        ncuts[d] = 0;
        cuts[d][ncuts[d]++] = 0;
        for (size_t c = 1 + tst_random_u32(&seed) % 3; c > 0; c--) {
            size_t at = tst_random_u32(&seed) % (sides[d] + 1);
            if (at > cuts[d][ncuts[d] - 1]) cuts[d][ncuts[d]++] = at;
        }
        if (cuts[d][ncuts[d] - 1] != sides[d]) cuts[d][ncuts[d]++] = sides[d];
    }
    for (size_t i = 0; i + 1 < ncuts[0]; i++)
        for (size_t j = 0; j + 1 < ncuts[1]; j++)
            for (size_t k = 0; k + 1 < ncuts[2]; k++) {
                size_t origin[3] = {cuts[0][i], cuts[1][j], cuts[2][k]};
                size_t extent[3] = {cuts[0][i + 1] - origin[0], cuts[1][j + 1] - origin[1], cuts[2][k + 1] - origin[2]};
                GP_OK(gp_stencil_apply_region(NULL, s, origin, extent, GP_VIEW(boxes), in, source));
            }
    unsigned char *want = tst_malloc(n * size), *got = tst_malloc(n * size);
    GP_OK(gp_buffer_read(NULL, whole, 0, want, n * size));
    GP_OK(gp_buffer_read(NULL, boxes, 0, got, n * size));
    for (size_t c = 0; c < n; c++)
        if (memcmp(got + c * size, want + c * size, size))
            fail_msg("%s %s %s %zux%zux%zu in boxes: cell (%zu, %zu, %zu) = %.17g, the whole grid's %.17g",
                     t == GP_F32 ? "f32" : "f64", shape_names[s->shape], boundary_names[s->boundary], s->nx, s->ny,
                     s->nz, c % s->nx, c / s->nx % s->ny, c / s->nx / s->ny, get(t, got, c), get(t, want, c));

    /* One box in the middle: nothing outside it written. */
    size_t origin[3], extent[3];
    for (int d = 0; d < 3; d++) {
        origin[d] = sides[d] / 3;
        extent[d] = sides[d] - origin[d] > 1 ? (sides[d] - origin[d]) / 2 : sides[d] - origin[d];
    }
    GP_OK(gp_buffer_fill(NULL, boxes, 0, n * size, &fill, 1));
    GP_OK(gp_stencil_apply_region(NULL, s, origin, extent, GP_VIEW(boxes), in, source));
    GP_OK(gp_buffer_read(NULL, boxes, 0, got, n * size));
    for (size_t c = 0; c < n; c++) {
        size_t at[3] = {c % s->nx, c / s->nx % s->ny, c / s->nx / s->ny};
        int inside = 1;
        for (int d = 0; d < 3; d++) inside &= at[d] >= origin[d] && at[d] < origin[d] + extent[d];
        if (inside ? memcmp(got + c * size, want + c * size, size) != 0 : got[c * size] != fill)
            fail_msg("one box from (%zu, %zu, %zu) of %zu x %zu x %zu: cell (%zu, %zu, %zu) %s", origin[0], origin[1],
                     origin[2], extent[0], extent[1], extent[2], at[0], at[1], at[2],
                     inside ? "differs from the whole grid's" : "was written");
    }
    free(want);
    free(got);
    free(hin);
    GP_OK(gp_buffer_destroy(bin));
    GP_OK(gp_buffer_destroy(whole));
    GP_OK(gp_buffer_destroy(boxes));
}

static void stencil_regions(void **state)
{
    (void)state;
    static const grid grids[] = {{1, 1, 1}, {3, 3, 1}, {2, 9, 1}, {72, 45, 1}, {3, 3, 3}, {36, 21, 27}};
    uint64_t st = 51;
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (int shape = GP_STENCIL_5POINT; shape <= GP_STENCIL_7POINT; shape++) {
            if (grids[g].nz > 1 && shape != GP_STENCIL_7POINT) continue; /* 2D shapes take nz = 1 */
            for (int b = GP_BOUNDARY_FIXED; b <= GP_BOUNDARY_ZERO; b++)
                for (int t = GP_F32; t <= (tst_info.fp64 ? GP_F64 : GP_F32); t++)
                    for (int trial = 0; trial < 3; trial++) {
                        gp_stencil s = {(gp_stencil_shape)shape, (gp_type)t, (gp_boundary)b, grids[g].nx,
                                        grids[g].ny, grids[g].nz, {0}, 0};
                        random_weights(&s, &st);
                        check_boxes(&s, trial == 1, st);
                    }
        }
}

/* The kernel variant the device does not run by default (kernels/stencil.gp: tiled on GPUs,
 * rows on CPUs) through the same checks; an unknown variant is refused. */
static void stencil_other_kernel(void **state)
{
    char *saved = tst_other_variant("GPUPORT_STENCIL_KERNEL", "tiled", "rows");
    stencil_2d_f32(state);
    stencil_3d_f32(state);
    if (tst_info.fp64) {
        stencil_2d_f64(state);
        stencil_3d_f64(state);
    }
    stencil_large(state);
    stencil_run(state);
    stencil_regions(state);
    setenv("GPUPORT_STENCIL_KERNEL", "blocked", 1);
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 64 * 4);
    const gp_stencil s = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_FIXED, 8, 4, 1, {0, .25, .25, .25, .25}, 0};
    GP_EXPECT(gp_stencil_apply(NULL, &s, GP_VIEW(b), GP_VIEW_AT(b, 32), GP_VIEW(NULL)), GP_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(gp_last_error(), "tiled or rows"));
    tst_restore_env("GPUPORT_STENCIL_KERNEL", saved);
    GP_OK(gp_buffer_destroy(b));
}

/* The tiled variant's 3D march takes four planes a step (kernels/stencil.gp): marches of other
 * lengths, set through GPUPORT_STENCIL_TILE, leave a step part done; one plane a work-item, and
 * vectors of 4 and 2 cells, on every 3D case. */
static void stencil_march_lengths(void **state)
{
    (void)state;
    static const char *const tiles[] = {"8,2,6,4", "4,4,1,2", "8,4,7,1"};
    char *kernel = tst_save_env("GPUPORT_STENCIL_KERNEL"), *tile = tst_save_env("GPUPORT_STENCIL_TILE");
    setenv("GPUPORT_STENCIL_KERNEL", "tiled", 1);
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        setenv("GPUPORT_STENCIL_TILE", tiles[i], 1);
        every_case(GP_F32, 1);
    }
    tst_restore_env("GPUPORT_STENCIL_KERNEL", kernel);
    tst_restore_env("GPUPORT_STENCIL_TILE", tile);
}

/* ---- Bad input ------------------------------------------------------------------------------ */

static void stencil_bad_input(void **state)
{
    (void)state;
    enum { NX = 8, NY = 4, N = NX * NY };
    gp_buffer *bi = tst_buffer(GP_MEMORY_DEVICE, 2 * N * 4), *bo = tst_buffer(GP_MEMORY_DEVICE, 2 * N * 4);
    unsigned char before[2 * N * 4];
    tst_random_bytes(before, sizeof before, 41);
    GP_OK(gp_buffer_write(NULL, bo, 0, before, sizeof before));
    GP_OK(gp_buffer_write(NULL, bi, 0, before, sizeof before));
    const gp_stencil good = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_CLAMP, NX, NY, 1, {1, 1, 1, 1, 1}, 1};
    gp_view in = GP_VIEW(bi), out = GP_VIEW(bo), none = GP_VIEW(NULL);
    gp_stencil s;
#define BAD(field, value, status)                                                                  \
    do {                                                                                           \
        s = good;                                                                                  \
        s.field = value;                                                                           \
        GP_EXPECT(gp_stencil_apply(NULL, &s, out, in, none), status);                              \
        GP_EXPECT(gp_stencil_run(NULL, &s, 1, in, out, none, &result), status);                    \
    } while (0)
    gp_view result = GP_VIEW_AT(NULL, 77);

    GP_EXPECT(gp_stencil_apply(NULL, NULL, out, in, none), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_run(NULL, NULL, 1, in, out, none, &result), GP_ERROR_INVALID_ARGUMENT);
    BAD(shape, (gp_stencil_shape)0, GP_ERROR_INVALID_ARGUMENT);
    BAD(shape, (gp_stencil_shape)4, GP_ERROR_INVALID_ARGUMENT);
    BAD(type, GP_I32, GP_ERROR_INVALID_ARGUMENT);
    BAD(type, (gp_type)0, GP_ERROR_INVALID_ARGUMENT);
    BAD(type, (gp_type)7, GP_ERROR_INVALID_ARGUMENT);
    BAD(boundary, (gp_boundary)3, GP_ERROR_INVALID_ARGUMENT);
    BAD(boundary, (gp_boundary)-1, GP_ERROR_INVALID_ARGUMENT);
    BAD(nx, 0, GP_ERROR_INVALID_ARGUMENT);
    BAD(ny, 0, GP_ERROR_INVALID_ARGUMENT);
    BAD(nz, 0, GP_ERROR_INVALID_ARGUMENT);
    BAD(nz, 2, GP_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(gp_last_error(), "nz"));
    BAD(nx, (size_t)1 << 32, GP_ERROR_UNSUPPORTED);
    BAD(ny, 2 * N + 1, GP_ERROR_OUT_OF_RANGE); /* more cells than the buffers hold */

    /* Views: no buffer, out of range, and overlaps of a written view with another. */
    GP_EXPECT(gp_stencil_apply(NULL, &good, none, in, none), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_stencil_apply(NULL, &good, out, none, none), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_stencil_apply(NULL, &good, GP_VIEW_AT(bo, N + 1), in, none), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_stencil_apply(NULL, &good, out, GP_VIEW_AT(bi, SIZE_MAX), none), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_stencil_apply(NULL, &good, out, in, GP_VIEW_AT(bi, N + 1)), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_stencil_run(NULL, &good, 2, in, GP_VIEW_AT(bo, N + 1), none, &result), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_stencil_apply(NULL, &good, out, out, none), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_apply(NULL, &good, out, GP_VIEW_AT(bo, N - 1), none), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_apply(NULL, &good, GP_VIEW_AT(bo, 1), in, out), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_run(NULL, &good, 3, out, GP_VIEW_AT(bo, N - 1), none, &result), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_run(NULL, &good, 3, in, out, GP_VIEW_AT(bi, 5), &result), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_run(NULL, &good, 0, in, out, GP_VIEW_AT(bo, N - 1), &result), GP_ERROR_INVALID_ARGUMENT);
    /* Boxes: NULL, leaving the grid (also by wrapping), and 0 cells, which write nothing. */
    size_t origin[3] = {0, 0, 0}, extent[3] = {NX, NY, 1};
    GP_EXPECT(gp_stencil_apply_region(NULL, &good, NULL, extent, out, in, none), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stencil_apply_region(NULL, &good, origin, NULL, out, in, none), GP_ERROR_INVALID_ARGUMENT);
    static const size_t boxes[][6] = {{1, 0, 0, NX, NY, 1}, {0, 2, 0, 1, NY - 1, 1}, {0, 0, 1, 1, 1, 1},
                                      {0, 0, 0, 1, 1, 2},   {NX, 0, 0, 1, 1, 1},     {SIZE_MAX, 0, 0, 2, 1, 1},
                                      {1, 0, 0, SIZE_MAX, 1, 1}};
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++)
        GP_EXPECT(gp_stencil_apply_region(NULL, &good, boxes[i], boxes[i] + 3, out, in, none), GP_ERROR_OUT_OF_RANGE);
    extent[1] = 0;
    GP_OK(gp_stencil_apply_region(NULL, &good, origin, extent, out, in, none));
    assert_null(result.buffer);
    assert_int_equal(result.offset, 77);
    tst_check_buffer(bo, before, sizeof before);
    tst_check_buffer(bi, before, sizeof before);

    /* Two read-only views may share elements; 0 steps run nothing. */
    GP_OK(gp_stencil_apply(NULL, &good, out, in, in));
    GP_OK(gp_stencil_run(NULL, &good, 0, in, out, GP_VIEW_AT(bi, N), &result));
    assert_ptr_equal(result.buffer, bi);
    GP_OK(gp_stencil_run(NULL, &good, 0, in, out, none, NULL));

    /* Objects of another device. */
    for (size_t d = 0; d < tst_all_count; d++) {
        if (tst_all_devices[d] == tst_dev) continue;
        gp_buffer *o = NULL;
        gp_stream *os = NULL;
        GP_OK(gp_buffer_create(tst_all_devices[d], GP_MEMORY_DEVICE, N * 4, &o));
        GP_OK(gp_stream_get_default(tst_all_devices[d], &os));
        GP_EXPECT(gp_stencil_apply(NULL, &good, out, GP_VIEW(o), none), GP_ERROR_DEVICE_MISMATCH);
        GP_EXPECT(gp_stencil_apply(NULL, &good, out, in, GP_VIEW(o)), GP_ERROR_DEVICE_MISMATCH);
        GP_EXPECT(gp_stencil_run(NULL, &good, 1, in, GP_VIEW(o), none, &result), GP_ERROR_DEVICE_MISMATCH);
        GP_EXPECT(gp_stencil_apply(os, &good, out, in, none), GP_ERROR_DEVICE_MISMATCH);
        GP_OK(gp_buffer_destroy(o));
        break;
    }
#undef BAD

    /* GPUPORT_STENCIL_TILE out of range, including numbers that would wrap to a valid 1, and
     * cells per vector load other than 1, 2 or 4. */
    static const char *const tiles[] = {"4294967297,1,1", "1,4294967297,1", "0,1,1",    "32,8",       "32,8,8,",
                                        "32,8,65",        "32,8,8x",        " 32,8,8",  "32,-8,8",    "32,8,8,3",
                                        "32,8,8,0",       "32,8,8,8",       "32,8,8,4,", "32,8,8,4,4", "18446744073709551617,1,1"};
    GP_OK(gp_buffer_read(NULL, bo, 0, before, sizeof before));
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        setenv("GPUPORT_STENCIL_TILE", tiles[i], 1);
        GP_EXPECT(gp_stencil_apply(NULL, &good, out, in, none), GP_ERROR_INVALID_ARGUMENT);
        if (!strstr(gp_last_error(), "\"bx,by,cells[,vx]\""))
            fail_msg("GPUPORT_STENCIL_TILE=\"%s\": the message does not give the format: %s", tiles[i], gp_last_error());
    }
    unsetenv("GPUPORT_STENCIL_TILE");
    tst_check_buffer(bo, before, sizeof before);
    GP_OK(gp_buffer_destroy(bi));
    GP_OK(gp_buffer_destroy(bo));
}

/* f64 where the device has no double precision: refused, not computed in single. */
static void stencil_no_fp64(void **state)
{
    (void)state;
    if (tst_info.fp64) {
        print_message("skipped: %s has double precision\n", tst_info.name);
        skip();
    }
    gp_buffer *bi = tst_buffer(GP_MEMORY_DEVICE, 64), *bo = tst_buffer(GP_MEMORY_DEVICE, 64);
    gp_stencil s = {GP_STENCIL_5POINT, GP_F64, GP_BOUNDARY_ZERO, 2, 2, 1, {1, 1, 1, 1, 1}, 0};
    GP_EXPECT(gp_stencil_apply(NULL, &s, GP_VIEW(bo), GP_VIEW(bi), GP_VIEW(NULL)), GP_ERROR_UNSUPPORTED);
    GP_OK(gp_buffer_destroy(bi));
    GP_OK(gp_buffer_destroy(bo));
}

const struct CMUnitTest tst_stencil_tests[] = {
    cmocka_unit_test(stencil_2d_f32),    cmocka_unit_test(stencil_2d_f64),      cmocka_unit_test(stencil_3d_f32),
    cmocka_unit_test(stencil_3d_f64),    cmocka_unit_test(stencil_large),       cmocka_unit_test(stencil_run),
    cmocka_unit_test(stencil_regions),   cmocka_unit_test(stencil_bad_input),   cmocka_unit_test(stencil_no_fp64),
    cmocka_unit_test(stencil_other_kernel), cmocka_unit_test(stencil_march_lengths),
};
const size_t tst_stencil_tests_count = sizeof tst_stencil_tests / sizeof tst_stencil_tests[0];
