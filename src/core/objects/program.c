/* Programs, kernels and launches. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OPTIONS 64

/* Only -DNAME and -DNAME=VALUE are accepted, so that one options string means the same on
 * every backend: NAME an identifier, VALUE anything on one line that neither continues it (a
 * backslash) nor starts a comment. Splits a copy of opts in place. */
gp_status gp__parse_options(char *opts, const char **out, size_t *n)
{
    *n = 0;
    for (char *p = opts; p && *p;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *tok = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        if (*p) *p++ = '\0';
        const char *name = tok + 2, *q = name;
        int ok = strncmp(tok, "-D", 2) == 0 && (isalpha((unsigned char)*q) || *q == '_');
        while (ok && (isalnum((unsigned char)*q) || *q == '_')) q++;
        ok = ok && (*q == '\0' || *q == '=');
        if (ok && *q == '=') ok = !strchr(q, '\\') && !strstr(q, "/*") && !strstr(q, "//");
        if (!ok)
            return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                            "gp_program_create: unsupported build option '%s'; gpuport accepts -DNAME and "
                            "-DNAME=VALUE (NAME an identifier; VALUE without backslashes or comments), which mean "
                            "the same on every backend",
                            tok);
        if (*n == MAX_OPTIONS)
            return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_program_create: more than %d options", MAX_OPTIONS);
        out[(*n)++] = tok;
    }
    return GP_SUCCESS;
}

/* What the compiler gets: the prelude, the options as #define lines, then the caller's source
 * with its own line numbers. The options come after the prelude and any header the vendor's
 * compiler includes first, so a -DT=float reaches the user's code only. NULL when out of memory. */
char *gp__compose_source(const char *prelude, const char *const *opts, size_t nopts, const char *source)
{
    size_t len = strlen(prelude) + strlen(source) + sizeof "\n#line 1\n";
    for (size_t i = 0; i < nopts; i++) len += strlen(opts[i]) + sizeof "#define  1\n";
    char *full = malloc(len);
    if (!full) return NULL;
    size_t used = (size_t)snprintf(full, len, "%s\n", prelude);
    for (size_t i = 0; i < nopts; i++) {
        const char *name = opts[i] + 2, *eq = strchr(name, '=');
        used += (size_t)(eq ? snprintf(full + used, len - used, "#define %.*s %s\n", (int)(eq - name), name, eq + 1)
                            : snprintf(full + used, len - used, "#define %s 1\n", name));
    }
    snprintf(full + used, len - used, "#line 1\n%s", source);
    return full;
}

static void cache_key(const gp_device *dev, const char *full, unsigned char key[32])
{
    gp__sha256 h;
    gp__sha256_init(&h);
    /* Each part is followed by its NUL so that no two different lists hash alike. */
    const char *parts[] = {GP__BUILD_ID, dev->info.backend, dev->cache_id, full};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) gp__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
    gp__sha256_final(&h, key);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A program of source (compiled after prelude and the options), whose kernels read their
 * parameters from declared (the source itself, or its translation to the dialect; NULL: none). */
