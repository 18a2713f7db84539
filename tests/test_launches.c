/* Proves 2D and 3D launches cover exactly their grid, scalar and struct arguments arrive intact,
 * a kernel tells its parameters as its source declares them and refuses arguments of the wrong
 * kind or type, objects destroyed while queued work still uses them last until it is done, and
 * one-dimensional launches run as fewer blocks (CUDA) keep every work-item's ids. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *grid_src =
    "GP_KERNEL void index2d(GP_GLOBAL uint *out, GP_GLOBAL uint *meta, uint w, uint h)\n"
    "{\n"
    "    uint x = gp_global_id(0), y = gp_global_id(1);\n"
    "    if (x == 0u && y == 0u) {\n"
    "        meta[0] = gp_local_size(0); meta[1] = gp_local_size(1);\n"
    "        meta[2] = gp_num_groups(0); meta[3] = gp_num_groups(1);\n"
    "        meta[4] = gp_global_size(0); meta[5] = gp_global_size(1);\n"
    "    }\n"
    "    if (x < w && y < h) out[y * w + x] = y * 1000u + x;\n"
    "}\n"
    "GP_KERNEL void index3d(GP_GLOBAL uint *out, uint w, uint h, uint d)\n"
    "{\n"
    "    uint x = gp_global_id(0), y = gp_global_id(1), z = gp_global_id(2);\n"
    "    if (x < w && y < h && z < d) out[(z * h + y) * w + x] = x + 100u * y + 10000u * z + 7u;\n"
    "}\n";

enum { SENTINEL = 0xdeadbeefu, PAD = 16 };

/* A local shape fits when each side and the product are within the device's limits. */
static int local_fits(unsigned dims, const size_t *local)
{
    size_t product = 1;
    for (unsigned d = 0; d < dims; d++) {
        if (local[d] > tst_info.max_work_item_sizes[d])
            return 0;
        product *= local[d];
    }
    return product <= tst_info.max_work_group_size;
}

static void launch_2d(gp_kernel *k, const size_t *local)
{
    const uint32_t w = 37, h = 19;
    const size_t n = (size_t)w * h + PAD;
    uint32_t *out = tst_malloc(n * 4), meta[6], fill = SENTINEL;
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, n * 4), *bm = tst_buffer(GP_MEMORY_DEVICE, sizeof meta);
    GP_OK(gp_buffer_fill(NULL, b, 0, n * 4, &fill, 4));
    size_t global[2] = {w, h};
    gp_arg args[] = {GP_BUFFER(b), GP_BUFFER(bm), GP_VALUE(w), GP_VALUE(h)};
    GP_OK(gp_kernel_launch(NULL, k, 2, global, local, 4, args));
    GP_OK(gp_buffer_read(NULL, b, 0, out, n * 4));
    GP_OK(gp_buffer_read(NULL, bm, 0, meta, sizeof meta));
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_buffer_destroy(bm));
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            if (out[y * w + x] != y * 1000 + x)
                fail_msg("2D (%u,%u) = 0x%x", x, y, out[y * w + x]);
    for (size_t i = (size_t)w * h; i < n; i++)
        assert_int_equal(out[i], SENTINEL);
    free(out);
    for (int d = 0; d < 2; d++) {
        size_t want = global[d];
        if (local) {
            assert_int_equal(meta[d], local[d]);
            assert_int_equal(meta[2 + d], (want + local[d] - 1) / local[d]);
        }
        assert_int_equal(meta[4 + d], (size_t)meta[d] * meta[2 + d]);
        assert_true(meta[4 + d] >= want);
        assert_true(meta[4 + d] - want < meta[d]); /* rounded up by less than one group */
    }
}

