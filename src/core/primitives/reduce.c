/* The reduce primitive and user-defined reductions: one kernel, whose groups fold the input into
 * partials and whose last group to finish folds those (kernels/reduce.gp). */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kernels/reduce.gp: the widest group, and the bytes of the largest accumulator (a value and
 * its index), which it publishes as that many 8-byte tagged words per 4 bytes after a 16-byte
 * counter. */
#define GROUP 256
#define ACC_MAX 16
#define SYNC_BYTES(groups) (16 + (groups) * (ACC_MAX / 4) * 8)
/* Groups per compute unit: enough resident work-items on a GPU to keep the memory busy; on a
 * CPU a few chunks per thread to even out the load. */
#define GPU_GROUPS_PER_CU 4
#define CPU_GROUPS_PER_CU 4
/* Each work-item gets at least this many 16-byte vectors. */
#define MIN_VECS 2

struct gp_reduce_kernel {
    gp_device *dev;
    size_t nin;
    gp_type in_types[3], acc_type;
    gp_kernel *kernel;
};

static const char *const op_names[] = {"sum", "prod", "min", "max", "argmin", "argmax"};

/* A power of two no larger than GROUP that the kernel and the device accept. */
static size_t group_size(const gp_kernel *a)
{
    size_t limit = a->props.max_group_size;
    if (a->dev->info.max_work_group_size < limit) limit = a->dev->info.max_work_group_size;
    if (a->dev->info.max_work_item_sizes[0] < limit) limit = a->dev->info.max_work_item_sizes[0];
    size_t ls = GROUP;
    while (ls > 1 && ls > limit) ls /= 2;
    return ls;
}

/* Runs the kernel on a locked stream over nin inputs (it takes each as a buffer and an element
 * offset), counting in units of `unit` elements (a 16-byte vector of the one-input kernels, four
 * elements of the others). The result goes to out at element out_off, or, with out NULL, to the
 * scratch and from there to result on the host. */
static gp_status run(gp_stream *s, gp_kernel *kernel, size_t unit, size_t n, size_t nin, const gp_view *in,
                     gp_buffer *out, size_t out_off, void *result, size_t result_size)
{
    const gp_device_info *info = &s->dev->info;
    size_t ls = group_size(kernel), nvec = n / unit;
    if (ls < 16) /* the kernels give the unaligned head and tail to work-items 0..3 of the grid */
        return gp__fail(GP_ERROR_UNSUPPORTED, "gp_reduce: %s:%zu allows work-groups of %zu; the reduction needs 16",
                        info->backend, info->backend_index, ls);
    size_t per_cu = info->type == GP_DEVICE_CPU ? CPU_GROUPS_PER_CU : GPU_GROUPS_PER_CU;
    size_t cus = info->compute_units ? info->compute_units : 1;
    size_t groups = (nvec + ls * MIN_VECS - 1) / (ls * MIN_VECS);
    if (groups > cus * per_cu) groups = cus * per_cu;
    if (groups == 0) groups = 1; /* n == 0: one group writes the identity */
    uint64_t first = 1, span = nvec, step = (uint64_t)groups * ls;
    if (info->type == GP_DEVICE_CPU) {
        first = span = (nvec + groups * ls - 1) / (groups * ls);
        step = 1;
    }
    gp_buffer *sync = NULL, *scratch = NULL;
    uint32_t stamp = 0;
    gp_status st = gp__sync(s, SYNC_BYTES(groups), &sync, &stamp);
    if (st == GP_SUCCESS && !out) st = gp__scratch(s, ACC_MAX, &scratch);
    if (st != GP_SUCCESS) return st;

    uint64_t offs[3], count = n, dst_off = out ? out_off : 0;
    size_t global = groups * ls, np = 0;
    gp_arg args[14];
    for (size_t v = 0; v < nin; v++) {
        offs[v] = in[v].offset;
        args[np++] = GP_BUFFER(in[v].buffer);
        args[np++] = GP_VALUE(offs[v]);
    }
    args[np++] = GP_VALUE(count);
    args[np++] = GP_VALUE(first);
    args[np++] = GP_VALUE(span);
    args[np++] = GP_VALUE(step);
    args[np++] = GP_BUFFER(sync);
    args[np++] = GP_VALUE(stamp);
    args[np++] = GP_BUFFER(out ? out : scratch);
    args[np++] = GP_VALUE(dst_off);
    st = gp_kernel_launch(s, kernel, 1, &global, &ls, np, args);
    if (st == GP_SUCCESS && result) st = gp_buffer_read(s, scratch, 0, result, result_size);
    return st;
}

