/* Matrix multiply: gpuport's tiled kernel (kernels/gemm.gp) with its tile shape per device and
 * type, the search that tunes it, and the dispatch to the vendor's BLAS through the plugin. */
#define _GNU_SOURCE /* strcasestr */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Candidate shapes for gp_gemm_tune, and the fallbacks when a class's default does not fit a
 * device: big GPU tiles first, the smallest last. CPUs try only those from CPU_FIRST on, shaped
 * for the direct variant: a row of 16 (or 8) columns per item is one vector of OpenCL C, and
 * tile_k is the k-block the items of a group share in the cache. */
static const gp_gemm_params candidates[] = {
    {128, 128, 8, 8, 8},   {128, 128, 16, 8, 8}, {128, 256, 8, 8, 8},   {256, 128, 8, 8, 8},
    {128, 256, 8, 8, 16},  {256, 128, 8, 16, 8}, {128, 256, 16, 8, 16}, {256, 128, 16, 16, 8},
    {128, 64, 16, 8, 4},   {64, 128, 16, 4, 8},  {128, 64, 8, 8, 8},    {64, 128, 8, 8, 8},
    {128, 64, 16, 4, 4},   {64, 64, 32, 8, 8},   {64, 64, 16, 8, 8},    {64, 64, 16, 4, 8},
    {64, 64, 16, 8, 4},    {32, 64, 32, 4, 8},   {32, 32, 32, 4, 4},    {32, 32, 32, 8, 8},
    {16, 16, 16, 4, 4},
    /* CPU_FIRST */
    {32, 64, 128, 8, 16},  {64, 64, 128, 8, 16}, {64, 64, 256, 8, 16},  {128, 64, 128, 8, 16},
    {32, 32, 64, 8, 16},   {32, 64, 128, 4, 16}, {64, 64, 128, 8, 8},   {16, 16, 8, 2, 2},
    {8, 8, 8, 2, 2},
};
#define CPU_FIRST 21
#define NCAND (sizeof candidates / sizeof candidates[0])

/* gpuport's table of device classes, per type (f32, f64): the shape and, for NVIDIA GPUs, two
 * smaller ones with their speed on large products in percent of the first's, and how many
 * groups a compute unit is counted to run at once. gp_gemm takes the shape whose busiest
 * compute unit has the least work: rounds of tiles (tiles / (units * groups at once), rounded
 * up) times the tile's area divided by its speed; ties go to the larger shape. Measured on an
 * H100 (132 SMs) with CUDA 13 against cuBLAS without TF32, N = 512 / 1024 / 2048 / 4096:
 * f32 128x128 0.61 / 0.52 / 0.86 / 0.85, 64x128 0.74 / 0.84 / 0.71, 64x32 1.44 / 0.69 / 0.54; since
 * the whole-vector stores into the local tiles the default gave 0.87-0.89 from N = 2048, and since
 * the products' order of gemm.gp's GEMM_FMAS 0.92-0.94, which also made 8 x 8 items the better
 * second shape: 64x128x8 0.63 / 0.75 / 0.91 / 0.84 / 0.87 / 0.96 / 0.87 / 0.90 at N = 512 / 768 /
 * 1024 / 1536 / 2048 / 3072 / 4096 / 8192 (64x128x16 with 4 x 8 per item 0.45 / 0.74 / 0.89 / 0.74
 * / 0.78 / 0.87), 64x32 0.98-1.38 / 0.79 / 0.73 / 0.75 / 0.58 / 0.67. Since the main loop takes two
 * steps at a time (gemm.gp's GEMM_UNROLL): 0.96 / 0.74 / 0.91 / 0.88 / 0.97 / 0.99 / 0.97 / 0.98
 * with the default choices; 128x128 0.71 at 1536 and 0.98 at 3072, 64x128 0.92 at 2048.
 * f64 on the FP64 matrix instructions, on CUDA with three steps of asynchronous copies in flight
 * (gemm.gp's PIPE), N = 1024 / 2048 / 4096 / 8192: 128x64 0.64 / 0.75 / 0.78 / 0.81 (51 TFLOP/s),
 * 64x64 0.76 / 0.75 / 0.79 / 0.76, and 32x64 0.63-0.95 at N = 512, where cuBLAS's own speed moves
 * by half from run to run. Since the main loop takes three steps at a time (128x64 only), 128x64
 * 0.79 / 0.82 / 0.87 at N = 2048 / 4096 / 8192, so the smaller shapes' speeds went from 93 and 81
 * to 88 and 77: N = 2944 / 3072 / 3328 / 3712, the sizes that then take 128x64 instead of 64x64,
 * ran 0.5% / 5% / 1.5% / 6% faster (0.80 at 3072, 0.81 at 3712). Nsight Compute at N = 4096 then
 * had its FP64 tensor pipe busy 83% of the active cycles, with two warps a scheduler, mostly
 * stalled on fixed-latency waits: the NOPs that ptxas puts after each matrix instruction. Since
 * the next tile's copies fill some of those slots (gemm.gp), 128x64 gives 0.82 / 0.82 / 0.85 /
 * 0.88 at N = 2048 / 3072 / 4096 / 8192, the smaller shapes unchanged; since five steps are in
 * flight (pipe_stages), 0.85 / 0.87 / 0.89 / 0.91, and 64x64 0.73-0.74 at N = 1536 (0.72), the
 * speeds below not measured again. The speeds stay: at N = 1088 / 1152 / 1216 / 2560 / 2624 / 2688,
 * which speeds of 85 and 75 would move to 128x64, it ran 43% and 27% slower, 9% and 1.5% faster,
 * 36% slower (not whole tiles) and 8% faster. Shapes with more warps ran slower at N = 2048 to
 * 8192, with the loop unrolled or not: 128x64 of 4 x 8 or 8 x 4 items 0.59-0.77, 128x128 of 4 x 8
 * or 8 x 8 0.58-0.78, 256x64 0.59-0.68 (before the copies moved), and on an H200 at this code
 * 128x128, 256x64, 64x256 and 64x128 0.79-0.85 where 128x64 made 0.90-0.92 (N = 2048 to 8192,
 * 2026-11-29). 128x64x16 ran 3-4% slower than 128x64x8 at N = 1024 to 8192 with either depth of
 * instruction before the copies moved, 6-17% after (gemm.gp); its two buffers without asynchronous
 * copies pass the 48 KiB of a kernel's own arrays. NVIDIA's OpenCL runs the f32 shapes at
 * 0.97-0.99x the CUDA backend's speed from N = 768. Its f64 stages the tiles through registers, as
 * CUDA did before PIPE; TFLOP/s at N = 512 / 768 / 1024 / 1536 / 2048 / 4096: 128x128x8 11.1 / 16.6
 * / 30.0 / 25.1 / 42.6 / 44.9 (128x64x8 the same from N = 768), 64x64x16 11.0 / 16.4 / 29.5 / 28.6
 * / 33.0 / 34.2, 64x64x8 11.0 / 17.3 / 31.6 / 20.9 / 28.2 / 29.1, 32x64x8 12.5 / 19.2 / 26.6 / 21.6
 * / 28.5 / 29.4. PIPE ran slower there: 35 TFLOP/s with two steps of 128x64 (three do not fit its
 * 48 KiB) and 28-31 with three of 64x64, against 40-46 without (46-49 from N = 2048 since 128x128
 * loads two steps ahead: gemm.gp's GEMM_AHEAD). */