static void launch_3d(gp_kernel *k, const size_t *local)
{
    const uint32_t w = 7, h = 5, d = 3;
    const size_t n = (size_t)w * h * d + PAD;
    uint32_t *out = tst_malloc(n * 4), fill = SENTINEL;
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, n * 4);
    GP_OK(gp_buffer_fill(NULL, b, 0, n * 4, &fill, 4));
    size_t global[3] = {w, h, d};
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(w), GP_VALUE(h), GP_VALUE(d)};
    GP_OK(gp_kernel_launch(NULL, k, 3, global, local, 4, args));
    GP_OK(gp_buffer_read(NULL, b, 0, out, n * 4));
    GP_OK(gp_buffer_destroy(b));
    for (uint32_t z = 0; z < d; z++)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                if (out[(z * h + y) * w + x] != x + 100 * y + 10000 * z + 7)
                    fail_msg("3D (%u,%u,%u) = 0x%x", x, y, z, out[(z * h + y) * w + x]);
    for (size_t i = (size_t)w * h * d; i < n; i++)
        assert_int_equal(out[i], SENTINEL);
    free(out);
}

static void grids(void **state)
{
    (void)state;
    gp_program *p = tst_program(grid_src, NULL);
    gp_kernel *k2 = tst_kernel(p, "index2d"), *k3 = tst_kernel(p, "index3d");
    static const size_t l2[][2] = {{1, 1}, {8, 4}, {16, 2}, {37, 1}, {3, 5}};
    static const size_t l3[][3] = {{1, 1, 1}, {2, 2, 2}, {4, 1, 1}, {1, 2, 3}, {7, 5, 1}};
    launch_2d(k2, NULL);
    for (size_t i = 0; i < sizeof l2 / sizeof l2[0]; i++)
        if (local_fits(2, l2[i]))
            launch_2d(k2, l2[i]);
    launch_3d(k3, NULL);
    for (size_t i = 0; i < sizeof l3 / sizeof l3[0]; i++)
        if (local_fits(3, l3[i]))
            launch_3d(k3, l3[i]);
    GP_OK(gp_kernel_destroy(k2));
    GP_OK(gp_kernel_destroy(k3));
    GP_OK(gp_program_destroy(p));
}

static const char *args_src =
    "typedef struct pair { uint a; uint b; } pair;\n"
    "GP_KERNEL void mixed(GP_GLOBAL ulong *out, uint a, ulong b, float c, int d, pair p, uchar e)\n"
    "{\n"
    "    if (gp_global_id(0) != 0u) return;\n"
    "    out[0] = a; out[1] = b; out[2] = (ulong)(c * 4.0f);\n"
    "    out[3] = (ulong)(d + 1000000); out[4] = p.a; out[5] = p.b; out[6] = e;\n"
    "}\n";

/* Arguments of sizes 1, 4 and 8 and a struct, interleaved, each land in its own parameter. */
static void scalar_and_struct_args(void **state)
{
    (void)state;
    struct pair {
        uint32_t a, b;
    } pr = {0x01020304u, 0xa0b0c0d0u};
    uint32_t a = 0xfeedf00du;
    uint64_t b = 0x1122334455667788ull, out[7], ref[7];
    float c = 1234.25f;
    int32_t d = -999;
    unsigned char e = 0xab;
    ref[0] = a;
    ref[1] = b;
    ref[2] = 4937;
    ref[3] = (uint64_t)(d + 1000000);
    ref[4] = pr.a;
    ref[5] = pr.b;
    ref[6] = e;
    gp_program *p = tst_program(args_src, NULL);
    gp_kernel *k = tst_kernel(p, "mixed");
    gp_buffer *bo = tst_buffer(GP_MEMORY_DEVICE, sizeof out);
    size_t global = 5;
    gp_arg args[] = {GP_BUFFER(bo), GP_VALUE(a), GP_VALUE(b), GP_VALUE(c), GP_VALUE(d), GP_VALUE(pr), GP_VALUE(e)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 7, args));
    GP_OK(gp_buffer_read(NULL, bo, 0, out, sizeof out));
    assert_memory_equal(out, ref, sizeof out);
    GP_OK(gp_buffer_destroy(bo));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* A zero global size launches nothing and is not an error. */
