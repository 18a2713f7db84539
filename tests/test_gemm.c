/* Proves gp_gemm against a plain triple loop on the host, with an error bound that grows with
 * k, for every layout and transpose, edge sizes, offsets and leading dimensions, both
 * implementations and both variants of gpuport's kernel; and the tile parameters, their tuning
 * and saving, and refusal of bad input. */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include "common.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD 5 /* elements before and after each matrix that must stay as they were */

/* One problem: sizes, layout, transposes, scalars, and how far apart the stored lines are. */
typedef struct problem {
    gp_type type;
    gp_layout layout;
    gp_transpose ta, tb;
    size_t m, n, k;
    double alpha, beta;
    size_t pad;  /* added to each leading dimension */
    size_t off;  /* view offset of every matrix (after GUARD) */
    int nan_c;   /* C starts as NaN (with beta 0 it must not spread) */
} problem;

typedef struct stored {
    size_t lines, len, ld, elems; /* elems: GUARD + off + extent + GUARD */
} stored;

static stored layout_of(const problem *p, size_t rows, size_t cols, int trans)
{
    size_t sr = trans ? cols : rows, sc = trans ? rows : cols;
    stored s;
    s.lines = p->layout == GP_ROW_MAJOR ? sr : sc;
    s.len = p->layout == GP_ROW_MAJOR ? sc : sr;
    s.ld = (s.len ? s.len : 1) + p->pad;
    s.elems = GUARD + p->off + (s.lines ? (s.lines - 1) * s.ld + s.len : 0) + GUARD;
    return s;
}

/* Element (i, j) of a rows x cols matrix op(X) as stored. */
static size_t at(const problem *p, const stored *s, size_t i, size_t j, int trans)
{
    size_t r = trans ? j : i, c = trans ? i : j;
    return GUARD + p->off + (p->layout == GP_ROW_MAJOR ? r * s->ld + c : c * s->ld + r);
}

static double get(gp_type t, const void *x, size_t i)
{
    return t == GP_F32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}

static void put(gp_type t, void *x, size_t i, double v)
{
    if (t == GP_F32) ((float *)x)[i] = (float)v;
    else ((double *)x)[i] = v;
}

/* Random elements in [-1, 1) (of the type), with some exact zeros and ones mixed in. */
static void fill(gp_type t, void *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = tst_random_u32(&seed);
        put(t, x, i, r % 17 == 0 ? 0 : r % 19 == 0 ? 1 : (double)(r >> 8) / (1u << 23) - 1);
    }
}

static gp_buffer *upload(const void *host, size_t bytes)
{
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, bytes);
    GP_OK(gp_buffer_write(NULL, b, 0, host, bytes));
    return b;
}

/* Runs one problem with impl and checks every element of C and the guards around it.
 *
 * The bound: each element is alpha * (a dot product of k terms) + beta * c. Computed in the
 * type with unit roundoff u in any order, with or without fused multiply-adds, the dot product
 * is within gamma(k) sum|a||b| of the exact one (Higham, Accuracy and Stability, 3.1), and the
 * scaling by alpha, beta and the final addition add at most three more roundings, so
 * |C - exact| <= gamma(k + 3) (|alpha| sum|a||b| + |beta||c|), gamma(j) = j u / (1 - j u).
 * The host's reference in long double is within gamma(k + 3) of its own u of the same
 * magnitude; both bounds are added. alpha and beta below are exact in f32. */