static gp_status create(gp_device *device, const char *prelude, const char *source, const char *declared,
                        const char *options, gp_program **program)
{
    const gp__backend *be = device->be;
    char *opt_copy = options ? strdup(options) : NULL;
    if (options && !opt_copy) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create: no host memory");
    const char *opts[MAX_OPTIONS];
    size_t nopts;
    gp_status st = gp__parse_options(opt_copy, opts, &nopts);
    char *full = st == GP_SUCCESS ? gp__compose_source(prelude, opts, nopts, source) : NULL;
    gp_program *p = full ? calloc(1, sizeof *p) : NULL;
    char *own_source = p && declared ? strdup(declared) : NULL;
    char *own_options = p && (own_source || !declared) && options ? strdup(options) : NULL;
    free(opt_copy);
    if (!p || (declared && !own_source) || (options && !own_options)) {
        free(full);
        free(p);
        free(own_source);
        free(own_options);
        return st != GP_SUCCESS ? st : gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create: no host memory");
    }

    unsigned char key[32];
    cache_key(device, full, key);
    void *bin = NULL;
    size_t bin_bytes = 0;
    int on_disk = 0;
    double t0 = now_ms();
    gp__trace_token *trace = gp__trace_begin_host(device);
    if (gp__cache_load(key, &bin, &bin_bytes, &on_disk)) {
        /* A refused entry is rebuilt; its message must not stand as the caller's last error. */
        char *saved = strdup(gp_last_error());
        st = be->program_load(device->impl, bin, bin_bytes, &p->impl);
        if (st == GP_SUCCESS) {
            p->info.from_cache = 1;
            p->info.cache_on_disk = on_disk;
        } else {
            gp__debug("compile", "cache entry refused (%s); building again", gp_last_error());
            free(bin);
            bin = NULL;
            if (saved) gp__set_error_text(saved);
        }
        free(saved);
    }
    if (!p->info.from_cache) {
        st = be->program_build(device->impl, full, &bin, &bin_bytes);
        if (st == GP_SUCCESS) st = be->program_load(device->impl, bin, bin_bytes, &p->impl);
        if (st == GP_SUCCESS) p->info.cache_on_disk = gp__cache_store(key, bin, bin_bytes);
    }
    gp__trace_compile(trace, st, source, key, bin_bytes);
    gp__debug("compile", "%s:%zu %s in %.1f ms (%zu-byte binary, options '%s')", device->info.backend,
              device->info.backend_index, p->info.from_cache ? "loaded from cache" : "built", now_ms() - t0,
              bin_bytes, options ? options : "");
    free(full);
    free(bin);
    if (st != GP_SUCCESS) {
        free(own_source);
        free(own_options);
        free(p);
        return st;
    }
    p->be = be;
    p->dev = device;
    p->source = own_source;
    p->options = own_options;
    p->info.binary_bytes = bin_bytes;
    atomic_init(&p->refs, 1);
    *program = p;
    return GP_SUCCESS;
}

gp_status gp_program_create(gp_device *device, const char *source, const char *options, gp_program **program)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(source, "source");
    GP__CHECK_OUT(program, "program");
    return create(device, device->be->prelude, source, source, options, program);
}

static void program_release(gp_program *p);

/* OpenCL: the bytes of each global, as the translation's kernel gp__global_sizes counts them. */
static gp_status global_sizes(gp_program *p, gp_stream *stream, size_t n, uint64_t *bytes)
{
    gp_kernel *k = NULL;
    gp_buffer *out = NULL;
    size_t one = 1;
    gp_status st = gp__kernel_create(p, "gp__global_sizes", 1, &k);
    if (st == GP_SUCCESS) st = gp_buffer_create(p->dev, GP_MEMORY_DEVICE, n * sizeof *bytes, &out);
    if (st == GP_SUCCESS) {
        gp_arg arg = GP_BUFFER(out);
        st = gp_kernel_launch(stream, k, 1, &one, &one, 1, &arg);
    }
    if (st == GP_SUCCESS) st = p->be->read(p->dev->impl, stream->impl, out->impl, 0, bytes, n * sizeof *bytes, 1);
    gp_buffer_destroy(out);
    gp_kernel_destroy(k);
    return st;
}

/* The program's globals as buffers it keeps: the module's own on CUDA and HIP; on OpenCL new
 * buffers, zeroed as CUDA zeroes its variables. */
static gp_status make_globals(gp_program *p, const gp__cuda_globals *g, int opencl)
{
    if (!g->n) return GP_SUCCESS;
    if (!opencl && !p->be->program_global)
        return gp__fail(GP_ERROR_UNSUPPORTED, "gp_program_create_cuda: the %s plugin cannot find a program's "
                        "__constant__ variables", p->dev->info.backend);
    if (!(p->globals = calloc(g->n, sizeof *p->globals)))
        return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    p->nglobals = g->n;
    uint64_t bytes[GP__MAX_GLOBALS];
    gp_stream *stream = NULL;
    gp_status st = gp__stream_for(NULL, p->dev, "gp_program_create_cuda", &stream);
    if (st == GP_SUCCESS && opencl) st = global_sizes(p, stream, g->n, bytes);
    for (size_t k = 0; k < g->n && st == GP_SUCCESS; k++) {
        struct gp__global *v = &p->globals[k];
        snprintf(v->name, sizeof v->name, "%s", g->name[k]);
        if (opencl) {
            static const unsigned char zero = 0;
            st = gp_buffer_create(p->dev, GP_MEMORY_DEVICE, (size_t)bytes[k], &v->buf);
            if (st == GP_SUCCESS) st = p->be->fill(p->dev->impl, stream->impl, v->buf->impl, 0, (size_t)bytes[k], &zero, 1, 1);
        } else {
            void *impl = NULL;
            size_t n = 0;
            gp_native_buffer native = {0};
            st = p->be->program_global(p->dev->impl, p->impl, v->name, &impl, &n);
            if (st == GP_ERROR_NOT_FOUND) { /* not used, and left out by the compiler */
                st = GP_SUCCESS;
                continue;
            }
            if (st == GP_SUCCESS) p->be->native_buffer(p->dev->impl, impl, &native);
            if (st == GP_SUCCESS) st = gp__buffer_adopt(p->dev, impl, n, GP_MEMORY_DEVICE, gp__align_of(native.device_ptr), &v->buf);
        }
        if (v->buf) v->buf->of_program = 1;
    }
    return st;
}

