/* gpuport-bench: one device, one kernel, one size (a job: its buffers, the timed runs, the
 * budget), and the loop over a device's kernels and sizes. */
#include "bench.h"




const unsigned nan_bits = 0xffffffffu; /* a NaN, so a kernel that writes nothing fails its check */

static gp_status enqueue(job *j, int vendor)
{
    gp_stream *s = j->d->stream;
    gp_buffer **b = j->buf;
    gp_scalar a = {.f = axpy_a};
    size_t n = j->size;
    switch (j->k) {
    case K_COPY: return gp_buffer_copy_async(s, b[2], 0, b[0], 0, n * sizeof(float));
    case K_AXPY: return gp_map(s, GP_MAP_AXPY, GP_F32, n, GP_VIEW(b[2]), GP_VIEW(b[0]), GP_VIEW(b[1]), &a);
    case K_REDUCE: return gp_reduce(s, GP_REDUCE_SUM, GP_F32, n, GP_VIEW(b[1]), GP_VIEW(b[2]));
    case K_SCAN: return gp_scan(s, GP_SCAN_SUM, 0, GP_F32, n, GP_VIEW(b[1]), GP_VIEW(b[2]));
    case K_SGEMM:
    case K_DGEMM:
        return gp_gemm(s, vendor ? GP_GEMM_VENDOR : GP_GEMM_GPUPORT, j->k == K_SGEMM ? GP_F32 : GP_F64, GP_ROW_MAJOR,
                       GP_NO_TRANS, GP_NO_TRANS, n, n, n, 1.0, GP_VIEW(b[0]), n, GP_VIEW(b[1]), n, 0.0,
                       GP_VIEW(b[2]), n);
    default: return gp_stencil_apply(s, &j->stencil, GP_VIEW(b[1]), GP_VIEW(b[0]), GP_VIEW(NULL));
    }
}

/* The result buffer filled with NaN before a timed series. */
static gp_status poison(job *j)
{
    gp_buffer *out = kd[j->k].shape == GRID2 || kd[j->k].shape == GRID3 ? j->buf[1] : j->buf[2];
    size_t bytes = j->k == K_REDUCE ? sizeof(float) : j->cells * gpb_elem_size(j->k);
    return gp_buffer_fill(j->d->stream, out, 0, bytes, &nan_bits, sizeof nan_bits);
}

/* A GEMM operand built on the host and written to the device. */
static gp_status upload_operand(job *j, int which)
{
    size_t elem = gpb_elem_size(j->k);
    void *h = malloc(j->cells * elem);
    if (!h)
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < j->cells; i++)
        if (j->k == K_DGEMM)
            ((double *)h)[i] = gpb_gemm_value(which, i);
        else
            ((float *)h)[i] = (float)gpb_gemm_value(which, i);
    gp_status st = gp_buffer_write(j->d->stream, j->buf[which], 0, h, j->cells * elem);
    free(h);
    return st;
}

gp_status gpb_setup(job *j)
{
    dev_run *d = j->d;
    enum shape sh = kd[j->k].shape;
    size_t bytes = j->cells * gpb_elem_size(j->k);
    int nbuf = sh == GRID2 || sh == GRID3 ? 2 : 3;
    if (sh != GEMM && gpb_host_data(j->cells))
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    gp_status st = GP_SUCCESS;
    for (int i = 0; i < nbuf && !st; i++)
        st = gp_buffer_create(d->dev, GP_MEMORY_DEVICE, bytes, &j->buf[i]);
    if (st)
        return st;
    if (sh == GEMM)
        return (st = upload_operand(j, 0)) ? st : upload_operand(j, 1);
    if (sh != LINE) {
        const tap *taps;
        const double *w;
        int m;
        gpb_stencil_of(j->k, &taps, &w, &m);
        j->stencil = (gp_stencil){.shape = j->k == K_JACOBI ? GP_STENCIL_5POINT
                                           : j->k == K_ST3X3 ? GP_STENCIL_3X3
                                                             : GP_STENCIL_7POINT,
                                  .type = GP_F32,
                                  .boundary = GP_BOUNDARY_FIXED,
                                  .nx = j->size,
                                  .ny = j->size,
                                  .nz = sh == GRID3 ? j->size : 1};
        memcpy(j->stencil.weights, w, (size_t)m * sizeof *w);
        return gp_buffer_write(d->stream, j->buf[0], 0, hx, bytes);
    }
    const float *y = j->k == K_AXPY ? hy : hs;
    if ((st = gp_buffer_write(d->stream, j->buf[0], 0, hx, bytes)))
        return st;
    return j->k == K_COPY ? GP_SUCCESS : gp_buffer_write(d->stream, j->buf[1], 0, y, bytes);
}

