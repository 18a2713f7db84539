/* The CUDA C translation's words: the source read as tokens, tokens written out on their own
 * lines, CUDA's type names and the names that map one to one, what is refused, and the helpers
 * atomics need. cuda_c.c is the parser that uses them. */
#include "cuda_tokens.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

gp_status gp__cc_refuse(cc *c, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return gp__fail(GP_ERROR_BUILD_FAILED, "CUDA C, line %d: %s (the OpenCL translation does not take it; "
                    "docs/cuda-c.md lists what it takes)", line, c->why);
}

/* ---- tokens ---- */

gp_status gp__cc_tokenize(cc *c, const char *s)
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
            if (!e) return gp__cc_refuse(c, line, "a comment that never ends");
            for (; s < e; s++) line += *s == '\n';
            s = e + 2;
            continue;
        }
        if (c->nt + PAD >= cap) {
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
            if (*s != q) return gp__cc_refuse(c, line, "a string or character literal that never ends");
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
    for (size_t k = 0; k < PAD; k++) c->t[c->nt + k] = (tok){T_EOF, line, s, 0};
    return GP_SUCCESS;
}

/* ---- output ---- */

void gp__cc_put(cc *c, const char *s, size_t n, int line)
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

void gp__cc_puts_at(cc *c, const char *s, int line)
{
    gp__cc_put(c, s, strlen(s), line);
}

/* A preprocessor line, alone on its line as the preprocessor wants it. */
void gp__cc_put_pp(cc *c, const tok *t)
{
    if (c->line < t->line) gp__cc_put(c, "", 0, t->line);
    else if (c->len && c->out[c->len - 1] != '\n') gp__cc_put(c, "\n", 1, c->line);
    gp__cc_put(c, t->p, t->n, c->line);
    gp__cc_put(c, "\n", 1, c->line);
}

/* ---- types and names ---- */

/* A CUDA type of one or more words at t as the dialect writes it; *used: how many tokens. */
const char *gp__cc_type_at(const tok *t, size_t *used)
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
int gp__cc_vector_type(const tok *t)
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


/* ---- what is refused ---- */

gp_status gp__cc_check_word(cc *c, const tok *t)
{
    static const char *const cxx[] = {"template", "typename", "class", "namespace", "new", "delete", "operator",
                                      "this", "nullptr", "static_cast", "reinterpret_cast", "const_cast",
                                      "dynamic_cast", "constexpr", "auto", "decltype", "using", "throw", "try",
                                      "catch", "virtual", "friend", "::", "<<<", "__managed__", "texture", "surface",
                                      "cudaTextureObject_t", "cudaSurfaceObject_t"};
    static const char *const warp[] = {"__shfl", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                       "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync", "__activemask",
                                       "__syncwarp", "warpSize", "__match_any_sync", "__reduce_add_sync"};
    static const char *const other[] = {"tex1D", "tex2D", "tex3D", "tex1Dfetch", "surf2Dread", "surf2Dwrite",
                                        "__threadfence", "__threadfence_system", "clock", "clock64", "__nanosleep",
                                        "__brev", "__ffs", "cudaMalloc", "cudaFree", "cudaMemcpy", "__syncthreads_count",
                                        "__syncthreads_and", "__syncthreads_or", "atomicAdd_block"};
    for (size_t k = 0; k < sizeof cxx / sizeof cxx[0]; k++)
        if (is(t, cxx[k]))
            return gp__cc_refuse(c, t->line, strcmp(cxx[k], "<<<") == 0 ? "a kernel launch from device code"
                                                                    : "the C++ construct '%s'",
                          cxx[k]);
    for (size_t k = 0; k < sizeof warp / sizeof warp[0]; k++)
        if (is(t, warp[k]))
            return gp__cc_refuse(c, t->line, "the warp intrinsic '%s' (warps are 32 wide on NVIDIA, 64 on most AMD GPUs, "
                          "and CPUs have none)", warp[k]);
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++)
        if (is(t, other[k])) return gp__cc_refuse(c, t->line, "'%s'", other[k]);
    return GP_SUCCESS;
}

