/* What the two halves of the CUDA C translation share (cuda_tokens.c reads tokens and writes
 * them, cuda_c.c parses): the tokens, the names a function declares, the translation's state. */
#ifndef GPUPORT_CUDA_TOKENS_H
#define GPUPORT_CUDA_TOKENS_H

#include "internal.h"

#include <string.h>

enum { T_ID, T_NUM, T_STR, T_PUNCT, T_PP, T_EOF };
enum { PAD = 16 }; /* end tokens after the last, so that looking a few tokens ahead never reads past them */
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
    int global; /* 1 + its index in cc.g for a file-scope __constant__ or __device__ variable, else 0 */
} sym;

/* A file-scope __constant__ or __device__ variable: on OpenCL, a buffer the program keeps and
 * passes to each kernel and __device__ function as a last hidden parameter, gp__g_NAME. */
typedef struct {
    const char *name;
    size_t n;
    char type[24];
    int scalar, constq;
    size_t dims, dims_end; /* the tokens of its size, between [ and ] */
} glob;

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
    glob g[GP__MAX_GLOBALS];
    size_t ng;
    const tok *funcs[64]; /* the __device__ functions' names: calls to them pass the globals on */
    size_t nfuncs;
    /* Per __device__ function: which parameters are pointers (a bit each), and which address
     * spaces its calls pass them (a bit per variant: the sum over its pointer parameters of 3^j
     * times 0 global, 1 local, 2 private; bit 0, all global, always). A function called with
     * local or private memory is written once per variant, overloadable, so that each call finds
     * the one of its arguments' spaces (OpenCL 1.2 has no generic address space). */
    unsigned fptrs[64], want[64];
    const tok *typedefs[32]; /* the names file-scope typedefs declare: T(x) is a cast */
    size_t ntypedefs;
    int variant, overload, grew;
    size_t pend[64]; /* the closing ')' of such calls still to be written */
    size_t npend;
} cc;

static inline int is(const tok *t, const char *s)
{
    return t->kind != T_EOF && strlen(s) == t->n && memcmp(t->p, s, t->n) == 0;
}

/* cuda_tokens.c */
gp_status gp__cc_refuse(cc *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
gp_status gp__cc_tokenize(cc *c, const char *s);
void gp__cc_put(cc *c, const char *s, size_t n, int line);
void gp__cc_puts_at(cc *c, const char *s, int line);
void gp__cc_put_pp(cc *c, const tok *t);
const char *gp__cc_type_at(const tok *t, size_t *used);
int gp__cc_vector_type(const tok *t);
gp_status gp__cc_check_word(cc *c, const tok *t);
const char *gp__cc_renamed(const tok *t);
const char *gp__cc_erfinv(cc *c, const tok *t);
const char *gp__cc_cuda_atomic(const tok *fn);
const char *gp__cc_atomic_name(cc *c, const tok *fn, const sym *s, char *buf, size_t len);
void gp__cc_put_helpers(cc *c);
int gp__cc_known_include(const char *p, size_t n);

#endif
