/* gpuport-bench: the stencils' neighbours and weights, and their results checked on the host. */
#include "bench.h"

/* A stencil's neighbours, in the order of its weights in gpuport.h. */
static const tap taps5[5] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}};
static const tap taps9[9] = {{-1, -1, 0}, {0, -1, 0}, {1, -1, 0}, {-1, 0, 0}, {0, 0, 0},
                             {1, 0, 0},   {-1, 1, 0}, {0, 1, 0},  {1, 1, 0}};
static const tap taps7[7] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};

void gpb_stencil_of(enum kernel k, const tap **taps, const double **w, int *m)
{
    *taps = k == K_JACOBI ? taps5 : k == K_ST3X3 ? taps9 : taps7;
    *w = k == K_JACOBI ? w_jacobi : k == K_ST3X3 ? w_3x3 : w_7;
    *m = k == K_JACOBI ? 5 : k == K_ST3X3 ? 9 : 7;
}

/* Every cell of a stencil's out against a sum in double of the input hx: edge cells exactly
 * (they are copied), inner cells within the bound of an m-term dot product in f32 (whatever
 * the order or fusing) plus that of the reference's own sum in double; each product w x is
 * exact in double (24-bit x, weights of at most 5 bits). */
int gpb_check_stencil(enum kernel k, size_t side, const float *out, result *r, const char *who)
{
    const tap *taps;
    const double *w;
    int m;
    gpb_stencil_of(k, &taps, &w, &m);
    size_t nx = side, ny = side, nz = kd[k].shape == GRID3 ? side : 1;
    double g = gpb_gamma_m(m, 0x1p-24) + gpb_gamma_m(m, 0x1p-53);
    char msg[200];
    for (size_t z = 0; z < nz; z++)
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++) {
                size_t i = x + nx * (y + ny * z);
                int edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1 || (nz > 1 && (z == 0 || z == nz - 1));
                if (edge) {
                    if (memcmp(&out[i], &hx[i], sizeof *out)) {
                        snprintf(msg, sizeof msg, "edge cell (%zu,%zu,%zu) = %.9g, want it unchanged, %.9g", x, y,
                                 z, out[i], hx[i]);
                        return gpb_check_failed(r, who, msg);
                    }
                    continue;
                }
                double ref = 0, mag = 0;
                for (int t = 0; t < m; t++) {
                    double p = w[t] * hx[i + (ptrdiff_t)taps[t].dx + (ptrdiff_t)nx * (taps[t].dy + (ptrdiff_t)ny *
                                                                                                      taps[t].dz)];
                    ref += p;
                    mag += fabs(p);
                }
                if (!(fabs(out[i] - ref) <= g * mag)) {
                    snprintf(msg, sizeof msg, "cell (%zu,%zu,%zu) = %.9g, want %.9g within %.3g", x, y, z, out[i],
                             ref, g * mag);
                    return gpb_check_failed(r, who, msg);
                }
            }
    return 0;
}