static void empty_launch(void **state)
{
    (void)state;
    gp_program *p = tst_program(grid_src, NULL);
    gp_kernel *k = tst_kernel(p, "index3d");
    uint32_t fill = SENTINEL, out[PAD], ref[PAD];
    for (size_t i = 0; i < PAD; i++)
        ref[i] = SENTINEL;
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof out);
    GP_OK(gp_buffer_fill(NULL, b, 0, sizeof out, &fill, 4));
    uint32_t w = 1, h = 1, d = 1;
    size_t global[3] = {1, 0, 1};
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(w), GP_VALUE(h), GP_VALUE(d)};
    GP_OK(gp_kernel_launch(NULL, k, 3, global, NULL, 4, args));
    GP_OK(gp_buffer_read(NULL, b, 0, out, sizeof out));
    assert_memory_equal(out, ref, sizeof out);
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* The work-group a one-dimensional launch takes when it names none (docs/kernel-dialect.md's
 * Launch shape): 256 where the device allows; on a CPU up to 4096, while four groups a compute
 * unit remain (never below 256), so 2^22 work-items take the largest the device allows on up to
 * 256 compute units. Every launch covers its size. */
static void default_shape(void **state)
{
    (void)state;
    static const char *src = "GP_KERNEL void shape(GP_GLOBAL uint *out)\n"
                             "{\n"
                             "    if (gp_global_id(0) == 0u) { out[0] = gp_local_size(0); out[1] = gp_num_groups(0); }\n"
                             "}\n";
    gp_program *p = tst_program(src, NULL);
    gp_kernel *k = tst_kernel(p, "shape");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 8);
    gp_arg args[] = {GP_BUFFER(b)};
    size_t limit = tst_info.max_work_group_size < tst_info.max_work_item_sizes[0] ? tst_info.max_work_group_size
                                                                                   : tst_info.max_work_item_sizes[0];
    size_t base = limit < 256 ? limit : 256, top = limit < 4096 ? limit : 4096, units = tst_info.compute_units;
    const size_t sizes[] = {1000, 16384, 65536, (size_t)1 << 22};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t got[2];
        GP_OK(gp_kernel_launch(NULL, k, 1, &sizes[i], NULL, 1, args));
        GP_OK(gp_buffer_read(NULL, b, 0, got, sizeof got));
        size_t local = got[0], groups = got[1];
        assert_true(local >= 1 && (local & (local - 1)) == 0 && local <= limit);
        assert_true(groups * local >= sizes[i] && (groups - 1) * local < sizes[i]);
        if (tst_info.type != GP_DEVICE_CPU) {
            assert_int_equal(local, base);
            continue;
        }
        assert_true(local >= base && local <= top);
        if (local > 256) assert_true(sizes[i] / local >= 4 * units);
        if (local < top && local >= 256) assert_true(sizes[i] / (2 * local) < 4 * units);
        if (i == 3 && units <= 256) assert_int_equal(local, top);
    }
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* Parameters read from the source: macros of the options and of the source resolved, typedefs
 * followed, local memory, structs (no gp_type) and every scalar type. */
static const char *params_src =
    "#define REAL float\n"
    "typedef unsigned int count_t;\n"
    "typedef struct pair { int a; int b; } pair;\n"
    "GP_KERNEL void many(GP_GLOBAL const REAL *x, GP_GLOBAL T *GP_RESTRICT y, count_t n, const float a,\n"
    "                   long l, ulong u, int i, GP_LOCAL_ARG(REAL, tile), pair p, uchar c)\n"
    "{\n"
    "    GP_LOCAL_BIND(REAL, tile);\n"
    "    uint k = gp_global_id(0);\n"
    "    tile[gp_local_id(0)] = x[k];\n"
    "    gp_barrier();\n"
    "    if (k < n) y[k] = (T)(tile[gp_local_id(0)] * a) + (T)(l + (long)u + i + p.a + p.b + c);\n"
    "}\n";

