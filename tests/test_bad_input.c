/* Proves bad input gets the documented status, a message, and leaves buffers and host memory unchanged. */
#include "common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256 };

typedef struct fixture {
    gp_buffer *b, *b2, *pinned;
    unsigned char ref[N], ref2[N], host[N], host_ref[N];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    tst_random_bytes(f->ref, N, 5);
    tst_random_bytes(f->ref2, N, 6);
    tst_random_bytes(f->host_ref, N, 8);
    memcpy(f->host, f->host_ref, N);
    if (gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, N, &f->b) != GP_SUCCESS ||
        gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, N, &f->b2) != GP_SUCCESS ||
        gp_buffer_create(tst_dev, GP_MEMORY_PINNED, N, &f->pinned) != GP_SUCCESS ||
        gp_buffer_write(NULL, f->b, 0, f->ref, N) != GP_SUCCESS ||
        gp_buffer_write(NULL, f->b2, 0, f->ref2, N) != GP_SUCCESS ||
        gp_buffer_write(NULL, f->pinned, 0, f->ref2, N) != GP_SUCCESS) {
        print_error("fixture: %s\n", gp_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        gp_buffer_destroy(f->b);
        gp_buffer_destroy(f->b2);
        gp_buffer_destroy(f->pinned);
        free(f);
    }
    return 0;
}

/* Nothing the failing calls were given may have changed. */
static void check_unchanged(fixture *f)
{
    GP_OK(gp_device_synchronize(tst_dev));
    tst_check_buffer(f->b, f->ref, N);
    tst_check_buffer(f->b2, f->ref2, N);
    tst_check_buffer(f->pinned, f->ref2, N);
    assert_memory_equal(f->host, f->host_ref, N);
}

