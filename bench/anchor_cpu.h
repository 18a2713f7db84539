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

#endif
