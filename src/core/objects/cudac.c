/* CUDA C translated to the kernel dialect, for OpenCL devices (gp_program_create_cuda). A small
 * parser of the subset lessons use: the source is read as tokens, each function's declarations
 * give every name its type and address space, and the tokens are written out with CUDA's names
 * put into the dialect's or OpenCL C's. What it does not take is refused with the line and the
 * construct, never passed on. Output keeps each token on its input line, so that the OpenCL
 * compiler's messages name the caller's lines. docs/cuda-c.md lists the subset. */
#include "internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_ID, T_NUM, T_STR, T_PUNCT, T_PP, T_EOF };
enum { S_PRIVATE, S_GLOBAL, S_LOCAL };

typedef struct {
    int kind, line;
    const char *p;
    size_t n;
} tok;

typedef struct {
    const char *name;
    size_t n;
    char type[24]; /* the element type in the dialect's words */
    int space, pointer, depth;
} sym;

typedef struct {
    tok *t;
    size_t nt, i;
    char *out;
    size_t len, cap;
    int line, oom;
    sym syms[256];
    size_t nsyms;
    int depth;
    const char *dyn_type, *dyn_name; /* an extern __shared__ array at file scope */
    char dyn_t[24];
    size_t dyn_n;
    unsigned helpers;
    char why[256];
} cc;

static int is(const tok *t, const char *s)
{
    return t->kind != T_EOF && strlen(s) == t->n && memcmp(t->p, s, t->n) == 0;
}

static gp_status refuse(cc *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static gp_status refuse(cc *c, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return gp__fail(GP_ERROR_BUILD_FAILED, "CUDA C, line %d: %s (the OpenCL translation does not take it; "
                    "docs/cuda-c.md lists what it takes)", line, c->why);
}

/* ---- tokens ---- */

static gp_status tokenize(cc *c, const char *s)
{
    size_t cap = 256;
    int line = 1, bol = 1;
    c->t = malloc(cap * sizeof *c->t);
    if (!c->t) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    static const char *const punct[] = {"<<<", ">>>", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=",
                                        "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::"};
    while (*s) {
        if (*s == '\n') {
            line++, bol = 1, s++;
            continue;
        }
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        if (s[0] == '/' && s[1] == '/') {
            while (*s && *s != '\n') s++;
            continue;
        }
        if (s[0] == '/' && s[1] == '*') {
            const char *e = strstr(s + 2, "*/");
            if (!e) return refuse(c, line, "a comment that never ends");
            for (; s < e; s++) line += *s == '\n';
            s = e + 2;
            continue;
        }
        if (c->nt + 1 >= cap) {
            tok *more = realloc(c->t, (cap *= 2) * sizeof *c->t);
            if (!more) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
            c->t = more;
        }
        tok *t = &c->t[c->nt++];
        t->p = s, t->line = line;
        if (*s == '#' && bol) { /* a preprocessor line, continuations included */
            t->kind = T_PP;
            while (*s && !(*s == '\n' && s[-1] != '\\')) line += *s++ == '\n';
        } else if (isalpha((unsigned char)*s) || *s == '_') {
            t->kind = T_ID;
            while (isalnum((unsigned char)*s) || *s == '_') s++;
        } else if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
            t->kind = T_NUM;
            while (isalnum((unsigned char)*s) || *s == '.' || ((*s == '+' || *s == '-') && strchr("eEpP", s[-1])))
                s++;
        } else if (*s == '"' || *s == '\'') {
            t->kind = T_STR;
            char q = *s++;
            while (*s && *s != q && *s != '\n') s += *s == '\\' && s[1] ? 2 : 1;
            if (*s != q) return refuse(c, line, "a string or character literal that never ends");
            s++;
        } else {
            t->kind = T_PUNCT;
            size_t n = 1;
            for (size_t k = 0; k < sizeof punct / sizeof punct[0]; k++)
                if (strncmp(s, punct[k], strlen(punct[k])) == 0) {
                    n = strlen(punct[k]);
                    break;
                }
            s += n;
        }
        t->n = (size_t)(s - t->p);
        bol = 0;
    }
    c->t[c->nt] = (tok){T_EOF, line, s, 0};
    return GP_SUCCESS;
}

/* ---- output ---- */

