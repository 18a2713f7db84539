/* Kernel-dialect source as core reads it for a kernel's parameters (backends whose runtime cannot
 * count them): any text gives a count or "unknown", never a read past its end. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* "name\0source" */
    const unsigned char *nul = memchr(data, 0, size);
    if (!nul) return 0;
    char *name = fuzz_text(data, (size_t)(nul - data));
    char *src = fuzz_text(nul + 1, size - (size_t)(nul - data) - 1);
    size_t n = gp__count_params(src, name);
    if (n != (size_t)-1) FUZZ_REQUIRE(n <= strlen(src));
    free(name);
    free(src);
    return 0;
}
