/* Proves user kernels in the dialect compute what plain C computes, for awkward sizes. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *saxpy_src =
    "GP_KERNEL void saxpy(uint n, float a, GP_GLOBAL const float *x, GP_GLOBAL float *y)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* The same in GP_FOR, whose loop must cover n for a launch of any size. The `continue` must go
 * on to the work-item's next element, not end its loop. */
static const char *grid_saxpy_src =
    "GP_KERNEL void grid_saxpy(uint n, float a, GP_GLOBAL const float *x, GP_GLOBAL float *y)\n"
    "{\n"
    "    GP_FOR(i, n) {\n"
    "        if (x[i] == 0.0f) continue;\n"
    "        y[i] = a * x[i] + y[i];\n"
    "    }\n"
    "}\n";

enum { PAD = 16 }; /* elements after the end that a guarded kernel must not touch */

/* Small integers keep a * x + y exact in float, with or without a fused multiply-add. A launch
 * of `global` work-items (n where 0). */
static void saxpy_case(gp_kernel *k, uint32_t n, size_t global, const size_t *local)
{
    const float a = 2.0f, sentinel = -7777.0f;
    float *x = tst_malloc((n + PAD) * sizeof(float)), *y = tst_malloc((n + PAD) * sizeof(float));
    float *ref = tst_malloc((n + PAD) * sizeof(float));
    uint64_t st = 1234 + n;
    for (size_t i = 0; i < n + PAD; i++) {
        x[i] = (float)((int)(tst_random_u32(&st) % 201) - 100);
        y[i] = i < n ? (float)((int)(tst_random_u32(&st) % 2001) - 1000) : sentinel;
        ref[i] = i < n ? a * x[i] + y[i] : sentinel;
    }
    size_t bytes = (n + PAD) * sizeof(float);
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, bytes), *by = tst_buffer(GP_MEMORY_DEVICE, bytes);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, bytes));
    GP_OK(gp_buffer_write(NULL, by, 0, y, bytes));
    if (!global) global = n;
    gp_arg args[] = {GP_VALUE(n), GP_VALUE(a), GP_BUFFER(bx), GP_BUFFER(by)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, local, 4, args));
    GP_OK(gp_buffer_read(NULL, by, 0, y, bytes));
    size_t bad = (size_t)-1;
    for (size_t i = 0; i < n + PAD && bad == (size_t)-1; i++)
        if (y[i] != ref[i])
            bad = i;
    float got = bad != (size_t)-1 ? y[bad] : 0, want = bad != (size_t)-1 ? ref[bad] : 0;
    free(x);
    free(y);
    free(ref);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
    if (bad != (size_t)-1)
        fail_msg("saxpy n=%u global=%zu local=%zu: y[%zu] = %g, expected %g", n, global, local ? *local : 0, bad,
                 got, want);
}

static void saxpy_sizes(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {0, 1, 2, 31, 33, 255, 257, 1000003};
    gp_program *p = tst_program(saxpy_src, NULL);
    gp_kernel *k = tst_kernel(p, "saxpy");
    size_t g = tst_group_size();
    const size_t locals[] = {1, 3, g / 2 ? g / 2 : 1, g};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        saxpy_case(k, sizes[i], 0, NULL);
        for (size_t l = 0; l < sizeof locals / sizeof locals[0]; l++)
            if (sizes[i] <= 100000 || locals[l] >= 32)
                saxpy_case(k, sizes[i], 0, &locals[l]);
    }
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* GP_FOR for launches of as many work-items as elements, fewer and more, with the device's
 * shape and with groups that end inside and past n. */
