/* gpuport-test-coarsen: the CUDA plugin's twins (src/backends/cuda/coarsen.c) on what NVRTC
 * really gives, without a GPU. Dialect kernels, after the plugin's own prelude, are compiled by
 * NVRTC for sm_90 and their PTX given twins. Proven:
 * - the kernels that share nothing within a block and read their group get a twin each, and
 *   those with a barrier, local memory or subgroup operations, or without a group id, none;
 * - the text starts with NVRTC's, unchanged, and each twin takes its kernel's parameters and two;
 * - ptxas assembles the whole text (argv[1]), so every twin is valid PTX;
 * - every prefix of the text is read without harm, with no more twins than the whole text.
 * What the twins compute is proven on a GPU: launches/coarsened_ids runs them. */
#include "coarsen.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char gp__ch_prelude[]; /* the CUDA plugin's prelude, as the build embeds it */

static const char kernels[] =
    "GP_KERNEL void guarded(GP_GLOBAL const float *a, GP_GLOBAL float *c, uint n)\n"
    "{ uint i = gp_global_id(0); if (i < n) c[i] = a[i]; }\n"
    "GP_KERNEL void looped(GP_GLOBAL float *a, GP_GLOBAL const float *b, float s, uint n)\n"
    "{ GP_FOR(i, n) a[i] = b[i] * s; }\n"
    "GP_KERNEL void returns(GP_GLOBAL uint *out, uint n)\n"
    "{ uint i = gp_global_id(0); if (i >= n) return; if (out[i] == 7u) return; out[i] = gp_group_id(0) + "
    "gp_num_groups(0); }\n"
    "GP_KERNEL void counts(GP_GLOBAL uint *c) { gp_atomic_add(c + gp_group_id(0) % 4u, 1u); }\n"
    "GP_KERNEL void rows(GP_GLOBAL float *a, uint w) { a[gp_global_id(1) * w + gp_global_id(0)] = 1.0f; }\n"
    "GP_KERNEL void no_group(GP_GLOBAL float *a) { a[gp_local_id(0)] = 2.0f; }\n"
    "GP_KERNEL void tile(GP_GLOBAL float *a)\n"
    "{ GP_LOCAL float t[64]; t[gp_local_id(0)] = a[gp_global_id(0)]; gp_barrier();\n"
    "  a[gp_global_id(0)] = t[63u - gp_local_id(0)]; }\n"
    "GP_KERNEL void fence(GP_GLOBAL uint *a) { a[gp_global_id(0)] = 1u; gp_barrier(); a[gp_global_id(0) + 1u] = 2u; }\n"
    "GP_KERNEL void lanes(GP_GLOBAL uint *a)\n"
    "{ a[gp_global_id(0)] = gp_sub_group_scan_inclusive_add(a[gp_global_id(0)]); }\n";
static const char *const with_twin[] = {"guarded", "looped", "returns", "counts", "rows"};
static const char *const without[] = {"no_group", "tile", "fence", "lanes"};

static int failures;
#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                 \
            fputc('\n', stderr);                                                                                   \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

/* The number of parameters of entry NAME in text, or -1 when it has no such entry. */
static int params_of(const char *text, const char *name)
{
    char head[128];
    snprintf(head, sizeof head, ".entry %s(", name);
    const char *p = strstr(text, head);
    if (!p) return -1;
    const char *end = strchr(p, ')');
    int n = 0;
    for (p = strstr(p, ".param"); p && p < end; p = strstr(p + 6, ".param")) n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gpuport-test-coarsen PTXAS\n");
        return 2;
    }
    size_t len = strlen(gp__ch_prelude) + sizeof kernels + 2;
    char *source = malloc(len);
    if (!source) return 1;
    snprintf(source, len, "%s\n%s", gp__ch_prelude, kernels);
    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=sm_90", "-std=c++17"};
    if (nvrtcCreateProgram(&prog, source, "coarsen.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "%s\n", log);
        free(log);
        fprintf(stderr, "NVRTC did not compile the kernels\n");
        return 1;
    }
    size_t n = 0;
    nvrtcGetPTXSize(prog, &n);
    char *ptx = malloc(n);
    if (!ptx || nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) return 1;
    nvrtcDestroyProgram(&prog);
    free(source);

    size_t twins = 0;
    char *out = gp__coarsen_ptx(ptx, &twins);
    CHECK(out != NULL, "no twins at all");
    if (!out) return 1;
    CHECK(twins == sizeof with_twin / sizeof with_twin[0], "%zu twins, expected %zu", twins,
          sizeof with_twin / sizeof with_twin[0]);
    CHECK(strncmp(out, ptx, strlen(ptx)) == 0, "NVRTC's text was changed");
    char name[128];
    for (size_t i = 0; i < sizeof with_twin / sizeof with_twin[0]; i++) {
        snprintf(name, sizeof name, "%s" GP__COARSEN_SUFFIX, with_twin[i]);
        int own = params_of(ptx, with_twin[i]), twin = params_of(out, name);
        CHECK(own >= 0 && twin == own + 2, "%s: %d parameters, its twin %d", with_twin[i], own, twin);
    }
    for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
        snprintf(name, sizeof name, "%s" GP__COARSEN_SUFFIX, without[i]);
        CHECK(params_of(ptx, without[i]) >= 0, "NVRTC gave no kernel %s", without[i]);
        CHECK(params_of(out, name) < 0, "%s has a twin", without[i]);
    }

    /* ptxas, the assembler the driver's own compiler shares, accepts every twin. */
    char path[] = "/tmp/gpuport-coarsen-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f && fputs(out, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    char command[512];
    snprintf(command, sizeof command, "'%s' -arch=sm_90 '%s' -o /dev/null", argv[1], path);
    CHECK(system(command) == 0, "ptxas refused the text (%s)", command);
    remove(path);

    /* Every prefix: each read alone, so that the sanitizers see any step past its end. */
    size_t whole = strlen(ptx);
    for (size_t cut = 0; cut < whole; cut += 3) {
        char *part = malloc(cut + 1);
        if (!part) return 1;
        memcpy(part, ptx, cut);
        part[cut] = '\0';
        size_t t = 0;
        char *o = gp__coarsen_ptx(part, &t);
        CHECK(t <= twins && (o != NULL) == (t > 0), "a prefix of %zu characters: %zu twins", cut, t);
        CHECK(!o || strncmp(o, part, cut) == 0, "a prefix of %zu characters was changed", cut);
        free(o);
        free(part);
    }
    free(out);
    free(ptx);
    printf("%s: %zu twins, assembled by ptxas; every prefix read\n", failures ? "FAILED" : "ok", twins);
    return failures != 0;
}