static void check(const problem *p, gp_gemm_impl impl)
{
    gp_type t = p->type;
    size_t size = gp_type_size(t);
    stored sa = layout_of(p, p->m, p->k, p->ta), sb = layout_of(p, p->k, p->n, p->tb),
           sc = layout_of(p, p->m, p->n, 0);
    void *a = tst_malloc(sa.elems * size), *b = tst_malloc(sb.elems * size), *c = tst_malloc(sc.elems * size),
         *out = tst_malloc(sc.elems * size);
    fill(t, a, sa.elems, 1 + p->m);
    fill(t, b, sb.elems, 2 + p->n);
    fill(t, c, sc.elems, 3 + p->k);
    if (p->nan_c)
        for (size_t i = 0; i < p->m; i++)
            for (size_t j = 0; j < p->n; j++) put(t, c, at(p, &sc, i, j, 0), NAN);
    gp_buffer *ba = upload(a, sa.elems * size), *bb = upload(b, sb.elems * size), *bc = upload(c, sc.elems * size);
    GP_OK(gp_gemm(NULL, impl, t, p->layout, p->ta, p->tb, p->m, p->n, p->k, p->alpha, GP_VIEW_AT(ba, GUARD + p->off),
                  sa.ld, GP_VIEW_AT(bb, GUARD + p->off), sb.ld, p->beta, GP_VIEW_AT(bc, GUARD + p->off), sc.ld));
    GP_OK(gp_buffer_read(NULL, bc, 0, out, sc.elems * size));

    long double u = t == GP_F32 ? 0x1p-24L : 0x1p-53L, uh = 0x1p-64L, j = (long double)p->k + 3;
    long double gamma = j * u / (1 - j * u) + j * uh / (1 - j * uh);
    /* Everything not inside C's m x n elements (guards, gaps between lines) is unchanged. */
    unsigned char *inside = calloc(sc.elems, 1);
    assert_non_null(inside);
    for (size_t i = 0; i < p->m; i++)
        for (size_t jj = 0; jj < p->n; jj++) {
            size_t ci = at(p, &sc, i, jj, 0);
            inside[ci] = 1;
            long double sum = 0, mag = 0;
            for (size_t q = 0; q < p->k; q++) {
                long double x = get(t, a, at(p, &sa, i, q, p->ta)), y = get(t, b, at(p, &sb, q, jj, p->tb));
                sum += x * y;
                mag += fabsl(x * y);
            }
            long double cv = p->beta == 0 ? 0 : get(t, c, ci);
            long double ref = p->alpha * sum + p->beta * cv;
            long double bound = gamma * (fabsl((long double)p->alpha) * mag + fabsl((long double)p->beta * cv));
            double got = get(t, out, ci);
            if (!(fabsl(got - ref) <= bound))
                fail_msg("%s %s%s%s m %zu n %zu k %zu alpha %g beta %g ld+%zu off %zu: C(%zu, %zu) = %.17g, "
                         "expected %.17Lg within %.3Lg",
                         t == GP_F32 ? "f32" : "f64", p->layout == GP_ROW_MAJOR ? "row" : "col", p->ta ? " A^T" : "",
                         p->tb ? " B^T" : "", p->m, p->n, p->k, p->alpha, p->beta, p->pad, p->off, i, jj, got, ref,
                         bound);
        }
    for (size_t i = 0; i < sc.elems; i++)
        if (!inside[i] && memcmp((char *)out + i * size, (char *)c + i * size, size) != 0)
            fail_msg("m %zu n %zu k %zu: element %zu of C's buffer, outside the matrix, was changed", p->m, p->n, p->k,
                     i);
    free(inside);
    gp_buffer_destroy(ba);
    gp_buffer_destroy(bb);
    gp_buffer_destroy(bc);
    free(a);
    free(b);
    free(c);
    free(out);
}

static int skip_f64(gp_type t)
{
    if (t == GP_F64 && !tst_info.fp64) {
        print_message("f64 skipped: %s has no double precision\n", tst_info.name);
        return 1;
    }
    return 0;
}

/* Every layout and transpose at small sizes around the tiles, then larger and rectangular
 * shapes with one combination each, so the cross product stays small. */
static void run_all(gp_gemm_impl impl)
{
    static const size_t small[] = {1, 7, 16, 17, 33};
    static const size_t shapes[][3] = {{64, 64, 64}, {100, 129, 33}, {129, 100, 255}, {255, 17, 64}, {1, 255, 129},
                                       {255, 1, 7},  {7, 33, 1},     {128, 128, 128}, {33, 64, 255}};
    for (int ti = 0; ti < 2; ti++) {
        gp_type t = ti ? GP_F64 : GP_F32;
        if (skip_f64(t)) continue;
        for (int combo = 0; combo < 8; combo++) {
            for (size_t s = 0; s < sizeof small / sizeof small[0]; s++) {
                size_t z = small[s];
                problem p = {t, combo & 1, (combo >> 1) & 1, (combo >> 2) & 1, z, z + s % 2, z + 1 - s % 2,
                             1.5, -0.75, s % 3, s, 0};
                check(&p, impl);
            }
        }
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            problem p = {t, s & 1, (s >> 1) & 1, (s >> 2) & 1, shapes[s][0], shapes[s][1], shapes[s][2],
                         s % 3 == 0 ? 1 : -2.5, s % 3 == 1 ? 1 : 0.5, s % 2 ? 3 : 0, s % 4, 0};
            check(&p, impl);
        }
        /* alpha and beta of 0 and 1 (beta 0 over NaN), and k == 0: C = beta C. */
        static const double ab[][2] = {{0, 0}, {0, 1}, {0, -2}, {1, 0}, {1, 1}, {-1, 0.25}};
        for (size_t s = 0; s < sizeof ab / sizeof ab[0]; s++) {
            problem p = {t, s & 1, GP_NO_TRANS, (s >> 1) & 1, 33, 17, 40, ab[s][0], ab[s][1], 1, 2, ab[s][1] == 0};
            check(&p, impl);
            p.k = 0;
            check(&p, impl);
        }
    }
}

static void gemm_gpuport(void **state) { run_all(GP_GEMM_GPUPORT); }

/* Unsets GPUPORT_GEMM_PARAMS for tests that choose shapes themselves; returns its value, which
 * goes back with tst_restore_env. */
