/* Proves native handles out and in: gpuport's buffers, streams and events are the vendor's own
 * (checked with the vendor's API called here directly: OpenCL and CLBlast, the CUDA driver API
 * and cuBLAS), memory and streams of the caller's work under gpuport borrowed or adopted, host
 * memory registered without a copy; bad native handles are refused and change nothing. The
 * "pairs" group copies between this device and every other one, every size class, byte for
 * byte, and orders streams of two devices with events. */
#include "common.h"
#include "vendor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int backend_is(const char *name) { return strcmp(tst_info.backend, name) == 0; }

static gp_backend_id my_backend(void)
{
    return backend_is("cuda") ? GP_BACKEND_CUDA : backend_is("hip") ? GP_BACKEND_HIP : GP_BACKEND_OPENCL;
}

static void fill_u32(uint32_t *v, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i * 2654435761u ^ seed;
}

/* ---- On every backend: the handles out, and back in ---- */

static void handles_out_and_back(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint32_t v[N], back[N];
    fill_u32(v, N, 7);
    gp_native_device nd;
    GP_OK(gp_device_get_native(tst_dev, &nd));
    assert_int_equal(nd.backend, my_backend());
    if (nd.backend == GP_BACKEND_OPENCL) {
        assert_non_null(nd.context);
        assert_non_null(nd.device);
        assert_non_null(nd.platform);
    } else {
        assert_true(nd.ordinal >= 0);
    }
    if (nd.backend == GP_BACKEND_CUDA) assert_non_null(nd.context);

    /* A buffer's native memory, wrapped again (borrowed): the two are one memory. */
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof v), *again = NULL;
    gp_native_buffer nb;
    GP_OK(gp_buffer_get_native(b, &nb));
    assert_int_equal(nb.backend, my_backend());
    assert_int_equal(nb.bytes, sizeof v);
    assert_true(nb.backend == GP_BACKEND_OPENCL ? nb.mem != NULL : nb.device_ptr != 0);
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &again));
    size_t size = 0;
    GP_OK(gp_buffer_get_size(again, &size));
    assert_int_equal(size, sizeof v);
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    GP_OK(gp_map(NULL, GP_MAP_SCALE, GP_U32, N, GP_VIEW(again), GP_VIEW(again), GP_VIEW(NULL), &(gp_scalar){.u = 3}));
    GP_OK(gp_buffer_read(NULL, b, 0, back, sizeof back));
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 3 * v[i]);
    /* Part of it: bytes 0 means to the end; a claim past the end is refused. */
    nb.bytes = 0;
    gp_buffer *whole = NULL;
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &whole));
    GP_OK(gp_buffer_get_size(whole, &size));
    assert_true(size >= sizeof v);
    GP_OK(gp_buffer_destroy(whole));
    GP_OK(gp_buffer_destroy(again)); /* borrowed: b's memory lives on */
    GP_OK(gp_buffer_read(NULL, b, 0, back, sizeof back));
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 3 * v[i]);

    /* Streams and events. */
    gp_stream *s = NULL;
    gp_event *e = NULL;
    gp_native_stream ns;
    gp_native_event ne;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_event_create(tst_dev, &e));
    GP_OK(gp_stream_get_native(s, &ns));
    assert_int_equal(ns.backend, my_backend());
    if (ns.backend == GP_BACKEND_OPENCL) assert_non_null(ns.stream);
    GP_OK(gp_event_record(e, s));
    GP_OK(gp_event_get_native(e, &ne));
    assert_int_equal(ne.backend, my_backend());
    assert_non_null(ne.event);
    /* The stream's native handle, wrapped (borrowed), is the same queue: work on either is one order. */
    gp_stream *same = NULL;
    GP_OK(gp_stream_wrap(tst_dev, &ns, GP_BORROW, &same));
    GP_OK(gp_buffer_write_async(s, b, 0, v, sizeof v));
    GP_OK(gp_map(same, GP_MAP_ADD, GP_U32, N, GP_VIEW(b), GP_VIEW(b), GP_VIEW(b), &(gp_scalar){.u = 0}));
    GP_OK(gp_buffer_read(same, b, 0, back, sizeof back));
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 2 * v[i]);
    GP_OK(gp_stream_destroy(same)); /* borrowed: s still works */
    GP_OK(gp_buffer_read(s, b, 0, back, sizeof back));
    GP_OK(gp_event_destroy(e));
    GP_OK(gp_stream_destroy(s));
    GP_OK(gp_buffer_destroy(b));
}