static void null_handles_and_pointers(void **state)
{
    fixture *f = *state;
    gp_device_info info;
    gp_buffer *ob = NULL;
    gp_stream *os = NULL, *s = NULL;
    gp_event *oe = NULL, *e = NULL;
    gp_program *op = NULL, *p = NULL;
    gp_kernel *ok = NULL, *k = NULL;
    gp_program_info pinfo;
    gp_device *od = NULL;
    void *host = NULL;
    size_t size = 0, global = 1;
    double ms = 0;
    uint32_t pat = 0x01010101u;
    const char *src = "GP_KERNEL void one(GP_GLOBAL uint *v) { v[0] = 1u; }\n";

    GP_EXPECT(gp_device_get_info(NULL, &info), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_device_get_info(tst_dev, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_device_synchronize(NULL), GP_ERROR_INVALID_HANDLE);

    GP_EXPECT(gp_buffer_create(NULL, GP_MEMORY_DEVICE, 16, &ob), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_create(tst_dev, GP_MEMORY_DEVICE, 16, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_create(tst_dev, (gp_memory)7, 16, &ob), GP_ERROR_INVALID_ARGUMENT);
    assert_null(ob);
    GP_EXPECT(gp_buffer_get_size(NULL, &size), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_get_size(f->b, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_get_device(NULL, &od), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_get_device(f->b, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_map(NULL, NULL, &host), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_map(NULL, f->pinned, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_unmap(NULL, NULL), GP_ERROR_INVALID_HANDLE);

    GP_EXPECT(gp_buffer_write(NULL, NULL, 0, f->host, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_write_async(NULL, NULL, 0, f->host, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_write(NULL, f->b, 0, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_write_async(NULL, f->b, 0, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_read(NULL, NULL, 0, f->host, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_read_async(NULL, NULL, 0, f->host, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_read(NULL, f->b, 0, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_read_async(NULL, f->b, 0, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_copy(NULL, NULL, 0, f->b2, 0, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_copy(NULL, f->b, 0, NULL, 0, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_copy_async(NULL, NULL, 0, f->b2, 0, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_copy_async(NULL, f->b, 0, NULL, 0, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_fill(NULL, NULL, 0, 4, &pat, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_fill_async(NULL, NULL, 0, 4, &pat, 4), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 0, 4, NULL, 4), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_fill_async(NULL, f->b, 0, 4, NULL, 4), GP_ERROR_INVALID_ARGUMENT);

    GP_EXPECT(gp_stream_create(NULL, &os), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_stream_create(tst_dev, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stream_get_default(NULL, &os), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_stream_get_default(tst_dev, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_stream_synchronize(NULL)); /* NULL is every device's default stream, not an error */
    assert_null(os);

    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &e));
    GP_EXPECT(gp_event_create(NULL, &oe), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_create(tst_dev, NULL), GP_ERROR_INVALID_ARGUMENT);
    assert_null(oe);
    GP_EXPECT(gp_event_record(NULL, s), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_stream_wait_event(s, NULL), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_synchronize(NULL), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_query(NULL), GP_ERROR_INVALID_HANDLE);
    GP_OK(gp_event_record(e, s));
    GP_OK(gp_event_synchronize(e));
    GP_EXPECT(gp_event_elapsed_ms(NULL, e, &ms), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_elapsed_ms(e, NULL, &ms), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_elapsed_ms(e, e, NULL), GP_ERROR_INVALID_ARGUMENT);

    GP_EXPECT(gp_program_create(NULL, src, NULL, &op), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_program_create(tst_dev, NULL, NULL, &op), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_program_create(tst_dev, src, NULL, NULL), GP_ERROR_INVALID_ARGUMENT);
    assert_null(op);
    p = tst_program(src, NULL);
    GP_EXPECT(gp_program_get_info(NULL, &pinfo), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_program_get_info(p, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_kernel_create(NULL, "one", &ok), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_kernel_create(p, NULL, &ok), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_kernel_create(p, "one", NULL), GP_ERROR_INVALID_ARGUMENT);
    assert_null(ok);
    k = tst_kernel(p, "one");
    gp_arg args[] = {GP_BUFFER(f->b)};
    GP_EXPECT(gp_kernel_launch(s, NULL, 1, &global, NULL, 1, args), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_kernel_launch(s, k, 1, NULL, NULL, 1, args), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_kernel_launch(s, k, 1, &global, NULL, 1, NULL), GP_ERROR_INVALID_ARGUMENT);
    gp_arg null_buffer[] = {GP_BUFFER(NULL)};
    GP_EXPECT(gp_kernel_launch(s, k, 1, &global, NULL, 1, null_buffer), GP_ERROR_INVALID_KERNEL_ARGS);

    /* Every destroy takes NULL as a no-op. */
    GP_OK(gp_buffer_destroy(NULL));
    GP_OK(gp_stream_destroy(NULL));
    GP_OK(gp_event_destroy(NULL));
    GP_OK(gp_program_destroy(NULL));
    GP_OK(gp_kernel_destroy(NULL));

    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
    GP_OK(gp_event_destroy(e));
    GP_OK(gp_stream_destroy(s));
    check_unchanged(f);
}

static void out_of_range(void **state)
{
    fixture *f = *state;
    static const size_t bad[][2] = {{N, 1}, {N - 1, 2}, {0, N + 1}, {N + 1, 0}, {SIZE_MAX, 2},
                                    {1, SIZE_MAX}, {SIZE_MAX, SIZE_MAX}, {N / 2, SIZE_MAX - N / 4}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t off = bad[i][0], n = bad[i][1];
        /* The host side is only N bytes, so none of these may touch it at all. */
        GP_EXPECT(gp_buffer_write(NULL, f->b, off, f->host, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_write_async(NULL, f->b, off, f->host, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_read(NULL, f->b, off, f->host, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_read_async(NULL, f->b, off, f->host, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_copy(NULL, f->b, off, f->b2, 0, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_copy(NULL, f->b, 0, f->b2, off, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_copy_async(NULL, f->b, off, f->b2, 0, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_copy_async(NULL, f->b, 0, f->b2, off, n), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_fill(NULL, f->b, off, n, f->host, 1), GP_ERROR_OUT_OF_RANGE);
        GP_EXPECT(gp_buffer_fill_async(NULL, f->b, off, n, f->host, 1), GP_ERROR_OUT_OF_RANGE);
    }
    /* Aligned ranges for wide patterns, so only the range is wrong. */
    GP_EXPECT(gp_buffer_fill(NULL, f->b, N, 8, f->host, 8), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, N - 8, 16, f->host, 8), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, SIZE_MAX - 7, 8, f->host, 8), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 8, SIZE_MAX - 7, f->host, 8), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, SIZE_MAX - 3, 4, f->host, 4), GP_ERROR_OUT_OF_RANGE);

    /* An empty buffer has no byte to touch. */
    gp_buffer *empty = tst_buffer(GP_MEMORY_DEVICE, 0);
    GP_EXPECT(gp_buffer_write(NULL, empty, 0, f->host, 1), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_read(NULL, empty, 0, f->host, 1), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_copy(NULL, f->b, 0, empty, 0, 1), GP_ERROR_OUT_OF_RANGE);
    GP_EXPECT(gp_buffer_fill(NULL, empty, 0, 1, f->host, 1), GP_ERROR_OUT_OF_RANGE);
    GP_OK(gp_buffer_destroy(empty));
    check_unchanged(f);
}

static void bad_fill_patterns(void **state)
{
    fixture *f = *state;
    uint64_t pat = 0x0102030405060708ull;
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 0, 12, &pat, 3), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 0, 16, &pat, 0), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 0, 32, &pat, 16), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 2, 8, &pat, 4), GP_ERROR_INVALID_ARGUMENT);  /* offset */
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 4, 8, &pat, 8), GP_ERROR_INVALID_ARGUMENT);  /* offset */
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 1, 2, &pat, 2), GP_ERROR_INVALID_ARGUMENT);  /* offset */
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 0, 6, &pat, 4), GP_ERROR_INVALID_ARGUMENT);  /* bytes */
    GP_EXPECT(gp_buffer_fill(NULL, f->b, 8, 12, &pat, 8), GP_ERROR_INVALID_ARGUMENT); /* bytes */
    GP_EXPECT(gp_buffer_fill_async(NULL, f->b, 0, 12, &pat, 3), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_fill_async(NULL, f->b, 2, 8, &pat, 4), GP_ERROR_INVALID_ARGUMENT);
    check_unchanged(f);
}

/* A device buffer maps only where the device shares the host's memory (a CPU device on
 * OpenCL), and then shows its contents; elsewhere mapping it is refused. */
static void map_device_buffer(void **state)
{
    fixture *f = *state;
    void *host = NULL;
    if (tst_info.unified_memory && strcmp(tst_info.backend, "opencl") == 0) {
        GP_OK(gp_buffer_map(NULL, f->b, &host));
        assert_memory_equal(host, f->ref, N);
        GP_OK(gp_buffer_unmap(NULL, f->b));
    } else {
        GP_EXPECT(gp_buffer_map(NULL, f->b, &host), GP_ERROR_INVALID_ARGUMENT);
        assert_null(host);
    }
    check_unchanged(f);
}

/* Core refuses a mapped buffer in copies and launches, and a copy onto its own range. */
static void mapped_and_overlapping(void **state)
{
    fixture *f = *state;
    void *host = NULL;
    GP_OK(gp_buffer_map(NULL, f->pinned, &host));
    GP_EXPECT(gp_buffer_copy(NULL, f->pinned, 0, f->b, 0, 4), GP_ERROR_INVALID_ARGUMENT);
    gp_program *p = tst_program("GP_KERNEL void one(GP_GLOBAL uint *v) { v[0] = 1u; }\n", NULL);
    gp_kernel *k = tst_kernel(p, "one");
    size_t global = 1;
    gp_arg args[] = {GP_BUFFER(f->pinned)};
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 1, args), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_buffer_unmap(NULL, f->pinned));
    GP_EXPECT(gp_buffer_copy(NULL, f->b, 10, f->b, 0, 20), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_copy(NULL, f->b, 0, f->b, 0, 1), GP_ERROR_INVALID_ARGUMENT);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
    check_unchanged(f);
}

/* Objects of two devices used together; only where a second device exists. */
static void device_mismatch(void **state)
{
    fixture *f = *state;
    gp_device *other = NULL;
    for (size_t i = 0; i < tst_all_count && !other; i++)
        if (tst_all_devices[i] != tst_dev)
            other = tst_all_devices[i];
    if (!other) {
        print_message("skipping: only one device\n");
        skip();
    }
    gp_buffer *ob = NULL;
    gp_stream *s = NULL, *os = NULL;
    gp_event *e = NULL, *oe = NULL;
    unsigned char other_ref[N];
    tst_random_bytes(other_ref, N, 12);
    GP_OK(gp_buffer_create(other, GP_MEMORY_DEVICE, N, &ob));
    GP_OK(gp_buffer_write(NULL, ob, 0, other_ref, N));
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_stream_create(other, &os));
    GP_OK(gp_event_create(tst_dev, &e));
    GP_OK(gp_event_create(other, &oe));

    GP_EXPECT(gp_buffer_write(s, ob, 0, f->host, 4), GP_ERROR_DEVICE_MISMATCH);
    GP_EXPECT(gp_buffer_read(s, ob, 0, f->host, 4), GP_ERROR_DEVICE_MISMATCH);
    GP_EXPECT(gp_buffer_fill(s, ob, 0, 4, f->host, 4), GP_ERROR_DEVICE_MISMATCH);
    /* (Copies between the devices, and waits on the other's events, are valid: test_interop.c.) */
    GP_EXPECT(gp_buffer_copy(os, f->b, 0, f->b2, 0, 4), GP_ERROR_DEVICE_MISMATCH);
    GP_EXPECT(gp_event_record(oe, s), GP_ERROR_DEVICE_MISMATCH);

    gp_program *p = tst_program("GP_KERNEL void one(GP_GLOBAL uint *v) { v[0] = 1u; }\n", NULL);
    gp_kernel *k = tst_kernel(p, "one");
    size_t global = 1;
    gp_arg args[] = {GP_BUFFER(ob)};
    GP_EXPECT(gp_kernel_launch(s, k, 1, &global, NULL, 1, args), GP_ERROR_DEVICE_MISMATCH);
    gp_arg own[] = {GP_BUFFER(f->b)};
    GP_EXPECT(gp_kernel_launch(os, k, 1, &global, NULL, 1, own), GP_ERROR_DEVICE_MISMATCH);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));

    GP_OK(gp_device_synchronize(other));
    tst_check_buffer(ob, other_ref, N);
    GP_OK(gp_event_destroy(e));
    GP_OK(gp_event_destroy(oe));
    GP_OK(gp_stream_destroy(s));
    GP_OK(gp_stream_destroy(os));
    GP_OK(gp_buffer_destroy(ob));
    check_unchanged(f);
}

static void build_failure(void **state)
{
    (void)state;
    gp_program *p = NULL;
    const char *src = "GP_KERNEL void broken(GP_GLOBAL uint *v)\n"
                      "{\n"
                      "    v[0] = no_such_identifier_q7 + 1u;\n"
                      "}\n";
    GP_EXPECT(gp_program_create(tst_dev, src, NULL, &p), GP_ERROR_BUILD_FAILED);
    assert_null(p);
    if (!strstr(gp_last_error(), "no_such_identifier_q7"))
        fail_msg("the build log does not name the bad identifier: %s", gp_last_error());
    /* A second try fails the same way: a failed build is never cached as a success. */
    GP_EXPECT(gp_program_create(tst_dev, src, NULL, &p), GP_ERROR_BUILD_FAILED);
    assert_null(p);
}

static void bad_options(void **state)
{
    (void)state;
    static const char *const opts[] = {"-O3", "--foo", "-D", "-D=1", "-DA=1 -O2", "-cl-fast-relaxed-math",
                                       "-I/tmp", "SCALE=3"};
    const char *src = "GP_KERNEL void one(GP_GLOBAL uint *v) { v[0] = 1u; }\n";
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        gp_program *p = NULL;
        gp_status s = gp_program_create(tst_dev, src, opts[i], &p);
        if (s != GP_ERROR_INVALID_ARGUMENT) {
            gp_program_destroy(p);
            fail_msg("options \"%s\" -> %s, expected GP_ERROR_INVALID_ARGUMENT", opts[i], gp_status_name(s));
        }
        assert_true(gp_last_error()[0] != '\0');
        assert_null(p);
    }
}

static const char *args_src =
    "GP_KERNEL void put(GP_GLOBAL uint *out, uint v)\n"
    "{\n"
    "    uint i = gp_global_id(0);\n"
    "    if (i < 64u) out[i] = v;\n"
    "}\n";

static void bad_kernels_and_launches(void **state)
{
    fixture *f = *state;
    gp_program *p = tst_program(args_src, NULL);
    gp_kernel *k = NULL;
    GP_EXPECT(gp_kernel_create(p, "no_such_kernel", &k), GP_ERROR_NOT_FOUND);
    assert_null(k);
    GP_EXPECT(gp_kernel_create(p, "", &k), GP_ERROR_NOT_FOUND);
    assert_null(k);
    k = tst_kernel(p, "put");

    uint32_t v = 0x12345678u;
    double dv = 1.0;
    uint8_t cv = 1;
    size_t global = 64, g3[3] = {64, 1, 1};
    gp_arg few[] = {GP_BUFFER(f->b)};
    gp_arg many[] = {GP_BUFFER(f->b), GP_VALUE(v), GP_VALUE(v)};
    gp_arg wide[] = {GP_BUFFER(f->b), GP_VALUE(dv)};
    gp_arg narrow[] = {GP_BUFFER(f->b), GP_VALUE(cv)};
    gp_arg value_for_buffer[] = {GP_VALUE(v), GP_VALUE(v)};
    gp_arg good[] = {GP_BUFFER(f->b), GP_VALUE(v)};
    gp_arg bad_kind[] = {GP_BUFFER(f->b), {(gp_arg_kind)9, NULL, &v, sizeof v, GP_TYPE_NONE}};
    gp_arg null_value[] = {GP_BUFFER(f->b), {GP_ARG_VALUE, NULL, NULL, sizeof v, GP_TYPE_NONE}};

    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 1, few), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 0, NULL), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 3, many), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, wide), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, narrow), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, value_for_buffer), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, bad_kind), GP_ERROR_INVALID_KERNEL_ARGS);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, null_value), GP_ERROR_INVALID_KERNEL_ARGS);

    size_t too_big = tst_info.max_work_group_size + 1;
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &too_big, &too_big, 2, good), GP_ERROR_INVALID_LAUNCH);
    /* Sizes whose rounding would wrap, or whose indices would not fit the kernels' 32-bit uint. */
    size_t huge = SIZE_MAX, one = 1, over32 = (size_t)UINT32_MAX + 2;
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &huge, NULL, 2, good), GP_ERROR_INVALID_LAUNCH);
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &over32, &one, 2, good), GP_ERROR_INVALID_LAUNCH);
    size_t l2[2] = {tst_info.max_work_item_sizes[0], tst_info.max_work_item_sizes[1]};
    if (l2[0] * l2[1] > tst_info.max_work_group_size) {
        size_t gl2[2] = {l2[0], l2[1]};
        GP_EXPECT(gp_kernel_launch(NULL, k, 2, gl2, l2, 2, good), GP_ERROR_INVALID_LAUNCH);
    }
    if (tst_info.max_work_item_sizes[2] < tst_info.max_work_group_size) {
        size_t l3[3] = {1, 1, tst_info.max_work_item_sizes[2] + 1};
        GP_EXPECT(gp_kernel_launch(NULL, k, 3, l3, l3, 2, good), GP_ERROR_INVALID_LAUNCH);
    }
    size_t zero_local = 0;
    GP_EXPECT(gp_kernel_launch(NULL, k, 1, &global, &zero_local, 2, good), GP_ERROR_INVALID_LAUNCH);
    GP_EXPECT(gp_kernel_launch(NULL, k, 0, g3, NULL, 2, good), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_kernel_launch(NULL, k, 4, g3, NULL, 2, good), GP_ERROR_INVALID_ARGUMENT);
    check_unchanged(f);

    /* Nothing of the failed launches sticks: a good launch still does exactly its work. */
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, good));
    for (size_t i = 0; i < 64; i++)
        memcpy(f->ref + 4 * i, &v, 4);
    check_unchanged(f);
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
const struct CMUnitTest tst_bad_input_tests[] = {
    T(null_handles_and_pointers), T(out_of_range), T(bad_fill_patterns), T(map_device_buffer), T(mapped_and_overlapping),
    T(device_mismatch),           T(build_failure), T(bad_options),      T(bad_kernels_and_launches),
};
const size_t tst_bad_input_tests_count = sizeof tst_bad_input_tests / sizeof tst_bad_input_tests[0];
