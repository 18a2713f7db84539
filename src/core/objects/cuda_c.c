/* CUDA C translated to the kernel dialect, for OpenCL devices (gp_program_create_cuda). A small
 * parser of the subset lessons use: the source is read as tokens (cuda_tokens.c), each function's
 * declarations give every name its type and address space, and the tokens are written out with
 * CUDA's names put into the dialect's or OpenCL C's. What it does not take is refused with the
 * line and the construct, never passed on. Output keeps each token on its input line, so that the
 * OpenCL compiler's messages name the caller's lines. docs/cuda-c.md lists the subset. */
#include "cuda_tokens.h"

#include <stdio.h>
#include <stdlib.h>

static sym *lookup(cc *c, const tok *t)
{
    for (size_t k = c->nsyms; k-- > 0;)
        if (c->syms[k].n == t->n && memcmp(c->syms[k].name, t->p, t->n) == 0) return &c->syms[k];
    return NULL;
}

static void declare(cc *c, const tok *name, const char *type, int space, int pointer)
{
    if (c->nsyms == sizeof c->syms / sizeof c->syms[0]) return; /* past 256 names: the oldest still answer */
    sym *s = &c->syms[c->nsyms++];
    s->name = name->p, s->n = name->n, s->space = space, s->pointer = pointer, s->depth = c->depth, s->global = 0;
    snprintf(s->type, sizeof s->type, "%s", type);
}

static const char *space_word(int space)
{
    return space == S_GLOBAL ? "GP_GLOBAL" : space == S_LOCAL ? "__local" : "";
}

/* ---- function bodies ---- */

static size_t match(const cc *c, size_t i) /* the token closing the bracket at i */
{
    int depth = 0;
    for (size_t k = i; k < c->nt; k++) {
        if (is(&c->t[k], "(") || is(&c->t[k], "[") || is(&c->t[k], "{")) depth++;
        else if (is(&c->t[k], ")") || is(&c->t[k], "]") || is(&c->t[k], "}")) depth--;
        if (depth == 0) return k;
    }
    return c->nt;
}

/* A declaration's head at i: qualifiers, a type, stars, a name; fills what it finds. */
typedef struct {
    size_t type_at, type_len, name;
    const char *type;
    char named[24]; /* a struct's or vector's name, where type points */
    int shared, ext, pointer, array, constq;
} decl;

static int keyword(const tok *t)
{
    static const char *const words[] = {"return", "if", "else", "for", "while", "do", "switch", "case", "break",
                                        "continue", "goto", "sizeof", "default", "struct"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (is(t, words[k])) return 1;
    return 0;
}

static int decl_at(cc *c, size_t i, decl *d)
{
    memset(d, 0, sizeof *d);
    const tok *t = c->t;
    for (;; i++) {
        if (is(&t[i], "__shared__")) d->shared = 1;
        else if (is(&t[i], "extern")) d->ext = 1;
        else if (is(&t[i], "const")) d->constq = 1;
        else if (!is(&t[i], "volatile") && !is(&t[i], "static") && !is(&t[i], "register")) break;
    }
    size_t used;
    d->type = gp__cc_type_at(&t[i], &used);
    if (!d->type && (gp__cc_vector_type(&t[i]) || (t[i].kind == T_ID && !keyword(&t[i]) && !lookup(c, &t[i]) &&
                                            gp__cc_renamed(&t[i]) == NULL && !keyword(&t[i + 1]) &&
                                            ((t[i + 1].kind == T_ID) || (is(&t[i + 1], "*") && t[i + 2].kind == T_ID))))) {
        snprintf(d->named, sizeof d->named, "%.*s", (int)t[i].n, t[i].p);
        d->type = d->named, used = 1;
    }
    if (!d->type) return 0;
    d->type_at = i, d->type_len = used;
    i += used;
    while (is(&t[i], "const") || is(&t[i], "*") || is(&t[i], "__restrict__") || is(&t[i], "__restrict")) {
        d->pointer |= is(&t[i], "*");
        i++;
    }
    if (t[i].kind != T_ID) return 0;
    d->name = i;
    const tok *after = &t[i + 1];
    d->array = is(after, "[");
    return d->array || is(after, "=") || is(after, ";") || is(after, ",") || is(after, ")");
}

/* The space of what an initializer points into: its first name that is an array or pointer. */
static int space_of(cc *c, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        sym *s = c->t[k].kind == T_ID ? lookup(c, &c->t[k]) : NULL;
        if (s && s->pointer) return s->space;
    }
    return S_GLOBAL;
}

