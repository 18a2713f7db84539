/* gpuport-bench's shared parts: the kernels and their sizes, a result, the options, a device's
 * run and one job; bench.c says what the bench measures and how. */
#ifndef GPUPORT_BENCH_H
#define GPUPORT_BENCH_H

#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anchor_cpu.h"
#include "anchor_cuda.h"
#include "gpuport.h"

enum kernel { K_COPY, K_AXPY, K_REDUCE, K_SCAN, K_JACOBI, K_ST3X3, K_ST7, K_SGEMM, K_DGEMM, K_XCOPY, K_COUNT };
enum shape { LINE, GRID2, GRID3, GEMM };

struct kdesc {
    const char *name, *what;
    enum shape shape;
    unsigned passes;              /* bytes counted = passes * cells * 4; 0 for GEMM (2 N^3 flops) */
    size_t gpu, cpu, quick; /* default sizes: elements, side or N (GEMM: gemm_sizes, one when quick) */
};
extern const struct kdesc kd[K_COUNT];
extern const size_t gemm_sizes[5];
extern const float axpy_a;
extern const double w_jacobi[5], w_3x3[9], w_7[7];
extern const double budget_s;

#define MAX_DEVICES 64
#define MAX_SIZES 8

typedef struct figure {
    double median_ms, min_ms, rate; /* rate: GB/s, or GFLOP/s for GEMM */
} figure;

typedef struct result {
    char spec[24], device[128], backend[16];
    int nvidia_gpu;
    enum kernel k;
    size_t size;     /* elements, side or N */
    char shape[40];  /* "268435456", "8192x8192", "512x512x512" */
    int failed;      /* a call failed or a check did not pass (gpuport's or the anchor's) */
    int measured, anchor_measured;
    figure gp, an;
    char anchor[48];
    double vs_cuda; /* OpenCL on NVIDIA / gpuport's CUDA backend; 0 where not measured */
    char note[600];
} result;

typedef struct options {
    int reps; /* reported runs; one more is run and dropped */
    int reps_given, quick;
    size_t sizes[K_COUNT + 1][MAX_SIZES]; /* per kernel, then [K_COUNT] for every kernel */
    int nsizes[K_COUNT + 1];
    unsigned kernels; /* bit per enum kernel */
    int csv, json, list;
    const char *plot;
    const char *specs[MAX_DEVICES];
    int nspecs;
} options;
extern options opt;

extern result *results;
extern size_t nresults, nplanned;
extern FILE *banner; /* stdout for the table, stderr beside --csv and --json */
extern int progress_tty;

typedef struct dev_run {
    gp_device *dev;
    gp_device_info info;
    char spec[24];
    gp_stream *stream;
    gp_event **ev; /* 2 per run */
    int nev;
    int cuda_device; /* the CUDA anchor's device, -1 for none */
    int stream_ok;   /* its stream was made: the device works */
    char anchor_why[512];
    int gemm_vendor; /* gp_gemm_vendor_info found the vendor BLAS */
    char gemm_vendor_text[200];
    /* The last measured size of each kernel, gpuport's (0) and the anchor's (1), to foresee
     * whether the next size fits the budget. */
    struct {
        double work, ms;
    } last[K_COUNT][2];
} dev_run;

typedef struct job {
    dev_run *d;
    enum kernel k;
    size_t size, cells; /* cells: elements, or N^2 for GEMM */
    double work;        /* bytes or flops of one run */
    gp_buffer *buf[3];  /* 1D: x, y, out; stencils: in, out; GEMM: A, B, C */
    gp_stencil stencil;
} job;


extern const unsigned nan_bits; /* a NaN, so a kernel that writes nothing fails its check */

/* Host data (bandwidth.c): x and y, floats in [0,1); s: -1, 0 or +1; the host's output. */
extern float *hx, *hy, *hs, *hout;
extern size_t host_n;

typedef struct tap {
    int dx, dy, dz;
} tap;

/* The CUDA anchor library (anchors.c), opened at run time. */
typedef struct cuda_anchor {
    int tried, count;
    void *lib;
    char path[512], versions[256], why[512];
    gpa_cuda_run_fn run;
    gpa_cuda_peer_fn peer;
    gpa_cuda_device_name_fn device_name;
} cuda_anchor;
extern cuda_anchor cua;

/* The files, each calling only those above it here. */

/* util.c */
void gpb_note(result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gpb_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double gpb_now_ms(void);
figure gpb_summarize(double *ms, int reps, double work);
size_t gpb_elem_size(enum kernel k);
int gpb_over_budget(result *r, const char *who, double one_ms, const char *why);
int gpb_foreseen_over_budget(job *j, result *r, int anchor, const char *who);
void gpb_remember(job *j, int anchor, const figure *f);

/* bandwidth.c */
uint64_t gpb_mix(uint64_t z);
int gpb_host_data(size_t n);
double gpb_gamma_m(double m, double u);
int gpb_check_failed(result *r, const char *who, const char *msg);
int gpb_check_line(enum kernel k, size_t n, const float *out, result *r, const char *who);

/* stencils.c */
void gpb_stencil_of(enum kernel k, const tap **taps, const double **w, int *m);
int gpb_check_stencil(enum kernel k, size_t side, const float *out, result *r, const char *who);

/* gemm.c */
double gpb_gemm_value(int which, uint64_t idx);
int gpb_check_gemm(enum kernel k, size_t n, gp_stream *stream, gp_buffer *c, const void *host_c, result *r,
                   const char *who);
void gpb_gemm_host(const job *j, void **a, void **b, void **c);
void gpb_openblas_note(job *j, result *r, double *ms);

/* anchors.c */
int gpb_cuda_anchor_device(const gp_device_info *info, char *why, size_t why_len);
void gpb_anchor_cuda(result *r, int device, size_t n, double *ms);
void gpb_anchor_cpu(job *j, result *r, double *ms);

/* run.c */
gp_status gpb_setup(job *j);
int gpb_contains_nocase(const char *s, const char *word);
int gpb_sizes_for(enum kernel k, int cpu, size_t *sizes);
int gpb_sizes_of(enum kernel k, const gp_device_info *info, size_t *sizes);
void gpb_bench_device(dev_run *d, double *ms);

/* xcopy.c */
void gpb_bench_pairs(dev_run *runs, size_t ndevs, double *ms);

/* report.c */
void gpb_compare_with_cuda(void);
void gpb_report_machine(void);
void gpb_report_table(void);
int gpb_plot(const char *path);

/* bench.c */

#endif /* GPUPORT_BENCH_H */