static void grid_loop_sizes(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {0, 1, 31, 257, 4099, 1000003};
    gp_program *p = tst_program(grid_saxpy_src, NULL);
    gp_kernel *k = tst_kernel(p, "grid_saxpy");
    size_t g = tst_group_size();
    const size_t locals[] = {1, 3, g};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i], globals[] = {n, n / 3 + 1, 2 * n + 5};
        for (size_t j = 0; j < 3; j++) {
            saxpy_case(k, sizes[i], globals[j], NULL);
            for (size_t l = 0; l < sizeof locals / sizeof locals[0]; l++)
                if (n <= 5000 || locals[l] >= 32)
                    saxpy_case(k, sizes[i], globals[j], &locals[l]);
        }
    }
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* Local memory sized at launch, with barriers: each group reverses its part and sums it. */
static const char *local_arg_src =
    "GP_KERNEL void reverse_sum(GP_GLOBAL const uint *in, GP_GLOBAL uint *out, GP_GLOBAL uint *sums,\n"
    "                           uint n, GP_LOCAL_ARG(uint, tile), GP_LOCAL_ARG(uint, acc))\n"
    "{\n"
    "    GP_LOCAL_BIND(uint, tile);\n"
    "    GP_LOCAL_BIND(uint, acc);\n"
    "    uint i = gp_global_id(0), t = gp_local_id(0), ls = gp_local_size(0);\n"
    "    tile[t] = i < n ? in[i] : 0u;\n"
    "    acc[t] = tile[t];\n"
    "    gp_barrier();\n"
    "    if (i < n) out[i] = tile[ls - 1u - t];\n"
    "    for (uint s = ls / 2u; s > 0u; s /= 2u) {\n"
    "        if (t < s) acc[t] += acc[t + s];\n"
    "        gp_barrier();\n"
    "    }\n"
    "    if (t == 0u) sums[gp_group_id(0)] = acc[0];\n"
    "}\n";

/* The same sum with a fixed-size GP_LOCAL array. */
static const char *fixed_local_src =
    "GP_KERNEL void block_sum(GP_GLOBAL const uint *in, GP_GLOBAL uint *sums, uint n)\n"
    "{\n"
    "    GP_LOCAL uint tile[256];\n"
    "    uint i = gp_global_id(0), t = gp_local_id(0);\n"
    "    tile[t] = i < n ? in[i] : 0u;\n"
    "    gp_barrier();\n"
    "    for (uint s = gp_local_size(0) / 2u; s > 0u; s /= 2u) {\n"
    "        if (t < s) tile[t] += tile[t + s];\n"
    "        gp_barrier();\n"
    "    }\n"
    "    if (t == 0u) sums[gp_group_id(0)] = tile[0];\n"
    "}\n";

static void local_memory(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    const size_t g = tst_group_size(), groups = (n + g - 1) / g;
    uint32_t *in = tst_malloc(n * 4), *out = tst_malloc(n * 4), *sums = tst_malloc(groups * 4);
    uint32_t *ref_out = tst_malloc(n * 4), *ref_sums = tst_malloc(groups * 4);
    uint64_t st = 99;
    for (size_t i = 0; i < n; i++)
        in[i] = tst_random_u32(&st) % 100000;
    memset(ref_sums, 0, groups * 4);
    for (size_t i = 0; i < n; i++) {
        size_t base = i / g * g, mirror = base + (g - 1 - i % g);
        ref_out[i] = mirror < n ? in[mirror] : 0;
        ref_sums[i / g] += in[i];
    }
    gp_buffer *bin = tst_buffer(GP_MEMORY_DEVICE, n * 4), *bout = tst_buffer(GP_MEMORY_DEVICE, n * 4);
    gp_buffer *bsums = tst_buffer(GP_MEMORY_DEVICE, groups * 4);
    GP_OK(gp_buffer_write(NULL, bin, 0, in, n * 4));

    gp_program *p = tst_program(local_arg_src, NULL);
    gp_kernel *k = tst_kernel(p, "reverse_sum");
    size_t global = n;
    gp_arg args[] = {GP_BUFFER(bin), GP_BUFFER(bout), GP_BUFFER(bsums), GP_VALUE(n), GP_LOCAL_BYTES(g * 4),
                     GP_LOCAL_BYTES(g * 4)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &g, 6, args));
    GP_OK(gp_buffer_read(NULL, bout, 0, out, n * 4));
    GP_OK(gp_buffer_read(NULL, bsums, 0, sums, groups * 4));
    assert_memory_equal(out, ref_out, n * 4);
    assert_memory_equal(sums, ref_sums, groups * 4);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));

    memset(sums, 0, groups * 4);
    GP_OK(gp_buffer_write(NULL, bsums, 0, sums, groups * 4));
    p = tst_program(fixed_local_src, NULL);
    k = tst_kernel(p, "block_sum");
    gp_arg args2[] = {GP_BUFFER(bin), GP_BUFFER(bsums), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &g, 3, args2));
    GP_OK(gp_buffer_read(NULL, bsums, 0, sums, groups * 4));
    assert_memory_equal(sums, ref_sums, groups * 4);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));

    GP_OK(gp_buffer_destroy(bin));
    GP_OK(gp_buffer_destroy(bout));
    GP_OK(gp_buffer_destroy(bsums));
    free(in);
    free(out);
    free(sums);
    free(ref_out);
    free(ref_sums);
}