static void put(cc *c, const char *s, size_t n, int line)
{
    if (c->oom) return;
    if (c->len + n + (size_t)(line > c->line ? line - c->line : 0) + 2 >= c->cap) {
        size_t cap = (c->cap + n) * 2 + 1024;
        char *more = realloc(c->out, cap);
        if (!more) {
            c->oom = 1;
            return;
        }
        c->out = more, c->cap = cap;
    }
    for (; line > c->line; c->line++) c->out[c->len++] = '\n';
    if (c->len && !isspace((unsigned char)c->out[c->len - 1])) c->out[c->len++] = ' ';
    memcpy(c->out + c->len, s, n);
    c->len += n;
    for (size_t k = 0; k < n; k++) c->line += s[k] == '\n';
    c->out[c->len] = 0;
}

static void puts_at(cc *c, const char *s, int line)
{
    put(c, s, strlen(s), line);
}

/* A preprocessor line, alone on its line as the preprocessor wants it. */
static void put_pp(cc *c, const tok *t)
{
    if (c->line < t->line) put(c, "", 0, t->line);
    else if (c->len && c->out[c->len - 1] != '\n') put(c, "\n", 1, c->line);
    put(c, t->p, t->n, c->line);
    put(c, "\n", 1, c->line);
}

/* ---- types and names ---- */

/* A CUDA type of one or more words at t as the dialect writes it; *used: how many tokens. */
static const char *type_at(const tok *t, size_t *used)
{
    static const struct {
        const char *cuda[4], *dialect;
    } map[] = {
        {{"unsigned", "long", "long", "int"}, "ulong"}, {{"unsigned", "long", "long"}, "ulong"},
        {{"long", "long", "int"}, "long"},              {{"long", "long"}, "long"},
        {{"unsigned", "long"}, "ulong"},                {{"unsigned", "int"}, "uint"},
        {{"unsigned", "char"}, "uchar"},                {{"unsigned", "short"}, "ushort"},
        {{"signed", "char"}, "char"},                   {{"unsigned"}, "uint"},
        {{"size_t"}, "ulong"},                          {{"int64_t"}, "long"},
        {{"uint64_t"}, "ulong"},                        {{"int32_t"}, "int"},
        {{"uint32_t"}, "uint"},                         {{"int16_t"}, "short"},
        {{"uint16_t"}, "ushort"},                       {{"int8_t"}, "char"},
        {{"uint8_t"}, "uchar"},
    };
    for (size_t m = 0; m < sizeof map / sizeof map[0]; m++) {
        size_t k = 0;
        while (k < 4 && map[m].cuda[k] && is(&t[k], map[m].cuda[k])) k++;
        if (k == 4 || !map[m].cuda[k]) {
            *used = k;
            return map[m].dialect;
        }
    }
    static const char *const plain[] = {"float", "double", "int", "char", "short", "long", "bool", "void", "uint",
                                        "uchar", "ushort", "ulong"};
    for (size_t m = 0; m < sizeof plain / sizeof plain[0]; m++)
        if (is(t, plain[m])) {
            *used = 1;
            return plain[m];
        }
    *used = 0;
    return NULL;
}

/* A vector type (float2, int4 ...): OpenCL's vectors, with .x .y .z .w as CUDA's structs. */
static int vector_type(const tok *t)
{
    static const char *const base[] = {"float", "double", "int", "uint", "char", "uchar", "short", "ushort", "long",
                                       "ulong"};
    if (t->kind != T_ID) return 0;
    for (size_t b = 0; b < sizeof base / sizeof base[0]; b++) {
        size_t n = strlen(base[b]);
        if (t->n == n + 1 && memcmp(t->p, base[b], n) == 0 && strchr("234", t->p[n])) return 1;
    }
    return 0;
}

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
    s->name = name->p, s->n = name->n, s->space = space, s->pointer = pointer, s->depth = c->depth;
    snprintf(s->type, sizeof s->type, "%s", type);
}

static const char *space_word(int space)
{
    return space == S_GLOBAL ? "GP_GLOBAL" : space == S_LOCAL ? "__local" : "";
}

/* ---- what is refused ---- */