gp_status gp_program_get_global(gp_program *program, const char *name, gp_buffer **buffer)
{
    GP__CHECK_HANDLE(program, "program");
    GP__CHECK_OUT(name, "name");
    GP__CHECK_OUT(buffer, "buffer");
    for (size_t k = 0; k < program->nglobals; k++)
        if (strcmp(program->globals[k].name, name) == 0) {
            if (!program->globals[k].buf)
                return gp__fail(GP_ERROR_NOT_FOUND, "gp_program_get_global: '%s' is not in the compiled program (no "
                                "kernel uses it, and the compiler left it out)", name);
            *buffer = program->globals[k].buf;
            return GP_SUCCESS;
        }
    return gp__fail(GP_ERROR_NOT_FOUND, "gp_program_get_global: the program has no __constant__ or __device__ "
                    "variable named '%s'%s", name, program->nglobals ? "" : " (it has none)");
}

/* CUDA C: as written through NVRTC and hiprtc, translated to the dialect for OpenCL. Kernels read
 * their parameters from the translation on every backend; where only OpenCL's needs it, a
 * source the translation does not take still builds for CUDA and HIP, without those checks. */
gp_status gp_program_create_cuda(gp_device *device, const char *source, const char *options, gp_program **program)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(source, "source");
    GP__CHECK_OUT(program, "program");
    int opencl = strcmp(device->info.backend, "opencl") == 0;
    char *dialect = NULL;
    gp__cuda_globals globals;
    gp_status st = gp__cuda_to_dialect(source, &dialect, &globals);
    if (st != GP_SUCCESS && (opencl || st == GP_ERROR_OUT_OF_HOST_MEMORY)) return st;
    char *written = opencl ? NULL : gp__cuda_without_includes(source);
    if (!opencl && !written) {
        free(dialect);
        return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_program_create_cuda: no host memory");
    }
    st = opencl ? create(device, device->be->prelude, dialect, dialect, options, program)
                : create(device, "", written, dialect, options, program);
    if (st == GP_SUCCESS) (*program)->cuda_c = !opencl;
    if (st == GP_SUCCESS && (st = make_globals(*program, &globals, opencl)) != GP_SUCCESS) {
        program_release(*program);
        *program = NULL;
    }
    free(dialect);
    free(written);
    return st;
}

static void program_release(gp_program *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1) {
        for (size_t k = 0; k < p->nglobals; k++)
            if (p->globals[k].buf) gp__buffer_free(p->globals[k].buf);
        free(p->globals);
        p->be->program_destroy(p->dev->impl, p->impl);
        free(p->source);
        free(p->options);
        free(p);
    }
}

gp_status gp_program_destroy(gp_program *program)
{
    if (program) program_release(program);
    return GP_SUCCESS;
}

gp_status gp_program_get_info(const gp_program *program, gp_program_info *info)
{
    GP__CHECK_HANDLE(program, "program");
    GP__CHECK_OUT(info, "info");
    *info = program->info;
    return GP_SUCCESS;
}

gp_status gp_kernel_create(gp_program *program, const char *name, gp_kernel **kernel)
{
    return gp__kernel_create(program, name, (size_t)-1, kernel);
}