static gp_status body(cc *c, size_t open, size_t close, int kernel);

/* 1 + the index of the __device__ function called name, or 0. */
static size_t device_function(const cc *c, const tok *name)
{
    for (size_t k = 0; k < c->nfuncs; k++)
        if (c->funcs[k]->n == name->n && memcmp(c->funcs[k]->p, name->p, name->n) == 0) return k + 1;
    return 0;
}

/* The token after the argument or parameter that starts at k (its ',' or the closing ')'). */
static size_t item_end(const cc *c, size_t k, size_t close)
{
    while (k < close && !is(&c->t[k], ","))
        k = is(&c->t[k], "(") || is(&c->t[k], "[") || is(&c->t[k], "{") ? match(c, k) + 1 : k + 1;
    return k;
}

/* A variant's code of a space (0 global, 1 local, 2 private), and back. */
static int space_code(int space) { return space == S_GLOBAL ? 0 : space == S_LOCAL ? 1 : 2; }
static const int code_space[3] = {S_GLOBAL, S_LOCAL, S_PRIVATE};

/* The space of the memory an argument points to: its first name that is an array or pointer, or
 * whose address it takes; global where it names none. */
static int arg_space(cc *c, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        sym *s = c->t[k].kind == T_ID ? lookup(c, &c->t[k]) : NULL;
        if (s && (s->pointer || (k > from && is(&c->t[k - 1], "&")))) return s->space;
    }
    return S_GLOBAL;
}

/* A call of __device__ function f, its arguments' '(' at open: the variant it needs, noted. */
static gp_status note_call(cc *c, size_t f, size_t open)
{
    size_t close = match(c, open);
    unsigned variant = 0, scale = 1, pointers = 0;
    for (size_t k = open + 1, arg = 0; k < close && arg < 32; arg++) {
        size_t end = item_end(c, k, close);
        if (c->fptrs[f] >> arg & 1) {
            variant += scale * (unsigned)space_code(arg_space(c, k, end));
            scale *= 3, pointers++;
        }
        k = end + 1;
    }
    if (variant && pointers > 3)
        return gp__cc_refuse(c, c->t[open].line, "local or private memory passed to '%.*s', a __device__ function of more "
                             "than 3 pointer parameters", (int)c->funcs[f]->n, c->funcs[f]->p);
    if (!(c->want[f] >> variant & 1)) c->want[f] |= 1u << variant, c->grew = 1;
    return GP_SUCCESS;
}

/* The globals, as a call's last arguments (first: nothing before them) or a function's last
 * parameters. */
static void pass_globals(cc *c, int first, int line)
{
    for (size_t k = 0; k < c->ng; k++) {
        gp__cc_puts_at(c, first && k == 0 ? "" : ",", line);
        char text[96];
        snprintf(text, sizeof text, "gp__g_%.*s", (int)c->g[k].n, c->g[k].name);
        gp__cc_puts_at(c, text, line);
    }
}

static void declare_globals(cc *c, int first, int line)
{
    for (size_t k = 0; k < c->ng; k++) {
        const glob *g = &c->g[k];
        char text[160];
        snprintf(text, sizeof text, "%sGP_GLOBAL %s%s *gp__g_%.*s", first && k == 0 ? "" : ", ", g->constq ? "const " : "",
                 g->type, (int)g->n, g->name);
        gp__cc_puts_at(c, text, line);
    }
}

/* A name kept as it is, but for qualifiers OpenCL has not, a global (its parameter) and a call to
 * a __device__ function (which passes the globals on at its ')'). */
