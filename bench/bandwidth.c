/* gpuport-bench: the host data every kernel starts from, and the checks of the line kernels
 * (copy, axpy, reduce, scan) against the host. */
#include "bench.h"

/* ---- Host data and checks ------------------------------------------------------------- */

/* x and y: floats in [0,1); s: -1, 0 or +1, so that every sum and prefix of them is exact.
 * Each value is a hash of its index, so a longer array starts with the shorter one. */
float *hx, *hy, *hs, *hout;
size_t host_n;

uint64_t gpb_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

int gpb_host_data(size_t n)
{
    if (n <= host_n)
        return 0;
    free(hx), free(hy), free(hs), free(hout);
    hx = malloc(n * sizeof *hx), hy = malloc(n * sizeof *hy), hs = malloc(n * sizeof *hs);
    hout = malloc(n * sizeof *hout);
    if (!hx || !hy || !hs || !hout) {
        free(hx), free(hy), free(hs), free(hout);
        hx = hy = hs = hout = NULL;
        host_n = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h = gpb_mix(0x6770706f7274u + i); /* fixed seed: "gpport" */
        hx[i] = (float)(h >> 40) * 0x1p-24f;
        hy[i] = (float)(h & 0xffffffu) * 0x1p-24f;
        hs[i] = (float)((h >> 38) % 3) - 1.0f;
    }
    host_n = n;
    return 0;
}

/* The error bound of a sum of m rounded terms: gamma(m) = m u / (1 - m u). */
double gpb_gamma_m(double m, double u)
{
    return m * u / (1 - m * u);
}

int gpb_check_failed(result *r, const char *who, const char *msg)
{
    r->failed = 1;
    gpb_note(r, "%s check failed: %s", who, msg);
    return -1;
}

/* Checks a 1D kernel's out (n floats, or out[0] for reduce) against the host. */
int gpb_check_line(enum kernel k, size_t n, const float *out, result *r, const char *who)
{
    char msg[200] = "";
    if (k == K_COPY) {
        for (size_t i = 0; i < n && !msg[0]; i++)
            if (memcmp(&out[i], &hx[i], sizeof *out))
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want %.9g", i, out[i], hx[i]);
    } else if (k == K_AXPY) {
        /* Exact up to the one rounding a fused multiply-add saves. */
        for (size_t i = 0; i < n && !msg[0]; i++) {
            float p = axpy_a * hx[i], twice = p + hy[i], fused = fmaf(axpy_a, hx[i], hy[i]);
            if (!(out[i] == twice || out[i] == fused))
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want %.9g (or fused %.9g)", i, out[i], twice, fused);
        }
    } else if (k == K_REDUCE) {
        /* Every partial sum of -1, 0 and +1, in any order, is an exact integer: the sum must be
         * exact, and a lost or doubled partial shows. */
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += hs[i];
        if ((double)out[0] != sum)
            snprintf(msg, sizeof msg, "sum %.9g, want exactly %.9g", out[0], sum);
    } else {
        double p = 0;
        for (size_t i = 0; i < n && !msg[0]; i++) {
            p += hs[i];
            if ((double)out[i] != p)
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want exactly %.9g", i, out[i], p);
        }
    }
    return msg[0] ? gpb_check_failed(r, who, msg) : 0;
}