typedef struct gemm_class {
    const char *name;
    gp_gemm_params p[2][3];
    unsigned speed[2][3];
    unsigned at_once[2];
    unsigned min_slices[2]; /* the fewest slices of k that split_rounds takes (below) */
    unsigned spread[2];     /* 1 + the shape that split_rounds spreads over slices of k when small, or 0 */
    unsigned spread_alone[2]; /* 1 where one group of that shape fills a compute unit */
} gemm_class;
#define NVIDIA_F32 {{128, 128, 8, 8, 8}, {64, 128, 8, 8, 8}, {64, 32, 16, 4, 4}}
static const gemm_class classes[] = {
    {"NVIDIA GPU, CUDA",
     {NVIDIA_F32, {{128, 64, 8, 8, 8}, {64, 64, 8, 4, 4}, {32, 64, 8, 4, 4}}},
     {{100, 95, 63}, {100, 88, 77}},
     {1, 2},
     {3, 3},
     {2, 0},
     {0, 0}},
    {"NVIDIA GPU, OpenCL",
     {NVIDIA_F32, {{128, 128, 8, 8, 8}, {64, 64, 16, 4, 4}, {32, 64, 8, 4, 4}}},
     {{100, 95, 63}, {100, 76, 65}},
     {1, 1},
     {3, 2},
     {2, 1},
     {0, 1}},
    /* no AMD GPU was at hand: shapes without measurement, and no smaller ones */
    {"AMD GPU", {{{128, 128, 16, 8, 8}}, {{64, 64, 16, 4, 4}}}, {{100}, {100}}, {1, 1}, {3, 3}, {0, 0}, {0, 0}},
    {"GPU", {{{64, 64, 16, 4, 4}}, {{64, 64, 8, 4, 4}}}, {{100}, {100}}, {1, 1}, {3, 3}, {0, 0}, {0, 0}},
    /* the direct variant, N = 1024 / 2048 against OpenBLAS 0.3.21 on the same cores: pocl 5.0 on
     * 16 Xeon cores f32 0.76 / 0.52x, f64 0.77 / 0.54x (f32 12x16 per item 0.62 / 0.55x, 16x16
     * 0.74 / 0.46x; f64 8x16 on 64x64x256 0.82 / 0.39x); pocl 3.1 on 2 EPYC cores f32 0.91 /
     * 0.90x, f64 1.63 / 1.51x */
    {"CPU", {{{64, 64, 256, 8, 16}}, {{32, 64, 128, 8, 16}}}, {{100}, {100}}, {1, 1}, {3, 3}, {0, 0}, {0, 0}},
    /* the tiled variant on a CPU (GPUPORT_GEMM_KERNEL=tiled): pocl needs minutes to compile
     * bigger tiles */
    {"CPU, tiled", {{{64, 64, 16, 4, 4}}, {{32, 32, 16, 4, 4}}}, {{100}, {100}}, {1, 1}, {3, 3}, {0, 0}, {0, 0}},
};
enum { NVIDIA_CUDA, NVIDIA_OPENCL, AMD, OTHER_GPU, CPU, CPU_TILED };

/* What a process chose for a device: gp_gemm_params_set, and the saved tune result as read
 * from (or written to) the cache folder it was looked up in. */
typedef struct gemm_state {
    gp_device *dev;
    int set[2];
    gp_gemm_params chosen[2];
    int looked[2];
    char folder[2][4096]; /* where it was looked up ("": nowhere) */
    int saved_found[2];
    gp_gemm_params saved[2];
    struct gemm_state *next;
} gemm_state;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static gemm_state *states;

/* Call with state_lock held; NULL when out of memory. */
static gemm_state *state_of(gp_device *dev)
{
    gemm_state *s = states;
    while (s && s->dev != dev) s = s->next;
    if (!s && (s = calloc(1, sizeof *s)) != NULL) {
        s->dev = dev;
        s->next = states;
        states = s;
    }
    return s;
}

static const char *type_name(gp_type type) { return type == GP_F32 ? "f32" : "f64"; }

static size_t local_bytes(gp_type type, const gp_gemm_params *p)
{
    /* Two buffers of tile_k rows of each tile, rows padded by 4 elements (kernels/gemm.gp). */
    return 2 * (size_t)p->tile_k * (p->tile_m + p->tile_n + 8) * gp_type_size(type);
}

/* The kernel's variants (kernels/gemm.gp): tiled on GPUs, direct on CPUs. */
static const gp__variants variants = {"GPUPORT_GEMM_KERNEL", {"tiled", "direct"}};
static int direct(const gp_device *dev) { return gp__variant(dev, &variants); }
static gp_status check_kernel_env(const char *fn) { return gp__variant_check(&variants, fn); }

/* NULL when the device can run p for type, else why not (in why). */
static const char *invalid(const gp_device *dev, gp_type type, const gp_gemm_params *p, char *why, size_t len)
{
    const gp_device_info *info = &dev->info;
    if (!p->tile_m || !p->tile_n || !p->tile_k || !p->work_m || !p->work_n)
        snprintf(why, len, "every value must be at least 1");
    else if (p->tile_m > 1024 || p->tile_n > 1024 || p->tile_k > 256 || p->work_m > 256 || p->work_n > 256 ||
             p->work_m * p->work_n > 256)
        snprintf(why, len, "the limits are tiles of 1024 x 1024 x 256 and 256 elements per work-item");
    else if (p->tile_m % p->work_m || p->tile_n % p->work_n)
        snprintf(why, len, "tile_m must be a multiple of work_m and tile_n of work_n");
    else {
        size_t items = (size_t)(p->tile_m / p->work_m) * (p->tile_n / p->work_n);
        size_t max = info->max_work_group_size < info->max_work_item_sizes[0] ? info->max_work_group_size
                                                                              : info->max_work_item_sizes[0];
        if (items > max)
            snprintf(why, len, "a work-group of %zu items is more than the %zu that %s allows", items, max, info->name);
        else if (direct(dev)) return NULL; /* no local tiles to share or fit */
        else if ((size_t)p->tile_m * p->tile_k % items || (size_t)p->tile_k * p->tile_n % items)
            snprintf(why, len, "the %zu work-items must share the tiles of A (%u x %u) and B (%u x %u) evenly", items,
                     p->tile_m, p->tile_k, p->tile_k, p->tile_n);
        else if (local_bytes(type, p) > info->local_mem_own_bytes)
            snprintf(why, len, "its tiles need %zu bytes of local memory, more than the %llu a kernel's own arrays "
                     "may have on %s", local_bytes(type, p), (unsigned long long)info->local_mem_own_bytes, info->name);
        else return NULL;
    }
    return why;
}