static char *unset_params(void)
{
    char *saved = tst_save_env("GPUPORT_GEMM_PARAMS");
    unsetenv("GPUPORT_GEMM_PARAMS");
    return saved;
}

/* The other variant, with its own default shape: a shape of the user's GPUPORT_GEMM_PARAMS is
 * for the device's own variant (pocl takes minutes to compile the tiled kernel with a CPU
 * shape). */
typedef struct saved_env {
    char *kernel, *params;
} saved_env;
static saved_env other_kernel(void)
{
    saved_env s = {NULL, unset_params()};
    s.kernel = tst_other_variant("GPUPORT_GEMM_KERNEL", "tiled", "direct");
    return s;
}
static void restore_kernel(saved_env s)
{
    tst_restore_env("GPUPORT_GEMM_KERNEL", s.kernel);
    tst_restore_env("GPUPORT_GEMM_PARAMS", s.params);
}

/* The other variant, with its default shape, over the whole problem set; an unknown variant is
 * refused. */
static void gemm_other_kernel(void **state)
{
    saved_env saved = other_kernel();
    run_all(GP_GEMM_GPUPORT);
    setenv("GPUPORT_GEMM_KERNEL", "blocked", 1);
    gp_buffer *x = tst_buffer(GP_MEMORY_DEVICE, 4096);
    GP_EXPECT(gp_gemm(NULL, GP_GEMM_GPUPORT, GP_F32, GP_ROW_MAJOR, 0, 0, 4, 4, 4, 1, GP_VIEW(x), 4, GP_VIEW_AT(x, 16),
                      4, 0, GP_VIEW_AT(x, 32), 4),
              GP_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(gp_last_error(), "tiled or direct"));
    gp_gemm_params q;
    GP_EXPECT(gp_gemm_params_get(tst_dev, GP_F32, &q), GP_ERROR_INVALID_ARGUMENT);
    restore_kernel(saved);
    gp_buffer_destroy(x);
}

static int vendor_missing(void)
{
    char text[256];
    if (gp_gemm_vendor_info(tst_dev, text, sizeof text) == GP_SUCCESS) {
        print_message("vendor BLAS: %s\n", text);
        return 0;
    }
    print_message("skipped: no vendor BLAS on %s: %s\n", tst_info.name, text);
    return 1;
}

static void gemm_vendor(void **state)
{
    if (vendor_missing()) skip();
    run_all(GP_GEMM_VENDOR);
}

/* The shape in force (on GPUs the class's largest, which gp_gemm takes for big products only).
 * Sizes that are multiples of the tile take the kernel's variant without bounds checks, with
 * 16-byte loads where every matrix starts 16 bytes apart from its buffer's start (offset 3 after
 * the 5 guard elements) and, for f32, without (offset 1); f64 is 16-byte aligned at both, where
 * NVIDIA's matrix instructions also store C in 16-byte pairs (gemm_gpuport's products at offsets 0
 * and 2 take their element stores). Steps of k: 1 to 9, each with the next of the four transpose
 * cases, at offset 1 for 1 to 4 and 9 and 3 for 5 to 8: fewer and more than the asynchronous
 * copies keep in flight (3 to 5 steps, gemm.gp's PIPE, which needs the 16-byte loads), and each
 * count the main loop leaves over when it takes two to five at a time (GEMM_UNROLL), and 1 and
 * 2, where the loads two steps ahead (GEMM_AHEAD) find no tile or one to fetch. Then two
 * sizes that are not multiples, 3 and 4 steps. Both variants of the kernel. */
static void whole_tiles(void)
{
    for (int ti = 0; ti < 2; ti++) {
        gp_type t = ti ? GP_F64 : GP_F32;
        if (skip_f64(t)) continue;
        gp_gemm_params q;
        GP_OK(gp_gemm_params_get(tst_dev, t, &q));
        /* this shape, not a smaller one that gp_gemm would take for products this small */
        char *saved = tst_save_env("GPUPORT_GEMM_PARAMS"), shape[96];
        snprintf(shape, sizeof shape, "%s:%u,%u,%u,%u,%u", ti ? "f64" : "f32", q.tile_m, q.tile_n, q.tile_k, q.work_m,
                 q.work_n);
        setenv("GPUPORT_GEMM_PARAMS", shape, 1);
        for (size_t steps = 1; steps <= 9; steps++) {
            int combo = (int)(steps - 1) % 8;
            problem p = {t, GP_ROW_MAJOR, combo & 1, (combo >> 1) & 1, q.tile_m, 2 * q.tile_n, steps * q.tile_k,
                         0.5, combo == 3 ? 0 : 2, 0, combo & 4 ? 3 : 1, 0};
            check(&p, GP_GEMM_GPUPORT);
        }
        for (size_t steps = 3; steps <= 4; steps++) {
            problem p = {t, GP_ROW_MAJOR, GP_NO_TRANS, GP_TRANS, q.tile_m + 3, 2 * q.tile_n - 5,
                         (steps - 1) * q.tile_k + 1, 1, 0.5, 1, 0, 0};
            check(&p, GP_GEMM_GPUPORT);
        }
        tst_restore_env("GPUPORT_GEMM_PARAMS", saved);
    }
}