static gp_status name(cc *c, size_t i)
{
    const tok *t = c->t, *k = &t[i];
    if (is(k, "__forceinline__") || is(k, "__inline__") || is(k, "__noinline__") || is(k, "__host__") ||
        is(k, "__device__"))
        return GP_SUCCESS;
    sym *s = lookup(c, k);
    if (s && s->global && !is(&t[i - 1], ".") && !is(&t[i - 1], "->")) {
        const glob *g = &c->g[s->global - 1];
        char text[96];
        snprintf(text, sizeof text, g->scalar ? "(*gp__g_%.*s)" : "gp__g_%.*s", (int)g->n, g->name);
        gp__cc_puts_at(c, text, k->line);
        return GP_SUCCESS;
    }
    size_t f = is(&t[i + 1], "(") ? device_function(c, k) : 0;
    if (f) {
        gp_status st = note_call(c, f - 1, i + 1);
        if (st != GP_SUCCESS) return st;
    }
    if (c->ng && f) {
        if (c->npend == sizeof c->pend / sizeof c->pend[0]) return gp__cc_refuse(c, k->line, "calls nested too deep");
        c->pend[c->npend++] = match(c, i + 1);
    }
    gp__cc_put(c, k->p, k->n, k->line);
    return GP_SUCCESS;
}

static int typedef_name(const cc *c, const tok *k)
{
    for (size_t n = 0; n < c->ntypedefs; n++)
        if (c->typedefs[n]->n == k->n && memcmp(c->typedefs[n]->p, k->p, k->n) == 0) return 1;
    return 0;
}

/* A function-style cast at i, T(x), or a vector's make_float2(a, b), written (T) or (float2):
 * the tokens it took, or 0 where there is none. */
static size_t cast(cc *c, size_t i)
{
    const tok *k = &c->t[i];
    size_t used;
    if (strncmp(k->p, "make_", 5) == 0 && is(&c->t[i + 1], "(")) {
        tok v = {T_ID, k->line, k->p + 5, k->n - 5};
        if (!gp__cc_vector_type(&v)) return 0;
        char text[32];
        snprintf(text, sizeof text, "(%.*s)", (int)v.n, v.p);
        gp__cc_puts_at(c, text, k->line);
        return 1;
    }
    const char *type = gp__cc_type_at(k, &used);
    if (!type && !typedef_name(c, k)) return 0;
    used = type ? used : 1;
    if (!is(&c->t[i + used], "(")) return 0;
    char text[64];
    snprintf(text, sizeof text, "(%.*s)", type ? (int)strlen(type) : (int)k->n, type ? type : k->p);
    gp__cc_puts_at(c, text, k->line);
    return used;
}

/* The tokens from i up to end (not included), CUDA's names put into the dialect's. */
static gp_status tokens(cc *c, size_t i, size_t end)
{
    const tok *t = c->t;
    static const char *const dims[] = {"threadIdx", "gp_local_id", "blockIdx", "gp_group_id", "blockDim",
                                       "gp_local_size", "gridDim", "gp_num_groups"};
    while (i < end) {
        const tok *k = &t[i];
        for (; c->npend && c->pend[c->npend - 1] == i; c->npend--) /* a call to a __device__ function */
            pass_globals(c, is(&t[i - 1], "("), k->line);
        gp_status st = gp__cc_check_word(c, k);
        if (st != GP_SUCCESS) return st;
        if (is(k, "__constant__"))
            return gp__cc_refuse(c, k->line, "__constant__ inside a function (declare it at file scope)");
        if (k->kind == T_PP) {
            gp__cc_put_pp(c, k);
            i++;
            continue;
        }
        if (k->kind != T_ID) {
            gp__cc_put(c, k->p, k->n, k->line);
            i++;
            continue;
        }
        int done = 0;
        for (size_t d = 0; d < 8 && !done; d += 2)
            if (is(k, dims[d]) && is(&t[i + 1], ".") && t[i + 2].n == 1 && strchr("xyz", t[i + 2].p[0])) {
                char text[32];
                snprintf(text, sizeof text, "%s(%d)", dims[d + 1], t[i + 2].p[0] - 'x');
                gp__cc_puts_at(c, text, k->line);
                i += 3, done = 1;
            }
        if (done) continue;
        size_t used = cast(c, i);
        if (used) {
            i += used;
            continue;
        }
        const char *type = gp__cc_type_at(k, &used);
        if (type && (used > 1 || !is(k, type))) {
            gp__cc_puts_at(c, type, k->line);
            i += used;
            continue;
        }
        if (gp__cc_cuda_atomic(k) && is(&t[i + 1], "(")) {
            size_t arg = i + 2;
            while (is(&t[arg], "&") || is(&t[arg], "(")) arg++;
            sym *s = t[arg].kind == T_ID ? lookup(c, &t[arg]) : NULL;
            char name[48];
            if (!s || !s->pointer)
                return gp__cc_refuse(c, k->line, "%.*s on an address the translation cannot follow (write &array[i], or a "
                              "pointer parameter plus an offset)", (int)k->n, k->p);
            if (!gp__cc_atomic_name(c, k, s, name, sizeof name))
                return gp__cc_refuse(c, k->line, "%.*s on %s", (int)k->n, k->p, s->type);
            gp__cc_puts_at(c, name, k->line);
            i++;
            continue;
        }
        const char *r = gp__cc_erfinv(c, k);
        if (!r) r = gp__cc_renamed(k);
        if (r) {
            if (*r) gp__cc_puts_at(c, r, k->line);
            else gp__cc_puts_at(c, "*", k->line); /* __ldg(p): *(p) */
            i++;
            continue;
        }
        st = name(c, i);
        if (st != GP_SUCCESS) return st;
        i++;
    }
    c->i = i; /* a name of several tokens may end past end */
    return GP_SUCCESS;
}

