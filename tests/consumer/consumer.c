/* A program built against an installed gpuport (tests/install.sh builds it with pkg-config and
 * with find_package): it must find a device and get plain C's answer from it. */
#include <gpuport.h>
#include <stdio.h>

int main(void)
{
    enum { N = 1000 };
    float x[N], back[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    gp_device *dev;
    gp_buffer *b;
    gp_scalar two = {.f = 2.0};
    if (gp_device_default(&dev) != GP_SUCCESS || gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof x, &b) != GP_SUCCESS ||
        gp_buffer_write(NULL, b, 0, x, sizeof x) != GP_SUCCESS ||
        gp_map(NULL, GP_MAP_SCALE, GP_F32, N, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &two) != GP_SUCCESS ||
        gp_buffer_read(NULL, b, 0, back, sizeof back) != GP_SUCCESS) {
        fprintf(stderr, "consumer: %s\n", gp_last_error());
        return 1;
    }
    for (int i = 0; i < N; i++)
        if (back[i] != 2.0f * x[i]) {
            fprintf(stderr, "consumer: element %d is %g, expected %g\n", i, back[i], 2.0f * x[i]);
            return 1;
        }
    gp_buffer_destroy(b);
    printf("consumer: gpuport %s, 1000 elements doubled right\n", gp_version_string());
    return 0;
}