/* fn with the device's variant of the kernel, then with the other. */
static void in_both_variants(void (*fn)(void))
{
    fn();
    saved_env saved = other_kernel();
    fn();
    restore_kernel(saved);
}

static void gemm_whole_tiles(void **state) { in_both_variants(whole_tiles); }

/* The split in k of the last tiles (gemm.c's split_rounds), forced with
 * GPUPORT_GEMM_SPLIT="tiles,slices" on the shape in force (on CPUs a small one). Whole rows of
 * tiles are split as the last rows; other counts as the end of the kernel's order of tiles, which
 * goes along m within bands of 8 rows of tiles (gemm.gp's GEMM_TILE): the last 5 of 9 x 2 are
 * the second band's row and the end of the first band's last column, the last one of 3 x 2 its
 * corner. Whole tiles at offset 3 (16-byte loads, and on CUDA f64 the asynchronous copies) split
 * into slices of 2 steps, into slices of 2 with the last one empty, and into slices of 1 with 3
 * empty ones (beta 0 over NaN); then sizes that are not multiples of the tile, whose last tile
 * (5 x 3 inside the product) or last row of tiles (5 rows) is split and whose last slice is
 * shorter, and column-major with every tile in the split. Neither operand transposed and both,
 * which covers each slice offset in gemm.gp both ways with three compiled variants. Both variants
 * of the kernel; then "off", "auto" and malformed values. */
static void split_cases(void)
{
    static const struct {
        const char *split;
        gp_layout layout;
        gp_transpose trans;
        size_t m, n, k; /* in tiles, plus the extra elements below */
        size_t em, en, ek, off;
    } cases[] = {{"2,3", GP_ROW_MAJOR, GP_NO_TRANS, 3, 2, 6, 0, 0, 0, 3},
                 {"5,4", GP_ROW_MAJOR, GP_TRANS, 9, 2, 6, 0, 0, 0, 3},
                 {"1,9", GP_ROW_MAJOR, GP_TRANS, 3, 2, 6, 0, 0, 0, 3},
                 {"1,3", GP_ROW_MAJOR, GP_NO_TRANS, 2, 1, 5, 5, 3, 3, 1},
                 {"2,3", GP_ROW_MAJOR, GP_TRANS, 2, 1, 5, 5, 3, 3, 1},
                 {"9,2", GP_COL_MAJOR, GP_TRANS, 2, 1, 3, 0, 1, 5, 2}};
    char *saved = tst_save_env("GPUPORT_GEMM_SPLIT");
    for (int ti = 0; ti < 2; ti++) {
        gp_type t = ti ? GP_F64 : GP_F32;
        if (skip_f64(t)) continue;
        gp_gemm_params q;
        GP_OK(gp_gemm_params_get(tst_dev, t, &q));
        if (tst_info.type == GP_DEVICE_CPU) q = (gp_gemm_params){16, 16, 8, 2, 2}; /* pocl compiles it in seconds */
        char *saved_params = tst_save_env("GPUPORT_GEMM_PARAMS"), shape[96];
        snprintf(shape, sizeof shape, "%s:%u,%u,%u,%u,%u", ti ? "f64" : "f32", q.tile_m, q.tile_n, q.tile_k, q.work_m,
                 q.work_n);
        setenv("GPUPORT_GEMM_PARAMS", shape, 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            setenv("GPUPORT_GEMM_SPLIT", cases[i].split, 1);
            problem p = {t, cases[i].layout, cases[i].trans, cases[i].trans, cases[i].m * q.tile_m + cases[i].em,
                         cases[i].n * q.tile_n + cases[i].en, cases[i].k * q.tile_k + cases[i].ek, i == 2 ? -1.5 : 0.5,
                         i == 2 ? 0 : 2, 0, cases[i].off, i == 2};
            check(&p, GP_GEMM_GPUPORT);
        }
        tst_restore_env("GPUPORT_GEMM_PARAMS", saved_params);
    }
    static const char *const good[] = {"off", "auto", ""};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("GPUPORT_GEMM_SPLIT", good[i], 1);
        problem p = {GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, 70, 40, 50, 1, 0.5, 1, 0, 0};
        check(&p, GP_GEMM_GPUPORT);
    }
    static const char *const bad[] = {"3", "0,2", "2,0", "1,2,3", "1,x", "on", "1,65536"};
    gp_buffer *x = tst_buffer(GP_MEMORY_DEVICE, 4096);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GPUPORT_GEMM_SPLIT", bad[i], 1);
        GP_EXPECT(gp_gemm(NULL, GP_GEMM_GPUPORT, GP_F32, GP_ROW_MAJOR, 0, 0, 4, 4, 4, 1, GP_VIEW(x), 4,
                          GP_VIEW_AT(x, 16), 4, 0, GP_VIEW_AT(x, 32), 4),
                  GP_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(gp_last_error(), "auto, off, or tiles,slices"));
    }
    gp_buffer_destroy(x);
    tst_restore_env("GPUPORT_GEMM_SPLIT", saved);
}

