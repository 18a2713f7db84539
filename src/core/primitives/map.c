/* The map primitive: the built-in ops of kernels/map.gp, and maps of the user's own expression. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { USES_X = 1, USES_Y = 2, FLOAT_ONLY = 4 };

/* In gp_map_op order. */
static const struct {
    const char *name;
    unsigned flags;
} ops[] = {
    {"copy", USES_X}, {"fill", 0}, {"scale", USES_X}, {"axpy", USES_X | USES_Y},
    {"add", USES_X | USES_Y}, {"sub", USES_X | USES_Y}, {"mul", USES_X | USES_Y},
    {"div", USES_X | USES_Y}, {"min", USES_X | USES_Y}, {"max", USES_X | USES_Y},
    {"abs", USES_X}, {"sqrt", USES_X | FLOAT_ONLY}, {"exp", USES_X | FLOAT_ONLY},
    {"log", USES_X | FLOAT_ONLY}, {"sin", USES_X | FLOAT_ONLY}, {"cos", USES_X | FLOAT_ONLY},
    {"pow", USES_X | USES_Y | FLOAT_ONLY},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

/* The kernel-dialect name of each gp_type, indexed by its value. */
static const char *const type_names[] = {NULL, "float", "double", "int", "uint", "long", "ulong"};

/* GPUs get one work-item per vector (or element) up to this many, so that the kernels' loops
 * run once: on an H100 this flat grid moved AXPY 2^28 f32 in 1.05 ms where a grid of 8 groups
 * per compute unit looping grid-stride took 1.13 ms. Beyond it (work-item ids are 32-bit) the
 * kernels loop. */
#define GPU_MAX_ITEMS ((size_t)1 << 31)
/* On a CPU, blocks per core (for balance), and the smallest block worth a work-item. */
#define CPU_ITEMS_PER_CU 8
#define CPU_MIN_BLOCK 4096

struct gp_map_kernel {
    gp_device *dev;
    gp_program *program;
    gp_kernel *kernel;
    gp_type out_type;
    size_t nin;
    gp_type in_types[3];
};

static int is_float(gp_type type) { return type == GP_F32 || type == GP_F64; }

/* The views of one map, out first: each inside its buffer, all on out's device, and none
 * sharing bytes with out except element for element (in place). */
static gp_status check_views(const char *fn, size_t n, size_t count, const gp_view *views, const gp_type *types,
                             const char *const *names)
{
    for (size_t v = 0; v < count; v++) {
        gp_status st = gp__check_view(views[v], types[v], n, fn, names[v]);
        if (st != GP_SUCCESS) return st;
    }
    gp_device *dev = views[0].buffer->dev;
    size_t osize = gp_type_size(types[0]), obegin = views[0].offset * osize, oend = obegin + n * osize;
    for (size_t v = 1; v < count; v++) {
        const gp_buffer *b = views[v].buffer;
        if (b->dev != dev)
            return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the %s buffer is on %s:%zu, out on %s:%zu", fn, names[v],
                            b->dev->info.backend, b->dev->info.backend_index, dev->info.backend,
                            dev->info.backend_index);
        size_t size = gp_type_size(types[v]), begin = views[v].offset * size, end = begin + n * size;
        if (b == views[0].buffer && begin < oend && obegin < end && (begin != obegin || size != osize))
            return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                            "%s: out (elements from %zu) and %s (elements from %zu) overlap in one buffer; only "
                            "the same view, in place, may be both",
                            fn, views[0].offset, names[v], views[v].offset);
    }
    return GP_SUCCESS;
}

static size_t div_up(size_t a, size_t b) { return a / b + (a % b != 0); }

/* A power of two of at most 256 work-items that the kernel and device allow. */
static size_t group_size(const gp_kernel *k)
{
    size_t limit = k->props.max_group_size < k->dev->info.max_work_group_size ? k->props.max_group_size
                                                                               : k->dev->info.max_work_group_size;
    if (k->dev->info.max_work_item_sizes[0] < limit) limit = k->dev->info.max_work_item_sizes[0];
    size_t local = 256;
    while (local > 1 && local > limit) local /= 2;
    return local;
}