/* Host memory registered, not copied: the device's work shows in it once mapped or waited for. */
static void registered_host_memory(void **state)
{
    (void)state;
    enum { N = 4099 };
    uint32_t *host = tst_malloc(N * 4), want[N];
    fill_u32(host, N, 11);
    for (size_t i = 0; i < N; i++) want[i] = host[i] * 5;
    gp_buffer *r = NULL;
    GP_OK(gp_buffer_register_host(tst_dev, host, N * 4, &r));
    gp_native_buffer nb;
    GP_OK(gp_buffer_get_native(r, &nb));
    assert_ptr_equal(nb.host, host);
    GP_OK(gp_map(NULL, GP_MAP_SCALE, GP_U32, N, GP_VIEW(r), GP_VIEW(r), GP_VIEW(NULL), &(gp_scalar){.u = 5}));
    void *mapped = NULL;
    GP_OK(gp_buffer_map(NULL, r, &mapped));
    assert_ptr_equal(mapped, host); /* the caller's own memory, not a copy */
    assert_memory_equal(host, want, sizeof want);
    host[0] = 12345u;
    GP_OK(gp_buffer_unmap(NULL, r));
    uint32_t first = 0;
    GP_OK(gp_buffer_read(NULL, r, 0, &first, 4));
    assert_int_equal(first, 12345u);
    GP_OK(gp_buffer_destroy(r));
    assert_int_equal(host[1], want[1]); /* the memory is still the caller's, unchanged */
    free(host);
    uint32_t none = 0;
    gp_buffer *empty = NULL;
    GP_OK(gp_buffer_register_host(tst_dev, &none, 0, &empty));
    GP_OK(gp_buffer_destroy(empty));
}

/* A 5-point stencil (weights 1, fixed edges) over NX x NY cells and C = A B (M x M x M, row
 * major) in memory w whose first byte is not on 16 (a pointer past an allocation's start,
 * registered host memory anywhere): small integers, so the sums are exact and must equal the
 * host's. The primitives that load 16 bytes at a time on aligned data must see that this is not. */
enum { NX = 64, NY = 6, NCELL = NX * NY, MSIDE = 128 }; /* M is MSIDE */

static void unaligned_work(gp_buffer *w, const char *what)
{
    enum { MM = MSIDE * MSIDE, IN = 0, OUT = NCELL, A = 2 * NCELL, B = A + MM, C = B + MM, END = C + MM };
    float *h = tst_malloc(END * sizeof *h), *got = tst_malloc(END * sizeof *got);
    for (size_t i = 0; i < END; i++) h[i] = (float)(i % 7) - 3;
    GP_OK(gp_buffer_write(NULL, w, 0, h, END * sizeof *h));
    const gp_stencil st = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_FIXED, NX, NY, 1, {1, 1, 1, 1, 1}, 0};
    GP_OK(gp_stencil_apply(NULL, &st, GP_VIEW_AT(w, OUT), GP_VIEW_AT(w, IN), GP_VIEW(NULL)));
    GP_OK(gp_gemm(NULL, GP_GEMM_GPUPORT, GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, MSIDE, MSIDE, MSIDE, 1,
                  GP_VIEW_AT(w, A), MSIDE, GP_VIEW_AT(w, B), MSIDE, 0, GP_VIEW_AT(w, C), MSIDE));
    GP_OK(gp_buffer_read(NULL, w, 0, got, END * sizeof *got));
    for (size_t y = 0; y < NY; y++)
        for (size_t x = 0; x < NX; x++) {
            const float *c = h + IN + y * NX + x;
            float want = x == 0 || y == 0 || x + 1 == NX || y + 1 == NY ? c[0] : c[0] + c[-1] + c[1] + c[-NX] + c[NX];
            if (got[OUT + y * NX + x] != want)
                fail_msg("%s: stencil cell (%zu, %zu) = %g, expected %g", what, x, y, got[OUT + y * NX + x], want);
        }
    for (size_t i = 0; i < MSIDE; i++)
        for (size_t j = 0; j < MSIDE; j++) {
            float want = 0;
            for (size_t l = 0; l < MSIDE; l++) want += h[A + i * MSIDE + l] * h[B + l * MSIDE + j];
            if (got[C + i * MSIDE + j] != want)
                fail_msg("%s: C(%zu, %zu) = %g, expected %g", what, i, j, got[C + i * MSIDE + j], want);
        }
    free(h);
    free(got);
}

static void unaligned_memory(void **state)
{
    (void)state;
    const size_t bytes = (2 * NCELL + 3 * MSIDE * MSIDE) * sizeof(float);
    for (int other = 0; other < 2; other++) { /* each kernel variant of the stencil */
        char *saved = other ? tst_other_variant("GPUPORT_STENCIL_KERNEL", "tiled", "rows") : NULL;
        char *host = tst_malloc(bytes + 16);
        gp_buffer *r = NULL;
        GP_OK(gp_buffer_register_host(tst_dev, host + 4, bytes, &r));
        unaligned_work(r, "registered host memory from 4 bytes past 16");
        GP_OK(gp_buffer_destroy(r));
        free(host);
        if (my_backend() != GP_BACKEND_OPENCL) { /* OpenCL's handles are whole buffers */
            gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, bytes + 16), *w = NULL;
            gp_native_buffer nb;
            GP_OK(gp_buffer_get_native(b, &nb));
            nb.device_ptr += 4;
            nb.bytes = bytes;
            GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &w));
            unaligned_work(w, "a device pointer 4 bytes past an allocation's start");
            GP_OK(gp_buffer_destroy(w));
            GP_OK(gp_buffer_destroy(b));
        }
        if (other) tst_restore_env("GPUPORT_STENCIL_KERNEL", saved);
    }
}