static void parameters(void **state)
{
    (void)state;
    static const struct {
        gp_arg_kind kind;
        gp_type type;
        size_t size;
        const char *type_name, *name;
    } want[] = {{GP_ARG_BUFFER, GP_F32, 0, "float *", "x"},   {GP_ARG_BUFFER, GP_I32, 0, "int *", "y"},
                {GP_ARG_VALUE, GP_U32, 4, "unsigned int", "n"}, {GP_ARG_VALUE, GP_F32, 4, "float", "a"},
                {GP_ARG_VALUE, GP_I64, 8, "long", "l"},       {GP_ARG_VALUE, GP_U64, 8, "ulong", "u"},
                {GP_ARG_VALUE, GP_I32, 4, "int", "i"},        {GP_ARG_LOCAL, GP_F32, 0, "float", "tile"},
                {GP_ARG_VALUE, GP_TYPE_NONE, 0, "pair", "p"}, {GP_ARG_VALUE, GP_TYPE_NONE, 1, "uchar", "c"}};
    gp_program *p = tst_program(params_src, "-DT=int");
    gp_kernel *k = tst_kernel(p, "many");
    size_t n = 0;
    GP_OK(gp_kernel_get_param_count(k, &n));
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        gp_kernel_param got;
        GP_OK(gp_kernel_get_param(k, i, &got));
        if (got.kind != want[i].kind || got.type != want[i].type || got.size != want[i].size ||
            strcmp(got.type_name, want[i].type_name) || strcmp(got.name, want[i].name))
            fail_msg("parameter %zu: kind %d type %d size %zu '%s' '%s', expected %d %d %zu '%s' '%s'", i, got.kind,
                     got.type, got.size, got.type_name, got.name, want[i].kind, want[i].type, want[i].size,
                     want[i].type_name, want[i].name);
    }
    gp_kernel_param none;
    GP_EXPECT(gp_kernel_get_param(k, n, &none), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_kernel_get_param(NULL, 0, &none), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_kernel_get_param_count(k, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

static const char *scale_src = "GP_KERNEL void scale(GP_GLOBAL float *x, float a, uint n)\n"
                               "{ uint i = gp_global_id(0); if (i < n) x[i] *= a; }\n";

/* A value of another type than the parameter's, or of another kind, is refused before it runs;
 * the right type, from GP_VALUE or GP_VALUE_AS, runs. */
static void typed_values(void **state)
{
    (void)state;
    gp_program *p = tst_program(scale_src, NULL);
    gp_kernel *k = tst_kernel(p, "scale");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 64 * 4);
    float v[64], back[64], two = 2.0f;
    for (int i = 0; i < 64; i++) v[i] = (float)i;
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    size_t global = 64;
    int32_t wrong_a = 2;
    uint32_t n = 64;
    float wrong_n = 64.0f;
    gp_arg int_for_float[] = {GP_BUFFER(b), GP_VALUE(wrong_a), GP_VALUE(n)};
    gp_arg float_for_uint[] = {GP_BUFFER(b), GP_VALUE(two), GP_VALUE(wrong_n)};
    gp_arg value_for_buffer[] = {GP_VALUE(n), GP_VALUE(two), GP_VALUE(n)};
    gp_arg buffer_for_value[] = {GP_BUFFER(b), GP_BUFFER(b), GP_VALUE(n)};
    gp_arg named[] = {GP_BUFFER(b), GP_VALUE_AS(&wrong_a, GP_I32), GP_VALUE(n)};
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, int_for_float), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, float_for_uint), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, value_for_buffer), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, buffer_for_value), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, named), GP_ERROR_INVALID_KERNEL_ARGS);
    tst_check_buffer(b, v, sizeof v); /* nothing ran */
    gp_arg good[] = {GP_BUFFER(b), GP_VALUE(two), GP_VALUE_AS(&n, GP_U32)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, good));
    GP_OK(gp_buffer_read(NULL, b, 0, back, sizeof back));
    for (int i = 0; i < 64; i++) assert_true(back[i] == 2.0f * v[i]);
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* Long enough per item that the launch is still running when the host returns. */
static const char *slow_src =
    "GP_KERNEL void slow(GP_GLOBAL const uint *in, GP_GLOBAL uint *out, uint n, uint rounds)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    uint v = in[i];\n"
    "    for (uint r = 0; r < rounds; r++) v = v * 1664525u + 1013904223u;\n"
    "    out[i] = v;\n"
    "}\n";

/* The input buffer, the program and the kernel are destroyed right after the launch that uses
 * them is queued, and the stream too: the work must still see them whole. */