static int statement_start(const cc *c, size_t i, size_t open)
{
    const tok *p = &c->t[i - 1];
    return i == open + 1 || is(p, "{") || is(p, "}") || is(p, ";") || (is(p, "(") && is(&c->t[i - 2], "for"));
}

static gp_status body(cc *c, size_t open, size_t close, int kernel)
{
    const tok *t = c->t;
    gp__cc_puts_at(c, "{", t[open].line);
    size_t i = open + 1;
    c->depth = 1;
    while (i < close) {
        decl d;
        if (is(&t[i], "{")) c->depth++;
        if (is(&t[i], "}")) {
            while (c->nsyms && c->syms[c->nsyms - 1].depth >= c->depth) c->nsyms--;
            c->depth--;
        }
        if (statement_start(c, i, open) && decl_at(c, i, &d)) {
            size_t semi = i;
            while (semi < close && !is(&t[semi], ";")) semi++;
            if (d.shared) {
                if (!kernel)
                    return gp__cc_refuse(c, t[i].line, "__shared__ memory in a __device__ function (OpenCL makes it only in "
                                  "kernels: declare it in the kernel and pass a pointer)");
                declare(c, &t[d.name], d.type, S_LOCAL, 1);
                i = semi + 1; /* declared at the kernel's top */
                continue;
            }
            int pointer = d.pointer && !d.array;
            int space = pointer ? space_of(c, d.name + 1, semi) : S_PRIVATE;
            declare(c, &t[d.name], d.type, space, pointer || d.array);
            if (pointer && space != S_PRIVATE) gp__cc_puts_at(c, space_word(space), t[i].line);
            gp_status st = tokens(c, i, d.name + 1);
            if (st != GP_SUCCESS) return st;
            i = c->i;
            continue;
        }
        gp_status st = tokens(c, i, i + 1);
        if (st != GP_SUCCESS) return st;
        i = c->i;
    }
    gp__cc_puts_at(c, "}", t[close].line);
    return GP_SUCCESS;
}

/* The parameters between open and close, pointers in global memory (in the spaces of
 * c->variant, for a __device__ function's variant). */
static gp_status params(cc *c, size_t open, size_t close)
{
    const tok *t = c->t;
    gp__cc_puts_at(c, "(", t[open].line);
    size_t i = open + 1;
    unsigned variant = (unsigned)c->variant;
    while (i < close) {
        size_t end = item_end(c, i, close);
        decl d;
        if (is(&t[i], "void") && end == i + 1) {
            gp__cc_puts_at(c, "void", t[i].line);
        } else {
            for (size_t k = i; k < end; k++)
                if (is(&t[k], "&")) return gp__cc_refuse(c, t[k].line, "a reference parameter");
            if (!decl_at(c, i, &d)) return gp__cc_refuse(c, t[i].line, "a parameter it cannot read");
            int pointer = d.pointer || d.array, space = pointer ? code_space[variant % 3] : S_PRIVATE;
            if (pointer) variant /= 3;
            declare(c, &t[d.name], d.type, space, pointer);
            if (pointer && space != S_PRIVATE) gp__cc_puts_at(c, space_word(space), t[i].line);
            if (d.array) { /* T name[]: a pointer */
                gp_status st = tokens(c, i, d.name);
                if (st != GP_SUCCESS) return st;
                gp__cc_puts_at(c, "*", t[d.name].line);
                gp__cc_put(c, t[d.name].p, t[d.name].n, t[d.name].line);
            } else {
                gp_status st = tokens(c, i, end);
                if (st != GP_SUCCESS) return st;
            }
        }
        if (end < close) gp__cc_puts_at(c, ",", t[end].line);
        i = end + 1;
    }
    return GP_SUCCESS;
}

