/* Kernel-dialect source as core reads it for a kernel's parameters: any text (and any -D words
 * given with it) gives parameters or "unknown", never a read past its end; what is read is
 * well formed. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* "name\0source" */
    const unsigned char *nul = memchr(data, 0, size);
    if (!nul) return 0;
    char *name = fuzz_text(data, (size_t)(nul - data));
    char *src = fuzz_text(nul + 1, size - (size_t)(nul - data) - 1);
    static const char *const defines[] = {"-DT=float", "-DN=4", "-DU=unsigned int", "-DE"};
    gp_kernel_param p[8];
    int readable = 0;
    size_t n = gp__parse_params(src, defines, 4, name, p, 8, &readable);
    if (n != (size_t)-1) FUZZ_REQUIRE(n <= strlen(src));
    for (size_t i = 0; readable && i < n && i < 8; i++) {
        FUZZ_REQUIRE(p[i].kind >= GP_ARG_BUFFER && p[i].kind <= GP_ARG_LOCAL);
        FUZZ_REQUIRE(memchr(p[i].name, 0, sizeof p[i].name) && memchr(p[i].type_name, 0, sizeof p[i].type_name));
        FUZZ_REQUIRE(p[i].type == GP_TYPE_NONE || gp_type_size(p[i].type) == p[i].size || p[i].kind != GP_ARG_VALUE);
    }
    free(name);
    free(src);
    return 0;
}