/* Launches a map kernel. CPUs: groups of one work-item, each taking a contiguous block of at
 * least CPU_MIN_BLOCK elements, a few per core. GPUs: `items` work-items (one per vector or
 * element), capped. */
static gp_status launch(gp_stream *stream, gp_kernel *k, size_t n, size_t items, size_t nargs, const gp_arg *args)
{
    const gp_device_info *info = &k->dev->info;
    size_t local = 1, global, cap = (size_t)info->compute_units * CPU_ITEMS_PER_CU;
    if (info->type == GP_DEVICE_CPU) {
        global = div_up(n, CPU_MIN_BLOCK);
        if (global > cap) global = cap;
    } else {
        local = group_size(k);
        global = items < GPU_MAX_ITEMS ? items : GPU_MAX_ITEMS;
    }
    if (global == 0) global = 1;
    return gp_kernel_launch(stream, k, 1, &global, &local, nargs, args);
}

/* a as the kernel reads it: one element of type. */
typedef union scalar_arg {
    float f;
    double d;
    int32_t i;
    uint32_t u;
    int64_t l;
    uint64_t ul;
} scalar_arg;

/* *a (0 when a is NULL) as the kernel's argument of type. */
static gp_arg scalar(gp_type type, const gp_scalar *a, scalar_arg *v)
{
    static const gp_scalar zero = {0};
    if (!a) a = &zero;
    switch (type) {
    case GP_F32: v->f = (float)a->f; break;
    case GP_F64: v->d = a->f; break;
    case GP_I32: v->i = (int32_t)a->i; break;
    case GP_U32: v->u = (uint32_t)a->u; break;
    case GP_I64: v->l = a->i; break;
    case GP_U64: v->ul = a->u; break;
    default: break;
    }
    return GP_VALUE_AS(v, type);
}

gp_status gp_map(gp_stream *stream, gp_map_op op, gp_type type, size_t n, gp_view out, gp_view x, gp_view y,
                 const gp_scalar *a)
{
    static const char fn[] = "gp_map";
    if ((unsigned)op >= OP_COUNT) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_map_op", fn, (int)op);
    size_t size = gp_type_size(type);
    if (size == 0) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_type", fn, (int)type);
    if ((ops[op].flags & FLOAT_ONLY) && !is_float(type))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %s is for floating-point types only, not %s", fn, ops[op].name,
                        type_names[type]);

    gp_view views[3] = {out};
    const char *names[3] = {"out"};
    const gp_type types[3] = {type, type, type};
    size_t count = 1;
    if (ops[op].flags & USES_X) views[count] = x, names[count++] = "x";
    if (ops[op].flags & USES_Y) views[count] = y, names[count++] = "y";
    gp_status st = check_views(fn, n, count, views, types, names);
    if (st != GP_SUCCESS) return st;
    gp_device *dev = out.buffer->dev;
    const char *options = gp__type_option(dev, type, fn);
    if (!options) return GP_ERROR_UNSUPPORTED;
    st = gp__primitive_begin(&stream, dev, fn);
    if (st != GP_SUCCESS) return st;
    if (n == 0) {
        gp__primitive_end(stream);
        return GP_SUCCESS;
    }

    char name[32];
    snprintf(name, sizeof name, "gp_map_%s", ops[op].name);
    gp_kernel *k = NULL;
    st = gp__builtin_kernel(dev, gp__src_map, options, name, 8, &k);
    if (st == GP_SUCCESS) {
        /* Operands the op does not read are passed as out, which keeps the vector path open:
         * the kernel never loads them. */
        gp_view xv = (ops[op].flags & USES_X) ? x : out, yv = (ops[op].flags & USES_Y) ? y : out;
        uint64_t oo = out.offset, xo = xv.offset, yo = yv.offset, nn = n;
        scalar_arg av;
        gp_arg args[] = {GP_BUFFER(out.buffer), GP_VALUE(oo), GP_BUFFER(xv.buffer), GP_VALUE(xo),
                         GP_BUFFER(yv.buffer), GP_VALUE(yo), scalar(type, a, &av), GP_VALUE(nn)};
        /* On a GPU, one work-item per 16-byte vector when the kernel takes its vector path (the
         * same test as the kernel's), else per element; at least the 128 bytes' worth that the
         * kernel's head and tail need. */
        uint64_t lanes = 16 / size;
        size_t items = (xo - oo) % lanes == 0 && (yo - oo) % lanes == 0 ? div_up(n, lanes) : n;
        if (items < 128 / size) items = 128 / size;
        st = launch(stream, k, n, items, sizeof args / sizeof args[0], args);
    }
    gp__primitive_end(stream);
    return st;
}