/* The kernel's __shared__ arrays, declared at its top as OpenCL wants; an extern one (dynamic)
 * becomes a last GP_LOCAL_ARG parameter, written into dyn. */
static gp_status shared_decls(cc *c, size_t open, size_t close, char *dyn, size_t dyn_len, char *fixed, size_t len)
{
    const tok *t = c->t;
    size_t used = 0;
    dyn[0] = fixed[0] = 0;
    for (size_t i = open + 1; i < close; i++) {
        decl d;
        if (!is(&t[i], "__shared__") && !is(&t[i], "extern")) continue;
        if (!statement_start(c, i, open) || !decl_at(c, i, &d) || !d.shared) continue;
        if (d.ext) {
            if (dyn[0]) return gp__cc_refuse(c, t[i].line, "a second extern __shared__ array in one kernel");
            snprintf(dyn, dyn_len, "%s|%.*s", d.type, (int)t[d.name].n, t[d.name].p);
            continue;
        }
        size_t semi = d.name;
        while (semi < close && !is(&t[semi], ";")) semi++;
        used += (size_t)snprintf(fixed + used, used < len ? len - used : 0, "GP_LOCAL %s", d.type);
        for (size_t k = d.name; k <= semi && used < len; k++)
            used += (size_t)snprintf(fixed + used, len - used, " %.*s", (int)t[k].n, t[k].p);
        if (used >= len) return gp__cc_refuse(c, t[i].line, "too many __shared__ arrays in one kernel");
    }
    if (!dyn[0] && c->dyn_type) { /* a file-scope extern __shared__ array the kernel uses */
        for (size_t i = open + 1; i < close; i++)
            if (t[i].n == c->dyn_n && memcmp(t[i].p, c->dyn_name, c->dyn_n) == 0) {
                snprintf(dyn, dyn_len, "%s|%.*s", c->dyn_type, (int)c->dyn_n, c->dyn_name);
                break;
            }
    }
    return GP_SUCCESS;
}

/* A function at i (its head up to the parameters' '(' at paren), in c->variant's spaces; *next:
 * the token after it. */