static const char *scale_src =
    "#ifndef SCALE\n#define SCALE 1\n#endif\n"
    "#ifndef OFFSET\n#define OFFSET 0\n#endif\n"
    "GP_KERNEL void scale(GP_GLOBAL uint *v, uint n)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < n) v[i] = v[i] * SCALE + OFFSET;\n"
    "}\n";

static void run_scale(const char *options, uint32_t mul, uint32_t add)
{
    enum { N = 100 };
    uint32_t v[N], ref[N];
    for (uint32_t i = 0; i < N; i++) {
        v[i] = i * 3 + 1;
        ref[i] = v[i] * mul + add;
    }
    gp_program *p = tst_program(scale_src, options);
    gp_kernel *k = tst_kernel(p, "scale");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    uint32_t n = N;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, args));
    GP_OK(gp_buffer_read(NULL, b, 0, v, sizeof v));
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
    assert_memory_equal(v, ref, sizeof v);
}

static void build_options(void **state)
{
    (void)state;
    run_scale(NULL, 1, 0);
    run_scale("", 1, 0);
    run_scale("-DSCALE=3", 3, 0);
    run_scale("-DSCALE=3 -DOFFSET=5", 3, 5);
    run_scale("-DOFFSET=9", 1, 9);
    run_scale("-DSCALE", 1, 0); /* -DNAME defines NAME as 1 */
}

/* Every single-letter macro name and the usual longer ones, given as options at once: they must
 * reach the caller's source and nothing before it (the prelude, the vendor's own headers). */