/* Checks shared by the built-in and user reductions; n elements of in_type, one of out_type. */
static gp_status check(const char *fn, gp_device *dev, gp_type in_type, size_t n, gp_view in, gp_type out_type,
                       const gp_view *out)
{
    gp_status st = gp__check_view(in, in_type, n, fn, "in");
    if (st == GP_SUCCESS && out) st = gp__check_view(*out, out_type, 1, fn, "out");
    if (st == GP_SUCCESS && in.buffer->dev != dev)
        st = gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the in buffer is on %s:%zu, the kernel on %s:%zu", fn,
                      in.buffer->dev->info.backend, in.buffer->dev->info.backend_index, dev->info.backend,
                      dev->info.backend_index);
    if (st == GP_SUCCESS && out && out->buffer->dev != dev)
        st = gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the out buffer is on %s:%zu, the in buffer on %s:%zu", fn,
                      out->buffer->dev->info.backend, out->buffer->dev->info.backend_index, dev->info.backend,
                      dev->info.backend_index);
    return st;
}

static gp_status builtin(const char *fn, gp_stream *stream, gp_reduce_op op, gp_type type, size_t n, gp_view in,
                         const gp_view *out, void *result)
{
    if ((unsigned)op > GP_REDUCE_ARGMAX)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_reduce_op", fn, (int)op);
    if (!gp_type_size(type)) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_type", fn, (int)type);
    if (!out && !result) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: result is NULL", fn);
    if (!in.buffer) return gp__fail(GP_ERROR_INVALID_HANDLE, "%s: the in view has no buffer", fn);
    gp_device *dev = in.buffer->dev;
    int arg = op == GP_REDUCE_ARGMIN || op == GP_REDUCE_ARGMAX;
    gp_type out_type = arg ? GP_U64 : type;
    gp_status st = check(fn, dev, type, n, in, out_type, out);
    const char *options = st == GP_SUCCESS ? gp__type_option(dev, type, fn) : NULL;
    if (!options) return st != GP_SUCCESS ? st : GP_ERROR_UNSUPPORTED;
    char name[32];
    snprintf(name, sizeof name, "gp_reduce_%s", op_names[op]);
    gp_kernel *kernel = NULL;
    st = gp__builtin_kernel(dev, gp__src_reduce, options, name, 10, &kernel);
    if (st == GP_SUCCESS) st = gp__primitive_begin(&stream, dev, fn);
    if (st != GP_SUCCESS) return st;
    st = run(stream, kernel, 16 / gp_type_size(type), n, 1, &in, out ? out->buffer : NULL, out ? out->offset : 0,
             result, gp_type_size(out_type));
    gp__primitive_end(stream);
    return st;
}

gp_status gp_reduce(gp_stream *stream, gp_reduce_op op, gp_type type, size_t n, gp_view in, gp_view out)
{
    return builtin("gp_reduce", stream, op, type, n, in, &out, NULL);
}

gp_status gp_reduce_to_host(gp_stream *stream, gp_reduce_op op, gp_type type, size_t n, gp_view in, void *result)
{
    return builtin("gp_reduce_to_host", stream, op, type, n, in, NULL, result);
}

/* The kernel dialect's name of each gp_type. */
static const char *c_type(gp_type type)
{
    static const char *const names[] = {NULL, "float", "double", "int", "uint", "long", "ulong"};
    return gp_type_size(type) ? names[type] : NULL;
}

/* printf into a new string; NULL when out of memory. */
static char *format(const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (s) vsnprintf(s, (size_t)len + 1, fmt, again);
    va_end(again);
    va_end(ap);
    return s;
}

/* The program of a user reduction (gp_reduce_kernel_create). The reduce source defines the
 * stamping macros; the user's functions follow it. One input takes the vector kernel of the
 * built-in reductions; more take GP_REDUCE_N. With wide, the map and combine also as
 * functions of vectors of the accumulator's type. */