static gp_status function_once(cc *c, size_t i, size_t paren, size_t *next)
{
    const tok *t = c->t;
    int kernel = 0, device = 0;
    for (size_t k = i; k < paren; k++) {
        kernel |= is(&t[k], "__global__");
        device |= is(&t[k], "__device__");
    }
    size_t close = match(c, paren);
    int has_body = is(&t[close + 1], "{");
    if (!kernel && !device)
        return gp__cc_refuse(c, t[i].line, "the host function '%.*s' (only __global__ and __device__ functions run on a "
                      "device)", (int)t[paren - 1].n, t[paren - 1].p);
    c->nsyms = 0;
    c->depth = 0;
    for (size_t k = 0; k < c->ng; k++) {
        tok name = {T_ID, 0, c->g[k].name, c->g[k].n};
        declare(c, &name, c->g[k].type, S_GLOBAL, 1);
        c->syms[c->nsyms - 1].global = (int)k + 1;
    }
    char dyn[64], fixed[2048];
    size_t end = has_body ? match(c, close + 1) : close + 1;
    if (has_body && kernel) {
        gp_status st = shared_decls(c, close + 1, end, dyn, sizeof dyn, fixed, sizeof fixed);
        if (st != GP_SUCCESS) return st;
    } else {
        dyn[0] = fixed[0] = 0;
    }
    gp__cc_puts_at(c, kernel ? "GP_KERNEL" : c->overload ? "GP_FUNC __attribute__((overloadable))" : "GP_FUNC", t[i].line);
    for (size_t k = i; k < paren - 1;) { /* the return type: qualifiers dropped */
        if (is(&t[k], "__global__") || is(&t[k], "__device__") || is(&t[k], "static") || is(&t[k], "inline") ||
            is(&t[k], "extern") || t[k].kind == T_STR) {
            k++;
            continue;
        }
        gp_status st = tokens(c, k, k + 1);
        if (st != GP_SUCCESS) return st;
        k = c->i;
    }
    gp__cc_put(c, t[paren - 1].p, t[paren - 1].n, t[paren - 1].line);
    char *bar = strchr(dyn, '|');
    int none = is(&t[close - 1], "(") || (is(&t[paren + 1], "void") && close == paren + 2); /* no parameters */
    gp_status st = GP_SUCCESS;
    if (none && (bar || c->ng)) gp__cc_puts_at(c, "(", t[paren].line); /* (void): the extras alone */
    else st = params(c, paren, close);
    if (st != GP_SUCCESS) return st;
    if (bar) {
        *bar = 0;
        char arg[96];
        snprintf(arg, sizeof arg, "%sGP_LOCAL_ARG(%s, %s)", none ? "" : ", ", dyn, bar + 1);
        gp__cc_puts_at(c, arg, t[close].line);
        tok name = {T_ID, 0, bar + 1, strlen(bar + 1)};
        declare(c, &name, dyn, S_LOCAL, 1);
    }
    declare_globals(c, none && !bar, t[close].line);
    gp__cc_puts_at(c, ")", t[close].line);
    if (!has_body) {
        gp__cc_puts_at(c, ";", t[close + 1].line);
        *next = close + 2;
        return GP_SUCCESS;
    }
    if (fixed[0] || bar) {
        char top[2200];
        snprintf(top, sizeof top, "{ %s%s%s%s", bar ? "GP_LOCAL_BIND(" : "", bar ? dyn : "", bar ? ", " : "", "");
        if (bar) snprintf(top + strlen(top), sizeof top - strlen(top), "%s); ", bar + 1);
        snprintf(top + strlen(top), sizeof top - strlen(top), "%s", fixed);
        gp__cc_puts_at(c, top, t[close + 1].line);
        /* the body's own '{' follows as a nested block */
    }
    for (size_t k = close + 1; k < end; k++) /* the static __shared__ names, for the body's atomics */
        if (is(&t[k], "__shared__")) {
            decl d;
            if (statement_start(c, k, close + 1) && decl_at(c, k, &d) && !d.ext) declare(c, &t[d.name], d.type, S_LOCAL, 1);
        }
    st = body(c, close + 1, end, kernel);
    if (st == GP_SUCCESS && (fixed[0] || bar)) gp__cc_puts_at(c, "}", t[end].line);
    *next = end + 1;
    return st;
}

/* A function, once for each variant its calls need (each after the first from its own first
 * line again, so that the compiler's messages name the caller's lines). */
static gp_status function(cc *c, size_t i, size_t paren, size_t *next)
{
    size_t f = device_function(c, &c->t[paren - 1]);
    unsigned want = f ? c->want[f - 1] : 1u;
    c->overload = want != 1u;
    gp_status st = GP_SUCCESS;
    for (int v = 0, done = 0; v < 27 && st == GP_SUCCESS; v++) {
        if (!(want >> v & 1)) continue;
        if (done++) {
            char text[32];
            snprintf(text, sizeof text, "\n#line %d\n", c->t[i].line);
            gp__cc_puts_at(c, text, c->line);
            c->line = c->t[i].line;
        }
        c->variant = v;
        st = function_once(c, i, paren, next);
    }
    c->variant = c->overload = 0;
    return st;
}

/* What follows __device__ at i: a function (its '(' comes before any ';', '=', '[' or '{'). */
static int function_ahead(const cc *c, size_t i)
{
    for (; c->t[i].kind != T_EOF; i++) {
        if (is(&c->t[i], "(")) return 1;
        if (is(&c->t[i], ";") || is(&c->t[i], "=") || is(&c->t[i], "[") || is(&c->t[i], "{")) return 0;
    }
    return 0;
}

/* A file-scope __constant__ or __device__ variable at *at: a scalar or a one-dimensional array
 * of a size the compiler knows (a number, a macro, an expression of them), without an
 * initializer: the host sets it (gp_program_get_global). */
