/* Programs (compiled by the runtime compiler, prebuilt, or from gpuport's cache), kernels and
 * launches. */
#include "cuhip.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Launches with at most this many arguments build their parameter array on the stack. */
#define CH_STACK_ARGS 32

typedef struct ch_kernel {
    ch_function fn;
    /* The twin that runs several work-groups a block (CUDA's coarsen.h), or NULL; the most
     * work-items a group of it takes; GPUPORT_COARSEN as read when the kernel was made (0 for
     * auto, else the work-groups a block runs); the device's multiprocessors. */
    ch_function twin;
    size_t twin_max_group;
    unsigned coarsen, units;
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    _Atomic size_t dynamic_ok; /* dynamic shared memory the kernel has been opted in to */
#endif
    size_t nparams; /* (size_t)-1 when the driver cannot tell */
    size_t sizes[];
} ch_kernel;

/* program_build output: this header, then the code the vendor loader takes. The checksum
 * lets a truncated or damaged cache entry be refused instead of reaching the driver. */
typedef struct ch_binary_header {
    char magic[8];
    uint32_t kind;
    uint32_t reserved;
    uint64_t bytes;
    uint64_t checksum;
} ch_binary_header;
static const char ch_magic[8] = {'G', 'P', 'C', 'U', 'H', 'I', 'P', '1'};

static uint64_t ch_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* ---- Programs ---- */

static gp_status ch_build_log(ch_rtc_program prog, char **log)
{
    size_t n = 0;
    *log = NULL;
    if (gp__ch.rtc_get_program_log_size(prog, &n) != CH_RTC_SUCCESS || n == 0)
        return GP_SUCCESS;
    *log = malloc(n + 1);
    if (!*log)
        return gp__ch_no_host_memory();
    if (gp__ch.rtc_get_program_log(prog, *log) != CH_RTC_SUCCESS)
        (*log)[0] = '\0';
    (*log)[n] = '\0';
    return GP_SUCCESS;
}

static gp_status ch_rtc_fail(ch_rtc_result r, const char *what)
{
    gp__ch_host->set_error("%s failed: %s (%d)", what, gp__ch.rtc_get_error_string(r), (int)r);
    return GP_ERROR_BACKEND;
}

static gp_status ch_compile(gp__ch_device *d, ch_rtc_program prog, int *kind)
{
    const char *opts[8];
    char arch_buf[256];
    size_t narch = gp__ch_vendor_rtc_options(d, opts, 8, arch_buf, sizeof arch_buf, kind);
    if (narch == (size_t)-1)
        return GP_ERROR_UNSUPPORTED;
    ch_rtc_result r = gp__ch.rtc_compile_program(prog, (int)narch, opts);

    char *log = NULL;
    gp_status st = ch_build_log(prog, &log);
    if (st != GP_SUCCESS)
        return st;
    if (r == CH_RTC_ERROR_COMPILATION) {
        static const char head[] = "build failed on ";
        size_t len = sizeof head + strlen(d->name) + 2 + (log ? strlen(log) : 0);
        char *text = malloc(len);
        if (text) {
            snprintf(text, len, "%s%s:\n%s", head, d->name, log ? log : "");
            gp__ch_host->set_error_text(text);
            free(text);
        } else {
            gp__ch_host->set_error("build failed on %s (the log did not fit in memory)", d->name);
        }
        free(log);
        return GP_ERROR_BUILD_FAILED;
    }
    if (log && log[0] && gp__ch_host->debug_on("compile"))
        gp__ch_host->debug("compile", "%s log for %s:\n%s", CH_RTC_TITLE, d->name, log);
    free(log);
    return r == CH_RTC_SUCCESS ? GP_SUCCESS : ch_rtc_fail(r, "compiling");
}

/* The build's prebuilt binary for exactly this source, if any (cuhip.h). One the device cannot
 * load (an architecture the build did not name) does not count. */