static void teardown(job *j)
{
    for (int i = 0; i < 3; i++)
        gp_buffer_destroy(j->buf[i]);
}

/* Reads the result back and checks it. */
static int check_device(job *j, result *r, const char *who)
{
    enum shape sh = kd[j->k].shape;
    if (sh == GEMM)
        return gpb_check_gemm(j->k, j->size, j->d->stream, j->buf[2], NULL, r, who);
    gp_buffer *out = sh == LINE ? j->buf[2] : j->buf[1];
    size_t bytes = j->k == K_REDUCE ? sizeof(float) : j->cells * sizeof(float);
    if (gp_buffer_read(j->d->stream, out, 0, hout, bytes))
        return gpb_check_failed(r, who, gp_last_error());
    return sh == LINE ? gpb_check_line(j->k, j->size, hout, r, who) : gpb_check_stencil(j->k, j->size, hout, r, who);
}



/* Times gpuport (vendor 0) or the vendor BLAS (1) with device events and checks the result;
 * returns 1 when f holds a checked figure. */
static int time_device(job *j, int vendor, double *ms, result *r, figure *f)
{
    dev_run *d = j->d;
    const char *who = vendor ? "anchor" : "gpuport";
    gp_status st;
    if ((st = poison(j)))
        goto failed;
    for (int i = 0; i <= opt.reps; i++) {
        if ((st = gp_event_record(d->ev[2 * i], d->stream)) || (st = enqueue(j, vendor)) ||
            (st = gp_event_record(d->ev[2 * i + 1], d->stream)))
            goto failed;
        /* The first two go alone: the first may include compiling, the second says how long
         * the rest would take. */
        if (i <= 1) {
            char why[40];
            if ((st = gp_stream_synchronize(d->stream)) ||
                (st = gp_event_elapsed_ms(d->ev[2 * i], d->ev[2 * i + 1], &ms[i])))
                goto failed;
            snprintf(why, sizeof why, "one took %.3g ms", ms[i]);
            if (i == 1 && gpb_over_budget(r, who, ms[1], why))
                return 0;
        }
    }
    if ((st = gp_stream_synchronize(d->stream)))
        goto failed;
    for (int i = 2; i <= opt.reps; i++)
        if ((st = gp_event_elapsed_ms(d->ev[2 * i], d->ev[2 * i + 1], &ms[i])))
            goto failed;
    if (check_device(j, r, who))
        return 0;
    *f = gpb_summarize(ms, opt.reps, j->work);
    gpb_remember(j, vendor, f);
    return 1;
failed:
    r->failed = 1;
    gpb_note(r, "%s: %s: %s", who, gp_status_name(st), gp_last_error()[0] ? gp_last_error() : gp_status_string(st));
    gp_stream_synchronize(d->stream); /* drain what was queued before the failure */
    return 0;
}

/* ---- Sizes and the loop over devices --------------------------------------------------- */