static gp_status user_program(gp_device *device, size_t nin, const gp_type *in_types, gp_type acc_type,
                              const char *const exprs[3], int wide, gp_program **program)
{
    static const char *const names[] = {"x", "y", "z"};
    char params[256] = "", map_params[128] = "", at[128] = "", wide_params[128] = "", wide_at[256] = "";
    for (size_t v = 0; v < nin; v++) {
        const char *t = c_type(in_types[v]), *nm = names[v];
        size_t pl = strlen(params), ml = strlen(map_params), al = strlen(at), wl = strlen(wide_params),
               wal = strlen(wide_at);
        snprintf(params + pl, sizeof params - pl, "%sGP_GLOBAL const %s *gp_%s, ulong gp_%so", v ? ", " : "", t, nm, nm);
        snprintf(map_params + ml, sizeof map_params - ml, "%s %s, ", nin == 1 ? "T" : t, nm);
        snprintf(at + al, sizeof at - al, "%sgp_%s[gp_%so + (i)]", v ? ", " : "", nm, nm);
        snprintf(wide_params + wl, sizeof wide_params - wl, "%sGP_WIDE_T %s", v ? ", " : "", nm);
        if (nin == 1)
            snprintf(wide_at, sizeof wide_at, "GP_WIDE_AT(e)");
        else
            snprintf(wide_at + wal, sizeof wide_at - wal, "%sGP_WIDE_LOAD(0, gp_%s + gp_%so + (e))", v ? ", " : "", nm,
                     nm);
    }
    if (nin == 1) params[0] = at[0] = '\0';
    static const char fmt[] =
        "#define GP_TYPE %d\n#define GP_REDUCE_USER 1\n%s\n"
        "#define GP_IN_PARAMS %s\n#define GP_IN_AT(i) %s\n"
        "typedef %s gp_acc;\n"
        "GP_FUNC gp_acc gp_user_map(%sulong i)\n{\n    (void)i;\n    return (gp_acc)(\n#line 1 \"map\"\n%s\n    );\n}\n"
        "GP_FUNC gp_acc gp_user_combine(gp_acc a, gp_acc b)\n{\n    return (gp_acc)(\n#line 1 \"combine\"\n%s\n    );\n}\n"
        "GP_FUNC gp_acc gp_user_identity(void)\n{\n    return (gp_acc)(\n#line 1 \"identity\"\n%s\n    );\n}\n"
        "%s"
        "%s(gp_user_reduce, gp_acc, gp_user_identity(), gp_user_map, gp_user_combine, gp_acc, GP_FINISH_ACC%s)\n";
    static const char wide_fmt[] =
        "#define GP_USER_WIDE 1\n#define GP_USER_AT_W(e) gp_user_map_w(%s)\n"
        "GP_FUNC GP_WIDE_T gp_user_map_w(%s)\n{\n    return (GP_WIDE_T)(\n#line 1 \"map\"\n%s\n    );\n}\n"
        "GP_FUNC GP_WIDE_T gp_user_combine_w(GP_WIDE_T a, GP_WIDE_T b)\n{\n    return (GP_WIDE_T)(\n#line 1 "
        "\"combine\"\n%s\n    );\n}\n";
    char *wide_src = wide ? format(wide_fmt, wide_at, wide_params, exprs[0], exprs[1]) : NULL;
    const char *macro = nin == 1 ? "GP_REDUCE_W" : "GP_REDUCE_N";
    const char *macro_args = nin > 1 ? "" : wide ? ", 1, GP_USER_AT_W, gp_user_combine_w" : ", 0, , ";
    char *src = NULL;
    if (!wide || wide_src)
        src = format(fmt, (int)in_types[0], gp__src_reduce, params, at, c_type(acc_type), map_params, exprs[0],
                     exprs[1], exprs[2], wide ? wide_src : "#define GP_USER_WIDE 0\n", macro, macro_args);
    free(wide_src);
    if (!src) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_reduce_kernel_create: no host memory");
    gp_status st = gp_program_create(device, src, NULL, program);
    free(src);
    return st;
}