/* ---- names that map one to one ---- */

const char *gp__cc_renamed(const tok *t)
{
    static const char *const map[][2] = {
        {"__syncthreads", "gp_barrier"}, {"sinf", "sin"}, {"cosf", "cos"}, {"tanf", "tan"}, {"expf", "exp"},
        {"exp2f", "exp2"}, {"exp10f", "exp10"}, {"logf", "log"}, {"log2f", "log2"}, {"log10f", "log10"},
        {"log1pf", "log1p"}, {"expm1f", "expm1"}, {"sqrtf", "sqrt"}, {"rsqrtf", "rsqrt"}, {"cbrtf", "cbrt"},
        {"powf", "pow"}, {"fabsf", "fabs"}, {"abs", "GP__CU_ABS"}, {"fmaxf", "fmax"}, {"fminf", "fmin"}, {"fmodf", "fmod"},
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
        {"__restrict", "restrict"}, {"__ldg", ""},
        /* CUDA's names that OpenCL C keeps for itself */
        {"half", "half_cu"}, {"global", "global_cu"}, {"local", "local_cu"}, {"constant", "constant_cu"},
        {"private", "private_cu"}, {"kernel", "kernel_cu"}, {"read_only", "read_only_cu"},
        {"write_only", "write_only_cu"}, {"read_write", "read_write_cu"}, {"complex", "complex_cu"},
        {"imaginary", "imaginary_cu"}, {"sampler_t", "sampler_t_cu"}, {"event_t", "event_t_cu"}};
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (is(t, map[k][0])) return map[k][1];
    return NULL;
}

/* An atomic's OpenCL name for an element type, or a helper's (H_ bits say which to define). */
enum { H_ADDF = 1, H_XCHGF = 2, H_ADDD = 4, H_INC = 8, H_DEC = 16, H_ERFINV = 32 };

/* CUDA's erfinv and erfcinv (OpenCL C has neither): the helper's name, noted as used; NULL for
 * other names. */
const char *gp__cc_erfinv(cc *c, const tok *t)
{
    int inv = is(t, "erfinvf") || is(t, "erfinv"), cinv = is(t, "erfcinvf") || is(t, "erfcinv");
    if (inv || cinv) c->helpers |= H_ERFINV;
    return inv ? "gp__cu_erfinv" : cinv ? "gp__cu_erfcinv" : NULL;
}

/* Giles's approximation ("Approximating the erfinv function", GPU Computing Gems, 2011) in w =
 * -log((1 - x)(1 + x)), then two Newton steps on erf or erfc, which take it to the type's
 * precision; for float and double. */
