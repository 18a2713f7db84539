/* Device names as gp_device_find and GPUPORT_DEVICE take them: refused, or read into a lower-case
 * backend name of 1 to 15 characters and an index that is exactly the digits given. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *spec = fuzz_text(data, size), backend[16];
    memset(backend, 'x', sizeof backend);
    size_t index = 12345;
    int kind = gp__parse_device_spec(spec, backend, &index);
    FUZZ_REQUIRE(kind == 0 || kind == GP__SPEC_GPU || kind == GP__SPEC_CPU || kind == GP__SPEC_BACKEND);
    if (kind == GP__SPEC_GPU) FUZZ_REQUIRE(strcmp(spec, "gpu") == 0);
    if (kind == GP__SPEC_CPU) FUZZ_REQUIRE(strcmp(spec, "cpu") == 0);
    if (kind == GP__SPEC_BACKEND) {
        size_t n = strnlen(backend, sizeof backend);
        FUZZ_REQUIRE(n >= 1 && n < sizeof backend);
        FUZZ_REQUIRE(strncmp(spec, backend, n) == 0 && (spec[n] == '\0' || spec[n] == ':'));
        for (size_t i = 0; i < n; i++) FUZZ_REQUIRE((backend[i] >= 'a' && backend[i] <= 'z') || (backend[i] >= '0' && backend[i] <= '9'));
        if (spec[n] == ':') {
            char again[32];
            snprintf(again, sizeof again, "%zu", index);
            const char *digits = spec + n + 1;
            while (*digits == '0' && digits[1]) digits++; /* leading zeros read as the same number */
            FUZZ_REQUIRE(strcmp(again, digits) == 0);
        } else {
            FUZZ_REQUIRE(index == 0);
        }
    }
    free(spec);
    return 0;
}