static gp_status check_params(const gp_device *dev, gp_type type, const gp_gemm_params *p, const char *fn,
                              const char *from)
{
    char why[256];
    if (!invalid(dev, type, p, why, sizeof why)) return GP_SUCCESS;
    return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %s%s%u,%u,%u,%u,%u for %s on %s:%zu: %s", fn, from,
                    *from ? " " : "", p->tile_m, p->tile_n, p->tile_k, p->work_m, p->work_n, type_name(type),
                    dev->info.backend, dev->info.backend_index, why);
}

/* GPUPORT_GEMM_PARAMS: 1 with *p when it names the type, 0 when unset or silent on it, or -1
 * (and the error set) when malformed. */
static int env_params(gp_type type, gp_gemm_params *p, const char *fn)
{
    const char *env = getenv("GPUPORT_GEMM_PARAMS");
    if (!env || !*env) return 0;
    gp_gemm_params both[2];
    int set[2];
    char why[128];
    if (!gp__parse_gemm_params(env, both, set, why, sizeof why)) {
        gp__fail(GP_ERROR_INVALID_ARGUMENT,
                 "%s: GPUPORT_GEMM_PARAMS is '%s': %s; the form is 'f32:tile_m,tile_n,tile_k,work_m,work_n', or that "
                 "and ';f64:...'",
                 fn, env, why);
        return -1;
    }
    if (!set[type == GP_F64]) return 0;
    *p = both[type == GP_F64];
    return 1;
}

/* The saved tune result for the device and type in the cache folder. */
static void saved_name(const gp_device *dev, gp_type type, char *name, size_t len)
{
    gp__sha256 h;
    unsigned char key[32];
    gp__sha256_init(&h);
    gp__sha256_update(&h, dev->cache_id, strlen(dev->cache_id));
    gp__sha256_final(&h, key);
    int n = snprintf(name, len, "gemm-");
    for (int i = 0; i < 16; i++) n += snprintf(name + n, len - (size_t)n, "%02x", key[i]);
    snprintf(name + n, len - (size_t)n, "-%s.txt", type_name(type));
}

static const char saved_magic[] = "gpuport gemm params 1";

static int read_saved(const gp_device *dev, gp_type type, gp_gemm_params *p)
{
    char name[64], text[1024];
    saved_name(dev, type, name, sizeof name);
    if (!gp__cache_read_text(name, text, sizeof text)) return 0;
    FILE *f = fmemopen(text, strlen(text), "r");
    if (!f) return 0;
    char why[256], line[600];
    unsigned v[5];
    const char *numbers = line;
    int ok = fgets(line, sizeof line, f) && strncmp(line, saved_magic, sizeof saved_magic - 1) == 0 &&
             fgets(line, sizeof line, f) && strncmp(line, dev->cache_id, strlen(dev->cache_id)) == 0 &&
             line[strlen(dev->cache_id)] == '\n' && fgets(line, sizeof line, f) &&
             gp__parse_list(&numbers, ' ', v, 5, GP__PARSE_MAX) && (*numbers == '\n' || !*numbers);
    if (ok) {
        *p = (gp_gemm_params){v[0], v[1], v[2], v[3], v[4]};
        ok = !invalid(dev, type, p, why, sizeof why);
    }
    fclose(f);
    if (!ok) gp__debug("gemm", "the saved choice %s is damaged or for another device; ignored", name);
    return ok;
}

/* The device's row of the class table. */
static int class_of(const gp_device *dev)
{
    const gp_device_info *info = &dev->info;
    int c = info->type != GP_DEVICE_CPU ? OTHER_GPU : direct(dev) ? CPU : CPU_TILED;
    if (info->type == GP_DEVICE_GPU && (strcmp(info->backend, "cuda") == 0 || strcasestr(info->vendor, "nvidia")))
        c = strcmp(info->backend, "opencl") == 0 ? NVIDIA_OPENCL : NVIDIA_CUDA; /* HIP there compiles as CUDA */
    else if (info->type == GP_DEVICE_GPU && (strcmp(info->backend, "hip") == 0 || strcasestr(info->vendor, "amd") ||
                                             strcasestr(info->vendor, "advanced micro")))
        c = AMD;
    return c;
}

static const gp_gemm_params *class_params(const gp_device *dev, gp_type type)
{
    char why[256];
    const gp_gemm_params *p = &classes[class_of(dev)].p[type == GP_F64][0];
    for (size_t i = NCAND; invalid(dev, type, p, why, sizeof why) && i > 0; i--) p = &candidates[i - 1];
    return invalid(dev, type, p, why, sizeof why) ? NULL : p;
}

/* The parameters for (dev, type): the environment, this process's choice, the saved tune
 * result, the class table, in that order; *from_table (when not NULL) says whether the last. */
static gp_status params_for(gp_device *dev, gp_type type, gp_gemm_params *p, const char *fn, int *from_table)
{
    if (from_table) *from_table = 0;
    int e = env_params(type, p, fn);
    if (e < 0) return GP_ERROR_INVALID_ARGUMENT;
    if (e > 0) return check_params(dev, type, p, fn, "GPUPORT_GEMM_PARAMS");
    int t = type == GP_F64, found = 0;
    char folder[4096];
    if (!gp__cache_folder(folder, sizeof folder)) folder[0] = '\0';
    pthread_mutex_lock(&state_lock);
    gemm_state *s = state_of(dev);
    if (s && s->set[t]) {
        *p = s->chosen[t];
        found = 1;
    } else if (s) {
        if (!s->looked[t] || strcmp(s->folder[t], folder) != 0) { /* first look, or GPUPORT_CACHE_DIR moved */
            snprintf(s->folder[t], sizeof s->folder[t], "%s", folder);
            s->looked[t] = 1;
            s->saved_found[t] = folder[0] && read_saved(dev, type, &s->saved[t]);
        }
        if ((found = s->saved_found[t]) != 0) *p = s->saved[t];
    }
    pthread_mutex_unlock(&state_lock);
    if (found) return GP_SUCCESS;
    const gp_gemm_params *c = class_params(dev, type);
    if (!c)
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: no tile shape fits %s:%zu (%s): work-groups of %zu, %llu bytes of "
                        "local memory", fn, dev->info.backend, dev->info.backend_index, dev->info.name,
                        dev->info.max_work_group_size, (unsigned long long)dev->info.local_mem_bytes);
    *p = *c;
    if (from_table) *from_table = 1;
    return GP_SUCCESS;
}