gp_status gp_reduce_kernel_create(gp_device *device, size_t nin, const gp_type *in_types, gp_type acc_type,
                                  const char *map_expression, const char *combine_expression, const char *identity,
                                  gp_reduce_kernel **kernel)
{
    static const char fn[] = "gp_reduce_kernel_create";
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(in_types, "in_types");
    GP__CHECK_OUT(map_expression, "map_expression");
    GP__CHECK_OUT(combine_expression, "combine_expression");
    GP__CHECK_OUT(identity, "identity");
    GP__CHECK_OUT(kernel, "kernel");
    if (nin < 1 || nin > 3)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %zu inputs; a reduction takes 1 to 3 (x, y, z)", fn, nin);
    for (size_t v = 0; v <= nin; v++) {
        gp_type t = v < nin ? in_types[v] : acc_type;
        if (!gp__type_option(device, t, fn)) return gp_type_size(t) ? GP_ERROR_UNSUPPORTED : GP_ERROR_INVALID_ARGUMENT;
    }
    /* Each expression must stay inside its parentheses; it sits on lines of its own (so that a
     * // comment ends there), numbered from 1 in a "file" named after it for compile errors. */
    const char *const exprs[] = {map_expression, combine_expression, identity};
    static const char *const expr_names[] = {"map_expression", "combine_expression", "identity"};
    for (size_t e = 0; e < 3; e++) {
        char why[160];
        if (!gp__check_user_code(exprs[e], 0, why, sizeof why))
            return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the %s is not one expression: %s", fn, expr_names[e], why);
        if (exprs[e][strspn(exprs[e], " \t\r\n")] == '\0')
            return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the %s is empty", fn, expr_names[e]);
    }
    gp_reduce_kernel *k = calloc(1, sizeof *k);
    if (!k) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory", fn);
    /* On a CPU device, where every input and the accumulator are one floating-point type and
     * the expressions are gp__vector_safe, they are tried on the language's vectors first
     * (kernels/reduce.gp, GP_WIDE_1); where that does not compile, the scalar kernel alone. */
    int wide = device->info.type == GP_DEVICE_CPU && (acc_type == GP_F32 || acc_type == GP_F64) &&
               gp__vector_safe(map_expression, acc_type == GP_F64) && gp__vector_safe(combine_expression, acc_type == GP_F64);
    for (size_t v = 0; v < nin; v++) wide = wide && in_types[v] == acc_type;
    gp_program *program = NULL;
    gp_status st;
    do {
        st = user_program(device, nin, in_types, acc_type, exprs, wide, &program);
    } while (st == GP_ERROR_BUILD_FAILED && wide-- > 0);
    if (st == GP_SUCCESS) st = gp__kernel_create(program, "gp_user_reduce", 2 * nin + 8, &k->kernel);
    gp_program_destroy(program); /* the kernels hold it */
    if (st != GP_SUCCESS) {
        gp_reduce_kernel_destroy(k);
        return st;
    }
    k->dev = device;
    k->nin = nin;
    memcpy(k->in_types, in_types, nin * sizeof *in_types);
    k->acc_type = acc_type;
    *kernel = k;
    return GP_SUCCESS;
}

gp_status gp_reduce_kernel_destroy(gp_reduce_kernel *kernel)
{
    if (!kernel) return GP_SUCCESS;
    gp_kernel_destroy(kernel->kernel);
    free(kernel);
    return GP_SUCCESS;
}

static gp_status user(const char *fn, gp_stream *stream, gp_reduce_kernel *kernel, size_t n, const gp_view *in,
                      const gp_view *out, void *result)
{
    GP__CHECK_HANDLE(kernel, "kernel");
    GP__CHECK_OUT(in, "in");
    if (!out && !result) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: result is NULL", fn);
    gp_status st = GP_SUCCESS;
    for (size_t v = 0; v < kernel->nin && st == GP_SUCCESS; v++)
        st = check(fn, kernel->dev, kernel->in_types[v], n, in[v], kernel->acc_type, v ? NULL : out);
    if (st == GP_SUCCESS) st = gp__primitive_begin(&stream, kernel->dev, fn);
    if (st != GP_SUCCESS) return st;
    size_t unit = kernel->nin == 1 ? 16 / gp_type_size(kernel->in_types[0]) : 4;
    st = run(stream, kernel->kernel, unit, n, kernel->nin, in, out ? out->buffer : NULL, out ? out->offset : 0, result,
             gp_type_size(kernel->acc_type));
    gp__primitive_end(stream);
    return st;
}

gp_status gp_reduce_kernel_run(gp_stream *stream, gp_reduce_kernel *kernel, size_t n, const gp_view *in, gp_view out)
{
    return user("gp_reduce_kernel_run", stream, kernel, n, in, &out, NULL);
}

gp_status gp_reduce_kernel_run_to_host(gp_stream *stream, gp_reduce_kernel *kernel, size_t n, const gp_view *in,
                                       void *result)
{
    return user("gp_reduce_kernel_run_to_host", stream, kernel, n, in, NULL, result);
}
