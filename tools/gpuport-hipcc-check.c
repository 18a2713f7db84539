/* gpuport-hipcc-check: compiles dialect sources for AMD targets through hiprtc and checks that
 * code objects come out, so HIP kernels are tested on machines without an AMD GPU.
 * Usage: gpuport-hipcc-check --target gfx90a [--target gfx1030 ...] [-DNAME[=VALUE] ...] FILE.gp...
 * Exit: 0 all built, 1 a build failed, 2 bad usage or unreadable file, 77 hiprtc not found. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hiprtc.h>

extern const char gp__hip_prelude[]; /* kernels/prelude_hip.h, embedded at build time */

#define HC_API(X)                                                                              \
    X(create, hiprtcCreateProgram)                                                             \
    X(destroy, hiprtcDestroyProgram)                                                           \
    X(compile, hiprtcCompileProgram)                                                           \
    X(log_size, hiprtcGetProgramLogSize)                                                       \
    X(log, hiprtcGetProgramLog)                                                                \
    X(code_size, hiprtcGetCodeSize)                                                            \
    X(code, hiprtcGetCode)                                                                     \
    X(error_string, hiprtcGetErrorString)

#define HC_FIELD(field, fn) __typeof__(fn) *field;
static struct {
    HC_API(HC_FIELD)
} rtc;
#undef HC_FIELD

/* ROCm 6 ships hiprtc on its own; ROCm 5 keeps it inside the HIP runtime. */
static void *load_hiprtc(void)
{
    static const char *const names[] = {"libhiprtc.so.6",   "libhiprtc.so.5",   "libhiprtc.so",
                                        "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            continue;
        int ok = 1;
#define HC_LOAD(field, fn) ok = ok && (rtc.field = (__typeof__(fn) *)dlsym(lib, #fn)) != NULL;
        HC_API(HC_LOAD)
#undef HC_LOAD
        if (ok)
            return lib;
        dlclose(lib);
    }
    return NULL;
}

/* Appends the file at path to *buf; 0 when it cannot be read. */
static int append_file(const char *path, char **buf, size_t *cap, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = 1;
    while (got) {
        if (*cap - *n < 4096) {
            char *grown = realloc(*buf, *cap * 2 + 4096);
            if (!grown)
                break;
            *buf = grown;
            *cap = *cap * 2 + 4096;
        }
        got = fread(*buf + *n, 1, *cap - *n - 1, f);
        *n += got;
    }
    int ok = !ferror(f) && got == 0;
    fclose(f);
    return ok;
}

/* Reads FILE, or the files of "A+B" joined in order (a built-in kernel is its type header
 * joined to its source). */