/* The split in k of the last round's tiles. gp_gemm runs an m x n product as rounds of tiles, one
 * a slot, the compute units times the groups the device's row of the table counts each to run at
 * once, and the last round may leave most slots idle: on an H100, DGEMM's 800 tiles of 128 x 64 at
 * N = 2560 are 8 more than three rounds of 264. Split, gp_gemm computes the tiles of the whole
 * rounds as before, and the last round's *tiles in *slices slices of k (at least the row's
 * min_slices, each of MIN_STEPS steps of tile_k or more) that run at once, each into scratch
 * memory, then sums the slices into C (kernels/gemm.gp's SPLIT and gp_gemm_sum). It splits where
 * that takes fewer rounds, counting the extra launches as 0.1 + 384 / k of a round, for the row's
 * first shape on whole tiles only. On an H100, alternating with the code before in one call: DGEMM
 * 0.74x / 0.74x / 0.78x / 0.77x to 0.83x / 0.85x / 0.81x / 0.87x cuBLAS at N = 1536 / 1664 / 2176
 * / 2560, SGEMM 0.88x / 0.86x / 0.89x / 1.03x to 1.07x / 1.04x / 0.99x / 1.08x at N = 1536 / 2176
 * / 2560 / 5120, and through NVIDIA's OpenCL DGEMM 20-28% faster at N = 1536 to 2560, the split
 * then over the rows of tiles that held the last round; over the last round's tiles instead, DGEMM
 * 0.81x / 0.86x / 0.87x to 0.83-0.84x / 0.89x / 0.91x at N = 2176 / 2560 / 2944 and SGEMM 0.98x to
 * 1.01x at 8192, but 0-2% slower at N = 1536 and 1664, where the rounds are the same (cause not
 * found). Splits of the smaller shapes (32 x 64 DGEMM at N = 1088, and at 768 through NVIDIA's
 * OpenCL; 64 x 128 SGEMM at 2816), splits of shapes that are not whole tiles at that size (DGEMM
 * at 2624 and 3264, SGEMM at 1088 and 4160), and two slices where two groups share a compute unit
 * (DGEMM at 3072) ran 3-23% slower instead. Two slices where one group fills a compute unit
 * (NVIDIA's OpenCL's 128 x 128 DGEMM: 244 registers an item) took it from 38.9 / 42.0 / 46.4 /
 * 47.2 to 45.2 / 46.0 / 47.9 / 48.4 TFLOP/s at N = 2304 / 3072 / 5376 / 6144 on an H100; the 128 x
 * 128 SGEMM, counted as one group a unit too but of fewer registers, ran 16% / 11% slower so at
 * 2304 / 3072 through either backend (2% faster at 6144), and keeps three.
 * A product of fewer tiles than two a unit, of the row's spread shape (NVIDIA's f32 64 x 128: 128
 * items, several groups to an SM) and SPREAD_STEPS steps of k or more, is split whole instead,
 * into the 2 to 4 slices of the fewest rounds, ceil(tiles * slices / units) / slices, counting a
 * tenth of a round a slice for the scratch and the sum: one group of 128 items alone on an SM
 * leaves its loads' latency bare, and several hide it. On an H200, alternating with the code
 * before in one call (two rounds): SGEMM 0.73x / 0.72-0.73x / 0.90-0.91x / 0.75x / 0.95-0.96x to
 * 1.05-1.06x / 0.99-1.00x / 0.98x / 1.00x / 1.00-1.01x cuBLAS at N = 768 / 896 / 1024 / 1152 /
 * 1280 (3 / 4 / 2 / 3 / 3 slices), through NVIDIA's OpenCL 18-34 to 23-37 TFLOP/s. Over fewer
 * steps it ran 20-25% slower through NVIDIA's OpenCL at N = 640, where a call's own cost weighs
 * more, and 9% through CUDA at 384; the 128 x 128 SGEMM split so ran 0.74-0.84x at N = 1024 (one
 * group an SM), and CUDA's DGEMM shapes 9-31% slower at N = 768 to 1536 (f64's scratch and sum
 * cost twice f32's). Where one group of the spread shape fills a unit (spread_alone: NVIDIA's
 * OpenCL's 128 x 128 DGEMM), only products of fewer tiles than units, into fewer rounds (H200:
 * -4% to +64% at N = 768 to 1152, 11-12% slower in as many rounds; docs/performance.md).
 * Returns the rounds; *tiles is 0 where nothing is split. GPUs only. */
#define MIN_STEPS 16
#define SPREAD_STEPS 96
static double split_rounds(const gp_device *dev, gp_type type, const gp_gemm_params *p, size_t m, size_t n,
                           size_t k, size_t *tiles, size_t *slices)
{
    const gemm_class *c = &classes[class_of(dev)];
    int t = type == GP_F64;
    size_t all = ((m + p->tile_m - 1) / p->tile_m) * ((n + p->tile_n - 1) / p->tile_n), steps = k / p->tile_k;
    size_t units = (dev->info.compute_units ? dev->info.compute_units : 1) * c->at_once[t];
    size_t whole = (all + units - 1) / units, last = all % units, sl = last ? units / last : 0;
    if (sl > steps / MIN_STEPS) sl = steps / MIN_STEPS;
    *tiles = 0, *slices = 1;
    if (dev->info.type != GP_DEVICE_GPU || direct(dev) || m % p->tile_m || n % p->tile_n || k % p->tile_k)
        return (double)whole;
    if (c->spread[t] && all < (c->spread_alone[t] ? 1 : 2) * units && steps >= SPREAD_STEPS &&
        memcmp(p, &c->p[t][c->spread[t] - 1], sizeof *p) == 0) {
        double rounds = (double)whole, best = 0;
        for (size_t s = 2; s <= 4 && s <= steps / MIN_STEPS; s++) {
            double r = (double)((all * s + units - 1) / units) / (double)s;
            if (best == 0 || r + 0.1 * (double)s < best) best = r + 0.1 * (double)s, rounds = r, *slices = s;
        }
        if (!c->spread_alone[t] || rounds < (double)whole) {
            *tiles = all;
            return rounds;
        }
        *slices = 1;
    }
    if (sl < c->min_slices[t] || memcmp(p, &c->p[t][0], sizeof *p) != 0) return (double)whole;
    double split = (double)(whole - 1) + 1.0 / (double)sl + 0.1 + 384.0 / (double)k;
    if (split >= (double)whole) return (double)whole;
    *tiles = last, *slices = sl;
    return split;
}