static void user_macros_stay_out_of_headers(void **state)
{
    (void)state;
    static const char *const longer[] = {"N", "K", "M", "TYPE", "REAL", "VEC", "BLOCK", "WIDTH"};
    char options[1024] = "-DT=float", sum[1024] = "0";
    size_t o = strlen(options), u = strlen(sum);
    uint32_t want = 0, value = 1;
    for (int c = 0; c < 52; c++) {
        char name = (char)(c < 26 ? 'A' + c : 'a' + c - 26);
        if (name == 'T' || name == 'N' || name == 'K' || name == 'M')
            continue;
        o += (size_t)snprintf(options + o, sizeof options - o, " -D%c=%u", name, value);
        u += (size_t)snprintf(sum + u, sizeof sum - u, " + %c", name);
        want += value++;
    }
    for (size_t i = 0; i < sizeof longer / sizeof longer[0]; i++) {
        if (strcmp(longer[i], "TYPE") == 0 || strcmp(longer[i], "REAL") == 0)
            o += (size_t)snprintf(options + o, sizeof options - o, " -D%s=double", longer[i]);
        else {
            o += (size_t)snprintf(options + o, sizeof options - o, " -D%s=%u", longer[i], value);
            u += (size_t)snprintf(sum + u, sizeof sum - u, " + %s", longer[i]);
            want += value++;
        }
    }
    char src[2048];
    snprintf(src, sizeof src,
             "GP_KERNEL void gp_macros(GP_GLOBAL uint *gp_out, GP_GLOBAL T *gp_f)\n"
             "{\n"
             "    gp_out[0] = (uint)(%s);\n"
             "    gp_f[0] = (T)(sizeof(TYPE) + sizeof(REAL)) + (T)0.5f;\n"
             "}\n",
             sum);
    gp_program *p = tst_program(src, options);
    gp_kernel *k = tst_kernel(p, "gp_macros");
    gp_buffer *out = tst_buffer(GP_MEMORY_DEVICE, 4), *f = tst_buffer(GP_MEMORY_DEVICE, 4);
    size_t one = 1;
    gp_arg args[] = {GP_BUFFER(out), GP_BUFFER(f)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &one, &one, 2, args));
    uint32_t got = 0;
    float fgot = 0;
    GP_OK(gp_buffer_read(NULL, out, 0, &got, 4));
    GP_OK(gp_buffer_read(NULL, f, 0, &fgot, 4));
    assert_int_equal(got, want);
    assert_true(fgot == 16.5f);
    GP_OK(gp_buffer_destroy(out));
    GP_OK(gp_buffer_destroy(f));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* What the FILL kernels below leave in b: item t's sum of 3 i + 1 over the reversed words it read. */
static void check_fill(gp_buffer *b, size_t items, uint32_t words)
{
    uint32_t sums[1024];
    GP_OK(gp_buffer_read(NULL, b, 0, sums, items * 4));
    for (uint32_t t = 0; t < items; t++) {
        uint32_t want = 0;
        for (uint32_t i = t; i < words; i += (uint32_t)items) want += 3 * (words - 1 - i) + 1;
        assert_int_equal(sums[t], want);
    }
}

/* Local memory beyond the device's, in one argument, in several together, or with the kernel's
 * own arrays, is refused at launch; the device then still works (pocl used to abort at the next
 * synchronize). Nearly all of it (up to 256 KiB) in one argument works: on CUDA that is past
 * the 48 KiB a kernel has without the plugin's opt-in; and nearly all of local_mem_own_bytes
 * as the kernel's own array. */