static void bad_native_handles(void **state)
{
    (void)state;
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, 256), *w = NULL;
    gp_stream *s = NULL;
    gp_native_buffer nb;
    gp_native_stream ns;
    GP_OK(gp_buffer_get_native(b, &nb));
    GP_EXPECT(gp_buffer_wrap(NULL, &nb, GP_BORROW, &w), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_wrap(tst_dev, NULL, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_wrap(tst_dev, &nb, (gp_ownership)7, &w), GP_ERROR_INVALID_ARGUMENT);
    gp_native_buffer wrong = nb;
    wrong.backend = my_backend() == GP_BACKEND_OPENCL ? GP_BACKEND_CUDA : GP_BACKEND_OPENCL;
    GP_EXPECT(gp_buffer_wrap(tst_dev, &wrong, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    wrong.backend = (gp_backend_id)42;
    GP_EXPECT(gp_buffer_wrap(tst_dev, &wrong, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    wrong = nb;
    wrong.bytes = nb.bytes + ((size_t)1 << 30); /* more than the allocation holds */
    GP_EXPECT(gp_buffer_wrap(tst_dev, &wrong, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    wrong = nb;
    wrong.mem = NULL;
    wrong.device_ptr = 0;
    GP_EXPECT(gp_buffer_wrap(tst_dev, &wrong, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    if (my_backend() != GP_BACKEND_OPENCL) { /* an address no allocation has */
        wrong.device_ptr = 16;
        GP_EXPECT(gp_buffer_wrap(tst_dev, &wrong, GP_BORROW, &w), GP_ERROR_INVALID_ARGUMENT);
    }
    assert_null(w);
    GP_EXPECT(gp_buffer_register_host(tst_dev, NULL, 64, &w), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_buffer_get_native(NULL, &nb), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_buffer_get_native(b, NULL), GP_ERROR_INVALID_ARGUMENT);
    GP_EXPECT(gp_stream_get_native(NULL, &ns), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_device_get_native(NULL, NULL), GP_ERROR_INVALID_HANDLE);
    GP_EXPECT(gp_event_get_native(NULL, NULL), GP_ERROR_INVALID_HANDLE);
    /* (A pointer that is no stream at all cannot be told from one: the vendors' APIs crash on it.) */
    ns.backend = my_backend();
    ns.stream = NULL; /* no queue; on CUDA and HIP the legacy default stream, which is valid */
    if (my_backend() == GP_BACKEND_OPENCL) GP_EXPECT(gp_stream_wrap(tst_dev, &ns, GP_BORROW, &s), GP_ERROR_INVALID_ARGUMENT);
    ns.backend = (gp_backend_id)0;
    GP_EXPECT(gp_stream_wrap(tst_dev, &ns, GP_BORROW, &s), GP_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    GP_OK(gp_buffer_destroy(b));
}

/* ---- OpenCL: checked against the OpenCL API itself, and CLBlast ---- */

#ifdef TST_HAVE_OPENCL
static const char *cl_src = "__kernel void add_one(__global uint *v, uint n)\n"
                            "{ size_t i = get_global_id(0); if (i < n) v[i] += 1u; }\n";

static void opencl_native(void **state)
{
    (void)state;
    if (!backend_is("opencl")) {
        print_message("skipped: %s is no OpenCL device\n", tst_info.name);
        skip();
    }
    if (!tst_cl_load()) fail_msg("the OpenCL loader is gone, yet an OpenCL device is here");
    enum { N = 1024 };
    uint32_t v[N], back[N];
    fill_u32(v, N, 3);
    gp_native_device nd;
    GP_OK(gp_device_get_native(tst_dev, &nd));
    cl_context ctx = nd.context;
    cl_int err;
    gp_stream *s = NULL;
    gp_native_stream ns;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_stream_get_native(s, &ns));
    cl_command_queue q = ns.stream;

    /* The caller's cl_mem, borrowed: gpuport's map runs on it; the caller reads the result. */
    cl_mem mine = tst_cl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof v, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(tst_cl.clEnqueueWriteBuffer(q, mine, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL), CL_SUCCESS);
    gp_native_buffer nb = {GP_BACKEND_OPENCL, 0, mine, NULL, 0};
    gp_buffer *b = NULL;
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &b));
    GP_OK(gp_map(s, GP_MAP_SCALE, GP_U32, N, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &(gp_scalar){.u = 7}));
    GP_OK(gp_stream_synchronize(s));
    assert_int_equal(tst_cl.clEnqueueReadBuffer(q, mine, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL), CL_SUCCESS);
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 7 * v[i]);
    GP_OK(gp_buffer_destroy(b));
    cl_uint refs = 0;
    tst_cl.clGetMemObjectInfo(mine, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    assert_int_equal(refs, 1); /* borrowed: only the caller's reference is left */

    /* Adopted: gpuport releases the one reference it was given. */
    assert_int_equal(tst_cl.clRetainMemObject(mine), CL_SUCCESS);
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_ADOPT, &b));
    GP_OK(gp_buffer_destroy(b));
    tst_cl.clGetMemObjectInfo(mine, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    assert_int_equal(refs, 1);
    tst_cl.clReleaseMemObject(mine);

    /* gpuport's cl_mem and queue under a kernel of the caller's own. */
    gp_buffer *g = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(s, g, 0, v, sizeof v));
    GP_OK(gp_buffer_get_native(g, &nb));
    cl_program prog = tst_cl.clCreateProgramWithSource(ctx, 1, &cl_src, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_device_id id = nd.device;
    assert_int_equal(tst_cl.clBuildProgram(prog, 1, &id, NULL, NULL, NULL), CL_SUCCESS);
    cl_kernel k = tst_cl.clCreateKernel(prog, "add_one", &err);
    cl_uint n = N;
    size_t global = N;
    cl_mem gm = nb.mem;
    assert_int_equal(tst_cl.clSetKernelArg(k, 0, sizeof gm, &gm), CL_SUCCESS);
    assert_int_equal(tst_cl.clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
    assert_int_equal(tst_cl.clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    GP_OK(gp_buffer_read(s, g, 0, back, sizeof back)); /* same queue: after the caller's kernel */
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], v[i] + 1);
    tst_cl.clReleaseKernel(k);
    tst_cl.clReleaseProgram(prog);

    /* CLBlast on gpuport's buffers and queue: C = A * B of 16 x 16, row-major. */
    if (tst_cl.sgemm) {
        enum { M = 16 };
        float a[M * M], bb[M * M], c[M * M];
        for (int i = 0; i < M * M; i++) a[i] = (float)(i % 7) - 3.0f, bb[i] = (float)(i % 5) * 0.5f;
        gp_buffer *ga = tst_buffer(GP_MEMORY_DEVICE, sizeof a), *gb = tst_buffer(GP_MEMORY_DEVICE, sizeof bb);
        gp_buffer *gc = tst_buffer(GP_MEMORY_DEVICE, sizeof c);
        GP_OK(gp_buffer_write(s, ga, 0, a, sizeof a));
        GP_OK(gp_buffer_write(s, gb, 0, bb, sizeof bb));
        gp_native_buffer na, nbb, nc;
        GP_OK(gp_buffer_get_native(ga, &na));
        GP_OK(gp_buffer_get_native(gb, &nbb));
        GP_OK(gp_buffer_get_native(gc, &nc));
        /* CLBlastLayoutRowMajor 101, CLBlastTransposeNo 111 */
        assert_int_equal(tst_cl.sgemm(101, 111, 111, M, M, M, 1.0f, na.mem, 0, M, nbb.mem, 0, M, 0.0f, nc.mem, 0, M, &q,
                                      NULL),
                         0);
        GP_OK(gp_buffer_read(s, gc, 0, c, sizeof c));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                float want = 0;
                for (int x = 0; x < M; x++) want += a[i * M + x] * bb[x * M + j];
                assert_true(c[i * M + j] == want); /* small integers and halves: exact */
            }
        gp_buffer_destroy(ga);
        gp_buffer_destroy(gb);
        gp_buffer_destroy(gc);
    } else {
        print_message("CLBlast not found: its part of the check is left out\n");
    }

    /* A queue of the caller's, without profiling, borrowed: gpuport's work is ordered on it,
     * its events have no time, and it outlives the gp_stream. */
    cl_command_queue cq = tst_cl.clCreateCommandQueue(ctx, id, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    gp_native_stream nq = {GP_BACKEND_OPENCL, cq};
    gp_stream *ws = NULL;
    gp_event *e0 = NULL, *e1 = NULL;
    GP_OK(gp_stream_wrap(tst_dev, &nq, GP_BORROW, &ws));
    GP_OK(gp_event_create(tst_dev, &e0));
    GP_OK(gp_event_create(tst_dev, &e1));
    GP_OK(gp_event_record(e0, ws));
    assert_int_equal(tst_cl.clEnqueueWriteBuffer(cq, gm, CL_FALSE, 0, sizeof v, v, 0, NULL, NULL), CL_SUCCESS);
    GP_OK(gp_map(ws, GP_MAP_ADD, GP_U32, N, GP_VIEW(g), GP_VIEW(g), GP_VIEW(g), &(gp_scalar){.u = 0}));
    GP_OK(gp_event_record(e1, ws));
    GP_OK(gp_buffer_read(ws, g, 0, back, sizeof back));
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 2 * v[i]);
    double ms = 0;
    GP_EXPECT(gp_event_elapsed_ms(e0, e1, &ms), GP_ERROR_UNSUPPORTED);
    GP_OK(gp_stream_destroy(ws));
    cl_context qctx = NULL;
    assert_int_equal(tst_cl.clGetCommandQueueInfo(cq, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL), CL_SUCCESS);
    assert_ptr_equal(qctx, ctx);
    tst_cl.clReleaseCommandQueue(cq);

    /* A cl_mem of another context is refused. */
    cl_context other = tst_cl.clCreateContext(NULL, 1, &id, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem foreign = tst_cl.clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
    gp_native_buffer nf = {GP_BACKEND_OPENCL, 0, foreign, NULL, 0};
    GP_EXPECT(gp_buffer_wrap(tst_dev, &nf, GP_BORROW, &b), GP_ERROR_DEVICE_MISMATCH);
    tst_cl.clReleaseMemObject(foreign);
    tst_cl.clReleaseContext(other);

    GP_OK(gp_event_destroy(e0));
    GP_OK(gp_event_destroy(e1));
    GP_OK(gp_buffer_destroy(g));
    GP_OK(gp_stream_destroy(s));
}
#else
static void opencl_native(void **state)
{
    (void)state;
    if (backend_is("opencl")) fail_msg("this suite was built without OpenCL headers, so it cannot check OpenCL's handles");
    skip();
}
#endif

/* ---- CUDA: checked against the driver API itself, and cuBLAS ---- */

#ifdef TST_HAVE_CUDA
/* add_one(uint *v, uint n): v[i] += 1 for i < n, in PTX any NVIDIA GPU compiles on load. */
static const char add_one_ptx[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry add_one(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .pred %p;\n  .reg .b32 %r<6>;\n  .reg .b64 %d<5>;\n"
    "  ld.param.u64 %d1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r2, %r2, %r3, %r4;\n  setp.ge.u32 %p, %r2, %r1;\n  @%p bra DONE;\n"
    "  cvta.to.global.u64 %d2, %d1;\n  mul.wide.u32 %d3, %r2, 4;\n  add.s64 %d4, %d2, %d3;\n"
    "  ld.global.u32 %r5, [%d4];\n  add.s32 %r5, %r5, 1;\n  st.global.u32 [%d4], %r5;\n"
    "DONE:\n  ret;\n}\n";

static void cuda_native(void **state)
{
    (void)state;
    if (!backend_is("cuda")) {
        print_message("skipped: %s is no CUDA device\n", tst_info.name);
        skip();
    }
    if (!tst_cu_load()) fail_msg("libcuda does not load, yet a CUDA device is here");
    enum { N = 1024 };
    uint32_t v[N], back[N];
    fill_u32(v, N, 5);
    gp_native_device nd;
    GP_OK(gp_device_get_native(tst_dev, &nd));
    assert_int_equal(tst_cu.cuCtxSetCurrent((CUcontext)nd.context), CUDA_SUCCESS);

    /* The caller's cuMemAlloc, borrowed: gpuport's reduce and map run on it. */
    CUdeviceptr mine = 0;
    assert_int_equal(tst_cu.cuMemAlloc(&mine, sizeof v), CUDA_SUCCESS);
    assert_int_equal(tst_cu.cuMemcpyHtoD(mine, v, sizeof v), CUDA_SUCCESS);
    gp_native_buffer nb = {GP_BACKEND_CUDA, mine, NULL, NULL, sizeof v};
    gp_buffer *b = NULL;
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &b));
    uint32_t sum = 0, want = 0;
    for (size_t i = 0; i < N; i++) want += v[i];
    GP_OK(gp_reduce_to_host(NULL, GP_REDUCE_SUM, GP_U32, N, GP_VIEW(b), &sum));
    assert_int_equal(sum, want);
    GP_OK(gp_map(NULL, GP_MAP_SCALE, GP_U32, N, GP_VIEW(b), GP_VIEW(b), GP_VIEW(NULL), &(gp_scalar){.u = 7}));
    GP_OK(gp_stream_synchronize(NULL));
    assert_int_equal(tst_cu.cuCtxSetCurrent((CUcontext)nd.context), CUDA_SUCCESS);
    assert_int_equal(tst_cu.cuMemcpyDtoH(back, mine, sizeof back), CUDA_SUCCESS);
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 7 * v[i]);
    GP_OK(gp_buffer_destroy(b));
    assert_int_equal(tst_cu.cuMemcpyDtoH(back, mine, 4), CUDA_SUCCESS); /* still the caller's */
    /* Adopted: gpuport frees it; the driver no longer knows the pointer afterwards. */
    GP_OK(gp_buffer_wrap(tst_dev, &nb, GP_ADOPT, &b));
    GP_OK(gp_buffer_destroy(b));
    CUcontext owner = NULL;
    assert_int_not_equal(tst_cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, mine), CUDA_SUCCESS);

    /* gpuport's memory and stream under a kernel of the caller's own, then cuBLAS. */
    gp_stream *s = NULL;
    gp_native_stream ns;
    GP_OK(gp_stream_create(tst_dev, &s));
    GP_OK(gp_stream_get_native(s, &ns));
    gp_buffer *g = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(s, g, 0, v, sizeof v));
    GP_OK(gp_buffer_get_native(g, &nb));
    CUmodule mod;
    CUfunction fn;
    assert_int_equal(tst_cu.cuCtxSetCurrent((CUcontext)nd.context), CUDA_SUCCESS);
    assert_int_equal(tst_cu.cuModuleLoadData(&mod, add_one_ptx), CUDA_SUCCESS);
    assert_int_equal(tst_cu.cuModuleGetFunction(&fn, mod, "add_one"), CUDA_SUCCESS);
    CUdeviceptr gp_ptr = (CUdeviceptr)nb.device_ptr;
    unsigned n = N;
    void *params[] = {&gp_ptr, &n};
    assert_int_equal(tst_cu.cuLaunchKernel(fn, N / 128, 1, 1, 128, 1, 1, 0, (CUstream)ns.stream, params, NULL),
                     CUDA_SUCCESS);
    GP_OK(gp_buffer_read(s, g, 0, back, sizeof back)); /* same stream: after the caller's kernel */
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], v[i] + 1);
    tst_cu.cuModuleUnload(mod);
    if (tst_cu.cublasSgemm) {
        enum { M = 16 };
        float a[M * M], bb[M * M], c[M * M];
        for (int i = 0; i < M * M; i++) a[i] = (float)(i % 7) - 3.0f, bb[i] = (float)(i % 5) * 0.5f;
        gp_buffer *ga = tst_buffer(GP_MEMORY_DEVICE, sizeof a), *gb = tst_buffer(GP_MEMORY_DEVICE, sizeof bb);
        gp_buffer *gc = tst_buffer(GP_MEMORY_DEVICE, sizeof c);
        GP_OK(gp_buffer_write(s, ga, 0, a, sizeof a));
        GP_OK(gp_buffer_write(s, gb, 0, bb, sizeof bb));
        gp_native_buffer na, nbb, nc;
        GP_OK(gp_buffer_get_native(ga, &na));
        GP_OK(gp_buffer_get_native(gb, &nbb));
        GP_OK(gp_buffer_get_native(gc, &nc));
        void *h = NULL;
        float one = 1, zero = 0;
        assert_int_equal(tst_cu.cublasCreate(&h), 0);
        assert_int_equal(tst_cu.cublasSetStream(h, (CUstream)ns.stream), 0);
        /* column-major: C^T = B^T A^T, so row-major A * B is cublas(B, A) */
        assert_int_equal(tst_cu.cublasSgemm(h, 0, 0, M, M, M, &one, (const float *)(uintptr_t)nbb.device_ptr, M,
                                            (const float *)(uintptr_t)na.device_ptr, M, &zero,
                                            (float *)(uintptr_t)nc.device_ptr, M),
                         0);
        GP_OK(gp_buffer_read(s, gc, 0, c, sizeof c));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                float w = 0;
                for (int x = 0; x < M; x++) w += a[i * M + x] * bb[x * M + j];
                assert_true(c[i * M + j] == w);
            }
        tst_cu.cublasDestroy(h);
        gp_buffer_destroy(ga);
        gp_buffer_destroy(gb);
        gp_buffer_destroy(gc);
    } else {
        print_message("cuBLAS not found: its part of the check is left out\n");
    }

    /* A stream of the caller's, adopted: gpuport destroys it. */
    CUstream cs;
    assert_int_equal(tst_cu.cuCtxSetCurrent((CUcontext)nd.context), CUDA_SUCCESS);
    assert_int_equal(tst_cu.cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    gp_native_stream nc = {GP_BACKEND_CUDA, cs};
    gp_stream *ws = NULL;
    GP_OK(gp_stream_wrap(tst_dev, &nc, GP_ADOPT, &ws));
    GP_OK(gp_map(ws, GP_MAP_ADD, GP_U32, N, GP_VIEW(g), GP_VIEW(g), GP_VIEW(g), &(gp_scalar){.u = 0}));
    GP_OK(gp_buffer_read(ws, g, 0, back, sizeof back));
    for (size_t i = 0; i < N; i++) assert_int_equal(back[i], 2 * (v[i] + 1));
    GP_OK(gp_stream_destroy(ws));

    /* Memory of a context of the caller's own is refused. */
    if (tst_cu.cuCtxCreate) {
        CUcontext other = NULL;
        CUdeviceptr foreign = 0;
        assert_int_equal(tst_cu.cuCtxCreate(&other, 0, nd.ordinal), CUDA_SUCCESS);
        assert_int_equal(tst_cu.cuMemAlloc(&foreign, 64), CUDA_SUCCESS);
        gp_native_buffer nf = {GP_BACKEND_CUDA, foreign, NULL, NULL, 64};
        GP_EXPECT(gp_buffer_wrap(tst_dev, &nf, GP_BORROW, &b), GP_ERROR_DEVICE_MISMATCH);
        tst_cu.cuMemFree(foreign);
        tst_cu.cuCtxDestroy(other);
    }
    GP_OK(gp_buffer_destroy(g));
    GP_OK(gp_stream_destroy(s));
}
#else
static void cuda_native(void **state)
{
    (void)state;
    if (backend_is("cuda")) fail_msg("this suite was built without cuda.h, so it cannot check CUDA's handles");
    skip();
}
#endif

