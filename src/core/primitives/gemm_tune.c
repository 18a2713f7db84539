/* gp_gemm_tune: every candidate tile shape timed on the device, its product checked, the
 * fastest kept for the device and type (gemm.c's saved shape). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* Small integers, so that every product and sum is exact and the check can be exact too. */
static double a_value(size_t i, size_t j) { return (double)((i * 7 + j * 3) % 5) - 2; }
static double b_value(size_t i, size_t j) { return (double)((i * 5 + j * 11) % 3) - 1; }

/* Freivalds' check of C = A B (row-major, n x n): C x == A (B x) for an integer vector x, all
 * exact in double. A wrong element escapes only if its error is orthogonal to x. */
static int product_right(const void *cv, gp_type type, size_t n)
{
    double *x = malloc(n * sizeof *x), *bx = calloc(n, sizeof *bx);
    int ok = x && bx;
    for (size_t i = 0; ok && i < n; i++) x[i] = (double)((i * 2654435761u) % 17) - 8;
    for (size_t p = 0; ok && p < n; p++)
        for (size_t j = 0; j < n; j++) bx[p] += b_value(p, j) * x[j];
    for (size_t i = 0; ok && i < n; i++) {
        double want = 0, got = 0;
        for (size_t p = 0; p < n; p++) want += a_value(i, p) * bx[p];
        for (size_t j = 0; j < n; j++)
            got += (type == GP_F32 ? (double)((const float *)cv)[i * n + j] : ((const double *)cv)[i * n + j]) * x[j];
        ok = got == want;
    }
    free(x);
    free(bx);
    return ok;
}

/* Best time in ms of p on the n x n product, or a negative value when it fails or is wrong. */
static double time_candidate(gp_stream *s, gp_type type, size_t n, const gp_gemm_params *p, gp_buffer *const bufs[3],
                             void *host, gp_event *ev[2])
{
    gp_view a = GP_VIEW(bufs[0]), b = GP_VIEW(bufs[1]), c = GP_VIEW(bufs[2]);
#define RUN() gp__gemm_with(s, GP_GEMM_GPUPORT, type, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, n, n, n, 1, a, n, b, n, 0, c, n, p)
    if (RUN() != GP_SUCCESS || gp_buffer_read(s, bufs[2], 0, host, n * n * gp_type_size(type)) != GP_SUCCESS)
        return -1;
    if (!product_right(host, type, n)) {
        gp__debug("tune", "%u,%u,%u,%u,%u: wrong result; skipped", p->tile_m, p->tile_n, p->tile_k, p->work_m,
                  p->work_n);
        return -1;
    }
    /* As many runs as fit in about 0.2 s, at least 3 and at most 20; the fastest counts. */
    double best = -1, ms;
    for (int r = 0, runs = 3; r < runs; r++) {
        if (gp_event_record(ev[0], s) || RUN() || gp_event_record(ev[1], s) || gp_event_synchronize(ev[1]) ||
            gp_event_elapsed_ms(ev[0], ev[1], &ms))
            return -1;
        if (r == 0 && ms > 0) runs = 200 / ms < 3 ? 3 : 200 / ms > 20 ? 20 : (int)(200 / ms);
        if (best < 0 || ms < best) best = ms;
    }
#undef RUN
    return best;
}

gp_status gp_gemm_tune(gp_stream *stream, gp_type type, size_t n, gp_gemm_params *best, double *gflops)
{
    static const char fn[] = "gp_gemm_tune";
    GP__CHECK_HANDLE(stream, "stream");
    gp_device *dev = stream->dev;
    gp_status st = gp__gemm_tune_check(dev, type, fn);
    if (st != GP_SUCCESS) return st;
    if (n == 0 || n > 16384)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: n is %zu; it must be 1 to 16384", fn, n);
    size_t size = gp_type_size(type), bytes = n * n * size;
    gp_buffer *bufs[3] = {NULL, NULL, NULL};
    gp_event *ev[2] = {NULL, NULL};
    void *host = malloc(bytes);
    if (!host) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory for %zu bytes", fn, bytes);
    for (int i = 0; i < 3 && st == GP_SUCCESS; i++) st = gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &bufs[i]);
    for (int i = 0; i < 2 && st == GP_SUCCESS; i++) {
        for (size_t r = 0; r < n; r++)
            for (size_t col = 0; col < n; col++) {
                double v = i == 0 ? a_value(r, col) : b_value(r, col);
                if (type == GP_F32) ((float *)host)[r * n + col] = (float)v;
                else ((double *)host)[r * n + col] = v;
            }
        st = gp_buffer_write(stream, bufs[i], 0, host, bytes);
    }
    for (int i = 0; i < 2 && st == GP_SUCCESS; i++) st = gp_event_create(dev, &ev[i]);

    gp_gemm_params win = {0, 0, 0, 0, 0};
    double win_ms = -1;
    const gp_gemm_params *p;
    for (size_t next = 0; st == GP_SUCCESS && (p = gp__gemm_candidate(dev, type, &next));) {
        double ms = time_candidate(stream, type, n, p, bufs, host, ev);
        gp__debug("tune", "%s %u,%u,%u,%u,%u: %s%.1f GFLOP/s", type == GP_F32 ? "f32" : "f64", p->tile_m, p->tile_n,
                  p->tile_k, p->work_m, p->work_n, ms < 0 ? "failed: " : "", ms > 0 ? 2e-6 * n * n * (double)n / ms : 0);
        if (ms < 0) gp__debug("tune", "  %s", gp_last_error());
        if (ms > 0 && (win_ms < 0 || ms < win_ms)) win = *p, win_ms = ms;
    }
    for (int i = 0; i < 3; i++) gp_buffer_destroy(bufs[i]);
    for (int i = 0; i < 2; i++) gp_event_destroy(ev[i]);
    free(host);
    if (st != GP_SUCCESS) return st;
    if (win_ms < 0)
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: no candidate shape ran correctly on %s:%zu (%s)", fn,
                        dev->info.backend, dev->info.backend_index, dev->info.name);

    gp__gemm_keep_tuned(dev, type, &win);
    if (best) *best = win;
    if (gflops) *gflops = 2e-6 * n * n * (double)n / win_ms;
    return GP_SUCCESS;
}