/* The shape of the device's row for an m x n x k product (above), p where the row has none
 * that fits the device. */
static const gp_gemm_params *for_size(const gp_device *dev, gp_type type, const gp_gemm_params *p, size_t m, size_t n,
                                      size_t k)
{
    const gemm_class *c = &classes[class_of(dev)];
    int t = type == GP_F64;
    double best = 0;
    char why[256];
    for (int i = 0; i < 3 && c->p[t][i].tile_m; i++) {
        const gp_gemm_params *q = &c->p[t][i];
        if (invalid(dev, type, q, why, sizeof why)) continue;
        size_t tiles, slices;
        double work = split_rounds(dev, type, q, m, n, k, &tiles, &slices) * q->tile_m * q->tile_n / c->speed[t][i];
        if (best == 0 || work < best) best = work, p = q;
    }
    return p;
}

static gp_status check_type(gp_device *dev, gp_type type, const char *fn)
{
    if (type != GP_F32 && type != GP_F64)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: type %d; matrix multiply is for GP_F32 and GP_F64", fn,
                        (int)type);
    return gp__type_option(dev, type, fn) ? GP_SUCCESS : GP_ERROR_UNSUPPORTED;
}

gp_status gp_gemm_params_get(gp_device *device, gp_type type, gp_gemm_params *params)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(params, "params");
    gp_status st = check_type(device, type, __func__);
    gp_gemm_params p;
    if (st == GP_SUCCESS) st = check_kernel_env(__func__);
    if (st == GP_SUCCESS) st = params_for(device, type, &p, __func__, NULL);
    if (st == GP_SUCCESS) *params = p;
    return st;
}

gp_status gp_gemm_params_set(gp_device *device, gp_type type, const gp_gemm_params *params)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(params, "params");
    gp_status st = check_type(device, type, __func__);
    if (st == GP_SUCCESS) st = check_kernel_env(__func__);
    if (st == GP_SUCCESS) st = check_params(device, type, params, __func__, "");
    if (st != GP_SUCCESS) return st;
    pthread_mutex_lock(&state_lock);
    gemm_state *s = state_of(device);
    if (s) {
        s->set[type == GP_F64] = 1;
        s->chosen[type == GP_F64] = *params;
    }
    pthread_mutex_unlock(&state_lock);
    return s ? GP_SUCCESS : gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: no host memory", __func__);
}

/* ---- gp_gemm ----------------------------------------------------------------------------- */

/* One operand as stored: lines (rows for row-major) of len contiguous elements, ld apart. */
typedef struct operand {
    const char *name, *ld_name;
    gp_view view;
    size_t ld, lines, len;
    int trans;
} operand;

static size_t extent(const operand *o) { return o->lines && o->len ? (o->lines - 1) * o->ld + o->len : 0; }

static gp_status check_operand(const operand *o, gp_type type, const char *fn)
{
    size_t need = o->len ? o->len : 1;
    if (o->ld < need)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %s is %zu; it must be at least %zu, the length of %s's %s",
                        fn, o->ld_name, o->ld, need, o->name, o->len ? "stored lines" : "lines (1 when empty)");
    if (o->lines > 1 && o->ld > (SIZE_MAX - o->len) / (o->lines - 1))
        return gp__fail(GP_ERROR_OUT_OF_RANGE, "%s: %s spans more elements than a size_t counts", fn, o->name);
    return gp__check_view(o->view, type, extent(o), fn, o->name);
}

/* 1 when the element ranges of x and y share bytes. */
static int overlap(const operand *x, const operand *y, size_t size)
{
    size_t xb = x->view.offset * size, xe = xb + extent(x) * size;
    size_t yb = y->view.offset * size, ye = yb + extent(y) * size;
    return x->view.buffer == y->view.buffer && xb < ye && yb < xe;
}

/* The form the kernel and the vendor libraries share: C (m x n) = op(A) op(B), A's lines along
 * k unless transposed. Column-major is the same product transposed. */
static void set_operand(operand *o, const char *name, const char *ld_name, gp_view v, size_t ld, int trans,
                        size_t rows, size_t cols, gp_layout layout)
{
    size_t sr = trans ? cols : rows, sc = trans ? rows : cols; /* as stored */
    *o = (operand){name, ld_name, v, ld, layout == GP_ROW_MAJOR ? sr : sc, layout == GP_ROW_MAJOR ? sc : sr, trans};
}

/* The steps the tiled kernel keeps in flight with asynchronous copies (gemm.gp's PIPE), and
 * *bytes the local memory the launch gives it, for f64 through CUDA (the FP64 matrix
 * instructions and cp.async; GPUs before sm_80 take the other path, on arrays of the kernel's
 * own) on whole 16-byte aligned tiles that its items copy in whole pieces: 5 where two groups
 * fit a compute unit (its shared memory taken as the most one block may have plus the 1 KiB
 * that CUDA keeps per block; the register file holds two of the 128 x 64 shape), else 4, else 3
 * where one group fits. On an H100, 128 x 64 at N = 2048 / 3072 / 4096 / 8192 ran 0.82 / 0.82 /
 * 0.85 / 0.88x cuBLAS with 3, 0.83 / 0.85 / 0.86 / 0.89 with 4, 0.85 / 0.87 / 0.89 / 0.90-0.91
 * with 5 and 0.80 / 0.82 / 0.83 / 0.86 with 6; 64 x 64 at N = 1536 0.72 with 3 and 0.73 with 5.
 * Else 0: two steps ran slower than the registers' staging on an H100, as PIPE did through
 * NVIDIA's OpenCL (the class table). */
static unsigned pipe_stages(const gp_device *dev, gp_type type, const gp_gemm_params *p, int trans_a, int trans_b,
                            int aligned, size_t *bytes)
{
    size_t v = 16 / gp_type_size(type), rm = p->tile_m / p->work_m, rn = p->tile_n / p->work_n, nt = rm * rn;
    size_t tm = p->tile_m, tn = p->tile_n, tk = p->tile_k, alen = trans_a ? tm : tk, blen = trans_b ? tk : tn;
    int c = class_of(dev);
    if (type != GP_F64 || c != NVIDIA_CUDA || !aligned || rm % 8 || rn % 4 || tk % 8 ||
        p->work_m % 2 || p->work_n % 2 || alen % v || blen % v || tm * tk % (nt * v) || tk * tn % (nt * v) ||
        nt % (alen / v) || nt % (blen / v))
        return 0;
    /* st buffers of A's tile, then from 16 bytes on st of B's */
    size_t a = trans_a ? tk * (tm + 4) : tm * (tk + 4), b = trans_b ? tn * (tk + 4) : tk * (tn + 4);
    for (unsigned st = 5; st >= 3; st--) {
        size_t need = ((st * a + v - 1) / v * v + st * b) * gp_type_size(type);
        if (st == 3 ? need <= dev->info.local_mem_bytes : 2 * (need + 1024) <= dev->info.local_mem_bytes + 1024) {
            *bytes = need;
            return st;
        }
    }
    return 0;
}

