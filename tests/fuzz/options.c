/* Build options and the source they are joined to: options are refused, or each becomes exactly
 * one "#define NAME VALUE" line between the prelude and "#line 1", so no option can add a line,
 * join the next one, or start a comment that swallows the caller's source. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* The input is "options\0source": the options, and what follows them as the source. */
    const unsigned char *nul = memchr(data, 0, size);
    size_t olen = nul ? (size_t)(nul - data) : size;
    char *opts = fuzz_text(data, olen);
    char *source = nul ? fuzz_text(nul + 1, size - olen - 1) : fuzz_text(data, 0);
    const char *words[64];
    size_t n = 0;
    if (gp__parse_options(opts, words, &n) == GP_SUCCESS) {
        static const char prelude[] = "#define GP_PRELUDE 1";
        char *full = gp__compose_source(prelude, words, n, source);
        FUZZ_REQUIRE(full);
        const char *p = full;
        FUZZ_REQUIRE(strncmp(p, prelude, strlen(prelude)) == 0 && p[strlen(prelude)] == '\n');
        p += strlen(prelude) + 1;
        for (size_t i = 0; i < n; i++) {
            const char *eol = strchr(p, '\n');
            FUZZ_REQUIRE(eol && strncmp(p, "#define ", 8) == 0);
            for (const char *q = p; q < eol; q++) FUZZ_REQUIRE(*q != '\\' && !(q[0] == '/' && (q[1] == '*' || q[1] == '/')));
            /* the name is an identifier, then a space and a value, or the value 1 */
            const char *name = p + 8;
            FUZZ_REQUIRE((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_');
            p = eol + 1;
        }
        FUZZ_REQUIRE(strncmp(p, "#line 1\n", 8) == 0 && strcmp(p + 8, source) == 0);
        free(full);
    } else {
        FUZZ_REQUIRE(gp_last_error()[0] != '\0');
    }
    free(opts);
    free(source);
    return 0;
}