static int ch_prebuilt(gp__ch_device *d, const char *source, const unsigned char **code, size_t *bytes, int *kind)
{
    size_t plen = strlen(gp__ch_prelude);
    if (strncmp(source, gp__ch_prelude, plen) != 0 || source[plen] != '\n')
        return 0;
    const char *user = source + plen + 1;
    for (size_t e = 0; e < gp__ch_prebuilt_count; e++) {
        const gp__ch_prebuilt *p = &gp__ch_prebuilt_table[e];
        if (strcmp(p->source, user) != 0)
            continue;
        ch_module m; /* a table may hold two compilers' binaries of one source (HIP's two platforms) */
        if (gp__ch_vendor_enter(d) != GP_SUCCESS || gp__ch.module_load_data(&m, p->code) != CH_SUCCESS) {
            gp__ch_host->debug("compile", "a prebuilt binary does not load on %s", d->name);
            continue;
        }
        gp__ch.module_unload(m);
        *code = p->code;
        *bytes = p->bytes;
        *kind = p->kind;
        return 1;
    }
    return 0;
}

/* Wraps code in the header program_load checks; takes ownership of nothing. */
static gp_status ch_wrap(const void *code, size_t bytes, int kind, void **binary, size_t *binary_bytes)
{
    unsigned char *out = malloc(sizeof(ch_binary_header) + bytes);
    if (!out)
        return gp__ch_no_host_memory();
    ch_binary_header h = {.kind = (uint32_t)kind, .bytes = bytes, .checksum = ch_fnv1a(code, bytes)};
    memcpy(h.magic, ch_magic, sizeof h.magic);
    memcpy(out, &h, sizeof h);
    memcpy(out + sizeof h, code, bytes);
    *binary = out;
    *binary_bytes = sizeof h + bytes;
    return GP_SUCCESS;
}

gp_status gp__ch_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes)
{
    gp__ch_device *d = dev;
    const unsigned char *prebuilt;
    size_t bytes = 0;
    int kind = 0;
    if (ch_prebuilt(d, source, &prebuilt, &bytes, &kind)) {
        gp__ch_host->debug("compile", "prebuilt binary (%zu bytes) for %s", bytes, d->name);
        return ch_wrap(prebuilt, bytes, kind, binary, binary_bytes);
    }
    if (!gp__ch_rtc_loaded) {
        gp__ch_host->set_error("%s was not found, so kernels cannot be compiled from source (tried: %s)",
                               CH_RTC_TITLE, gp__ch_rtc_tried);
        return GP_ERROR_UNSUPPORTED;
    }
    ch_rtc_program prog;
    ch_rtc_result r = gp__ch.rtc_create_program(&prog, source, "gpuport_program.cu", 0, NULL, NULL);
    if (r != CH_RTC_SUCCESS)
        return ch_rtc_fail(r, "creating a program");
    void *code = NULL;
    gp_status st = ch_compile(d, prog, &kind);
    if (st == GP_SUCCESS)
        st = gp__ch_vendor_rtc_code(d, prog, &kind, &code, &bytes);
    gp__ch.rtc_destroy_program(&prog);
    if (st == GP_SUCCESS)
        st = ch_wrap(code, bytes, kind, binary, binary_bytes);
    free(code);
    if (st == GP_SUCCESS)
        gp__ch_host->debug("compile", "built %zu bytes of %s for %s", bytes, kind == GP__CH_CODE_PTX ? "PTX" : "code",
                           d->name);
    return st;
}

gp_status gp__ch_program_load(void *dev, const void *binary, size_t binary_bytes, void **out)
{
    ch_binary_header h;
    memset(&h, 0, sizeof h);
    const unsigned char *code = (const unsigned char *)binary + sizeof h;
    if (binary_bytes >= sizeof h)
        memcpy(&h, binary, sizeof h);
    if (binary_bytes < sizeof h || memcmp(h.magic, ch_magic, sizeof h.magic) || h.bytes != binary_bytes - sizeof h ||
        ch_fnv1a(code, (size_t)h.bytes) != h.checksum || !gp__ch_vendor_code_ok((int)h.kind, code, (size_t)h.bytes)) {
        gp__ch_host->set_error("the binary (%zu bytes) is not a %s program binary for this plugin, or it is damaged",
                               binary_bytes, CH_BACKEND_NAME);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(dev);
    /* The loader reads ELF structures in place, so give it aligned memory. */
    void *copy = NULL;
    if ((uintptr_t)code % 16) {
        if (!(copy = malloc((size_t)h.bytes)))
            return gp__ch_no_host_memory();
        memcpy(copy, code, (size_t)h.bytes);
    }
    ch_module m;
    ch_result r = gp__ch.module_load_data(&m, copy ? copy : code);
    free(copy);
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "loading the program");
    *out = (void *)m;
    return GP_SUCCESS;
}

