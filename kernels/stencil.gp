/* Built-in stencils, out of place: gp_stencil_<shape>[_src](out, out offset, in, in offset, src,
 * src offset, nx, ny, nz, the box x0, y0, z0, x1, y1, z1, groups_x, groups_y, mode, w0..w8,
 * source weight), shapes 5point, 3x3 and 7point, the _src kernels adding source weight * src
 * (the others never read src).
 *
 * Every global byte should come from DRAM about once. A work-group is STENCIL_BX x STENCIL_BY
 * work-items, neighbours in x on neighbouring STENCIL_VX cells (coalesced rows, one vector load
 * each where the host says rows are aligned); each work-item marches STENCIL_CELLS cells in y
 * (2D) or z (3D) keeping the rows (planes) it needs in registers, so each is loaded once per
 * column; the x neighbours (and in 3D the y ones) are the loads of the neighbouring
 * work-items, caught by L1/L2. All groups are numbered in dimension 0 (x fastest),
 * so no grid dimension meets CUDA's 65535-group limit of y and z.
 *
 * Work-items whose whole march has every neighbour on the grid (nearly all) take a path with
 * no boundary logic; those whose march reaches the grid's x ends (in 3D also its y and z ends)
 * take the same path with those loads clamped. The others read off-grid neighbours at clamped
 * indices (CLAMP), replace them by 0 under flags fixed per column and per row (ZERO), and
 * FIXED replaces edge cells' sums by their centre: selects, no branch per cell. Offsets are
 * 64-bit, so grids may exceed 2^32 cells; within a row the arithmetic is 32-bit. Weights are
 * T: the host rounds them once. */
#if !T_IS_FLOAT
#error "stencils are built for GP_TYPE 1 (float) or 2 (double)"
#endif
#if !defined(STENCIL_BX) || !defined(STENCIL_BY) || !defined(STENCIL_CELLS)
#error "the host passes the tile shape: -DSTENCIL_BX, -DSTENCIL_BY, -DSTENCIL_CELLS"
#endif

#ifndef STENCIL_VX
#define STENCIL_VX 1
#endif
#if STENCIL_VX != 1 && STENCIL_VX != 2 && STENCIL_VX != 4
#error "STENCIL_VX is 1, 2 or 4"
#endif
#define ST_CAT_(a, b) a##b
#define ST_CAT(a, b) ST_CAT_(a, b)

/* gp_boundary values. */
#define ST_FIXED 0u
#define ST_ZERO 2u

typedef struct st_coef {
    T w0, w1, w2, w3, w4, w5, w6, w7, w8, sw;
} st_coef;

/* A row's cells at x - 1, x and x + 1, each 0 where its flag says it is off the grid. */
typedef struct st_row {
    T l, c, r;
} st_row;

GP_FUNC st_row st_load(GP_GLOBAL const T *GP_RESTRICT row, uint x, uint xm, uint xp, int zl, int zr, int zrow)
{
    /* Loads first, then selects: a load under a condition becomes a branch, which keeps the
     * compiler from issuing the loads of several rows together. */
    st_row v;
    v.l = row[xm];
    v.c = row[x];
    v.r = row[xp];
    v.l = zl || zrow ? (T)0 : v.l;
    v.c = zrow ? (T)0 : v.c;
    v.r = zr || zrow ? (T)0 : v.r;
    return v;
}

/* acc += w * x. CUDA's and HIP's compilers fuse products into sums across statements, so that
 * acc = w0 * c; acc += w1 * l may round as fma(w1, l, w0 * c) in one path and as
 * fma(w0, c, w1 * l) in another: explicit fmas there make every path round alike, as
 * gp_stencil_apply_region's bit-for-bit promise needs (a box's cells take the edge path where
 * the whole grid's take the inner one). OpenCL C fuses within an expression only. */
#ifdef __OPENCL_VERSION__
#define ST_MAC(acc, w, x) ((acc) += (w) * (x))
#else
#define ST_MAC(acc, w, x) ((acc) = fma((w), (x), (acc)))
#endif

/* The weighted sums into acc, in the weights' order, for cells (T) or, in the CPU variant's
 * st_span, vectors of them: one definition, so that every path of both variants adds the same
 * terms in the same order. */
#define ST_SUM_5POINT(acc, k, c, l, r, s, u)                                                   \
    do {                                                                                       \
        acc = (k).w0 * (c);                                                                    \
        ST_MAC(acc, (k).w1, l);                                                                \
        ST_MAC(acc, (k).w2, r);                                                                \
        ST_MAC(acc, (k).w3, s);                                                                \
        ST_MAC(acc, (k).w4, u);                                                                \
    } while (0)
