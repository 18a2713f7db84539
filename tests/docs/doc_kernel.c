/* gpuport-doc-kernel FILE [OPTIONS]: compiles the kernel source in FILE with OPTIONS on every
 * device, as the docs' kernel snippets promise they compile; exit 1 on any failure, 77 with no
 * device. */
#include <gpuport.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [OPTIONS]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    static char src[1 << 20];
    size_t n = f ? fread(src, 1, sizeof src - 1, f) : 0;
    if (!f || ferror(f)) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    src[n] = '\0';
    size_t count = 0;
    if (gp_device_count(&count) != GP_SUCCESS || count == 0) {
        printf("no device here; skipping\n");
        return 77;
    }
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        gp_device *dev;
        gp_device_info info;
        gp_program *p = NULL;
        gp_device_get(i, &dev);
        gp_device_get_info(dev, &info);
        gp_status st = gp_program_create(dev, src, argc > 2 && argv[2][0] ? argv[2] : NULL, &p);
        printf("%s:%zu (%s): %s\n", info.backend, info.backend_index, info.name, gp_status_name(st));
        if (st != GP_SUCCESS) {
            printf("%s\n", gp_last_error());
            failed = 1;
        }
        gp_program_destroy(p);
    }
    return failed;
}