/* GPUPORT_GEMM_SPLIT: unset or "auto", split_rounds' choice; "off", none; "tiles,slices", that
 * split of the product's last tiles wherever the kernel is gpuport's (tiles past the product's
 * take all of them), for tests and experiments. */
static gp_status split_for(const gp_device *dev, gp_type type, const gp_gemm_params *p, size_t m, size_t n, size_t k,
                           size_t *tiles, size_t *slices)
{
    const char *env = getenv("GPUPORT_GEMM_SPLIT"), *e = env;
    unsigned v[2];
    *tiles = 0, *slices = 1;
    if (!env || !*env || strcmp(env, "auto") == 0) split_rounds(dev, type, p, m, n, k, tiles, slices);
    else if (gp__parse_list(&e, ',', v, 2, 65535) && !*e && v[0] && v[1])
        *tiles = v[0], *slices = v[1];
    else if (strcmp(env, "off") != 0)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_gemm: GPUPORT_GEMM_SPLIT is '%s'; it must be auto, off, or "
                        "tiles,slices (each 1 to 65535)", env);
    if (k == 0 || *slices == 1) *tiles = 0, *slices = 1; /* k == 0: C = beta C */
    return GP_SUCCESS;
}

typedef struct gemm_launch {
    const gp_gemm_params *p;
    int wide, flags;
    unsigned stages;
    size_t items, local;
} gemm_launch;

/* gemm.gp's kernel fn for this launch, with the split's slices or without (a kernel of its own:
 * the slices' code in the other made NVIDIA's OpenCL run SGEMM 15% slower at N = 4096). */
static gp_status gemm_kernel(gp_stream *s, gp_type type, const gemm_launch *l, int split, const char *fn,
                             unsigned nargs, gp_kernel **kern)
{
    const gp_gemm_params *p = l->p;
    char options[96];
    snprintf(options, sizeof options, "%s -DGEMM_SHAPE=%u,%u,%u,%u,%u -DGEMM_FLAGS=%d -DGEMM_STAGES=%u",
             gp__type_option(s->dev, type, "gp_gemm"), p->tile_m, p->tile_n, p->tile_k, p->work_m, p->work_n,
             l->flags | split << 6, l->stages);
    return gp__builtin_kernel(s->dev, gp__src_gemm, options, fn, nargs, kern);
}

/* gp_gemm over rows [m0, m0 + m) of the product: its first `groups` tiles, or its last in slices
 * of k into the scratch c. */
static gp_status launch_gemm(gp_stream *s, gp_type type, const gemm_launch *l, size_t m0, size_t groups, size_t m,
                             size_t n, size_t k, double alpha, const operand *a, const operand *b, double beta,
                             gp_buffer *c, uint64_t c_off, size_t ldc, size_t slices)
{
    gp_kernel *kern;
    gp_status st = gemm_kernel(s, type, l, slices > 1, "gp_gemm", 15, &kern);
    if (st != GP_SUCCESS) return st;
    uint64_t offs[2] = {a->view.offset + m0 * (a->trans ? 1 : a->ld), b->view.offset};
    uint64_t dims64[6] = {a->ld, b->ld, ldc, m, n, k};
    uint32_t dims32[6];
    for (int i = 0; i < 6; i++) dims32[i] = (uint32_t)dims64[i];
    size_t isz = l->wide ? 8 : 4;
    const void *d = l->wide ? (const void *)dims64 : (const void *)dims32;
#define DIM(i) GP_VALUE_AS((const char *)d + (i) * isz, l->wide ? GP_U64 : GP_U32)
    float af = (float)alpha, bf = (float)beta;
    gp_arg al = type == GP_F32 ? GP_VALUE(af) : GP_VALUE(alpha), be = type == GP_F32 ? GP_VALUE(bf) : GP_VALUE(beta);
    gp_arg args[] = {GP_BUFFER(a->view.buffer), GP_VALUE(offs[0]), DIM(0), GP_BUFFER(b->view.buffer),
                     GP_VALUE(offs[1]), DIM(1), GP_BUFFER(c), GP_VALUE(c_off), DIM(2),
                     DIM(3), DIM(4), DIM(5), al, be, GP_LOCAL_BYTES(l->local)};
#undef DIM
    size_t global[2] = {groups * l->items, slices}, local[2] = {l->items, 1};
    return gp_kernel_launch(s, kern, slices > 1 ? 2 : 1, global, local, sizeof args / sizeof args[0], args);
}