#define ST_SUM_3X3(acc, k, sl, sc, sr, cl, cc, cr, ul, uc, ur)                                 \
    do {                                                                                       \
        acc = (k).w0 * (sl);                                                                   \
        ST_MAC(acc, (k).w1, sc);                                                               \
        ST_MAC(acc, (k).w2, sr);                                                               \
        ST_MAC(acc, (k).w3, cl);                                                               \
        ST_MAC(acc, (k).w4, cc);                                                               \
        ST_MAC(acc, (k).w5, cr);                                                               \
        ST_MAC(acc, (k).w6, ul);                                                               \
        ST_MAC(acc, (k).w7, uc);                                                               \
        ST_MAC(acc, (k).w8, ur);                                                               \
    } while (0)
#define ST_SUM_7POINT(acc, k, c, l, r, s, n, below, above)                                     \
    do {                                                                                       \
        acc = (k).w0 * (c);                                                                    \
        ST_MAC(acc, (k).w1, l);                                                                \
        ST_MAC(acc, (k).w2, r);                                                                \
        ST_MAC(acc, (k).w3, s);                                                                \
        ST_MAC(acc, (k).w4, n);                                                                \
        ST_MAC(acc, (k).w5, below);                                                            \
        ST_MAC(acc, (k).w6, above);                                                            \
    } while (0)

GP_FUNC T st_sum_2d(st_row s, st_row c, st_row u, st_coef k, int box)
{
    T acc;
    if (box)
        ST_SUM_3X3(acc, k, s.l, s.c, s.r, c.l, c.c, c.r, u.l, u.c, u.r);
    else
        ST_SUM_5POINT(acc, k, c.c, c.l, c.r, s.c, u.c);
    return acc;
}

GP_FUNC T st_sum_3d(T c, T l, T r, T s, T n, T below, T above, st_coef k)
{
    T acc;
    ST_SUM_7POINT(acc, k, c, l, r, s, n, below, above);
    return acc;
}

/* STENCIL_VX consecutive cells of a row from p, whose offset is a multiple of STENCIL_VX: one
 * vector load or store of up to 16 bytes (the host passes STENCIL_VX > 1 only where every row,
 * offset and box edge is aligned so). */
#if STENCIL_VX > 1
#define ST_V ST_CAT(T, STENCIL_VX)
#endif
GP_FUNC void st_vload(GP_GLOBAL const T *GP_RESTRICT p, T *v)
{
#if STENCIL_VX == 1
    v[0] = p[0];
#else
    ST_V w = *(GP_GLOBAL const ST_V *)p;
    v[0] = w.x;
    v[1] = w.y;
#if STENCIL_VX == 4
    v[2] = w.z;
    v[3] = w.w;
#endif
#endif
}

GP_FUNC void st_vstore(GP_GLOBAL T *GP_RESTRICT p, const T *v)
{
#if STENCIL_VX == 1
    p[0] = v[0];
#else
    ST_V w;
    w.x = v[0];
    w.y = v[1];
#if STENCIL_VX == 4
    w.z = v[2];
    w.w = v[3];
#endif
    *(GP_GLOBAL ST_V *)p = w;
#endif
}

/* The ends of the grid that a work-item's cells reach, for the inner paths below: its first or
 * last column is the grid's (x), and in 3D its row is the grid's first or last (y) and its
 * march starts or ends on the grid's first or last plane (z). */
#define ST_XLO 1u
#define ST_XHI 2u
#define ST_YLO 4u
#define ST_YHI 8u
#define ST_ZLO 16u
#define ST_ZHI 32u

/* The neighbours of a work-item's STENCIL_VX cells from p in x: *l = p[-1], *r = p[STENCIL_VX].
 * At the grid's ends the neighbour off the grid is read at the clamped index, as st_load reads
 * it, and is 0 under ZERO. */
GP_FUNC void st_xends(GP_GLOBAL const T *GP_RESTRICT p, T *l, T *r, uint ends, uint mode)
{
    T a = p[ends & ST_XLO ? 0 : -1], b = p[ends & ST_XHI ? STENCIL_VX - 1 : STENCIL_VX];
    *l = (ends & ST_XLO) && mode == ST_ZERO ? (T)0 : a;
    *r = (ends & ST_XHI) && mode == ST_ZERO ? (T)0 : b;
}

/* st_vload of the neighbouring row or plane q of the cells at p, or, where it is off the grid
 * (off), of the clamped one, p itself, and 0 under ZERO. */
GP_FUNC void st_vload_end(GP_GLOBAL const T *GP_RESTRICT q, GP_GLOBAL const T *GP_RESTRICT p, int off, uint mode,
                          T *v)
{
    st_vload(off ? p : q, v);
    for (uint j = 0; j < STENCIL_VX; j++) v[j] = off && mode == ST_ZERO ? (T)0 : v[j];
}

/* Under FIXED, a cell on the grid's edge keeps its value: the sums of the work-item's end cells
 * (x), or of all its cells (edge: its row or plane is on the edge), become their centres. */