static void gemm_split(void **state) { in_both_variants(split_cases); }

/* GPUPORT_GEMM picks the implementation for GP_GEMM_AUTO; anything else is refused. */
static void gemm_auto_env(void **state)
{
    char *saved = tst_save_env("GPUPORT_GEMM");
    problem p = {GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_TRANS, 17, 9, 5, 1, 0, 0, 0, 0};
    setenv("GPUPORT_GEMM", "gpuport", 1);
    check(&p, GP_GEMM_AUTO);
    setenv("GPUPORT_GEMM", "cublas", 1);
    gp_buffer *x = tst_buffer(GP_MEMORY_DEVICE, 4096);
    GP_EXPECT(gp_gemm(NULL, GP_GEMM_AUTO, GP_F32, GP_ROW_MAJOR, 0, 0, 4, 4, 4, 1, GP_VIEW(x), 4, GP_VIEW_AT(x, 16), 4,
                      0, GP_VIEW_AT(x, 32), 4),
              GP_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(gp_last_error(), "gpuport or vendor"));
    setenv("GPUPORT_GEMM", "vendor", 1);
    char text[256];
    if (gp_gemm_vendor_info(tst_dev, text, sizeof text) == GP_SUCCESS) check(&p, GP_GEMM_AUTO);
    else
        GP_EXPECT(gp_gemm(NULL, GP_GEMM_AUTO, GP_F32, GP_ROW_MAJOR, 0, 0, 4, 4, 4, 1, GP_VIEW(x), 4, GP_VIEW_AT(x, 16),
                          4, 0, GP_VIEW_AT(x, 32), 4),
                  GP_ERROR_UNSUPPORTED);
    /* Unset: the host's own BLAS on a CPU device's memory (where its text says " (host for f32, "
     * for f32 only, from 1024^3 multiply-adds), cuBLAS for these f32 products below 2048^3 and
     * every f64 one on a CUDA device, gpuport's kernel everywhere else (gpuport.h); the product is
     * that one's, bit for bit. */
    unsetenv("GPUPORT_GEMM");
    gp_device_info info;
    GP_OK(gp_device_get_info(tst_dev, &info));
    int vendor = gp_gemm_vendor_info(tst_dev, text, sizeof text) == GP_SUCCESS;
    static const struct {
        gp_type t;
        size_t n;
    } cases[] = {{GP_F32, 64}, {GP_F32, 1024}, {GP_F64, 1024}};
    size_t most = 1024 * 1024 * sizeof(double);
    char *in = malloc(3 * most), *out = malloc(3 * most);
    assert_non_null(in);
    assert_non_null(out);
    gp_buffer *ab = tst_buffer(GP_MEMORY_DEVICE, 2 * most), *cb = tst_buffer(GP_MEMORY_DEVICE, most);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gp_type t = cases[c].t;
        size_t n = cases[c].n, es = t == GP_F32 ? sizeof(float) : sizeof(double), bytes = n * n * es;
        if (skip_f64(t)) continue;
        int host = strstr(text, " (host)") || (t == GP_F32 && n >= 1024 && strstr(text, " (host for f32, "));
        int auto_vendor = vendor && ((info.type == GP_DEVICE_CPU && host) ||
                                     (strcmp(info.backend, "cuda") == 0 && strncmp(text, "cuBLAS", 6) == 0));
        for (size_t i = 0; i < 3 * n * n; i++) {
            double v = (double)((i * 7919) % 1001) / 1000.0 - 0.5;
            if (t == GP_F32) ((float *)in)[i] = (float)v;
            else ((double *)in)[i] = v;
        }
        GP_OK(gp_buffer_write(NULL, ab, 0, in, 2 * bytes));
        const gp_gemm_impl impls[3] = {GP_GEMM_AUTO, GP_GEMM_GPUPORT, GP_GEMM_VENDOR};
        for (int i = 0; i < (auto_vendor ? 3 : 2); i++) {
            /* alpha and beta other than 1 and 0: the implementations round the scaling apart */
            GP_OK(gp_buffer_write(NULL, cb, 0, in + 2 * bytes, bytes));
            GP_OK(gp_gemm(NULL, impls[i], t, GP_ROW_MAJOR, 0, 0, n, n, n, 0.3, GP_VIEW(ab), n,
                          GP_VIEW_AT(ab, n * n), n, 0.7, GP_VIEW(cb), n));
            GP_OK(gp_buffer_read(NULL, cb, 0, out + i * bytes, bytes));
        }
        if (memcmp(out, out + (auto_vendor ? 2 : 1) * bytes, bytes) != 0)
            fail_msg("%s, N = %zu: GP_GEMM_AUTO did not compute what %s does", t == GP_F32 ? "f32" : "f64", n,
                     auto_vendor ? "GP_GEMM_VENDOR" : "GP_GEMM_GPUPORT");
    }
    free(in);
    free(out);
    gp_buffer_destroy(ab);
    gp_buffer_destroy(cb);
    tst_restore_env("GPUPORT_GEMM", saved);
    gp_buffer_destroy(x);
}