static gp_status run_gpuport(gp_stream *s, gp_type type, const gp_gemm_params *p, size_t m, size_t n, size_t k,
                             double alpha, const operand *a, const operand *b, double beta, const operand *c)
{
    const size_t lim = UINT32_MAX;
    size_t items = (size_t)(p->tile_m / p->work_m) * (p->tile_n / p->work_n);
    size_t gm = m / p->tile_m + (m % p->tile_m != 0), gn = n / p->tile_n + (n % p->tile_n != 0);
    if (gm > lim / gn || gm * gn > lim / items)
        return gp__fail(GP_ERROR_UNSUPPORTED, "gp_gemm: %zu x %zu is more than 2^32 work-items of tiles %u x %u", m, n,
                        p->tile_m, p->tile_n);
    size_t tiles, slices, tile = (size_t)p->tile_m * p->tile_n;
    gp_status st = split_for(s->dev, type, p, m, n, k, &tiles, &slices);
    if (st != GP_SUCCESS) return st;
    if (tiles > gm * gn) tiles = gm * gn;
    if (tiles && tiles * tile > lim / slices)
        return gp__fail(GP_ERROR_UNSUPPORTED, "gp_gemm: GPUPORT_GEMM_SPLIT asks for %zu slices of %zu tiles of %u x "
                        "%u, more than 2^32 elements", slices, tiles, p->tile_m, p->tile_n);
    /* 32-bit indices unless an offset inside a tile step or C could pass 2^32 (gemm.gp) */
    size_t tmax = p->tile_m + p->tile_n + p->tile_k, big = lim / 2;
    int wide = m + tmax > big || n + tmax > big || k + tmax > big || a->ld > big / tmax || b->ld > big / tmax ||
               c->ld > big / (m + tmax);
    int exact = m % p->tile_m == 0 && n % p->tile_n == 0 && k % p->tile_k == 0;
    /* 16-byte loads of A and B and stores of C, for whole tiles only: no other variant has them to
     * tell apart. */
    size_t v = 16 / gp_type_size(type);
    int aligned = exact && !direct(s->dev) && gp__view_aligned(a->view, type, 16) &&
                  gp__view_aligned(b->view, type, 16) && a->ld % v == 0 && b->ld % v == 0;
    int aligned_c = type == GP_F64 && exact && !direct(s->dev) && gp__view_aligned(c->view, type, 16) &&
                    c->ld % v == 0; /* only f64 stores C in pairs (gemm.gp's CRUN) */
    /* local: the kernel has arrays of its own, or no tiles (direct) */
    gemm_launch l = {p, wide,
                     a->trans | b->trans << 1 | exact << 2 | wide << 3 | direct(s->dev) << 4 | aligned << 5 |
                         aligned_c << 7,
                     0, items, 16};
    if (!direct(s->dev)) l.stages = pipe_stages(s->dev, type, p, a->trans, b->trans, aligned, &l.local);
    /* Split tiles that are whole rows of tiles are a product of their own, rows [m1, m): on an
     * H100, SGEMM at N = 1536 (144 tiles of 128 x 128, the last 12 split) ran 2.5% faster with
     * them as the last row than as the 4 x 3 block that ends the kernel's order of tiles. */
    size_t rows = tiles % gn == 0 ? tiles / gn : 0, m1 = rows ? (gm - rows) * p->tile_m : 0, mt = m - m1;
    if (gm * gn > tiles)
        st = launch_gemm(s, type, &l, 0, gm * gn - tiles, rows ? m1 : m, n, k, alpha, a, b, beta, c->view.buffer,
                         c->view.offset, c->ld, 1);
    if (st != GP_SUCCESS || tiles == 0) return st;
    gp_buffer *w = NULL;
    gp_kernel *sum = NULL;
    st = gp__scratch(s, slices * tiles * tile * gp_type_size(type), &w);
    if (st == GP_SUCCESS) st = gemm_kernel(s, type, &l, 1, "gp_gemm_sum", 10, &sum);
    if (st == GP_SUCCESS) st = launch_gemm(s, type, &l, m1, tiles, mt, n, k, 1, a, b, 0, w, 0, n, slices);
    if (st != GP_SUCCESS) return st;
    uint64_t dims64[3] = {c->ld, mt, n}, c_off = c->view.offset + m1 * c->ld;
    uint32_t dims32[3] = {(uint32_t)c->ld, (uint32_t)mt, (uint32_t)n}, sl = (uint32_t)slices, tl = (uint32_t)tiles;
    float af = (float)alpha, bf = (float)beta;
    gp_arg args[] = {GP_BUFFER(w), GP_BUFFER(c->view.buffer), GP_VALUE(c_off),
                     wide ? GP_VALUE(dims64[0]) : GP_VALUE(dims32[0]), wide ? GP_VALUE(dims64[1]) : GP_VALUE(dims32[1]),
                     wide ? GP_VALUE(dims64[2]) : GP_VALUE(dims32[2]), GP_VALUE(sl), GP_VALUE(tl),
                     type == GP_F32 ? GP_VALUE(af) : GP_VALUE(alpha), type == GP_F32 ? GP_VALUE(bf) : GP_VALUE(beta)};
    size_t local = s->dev->info.max_work_group_size < 256 ? s->dev->info.max_work_group_size : 256;
    size_t global = (tiles * tile + local - 1) / local * local;
    return gp_kernel_launch(s, sum, 1, &global, &local, sizeof args / sizeof args[0], args);
}

static gp_status run_vendor(gp_stream *s, gp_type type, size_t m, size_t n, size_t k, double alpha,
                            const operand *a, const operand *b, double beta, const operand *c)
{
    const gp__backend *be = s->dev->be;
    if (!be->blas_gemm)
        return gp__fail(GP_ERROR_UNSUPPORTED, "gp_gemm: the %s backend has no vendor BLAS", be->name);
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    gp__trace_token *t = gp__trace_begin(s);
    gp_status st = be->blas_gemm(s->dev->impl, s->impl, type, b->trans, a->trans, n, m, k, alpha,
                                 b->view.buffer->impl, b->view.offset, b->ld, a->view.buffer->impl, a->view.offset,
                                 a->ld, beta, c->view.buffer->impl, c->view.offset, c->ld);
    size_t mnk[3] = {m, n, k};
    gp__trace_end(t, st, "blas", type == GP_F64 ? "dgemm" : "sgemm", (m * k + k * n + m * n) * gp_type_size(type), 3,
                  mnk);
    return st;
}

/* GP_GEMM_AUTO: GPUPORT_GEMM where set; else the vendor's BLAS where it was measured faster than
 * gpuport's kernel, gpuport's kernel everywhere else (docs/primitives.md):
 * - the host's own BLAS on a CPU device's memory (OpenBLAS; its text says " (host)", which it
 *   does not where OpenBLAS runs kernels older than the CPU, and gpuport's kernel was faster;
 *   " (host for f32, " where only its SGEMM kept up, from 1024^3 multiply-adds: its AVX2 kernels
 *   on a CPU with AVX-512; on 2 EPYC cores gpuport's SGEMM ran at 0.64-1.52x it at N = 512 and
 *   0.88-0.99x from N = 1024, its DGEMM at 1.37-1.57x from N = 1024);
 * - cuBLAS on the CUDA backend for f64 at every size and for f32 below 2048^3 multiply-adds (an
 *   H100, 2026-11-28: gpuport's DGEMM at 0.84-0.92x cuBLAS from N = 1024, its SGEMM at 0.90x at
 *   N = 1024 and 0.97-1.01x from 2048; on an H200 since small products split k, 0.90-1.06x from
 *   N = 640 to 1408). */
static gp_status pick_impl(gp_device *dev, gp_type type, size_t m, size_t n, size_t k, gp_gemm_impl *impl)
{
    if (*impl != GP_GEMM_AUTO) return GP_SUCCESS;
    const char *env = getenv("GPUPORT_GEMM");
    char text[512];
    if (env && *env) {
        if (strcmp(env, "gpuport") == 0) *impl = GP_GEMM_GPUPORT;
        else if (strcmp(env, "vendor") == 0) *impl = GP_GEMM_VENDOR;
        else
            return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_gemm: GPUPORT_GEMM is '%s'; it must be gpuport or vendor",
                            env);
        return GP_SUCCESS;
    }
    *impl = GP_GEMM_GPUPORT;
    /* The vendor's library is asked about only where it could be taken. */
    int cpu = dev->info.type == GP_DEVICE_CPU;
    double mnk = (double)m * (double)n * (double)k;
    int cuda = strcmp(dev->info.backend, "cuda") == 0 && (type == GP_F64 || mnk < 2048.0 * 2048.0 * 2048.0);
    if ((cpu || cuda) && dev->be->blas_info && dev->be->blas_info(dev->impl, text, sizeof text) == GP_SUCCESS &&
        (cpu ? strstr(text, " (host)") || (type == GP_F32 && mnk >= 1024.0 * 1024.0 * 1024.0 &&
                                             strstr(text, " (host for f32, "))
             : strncmp(text, "cuBLAS", 6) == 0))
        *impl = GP_GEMM_VENDOR;
    return GP_SUCCESS;
}