#define ST_FIXED_ENDS(acc, centre, ends, edge, mode)                                           \
    do {                                                                                       \
        for (uint j_ = 0; j_ < STENCIL_VX; j_++) {                                             \
            int e_ = (edge) || (j_ == 0 && ((ends) & ST_XLO)) || (j_ == STENCIL_VX - 1 && ((ends) & ST_XHI)); \
            (acc)[j_] = e_ && (mode) == ST_FIXED ? (centre)[j_ + 1] : (acc)[j_];               \
        }                                                                                      \
    } while (0)

/* A row's STENCIL_VX cells from p with their neighbours: v[0] = p[-1] ... v[STENCIL_VX + 1]
 * (st_xends at the grid's ends). */
GP_FUNC void st_vrow(GP_GLOBAL const T *GP_RESTRICT p, T *v, uint ends, uint mode)
{
    st_xends(p, v, v + STENCIL_VX + 1, ends, mode);
    st_vload(p, v + 1);
}

/* The hot path: STENCIL_CELLS rows of STENCIL_VX cells from `at` (the first cell's offset), whose
 * every neighbour is on the grid, so no boundary logic at all (ends = 0); pointers step a row
 * at a time and neighbours are constant offsets from them. The loop unrolls, and restrict lets
 * every load be issued before the stores. With ends (x only, here), the same rows where the
 * cells start or end the grid's rows: as fast, where st_edge_2d column by column took several
 * times as long, and those groups at the end of a launch kept it waiting. */
GP_FUNC void st_inner_2d(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                         GP_GLOBAL const T *GP_RESTRICT src, ulong at, uint nx, st_coef k, int box, int has_src,
                         uint ends, uint mode)
{
    GP_GLOBAL const T *GP_RESTRICT p = in + at - nx;
    T s[STENCIL_VX + 2], c[STENCIL_VX + 2], u[STENCIL_VX + 2], acc[STENCIL_VX], w[STENCIL_VX];
    st_vrow(p, s, ends, mode);
    p += nx;
    st_vrow(p, c, ends, mode);
    out += at;
    src += at;
    for (uint i = 0; i < STENCIL_CELLS; i++) {
        p += nx;
        st_vrow(p, u, ends, mode);
        if (has_src) st_vload(src, w);
        for (uint j = 0; j < STENCIL_VX; j++) {
            if (box)
                ST_SUM_3X3(acc[j], k, s[j], s[j + 1], s[j + 2], c[j], c[j + 1], c[j + 2], u[j], u[j + 1], u[j + 2]);
            else
                ST_SUM_5POINT(acc[j], k, c[j + 1], c[j], c[j + 2], s[j + 1], u[j + 1]);
            if (has_src) ST_MAC(acc[j], k.sw, w[j]);
        }
        ST_FIXED_ENDS(acc, c, ends, 0, mode);
        st_vstore(out, acc);
        out += nx;
        src += nx;
        for (uint j = 0; j < STENCIL_VX + 2; j++) {
            s[j] = c[j];
            c[j] = u[j];
        }
    }
}

/* Any other n rows from y0 of column x, the boundary by mode. */
GP_FUNC void st_edge_2d(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                        GP_GLOBAL const T *GP_RESTRICT src, uint nx, uint ny, uint x, uint y0, uint n, uint mode,
                        st_coef k, int box, int has_src)
{
    uint xm = x > 0 ? x - 1 : 0, xp = x + 1 < nx ? x + 1 : x;
    int zero = mode == ST_ZERO, zl = zero && x == 0, zr = zero && x + 1 == nx;
    int fixed = mode == ST_FIXED, edge_col = fixed && (x == 0 || x + 1 == nx);
    st_row s = st_load(in + (ulong)(y0 > 0 ? y0 - 1 : 0) * nx, x, xm, xp, zl, zr, zero && y0 == 0);
    st_row c = st_load(in + (ulong)y0 * nx, x, xm, xp, zl, zr, 0);
    for (uint i = 0; i < n; i++) {
        uint y = y0 + i;
        st_row u = st_load(in + (ulong)(y + 1 < ny ? y + 1 : y) * nx, x, xm, xp, zl, zr, zero && y + 1 == ny);
        T acc = st_sum_2d(s, c, u, k, box);
        ulong o = (ulong)y * nx + x;
        if (has_src) ST_MAC(acc, k.sw, src[o]);
        out[o] = edge_col || (fixed && (y == 0 || y + 1 == ny)) ? c.c : acc;
        s = c;
        c = u;
    }
}

