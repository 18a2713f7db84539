/* Proves a program may end with its work still queued: it returns from main (or calls exit)
 * right after a kernel's first launch, a built-in primitive's, or a large copy, and must end
 * with status 0 and nothing on stderr (tests/exit.sh runs it many times with a cold cache).
 * Usage: gpuport-test-exit DEVICE kernel|exit|map|copy */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuport.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != GP_SUCCESS) {                                                                \
            fprintf(stderr, "%s: %s\n", #call, gp_last_error());                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

enum { N = 1 << 20 };

static int launch(gp_device *dev, gp_buffer *x)
{
    /* a source no cache has seen (gpuport's nor pocl's): the first launch compiles */
    char source[256];
    snprintf(source, sizeof source,
             "GP_KERNEL void twice(GP_GLOBAL float *x, uint n) { uint i = gp_global_id(0);"
             " if (i < n) x[i] = x[i] * 2.0f + %ld.0f; }",
             (long)getpid() * 1000 + (long)(clock() % 1000));
    gp_program *program;
    gp_kernel *kernel;
    TRY(gp_program_create(dev, source, NULL, &program));
    TRY(gp_kernel_create(program, "twice", &kernel));
    unsigned n = N;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(x), GP_VALUE(n)};
    TRY(gp_kernel_launch(NULL, kernel, 1, &global, NULL, 2, args));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DEVICE kernel|exit|map|copy\n", argv[0]);
        return 2;
    }
    gp_device *dev;
    gp_buffer *x, *y;
    TRY(gp_device_find(argv[1], &dev));
    TRY(gp_buffer_create(dev, GP_MEMORY_DEVICE, N * sizeof(float), &x));
    TRY(gp_buffer_create(dev, GP_MEMORY_DEVICE, N * sizeof(float), &y));
    const char *mode = argv[2];
    if (strcmp(mode, "kernel") == 0) return launch(dev, x);
    if (strcmp(mode, "exit") == 0) exit(launch(dev, x));
    if (strcmp(mode, "map") == 0) {
        gp_scalar two = {.f = 2.0};
        TRY(gp_map(NULL, GP_MAP_AXPY, GP_F32, N, GP_VIEW(y), GP_VIEW(x), GP_VIEW(y), &two));
        return 0;
    }
    if (strcmp(mode, "copy") == 0) {
        static float host[N]; /* outlives main, as the queued write needs */
        TRY(gp_buffer_write_async(NULL, x, 0, host, sizeof host));
        TRY(gp_buffer_copy_async(NULL, y, 0, x, 0, sizeof host));
        return 0;
    }
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
}
