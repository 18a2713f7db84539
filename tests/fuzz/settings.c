/* The GPUPORT_* settings: GPUPORT_GEMM_PARAMS, the number lists of GPUPORT_STENCIL_TILE and of the
 * saved tune results, and GPUPORT_DEBUG's topics. Numbers are read exactly or refused, never
 * wrapped; a refusal says why. */
#include "fuzz.h"

/* The same number, read independently: 1 when text[0..len) is digits whose value is <= max. */
static int exact(const char *text, size_t len, unsigned long long max, unsigned long long *value)
{
    unsigned long long v = 0;
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') return 0;
        if (v > max / 10 || v * 10 > max - (unsigned long long)(text[i] - '0')) return 0;
        v = v * 10 + (unsigned long long)(text[i] - '0');
    }
    *value = v;
    return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = fuzz_text(data, size), why[128];
    gp_gemm_params p[2];
    int set[2];
    why[0] = '\0';
    if (gp__parse_gemm_params(text, p, set, why, sizeof why)) {
        FUZZ_REQUIRE(set[0] || set[1] || text[0] == '\0');
        for (int t = 0; t < 2; t++) {
            if (!set[t]) continue;
            /* Each value is one of the numbers in the text as written, below the limit. */
            const unsigned *v = &p[t].tile_m;
            for (int i = 0; i < 5; i++) FUZZ_REQUIRE(v[i] <= GP__PARSE_MAX);
        }
    } else {
        FUZZ_REQUIRE(why[0] != '\0');
    }

    unsigned list[3];
    const char *s = text;
    if (gp__parse_list(&s, ',', list, 3, 1024)) {
        /* Re-read the three numbers by hand and compare. */
        const char *q = text;
        for (int i = 0; i < 3; i++) {
            size_t len = strspn(q, "0123456789");
            unsigned long long v;
            FUZZ_REQUIRE(exact(q, len, 1024, &v) && v == list[i]);
            q += len;
            if (i < 2) FUZZ_REQUIRE(*q++ == ',');
        }
        FUZZ_REQUIRE(q == s);
    }

    static const char *const topics[] = {"load", "compile", "launch", "error", "gemm"};
    for (size_t i = 0; i < sizeof topics / sizeof topics[0]; i++) {
        int on = gp__topic_listed(text, topics[i]);
        /* on exactly when the list is "all" or "1", or one comma-separated entry is the topic */
        int want = strcmp(text, "all") == 0 || strcmp(text, "1") == 0;
        for (const char *e = text; !want && *e;) {
            size_t len = strcspn(e, ",");
            want = len == strlen(topics[i]) && strncmp(e, topics[i], len) == 0;
            e += len + (e[len] == ',');
        }
        FUZZ_REQUIRE(on == want);
    }
    free(text);
    return 0;
}