/* The same two paths one dimension up, marching in z; ends in x, y and z, in one of two ways.
 *
 * Through CUDA, with f32 rows read 16 bytes at a time (ST_PRELOAD), every load of the march is
 * issued first (the centres of its planes and the two beyond them, the x and y neighbours of
 * each), then the sums, so that a work-item has its whole march in flight (with 4 planes, 14
 * vector loads and 8 single ones). That takes about 80 registers, 6 work-groups of 128 an SM;
 * launch bounds of 7 groups (72 registers, ST_BOUNDS_2 below) keep one more. On an H200 the
 * 7-point at 256^3 / 512^3 / 768^3 went from 0.87 / 0.89 / 0.87x a device-to-device copy to 0.90-
 * 0.91 / 0.91-0.92 / 0.93x (on an H100 from 0.95-0.96 / 0.97 / 0.96x to 0.98-0.99 / 0.99 / 0.96x);
 * without the bounds 0.82 / 0.87 / 0.86x, with bounds of 8 groups (64 registers) 0.87 / 0.91 /
 * 0.92x. Rows read 8 or 4 bytes at a time (510^3, 513^3) ran 5% slower that way, and NVIDIA's
 * OpenCL, which has no launch bounds, 5-7% slower: they keep the pipeline.
 *
 * Otherwise the march is a pipeline: at plane i the centre cells of plane i + 2 and the x and y
 * neighbours of plane i + 1 are loaded, each used a plane or two after it was issued. Four sets
 * of centres and two of neighbours take turns by name, the loop taking four planes at a time (all
 * of them unrolled), so that no register waits on a load only to be copied. On an H100 the
 * 7-point at 256^3 / 512^3 / 768^3 (f32, 16 x 8 work-items of 2 cells, marching 4) went from 0.87
 * / 0.90 / 0.90x to 0.89 / 0.93 / 0.91x a device-to-device copy, where each plane's loads came
 * with its sums; with 4 cells a work-item (the tile now) 0.90 / 0.95 / 0.94x (src/core/stencil.c).
 * The 2D march in the same order, rows two ahead, ran no faster (0.98x at 8192^2 either way; at
 * 2048^2 0.86-0.90x against 0.87-0.93x), and keeps its plain loop. */
#if defined(GP__NVIDIA) && GP_TYPE == 1 && STENCIL_VX == 4
#define ST_PRELOAD 1
#else
#define ST_PRELOAD 0
#endif
#if ST_PRELOAD
GP_FUNC void st_inner_3d(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                         GP_GLOBAL const T *GP_RESTRICT src, ulong at, uint nx, ulong plane, st_coef k, int has_src,
                         uint ends, uint mode)
{
    GP_GLOBAL const T *GP_RESTRICT p = in + at;
    /* c[i + 1]: the centres of plane i; xe, s, n: its x, south and north neighbours. */
    T c[STENCIL_CELLS + 2][STENCIL_VX], xe[STENCIL_CELLS][2], s[STENCIL_CELLS][STENCIL_VX],
        n[STENCIL_CELLS][STENCIL_VX], acc[STENCIL_VX], w[STENCIL_VX];
    out += at;
    src += at;
    st_vload_end(p - plane, p, ends & ST_ZLO, mode, c[0]);
#pragma unroll
    for (uint i = 0; i < STENCIL_CELLS; i++) st_vload(p + i * plane, c[i + 1]);
    st_vload_end(p + STENCIL_CELLS * plane, p + (STENCIL_CELLS - 1) * plane, ends & ST_ZHI, mode,
                 c[STENCIL_CELLS + 1]);
#pragma unroll
    for (uint i = 0; i < STENCIL_CELLS; i++) {
        GP_GLOBAL const T *GP_RESTRICT q = p + i * plane;
        st_xends(q, xe[i], xe[i] + 1, ends, mode);
        st_vload_end(q - nx, q, ends & ST_YLO, mode, s[i]);
        st_vload_end(q + nx, q, ends & ST_YHI, mode, n[i]);
    }
#pragma unroll
    for (uint i = 0; i < STENCIL_CELLS; i++) {
        if (has_src) st_vload(src + i * plane, w);
        T c_[STENCIL_VX + 2];
        c_[0] = xe[i][0];
        c_[STENCIL_VX + 1] = xe[i][1];
        for (uint j = 0; j < STENCIL_VX; j++) c_[j + 1] = c[i + 1][j];
        for (uint j = 0; j < STENCIL_VX; j++) {
            acc[j] = st_sum_3d(c_[j + 1], c_[j], c_[j + 2], s[i][j], n[i][j], c[i][j], c[i + 2][j], k);
            if (has_src) ST_MAC(acc[j], k.sw, w[j]);
        }
        ST_FIXED_ENDS(acc, c_, ends,
                      (ends & (ST_YLO | ST_YHI)) || (i == 0 && (ends & ST_ZLO)) ||
                          (i + 1 == STENCIL_CELLS && (ends & ST_ZHI)),
                      mode);
        st_vstore(out + i * plane, acc);
    }
}

