/* The heat problem of heat_diffusion and heat_diffusion_mpi: an N x N plate, h = 1/N, a heat
 * source f = 10000 in the centre cell, u = 0 on the edges; each step sets
 * u' = (u_n + u_s + u_e + u_w + h^2 f) / 4 inside, until the L2 norm of u' - u falls below 1e-4.
 * Here: the stencil, a plain C solver, and the check of a device's answer against it. */
#ifndef GPUPORT_EXAMPLES_HEAT_H
#define GPUPORT_EXAMPLES_HEAT_H

#include <gpuport.h>

#define HEAT_SOURCE 10000.0
#define HEAT_TOLERANCE 1e-4

/* The Jacobi step as a gpuport stencil (5-point, fixed edges, the source term's weight). */
gp_stencil heat_stencil(gp_type type, size_t n);

/* The plain C solver: `steps` steps from u = 0, each rounded to float with f32 as a device
 * stores it. The norm of u' - u after each multiple of `every` and after the last step goes to
 * norms[], one per check. Returns u (free it), or NULL without memory. */
double *heat_host_solve(size_t n, int f32, size_t steps, size_t every, double *norms);

/* The largest |dev - host| over the n x n field; *bound gets how far they may be apart after
 * `steps` steps. */
double heat_field_error(size_t n, const double *dev, const double *host, int f32, size_t steps, double *bound);

/* Prints the run's line (steps, norm, centre), solves with plain C for the same steps, prints
 * its line and whether the field and the stopping step agree, and writes the field as a PGM heat
 * map to out (when not NULL and correct). 0 when correct. */
int heat_report(size_t n, int f32, size_t every, size_t steps, double norm, const double *field, const char *out);

#endif