static void local_memory_limits(void **state)
{
    (void)state;
    static const char *src =
        "GP_KERNEL void fixed_and_arg(GP_GLOBAL uint *out, GP_LOCAL_ARG(uint, extra))\n"
        "{\n"
        "    GP_LOCAL uint own[256];\n"
        "    GP_LOCAL_BIND(uint, extra);\n"
        "    uint t = gp_local_id(0);\n"
        "    own[t] = t;\n"
        "    extra[t] = 2u * t;\n"
        "    gp_barrier();\n"
        "    out[gp_global_id(0)] = own[gp_local_size(0) - 1u - t] + extra[t];\n"
        "}\n"
        "#define FILL(all, words)                                                          \\\n"
        "    uint t = gp_local_id(0), s = 0u;                                              \\\n"
        "    for (uint i = t; i < words; i += gp_local_size(0)) all[i] = 3u * i + 1u;     \\\n"
        "    gp_barrier();                                                                 \\\n"
        "    for (uint i = t; i < words; i += gp_local_size(0)) s += all[words - 1u - i]; \\\n"
        "    out[t] = s;\n"
        "GP_KERNEL void fill_all(GP_GLOBAL uint *out, uint words, GP_LOCAL_ARG(uint, all))\n"
        "{\n"
        "    GP_LOCAL_BIND(uint, all);\n"
        "    FILL(all, words)\n"
        "}\n"
        "#ifdef OWN_WORDS\n"
        "GP_KERNEL void fill_own(GP_GLOBAL uint *out)\n"
        "{\n"
        "    GP_LOCAL uint own[OWN_WORDS];\n"
        "    FILL(own, OWN_WORDS)\n"
        "}\n"
        "#endif\n";
    const size_t limit = (size_t)tst_info.local_mem_bytes, g = tst_group_size();
    gp_program *p = tst_program(local_arg_src, NULL);
    gp_kernel *k = tst_kernel(p, "reverse_sum");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 4096);
    uint32_t n = 64;
    size_t global = 64;
    const size_t too_big[][2] = {{limit + 1, 4}, {(size_t)1 << 40, 4}, {limit / 2 + 64, limit / 2 + 64}, {SIZE_MAX, 4}};
    for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
        gp_arg args[] = {GP_BUFFER(b), GP_BUFFER(b), GP_BUFFER(b), GP_VALUE(n), GP_LOCAL_BYTES(too_big[i][0]),
                         GP_LOCAL_BYTES(too_big[i][1])};
        GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, &g, 6, args), GP_ERROR_INVALID_LAUNCH);
    }
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));

    p = tst_program(src, NULL);
    k = tst_kernel(p, "fixed_and_arg");
    gp_arg over[] = {GP_BUFFER(b), GP_LOCAL_BYTES(limit - 512)}; /* fits alone, not beside own[256] */
    /* pocl from 5.0 reports no local memory for a kernel (CL_KERNEL_LOCAL_MEM_SIZE 0 for this one
     * on pocl 5.0 on a Xeon), so the kernel's own array cannot be counted there, and the launch
     * runs: its local memory is the host's. */
    if (strstr(tst_info.runtime_version, "PoCL") && atoi(tst_info.driver_version) >= 5) {
        gp_status st = gp_kernel_launch(NULL, k, 1, &global, &g, 2, over);
        assert_true(st == GP_SUCCESS || st == GP_ERROR_INVALID_LAUNCH);
    } else {
        GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, &g, 2, over), GP_ERROR_INVALID_LAUNCH);
    }
    GP_OK(gp_device_synchronize(tst_dev));
    gp_arg fits[] = {GP_BUFFER(b), GP_LOCAL_BYTES(g * 4)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &g, 2, fits));
    uint32_t got[64];
    GP_OK(gp_buffer_read(NULL, b, 0, got, sizeof got));
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t t = i % (uint32_t)g;
        assert_int_equal(got[i], ((uint32_t)g - 1 - t) + 2 * t);
    }
    GP_OK(gp_kernel_destroy(k));

    k = tst_kernel(p, "fill_all");
    /* less 1 KiB that a driver may count as the kernel's own (NVIDIA's OpenCL counts 1 byte) */
    uint32_t words = (uint32_t)(((limit < 262144 ? limit : 262144) - 1024) / 4);
    size_t items = g < 1024 ? g : 1024;
    gp_arg all[] = {GP_BUFFER(b), GP_VALUE(words), GP_LOCAL_BYTES((size_t)words * 4)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &items, &items, 3, all));
    check_fill(b, items, words);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));

    /* Nearly all of local_mem_own_bytes as the kernel's own array compiles and runs. */
    const size_t own = (size_t)tst_info.local_mem_own_bytes;
    words = (uint32_t)(((own < 262144 ? own : 262144) - 1024) / 4);
    char options[32];
    snprintf(options, sizeof options, "-DOWN_WORDS=%u", (unsigned)words);
    p = tst_program(src, options);
    k = tst_kernel(p, "fill_own");
    gp_arg out_only[] = {GP_BUFFER(b)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &items, &items, 1, out_only));
    check_fill(b, items, words);
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

static void second_create_from_cache(void **state)
{
    (void)state;
    gp_program *p1 = tst_program(saxpy_src, "-DUNUSED_CACHE_PROBE=1");
    gp_program *p2 = tst_program(saxpy_src, "-DUNUSED_CACHE_PROBE=1");
    gp_program_info info;
    memset(&info, 0xff, sizeof info);
    GP_OK(gp_program_get_info(p2, &info));
    assert_int_equal(info.from_cache, 1);
    assert_true(info.binary_bytes > 0);
    assert_true(info.cache_on_disk == 0 || info.cache_on_disk == 1);
    gp_kernel *k = tst_kernel(p2, "saxpy");
    saxpy_case(k, 257, 0, NULL);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p1));
    GP_OK(gp_program_destroy(p2));
}

