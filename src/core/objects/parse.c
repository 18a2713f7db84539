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

/* ---- Kernel parameters, read from the source ---- */

typedef struct word {
    const char *p;
    size_t n;
} word;

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int word_is(word w, const char *s) { return strlen(s) == w.n && strncmp(w.p, s, w.n) == 0; }

int gp__vector_safe(const char *e, int doubles)
{
    static const char *const names[] = {"x",     "y",    "z",     "a",     "b",     "fabs",     "fmin",  "fmax",
                                        "sqrt",  "rsqrt", "exp",  "exp2",  "log",   "log2",     "log10", "sin",
                                        "cos",   "tan",   "fma",  "mad",   "floor", "ceil",     "round", "trunc",
                                        "hypot", "atan",  "tanh", "cbrt",  "fdim",  "copysign"};
    for (const char *p = e; *p;) {
        word w = {p, 0};
        if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) { /* a number */
            while (is_ident(p[w.n]) || p[w.n] == '.' || ((p[w.n] == '+' || p[w.n] == '-') && (p[w.n - 1] | 32) == 'e'))
                w.n++;
            size_t body = w.n - ((p[w.n - 1] | 32) == 'f'); /* digits, point, exponent; then an f or nothing */
            if (strspn(p, "0123456789.eE+-") < body) return 0;
            if (body == w.n && strcspn(p, ".eE") < w.n && !doubles) return 0; /* a double for float */
        } else if (is_ident(*p)) { /* a name */
            while (is_ident(p[w.n])) w.n++;
            size_t k = 0;
            while (k < sizeof names / sizeof names[0] && !word_is(w, names[k])) k++;
            if (k == sizeof names / sizeof names[0]) return 0;
        } else if (strchr("+-*<>=!?:(), \t\r\n", *p) || (*p == '/' && p[1] != '/' && p[1] != '*')) {
            w.n = 1;
        } else {
            return 0;
        }
        p += w.n;
    }
    return 1;
}

/* The replacement of an object-like macro named w: from the -D words ("-DNAME=VALUE"), then
 * the source's own "#define NAME VALUE" and "typedef VALUE NAME;" lines: 1, or 0 when there is
 * none, or -1 when the source defines it twice (under #if, say: then which one holds is the
 * preprocessor's to say, not this reader's). */
static int macro_once(word w, const char *src, word *value, const char *from);
static int macro(word w, const char *src, const char *const *defines, size_t ndefines, word *value)
{
    for (size_t i = 0; i < ndefines; i++) {
        const char *d = defines[i] + 2, *eq = strchr(d, '=');
        size_t len = eq ? (size_t)(eq - d) : strlen(d);
        if (len == w.n && strncmp(d, w.p, len) == 0) {
            *value = eq ? (word){eq + 1, strlen(eq + 1)} : (word){"1", 1};
            return 1;
        }
    }
    int found = macro_once(w, src, value, src);
    return found == 1 && value->p && macro_once(w, src, &(word){NULL, 0}, value->p + value->n) == 1 ? -1 : found;
}

/* The first definition of w in src at or after from. */
static int macro_once(word w, const char *src, word *value, const char *from)
{
    const char *l = from;
    while (l > src && l[-1] != '\n') l--; /* from the start of from's line */
    if (l != from) l = strchr(from, '\n'), l = l ? l + 1 : NULL;
    for (; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *q = l + strspn(l, " \t");
        size_t end = strcspn(q, "\n");
        if (strncmp(q, "#define", 7) == 0) {
            q += 7 + strspn(q + 7, " \t");
            if (strncmp(q, w.p, w.n) == 0 && !is_ident(q[w.n]) && q[w.n] != '(') {
                const char *v = q + w.n + strspn(q + w.n, " \t");
                size_t vn = strcspn(v, "\n");
                while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t' || v[vn - 1] == '\r')) vn--;
                *value = (word){v, vn};
                return 1;
            }
        } else if (strncmp(q, "typedef", 7) == 0 && !is_ident(q[7]) && memchr(q, ';', end)) {
            const char *semi = memchr(q, ';', end), *n = semi;
            while (n > q && (n[-1] == ' ' || n[-1] == '\t')) n--;
            const char *b = n;
            while (b > q && is_ident(b[-1])) b--;
            const char *v = q + 7 + strspn(q + 7, " \t");
            if (b >= v && (size_t)(n - b) == w.n && strncmp(b, w.p, w.n) == 0 && !memchr(q, '{', (size_t)(semi - q))) {
                size_t vn = (size_t)(b - v);
                while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
                *value = (word){v, vn};
                return 1;
            }
        }
    }
    return 0;
}

