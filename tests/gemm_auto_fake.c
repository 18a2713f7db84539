/* GP_GEMM_AUTO's rule on CUDA devices (gpuport.h), over the fake CUDA driver (tests/fake_cuda.c),
 * whose cuBLAS computes and whose kernel launches run nothing: C changes exactly where AUTO took
 * cuBLAS. cuBLAS for f64 and for f32 below 2048^3 multiply-adds; gpuport's kernel at 2048^3 and
 * wherever GPUPORT_GEMM=gpuport. The H100 checks the products themselves (gemm_auto_env).
 * Then the split of small products (gemm.c's split_rounds), read from the launches that
 * GPUPORT_DEBUG=launch reports: SGEMM's there, and with the argument `opencl` DGEMM's on NVIDIA's
 * OpenCL, as pocl's device dressed as such a GPU by the fault plugin (GPUPORT_FAULT_AS) runs it. */
#include <gpuport.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

/* Whether AUTO's product of n x n matrices of type t wrote C (cuBLAS ran). */
static int vendor_ran(gp_device *dev, gp_type t, size_t n)
{
    size_t bytes = n * n * gp_type_size(t);
    unsigned char *c = malloc(bytes);
    gp_buffer *ab = NULL, *cb = NULL;
    int ran = -1;
    if (c && !gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &ab) && !gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &cb)) {
        for (size_t i = 0; i < bytes; i++) c[i] = 0x3c; /* a non-zero product of A with itself */
        if (!gp_buffer_write(NULL, ab, 0, c, bytes) && !gp_buffer_write(NULL, cb, 0, c, bytes) &&
            !gp_gemm(NULL, GP_GEMM_AUTO, t, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, n, n, n, 1, GP_VIEW(ab), n,
                     GP_VIEW(ab), n, 0, GP_VIEW(cb), n) &&
            !gp_buffer_read(NULL, cb, 0, c, bytes))
            ran = c[0] != 0x3c || c[1] != 0x3c || c[2] != 0x3c || c[3] != 0x3c;
    }
    if (ran < 0) fprintf(stderr, "gemm_auto_fake: %s\n", gp_last_error());
    gp_buffer_destroy(ab);
    gp_buffer_destroy(cb);
    free(c);
    return ran;
}

static void expect(gp_device *dev, gp_type t, size_t n, int want, const char *what)
{
    int got = vendor_ran(dev, t, n);
    if (got != want) {
        fprintf(stderr, "gemm_auto_fake: %s at N = %zu: AUTO took %s, expected %s\n", what, n,
                got < 0 ? "(failed)" : got ? "cuBLAS" : "gpuport's kernel", want ? "cuBLAS" : "gpuport's kernel");
        failures++;
    }
}

/* What GPUPORT_DEBUG=launch wrote while gp_gemm ran gpuport's kernel on an m x n x k product of
 * type t (malloc'ed, or NULL). */
static char *launches(gp_device *dev, gp_type t, size_t m, size_t n, size_t k)
{
    size_t bytes = (m * k + k * n + m * n) * gp_type_size(t), got = 0;
    gp_buffer *x = NULL;
    FILE *log = tmpfile();
    char *text = malloc(65536);
    int saved = dup(2), ok = log && text && saved >= 0 && !gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &x);
    if (ok) {
        fflush(stderr);
        dup2(fileno(log), 2);
        ok = !gp_gemm(NULL, GP_GEMM_GPUPORT, t, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, m, n, k, 1, GP_VIEW(x), k,
                      GP_VIEW_AT(x, m * k), n, 0, GP_VIEW_AT(x, m * k + k * n), n) &&
             !gp_device_synchronize(dev);
        fflush(stderr);
        dup2(saved, 2);
        rewind(log);
        got = fread(text, 1, 65535, log);
    }
    if (!ok) fprintf(stderr, "gemm_auto_fake: %s\n", gp_last_error());
    if (saved >= 0) close(saved);
    if (log) fclose(log);
    gp_buffer_destroy(x);
    if (text) text[got] = '\0';
    if (!ok) free(text);
    return ok ? text : NULL;
}

/* Whether gp_gemm on m x n x k split k (its slices are summed by gp_gemm_sum) as want says, and
 * where it did, into the launch expected. */
static void expect_split(gp_device *dev, gp_type t, size_t m, size_t n, size_t k, const char *want)
{
    char *log = launches(dev, t, m, n, k);
    int split = log && strstr(log, "gp_gemm_sum on ") != NULL;
    if (!log || split != (want != NULL) || (want && !strstr(log, want))) {
        fprintf(stderr, "gemm_auto_fake: %s %zu x %zu x %zu: expected %s%s; the launches:\n%s\n",
                t == GP_F64 ? "f64" : "f32", m, n, k, want ? "the split " : "no split", want ? want : "",
                log ? log : "(failed)");
        failures++;
    }
    free(log);
}

int main(int argc, char **argv)
{
    setenv("GPUPORT_DEBUG", "launch", 1); /* read at the first call; only launches() keeps its lines */
    unsetenv("GPUPORT_GEMM_PARAMS"); /* the table's choices, whatever the caller's environment asks */
    unsetenv("GPUPORT_GEMM_SPLIT");
    int opencl = argc > 1 && strcmp(argv[1], "opencl") == 0;
    gp_device *dev;
    if (gp_device_find(opencl ? "opencl:0" : "cuda:0", &dev)) {
        fprintf(stderr, "gemm_auto_fake: %s\n", gp_last_error());
        return opencl ? 77 : 1; /* no OpenCL device here; the fake CUDA driver is always there */
    }
    if (opencl) {
        /* An NVIDIA GPU of 132 SMs through OpenCL: f64's 128 x 128 tiles, one group of which fills
         * an SM, are spread over slices of k where a product has fewer of them than SMs and the
         * slices take fewer rounds: 64 tiles in 2 slices at N = 1024, 36 in 3 at 768; at 1280 two
         * slices of 100 tiles would take as many rounds as one, and it is not split. */
        expect_split(dev, GP_F64, 1024, 1024, 1024, "gp_gemm on opencl:0: groups 64x2x1 of 256x1x1");
        expect_split(dev, GP_F64, 768, 768, 768, "gp_gemm on opencl:0: groups 36x3x1 of 256x1x1");
        expect_split(dev, GP_F64, 1280, 1280, 1280, NULL);
        if (!failures) printf("gemm_auto_fake: small DGEMM products on NVIDIA's OpenCL split k where gemm.c says\n");
        return failures ? 1 : 0;
    }
    expect(dev, GP_F32, 64, 1, "f32");
    expect(dev, GP_F64, 64, 1, "f64");
    expect(dev, GP_F32, 2048, 0, "f32");
    setenv("GPUPORT_GEMM", "gpuport", 1);
    expect(dev, GP_F64, 64, 0, "f64 with GPUPORT_GEMM=gpuport");
    /* The fake device has 4 SMs. 128 x 256 is 4 tiles of 64 x 128, fewer than two an SM: with 128
     * steps of k it runs in two slices (the fewest rounds, a tenth of a round a slice), with 64
     * (fewer than 96) unsplit, and f64 has no such split. */
    expect_split(dev, GP_F32, 128, 256, 1024, "gp_gemm on cuda:0: groups 4x2x1 of 128x1x1");
    expect_split(dev, GP_F32, 128, 256, 512, NULL);
    expect_split(dev, GP_F64, 128, 256, 1024, NULL);
    if (!failures)
        printf("gemm_auto_fake: AUTO took cuBLAS and gpuport's kernel where gpuport.h says, and small SGEMM "
               "products split k\n");
    return failures ? 1 : 0;
}
