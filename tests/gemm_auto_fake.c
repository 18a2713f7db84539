/* GP_GEMM_AUTO's rule on CUDA devices (gpuport.h), over the fake CUDA driver (tests/fake_cuda.c),
 * whose cuBLAS computes and whose kernel launches run nothing: C changes exactly where AUTO took
 * cuBLAS. cuBLAS for f64 and for f32 below 2048^3 multiply-adds; gpuport's kernel at 2048^3 and
 * wherever GPUPORT_GEMM=gpuport. The H100 checks the products themselves (gemm_auto_env). */
#include <gpuport.h>

#include <stdio.h>
#include <stdlib.h>

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

int main(void)
{
    gp_device *dev;
    if (gp_device_find("cuda:0", &dev)) {
        fprintf(stderr, "gemm_auto_fake: %s\n", gp_last_error());
        return 1;
    }
    expect(dev, GP_F32, 64, 1, "f32");
    expect(dev, GP_F64, 64, 1, "f64");
    expect(dev, GP_F32, 2048, 0, "f32");
    setenv("GPUPORT_GEMM", "gpuport", 1);
    expect(dev, GP_F64, 64, 0, "f64 with GPUPORT_GEMM=gpuport");
    if (!failures) printf("gemm_auto_fake: AUTO took cuBLAS and gpuport's kernel where gpuport.h says\n");
    return failures ? 1 : 0;
}