#else
#define ST_STEP_3D(i, CP, CC, CN, CL, XC, SC, NC, XL, SL, NL)                                  \
    if ((i) < STENCIL_CELLS) {                                                                 \
        GP_GLOBAL const T *GP_RESTRICT q_ = p + (i) * plane;                                   \
        if ((i) + 2 <= STENCIL_CELLS)                                                          \
            st_vload_end(q_ + 2 * plane, q_ + plane, (i) + 2 == STENCIL_CELLS && (ends & ST_ZHI), mode, CL); \
        if ((i) + 1 < STENCIL_CELLS) {                                                         \
            st_xends(q_ + plane, XL, XL + 1, ends, mode);                                      \
            st_vload_end(q_ + plane - nx, q_ + plane, ends & ST_YLO, mode, SL);                \
            st_vload_end(q_ + plane + nx, q_ + plane, ends & ST_YHI, mode, NL);                \
        }                                                                                      \
        if (has_src) st_vload(src + (i) * plane, w);                                           \
        T c_[STENCIL_VX + 2];                                                                  \
        c_[0] = XC[0];                                                                         \
        c_[STENCIL_VX + 1] = XC[1];                                                            \
        for (uint j = 0; j < STENCIL_VX; j++) c_[j + 1] = CC[j];                               \
        for (uint j = 0; j < STENCIL_VX; j++) {                                                \
            acc[j] = st_sum_3d(c_[j + 1], c_[j], c_[j + 2], SC[j], NC[j], CP[j], CN[j], k);   \
            if (has_src) ST_MAC(acc[j], k.sw, w[j]);                                           \
        }                                                                                      \
        ST_FIXED_ENDS(acc, c_, ends,                                                           \
                      (ends & (ST_YLO | ST_YHI)) || ((i) == 0 && (ends & ST_ZLO)) ||           \
                          ((i) + 1 == STENCIL_CELLS && (ends & ST_ZHI)),                       \
                      mode);                                                                   \
        st_vstore(out + (i) * plane, acc);                                                     \
    }
GP_FUNC void st_inner_3d(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                         GP_GLOBAL const T *GP_RESTRICT src, ulong at, uint nx, ulong plane, st_coef k, int has_src,
                         uint ends, uint mode)
{
    GP_GLOBAL const T *GP_RESTRICT p = in + at;
    T c0[STENCIL_VX], c1[STENCIL_VX], c2[STENCIL_VX], c3[STENCIL_VX], x0[2], x1[2], s0[STENCIL_VX],
        s1[STENCIL_VX], n0[STENCIL_VX], n1[STENCIL_VX], acc[STENCIL_VX], w[STENCIL_VX];
    out += at;
    src += at;
    st_vload_end(p - plane, p, ends & ST_ZLO, mode, c0);
    st_vload(p, c1);
    st_vload_end(p + plane, p, STENCIL_CELLS == 1 && (ends & ST_ZHI), mode, c2);
    st_xends(p, x0, x0 + 1, ends, mode);
    st_vload_end(p - nx, p, ends & ST_YLO, mode, s0);
    st_vload_end(p + nx, p, ends & ST_YHI, mode, n0);
#pragma unroll
    for (uint i = 0; i < STENCIL_CELLS; i += 4) {
        ST_STEP_3D(i, c0, c1, c2, c3, x0, s0, n0, x1, s1, n1)
        ST_STEP_3D(i + 1, c1, c2, c3, c0, x1, s1, n1, x0, s0, n0)
        ST_STEP_3D(i + 2, c2, c3, c0, c1, x0, s0, n0, x1, s1, n1)
        ST_STEP_3D(i + 3, c3, c0, c1, c2, x1, s1, n1, x0, s0, n0)
    }
}
#endif

GP_FUNC void st_edge_3d(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                        GP_GLOBAL const T *GP_RESTRICT src, uint nx, uint ny, uint nz, uint x, uint y, uint z0,
                        uint n, uint mode, st_coef k, int has_src)
{
    uint xm = x > 0 ? x - 1 : 0, xp = x + 1 < nx ? x + 1 : x;
    uint ym = y > 0 ? y - 1 : 0, yp = y + 1 < ny ? y + 1 : y;
    int zero = mode == ST_ZERO;
    int zl = zero && x == 0, zr = zero && x + 1 == nx, zs = zero && y == 0, zn = zero && y + 1 == ny;
    int fixed = mode == ST_FIXED;
    int edge_col = fixed && (x == 0 || x + 1 == nx || y == 0 || y + 1 == ny);
    ulong plane = (ulong)nx * ny, oc = (ulong)y * nx + x;
    ulong ol = (ulong)y * nx + xm, orr = (ulong)y * nx + xp, os = (ulong)ym * nx + x, on = (ulong)yp * nx + x;
    T below = in[(z0 > 0 ? z0 - 1 : 0) * plane + oc];
    below = zero && z0 == 0 ? (T)0 : below;
    T centre = in[z0 * plane + oc];
    for (uint i = 0; i < n; i++) {
        uint z = z0 + i;
        GP_GLOBAL const T *GP_RESTRICT p = in + z * plane;
        T above = in[(z + 1 < nz ? z + 1 : z) * plane + oc], l = p[ol], r = p[orr], s = p[os], t = p[on];
        above = zero && z + 1 == nz ? (T)0 : above;
        T acc = st_sum_3d(centre, zl ? (T)0 : l, zr ? (T)0 : r, zs ? (T)0 : s, zn ? (T)0 : t, below, above, k);
        ulong o = z * plane + oc;
        if (has_src) ST_MAC(acc, k.sw, src[o]);
        out[o] = edge_col || (fixed && (z == 0 || z + 1 == nz)) ? centre : acc;
        below = centre;
        centre = above;
    }
}

