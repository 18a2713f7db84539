/* The host anchor for CPU devices (pocl): plain C loops over host memory, parallel with OpenMP
 * where the compiler has it, for gpuport-bench to time beside gpuport on the same cores. */
#ifndef GPUPORT_BENCH_ANCHOR_CPU_H
#define GPUPORT_BENCH_ANCHOR_CPU_H

#include <stddef.h>

/* "C loop, OpenMP 201511, 2 threads" or "C loop, 1 thread (no OpenMP)". */
void gpa_cpu_describe(char *text, size_t len);
void gpa_cpu_copy(float *out, const float *x, size_t n);
void gpa_cpu_axpy(float *out, float a, const float *x, const float *y, size_t n);
float gpa_cpu_sum(const float *x, size_t n);
/* Inclusive prefix sums of x into out, in two parallel passes (chunk sums, then chunk scans). */
void gpa_cpu_scan(float *out, const float *x, size_t n);
/* Stencils on nx x ny (x fastest) or n^3 grids, weights in gpuport.h's order; edge cells are
 * copied, as GP_BOUNDARY_FIXED does. */
void gpa_cpu_stencil5(float *out, const float *in, size_t nx, size_t ny, const float w[5]);
void gpa_cpu_stencil9(float *out, const float *in, size_t nx, size_t ny, const float w[9]);
void gpa_cpu_stencil7(float *out, const float *in, size_t n, const float w[7]);
/* c = a b, all n x n and row-major: a cache-blocked loop, vectorized for the host's widest units. */
void gpa_cpu_sgemm(float *c, const float *a, const float *b, size_t n);
void gpa_cpu_dgemm(double *c, const double *a, const double *b, size_t n);

#endif