void gp__ch_program_destroy(void *dev, void *program)
{
    /* Work queued earlier may still run the module's kernels (gpuport.h's lifetimes): wait for
     * the device first. Modules go rarely; buffers go often, and the driver's own free waits. */
    if (gp__ch_vendor_enter(dev) == GP_SUCCESS)
        gp__ch.ctx_synchronize();
    gp__ch.module_unload((ch_module)program);
}

/* ---- Kernels ---- */

/* GPUPORT_COARSEN: auto (or unset), off, or the work-groups each block runs, 1 to 64. */
static int ch_coarsen_setting(unsigned *out)
{
    const char *v = getenv("GPUPORT_COARSEN");
    char *end;
    *out = 0;
    if (!v || !v[0] || strcmp(v, "auto") == 0)
        return 1;
    if (strcmp(v, "off") == 0) {
        *out = 1;
        return 1;
    }
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || n < 1 || n > 64)
        return 0;
    *out = (unsigned)n;
    return 1;
}

/* The kernel's twin, where the program has one: a kernel without it is launched as asked. Its
 * name ends in cuda/coarsen.h's GP__COARSEN_SUFFIX (only CUDA's programs have twins, so the HIP
 * plugin, which shares this file, finds none). */
static void ch_twin(gp__ch_device *d, ch_module m, const char *name, ch_kernel *k)
{
    char twin_name[256];
    int max_threads = 0, units = 0;
    ch_function fn;
    k->twin = NULL;
    if ((size_t)snprintf(twin_name, sizeof twin_name, "%s__gp_vg", name) >= sizeof twin_name ||
        gp__ch.module_get_function(&fn, m, twin_name) != CH_SUCCESS ||
        gp__ch.func_get_attribute(&max_threads, CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK, fn) != CH_SUCCESS ||
        gp__ch.device_get_attribute(&units, CH_ATTR_COMPUTE_UNITS, d->device) != CH_SUCCESS || units < 1)
        return;
    k->twin = fn;
    k->twin_max_group = (size_t)max_threads;
    k->units = (unsigned)units;
}

/* How many work-groups each block of a launch runs. Auto: eight, or fewer where the blocks
 * would not fill the device 32 times over (a launch too small to gain from it runs as asked). */
static unsigned ch_per_block(const ch_kernel *k, const size_t groups[3], const size_t local[3])
{
    if (!k->twin || k->coarsen == 1 || groups[1] != 1 || groups[2] != 1 || groups[0] > UINT_MAX - 64 ||
        local[0] * local[1] * local[2] > k->twin_max_group)
        return 1;
    if (k->coarsen)
        return k->coarsen;
    unsigned per = 8;
    while (per > 1 && groups[0] / per < 32 * (size_t)k->units)
        per /= 2;
    return per;
}

gp_status gp__ch_kernel_create(void *dev, void *program, const char *name, void **out, gp__kernel_props *props)
{
    unsigned coarsen;
    if (!ch_coarsen_setting(&coarsen)) {
        gp__ch_host->set_error("GPUPORT_COARSEN is '%s'; use auto, off, or how many work-groups each block runs "
                               "(1 to 64)",
                               getenv("GPUPORT_COARSEN"));
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(dev);
    ch_function fn;
    ch_result r = gp__ch.module_get_function(&fn, (ch_module)program, name);
    if (r == CH_ERROR_NOT_FOUND) {
        gp__ch_host->set_error("the program has no kernel named '%s' (%s)", name, gp__ch_vendor_error_name(r));
        return GP_ERROR_NOT_FOUND;
    }
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "finding the kernel");
    int max_threads = 0, shared = 0;
    CH_CALL(gp__ch.func_get_attribute(&max_threads, CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK, fn),
            "querying the kernel's group size limit");
    CH_CALL(gp__ch.func_get_attribute(&shared, CH_FUNC_ATTR_SHARED_SIZE_BYTES, fn),
            "querying the kernel's shared memory");

    /* One pass for the usual kernel. */
    size_t first[64], n = 0;
    int known = gp__ch_vendor_param_sizes(fn, props->nargs, first, 64, &n);
    ch_kernel *k = malloc(sizeof *k + (known ? n : 0) * sizeof k->sizes[0]);
    if (!k)
        return gp__ch_no_host_memory();
    k->fn = fn;
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    atomic_init(&k->dynamic_ok, 0);
#endif
    k->nparams = known ? n : (size_t)-1;
    if (known && n <= 64)
        memcpy(k->sizes, first, n * sizeof first[0]);
    else if (known)
        gp__ch_vendor_param_sizes(fn, n, k->sizes, n, &n);
    props->nargs = k->nparams;
    props->max_group_size = max_threads > 0 ? (size_t)max_threads : 0;
    k->coarsen = coarsen;
    ch_twin(dev, (ch_module)program, name, k);
    props->local_bytes = shared > 0 ? (size_t)shared : 0;
    *out = k;
    return GP_SUCCESS;
}