/* ---- Maps of the user's own expression ---------------------------------------------------- */

static const char *const input_names[] = {"x", "y", "z"};

/* The kernel gp_map_user: a grid-stride loop on GPUs, a block per work-item on CPUs (as the
 * built-in shapes), around the user's expression or snippet. */
static int user_source(char *buf, size_t cap, const gp_device *dev, gp_type out_type, size_t nin,
                       const gp_type *in_types, const char *expression)
{
    const char *ot = type_names[out_type];
    char params[256] = "", loads[256] = "";
    size_t pl = 0, ll = 0;
    for (size_t v = 0; v < nin; v++) {
        const char *t = type_names[in_types[v]], *nm = input_names[v];
        pl += (size_t)snprintf(params + pl, sizeof params - pl, ", GP_GLOBAL const %s *gp_%s, ulong gp_%s_offset", t,
                               nm, nm);
        ll += (size_t)snprintf(loads + ll, sizeof loads - ll, "        %s %s = gp_%s[gp_%s_offset + i];\n", t, nm,
                               nm, nm);
    }
    const char *loop =
        dev->info.type == GP_DEVICE_CPU
            ? "    ulong gp_g = gp_global_size(0), gp_per = ((gp_n + gp_g - 1) / gp_g + 15) / 16 * 16;\n"
              "    ulong gp_s = gp_global_id(0) * gp_per, gp_e = gp_s + gp_per < gp_n ? gp_s + gp_per : gp_n;\n"
              "    for (ulong i = gp_s; i < gp_e; i++) {\n"
            : "    /* Starts where out reaches a 128-byte boundary, the head last: whole-sector stores. */\n"
              "    ulong gp_h = (GP_MAP_LINE - gp_out_offset % GP_MAP_LINE) % GP_MAP_LINE;\n"
              "    gp_h = gp_h < gp_n ? gp_h : gp_n;\n"
              "    for (ulong gp_j = gp_global_id(0); gp_j < gp_n; gp_j += gp_global_size(0)) {\n"
              "        ulong i = gp_j < gp_n - gp_h ? gp_j + gp_h : gp_j - (gp_n - gp_h);\n";
    /* A snippet (it has a ';') assigns r itself; an expression is assigned to it, on lines of
     * its own so that a // comment in it ends there. The #line makes compile errors point
     * into the user's own text. */
    int snippet = strchr(expression, ';') != NULL;
    return snprintf(buf, cap,
                    "/* gp_map_kernel */\n"
                    "#define GP_MAP_LINE %zu\n"
                    "GP_KERNEL void gp_map_user(GP_GLOBAL %s *gp_out, ulong gp_out_offset%s, %s a, ulong gp_n)\n"
                    "{\n%s%s"
                    "        %s r = 0;\n"
                    "%s"
                    "#line 1\n"
                    "%s\n"
                    "%s"
                    "        gp_out[gp_out_offset + i] = r;\n"
                    "    }\n"
                    "}\n",
                    128 / gp_type_size(out_type), ot, params, ot, loop, loads, ot, snippet ? "" : "        r = (\n",
                    expression, snippet ? "" : "        );\n");
}

