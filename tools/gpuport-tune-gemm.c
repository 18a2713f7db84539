/* gpuport-tune-gemm: times every candidate tile shape of gpuport's GEMM kernel on one device and
 * type, prints each one's GFLOP/s and the winner, and saves the winner with the kernel cache,
 * where every later gp_gemm on the device finds it. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <gpuport.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--device SPEC] [--type f32|f64] [--size N]\n", argv0);
    return 2;
}

int main(int argc, char **argv)
{
    const char *spec = NULL;
    gp_type type = GP_F32;
    long size = 2048;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) spec = argv[++i];
        else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
            const char *t = argv[++i];
            if (strcmp(t, "f32") == 0) type = GP_F32;
            else if (strcmp(t, "f64") == 0) type = GP_F64;
            else return usage(argv[0]);
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            char *end;
            size = strtol(argv[++i], &end, 10);
            if (*end || size < 1) return usage(argv[0]);
        } else {
            return usage(argv[0]);
        }
    }
    /* The library reports every candidate under the debug topic "tune", read at its first use. */
    const char *debug = getenv("GPUPORT_DEBUG");
    char topics[512];
    snprintf(topics, sizeof topics, "%s%stune", debug ? debug : "", debug && *debug ? "," : "");
    setenv("GPUPORT_DEBUG", topics, 1);

    gp_device *dev;
    gp_stream *stream;
    gp_device_info info;
    gp_status st = spec ? gp_device_find(spec, &dev) : gp_device_default(&dev);
    if (st == GP_SUCCESS) st = gp_device_get_info(dev, &info);
    if (st == GP_SUCCESS) st = gp_stream_create(dev, &stream);
    if (st != GP_SUCCESS) {
        fprintf(stderr, "gpuport-tune-gemm: %s\n", gp_last_error());
        return 1;
    }
    printf("gpuport-tune-gemm: %s:%zu (%s), %s, n = %ld\n", info.backend, info.backend_index, info.name,
           type == GP_F32 ? "f32" : "f64", size);
    fflush(stdout);
    gp_gemm_params best;
    double gflops;
    st = gp_gemm_tune(stream, type, (size_t)size, &best, &gflops);
    gp_stream_destroy(stream);
    if (st != GP_SUCCESS) {
        fprintf(stderr, "gpuport-tune-gemm: %s\n", gp_last_error());
        return 1;
    }
    printf("winner: %u,%u,%u,%u,%u at %.1f GFLOP/s (saved; GPUPORT_GEMM_PARAMS=\"%s:%u,%u,%u,%u,%u\" forces it)\n",
           best.tile_m, best.tile_n, best.tile_k, best.work_m, best.work_n, gflops, type == GP_F32 ? "f32" : "f64",
           best.tile_m, best.tile_n, best.tile_k, best.work_m, best.work_n);
    return 0;
}