gp_status gp__ch_program_global(void *dev, void *program, const char *name, void **out, size_t *bytes)
{
    CH_ENTER(dev);
    ch_dptr ptr;
    size_t size = 0;
    ch_result r = gp__ch.module_get_global(&ptr, &size, (ch_module)program, name);
    if (r == CH_ERROR_NOT_FOUND) {
        gp__ch_host->set_error("the program has no variable named '%s' (%s)", name, gp__ch_vendor_error_name(r));
        return GP_ERROR_NOT_FOUND;
    }
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "finding the variable");
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return gp__ch_no_host_memory();
    b->ptr = ptr;
    b->bytes = size;
    b->memory = GP_MEMORY_DEVICE; /* owned 0: the module's */
    *out = b;
    *bytes = size;
    return GP_SUCCESS;
}

void gp__ch_kernel_destroy(void *dev, void *kernel)
{
    (void)dev;
    free(kernel);
}

typedef union ch_slot {
    ch_dptr ptr;
    unsigned int offset;
} ch_slot;

static gp_status ch_bad_arg(size_t i, const char *what, size_t given, size_t expected)
{
    gp__ch_host->set_error("kernel argument %zu: %s of %zu bytes given, the kernel's parameter takes %zu bytes", i,
                           what, given, expected);
    return GP_ERROR_INVALID_KERNEL_ARGS;
}

/* The hot path: no allocation for up to CH_STACK_ARGS arguments, and the context is made
 * current only when it is not. */
static gp_status ch_fill_params(const ch_kernel *k, size_t nargs, const gp_arg *args, void **params, ch_slot *slots,
                                size_t *shared)
{
    size_t total = 0;
    int known = k->nparams != (size_t)-1;
    for (size_t i = 0; i < nargs; i++) {
        const gp_arg *a = &args[i];
        size_t given;
        const char *what;
        if (a->kind == GP_ARG_BUFFER) {
            const ch_buffer *b = (const ch_buffer *)a->buffer;
            if (CH_DPTR_IS_NULL(b->ptr) && b->bytes) {
                gp__ch_host->set_error("kernel argument %zu: this pinned buffer has no device address; use "
                                       "GP_MEMORY_MAPPED for host memory that kernels use",
                                       i);
                return GP_ERROR_INVALID_KERNEL_ARGS;
            }
            slots[i].ptr = b->ptr;
            params[i] = &slots[i].ptr;
            given = sizeof(ch_dptr);
            what = "a buffer";
        } else if (a->kind == GP_ARG_VALUE) {
            params[i] = (void *)a->value;
            given = a->size;
            what = "a value";
        } else if (a->kind == GP__ARG_SHARED) { /* all of it, no parameter: CUDA C's extern __shared__ */
            total = (total + 15) & ~(size_t)15;
            if (total > UINT_MAX || a->size > UINT_MAX - total) {
                gp__ch_host->set_error("kernel argument %zu: %zu bytes of shared memory is too much", i, a->size);
                return GP_ERROR_INVALID_LAUNCH;
            }
            total += a->size;
            params[i] = NULL;
            continue;
        } else {
            /* Each local argument is a 16-byte aligned part of the dynamic shared memory. */
            total = (total + 15) & ~(size_t)15;
            if (total > UINT_MAX || a->size > UINT_MAX - total) {
                gp__ch_host->set_error("kernel argument %zu: %zu bytes of local memory is too much", i, a->size);
                return GP_ERROR_INVALID_LAUNCH;
            }
            slots[i].offset = (unsigned int)total;
            params[i] = &slots[i].offset;
            total += a->size;
            given = sizeof(unsigned int);
            what = "local memory (an offset)";
        }
        if (known && k->sizes[i] != given)
            return ch_bad_arg(i, what, a->kind == GP_ARG_LOCAL ? a->size : given, k->sizes[i]);
    }
    *shared = total;
    return GP_SUCCESS;
}