/* The cells of the box [x0, x1) x [y0, y1) x [z0, z1) of the nx x ny x nz grid (the whole grid
 * but for gp_stencil_apply_region); boundaries are the grid's. shape: 0 5-point, 1 3x3,
 * 2 7-point; constants once inlined, as is has_src. */
GP_FUNC void st_stencil(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                        GP_GLOBAL const T *GP_RESTRICT src, uint nx, uint ny, uint nz, uint x0, uint y0, uint z0,
                        uint x1, uint y1, uint z1, uint groups_x, uint groups_y, uint mode, st_coef k, int shape,
                        int has_src)
{
    uint g = gp_group_id(0), row = g / groups_x;
    uint gx = x0 + (g % groups_x) * STENCIL_BX * STENCIL_VX; /* the group's first column */
    uint x = gx + gp_local_id(0) * STENCIL_VX;
    if (x >= x1) return;
    /* The work-item's nv columns from x in the box; whole: all STENCIL_VX, which the inner paths
     * take, with the grid's ends they reach. */
    uint nv = x1 - x < STENCIL_VX ? x1 - x : STENCIL_VX;
    int whole = nv == STENCIL_VX;
    uint ends = (x == 0 ? ST_XLO : 0u) | (x + STENCIL_VX == nx ? ST_XHI : 0u);
    /* Whether any of the group's work-items reaches an end of the grid (here x; in 3D also y
     * and z, below): the inner paths come in two calls, and the group, not the work-item,
     * chooses between them, so that no warp runs both. Where the work-item's choice split the
     * warps of the groups at the x ends (a row of 16 work-items is half a warp), the 7-point
     * ran 27% of its warps twice at 512^3 on an H200; chosen by the group, it went from
     * 0.91-0.95 to 0.95-0.97x a copy on an H100 at 256^3 to 768^3, and from 0.82-0.88 to
     * 0.86-0.89 on the H200. */
    int group_ends = gx == 0 || nx - gx <= STENCIL_BX * STENCIL_VX;
    if (shape == 2) {
        uint gy = y0 + (row % groups_y) * STENCIL_BY, y = gy + gp_local_id(1);
        uint z = z0 + (row / groups_y) * STENCIL_CELLS;
        if (y >= y1 || z >= z1) return;
        ulong plane = (ulong)nx * ny, at = z * plane + (ulong)y * nx + x;
        ends |= (y == 0 ? ST_YLO : 0u) | (y + 1 == ny ? ST_YHI : 0u) | (z == 0 ? ST_ZLO : 0u) |
                (nz - z == STENCIL_CELLS ? ST_ZHI : 0u);
        /* The whole march on the grid and in the box. The two calls below stay two: with the
         * mask a constant 0 the compiler builds the hot path without the ends' selects. */
        group_ends = group_ends || gy == 0 || ny - gy <= STENCIL_BY || z == 0 || nz - z <= STENCIL_CELLS;
        int inner = whole && nz - z >= STENCIL_CELLS && z1 - z >= STENCIL_CELLS;
        if (inner && !group_ends)
            st_inner_3d(out, in, src, at, nx, plane, k, has_src, 0u, mode);
        else if (inner)
            st_inner_3d(out, in, src, at, nx, plane, k, has_src, ends, mode);
        else
            for (uint j = 0; j < nv; j++)
                st_edge_3d(out, in, src, nx, ny, nz, x + j, y, z, z1 - z < STENCIL_CELLS ? z1 - z : STENCIL_CELLS,
                           mode, k, has_src);
        return;
    }
    /* The marches that start on the grid's first row, reach its last or are cut short by it go
     * column by column. On the inner path with those rows clamped, as the x ends are, they ran
     * no faster on an H100 at 4000^2 and 4096^2 (and that dispatch, shared with 3D, ran the
     * 7-point 3-5% slower). */
    uint y = y0 + (row * STENCIL_BY + gp_local_id(1)) * STENCIL_CELLS;
    if (y >= y1) return;
    int inner = whole && y > 0 && ny - y > STENCIL_CELLS && y1 - y >= STENCIL_CELLS;
    if (inner && !group_ends) /* two calls, as in 3D */
        st_inner_2d(out, in, src, (ulong)y * nx + x, nx, k, shape == 1, has_src, 0u, mode);
    else if (inner)
        st_inner_2d(out, in, src, (ulong)y * nx + x, nx, k, shape == 1, has_src, ends, mode);
    else
        for (uint j = 0; j < nv; j++)
            st_edge_2d(out, in, src, nx, ny, x + j, y, y1 - y < STENCIL_CELLS ? y1 - y : STENCIL_CELLS, mode, k,
                       shape == 1, has_src);
}