/* Appends the words of text to out (identifiers and '*'), expanding macros up to a few levels;
 * a macro defined twice sets *ambiguous. */
static void words_of(word text, const char *src, const char *const *defines, size_t ndefines, int depth, word *out,
                     size_t *n, size_t max, int *ambiguous)
{
    for (size_t i = 0; i < text.n && *n < max;) {
        char c = text.p[i];
        if (is_ident(c)) {
            size_t j = i;
            while (j < text.n && is_ident(text.p[j])) j++;
            word w = {text.p + i, j - i}, value;
            int m = depth < 8 && !isdigit((unsigned char)c) ? macro(w, src, defines, ndefines, &value) : 0;
            if (m < 0) *ambiguous = 1;
            if (m > 0)
                words_of(value, src, defines, ndefines, depth + 1, out, n, max, ambiguous);
            else
                out[(*n)++] = w;
            i = j;
        } else {
            if (c == '*') out[(*n)++] = (word){text.p + i, 1};
            i++;
        }
    }
}

/* The element type, size and name of a C type of the dialect (words without qualifiers). */
static void type_of(const word *w, size_t n, gp_kernel_param *p)
{
    static const struct {
        const char *name;
        gp_type type;
        size_t size;
    } known[] = {{"float", GP_F32, 4}, {"double", GP_F64, 8}, {"int", GP_I32, 4}, {"signed int", GP_I32, 4},
                 {"signed", GP_I32, 4}, {"uint", GP_U32, 4}, {"unsigned int", GP_U32, 4}, {"unsigned", GP_U32, 4},
                 {"long", GP_I64, 8}, {"long int", GP_I64, 8}, {"signed long", GP_I64, 8}, {"ulong", GP_U64, 8},
                 {"unsigned long", GP_U64, 8}, {"unsigned long int", GP_U64, 8}, {"char", GP_TYPE_NONE, 1},
                 {"signed char", GP_TYPE_NONE, 1}, {"uchar", GP_TYPE_NONE, 1}, {"unsigned char", GP_TYPE_NONE, 1},
                 {"short", GP_TYPE_NONE, 2}, {"ushort", GP_TYPE_NONE, 2}, {"unsigned short", GP_TYPE_NONE, 2},
                 {"half", GP_TYPE_NONE, 2}};
    size_t used = 0;
    p->type_name[0] = '\0';
    /* Stops once the name is full: a pointer past the array is not even to be formed. */
    for (size_t i = 0; i < n && used < sizeof p->type_name; i++) {
        int k = snprintf(p->type_name + used, sizeof p->type_name - used, "%s%.*s", i ? " " : "", (int)w[i].n, w[i].p);
        if (k < 0) break;
        used += (size_t)k;
    }
    p->type = GP_TYPE_NONE;
    p->size = 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (strcmp(p->type_name, known[k].name) == 0) {
            p->type = known[k].type;
            p->size = known[k].size;
        }
}