gp_status gp__ch_launch(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                        const size_t local[3], size_t nargs, const gp_arg *args)
{
    ch_kernel *k = kernel;
    (void)dims; /* core sets unused dimensions to 1 */
    size_t nparams = nargs && args[nargs - 1].kind == GP__ARG_SHARED ? nargs - 1 : nargs;
    if (k->nparams != (size_t)-1 && nparams != k->nparams) {
        gp__ch_host->set_error("the kernel takes %zu arguments, %zu were given", k->nparams, nparams);
        return GP_ERROR_INVALID_KERNEL_ARGS;
    }
    for (int i = 0; i < 3; i++) {
        if (groups[i] > UINT_MAX || local[i] > UINT_MAX) {
            gp__ch_host->set_error("launch of %zu x %zu groups in dimension %d is too large", groups[i], local[i], i);
            return GP_ERROR_INVALID_LAUNCH;
        }
    }
    /* A twin takes two parameters after the kernel's: the launch's work-groups in x and how
     * many each block runs. */
    unsigned per = ch_per_block(k, groups, local), count = (unsigned)groups[0];
    void *stack_params[CH_STACK_ARGS + 2];
    ch_slot stack_slots[CH_STACK_ARGS];
    void **params = stack_params;
    ch_slot *slots = stack_slots;
    if (nargs > CH_STACK_ARGS) {
        params = malloc((nargs + 2) * sizeof *params);
        slots = malloc(nargs * sizeof *slots);
        if (!params || !slots) {
            free(params);
            free(slots);
            return gp__ch_no_host_memory();
        }
    }
    size_t shared = 0;
    gp_status st = ch_fill_params(k, nargs, args, params, slots, &shared);
    if (st == GP_SUCCESS)
        st = gp__ch_vendor_enter(dev);
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    /* Past the default limit (48 KiB with the kernel's own), a kernel takes dynamic shared
     * memory only up to what it was opted in to; once per kernel and size, racing calls alike. */
    if (st == GP_SUCCESS && shared > atomic_load(&k->dynamic_ok)) {
        ch_result r = gp__ch.func_set_attribute(k->fn, CH_FUNC_ATTR_MAX_DYNAMIC_SHARED, (int)shared);
        if (r == CH_SUCCESS) {
            atomic_store(&k->dynamic_ok, shared);
        } else {
            gp__ch_fail(r, "allowing the kernel its local memory");
            st = GP_ERROR_INVALID_LAUNCH;
        }
    }
#endif
    if (st == GP_SUCCESS) {
        if (shared) /* a twin has no shared memory to opt in to */
            per = 1;
        params[nargs] = &count;
        params[nargs + 1] = &per;
        ch_result r = gp__ch.launch_kernel(per > 1 ? k->twin : k->fn, (count + per - 1) / per, (unsigned)groups[1],
                                           (unsigned)groups[2],
                                           (unsigned)local[0], (unsigned)local[1], (unsigned)local[2],
                                           (unsigned)shared, (ch_stream)stream, params, NULL);
        if (r != CH_SUCCESS) {
            st = gp__ch_fail(r, "launching the kernel");
            if (r == CH_ERROR_INVALID_VALUE || r == CH_ERROR_LAUNCH_OUT_OF_RESOURCES)
                st = GP_ERROR_INVALID_LAUNCH;
        }
    }
    if (params != stack_params) {
        free(params);
        free(slots);
    }
    return st;
}