static gp_status check_word(cc *c, const tok *t)
{
    static const char *const cxx[] = {"template", "typename", "class", "namespace", "new", "delete", "operator",
                                      "this", "nullptr", "static_cast", "reinterpret_cast", "const_cast",
                                      "dynamic_cast", "constexpr", "auto", "decltype", "using", "throw", "try",
                                      "catch", "virtual", "friend", "::", "<<<", "__managed__", "texture", "surface",
                                      "cudaTextureObject_t", "cudaSurfaceObject_t", "__constant__"};
    static const char *const warp[] = {"__shfl", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                       "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync", "__activemask",
                                       "__syncwarp", "warpSize", "__match_any_sync", "__reduce_add_sync"};
    static const char *const other[] = {"tex1D", "tex2D", "tex3D", "tex1Dfetch", "surf2Dread", "surf2Dwrite",
                                        "__threadfence", "__threadfence_system", "clock", "clock64", "__nanosleep",
                                        "__brev", "__ffs", "cudaMalloc", "cudaFree", "cudaMemcpy", "__syncthreads_count",
                                        "__syncthreads_and", "__syncthreads_or", "atomicAdd_block"};
    for (size_t k = 0; k < sizeof cxx / sizeof cxx[0]; k++)
        if (is(t, cxx[k]))
            return refuse(c, t->line, strcmp(cxx[k], "__constant__") == 0 ? "__constant__ memory"
                                      : strcmp(cxx[k], "<<<") == 0      ? "a kernel launch from device code"
                                                                        : "the C++ construct '%s'",
                          cxx[k]);
    for (size_t k = 0; k < sizeof warp / sizeof warp[0]; k++)
        if (is(t, warp[k]))
            return refuse(c, t->line, "the warp intrinsic '%s' (warps are 32 wide on NVIDIA, 64 on most AMD GPUs, "
                          "and CPUs have none)", warp[k]);
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++)
        if (is(t, other[k])) return refuse(c, t->line, "'%s'", other[k]);
    return GP_SUCCESS;
}

/* ---- names that map one to one ---- */

static const char *renamed(const tok *t)
{
    static const char *const map[][2] = {
        {"__syncthreads", "gp_barrier"}, {"sinf", "sin"}, {"cosf", "cos"}, {"tanf", "tan"}, {"expf", "exp"},
        {"exp2f", "exp2"}, {"exp10f", "exp10"}, {"logf", "log"}, {"log2f", "log2"}, {"log10f", "log10"},
        {"log1pf", "log1p"}, {"expm1f", "expm1"}, {"sqrtf", "sqrt"}, {"rsqrtf", "rsqrt"}, {"cbrtf", "cbrt"},
        {"powf", "pow"}, {"fabsf", "fabs"}, {"fmaxf", "fmax"}, {"fminf", "fmin"}, {"fmodf", "fmod"},
        {"floorf", "floor"}, {"ceilf", "ceil"}, {"truncf", "trunc"}, {"roundf", "round"}, {"rintf", "rint"},
        {"atan2f", "atan2"}, {"atanf", "atan"}, {"asinf", "asin"}, {"acosf", "acos"}, {"sinhf", "sinh"},
        {"coshf", "cosh"}, {"tanhf", "tanh"}, {"asinhf", "asinh"}, {"acoshf", "acosh"}, {"atanhf", "atanh"},
        {"erff", "erf"}, {"erfcf", "erfc"}, {"tgammaf", "tgamma"}, {"lgammaf", "lgamma"}, {"hypotf", "hypot"},
        {"copysignf", "copysign"}, {"fmaf", "fma"}, {"__expf", "native_exp"}, {"__logf", "native_log"},
        {"__sinf", "native_sin"}, {"__cosf", "native_cos"}, {"__powf", "native_powr"},
        {"__fdividef", "native_divide"}, {"__fsqrt_rn", "sqrt"}, {"__int_as_float", "as_float"},
        {"__float_as_int", "as_int"}, {"__uint_as_float", "as_float"}, {"__float_as_uint", "as_uint"},
        {"__double_as_longlong", "as_long"}, {"__longlong_as_double", "as_double"},
        {"__float2int_rn", "convert_int_rte"}, {"__float2int_rz", "convert_int_rtz"},
        {"__float2uint_rn", "convert_uint_rte"}, {"__int2float_rn", "convert_float_rte"}, {"__popc", "popcount"},
        {"__popcll", "popcount"}, {"__clz", "clz"}, {"__clzll", "clz"}, {"__restrict__", "restrict"},
        {"__restrict", "restrict"}, {"__ldg", ""}};
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (is(t, map[k][0])) return map[k][1];
    return NULL;
}

/* An atomic's OpenCL name for an element type, or a helper's (H_ bits say which to define). */
enum { H_ADDF = 1, H_XCHGF = 2, H_ADDD = 4, H_INC = 8, H_DEC = 16 };

