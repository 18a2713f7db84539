/* The heat problem's plain C side: see heat.h. */
#include "heat.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

gp_stencil heat_stencil(gp_type type, size_t n)
{
    gp_stencil s = {GP_STENCIL_5POINT, type, GP_BOUNDARY_FIXED, n, n, 1, {0, .25, .25, .25, .25},
                    0.25 / ((double)n * n)};
    return s;
}

double *heat_host_solve(size_t n, int f32, size_t steps, size_t every, double *norms)
{
    double *u = calloc(n * n, sizeof *u), *v = calloc(n * n, sizeof *v), h2f = HEAT_SOURCE / ((double)n * n);
    if (!u || !v) {
        free(u);
        free(v);
        return NULL;
    }
    for (size_t s = 1; s <= steps; s++) {
        double sum = 0;
        for (size_t y = 1; y + 1 < n; y++)
            for (size_t x = 1; x + 1 < n; x++) {
                size_t i = y * n + x;
                double w = (u[i - n] + u[i + n] + u[i + 1] + u[i - 1] + (x == n / 2 && y == n / 2 ? h2f : 0)) / 4;
                if (f32)
                    w = (float)w;
                sum += (w - u[i]) * (w - u[i]);
                v[i] = w;
            }
        double *t = u;
        u = v;
        v = t;
        if (s % every == 0 || s == steps)
            norms[(s - 1) / every] = sqrt(sum);
    }
    free(v);
    return u;
}

/* How far a device's field may be from the host's after `steps` steps. Each step rounds a sum
 * of six non-negative terms (at most 7 roundings, in any order, fused or not) on either side,
 * and a Jacobi step never grows a difference (its weights are >= 0 and add up to <= 1); u only
 * grows from 0, so its largest value is the last field's. */
static double field_bound(int f32, size_t steps, double largest)
{
    double unit = f32 ? 0x1p-24 : 0x1p-53;
    return 2 * 7.5 * unit * (double)steps * largest;
}

double heat_field_error(size_t n, const double *dev, const double *host, int f32, size_t steps, double *bound)
{
    double err = 0, largest = 0;
    for (size_t i = 0; i < n * n; i++) {
        err = fmax(err, fabs(dev[i] - host[i]));
        largest = fmax(largest, host[i]);
    }
    *bound = field_bound(f32, steps, largest);
    return err;
}

/* A heat map: 0 black, the hottest cell white, on a square-root scale so that the tail of the
 * field away from the source is visible. */
static int write_pgm(const char *path, size_t n, const double *u)
{
    double top = 0;
    for (size_t i = 0; i < n * n; i++)
        top = fmax(top, u[i]);
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        perror(path);
        return 1;
    }
    fprintf(fp, "P5\n%zu %zu\n255\n", n, n);
    for (size_t i = 0; i < n * n; i++)
        fputc(top > 0 ? (int)(255 * sqrt(u[i] / top)) : 0, fp);
    return fclose(fp) != 0;
}

int heat_report(size_t n, int f32, size_t every, size_t steps, double norm, const double *field, const char *out)
{
    int converged = norm < HEAT_TOLERANCE;
    printf("N = %zu, %s: %zu steps, norm %.3e %s %.0e (taken every %zu steps), centre u = %.6g\n", n,
           f32 ? "f32" : "f64", steps, norm, converged ? "<" : ">=", HEAT_TOLERANCE, every, field[n / 2 * n + n / 2]);

    size_t checks = (steps + every - 1) / every, cells = n * n;
    double *norms = malloc((checks ? checks : 1) * sizeof *norms), t0 = ex_host_ms(), bound;
    double *host = norms ? heat_host_solve(n, f32, steps, every, norms) : NULL;
    if (!host) {
        fprintf(stderr, "out of host memory for the plain C solver\n");
        free(norms);
        return 1;
    }
    double host_ms = ex_host_ms() - t0, err = heat_field_error(n, field, host, f32, steps, &bound);

    /* A check where the host's norm lies within what rounding can move it of the tolerance may
     * go either way; every other check must decide as the host's does. */
    double window = 2 * (double)n * bound + (double)cells * (f32 ? 0x1p-24 : 0x1p-53) * HEAT_TOLERANCE;
    size_t host_steps = 0;
    int same_stop = 1;
    for (size_t c = 0; c < checks; c++) {
        int host_stops = norms[c] < HEAT_TOLERANCE, dev_stops = c + 1 == checks && converged;
        if (host_stops && !host_steps)
            host_steps = c + 1 == checks ? steps : (c + 1) * every;
        if (host_stops != dev_stops && fabs(norms[c] - HEAT_TOLERANCE) > window)
            same_stop = 0;
    }
    int ok = same_stop && err <= bound;
    if (host_steps)
        printf("plain C (%.0f ms): converged after %zu steps", host_ms, host_steps);
    else
        printf("plain C (%.0f ms): not converged after %zu steps", host_ms, steps);
    printf("; field within %.2e of it (bound %.2e): %s\n", err, bound, ok ? "correct" : "WRONG");
    if (ok && out && write_pgm(out, n, field) == 0)
        printf("wrote %s\n", out);
    free(norms);
    free(host);
    return !ok;
}