gp_status gp_map_kernel_create(gp_device *device, gp_type out_type, size_t nin, const gp_type *in_types,
                               const char *expression, gp_map_kernel **kernel)
{
    static const char fn[] = "gp_map_kernel_create";
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(kernel, "kernel");
    GP__CHECK_OUT(expression, "expression");
    if (nin < 1 || nin > 3)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %zu inputs; a map takes 1 to 3 (x, y, z)", fn, nin);
    GP__CHECK_OUT(in_types, "in_types");
    if (expression[strspn(expression, " \t\r\n")] == '\0')
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the expression is empty", fn);
    char why[160];
    int snippet = strchr(expression, ';') != NULL;
    if (!gp__check_user_code(expression, snippet, why, sizeof why))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the %s cannot be used: %s", fn,
                        snippet ? "snippet" : "expression", why);
    /* gp__type_option refuses a value that is no gp_type, and f64 on a device without it. */
    for (size_t v = 0; v <= nin; v++) {
        gp_type t = v == 0 ? out_type : in_types[v - 1];
        if (!gp__type_option(device, t, fn)) return gp_type_size(t) ? GP_ERROR_UNSUPPORTED : GP_ERROR_INVALID_ARGUMENT;
    }

    gp_map_kernel *mk = calloc(1, sizeof *mk);
    int len = user_source(NULL, 0, device, out_type, nin, in_types, expression);
    char *source = len > 0 ? malloc((size_t)len + 1) : NULL;
    if (!mk || !source) {
        free(mk);
        free(source);
        return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory", fn);
    }
    user_source(source, (size_t)len + 1, device, out_type, nin, in_types, expression);
    gp_status st = gp_program_create(device, source, NULL, &mk->program);
    free(source);
    if (st == GP_SUCCESS) st = gp__kernel_create(mk->program, "gp_map_user", 2 * (nin + 1) + 2, &mk->kernel);
    if (st != GP_SUCCESS) {
        gp_program_destroy(mk->program);
        free(mk);
        return st;
    }
    mk->dev = device;
    mk->out_type = out_type;
    mk->nin = nin;
    memcpy(mk->in_types, in_types, nin * sizeof *in_types);
    *kernel = mk;
    return GP_SUCCESS;
}

gp_status gp_map_kernel_destroy(gp_map_kernel *kernel)
{
    if (!kernel) return GP_SUCCESS;
    gp_kernel_destroy(kernel->kernel);
    gp_program_destroy(kernel->program);
    free(kernel);
    return GP_SUCCESS;
}

gp_status gp_map_kernel_run(gp_stream *stream, gp_map_kernel *kernel, size_t n, gp_view out, const gp_view *in,
                            const gp_scalar *a)
{
    static const char fn[] = "gp_map_kernel_run";
    GP__CHECK_HANDLE(kernel, "kernel");
    GP__CHECK_OUT(in, "in");
    gp_view views[4] = {out};
    gp_type types[4] = {kernel->out_type};
    const char *names[4] = {"out", "x", "y", "z"};
    for (size_t v = 0; v < kernel->nin; v++) views[v + 1] = in[v], types[v + 1] = kernel->in_types[v];
    gp_status st = check_views(fn, n, kernel->nin + 1, views, types, names);
    if (st != GP_SUCCESS) return st;
    if (out.buffer->dev != kernel->dev)
        return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the buffers are on %s:%zu, the kernel on %s:%zu", fn,
                        out.buffer->dev->info.backend, out.buffer->dev->info.backend_index,
                        kernel->dev->info.backend, kernel->dev->info.backend_index);
    st = gp__primitive_begin(&stream, kernel->dev, fn);
    if (st != GP_SUCCESS) return st;
    if (n > 0) {
        uint64_t offsets[4], nn = n;
        gp_arg args[2 * 4 + 2]; /* out and up to three inputs, each a buffer and an offset; a; n */
        size_t nargs = 0;
        for (size_t v = 0; v <= kernel->nin; v++) {
            offsets[v] = views[v].offset;
            args[nargs++] = GP_BUFFER(views[v].buffer);
            args[nargs++] = GP_VALUE(offsets[v]);
        }
        scalar_arg av;
        args[nargs++] = scalar(kernel->out_type, a, &av);
        args[nargs++] = GP_VALUE(nn);
        st = launch(stream, kernel->kernel, n, n, nargs, args);
    }
    gp__primitive_end(stream);
    return st;
}