static const char *const atomic_ops[][2] = {{"atomicAdd", "add"}, {"atomicSub", "sub"}, {"atomicMax", "max"},
                                            {"atomicMin", "min"}, {"atomicExch", "xchg"}, {"atomicCAS", "cmpxchg"},
                                            {"atomicAnd", "and"}, {"atomicOr", "or"}, {"atomicXor", "xor"},
                                            {"atomicInc", "inc"}, {"atomicDec", "dec"}};

static const char *cuda_atomic(const tok *fn)
{
    for (size_t k = 0; k < sizeof atomic_ops / sizeof atomic_ops[0]; k++)
        if (is(fn, atomic_ops[k][0])) return atomic_ops[k][1];
    return NULL;
}

static const char *atomic_name(cc *c, const tok *fn, const sym *s, char *buf, size_t len)
{
    const char *op = cuda_atomic(fn);
    const char *sp = s->space == S_LOCAL ? "l" : "g";
    int word = strcmp(s->type, "int") == 0 || strcmp(s->type, "uint") == 0;
    int wide = strcmp(s->type, "long") == 0 || strcmp(s->type, "ulong") == 0;
    if (strcmp(op, "inc") == 0 || strcmp(op, "dec") == 0) {
        if (strcmp(s->type, "uint") != 0) return NULL;
        c->helpers |= op[0] == 'i' ? H_INC : H_DEC;
        snprintf(buf, len, "gp__cu_%s_%s", op, sp);
    } else if (word || wide) {
        snprintf(buf, len, "%s_%s", word ? "atomic" : "atom", op);
    } else if (strcmp(s->type, "float") == 0 && (strcmp(op, "add") == 0 || strcmp(op, "xchg") == 0)) {
        c->helpers |= op[0] == 'a' ? H_ADDF : H_XCHGF;
        snprintf(buf, len, "gp__cu_%sf_%s", op, sp);
    } else if (strcmp(s->type, "double") == 0 && strcmp(op, "add") == 0) {
        c->helpers |= H_ADDD;
        snprintf(buf, len, "gp__cu_addd_%s", sp);
    } else {
        return NULL;
    }
    return buf;
}