static int same(const gp_gemm_params *a, const gp_gemm_params *b) { return memcmp(a, b, sizeof *a) == 0; }

/* Set, get, the environment's override, and a product with each shape in force. */
static void gemm_params(void **state)
{
    char *saved = unset_params(), *saved_kernel = tst_save_env("GPUPORT_GEMM_KERNEL");
    unsetenv("GPUPORT_GEMM_KERNEL"); /* the device's own variant: direct on CPUs */
    gp_gemm_params before, got, want = {32, 16, 8, 4, 2};
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &before));
    GP_OK(gp_gemm_params_set(tst_dev, GP_F32, &want));
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &want));
    problem p = {GP_F32, GP_COL_MAJOR, GP_TRANS, GP_NO_TRANS, 45, 37, 19, 1.25, 0.5, 2, 3, 0};
    check(&p, GP_GEMM_GPUPORT);

    setenv("GPUPORT_GEMM_PARAMS", "f64:16,16,8,2,2;f32:16,32,4,2,4", 1);
    gp_gemm_params env = {16, 32, 4, 2, 4};
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &env));
    check(&p, GP_GEMM_GPUPORT);
    setenv("GPUPORT_GEMM_PARAMS", "f64:16,16,8,2,2", 1); /* silent on f32: this process's choice */
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &want));

    /* Malformed, invalid for the device, or numbers past 32 bits that would wrap to a valid
     * shape (4294967312 = 2^32 + 16), or a type given twice. */
    static const char *const bad[] = {"f32:128,128,16,8", "f32:128,128,16,8,8,", "f16:64,64,16,4,4", "f32=1,2,3,4,5",
                                      "f32:-64,64,16,4,4", "f32:64,64,16,4,4;x", "f32:64,64,16,3,4",
                                      "f32:4294967312,16,8,4,2", "f32:16,16,8,4,18446744073709551618",
                                      "f32:32,16,8,4,2;f32:16,32,4,2,4", "f32: 32,16,8,4,2", "f32:+32,16,8,4,2"};
    gp_buffer *x = tst_buffer(GP_MEMORY_DEVICE, 4096);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GPUPORT_GEMM_PARAMS", bad[i], 1);
        GP_EXPECT(gp_gemm_params_get(tst_dev, GP_F32, &got), GP_ERROR_INVALID_ARGUMENT);
        GP_EXPECT(gp_gemm(NULL, GP_GEMM_GPUPORT, GP_F32, GP_ROW_MAJOR, 0, 0, 4, 4, 4, 1, GP_VIEW(x), 4,
                          GP_VIEW_AT(x, 16), 4, 0, GP_VIEW_AT(x, 32), 4),
                  GP_ERROR_INVALID_ARGUMENT);
    }
    gp_buffer_destroy(x);
    unsetenv("GPUPORT_GEMM_PARAMS");

    /* Shapes the kernel cannot take, or the device cannot hold, change nothing. The last two
     * break rules of local tiles: the items do not share them evenly, or they do not fit. The
     * direct variant (CPUs) has none, and runs them. */
    const gp_gemm_params invalid[] = {{0, 16, 8, 4, 2}, {30, 16, 8, 4, 2}, {64, 64, 8, 32, 16}, {1024, 1024, 256, 1, 1},
                                      {16, 16, 3, 2, 2}, {1024, 1024, 256, 32, 8}};
    size_t all = sizeof invalid / sizeof invalid[0], tiled_only = 2, cpu = tst_info.type == GP_DEVICE_CPU;
    for (size_t i = 0; i < all - (cpu ? tiled_only : 0); i++)
        GP_EXPECT(gp_gemm_params_set(tst_dev, GP_F32, &invalid[i]), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &want));
    if (cpu) {
        GP_OK(gp_gemm_params_set(tst_dev, GP_F32, &invalid[all - 2]));
        check(&p, GP_GEMM_GPUPORT);
        setenv("GPUPORT_GEMM_KERNEL", "tiled", 1);
        GP_EXPECT(gp_gemm_params_set(tst_dev, GP_F32, &invalid[all - 1]), GP_ERROR_INVALID_ARGUMENT);
        /* items of 8 x 8, whose products the tiled kernel takes in another order and whose main
         * loop it takes two steps at a time (GPUs have them by default) */
        GP_OK(gp_gemm_params_set(tst_dev, GP_F32, &(gp_gemm_params){16, 16, 8, 8, 8}));
        check(&p, GP_GEMM_GPUPORT);
        unsetenv("GPUPORT_GEMM_KERNEL");
    }
    GP_OK(gp_gemm_params_set(tst_dev, GP_F32, &before));

    /* f64 tiles 16 deep in k: on NVIDIA GPUs from sm_90, the matrix instruction that is 16 deep
     * (gemm.gp's KI); in part and whole tiles, the latter through CUDA's asynchronous copies. */
    if (tst_info.fp64) {
        gp_gemm_params before64, deep = {64, 64, 16, 4, 4};
        GP_OK(gp_gemm_params_get(tst_dev, GP_F64, &before64));
        GP_OK(gp_gemm_params_set(tst_dev, GP_F64, &deep));
        problem q = p;
        q.type = GP_F64;
        check(&q, GP_GEMM_GPUPORT);
        problem whole = {GP_F64, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, 128, 64, 48, 1, 0, 0, 0, 0};
        check(&whole, GP_GEMM_GPUPORT);
        GP_OK(gp_gemm_params_set(tst_dev, GP_F64, &before64));
    }
    tst_restore_env("GPUPORT_GEMM_KERNEL", saved_kernel);
    tst_restore_env("GPUPORT_GEMM_PARAMS", saved);
}