int gpb_contains_nocase(const char *s, const char *word)
{
    for (; *s; s++) {
        size_t i = 0;
        while (word[i] && s[i] && (s[i] | 32) == (word[i] | 32))
            i++;
        if (!word[i])
            return 1;
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The sizes kernel k runs at, smallest first (each foresees the next one's time): those asked
 * for this kernel, else those asked for every kernel, else its defaults for a CPU or a GPU. */
int gpb_sizes_for(enum kernel k, int cpu, size_t *sizes)
{
    int from = opt.nsizes[k] ? (int)k : K_COUNT;
    if (opt.nsizes[from]) {
        memcpy(sizes, opt.sizes[from], (size_t)opt.nsizes[from] * sizeof *sizes);
        qsort(sizes, (size_t)opt.nsizes[from], sizeof *sizes, cmp_size);
        return opt.nsizes[from];
    }
    if (opt.quick)
        return sizes[0] = kd[k].quick, 1;
    if (kd[k].shape == GEMM) {
        memcpy(sizes, gemm_sizes, sizeof gemm_sizes);
        return (int)(sizeof gemm_sizes / sizeof *gemm_sizes);
    }
    return sizes[0] = cpu ? kd[k].cpu : kd[k].gpu, 1;
}

/* The sizes of kernel k on one device; none for xcopy, a figure of two devices (bench_pairs). */
int gpb_sizes_of(enum kernel k, const gp_device_info *info, size_t *sizes)
{
    if (k == K_XCOPY && info)
        return 0;
    return gpb_sizes_for(k, !info || info->type == GP_DEVICE_CPU, sizes);
}

/* Fills a result's size fields; 0 when the job's buffers fit the device, else the reason in r. */
static int plan(job *j, result *r, const gp_device_info *info)
{
    enum shape sh = kd[j->k].shape;
    double side = (double)j->size;
    double cells = sh == LINE ? side : sh == GRID3 ? side * side * side : side * side; /* GEMM: N^2 */
    size_t s = j->size;
    if (sh == LINE) {
        /* 1D kernels keep their long-standing rule: cap the size so x, y and out fit in a
         * quarter of the device's memory. */
        uint64_t cap = info->global_mem_bytes / 4 / (3 * sizeof(float));
        if (cap && j->size > cap) {
            gpb_note(r, "%zu elements do not fit in a quarter of the device's memory: %zu instead", j->size,
                 (size_t)cap);
            j->size = s = (size_t)cap, cells = side = (double)cap;
        }
        snprintf(r->shape, sizeof r->shape, "%zu", s);
    } else if (sh == GRID2) {
        snprintf(r->shape, sizeof r->shape, "%zux%zu", s, s);
    } else if (sh == GRID3) {
        snprintf(r->shape, sizeof r->shape, "%zux%zux%zu", s, s, s);
    } else {
        snprintf(r->shape, sizeof r->shape, "N=%zu", s);
    }
    r->size = j->size;
    double need = (sh == GRID2 || sh == GRID3 ? 2 : 3) * cells * (double)gpb_elem_size(j->k);
    if (sh != LINE && need > (double)info->global_mem_bytes / 2) {
        gpb_note(r, "skipped: its buffers need %.2f GiB, over half of the device's %.2f GiB", need / (1u << 30),
             (double)info->global_mem_bytes / (1u << 30));
        return -1;
    }
    if (j->k == K_DGEMM && !info->fp64) {
        gpb_note(r, "skipped: the device has no f64");
        return -1;
    }
    j->cells = (size_t)cells;
    j->work = sh == GEMM ? 2 * side * side * side : kd[j->k].passes * cells * sizeof(float);
    return 0;
}

static void bench_job(dev_run *d, enum kernel k, size_t size, double *ms)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->spec, sizeof r->spec, "%s", d->spec);
    snprintf(r->device, sizeof r->device, "%s", d->info.name);
    snprintf(r->backend, sizeof r->backend, "%s", d->info.backend);
    r->nvidia_gpu = d->info.type == GP_DEVICE_GPU && gpb_contains_nocase(d->info.vendor, "nvidia");
    r->k = k;
    job j = {.d = d, .k = k, .size = size};
    if (plan(&j, r, &d->info))
        return;
    int cpu = d->info.type == GP_DEVICE_CPU, gemm = kd[k].shape == GEMM;
    int vendor = gemm && d->gemm_vendor;
    if (vendor)
        snprintf(r->anchor, sizeof r->anchor, "%s", d->gemm_vendor_text);
    int run_gp = !gpb_foreseen_over_budget(&j, r, 0, "gpuport");
    int run_vendor = vendor && !gpb_foreseen_over_budget(&j, r, 1, "anchor");
    gp_status st = run_gp || run_vendor ? gpb_setup(&j) : GP_SUCCESS;
    if (st) {
        r->failed = 1;
        gpb_note(r, "setup failed: %s", st == GP_ERROR_OUT_OF_HOST_MEMORY ? "out of host memory" : gp_last_error());
    } else {
        if (run_gp) {
            gpb_progress("%s %s %s: gpuport, %d runs", d->spec, kd[k].name, r->shape, opt.reps + 1);
            r->measured = time_device(&j, 0, ms, r, &r->gp);
        }
        if (run_vendor) {
            gpb_progress("%s %s %s: %s", d->spec, kd[k].name, r->shape, r->anchor);
            r->anchor_measured = time_device(&j, 1, ms, r, &r->an);
        }
    }
    teardown(&j);
    if (cpu && gemm && r->measured) gpb_openblas_note(&j, r, ms);
    if (vendor) {
        /* measured above, on the same buffers */
    } else if (cpu) {
        gpb_anchor_cpu(&j, r, ms);
    } else if (!gemm && d->cuda_device >= 0) {
        gpb_progress("%s %s %s: CUDA anchor on CUDA device %d", d->spec, kd[k].name, r->shape, d->cuda_device);
        gpb_anchor_cuda(r, d->cuda_device, j.cells, ms);
    } else {
        gpb_note(r, "no anchor: %s", gemm ? d->gemm_vendor_text : d->anchor_why);
    }
}

void gpb_bench_device(dev_run *d, double *ms)
{
    const char *setup_error = NULL;
    d->ev = calloc(2 * (size_t)(opt.reps + 1), sizeof *d->ev);
    if (!d->ev)
        setup_error = "out of host memory";
    else if (gp_stream_create(d->dev, &d->stream))
        setup_error = gp_last_error();
    d->stream_ok = !setup_error;
    for (; !setup_error && d->nev < 2 * (opt.reps + 1); d->nev++)
        if (gp_event_create(d->dev, &d->ev[d->nev]))
            setup_error = gp_last_error();
    for (int k = 0; k < K_COUNT; k++) {
        size_t sizes[MAX_SIZES];
        int ns = (opt.kernels & 1u << k) ? gpb_sizes_of((enum kernel)k, &d->info, sizes) : 0;
        for (int s = 0; s < ns; s++) {
            if (!setup_error) {
                bench_job(d, (enum kernel)k, sizes[s], ms);
                continue;
            }
            result *r = &results[nresults++];
            memset(r, 0, sizeof *r);
            snprintf(r->spec, sizeof r->spec, "%s", d->spec);
            snprintf(r->device, sizeof r->device, "%s", d->info.name);
            snprintf(r->backend, sizeof r->backend, "%s", d->info.backend);
            r->k = (enum kernel)k;
            r->size = sizes[s];
            snprintf(r->shape, sizeof r->shape, "%zu", sizes[s]);
            r->failed = 1;
            gpb_note(r, "setup failed: %s", setup_error);
        }
    }
    for (int i = 0; i < d->nev; i++)
        gp_event_destroy(d->ev[i]);
    free(d->ev);
    gp_stream_destroy(d->stream);
}