/* ---- The CPU variant (-DSTENCIL_ROWS=1): whole rows ----------------------------------------
 * pocl runs a work-group as loops on one core and vectorises across its work-items, which the
 * march above defeats (each work-item's loads are a row apart). Here a work-group is one work-
 * item taking STENCIL_CELLS consecutive rows of the box (x rows; in 3D rows of one (y, z)) as
 * plain loops with 64-bit indices over vectors (st_span below), the input rows still in cache
 * from the row before. Where the box spans whole rows, consecutive inner rows of a plane are one
 * loop over their cells (but for the 3x3 shape, whose corner loads kept that loop from
 * vectorising: 3.7x slower on pocl 3.1), the edge columns inside it included (their neighbours across the row
 * ends are in the grid); the edge cells are then written again through the edge functions above,
 * like every cell with a neighbour off the grid: the same sums in the same order as the GPU
 * variant. */

/* Cells [from, to) of the grid, every neighbour of each at an index inside it. In OpenCL C, 64
 * bytes of cells at a time as one vector of the language, so that the sums are vector
 * instructions whatever the compiler's vectorizer makes of the loop (pocl 5.0 left the plain
 * loop scalar: 0.40-0.73x a 16-thread C loop on a Xeon, 1.17-1.33x with vectors); then cell by
 * cell. ST_SPAN_AT computes a cell (V is T) or a vector of them (V a vector type) at x: L(p, i)
 * reads p[i] on, S(v, p, i) writes. The sums are the ST_SUM_ ones above. */
#define ST_SPAN_AT(V, L, S)                                                                    \
    do {                                                                                       \
        V acc;                                                                                 \
        if (shape == 2)                                                                        \
            ST_SUM_7POINT(acc, k, L(in, x), L(in, x - 1), L(in, x + 1), L(s, x), L(u, x), L(b, x), L(a, x)); \
        else if (shape == 1)                                                                   \
            ST_SUM_3X3(acc, k, L(s, x - 1), L(s, x), L(s, x + 1), L(in, x - 1), L(in, x), L(in, x + 1), \
                       L(u, x - 1), L(u, x), L(u, x + 1));                                     \
        else                                                                                   \
            ST_SUM_5POINT(acc, k, L(in, x), L(in, x - 1), L(in, x + 1), L(s, x), L(u, x));     \
        if (has_src) ST_MAC(acc, k.sw, L(src, x));                                              \
        S(acc, out, x);                                                                        \
    } while (0)
#define ST_CELL_AT(p, i) (p)[i]
#define ST_CELL_SET(v, p, i) ((p)[i] = (v))
#ifdef __OPENCL_VERSION__
#if GP_TYPE == 1
#define ST_VN 16
#else
#define ST_VN 8
#endif
#define ST_VEC_AT(p, i) ST_CAT(vload, ST_VN)(0, (p) + (i))
#define ST_VEC_SET(v, p, i) ST_CAT(vstore, ST_VN)(v, 0, (p) + (i))
#endif

GP_FUNC void st_span(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                     GP_GLOBAL const T *GP_RESTRICT src, ulong from, ulong to, ulong nx, ulong plane, st_coef k,
                     int shape, int has_src)
{
    GP_GLOBAL const T *GP_RESTRICT s = in - nx, *GP_RESTRICT u = in + nx;
    GP_GLOBAL const T *GP_RESTRICT b = in - plane, *GP_RESTRICT a = in + plane;
    ulong x = from;
#ifdef ST_VN
    for (; x + ST_VN <= to; x += ST_VN) ST_SPAN_AT(ST_CAT(T, ST_VN), ST_VEC_AT, ST_VEC_SET);
#endif
    for (; x < to; x++) ST_SPAN_AT(T, ST_CELL_AT, ST_CELL_SET);
}

/* One cell with a neighbour off the grid: the edge functions with a march of one, or, under
 * FIXED, where every such cell keeps its value, that value. */
GP_FUNC void st_cell(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                     GP_GLOBAL const T *GP_RESTRICT src, uint nx, uint ny, uint nz, uint x, uint y, uint z, uint mode,
                     st_coef k, int shape, int has_src)
{
    ulong o = ((ulong)z * ny + y) * nx + x;
    if (mode == ST_FIXED)
        out[o] = in[o];
    else if (shape == 2)
        st_edge_3d(out, in, src, nx, ny, nz, x, y, z, 1, mode, k, has_src);
    else
        st_edge_2d(out, in, src, nx, ny, x, y, 1, mode, k, shape == 1, has_src);
}