static void set_cache_dir(const char *dir) { tst_set_env("GPUPORT_CACHE_DIR", dir); }

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) n += strncmp(e->d_name, "gemm-", 5) == 0;
    if (d) closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[4200];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    rmdir(dir);
}

/* A tune at a small size picks a shape, uses it, saves it in the cache folder, and a lookup in
 * that folder reads it back (one in an empty folder does not find it). */
static void gemm_tune(void **state)
{
    /* GPUPORT_GEMM_PARAMS would override the tuned shape */
    char *saved = tst_save_env("GPUPORT_CACHE_DIR"), *saved_params = unset_params();
    char full[] = "/tmp/gpuport-gemm-tune-XXXXXX", empty[] = "/tmp/gpuport-gemm-empty-XXXXXX";
    assert_non_null(mkdtemp(full));
    assert_non_null(mkdtemp(empty));
    gp_stream *s;
    GP_OK(gp_stream_get_default(tst_dev, &s));
    gp_gemm_params best, got, table;
    double gflops = 0;
    set_cache_dir(empty);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &table));
    set_cache_dir(full);
    GP_OK(gp_gemm_tune(s, GP_F32, 48, &best, &gflops));
    assert_true(gflops > 0);
    assert_int_equal(files_in(full), 1);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &best));
    problem p = {GP_F32, GP_ROW_MAJOR, GP_TRANS, GP_TRANS, 50, 31, 70, 1, 1, 1, 1, 0};
    check(&p, GP_GEMM_GPUPORT);
    set_cache_dir(empty);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &table));
    set_cache_dir(full);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &best));
    /* A saved choice that others could have written is not read. */
    char saved_file[4200] = "";
    DIR *d = opendir(full);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "gemm-", 5) == 0) snprintf(saved_file, sizeof saved_file, "%s/%s", full, e->d_name);
    if (d) closedir(d);
    assert_int_equal(chmod(saved_file, 0666), 0);
    set_cache_dir(empty);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    set_cache_dir(full);
    GP_OK(gp_gemm_params_get(tst_dev, GP_F32, &got));
    assert_true(same(&got, &table));
    tst_restore_env("GPUPORT_CACHE_DIR", saved);
    tst_restore_env("GPUPORT_GEMM_PARAMS", saved_params);
    remove_dir(full);
    remove_dir(empty);
    GP_EXPECT(gp_gemm_tune(s, GP_F32, 0, &best, &gflops), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_gemm_tune(s, GP_I32, 16, &best, &gflops), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_gemm_tune(NULL, GP_F32, 16, &best, &gflops), GP_ERROR_INVALID_HANDLE);
}