/* gp_gemm with the parameters given (the tune's candidates), or the device's when p is NULL. */
gp_status gp__gemm_with(gp_stream *stream, gp_gemm_impl impl, gp_type type, gp_layout layout, gp_transpose trans_a,
                      gp_transpose trans_b, size_t m, size_t n, size_t k, double alpha, gp_view a, size_t lda,
                      gp_view b, size_t ldb, double beta, gp_view c, size_t ldc, const gp_gemm_params *p)
{
    static const char fn[] = "gp_gemm";
    if ((unsigned)impl > GP_GEMM_VENDOR)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_gemm_impl", fn, (int)impl);
    if ((unsigned)layout > GP_COL_MAJOR)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_layout", fn, (int)layout);
    if ((unsigned)trans_a > GP_TRANS || (unsigned)trans_b > GP_TRANS)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: trans_a %d and trans_b %d must be GP_NO_TRANS or GP_TRANS",
                        fn, (int)trans_a, (int)trans_b);
    if (!c.buffer) return gp__fail(GP_ERROR_INVALID_HANDLE, "%s: the C view has no buffer", fn);
    gp_device *dev = c.buffer->dev;
    gp_status st = check_type(dev, type, fn);
    if (st != GP_SUCCESS) return st;
    operand oa, ob, oc;
    set_operand(&oa, "A", "lda", a, lda, trans_a, m, k, layout);
    set_operand(&ob, "B", "ldb", b, ldb, trans_b, k, n, layout);
    set_operand(&oc, "C", "ldc", c, ldc, 0, m, n, layout);
    const operand *ops[] = {&oa, &ob, &oc};
    for (int i = 0; i < 3 && st == GP_SUCCESS; i++) st = check_operand(ops[i], type, fn);
    for (int i = 0; i < 2 && st == GP_SUCCESS; i++) {
        const gp_device *d = ops[i]->view.buffer->dev;
        if (d != dev)
            st = gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: %s is on %s:%zu, C on %s:%zu", fn, ops[i]->name,
                          d->info.backend, d->info.backend_index, dev->info.backend, dev->info.backend_index);
        else if (overlap(ops[i], &oc, gp_type_size(type)))
            st = gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %s and C share memory; C must be apart from A and B", fn,
                          ops[i]->name);
    }
    if (st == GP_SUCCESS) st = pick_impl(dev, type, m, n, k, &impl);
    if (st == GP_SUCCESS && impl == GP_GEMM_GPUPORT) st = check_kernel_env(fn);
    gp_gemm_params dp;
    int from_table = 0;
    if (st == GP_SUCCESS && impl == GP_GEMM_GPUPORT && !p &&
        (st = params_for(dev, type, &dp, fn, &from_table)) == GP_SUCCESS)
        p = &dp;
    if (st == GP_SUCCESS) st = gp__primitive_begin(&stream, dev, fn);
    if (st != GP_SUCCESS) return st;
    if (layout == GP_COL_MAJOR) { /* as row-major: C^T = op(B)^T op(A)^T */
        operand t = oa;
        oa = ob, ob = t;
        size_t u = m;
        m = n, n = u;
    }
    if (m == 0 || n == 0) st = GP_SUCCESS;
    else if (impl == GP_GEMM_VENDOR) st = run_vendor(stream, type, m, n, k, alpha, &oa, &ob, beta, &oc);
    /* alpha == 0 reads neither A nor B: C = beta * C, as k == 0 gives. */
    else st = run_gpuport(stream, type, from_table ? for_size(dev, type, p, m, n, k) : p, m, n, alpha == 0 ? 0 : k,
                          alpha, &oa, &ob, beta, &oc);
    gp__primitive_end(stream);
    return st;
}

gp_status gp_gemm(gp_stream *stream, gp_gemm_impl impl, gp_type type, gp_layout layout, gp_transpose trans_a,
                  gp_transpose trans_b, size_t m, size_t n, size_t k, double alpha, gp_view a, size_t lda, gp_view b,
                  size_t ldb, double beta, gp_view c, size_t ldc)
{
    return gp__gemm_with(stream, impl, type, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL);
}

gp_status gp_gemm_vendor_info(gp_device *device, char *text, size_t text_len)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(text, "text");
    if (text_len == 0) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: text_len is 0", __func__);
    if (!device->be->blas_info) {
        snprintf(text, text_len, "the %s backend has no vendor BLAS", device->be->name);
        return gp__fail(GP_ERROR_UNSUPPORTED, "%s: %s", __func__, text);
    }
    return device->be->blas_info(device->impl, text, text_len);
}

/* ---- What gemm_tune.c uses --------------------------------------------------------------- */

gp_status gp__gemm_tune_check(gp_device *dev, gp_type type, const char *fn)
{
    gp_status st = check_type(dev, type, fn);
    return st == GP_SUCCESS ? check_kernel_env(fn) : st;
}

const gp_gemm_params *gp__gemm_candidate(const gp_device *dev, gp_type type, size_t *next)
{
    char why[256];
    size_t i = *next ? *next : dev->info.type == GP_DEVICE_CPU ? CPU_FIRST : 0;
    while (i < NCAND && invalid(dev, type, &candidates[i], why, sizeof why)) i++;
    *next = i + 1;
    return i < NCAND ? &candidates[i] : NULL;
}

void gp__gemm_keep_tuned(gp_device *dev, gp_type type, const gp_gemm_params *win)
{
    char name[64], text[1024], folder[4096];
    saved_name(dev, type, name, sizeof name);
    snprintf(text, sizeof text, "%s\n%s\n%u %u %u %u %u\n", saved_magic, dev->cache_id, win->tile_m, win->tile_n,
             win->tile_k, win->work_m, win->work_n);
    if (!gp__cache_write_text(name, text))
        gp__debug("tune", "the cache folder is not writable; the choice is kept for this process only");
    if (!gp__cache_folder(folder, sizeof folder)) folder[0] = '\0';
    pthread_mutex_lock(&state_lock);
    gemm_state *s = state_of(dev);
    if (s) { /* from now on, whether or not the file could be written */
        int t = type == GP_F64;
        snprintf(s->folder[t], sizeof s->folder[t], "%s", folder);
        s->looked[t] = s->saved_found[t] = 1;
        s->saved[t] = *win;
        s->set[t] = 0;
    }
    pthread_mutex_unlock(&state_lock);
}