gp_status gp__kernel_create(gp_program *program, const char *name, size_t declared, gp_kernel **kernel)
{
    GP__CHECK_HANDLE(program, "program");
    GP__CHECK_OUT(name, "name");
    GP__CHECK_OUT(kernel, "kernel");
    if (!*name) return gp__fail(GP_ERROR_NOT_FOUND, "gp_kernel_create: the kernel name is empty");
    gp_kernel *k = calloc(1, sizeof *k);
    if (!k) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_kernel_create: no host memory for the handle");
    /* The parameters as the source declares them, where it can be read (a declaration made by a
     * macro cannot be); the count goes to the backend as a hint. */
    enum { MAX_PARAMS = 64 };
    gp_kernel_param found[MAX_PARAMS];
    const char *words[MAX_OPTIONS];
    size_t nwords = 0, n = 0;
    int readable = 0;
    char *opts = declared == (size_t)-1 && program->options ? strdup(program->options) : NULL;
    if (declared == (size_t)-1 && (!program->options || (opts && gp__parse_options(opts, words, &nwords) == GP_SUCCESS)))
        n = gp__parse_params(program->source, words, nwords, name, found, MAX_PARAMS, &readable);
    free(opts);
    size_t hidden = 0; /* the program's globals, last */
    while (readable && hidden < program->nglobals && hidden < n && strncmp(found[n - 1 - hidden].name, "gp__g_", 6) == 0)
        hidden++;
    if (program->cuda_c) n -= hidden, hidden = 0; /* as written, the kernel reads the module's own */
    size_t hint = declared != (size_t)-1 ? declared : readable ? n : (size_t)-1;
    k->props.nargs = hint;
    gp_status st = program->be->kernel_create(program->dev->impl, program->impl, name, &k->impl, &k->props);
    if (st != GP_SUCCESS) {
        free(k);
        return st;
    }
    /* A backend that cannot count (a CUDA driver before 12.4) leaves the count to the hint,
     * unknown where there is none; the parameters are kept only where the source agrees. */
    if (k->props.nargs == (size_t)-1) k->props.nargs = hint;
    /* CUDA C as written on CUDA or HIP: an extern __shared__ array is a last local parameter in
     * the translation, and the launch's dynamic shared memory in the kernel itself. */
    if (program->cuda_c && readable && n && found[n - 1].kind == GP_ARG_LOCAL && k->props.nargs == n - 1) {
        k->props.nargs = n;
        k->shared_tail = 1;
    }
    if (readable && n == k->props.nargs && n <= MAX_PARAMS && (k->params = malloc((n ? n : 1) * sizeof *found)))
        memcpy(k->params, found, n * sizeof *found);
    if (hidden && k->props.nargs == n) k->props.nargs -= hidden, k->nglobals = hidden;
    k->be = program->be;
    k->dev = program->dev;
    k->program = program;
    snprintf(k->name, sizeof k->name, "%s", name);
    atomic_fetch_add(&program->refs, 1);
    *kernel = k;
    return GP_SUCCESS;
}

gp_status gp_kernel_destroy(gp_kernel *kernel)
{
    if (!kernel) return GP_SUCCESS;
    kernel->be->kernel_destroy(kernel->dev->impl, kernel->impl);
    program_release(kernel->program);
    free(kernel->params);
    free(kernel);
    return GP_SUCCESS;
}

/* A work-group shape for launches that name none: 256 work-items where the kernel allows. On a
 * CPU a one-dimensional launch takes up to 4096, as pocl picks for itself, while that leaves
 * four groups a compute unit: a CPU runs a group as one loop over its items, and each group costs
 * a start. On 2 EPYC cores (pocl 3.1), alternating with groups of 256 in rounds where the
 * machine's memory was fast (it is not always: then both ran alike), examples/stream's GP_FOR
 * kernels went from 0.81-1.02 to 0.99-1.23 of BabelStream's OpenCL model at 2^24 f32; on 16 Xeon
 * cores (pocl 5.0) from 1.10-1.35 / 0.96-1.05 to 1.26-1.52 / 1.00-1.10 at 2^24 / 2^26, and
 * their `if (i < n)` forms from 0.78-1.10 / 0.92-0.96 to 0.87-1.18 / 0.95-1.03
 * (docs/kernel-dialect.md). */
static void default_local(const gp_kernel *k, unsigned dims, const size_t *global, size_t local[3])
{
    static const size_t shapes[3][3] = {{256, 1, 1}, {16, 16, 1}, {8, 8, 4}};
    size_t limit = k->props.max_group_size < k->dev->info.max_work_group_size ? k->props.max_group_size
                                                                               : k->dev->info.max_work_group_size;
    for (unsigned d = 0; d < 3; d++) local[d] = shapes[dims - 1][d];
    if (dims == 1 && k->dev->info.type == GP_DEVICE_CPU) {
        size_t units = k->dev->info.compute_units ? k->dev->info.compute_units : 1;
        local[0] = 4096;
        while (local[0] > 256 && global[0] / local[0] < 4 * units) local[0] /= 2;
    }
    for (;;) {
        size_t total = local[0] * local[1] * local[2], big = 0;
        int fits = total <= limit;
        for (unsigned d = 0; d < 3; d++) {
            fits = fits && local[d] <= k->dev->info.max_work_item_sizes[d];
            if (local[d] > local[big]) big = d;
        }
        if (fits || total == 1) return;
        local[big] /= 2;
    }
}