/* Bad input: a status, a message of its own, and C untouched. */
static void gemm_bad_input(void **state)
{
    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i;
    gp_buffer *x = upload(host, sizeof host), *small = tst_buffer(GP_MEMORY_DEVICE, 16 * 4);
    gp_view a = GP_VIEW(x), b = GP_VIEW_AT(x, 16), c = GP_VIEW_AT(x, 32);
#define GEMM(impl, type, layout, ta, tb, m, n, k, A, lda, B, ldb, C, ldc)                                   \
    gp_gemm(NULL, impl, type, layout, ta, tb, m, n, k, 1, A, lda, B, ldb, 0, C, ldc)
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_I32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, (gp_type)99, 0, 0, 0, 4, 4, 4, a, 4, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM((gp_gemm_impl)7, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, (gp_layout)2, 0, 0, 4, 4, 4, a, 4, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, (gp_transpose)2, 0, 4, 4, 4, a, 4, b, 4, c, 4),
              GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, GP_VIEW(NULL), 4, b, 4, c, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, GP_VIEW(NULL), 4, c, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, GP_VIEW(NULL), 4), GP_ERROR_INVALID_HANDLE);
    /* Leading dimensions below the stored line length: row-major A is m x k, so lda >= k;
     * transposed it is k x m; column-major C needs ldc >= m; an empty matrix still needs 1. */
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 2, 2, 4, a, 3, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 1, 0, 4, 2, 2, a, 3, b, 4, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 1, 2, 4, 2, a, 4, b, 1, c, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 1, 0, 0, 4, 2, 2, a, 4, b, 4, c, 3), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 2, 2, 0, a, 0, b, 2, c, 2), GP_ERROR_INVALID_ARGUMENT);
    /* Out of range: C of 4 x 9 from element 32 needs 36 elements past 32 of 64. */
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 9, 1, a, 1, b, 9, c, 9), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, GP_VIEW_AT(small, 1), 4, c, 4),
              GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 2, 2, 2, a, 1000, b, 2, c, 2), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, SIZE_MAX / 2, b, 4, c, 4), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F64, 0, 0, 0, 4, 4, 4, a, 4, b, 4, GP_VIEW_AT(x, 60), 4),
              tst_info.fp64 ? GP_ERROR_OUT_OF_RANGE : GP_ERROR_UNSUPPORTED);
    /* C overlapping an operand. */
    GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, GP_VIEW_AT(x, 12), 4),
              GP_ERROR_INVALID_ARGUMENT);
    /* Another device's buffer. */
    for (size_t d = 0; d < tst_all_count; d++) {
        if (tst_all_devices[d] == tst_dev) continue;
        gp_buffer *o;
        GP_OK(gp_buffer_create(tst_all_devices[d], GP_MEMORY_DEVICE, 64 * 4, &o));
        GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, GP_VIEW(o), 4, b, 4, c, 4), GP_ERROR_DEVICE_MISMATCH);
        GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, GP_VIEW(o), 4), GP_ERROR_DEVICE_MISMATCH);
        gp_buffer_destroy(o);
    }
    gp_stream *other = NULL;
    for (size_t d = 0; d < tst_all_count && !other; d++)
        if (tst_all_devices[d] != tst_dev) GP_OK(gp_stream_get_default(tst_all_devices[d], &other));
    if (other)
        GP_EXPECT(gp_gemm(other, GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 4, 4, 1, a, 4, b, 4, 0, c, 4),
                  GP_ERROR_DEVICE_MISMATCH);
    if (!tst_info.fp64) {
        GP_EXPECT(GEMM(GP_GEMM_GPUPORT, GP_F64, 0, 0, 0, 2, 2, 2, a, 2, b, 2, GP_VIEW_AT(x, 24), 2),
                  GP_ERROR_UNSUPPORTED);
        gp_gemm_params q = {16, 16, 8, 2, 2};
        GP_EXPECT(gp_gemm_params_set(tst_dev, GP_F64, &q), GP_ERROR_UNSUPPORTED);
    }
    /* A vendor call where there is no vendor library. */
    char text[256];
    if (gp_gemm_vendor_info(tst_dev, text, sizeof text) != GP_SUCCESS)
        GP_EXPECT(GEMM(GP_GEMM_VENDOR, GP_F32, 0, 0, 0, 4, 4, 4, a, 4, b, 4, c, 4), GP_ERROR_UNSUPPORTED);
    GP_EXPECT(gp_gemm_vendor_info(NULL, text, sizeof text), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_gemm_vendor_info(tst_dev, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_gemm_params_get(NULL, GP_F32, &(gp_gemm_params){0}), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_gemm_params_get(tst_dev, GP_F32, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_gemm_params_set(tst_dev, GP_U32, &(gp_gemm_params){16, 16, 8, 2, 2}), GP_ERROR_INVALID_ARGUMENT);
    /* m or n of 0 is a no-op once the arguments are checked. */
    GP_OK(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 0, 4, 4, a, 4, b, 4, c, 4));
    GP_OK(GEMM(GP_GEMM_GPUPORT, GP_F32, 0, 0, 0, 4, 0, 4, a, 4, b, 1, c, 1));
#undef GEMM
    tst_check_buffer(x, host, sizeof host);
    gp_buffer_destroy(x);
    gp_buffer_destroy(small);
}

const struct CMUnitTest tst_gemm_tests[] = {
    cmocka_unit_test(gemm_gpuport), cmocka_unit_test(gemm_other_kernel), cmocka_unit_test(gemm_whole_tiles),
    cmocka_unit_test(gemm_split),   cmocka_unit_test(gemm_vendor),       cmocka_unit_test(gemm_auto_env),
    cmocka_unit_test(gemm_params),  cmocka_unit_test(gemm_tune),         cmocka_unit_test(gemm_bad_input),
};
const size_t tst_gemm_tests_count = sizeof tst_gemm_tests / sizeof tst_gemm_tests[0];