const struct CMUnitTest tst_interop_tests[] = {
    cmocka_unit_test(handles_out_and_back), cmocka_unit_test(registered_host_memory),
    cmocka_unit_test(unaligned_memory),
    cmocka_unit_test(bad_native_handles),   cmocka_unit_test(opencl_native),
    cmocka_unit_test(cuda_native),
};
const size_t tst_interop_tests_count = sizeof tst_interop_tests / sizeof tst_interop_tests[0];

/* ---- Pairs: this device and every other ---- */

/* The other devices, or a skip when there is none. */
static size_t others(gp_device **out)
{
    size_t n = 0;
    for (size_t d = 0; d < tst_all_count; d++)
        if (tst_all_devices[d] != tst_dev) out[n++] = tst_all_devices[d];
    if (n == 0) {
        print_message("skipped: only one device here (CI gives pocl two with POCL_DEVICES=\"pthread pthread\")\n");
        skip();
    }
    return n;
}

static const char *name_of(gp_device *d, char *buf, size_t len)
{
    gp_device_info i;
    gp_device_get_info(d, &i);
    snprintf(buf, len, "%s:%zu", i.backend, i.backend_index);
    return buf;
}

/* Every size class, at odd offsets, in both directions, on each kind of stream, blocking and
 * not, by the path gpuport picks and through pinned staging memory: the destination must hold
 * the source's bytes exactly and nothing else may change. The largest, copied between two GPUs
 * only, takes three of the GPU's own 64 MiB staging chunks where they are one GPU of two plugins
 * (transfer.c); elsewhere it would only repeat, slowly, what the one before proves. */