static gp_status check_args(const gp_kernel *k, size_t nargs, const gp_arg *args)
{
    /* Local memory: the kernel's own arrays plus each GP_LOCAL_BYTES part, 16-byte aligned as
     * the CUDA and HIP plugins place them; more than the device has would fail at run time
     * (pocl aborts the process), so it is refused here. */
    size_t local = k->props.local_bytes;
    if (k->props.nargs != (size_t)-1 && nargs != k->props.nargs)
        return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' takes %zu arguments, %zu given", k->name,
                        k->props.nargs, nargs);
    static const char *const kind_names[] = {"?", "a buffer", "a value", "local memory"};
    for (size_t i = 0; i < nargs; i++) {
        const gp_arg *a = &args[i];
        const gp_kernel_param *p = k->params ? &k->params[i] : NULL;
        if (p && a->kind >= GP_ARG_BUFFER && a->kind <= GP_ARG_LOCAL && a->kind != p->kind)
            return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu is %s, but parameter '%s' (%s) is %s",
                            k->name, i, kind_names[a->kind], p->name, p->type_name, kind_names[p->kind]);
        if (p && a->kind == GP_ARG_VALUE && p->size && a->size != p->size)
            return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS,
                            "kernel '%s' argument %zu: a value of %zu bytes, but parameter '%s' is a %s of %zu", k->name,
                            i, a->size, p->name, p->type_name, p->size);
        if (p && a->kind == GP_ARG_VALUE && p->type != GP_TYPE_NONE && a->type != GP_TYPE_NONE && a->type != p->type)
            return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu is a %s, but parameter '%s' is a %s",
                            k->name, i, gp__type_name(a->type), p->name, p->type_name);
        switch (a->kind) {
        case GP_ARG_BUFFER:
            if (!a->buffer)
                return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu: the buffer is NULL", k->name, i);
            if (a->buffer->dev != k->dev)
                return gp__fail(GP_ERROR_DEVICE_MISMATCH, "kernel '%s' argument %zu: the buffer is on %s:%zu, the kernel on %s:%zu",
                                k->name, i, a->buffer->dev->info.backend, a->buffer->dev->info.backend_index,
                                k->dev->info.backend, k->dev->info.backend_index);
            if (atomic_load(&a->buffer->mapped))
                return gp__fail(GP_ERROR_INVALID_ARGUMENT, "kernel '%s' argument %zu: the buffer is mapped; unmap it first",
                                k->name, i);
            break;
        case GP_ARG_VALUE:
            if (!a->value || !a->size)
                return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu: a value needs a pointer and a size",
                                k->name, i);
            break;
        case GP_ARG_LOCAL:
            if (!a->size)
                return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu: local memory of 0 bytes", k->name, i);
            local = (local + 15) & ~(size_t)15;
            if (a->size > k->dev->info.local_mem_bytes || local > k->dev->info.local_mem_bytes - a->size)
                return gp__fail(GP_ERROR_INVALID_LAUNCH,
                                "kernel '%s' argument %zu: %zu bytes of local memory; with the kernel's own %zu and "
                                "the arguments before it, that is more than the %llu bytes %s:%zu has per work-group",
                                k->name, i, a->size, k->props.local_bytes, (unsigned long long)k->dev->info.local_mem_bytes,
                                k->dev->info.backend, k->dev->info.backend_index);
            local += a->size;
            break;
        default:
            return gp__fail(GP_ERROR_INVALID_KERNEL_ARGS, "kernel '%s' argument %zu: kind %d is not a gp_arg_kind", k->name,
                            i, (int)a->kind);
        }
    }
    return GP_SUCCESS;
}

