/* Twins of kernels whose blocks each run several work-groups of the launch (coarsen.h).
 *
 * A kernel of one element a work-item, as users bring it from CUDA, keeps one load a thread in
 * flight and pays a block's start and end for every 256 elements: on an H200 it ran at 0.84x of
 * BabelStream's CUDA kernels, whose threads take four elements each, and at their speed once a
 * block ran eight work-groups one after another. The twin is the kernel's own PTX in a loop
 * over work-groups: %ctaid.x becomes the work-group being run and %nctaid.x the launch's count,
 * so the kernel sees the ids it was launched with; a return ends only that work-group. Kernels
 * that share anything within a block (barriers, shared memory, warp shuffles and votes) or call
 * functions are left alone, as are texts this reader does not follow. */
#include "coarsen.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *p;
    size_t n, cap;
    int failed;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->failed || n == 0) return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + n + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = '\0';
}

static void put_str(text *t, const char *s) { put(t, s, strlen(s)); }

static int ident(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

/* s with its comments replaced by a space. */
static void strip_comments(const char *s, text *out)
{
    while (*s) {
        size_t run = strcspn(s, "/");
        put(out, s, run);
        s += run;
        if (s[0] == '/' && s[1] == '/') {
            s += strcspn(s, "\n");
        } else if (s[0] == '/' && s[1] == '*') {
            const char *end = strstr(s + 2, "*/");
            s = end ? end + 2 : s + strlen(s);
            put(out, " ", 1);
        } else if (*s) {
            put(out, s++, 1);
        }
    }
}

/* Whether word occurs in s[0..n) on its own: not inside a name, a register or a suffix. */
static int has_word(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(s + i, word, w) == 0 && (i == 0 || !(ident(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '%')) &&
            (i + w == n || !ident(s[i + w])))
            return 1;
    return 0;
}

/* Whether a body can be looped over work-groups. */
static int eligible(const char *body)
{
    static const char *const shared[] = {"bar.",   "barrier", ".shared", "shfl",      "vote.",          "match.",
                                         "redux",  "activemask", "call",  "dynamic_smem", "griddepcontrol", "cluster",
                                         "cp.async", "elect.", "setmaxnreg", "wgmma", "tcgen05", "%gpcv",
                                         "$GP__",  "gp__vg_"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (strstr(body, shared[i])) return 0;
    /* Every block index read one component at a time, x among them. */
    for (const char *p = body; (p = strstr(p, "ctaid")); p += 5)
        if (p[5] != '.' || !strchr("xyz", p[6]) || p[6] == '\0' || ident(p[7])) return 0;
    return strstr(body, "%ctaid.x") != NULL;
}

/* One line of the body into the twin: a return jumps to the next work-group, the block index
 * reads the work-group's. Returns 0 where a return is left that this reader did not place. */
static int twin_line(text *t, const char *l, size_t n)
{
    size_t j = 0;
    while (j < n && isspace((unsigned char)l[j])) j++;
    if (j < n && l[j] == '@') { /* a predicate guards the statement */
        while (j < n && !isspace((unsigned char)l[j])) j++;
        while (j < n && isspace((unsigned char)l[j])) j++;
    }
    size_t end = n;
    while (end > j && isspace((unsigned char)l[end - 1])) end--;
    static const char *const returns[] = {"ret;", "ret.uni;", "exit;"};
    for (size_t r = 0; r < sizeof returns / sizeof returns[0]; r++) {
        if (end - j == strlen(returns[r]) && memcmp(l + j, returns[r], end - j) == 0) {
            put(t, l, j);
            put_str(t, "bra $GP__NEXT;\n");
            return 1;
        }
    }
    if (has_word(l, n, "ret") || has_word(l, n, "exit")) return 0;
    static const char *const from[] = {"%ctaid.x", "%nctaid.x"}, *const to[] = {"%gpcv0", "%gpcv1"};
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        while (k < 2 && !(n - i >= strlen(from[k]) && memcmp(l + i, from[k], strlen(from[k])) == 0)) k++;
        if (k < 2) {
            put_str(t, to[k]);
            i += strlen(from[k]);
        } else {
            put(t, l + i, 1);
            i++;
        }
    }
    put(t, "\n", 1);
    return 1;
}

static const char prologue[] = "\t.reg .pred %gpcvp;\n"
                               "\t.reg .b32 %gpcv<3>;\n"
                               "\tld.param.u32 %gpcv1, [gp__vg_count];\n"
                               "\tld.param.u32 %gpcv2, [gp__vg_per];\n"
                               "\tmov.u32 %gpcv0, %ctaid.x;\n"
                               "\tmul.lo.u32 %gpcv0, %gpcv0, %gpcv2;\n"
                               "\tadd.u32 %gpcv2, %gpcv0, %gpcv2;\n"
                               "\tmin.u32 %gpcv2, %gpcv2, %gpcv1;\n"
                               "\tsetp.ge.u32 %gpcvp, %gpcv0, %gpcv2;\n"
                               "\t@%gpcvp bra $GP__END;\n"
                               "$GP__TOP:\n";
static const char epilogue[] = "$GP__NEXT:\n"
                               "\tadd.u32 %gpcv0, %gpcv0, 1;\n"
                               "\tsetp.lt.u32 %gpcvp, %gpcv0, %gpcv2;\n"
                               "\t@%gpcvp bra $GP__TOP;\n"
                               "$GP__END:\n"
                               "\tret;\n"
                               "}\n";

/* The twin of one entry: its name, its parameters' text, what stands between them and the body
 * (performance directives), and the body. Returns 0 (leaving t as it was) when it has none. */
static int twin(text *t, const char *name, size_t name_len, const char *params, size_t params_len,
                const char *directives, size_t directives_len, const char *body, size_t body_len)
{
    text b = {0};
    put(&b, body, body_len);
    if (b.failed || !b.p || !eligible(b.p)) {
        free(b.p);
        return 0;
    }
    size_t mark = t->n;
    put_str(t, "\n.visible .entry ");
    put(t, name, name_len);
    put_str(t, GP__COARSEN_SUFFIX "(");
    size_t p = params_len;
    while (p > 0 && isspace((unsigned char)params[p - 1])) p--;
    put(t, params, p);
    put_str(t, p ? ",\n\t.param .u32 gp__vg_count,\n\t.param .u32 gp__vg_per\n)" : "\n\t.param .u32 gp__vg_count,\n\t.param .u32 gp__vg_per\n)");
    put(t, directives, directives_len);
    put_str(t, "{\n");
    /* The declarations first, then the loop around the statements. */
    int declaring = 1, ok = 1;
    for (const char *l = b.p; ok && *l;) {
        size_t n = strcspn(l, "\n");
        const char *s = l;
        while (s < l + n && isspace((unsigned char)*s)) s++;
        if (declaring && s < l + n && *s != '.') {
            put_str(t, prologue);
            declaring = 0;
        }
        ok = twin_line(t, l, n);
        l += n + (l[n] == '\n');
    }
    if (declaring) put_str(t, prologue);
    put_str(t, epilogue);
    free(b.p);
    if (!ok && !t->failed) { /* give back what was written */
        t->n = mark;
        t->p[mark] = '\0';
    }
    return ok && !t->failed;
}

char *gp__coarsen_ptx(const char *ptx, size_t *twins)
{
    *twins = 0;
    text s = {0}, out = {0};
    strip_comments(ptx, &s);
    put_str(&out, ptx);
    for (const char *p = s.p; !s.failed && p && (p = strstr(p, ".entry"));) {
        const char *q = p + 6;
        if ((p > s.p && !isspace((unsigned char)p[-1])) || !isspace((unsigned char)*q)) {
            p = q;
            continue;
        }
        while (isspace((unsigned char)*q)) q++;
        const char *name = q;
        while (ident(*q)) q++;
        size_t name_len = (size_t)(q - name);
        while (isspace((unsigned char)*q)) q++;
        const char *close = *q == '(' ? strchr(q, ')') : NULL;
        const char *open = close ? strchr(close, '{') : NULL;
        if (!open || name_len == 0 || name_len > 200 || memchr(close, ';', (size_t)(open - close))) {
            p = q;
            continue;
        }
        const char *e = open + 1;
        int depth = 1;
        for (; *e && depth; e++) depth += (*e == '{') - (*e == '}');
        if (depth) break; /* an unclosed body: the text ends here */
        if (twin(&out, name, name_len, q + 1, (size_t)(close - q - 1), close + 1, (size_t)(open - close - 1), open + 1,
                 (size_t)(e - 1 - open - 1)))
            (*twins)++;
        p = e;
    }
    int failed = s.failed || out.failed;
    free(s.p);
    if (failed || *twins == 0) {
        free(out.p);
        *twins = 0;
        return NULL;
    }
    return out.p;
}