/* Several kernels of one program, each used after the others were made. */
static const char *two_kernels_src =
    "GP_FUNC uint twice(uint v) { return v + v; }\n"
    "GP_KERNEL void k_twice(GP_GLOBAL uint *v, uint n) { uint i = gp_global_id(0); if (i < n) v[i] = twice(v[i]); }\n"
    "GP_KERNEL void k_inc(GP_GLOBAL uint *v, uint n) { uint i = gp_global_id(0); if (i < n) v[i] += 1u; }\n";

static void two_kernels(void **state)
{
    (void)state;
    enum { N = 77 };
    uint32_t v[N], ref[N];
    for (uint32_t i = 0; i < N; i++) {
        v[i] = i * 5;
        ref[i] = (i * 5) * 2 + 1;
    }
    gp_program *p = tst_program(two_kernels_src, NULL);
    gp_kernel *kt = tst_kernel(p, "k_twice"), *ki = tst_kernel(p, "k_inc");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    uint32_t n = N;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, kt, 1, &global, NULL, 2, args));
    GP_OK(gp_kernel_launch(NULL, ki, 1, &global, NULL, 2, args));
    GP_OK(gp_buffer_read(NULL, b, 0, v, sizeof v));
    assert_memory_equal(v, ref, sizeof v);
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(kt));
    GP_OK(gp_kernel_destroy(ki));
    GP_OK(gp_program_destroy(p));
}

/* Where the device says it has fp64, doubles carry more than float's 24 bits. */
static const char *fp64_src =
    "#ifdef GP_HAS_FP64\n"
    "GP_KERNEL void square(GP_GLOBAL const uint *in, GP_GLOBAL ulong *out, uint n)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < n) { double d = (double)in[i]; out[i] = (ulong)(d * d); }\n"
    "}\n"
    "#endif\n";

static void fp64(void **state)
{
    (void)state;
    if (!tst_info.fp64) {
        print_message("skipping: the device has no fp64\n");
        skip();
    }
    enum { N = 300 };
    uint32_t in[N];
    uint64_t out[N], ref[N];
    for (uint32_t i = 0; i < N; i++) {
        in[i] = 50000000u + i * 12345u; /* squares need ~52 bits */
        ref[i] = (uint64_t)in[i] * in[i];
    }
    gp_program *p = tst_program(fp64_src, NULL);
    gp_kernel *k = tst_kernel(p, "square");
    gp_buffer *bi = tst_buffer(GP_MEMORY_DEVICE, sizeof in), *bo = tst_buffer(GP_MEMORY_DEVICE, sizeof out);
    GP_OK(gp_buffer_write(NULL, bi, 0, in, sizeof in));
    uint32_t n = N;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(bi), GP_BUFFER(bo), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, args));
    GP_OK(gp_buffer_read(NULL, bo, 0, out, sizeof out));
    assert_memory_equal(out, ref, sizeof out);
    GP_OK(gp_buffer_destroy(bi));
    GP_OK(gp_buffer_destroy(bo));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

const struct CMUnitTest tst_kernel_tests[] = {
    cmocka_unit_test(saxpy_sizes),
    cmocka_unit_test(grid_loop_sizes),
    cmocka_unit_test(local_memory),
    cmocka_unit_test(build_options),
    cmocka_unit_test(user_macros_stay_out_of_headers),
    cmocka_unit_test(local_memory_limits),
    cmocka_unit_test(second_create_from_cache),
    cmocka_unit_test(two_kernels),
    cmocka_unit_test(fp64),
};
const size_t tst_kernel_tests_count = sizeof tst_kernel_tests / sizeof tst_kernel_tests[0];