gp_status gp_kernel_launch(gp_stream *stream, gp_kernel *kernel, unsigned dims, const size_t *global,
                           const size_t *local, size_t nargs, const gp_arg *args)
{
    GP__CHECK_HANDLE(kernel, "kernel");
    if (dims < 1 || dims > 3)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_kernel_launch: dims is %u; it must be 1, 2 or 3", dims);
    GP__CHECK_OUT(global, "global");
    if (nargs && !args) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_kernel_launch: %zu arguments but args is NULL", nargs);
    gp_status st = gp__stream_for(stream, kernel->dev, "gp_kernel_launch", &stream);
    if (st == GP_SUCCESS) st = check_args(kernel, nargs, args);
    if (st != GP_SUCCESS) return st;

    size_t loc[3] = {1, 1, 1}, groups[3] = {1, 1, 1};
    if (local) {
        size_t total = 1;
        for (unsigned d = 0; d < dims; d++) {
            loc[d] = local[d];
            if (loc[d] == 0 || loc[d] > kernel->dev->info.max_work_item_sizes[d])
                return gp__fail(GP_ERROR_INVALID_LAUNCH, "gp_kernel_launch: local size %zu in dimension %u; this device allows 1 to %zu",
                                loc[d], d, kernel->dev->info.max_work_item_sizes[d]);
            total *= loc[d];
        }
        if (total > kernel->props.max_group_size || total > kernel->dev->info.max_work_group_size)
            return gp__fail(GP_ERROR_INVALID_LAUNCH,
                            "gp_kernel_launch: a work-group of %zu work-items; kernel '%s' allows at most %zu here", total,
                            kernel->name, kernel->props.max_group_size < kernel->dev->info.max_work_group_size
                                              ? kernel->props.max_group_size : kernel->dev->info.max_work_group_size);
    } else {
        default_local(kernel, dims, global, loc);
    }
    for (unsigned d = 0; d < dims; d++) {
        if (global[d] == 0) return GP_SUCCESS;
        groups[d] = global[d] / loc[d] + (global[d] % loc[d] != 0);
        /* Kernels see their index as a 32-bit uint (docs/kernel-dialect.md). */
        if (groups[d] > UINT32_MAX / loc[d])
            return gp__fail(GP_ERROR_INVALID_LAUNCH,
                            "gp_kernel_launch: %zu work-items in dimension %u; a launch covers at most %u per dimension",
                            global[d], d, (unsigned)(UINT32_MAX / loc[d] * loc[d]));
    }

    /* The plugin sees its own buffer handles; on OpenCL the program's globals follow. */
    size_t total = nargs + kernel->nglobals;
    gp_arg small[32], *plugin_args = small;
    if (total > 32 && !(plugin_args = malloc(total * sizeof *plugin_args)))
        return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_kernel_launch: no host memory for %zu arguments", total);
    for (size_t i = 0; i < total; i++) {
        plugin_args[i] = i < nargs ? args[i] : GP_BUFFER(kernel->program->globals[i - nargs].buf);
        if (plugin_args[i].kind == GP_ARG_BUFFER) plugin_args[i].buffer = (gp_buffer *)plugin_args[i].buffer->impl;
    }
    if (kernel->shared_tail && nargs) plugin_args[nargs - 1].kind = GP__ARG_SHARED;
    if (gp__debug_on("launch"))
        gp__debug("launch", "%s on %s:%zu: groups %zux%zux%zu of %zux%zux%zu", kernel->name, kernel->dev->info.backend,
                  kernel->dev->info.backend_index, groups[0], groups[1], groups[2], loc[0], loc[1], loc[2]);
    gp__trace_token *t = gp__trace_begin(stream);
    st = kernel->be->launch(kernel->dev->impl, stream->impl, kernel->impl, dims, groups, loc, total, plugin_args);
    size_t work[3] = {global[0], dims > 1 ? global[1] : 1, dims > 2 ? global[2] : 1};
    gp__trace_end(t, st, "kernel", kernel->name, 0, 3, work);
    if (plugin_args != small) free(plugin_args);
    return st;
}

gp_status gp_kernel_get_param_count(const gp_kernel *kernel, size_t *count)
{
    GP__CHECK_HANDLE(kernel, "kernel");
    GP__CHECK_OUT(count, "count");
    if (kernel->props.nargs == (size_t)-1)
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: neither the %s backend nor the source says how many parameters '%s' "
                        "takes", __func__, kernel->dev->info.backend, kernel->name);
    *count = kernel->props.nargs;
    return GP_SUCCESS;
}

gp_status gp_kernel_get_param(const gp_kernel *kernel, size_t index, gp_kernel_param *param)
{
    GP__CHECK_HANDLE(kernel, "kernel");
    GP__CHECK_OUT(param, "param");
    if (!kernel->params)
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: the declaration of '%s' could not be read from its source (made by a "
                        "macro?), so its parameters are unknown", __func__, kernel->name);
    if (index >= kernel->props.nargs)
        return gp__fail(GP_ERROR_OUT_OF_RANGE, "%s: parameter %zu of '%s', which has %zu", __func__, index, kernel->name,
                        kernel->props.nargs);
    *param = kernel->params[index];
    return GP_SUCCESS;
}