static void copy_pairs(void);
static void copies_between_devices(void **state)
{
    (void)state;
    unsetenv("GPUPORT_COPY_PATH");
    copy_pairs();
    setenv("GPUPORT_COPY_PATH", "staged", 1);
    copy_pairs();
    unsetenv("GPUPORT_COPY_PATH");
}

static void copy_pairs(void)
{
    gp_device *other[64];
    size_t n_other = others(other);
    const size_t chunk = (size_t)8 << 20;
    const size_t sizes[] = {0, 1, 7, 4099, 3 * chunk + 5, 16 * chunk + 4099};
    const size_t nsizes = sizeof sizes / sizeof sizes[0], most = sizes[nsizes - 1] + 64;
    unsigned char *src = tst_malloc(most), *got = tst_malloc(most), *ref = tst_malloc(most);
    tst_random_bytes(src, most, 99);
    tst_random_bytes(ref, most, 98);
    for (size_t o = 0; o < n_other; o++) {
        char nm[32];
        name_of(other[o], nm, sizeof nm);
        gp_device_info oi;
        GP_OK(gp_device_get_info(other[o], &oi));
        size_t classes = nsizes - (oi.type != GP_DEVICE_GPU || tst_info.type != GP_DEVICE_GPU);
        size_t big = sizes[classes - 1] + 64; /* the buffers' size */
        for (int dir = 0; dir < 2; dir++) {
            gp_device *from = dir ? other[o] : tst_dev, *to = dir ? tst_dev : other[o];
            gp_buffer *a = NULL, *b = NULL;
            gp_stream *sf = NULL, *st = NULL;
            GP_OK(gp_buffer_create(from, GP_MEMORY_DEVICE, big, &a));
            GP_OK(gp_buffer_create(to, dir ? GP_MEMORY_PINNED : GP_MEMORY_DEVICE, big, &b));
            GP_OK(gp_stream_create(from, &sf));
            GP_OK(gp_stream_create(to, &st));
            GP_OK(gp_buffer_write(NULL, a, 0, src, big));
            for (size_t z = 0; z < classes; z++)
                for (int way = 0; way < 4; way++) {
                    size_t n = sizes[z], soff = 3 + (size_t)way, doff = 5 + (size_t)way;
                    gp_stream *s = way == 0 ? NULL : way == 1 ? sf : st;
                    GP_OK(gp_buffer_write(NULL, b, 0, ref, big));
                    if (way == 3)
                        GP_OK(gp_buffer_copy_async(s, b, doff, a, soff, n));
                    else
                        GP_OK(gp_buffer_copy(s, b, doff, a, soff, n));
                    GP_OK(gp_device_synchronize(from));
                    GP_OK(gp_device_synchronize(to));
                    GP_OK(gp_buffer_read(NULL, b, 0, got, big));
                    /* before the range: untouched; in it: the source; after it: untouched */
                    size_t at = tst_first_diff(got, ref, doff), x;
                    if (at == (size_t)-1 && (x = tst_first_diff(got + doff, src + soff, n)) != (size_t)-1) at = doff + x;
                    if (at == (size_t)-1 && (x = tst_first_diff(got + doff + n, ref + doff + n, big - doff - n)) != (size_t)-1)
                        at = doff + n + x;
                    if (at != (size_t)-1)
                        fail_msg("%s copy of %zu bytes %s %s (way %d, path %s): byte %zu differs",
                                 dir ? "incoming" : "outgoing", n, dir ? "from" : "to", nm, way,
                                 getenv("GPUPORT_COPY_PATH") ? "staged" : "auto", at);
                }
            /* A stream of a third party's device is refused. */
            gp_stream *third = NULL;
            for (size_t t = 0; t < n_other && !third; t++)
                if (other[t] != from && other[t] != to) GP_OK(gp_stream_get_default(other[t], &third));
            if (third) GP_EXPECT(gp_buffer_copy(third, b, 0, a, 0, 16), GP_ERROR_DEVICE_MISMATCH);
            GP_OK(gp_stream_destroy(sf));
            GP_OK(gp_stream_destroy(st));
            GP_OK(gp_buffer_destroy(a));
            GP_OK(gp_buffer_destroy(b));
        }
    }
    free(src);
    free(got);
    free(ref);
}