/* Work-item g takes rows g * STENCIL_CELLS ... of the box, numbered y fastest, then z. */
GP_FUNC void st_rows(GP_GLOBAL T *GP_RESTRICT out, GP_GLOBAL const T *GP_RESTRICT in,
                     GP_GLOBAL const T *GP_RESTRICT src, uint nx, uint ny, uint nz, uint x0, uint y0, uint z0,
                     uint x1, uint y1, uint z1, uint mode, st_coef k, int shape, int has_src)
{
    ulong rows_y = y1 - y0, rows = rows_y * (z1 - z0), r = (ulong)gp_group_id(0) * STENCIL_CELLS;
    ulong end = r + STENCIL_CELLS < rows ? r + STENCIL_CELLS : rows, plane = (ulong)nx * ny;
    int three_d = shape == 2, whole = x0 == 0 && x1 == nx && nx > 1 && shape != 1;
    while (r < end) {
        uint y = y0 + (uint)(r % rows_y), z = z0 + (uint)(r / rows_y);
        int inner = y > 0 && y + 1 < ny && (!three_d || (z > 0 && z + 1 < nz));
        if (!inner) { /* a row on the grid's edge: cell by cell */
            ulong at = z * plane + (ulong)y * nx;
            if (mode == ST_FIXED)
                for (ulong x = at + x0; x < at + x1; x++) out[x] = in[x];
            else
                for (uint x = x0; x < x1; x++) st_cell(out, in, src, nx, ny, nz, x, y, z, mode, k, shape, has_src);
            r++;
            continue;
        }
        /* Inner rows from this one to the last of the work-item's in this plane. */
        ulong last = y1 - 1 < ny - 2 ? y1 - 1 : ny - 2;
        ulong n = whole ? last - y + 1 : 1;
        n = n < end - r ? n : end - r;
        ulong at = z * plane + (ulong)y * nx;
        uint lo = x0 > 0 ? x0 : 1, hi = x1 < nx - 1 ? x1 : nx - 1;
        if (whole) /* the n rows but their first and last cells; the edge columns are written again below */
            st_span(out, in, src, at + 1, at + n * nx - 1, nx, plane, k, shape, has_src);
        else if (lo < hi)
            st_span(out, in, src, at + lo, at + hi, nx, plane, k, shape, has_src);
        for (ulong i = 0; i < n; i++)
            for (uint x = x0; x < x1; x = x + 1 < lo || x + 1 >= hi ? x + 1 : hi)
                if (x < lo || x >= hi) st_cell(out, in, src, nx, ny, nz, x, y + (uint)i, z, mode, k, shape, has_src);
        r += n;
    }
}

#if STENCIL_ROWS
#define ST_BODY(shape, has_src) st_rows(out + out_offset, in + in_offset, src + src_offset, nx, ny, nz, x0, y0, z0, x1, y1, z1, \
                        mode, k, shape, has_src)
#else
#define ST_BODY(shape, has_src) st_stencil(out + out_offset, in + in_offset, src + src_offset, nx, ny, nz, x0, y0, z0, x1, y1, z1, \
                           groups_x, groups_y, mode, k, shape, has_src)
#endif

#define ST_ARGS                                                                                \
    GP_GLOBAL T *GP_RESTRICT out, ulong out_offset, GP_GLOBAL const T *GP_RESTRICT in, ulong in_offset, \
        GP_GLOBAL const T *GP_RESTRICT src, ulong src_offset, uint nx, uint ny, uint nz, uint x0, uint y0, \
        uint z0, uint x1, uint y1, uint z1, uint groups_x, uint groups_y, uint mode, T w0, T w1, T w2, T w3, \
        T w4, T w5, T w6, T w7, T w8, T sw

/* Launch bounds of the 7-point with ST_PRELOAD (st_inner_3d): as many groups an SM as 7 of 128
 * work-items, at least one (3 of CUDA's 32 x 8, 85 registers: src/core/stencil.c). */
#if ST_PRELOAD
#define ST_BOUNDS_2                                                                            \
    __launch_bounds__(STENCIL_BX * STENCIL_BY, STENCIL_BX * STENCIL_BY < 896 ? 896 / (STENCIL_BX * STENCIL_BY) : 1)
#else
#define ST_BOUNDS_2
#endif
#define ST_BOUNDS_0
#define ST_BOUNDS_1
#define ST_KERNEL(name, shape, has_src)                                                        \
    GP_KERNEL ST_BOUNDS_##shape void gp_stencil_##name(ST_ARGS)                                \
    {                                                                                          \
        st_coef k = {w0, w1, w2, w3, w4, w5, w6, w7, w8, sw};                                  \
        (void)groups_x, (void)groups_y;                                                        \
        ST_BODY(shape, has_src);                                                               \
    }

ST_KERNEL(5point, 0, 0)
ST_KERNEL(5point_src, 0, 1)
ST_KERNEL(3x3, 1, 0)
ST_KERNEL(3x3_src, 1, 1)
ST_KERNEL(7point, 2, 0)
ST_KERNEL(7point_src, 2, 1)