/* One parameter's text: its kind, type and name. 0 when it cannot be read. */
static int read_param(word text, const char *src, const char *const *defines, size_t ndefines, gp_kernel_param *p)
{
    static const char *const qualifiers[] = {"const", "volatile", "restrict", "__restrict__", "__restrict",
                                             "__global", "global", "__constant", "constant", "__local", "__private",
                                             "private", "GP_GLOBAL", "GP_CONSTANT", "GP_RESTRICT", "GP_LOCAL"};
    memset(p, 0, sizeof *p);
    const char *t = text.p;
    size_t n = text.n;
    while (n && isspace((unsigned char)*t)) t++, n--;
    if (n > 12 && strncmp(t, "GP_LOCAL_ARG", 12) == 0) { /* GP_LOCAL_ARG(T, name) */
        const char *open = memchr(t, '(', n), *comma = open ? memchr(open, ',', n - (size_t)(open - t)) : NULL;
        const char *close = comma ? memchr(comma, ')', n - (size_t)(comma - t)) : NULL;
        if (!close) return 0;
        word inner[16], name[4];
        size_t ni = 0, nn = 0;
        int ambiguous = 0;
        words_of((word){open + 1, (size_t)(comma - open - 1)}, src, defines, ndefines, 0, inner, &ni, 16, &ambiguous);
        words_of((word){comma + 1, (size_t)(close - comma - 1)}, NULL, NULL, 0, 8, name, &nn, 4, &ambiguous);
        if (nn != 1 || ambiguous) return 0;
        p->kind = GP_ARG_LOCAL;
        type_of(inner, ni, p);
        p->size = 0;
        snprintf(p->name, sizeof p->name, "%.*s", (int)name[0].n, name[0].p);
        return 1;
    }
    word w[32], kept[32];
    size_t nw = 0, nk = 0, stars = 0;
    int ambiguous = 0;
    words_of((word){t, n}, src, defines, ndefines, 0, w, &nw, 32, &ambiguous);
    if (ambiguous) return 0;
    for (size_t i = 0; i < nw; i++) {
        int qualifier = 0;
        for (size_t q = 0; q < sizeof qualifiers / sizeof qualifiers[0]; q++) qualifier |= word_is(w[i], qualifiers[q]);
        if (word_is(w[i], "*")) stars++;
        else if (!qualifier) kept[nk++] = w[i];
    }
    if (nk < 2 || stars > 1) return 0; /* a type and a name; pointers to pointers are no buffers */
    snprintf(p->name, sizeof p->name, "%.*s", (int)kept[nk - 1].n, kept[nk - 1].p);
    type_of(kept, nk - 1, p);
    if (stars) {
        p->kind = GP_ARG_BUFFER;
        p->size = 0;
        size_t len = strlen(p->type_name);
        snprintf(p->type_name + len, sizeof p->type_name - len, " *");
    } else {
        p->kind = GP_ARG_VALUE;
    }
    return 1;
}

size_t gp__parse_params(const char *src, const char *const *defines, size_t ndefines, const char *name,
                        gp_kernel_param *out, size_t max, int *readable)
{
    size_t nlen = strlen(name);
    *readable = 0;
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
        size_t count = 0, depth = 0;
        int words = 0, ok = 1;
        const char *start = ++q;
        for (; *q && !(*q == ')' && depth == 0); q++) {
            if (*q == '(') depth++;
            else if (*q == ')') depth--;
            else if (*q == ',' && depth == 0) {
                gp_kernel_param scratch;
                ok = read_param((word){start, (size_t)(q - start)}, src, defines, ndefines,
                                count < max ? &out[count] : &scratch) && ok;
                count++;
                start = q + 1;
            } else if (!isspace((unsigned char)*q)) words = 1;
        }
        if (!*q) return (size_t)-1;
        if (!words) {
            *readable = 1;
            return 0; /* "()" or "(void)" */
        }
        if ((size_t)(q - start) == 4 && strncmp(start, "void", 4) == 0 && count == 0) {
            *readable = 1;
            return 0;
        }
        gp_kernel_param scratch;
        ok = read_param((word){start, (size_t)(q - start)}, src, defines, ndefines, count < max ? &out[count] : &scratch) &&
             ok;
        *readable = ok;
        return count + 1;
    }
    return (size_t)-1;
}
