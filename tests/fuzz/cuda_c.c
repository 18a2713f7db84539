/* CUDA C as the OpenCL translation reads it (gp_program_create_cuda): any text is translated or
 * refused with a message, never read past its end; a translation is text whose kernels' parameters
 * core can read, and the includes CUDA and HIP drop leave the text's lines as they were. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *src = fuzz_text(data, size);
    char *out = NULL;
    gp__cuda_globals globals;
    gp_status st = gp__cuda_to_dialect(src, &out, &globals);
    FUZZ_REQUIRE(st == GP_SUCCESS || st == GP_ERROR_BUILD_FAILED || st == GP_ERROR_OUT_OF_HOST_MEMORY);
    FUZZ_REQUIRE((st == GP_SUCCESS) == (out != NULL));
    FUZZ_REQUIRE(globals.n <= GP__MAX_GLOBALS);
    FUZZ_REQUIRE(st == GP_SUCCESS || gp_last_error()[0]);
    if (out) {
        gp_kernel_param p[8];
        int readable;
        gp__parse_params(out, NULL, 0, "k", p, 8, &readable);
        free(out);
    }
    char *blank = gp__cuda_without_includes(src);
    FUZZ_REQUIRE(blank && strlen(blank) == strlen(src));
    for (size_t i = 0; src[i]; i++) FUZZ_REQUIRE((src[i] == '\n') == (blank[i] == '\n'));
    free(blank);
    free(src);
    return 0;
}