/* A stream of one device waits for an event of another: work queued after the wait sees what
 * the other device did before the event. */
static void events_across_devices(void **state)
{
    (void)state;
    gp_device *other[64];
    size_t n_other = others(other);
    enum { N = 1 << 20 };
    uint32_t *v = tst_malloc(N * 4), *back = tst_malloc(N * 4);
    fill_u32(v, N, 17);
    for (size_t o = 0; o < n_other; o++) {
        gp_buffer *a = NULL, *b = tst_buffer(GP_MEMORY_DEVICE, N * 4);
        gp_stream *sa = NULL, *sb = NULL;
        gp_event *done = NULL;
        GP_OK(gp_buffer_create(other[o], GP_MEMORY_DEVICE, N * 4, &a));
        GP_OK(gp_stream_create(other[o], &sa));
        GP_OK(gp_stream_create(tst_dev, &sb));
        GP_OK(gp_event_create(other[o], &done));
        GP_OK(gp_buffer_write_async(sa, a, 0, v, N * 4));
        GP_OK(gp_map(sa, GP_MAP_SCALE, GP_U32, N, GP_VIEW(a), GP_VIEW(a), GP_VIEW(NULL), &(gp_scalar){.u = 9}));
        GP_OK(gp_event_record(done, sa));
        GP_OK(gp_stream_wait_event(sb, done));
        GP_OK(gp_buffer_copy(sb, b, 0, a, 0, N * 4));
        GP_OK(gp_buffer_read(sb, b, 0, back, N * 4));
        for (size_t i = 0; i < N; i++)
            if (back[i] != 9 * v[i]) fail_msg("element %zu is %u, expected %u", i, back[i], 9 * v[i]);
        /* Memory of the other device is not this device's to wrap. */
        gp_native_buffer nb;
        gp_buffer *w = NULL;
        GP_OK(gp_buffer_get_native(a, &nb));
        gp_status st = gp_buffer_wrap(tst_dev, &nb, GP_BORROW, &w);
        if (st != GP_ERROR_DEVICE_MISMATCH && st != GP_ERROR_INVALID_ARGUMENT)
            fail_msg("wrapping another device's memory: %s (%s)", gp_status_name(st), gp_last_error());
        assert_null(w);
        GP_OK(gp_event_destroy(done));
        GP_OK(gp_stream_destroy(sa));
        GP_OK(gp_stream_destroy(sb));
        GP_OK(gp_buffer_destroy(a));
        GP_OK(gp_buffer_destroy(b));
    }
    free(v);
    free(back);
}

const struct CMUnitTest tst_pair_tests[] = {
    cmocka_unit_test(copies_between_devices),
    cmocka_unit_test(events_across_devices),
};
const size_t tst_pair_tests_count = sizeof tst_pair_tests / sizeof tst_pair_tests[0];