static gp_status global_var(cc *c, size_t *at)
{
    const tok *t = c->t;
    size_t i = *at;
    int constq = 0;
    for (; is(&t[i], "__constant__") || is(&t[i], "__device__"); i++) constq |= is(&t[i], "__constant__");
    const char *what = constq ? "__constant__" : "__device__";
    int line = t[*at].line;
    decl d;
    if (!decl_at(c, i, &d) || d.shared || d.ext) return gp__cc_refuse(c, line, "a %s declaration it cannot read", what);
    if (d.pointer) return gp__cc_refuse(c, line, "a %s pointer (declare an array, T name[N])", what);
    size_t end = d.name + 1, dims = 0;
    for (; is(&t[end], "["); end = match(c, end) + 1) dims++;
    if (dims > 1)
        return gp__cc_refuse(c, line, "a %s array of %zu dimensions (declare it flat, T name[A * B])", what, dims);
    if (is(&t[end], "="))
        return gp__cc_refuse(c, line, "an initialized %s variable (set it from the host: RawModule.get_global, "
                             "gp_program_get_global)", what);
    if (!is(&t[end], ";") || (dims && end == d.name + 3) || t[d.name].n >= 56)
        return gp__cc_refuse(c, line, "a %s declaration it cannot read (one variable, its size given, a name "
                             "under 56 characters)", what);
    if (c->ng == GP__MAX_GLOBALS)
        return gp__cc_refuse(c, line, "more than %d __constant__ and __device__ variables", GP__MAX_GLOBALS);
    glob *g = &c->g[c->ng++];
    g->name = t[d.name].p, g->n = t[d.name].n, g->scalar = !dims, g->constq = constq;
    g->dims = d.name + 2, g->dims_end = end - 1;
    snprintf(g->type, sizeof g->type, "%s", d.type);
    *at = end + 1;
    return GP_SUCCESS;
}

/* The kernel gp__global_sizes: each global's bytes, as the device's compiler counts them. */
static gp_status put_global_sizes(cc *c)
{
    int line = c->line;
    c->nsyms = 0;
    gp__cc_puts_at(c, "\nGP_KERNEL void gp__global_sizes(GP_GLOBAL ulong *gp__out)\n{\n", line);
    for (size_t k = 0; k < c->ng; k++) {
        char text[96];
        snprintf(text, sizeof text, "gp__out[%zu] = (ulong)sizeof(%s)%s", k, c->g[k].type, c->g[k].scalar ? ";\n" : " * (");
        gp__cc_puts_at(c, text, line);
        if (c->g[k].scalar) continue;
        gp_status st = tokens(c, c->g[k].dims, c->g[k].dims_end);
        if (st != GP_SUCCESS) return st;
        gp__cc_puts_at(c, ");\n", line);
    }
    gp__cc_puts_at(c, "}\n", line);
    return GP_SUCCESS;
}

/* Which parameters of the function whose '(' is at paren are pointers, a bit each. */
static unsigned pointer_params(cc *c, size_t paren)
{
    size_t close = match(c, paren);
    unsigned mask = 0;
    for (size_t k = paren + 1, arg = 0; k < close && arg < 32; arg++) {
        size_t end = item_end(c, k, close);
        decl d;
        if (decl_at(c, k, &d) && (d.pointer || d.array)) mask |= 1u << arg;
        k = end + 1;
    }
    return mask;
}

static gp_status translate_once(cc *c);

/* The __device__ functions found, then the source written until no call needs a variant of a
 * function not written yet (a function's variants can need variants of those it calls). */
static gp_status translate(cc *c)
{
    const tok *t = c->t;
    for (size_t k = 0; t[k].kind != T_EOF; k++) /* the __device__ functions, for their calls */
        if (is(&t[k], "__device__") && function_ahead(c, k) && c->nfuncs < sizeof c->funcs / sizeof c->funcs[0]) {
            size_t paren = k;
            while (!is(&t[paren], "(")) paren++;
            if (paren > k + 1) {
                c->fptrs[c->nfuncs] = pointer_params(c, paren), c->want[c->nfuncs] = 1;
                c->funcs[c->nfuncs++] = &t[paren - 1];
            }
        }
    for (int pass = 0;; pass++) {
        c->grew = 0;
        gp_status st = translate_once(c);
        if (st != GP_SUCCESS || !c->grew) return st;
        if (pass == 16) return gp__cc_refuse(c, t[0].line, "__device__ functions that call each other too deep");
        c->len = 0, c->line = 1, c->ng = 0, c->helpers = 0, c->dyn_type = NULL, c->npend = 0, c->ntypedefs = 0;
        if (c->out) c->out[0] = 0;
    }
}