static char *read_file(const char *arg, size_t *len)
{
    char *buf = NULL, path[4096];
    size_t cap = 0, n = 0;
    for (const char *p = arg; *p;) {
        size_t plen = strcspn(p, "+");
        int ok = plen < sizeof path;
        if (ok) {
            memcpy(path, p, plen);
            path[plen] = '\0';
            ok = append_file(path, &buf, &cap, &n);
        }
        if (!ok) {
            free(buf);
            return NULL;
        }
        p += plen + (p[plen] == '+');
    }
    if (!buf)
        return NULL;
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The prelude, the -D options as #define lines, then the file with its own line numbers, as
 * libgpuport composes a source (after the prelude, macros cannot reach hiprtc's headers). */
static char *with_prelude(const char *path, const char *text, size_t text_len, const char **defs, int ndefs)
{
    size_t len = strlen(gp__hip_prelude) + strlen(path) + text_len + 32;
    for (int i = 0; i < ndefs; i++)
        len += strlen(defs[i]) + sizeof "#define  1\n";
    char *src = malloc(len);
    if (!src)
        return NULL;
    size_t used = (size_t)snprintf(src, len, "%s\n", gp__hip_prelude);
    for (int i = 0; i < ndefs; i++) {
        const char *name = defs[i] + 2, *eq = strchr(name, '=');
        int n = eq ? snprintf(src + used, len - used, "#define %.*s %s\n", (int)(eq - name), name, eq + 1)
                   : snprintf(src + used, len - used, "#define %s 1\n", name);
        used += n > 0 ? (size_t)n : 0;
    }
    snprintf(src + used, len - used, "#line 1 \"%s\"\n%s", path, text);
    return src;
}

/* ROCm 5.2's hiprtc crashes on a target its compiler does not know, so ask the compiler
 * (comgr) for its list first. Returns 1 when known or when comgr cannot say. */
static int target_known(const char *target, char *known, size_t known_len)
{
    static const char *const names[] = {"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 1;
    typedef int isa_count_fn(size_t *count);
    typedef int isa_name_fn(size_t index, const char **name);
    isa_count_fn *count_fn = (isa_count_fn *)dlsym(lib, "amd_comgr_get_isa_count");
    isa_name_fn *name_fn = (isa_name_fn *)dlsym(lib, "amd_comgr_get_isa_name");
    size_t count = 0, want = strcspn(target, ":"), used = 0;
    int found = !count_fn || !name_fn || count_fn(&count) != 0; /* 0 is AMD_COMGR_STATUS_SUCCESS */
    known[0] = '\0';
    for (size_t i = 0; i < count && !found; i++) {
        const char *isa = NULL; /* "amdgcn-amd-amdhsa--gfx90a" */
        if (name_fn(i, &isa) != 0 || !isa || !(isa = strstr(isa, "--")))
            continue;
        isa += 2;
        found = strlen(isa) == want && strncmp(isa, target, want) == 0;
        if (used < known_len) {
            int n = snprintf(known + used, known_len - used, "%s%s", used ? " " : "", isa);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    /* lib stays open: hiprtc uses the same comgr, and LLVM inside it cannot be loaded twice. */
    return found;
}

static void print_log(hiprtcProgram prog)
{
    size_t n = 0;
    if (rtc.log_size(prog, &n) != HIPRTC_SUCCESS || n <= 1)
        return;
    char *log = malloc(n + 1);
    if (log && rtc.log(prog, log) == HIPRTC_SUCCESS) {
        log[n] = '\0';
        size_t len = strlen(log);
        printf("%s%s", log, len && log[len - 1] == '\n' ? "" : "\n");
    }
    free(log);
}

/* Builds src for one target; prints one line, and the log when there is one. Returns 0 on success. */
static int check(const char *path, const char *src, const char *target)
{
    char arch[128];
    snprintf(arch, sizeof arch, "--offload-arch=%s", target);
    const char *opts[] = {arch, "-std=c++14"}; /* the options libgpuport-hip uses */
    int nopts = 2;

    hiprtcProgram prog;
    hiprtcResult r = rtc.create(&prog, src, path, 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS) {
        printf("FAIL %s %s: hiprtcCreateProgram: %s (%d)\n", path, target, rtc.error_string(r), (int)r);
        return 1;
    }
    r = rtc.compile(prog, nopts, opts);
    size_t bytes = 0;
    unsigned char *code = NULL;
    const char *why = NULL;
    if (r != HIPRTC_SUCCESS)
        why = rtc.error_string(r);
    else if (rtc.code_size(prog, &bytes) != HIPRTC_SUCCESS || bytes == 0)
        why = "no code object";
    else if (!(code = malloc(bytes)))
        why = "out of memory";
    else if (rtc.code(prog, (char *)code) != HIPRTC_SUCCESS)
        why = "hiprtcGetCode failed";
    else if (bytes < 4 || code[0] != 0x7f || code[1] != 'E' || code[2] != 'L' || code[3] != 'F')
        why = "the code object is not ELF";
    if (why)
        printf("FAIL %s %s: %s\n", path, target, why);
    else
        printf("ok   %s %s: %zu bytes of code object\n", path, target, bytes);
    print_log(prog);
    free(code);
    rtc.destroy(&prog);
    return why != NULL;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s --target GFX [--target GFX ...] [-DNAME[=VALUE] ...] FILE.gp[+MORE.gp]...\n", argv0);
    return 2;
}

int main(int argc, char **argv)
{
    const char *targets[64], *defs[256];
    int ntargets = 0, ndefs = 0, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc && ntargets < 64)
            targets[ntargets++] = argv[++i];
        else if (strncmp(argv[i], "-D", 2) == 0 && argv[i][2] && ndefs < 256)
            defs[ndefs++] = argv[i];
        else if (argv[i][0] == '-')
            return usage(argv[0]);
        else
            nfiles++;
    }
    if (!ntargets || !nfiles)
        return usage(argv[0]);
    void *lib = load_hiprtc();
    if (!lib) {
        fprintf(stderr, "%s: hiprtc not found (tried libhiprtc.so.6/.so.5/.so and libamdhip64.so.5/.so.6/.so); "
                        "install libamdhip64-5 (Debian) or ROCm\n",
                argv[0]);
        return 77;
    }
    int failed = 0;
    for (int t = 0; t < ntargets; t++) {
        char known[4096];
        if (!target_known(targets[t], known, sizeof known)) {
            fprintf(stderr, "%s: hiprtc cannot compile for %s; it knows: %s\n", argv[0], targets[t], known);
            dlclose(lib);
            return 2;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        size_t len = 0;
        char *text = read_file(argv[i], &len);
        char *src = text ? with_prelude(argv[i], text, len, defs, ndefs) : NULL;
        if (!src) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
            free(text);
            dlclose(lib);
            return 2;
        }
        for (int t = 0; t < ntargets; t++)
            failed |= check(argv[i], src, targets[t]);
        free(src);
        free(text);
    }
    dlclose(lib);
    return failed;
}