/* OpenCL C for the helpers the kernels use, in both address spaces. */
static void put_helpers(cc *c)
{
    static const char *const text[] = {
        /* H_ADDF */
        "static inline float gp__cu_addf_%s(volatile %s float *p, float v)\n{\n"
        "    volatile %s uint *q = (volatile %s uint *)p;\n    uint old = *q, seen;\n"
        "    do { seen = old; old = atomic_cmpxchg(q, seen, as_uint(as_float(seen) + v)); } while (old != seen);\n"
        "    return as_float(old);\n}\n",
        /* H_XCHGF */
        "static inline float gp__cu_xchgf_%s(volatile %s float *p, float v)\n{\n"
        "    return as_float(atomic_xchg((volatile %s uint *)p, as_uint(v)));%.0s\n}\n",
        /* H_ADDD */
        "static inline double gp__cu_addd_%s(volatile %s double *p, double v)\n{\n"
        "    volatile %s ulong *q = (volatile %s ulong *)p;\n    ulong old = *q, seen;\n"
        "    do { seen = old; old = atom_cmpxchg(q, seen, as_ulong(as_double(seen) + v)); } while (old != seen);\n"
        "    return as_double(old);\n}\n",
        /* H_INC */
        "static inline uint gp__cu_inc_%s(volatile %s uint *p, uint v)\n{\n    uint old = *p, seen;\n"
        "    do { seen = old; old = atomic_cmpxchg(p, seen, seen >= v ? 0 : seen + 1); } while (old != seen);\n"
        "    return old;%.0s%.0s\n}\n",
        /* H_DEC */
        "static inline uint gp__cu_dec_%s(volatile %s uint *p, uint v)\n{\n    uint old = *p, seen;\n"
        "    do { seen = old; old = atomic_cmpxchg(p, seen, seen == 0 || seen > v ? v : seen - 1); }"
        " while (old != seen);\n    return old;%.0s%.0s\n}\n"};
    char fn[1024];
    for (int h = 0; h < 5; h++) {
        if (!(c->helpers & (1u << h))) continue;
        for (int space = 0; space < 2; space++) {
            const char *sp = space ? "l" : "g", *q = space ? "__local" : "__global";
            snprintf(fn, sizeof fn, text[h], sp, q, q, q);
            puts_at(c, fn, c->line);
        }
    }
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
    d->type = type_at(&t[i], &used);
    if (!d->type && (vector_type(&t[i]) || (t[i].kind == T_ID && !keyword(&t[i]) && !lookup(c, &t[i]) &&
                                            renamed(&t[i]) == NULL && !keyword(&t[i + 1]) &&
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

/* The tokens from i up to end (not included), CUDA's names put into the dialect's. */
static gp_status tokens(cc *c, size_t i, size_t end)
{
    const tok *t = c->t;
    static const char *const dims[] = {"threadIdx", "gp_local_id", "blockIdx", "gp_group_id", "blockDim",
                                       "gp_local_size", "gridDim", "gp_num_groups"};
    while (i < end) {
        const tok *k = &t[i];
        gp_status st = check_word(c, k);
        if (st != GP_SUCCESS) return st;
        if (k->kind == T_PP) {
            put_pp(c, k);
            i++;
            continue;
        }
        if (k->kind != T_ID) {
            put(c, k->p, k->n, k->line);
            i++;
            continue;
        }
        int done = 0;
        for (size_t d = 0; d < 8 && !done; d += 2)
            if (is(k, dims[d]) && is(&t[i + 1], ".") && t[i + 2].n == 1 && strchr("xyz", t[i + 2].p[0])) {
                char text[32];
                snprintf(text, sizeof text, "%s(%d)", dims[d + 1], t[i + 2].p[0] - 'x');
                puts_at(c, text, k->line);
                i += 3, done = 1;
            }
        if (done) continue;
        size_t used;
        const char *type = type_at(k, &used);
        if (type && (used > 1 || !is(k, type))) {
            puts_at(c, type, k->line);
            i += used;
            continue;
        }
        if (cuda_atomic(k) && is(&t[i + 1], "(")) {
            size_t arg = i + 2;
            while (is(&t[arg], "&") || is(&t[arg], "(")) arg++;
            sym *s = t[arg].kind == T_ID ? lookup(c, &t[arg]) : NULL;
            char name[48];
            if (!s || !s->pointer)
                return refuse(c, k->line, "%.*s on an address the translation cannot follow (write &array[i], or a "
                              "pointer parameter plus an offset)", (int)k->n, k->p);
            if (!atomic_name(c, k, s, name, sizeof name))
                return refuse(c, k->line, "%.*s on %s", (int)k->n, k->p, s->type);
            puts_at(c, name, k->line);
            i++;
            continue;
        }
        if (strncmp(k->p, "make_", 5) == 0 && is(&t[i + 1], "(")) { /* make_float2(a, b): (float2)(a, b) */
            tok v = {T_ID, k->line, k->p + 5, k->n - 5};
            if (vector_type(&v)) {
                char text[32];
                snprintf(text, sizeof text, "(%.*s)", (int)v.n, v.p);
                puts_at(c, text, k->line);
                i++;
                continue;
            }
        }
        const char *r = renamed(k);
        if (r) {
            if (*r) puts_at(c, r, k->line);
            else puts_at(c, "*", k->line); /* __ldg(p): *(p) */
            i++;
            continue;
        }
        if (is(k, "__forceinline__") || is(k, "__inline__") || is(k, "__noinline__") || is(k, "__host__") ||
            is(k, "__device__")) {
            i++;
            continue;
        }
        put(c, k->p, k->n, k->line);
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
    puts_at(c, "{", t[open].line);
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
                    return refuse(c, t[i].line, "__shared__ memory in a __device__ function (OpenCL makes it only in "
                                  "kernels: declare it in the kernel and pass a pointer)");
                declare(c, &t[d.name], d.type, S_LOCAL, 1);
                i = semi + 1; /* declared at the kernel's top */
                continue;
            }
            int pointer = d.pointer && !d.array;
            int space = pointer ? space_of(c, d.name + 1, semi) : S_PRIVATE;
            declare(c, &t[d.name], d.type, space, pointer || d.array);
            if (pointer && space != S_PRIVATE) puts_at(c, space_word(space), t[i].line);
            gp_status st = tokens(c, i, d.name + 1);
            if (st != GP_SUCCESS) return st;
            i = c->i;
            continue;
        }
        gp_status st = tokens(c, i, i + 1);
        if (st != GP_SUCCESS) return st;
        i = c->i;
    }
    puts_at(c, "}", t[close].line);
    return GP_SUCCESS;
}

/* The parameters between open and close, pointers in global memory. */
static gp_status params(cc *c, size_t open, size_t close)
{
    const tok *t = c->t;
    puts_at(c, "(", t[open].line);
    size_t i = open + 1;
    while (i < close) {
        size_t end = i;
        while (end < close && !is(&t[end], ",")) end = is(&t[end], "(") ? match(c, end) + 1 : end + 1;
        decl d;
        if (is(&t[i], "void") && end == i + 1) {
            puts_at(c, "void", t[i].line);
        } else {
            for (size_t k = i; k < end; k++)
                if (is(&t[k], "&")) return refuse(c, t[k].line, "a reference parameter");
            if (!decl_at(c, i, &d)) return refuse(c, t[i].line, "a parameter it cannot read");
            int pointer = d.pointer || d.array;
            declare(c, &t[d.name], d.type, pointer ? S_GLOBAL : S_PRIVATE, pointer);
            if (pointer) puts_at(c, "GP_GLOBAL", t[i].line);
            if (d.array) { /* T name[]: a pointer */
                gp_status st = tokens(c, i, d.name);
                if (st != GP_SUCCESS) return st;
                puts_at(c, "*", t[d.name].line);
                put(c, t[d.name].p, t[d.name].n, t[d.name].line);
            } else {
                gp_status st = tokens(c, i, end);
                if (st != GP_SUCCESS) return st;
            }
        }
        if (end < close) puts_at(c, ",", t[end].line);
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
            if (dyn[0]) return refuse(c, t[i].line, "a second extern __shared__ array in one kernel");
            snprintf(dyn, dyn_len, "%s|%.*s", d.type, (int)t[d.name].n, t[d.name].p);
            continue;
        }
        size_t semi = d.name;
        while (semi < close && !is(&t[semi], ";")) semi++;
        used += (size_t)snprintf(fixed + used, used < len ? len - used : 0, "GP_LOCAL %s", d.type);
        for (size_t k = d.name; k <= semi && used < len; k++)
            used += (size_t)snprintf(fixed + used, len - used, " %.*s", (int)t[k].n, t[k].p);
        if (used >= len) return refuse(c, t[i].line, "too many __shared__ arrays in one kernel");
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

/* A function at i (its head up to the parameters' '(' at paren); *next: the token after it. */
static gp_status function(cc *c, size_t i, size_t paren, size_t *next)
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
        return refuse(c, t[i].line, "the host function '%.*s' (only __global__ and __device__ functions run on a "
                      "device)", (int)t[paren - 1].n, t[paren - 1].p);
    c->nsyms = 0;
    c->depth = 0;
    char dyn[64], fixed[2048];
    size_t end = has_body ? match(c, close + 1) : close + 1;
    if (has_body && kernel) {
        gp_status st = shared_decls(c, close + 1, end, dyn, sizeof dyn, fixed, sizeof fixed);
        if (st != GP_SUCCESS) return st;
    } else {
        dyn[0] = fixed[0] = 0;
    }
    puts_at(c, kernel ? "GP_KERNEL" : "GP_FUNC", t[i].line);
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
    put(c, t[paren - 1].p, t[paren - 1].n, t[paren - 1].line);
    gp_status st = params(c, paren, close);
    if (st != GP_SUCCESS) return st;
    char *bar = strchr(dyn, '|');
    if (bar) {
        *bar = 0;
        char arg[96];
        snprintf(arg, sizeof arg, "%sGP_LOCAL_ARG(%s, %s)", is(&t[close - 1], "(") ? "" : ", ", dyn, bar + 1);
        puts_at(c, arg, t[close].line);
        tok name = {T_ID, 0, bar + 1, strlen(bar + 1)};
        declare(c, &name, dyn, S_LOCAL, 1);
    }
    puts_at(c, ")", t[close].line);
    if (!has_body) {
        puts_at(c, ";", t[close + 1].line);
        *next = close + 2;
        return GP_SUCCESS;
    }
    if (fixed[0] || bar) {
        char top[2200];
        snprintf(top, sizeof top, "{ %s%s%s%s", bar ? "GP_LOCAL_BIND(" : "", bar ? dyn : "", bar ? ", " : "", "");
        if (bar) snprintf(top + strlen(top), sizeof top - strlen(top), "%s); ", bar + 1);
        snprintf(top + strlen(top), sizeof top - strlen(top), "%s", fixed);
        puts_at(c, top, t[close + 1].line);
        /* the body's own '{' follows as a nested block */
    }
    for (size_t k = close + 1; k < end; k++) /* the static __shared__ names, for the body's atomics */
        if (is(&t[k], "__shared__")) {
            decl d;
            if (statement_start(c, k, close + 1) && decl_at(c, k, &d) && !d.ext) declare(c, &t[d.name], d.type, S_LOCAL, 1);
        }
    st = body(c, close + 1, end, kernel);
    if (st == GP_SUCCESS && (fixed[0] || bar)) puts_at(c, "}", t[end].line);
    *next = end + 1;
    return st;
}

/* The headers CUDA C includes that the translation drops: NVRTC and hiprtc declare what they
 * hold themselves, and find no CUDA include folder of their own. */
static const char *const known_headers[] = {"<cuda_runtime.h>", "<cuda.h>", "<math.h>", "<stdint.h>",
                                            "\"cuda_runtime.h\"", "<cstdint>", "<cmath>"};

static int known_include(const char *p, size_t n)
{
    for (size_t k = 0; k < sizeof known_headers / sizeof known_headers[0]; k++)
        for (size_t at = 0; at + strlen(known_headers[k]) <= n; at++)
            if (memcmp(p + at, known_headers[k], strlen(known_headers[k])) == 0) return 1;
    return 0;
}

char *gp__cuda_without_includes(const char *source)
{
    char *out = strdup(source);
    for (char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char *p = line, *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' && strncmp(p + 1 + strspn(p + 1, " \t"), "include", 7) == 0 && known_include(line, n))
            memset(line, ' ', n); /* the line stays, so that messages keep the caller's numbers */
    }
    return out;
}

static gp_status translate(cc *c)
{
    const tok *t = c->t;
    size_t i = 0;
    int extern_block = 0;
    while (t[i].kind != T_EOF) {
        gp_status st = check_word(c, &t[i]);
        if (st != GP_SUCCESS) return st;
        if (t[i].kind == T_PP) {
            const char *p = t[i].p + 1;
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "include", 7) == 0) {
                if (!known_include(t[i].p, t[i].n))
                    return refuse(c, t[i].line, "#include of a header other than CUDA's own and <math.h>");
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
            if (!decl_at(c, i, &d) || !d.array) return refuse(c, t[i].line, "an extern __shared__ declaration it cannot read");
            snprintf(c->dyn_t, sizeof c->dyn_t, "%s", d.type);
            c->dyn_type = c->dyn_t, c->dyn_name = t[d.name].p, c->dyn_n = t[d.name].n;
            while (t[i].kind != T_EOF && !is(&t[i], ";")) i++;
            i++;
        } else if (is(&t[i], "struct") || is(&t[i], "typedef") || is(&t[i], "enum") || is(&t[i], "union")) {
            size_t end = i;
            while (t[end].kind != T_EOF && !is(&t[end], ";")) end = is(&t[end], "{") ? match(c, end) + 1 : end + 1;
            st = tokens(c, i, end + 1);
            if (st != GP_SUCCESS) return st;
            i = end + 1;
        } else if (is(&t[i], ";")) {
            i++;
        } else {
            size_t paren = i;
            while (t[paren].kind != T_EOF && !is(&t[paren], "(") && !is(&t[paren], ";") && !is(&t[paren], "=")) paren++;
            if (!is(&t[paren], "(") || paren == i || t[paren - 1].kind != T_ID)
                return refuse(c, t[i].line, "a file-scope declaration other than a function, a struct, a typedef or "
                              "extern __shared__ memory");
            st = function(c, i, paren, &i);
            if (st != GP_SUCCESS) return st;
        }
    }
    return GP_SUCCESS;
}

gp_status gp__cuda_to_dialect(const char *source, char **out)
{
    cc *c = calloc(1, sizeof *c);
    if (!c) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    c->line = 1;
    gp_status st = tokenize(c, source);
    if (st == GP_SUCCESS) st = translate(c);
    char *body_text = c->out;
    size_t body_len = c->len;
    int oom = c->oom;
    if (st == GP_SUCCESS && !oom) { /* the helpers, then the translation with the caller's line numbers */
        c->out = NULL, c->len = c->cap = 0, c->line = 1;
        put_helpers(c);
        puts_at(c, "\n#line 1\n", c->line);
        c->line = 1;
        put(c, body_text ? body_text : "", body_len, 1);
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