static gp_status translate_once(cc *c)
{
    const tok *t = c->t;
    size_t i = 0;
    int extern_block = 0;
    while (t[i].kind != T_EOF) {
        gp_status st = gp__cc_check_word(c, &t[i]);
        if (st != GP_SUCCESS) return st;
        if (t[i].kind == T_PP) {
            const char *p = t[i].p + 1;
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "include", 7) == 0) {
                if (!gp__cc_known_include(t[i].p, t[i].n))
                    return gp__cc_refuse(c, t[i].line, "#include of a header other than CUDA's own and <math.h>");
            } else {
                st = tokens(c, i, i + 1);
                if (st != GP_SUCCESS) return st;
            }
            i++;
        } else if (is(&t[i], "extern") && t[i + 1].kind == T_STR) {
            i += 2;
            if (is(&t[i], "{")) extern_block++, i++;
        } else if (is(&t[i], "}") && extern_block) {
            extern_block--, i++;
        } else if (is(&t[i], "extern") && is(&t[i + 1], "__shared__")) {
            decl d;
            if (!decl_at(c, i, &d) || !d.array) return gp__cc_refuse(c, t[i].line, "an extern __shared__ declaration it cannot read");
            snprintf(c->dyn_t, sizeof c->dyn_t, "%s", d.type);
            c->dyn_type = c->dyn_t, c->dyn_name = t[d.name].p, c->dyn_n = t[d.name].n;
            while (t[i].kind != T_EOF && !is(&t[i], ";")) i++;
            i++;
        } else if (is(&t[i], "struct") || is(&t[i], "typedef") || is(&t[i], "enum") || is(&t[i], "union")) {
            size_t end = i, used;
            while (t[end].kind != T_EOF && !is(&t[end], ";")) end = is(&t[end], "{") ? match(c, end) + 1 : end + 1;
            const tok *named = end > i && is(&t[i], "typedef") && t[end - 1].kind == T_ID ? &t[end - 1] : NULL;
            if (named && gp__cc_type_at(named, &used)) { /* typedef unsigned long long uint64_t: the dialect has it */
                i = end + 1;
                continue;
            }
            if (named && c->ntypedefs < sizeof c->typedefs / sizeof c->typedefs[0]) c->typedefs[c->ntypedefs++] = named;
            st = tokens(c, i, end + 1);
            if (st != GP_SUCCESS) return st;
            i = end + 1;
        } else if (is(&t[i], ";")) {
            i++;
        } else if (is(&t[i], "__constant__") || (is(&t[i], "__device__") && !function_ahead(c, i))) {
            st = global_var(c, &i);
            if (st != GP_SUCCESS) return st;
        } else {
            size_t paren = i;
            while (t[paren].kind != T_EOF && !is(&t[paren], "(") && !is(&t[paren], ";") && !is(&t[paren], "=")) paren++;
            if (!is(&t[paren], "(") || paren == i || t[paren - 1].kind != T_ID)
                return gp__cc_refuse(c, t[i].line, "a file-scope declaration other than a function, a struct, a typedef or "
                              "extern __shared__ memory");
            st = function(c, i, paren, &i);
            if (st != GP_SUCCESS) return st;
        }
    }
    return c->ng ? put_global_sizes(c) : GP_SUCCESS;
}

gp_status gp__cuda_to_dialect(const char *source, char **out, gp__cuda_globals *globals)
{
    cc *c = calloc(1, sizeof *c);
    if (!c) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    c->line = 1;
    gp_status st = gp__cc_tokenize(c, source);
    if (st == GP_SUCCESS) st = translate(c);
    globals->n = st == GP_SUCCESS ? c->ng : 0;
    for (size_t k = 0; k < globals->n; k++)
        snprintf(globals->name[k], sizeof globals->name[k], "%.*s", (int)c->g[k].n, c->g[k].name);
    char *body_text = c->out;
    size_t body_len = c->len;
    int oom = c->oom;
    if (st == GP_SUCCESS && !oom) { /* the helpers, then the translation with the caller's line numbers */
        c->out = NULL, c->len = c->cap = 0, c->line = 1;
        gp__cc_put_helpers(c);
        gp__cc_puts_at(c, "\n#line 1\n", c->line);
        c->line = 1;
        gp__cc_put(c, body_text ? body_text : "", body_len, 1);
        oom = c->oom;
        if (!oom) *out = c->out;
        else free(c->out);
    }
    free(body_text);
    if (st == GP_SUCCESS && oom) st = gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    free(c->t);
    free(c);
    return st;
}
