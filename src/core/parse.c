/* The text gpuport reads from users: numbers in settings, GPUPORT_GEMM_PARAMS, device names and
 * GPUPORT_DEBUG topics. Pure functions of their input, so that tests/fuzz can drive each alone. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int gp__parse_number(const char **s, unsigned long long max, unsigned long long *out)
{
    const char *p = *s;
    unsigned long long v = 0;
    if (*p < '0' || *p > '9') return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10) return 0; /* would pass max: refused, never wrapped */
        v = v * 10 + d;
    }
    *out = v;
    *s = p;
    return 1;
}

int gp__parse_list(const char **s, char sep, unsigned *out, size_t n, unsigned max)
{
    const char *p = *s;
    for (size_t i = 0; i < n; i++) {
        unsigned long long v;
        if ((i > 0 && *p++ != sep) || !gp__parse_number(&p, max, &v)) return 0;
        out[i] = (unsigned)v;
    }
    *s = p;
    return 1;
}

int gp__parse_gemm_params(const char *text, gp_gemm_params p[2], int set[2], char *why, size_t len)
{
    set[0] = set[1] = 0;
    for (const char *s = text; *s;) {
        int t = strncmp(s, "f32:", 4) == 0 ? 0 : strncmp(s, "f64:", 4) == 0 ? 1 : -1;
        unsigned v[5];
        if (t < 0) {
            snprintf(why, len, "'%.16s' does not start with f32: or f64:", s);
            return 0;
        }
        if (set[t]) {
            snprintf(why, len, "%s is given twice", t ? "f64" : "f32");
            return 0;
        }
        s += 4;
        if (!gp__parse_list(&s, ',', v, 5, GP__PARSE_MAX)) {
            snprintf(why, len, "%s needs five numbers from 0 to %u, separated by commas", t ? "f64" : "f32",
                     GP__PARSE_MAX);
            return 0;
        }
        if (*s && *s != ';') {
            snprintf(why, len, "'%.16s' follows the numbers; entries are separated by ';'", s);
            return 0;
        }
        p[t] = (gp_gemm_params){v[0], v[1], v[2], v[3], v[4]};
        set[t] = 1;
        s += *s == ';';
    }
    return 1;
}

int gp__parse_device_spec(const char *spec, char backend[16], size_t *index)
{
    if (strcmp(spec, "gpu") == 0) return GP__SPEC_GPU;
    if (strcmp(spec, "cpu") == 0) return GP__SPEC_CPU;
    size_t blen = strcspn(spec, ":");
    if (blen == 0 || blen >= 16) return 0;
    for (size_t i = 0; i < blen; i++)
        if (!((spec[i] >= 'a' && spec[i] <= 'z') || (spec[i] >= '0' && spec[i] <= '9'))) return 0;
    memcpy(backend, spec, blen);
    backend[blen] = '\0';
    *index = 0;
    if (!spec[blen]) return GP__SPEC_BACKEND;
    const char *num = spec + blen + 1;
    unsigned long long v;
    if (!gp__parse_number(&num, SIZE_MAX, &v) || *num) return 0;
    *index = (size_t)v;
    return GP__SPEC_BACKEND;
}

int gp__topic_listed(const char *list, const char *topic)
{
    if (!list || !*list) return 0;
    if (strcmp(list, "all") == 0 || strcmp(list, "1") == 0) return 1;
    size_t n = strlen(topic);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, topic, n) == 0) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

int gp__check_user_code(const char *text, int statements, char *why, size_t len)
{
    char stack[64];
    size_t depth = 0;
    /* Trigraphs (??/ is a backslash) and line splices act before comments and literals are
     * seen, so they are refused anywhere; a backslash is only an escape inside a literal. */
    if (strstr(text, "??")) {
        snprintf(why, len, "'?\?' is not allowed (trigraphs)");
        return 0;
    }
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (c == '/' && p[1] == '/') {
            size_t n = strcspn(p, "\n\\");
            if (p[n] == '\\') {
                snprintf(why, len, "a backslash is not allowed in a comment (line splices)");
                return 0;
            }
            p += n;
            if (!*p) break;
        } else if (c == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (!end) {
                snprintf(why, len, "a /* comment is not closed");
                return 0;
            }
            if (memchr(p, '\\', (size_t)(end - p))) {
                snprintf(why, len, "a backslash is not allowed in a comment (line splices)");
                return 0;
            }
            p = end + 1;
        } else if (c == '"' || c == '\'') {
            for (p++; *p && *p != c && *p != '\n'; p++)
                if (*p == '\\' && p[1] && p[1] != '\n') p++;
            if (*p != c) {
                snprintf(why, len, "a %s literal is not closed on its line", c == '"' ? "string" : "character");
                return 0;
            }
        } else if (c == '#' || c == '\\' || (c == '%' && (p[1] == '>' || p[1] == ':')) ||
                   (c == '<' && (p[1] == '%' || p[1] == ':')) || (c == ':' && p[1] == '>')) {
            snprintf(why, len, "'%.*s' is not allowed: no preprocessor lines, line splices or digraphs",
                     c == '#' || c == '\\' ? 1 : 2, p);
            return 0;
        } else if (c == '(' || c == '[' || (c == '{' && statements)) {
            if (depth == sizeof stack) {
                snprintf(why, len, "brackets nest deeper than %zu", sizeof stack);
                return 0;
            }
            stack[depth++] = c;
        } else if (c == ')' || c == ']' || (c == '}' && statements)) {
            char open = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (depth == 0 || stack[depth - 1] != open) {
                snprintf(why, len, "'%c' closes nothing opened in the text (%s)", c,
                         statements ? "a snippet stays inside its loop body" : "an expression stays inside its parentheses");
                return 0;
            }
            depth--;
        } else if (!statements && (c == '{' || c == '}' || c == ';')) {
            snprintf(why, len, "'%c' is not allowed in an expression", c);
            return 0;
        }
    }
    if (depth) {
        snprintf(why, len, "'%c' is not closed", stack[depth - 1]);
        return 0;
    }
    return 1;
}

size_t gp__count_params(const char *src, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *p = src ? strstr(src, "GP_KERNEL") : NULL; p; p = strstr(p + 1, "GP_KERNEL")) {
        const char *q = p + strlen("GP_KERNEL");
        while (isspace((unsigned char)*q)) q++;
        if (strncmp(q, "void", 4) != 0) continue;
        q += 4;
        while (isspace((unsigned char)*q)) q++;
        if (strncmp(q, name, nlen) != 0) continue;
        q += nlen;
        while (isspace((unsigned char)*q)) q++;
        if (*q != '(') continue;
        size_t commas = 0, depth = 0;
        int words = 0;
        for (q++; *q && !(*q == ')' && depth == 0); q++) {
            if (*q == '(') depth++;
            else if (*q == ')') depth--;
            else if (*q == ',' && depth == 0) commas++;
            else if (!isspace((unsigned char)*q)) words = 1;
        }
        if (!*q) return (size_t)-1;
        return words ? commas + 1 : 0;
    }
    return (size_t)-1;
}