static void destroyed_while_queued(void **state)
{
    (void)state;
    enum { N = 1 << 18, ROUNDS = 2000 };
    uint32_t *v = tst_malloc(N * 4), *got = tst_malloc(N * 4);
    for (uint32_t i = 0; i < N; i++) v[i] = i * 2654435761u;
    for (int round = 0; round < 3; round++) {
        gp_program *p = tst_program(slow_src, NULL);
        gp_kernel *k = tst_kernel(p, "slow");
        gp_stream *s = NULL;
        gp_buffer *in = tst_buffer(GP_MEMORY_DEVICE, N * 4), *out = tst_buffer(GP_MEMORY_DEVICE, N * 4);
        gp_event *e = NULL;
        GP_OK(gp_stream_create(tst_dev, &s));
        GP_OK(gp_event_create(tst_dev, &e));
        GP_OK(gp_buffer_write(s, in, 0, v, N * 4));
        uint32_t n = N, rounds = ROUNDS;
        size_t global = N;
        gp_arg args[] = {GP_BUFFER(in), GP_BUFFER(out), GP_VALUE(n), GP_VALUE(rounds)};
        GP_OK(gp_kernel_launch(s, k, 1, &global, NULL, 4, args));
        GP_OK(gp_event_record(e, s));
        if (round == 0) { /* the order of the destroys varies with the round */
            GP_OK(gp_buffer_destroy(in));
            GP_OK(gp_kernel_destroy(k));
            GP_OK(gp_program_destroy(p));
            GP_OK(gp_event_destroy(e));
        } else {
            GP_OK(gp_program_destroy(p));
            GP_OK(gp_event_destroy(e));
            GP_OK(gp_kernel_destroy(k));
            GP_OK(gp_buffer_destroy(in));
        }
        if (round == 2) GP_OK(gp_stream_destroy(s)); /* waits, then out is read on the default stream */
        GP_OK(gp_buffer_read(round == 2 ? NULL : s, out, 0, got, N * 4));
        for (uint32_t i = 0; i < N; i++) {
            uint32_t w = v[i];
            for (int r = 0; r < ROUNDS; r++) w = w * 1664525u + 1013904223u;
            if (got[i] != w) fail_msg("round %d, element %u: 0x%08x, expected 0x%08x", round, i, got[i], w);
        }
        GP_OK(gp_buffer_destroy(out));
        if (round != 2) GP_OK(gp_stream_destroy(s));
    }
    free(v);
    free(got);
}

/* One-dimensional launches that CUDA runs as fewer blocks, each taking several work-groups in
 * turn (GPUPORT_COARSEN): every work-item must still see the ids of the launch asked for, a
 * return must end only its own work-group, and a grid loop must still stride by the launch's
 * size. Checked against the ids computed here, with the setting forced to 3 (groups that do
 * not divide evenly), 4, auto and off, on launches large enough for auto to take effect on any
 * GPU here; elsewhere the same launches check the plain path. Other values must be refused. */
static const char *ids_src =
    "GP_KERNEL void ids1d(GP_GLOBAL uint *out, uint n)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    out[4u * i] = gp_group_id(0);\n"
    "    out[4u * i + 1u] = gp_num_groups(0);\n"
    "    out[4u * i + 2u] = gp_global_size(0);\n"
    "    if (gp_local_id(0) % 2u) return;\n"
    "    out[4u * i + 3u] = gp_local_id(0) + 1000u * gp_local_size(0);\n"
    "}\n"
    "GP_KERNEL void strided(GP_GLOBAL uint *out, uint n)\n"
    "{\n"
    "    GP_FOR(i, n) out[i] = 3u * i + 1u;\n"
    "}\n";

