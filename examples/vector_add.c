/* vector_add: the hello world of gpuport. Adds two vectors on the default device (or the one
 * named by --device / GPUPORT_DEVICE) and checks the sum on the host. */
#include <gpuport.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char vector_add_source[]; /* vector_add.gp, embedded by the build */

#define CHECK(call)                                                                            \
    do {                                                                                       \
        gp_status st_ = (call);                                                                \
        if (st_ != GP_SUCCESS) {                                                               \
            fprintf(stderr, "%s failed: %s: %s\n", #call, gp_status_name(st_), gp_last_error()); \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    unsigned n = 1u << 20;
    const char *spec = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--device") == 0) spec = argv[i + 1];
        else if (strcmp(argv[i], "--n") == 0) n = (unsigned)strtoul(argv[i + 1], NULL, 10);
    }

    gp_device *dev;
    CHECK(spec ? gp_device_find(spec, &dev) : gp_device_default(&dev));
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));

    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) return 1;
    for (unsigned i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }

    gp_buffer *da, *db, *dc;
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, n * sizeof(float), &da));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, n * sizeof(float), &db));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, n * sizeof(float), &dc));
    CHECK(gp_buffer_write(NULL, da, 0, a, n * sizeof(float)));
    CHECK(gp_buffer_write(NULL, db, 0, b, n * sizeof(float)));

    gp_program *prog;
    gp_kernel *kernel;
    CHECK(gp_program_create(dev, vector_add_source, NULL, &prog));
    CHECK(gp_kernel_create(prog, "vector_add", &kernel));

    gp_event *start, *stop;
    CHECK(gp_event_create(dev, &start));
    CHECK(gp_event_create(dev, &stop));
    size_t global = n;
    gp_arg args[] = {GP_BUFFER(da), GP_BUFFER(db), GP_BUFFER(dc), GP_VALUE(n)};
    CHECK(gp_event_record(start, NULL));
    CHECK(gp_kernel_launch(NULL, kernel, 1, &global, NULL, 4, args));
    CHECK(gp_event_record(stop, NULL));
    CHECK(gp_buffer_read(NULL, dc, 0, c, n * sizeof(float)));
    double ms;
    CHECK(gp_event_elapsed_ms(start, stop, &ms));

    unsigned bad = 0;
    for (unsigned i = 0; i < n; i++) bad += c[i] != 3.0f * (float)i;
    printf("vector_add on %s:%zu (%s): n = %u, %.3f ms, %.1f GB/s, %s\n", info.backend, info.backend_index,
           info.name, n, ms, ms > 0 ? 3.0 * n * sizeof(float) / (ms * 1e6) : 0.0, bad ? "WRONG" : "correct");

    gp_event_destroy(start);
    gp_event_destroy(stop);
    gp_kernel_destroy(kernel);
    gp_program_destroy(prog);
    gp_buffer_destroy(da);
    gp_buffer_destroy(db);
    gp_buffer_destroy(dc);
    free(a);
    free(b);
    free(c);
    return bad ? 1 : 0;
}