static const char erfinv_text[] =
    "#define GP__CU_ERFINV(T)\\\n"
    "static inline __attribute__((overloadable)) T gp__cu_erfinv_guess(T w) {\\\n"
    "    T p;\\\n"
    "    if (w < (T)5) { w -= (T)2.5; p = (T)2.81022636e-08; p = (T)3.43273939e-07 + p * w;\\\n"
    "        p = (T)-3.5233877e-06 + p * w; p = (T)-4.39150654e-06 + p * w; p = (T)0.00021858087 + p * w;\\\n"
    "        p = (T)-0.00125372503 + p * w; p = (T)-0.00417768164 + p * w; p = (T)0.246640727 + p * w;\\\n"
    "        p = (T)1.50140941 + p * w;\\\n"
    "    } else { w = sqrt(w) - (T)3; p = (T)-0.000200214257; p = (T)0.000100950558 + p * w;\\\n"
    "        p = (T)0.00134934322 + p * w; p = (T)-0.00367342844 + p * w; p = (T)0.00573950773 + p * w;\\\n"
    "        p = (T)-0.0076224613 + p * w; p = (T)0.00943887047 + p * w; p = (T)1.00167406 + p * w;\\\n"
    "        p = (T)2.83297682 + p * w; }\\\n"
    "    return p;\\\n"
    "}\\\n"
    "static inline __attribute__((overloadable)) T gp__cu_erfinv(T x) {\\\n"
    "    if (!(fabs(x) < (T)1)) return fabs(x) == (T)1 ? copysign((T)INFINITY, x) : (T)NAN;\\\n"
    "    T r = gp__cu_erfinv_guess(-log(((T)1 - x) * ((T)1 + x))) * x;\\\n"
    "    for (int k = 0; k < 2; k++) r -= (erf(r) - x) / ((T)1.1283791670955126 * exp(-r * r));\\\n"
    "    return r;\\\n"
    "}\\\n"
    "static inline __attribute__((overloadable)) T gp__cu_erfcinv(T y) {\\\n"
    "    if (!(y > (T)0 && y < (T)2)) return y == (T)0 ? (T)INFINITY : y == (T)2 ? -(T)INFINITY : (T)NAN;\\\n"
    "    T r = gp__cu_erfinv_guess(-log(y * ((T)2 - y))) * ((T)1 - y);\\\n"
    "    for (int k = 0; k < 2; k++) r += (erfc(r) - y) / ((T)1.1283791670955126 * exp(-r * r));\\\n"
    "    return r;\\\n"
    "}\n"
    "GP__CU_ERFINV(float)\n"
    "#ifdef GP_HAS_FP64\n"
    "GP__CU_ERFINV(double)\n"
    "#endif\n";

static const char *const atomic_ops[][2] = {{"atomicAdd", "add"}, {"atomicSub", "sub"}, {"atomicMax", "max"},
                                            {"atomicMin", "min"}, {"atomicExch", "xchg"}, {"atomicCAS", "cmpxchg"},
                                            {"atomicAnd", "and"}, {"atomicOr", "or"}, {"atomicXor", "xor"},
                                            {"atomicInc", "inc"}, {"atomicDec", "dec"}};

const char *gp__cc_cuda_atomic(const tok *fn)
{
    for (size_t k = 0; k < sizeof atomic_ops / sizeof atomic_ops[0]; k++)
        if (is(fn, atomic_ops[k][0])) return atomic_ops[k][1];
    return NULL;
}

const char *gp__cc_atomic_name(cc *c, const tok *fn, const sym *s, char *buf, size_t len)
{
    const char *op = gp__cc_cuda_atomic(fn);
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
void gp__cc_put_helpers(cc *c)
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
    /* CUDA's abs takes integers and floats (C++ overloads); OpenCL's only integers, and returns them unsigned */
    gp__cc_puts_at(c, "#define GP__CU_ABS(x) ((x) < 0 ? -(x) : (x))\n", c->line);
    if (c->helpers & H_ERFINV) gp__cc_puts_at(c, erfinv_text, c->line);
    for (int h = 0; h < 5; h++) {
        if (!(c->helpers & (1u << h))) continue;
        for (int space = 0; space < 2; space++) {
            const char *sp = space ? "l" : "g", *q = space ? "__local" : "__global";
            snprintf(fn, sizeof fn, text[h], sp, q, q, q);
            gp__cc_puts_at(c, fn, c->line);
        }
    }
}

/* The headers CUDA C includes that the translation drops: NVRTC and hiprtc declare what they
 * hold themselves, and find no CUDA include folder of their own. */
static const char *const known_headers[] = {"<cuda_runtime.h>", "<cuda.h>", "<math.h>", "<stdint.h>",
                                            "\"cuda_runtime.h\"", "<cstdint>", "<cmath>"};

int gp__cc_known_include(const char *p, size_t n)
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
        if (*p == '#' && strncmp(p + 1 + strspn(p + 1, " \t"), "include", 7) == 0 && gp__cc_known_include(line, n))
            memset(line, ' ', n); /* the line stays, so that messages keep the caller's numbers */
    }
    return out;
}