static void coarsened_ids(void **state)
{
    (void)state;
    char *saved = tst_save_env("GPUPORT_COARSEN");
    static const char *const settings[] = {"3", "4", "auto", "off"};
    const size_t local = 64 <= tst_info.max_work_group_size ? 64 : tst_info.max_work_group_size;
    for (size_t s = 0; s < sizeof settings / sizeof settings[0]; s++) {
        tst_set_env("GPUPORT_COARSEN", settings[s]);
        gp_program *p = tst_program(ids_src, NULL);
        gp_kernel *ids = tst_kernel(p, "ids1d"), *strided = tst_kernel(p, "strided");
        tst_set_env("GPUPORT_COARSEN", NULL);
        /* 1 group; 38 (the last block of three or four groups short); 9000 groups, past what auto
         * needs (32 groups per multiprocessor of the largest GPUs, twice over) */
        const uint32_t sizes[] = {5, (uint32_t)(37 * local + 5), (uint32_t)(9000 * local - 3)};
        for (size_t c = 0; c < 3; c++) {
            const uint32_t n = sizes[c];
            const size_t global = (size_t)n + 2 * local, groups = (global + local - 1) / local;
            uint32_t *out = tst_malloc((size_t)n * 16), fill = SENTINEL;
            gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, (size_t)n * 16);
            GP_OK(gp_buffer_fill(NULL, b, 0, (size_t)n * 16, &fill, 4));
            gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n)};
            GP_OK(gp_kernel_launch(NULL, ids, 1, &global, &local, 2, args));
            GP_OK(gp_buffer_read(NULL, b, 0, out, (size_t)n * 16));
            for (uint32_t i = 0; i < n; i++) {
                const uint32_t l = (uint32_t)(i % local),
                               want[4] = {(uint32_t)(i / local), (uint32_t)groups, (uint32_t)(groups * local),
                                          l % 2 ? SENTINEL : l + 1000u * (uint32_t)local};
                for (int f = 0; f < 4; f++)
                    if (out[4 * i + f] != want[f])
                        fail_msg("GPUPORT_COARSEN=%s, n = %u: work-item %u, field %d is %u, expected %u", settings[s],
                                 n, i, f, out[4 * i + f], want[f]);
            }
            /* A grid loop over 4n elements launched with n work-items. */
            const uint32_t four = 4 * n;
            const size_t items = n;
            GP_OK(gp_buffer_fill(NULL, b, 0, (size_t)four * 4, &fill, 4));
            gp_arg sargs[] = {GP_BUFFER(b), GP_VALUE(four)};
            GP_OK(gp_kernel_launch(NULL, strided, 1, &items, &local, 2, sargs));
            GP_OK(gp_buffer_read(NULL, b, 0, out, (size_t)four * 4));
            for (uint32_t i = 0; i < four; i++)
                if (out[i] != 3 * i + 1)
                    fail_msg("GPUPORT_COARSEN=%s, grid loop over %u with %u work-items: element %u is %u",
                             settings[s], four, n, i, out[i]);
            GP_OK(gp_buffer_destroy(b));
            free(out);
        }
        GP_OK(gp_kernel_destroy(ids));
        GP_OK(gp_kernel_destroy(strided));
        GP_OK(gp_program_destroy(p));
    }
    /* Any other value is refused where the setting applies (CUDA and HIP), with its name. */
    if (strcmp(tst_info.backend, "opencl") != 0) {
        gp_program *p = tst_program(ids_src, NULL);
        gp_kernel *k = NULL;
        static const char *const bad[] = {"0", "65", "8x", "eight", "-2"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            tst_set_env("GPUPORT_COARSEN", bad[i]);
            GP_EXPECT(gp_kernel_create(p, "ids1d", &k), GP_ERROR_INVALID_ARGUMENT);
            tst_set_env("GPUPORT_COARSEN", NULL);
            assert_null(k);
            assert_non_null(strstr(gp_last_error(), "GPUPORT_COARSEN"));
        }
        GP_OK(gp_program_destroy(p));
    }
    tst_restore_env("GPUPORT_COARSEN", saved);
}

const struct CMUnitTest tst_launch_tests[] = {
    cmocka_unit_test(grids),      cmocka_unit_test(scalar_and_struct_args), cmocka_unit_test(empty_launch), cmocka_unit_test(default_shape),
    cmocka_unit_test(parameters), cmocka_unit_test(typed_values),           cmocka_unit_test(destroyed_while_queued),
    cmocka_unit_test(coarsened_ids),
};
const size_t tst_launch_tests_count = sizeof tst_launch_tests / sizeof tst_launch_tests[0];
