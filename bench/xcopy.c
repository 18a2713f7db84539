/* gpuport-bench: xcopy, gp_buffer_copy between every ordered pair of devices, and its anchor. */
#include "bench.h"

/* ---- Two devices: xcopy ---------------------------------------------------------------- */

/* One side's own best at moving n floats to or from host memory, timed as the bench times:
 * pinned cudaMemcpyAsync on a CUDA device (to_host: device to host), the host's copy loop on a
 * CPU device. 0 with why when the side has none. */
static double side_rate(dev_run *d, size_t n, int to_host, double *ms, char *what, size_t what_len)
{
    if (d->cuda_device >= 0) {
        char msg[300];
        if (cua.run(d->cuda_device, to_host ? GPA_CUDA_D2H : GPA_CUDA_H2D, n, hx, hout, opt.reps + 1, ms, msg,
                    sizeof msg)) {
            snprintf(what, what_len, "%s", msg);
            return 0;
        }
        snprintf(what, what_len, "pinned %s", to_host ? "D2H" : "H2D");
        return gpb_summarize(ms, opt.reps, (double)n * 4).rate;
    }
    if (d->info.type == GP_DEVICE_CPU) {
        for (int i = 0; i <= opt.reps; i++) {
            double t0 = gpb_now_ms();
            gpa_cpu_copy(hout, hx, n);
            ms[i] = gpb_now_ms() - t0;
        }
        snprintf(what, what_len, "host copy");
        return gpb_summarize(ms, opt.reps, (double)n * 4).rate;
    }
    snprintf(what, what_len, "%s: %s", d->spec, d->anchor_why);
    return 0;
}

static void bench_pair(dev_run *a, dev_run *b, double *ms)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->spec, sizeof r->spec, "%s>%s", a->spec, b->spec);
    snprintf(r->device, sizeof r->device, "%s -> %s", a->info.name, b->info.name);
    snprintf(r->backend, sizeof r->backend, "%s>%s", a->info.backend, b->info.backend);
    r->k = K_XCOPY;
    size_t sizes[MAX_SIZES];
    gpb_sizes_for(K_XCOPY, a->info.type == GP_DEVICE_CPU || b->info.type == GP_DEVICE_CPU, sizes);
    size_t n = sizes[0], bytes = n * 4;
    r->size = n;
    snprintf(r->shape, sizeof r->shape, "%zu", n);
    if (gpb_host_data(n) || (uint64_t)bytes * 2 > a->info.global_mem_bytes || (uint64_t)bytes * 2 > b->info.global_mem_bytes) {
        gpb_note(r, "%zu bytes do not fit", bytes);
        return;
    }
    gp_buffer *src = NULL, *dst = NULL;
    gp_status st = gp_buffer_create(a->dev, GP_MEMORY_DEVICE, bytes, &src);
    if (!st) st = gp_buffer_create(b->dev, GP_MEMORY_DEVICE, bytes, &dst);
    if (!st) st = gp_buffer_write(NULL, src, 0, hx, bytes);
    if (!st) st = gp_buffer_fill(NULL, dst, 0, bytes, &nan_bits, 4);
    gpb_progress("%s xcopy %zu: gpuport, %d runs", r->spec, n, opt.reps + 1);
    for (int i = 0; !st && i <= opt.reps; i++) {
        double t0 = gpb_now_ms();
        st = gp_buffer_copy(NULL, dst, 0, src, 0, bytes);
        ms[i] = gpb_now_ms() - t0;
    }
    if (!st) st = gp_buffer_read(NULL, dst, 0, hout, bytes);
    if (st) {
        r->failed = 1;
        gpb_note(r, "%s", gp_last_error());
    } else if (memcmp(hout, hx, bytes)) {
        gpb_check_failed(r, "gpuport", "the copy differs from the source");
    } else {
        r->gp = gpb_summarize(ms, opt.reps, (double)bytes);
        r->measured = 1;
    }
    gp_buffer_destroy(src);
    gp_buffer_destroy(dst);

    /* The anchor: peer between two CUDA devices, else the slower side's pinned (or host) copy. */
    char wa[200], wb[200];
    double rate = 0;
    if (a->cuda_device >= 0 && b->cuda_device >= 0 && a->cuda_device != b->cuda_device && cua.peer &&
        !strcmp(a->info.backend, "cuda") && !strcmp(b->info.backend, "cuda")) {
        gpb_progress("%s xcopy %zu: cudaMemcpyPeerAsync", r->spec, n);
        if (!cua.peer(b->cuda_device, a->cuda_device, n, hx, hout, opt.reps + 1, ms, wa, sizeof wa)) {
            rate = gpb_summarize(ms, opt.reps, (double)bytes).rate;
            snprintf(r->anchor, sizeof r->anchor, "cudaMemcpyPeerAsync");
        }
    } else {
        /* Each side's own copy to or from host memory; the anchor is the slower, but a CPU
         * device beside a GPU is host memory itself, so there the GPU's pinned copy is it. */
        gpb_progress("%s xcopy %zu: each side's own copy", r->spec, n);
        double ra = side_rate(a, n, 1, ms, wa, sizeof wa), rb = side_rate(b, n, 0, ms, wb, sizeof wb);
        int acpu = a->info.type == GP_DEVICE_CPU, bcpu = b->info.type == GP_DEVICE_CPU;
        int use_a = acpu != bcpu ? !acpu : ra < rb;
        rate = ra > 0 && rb > 0 ? (use_a ? ra : rb) : 0;
        if (rate > 0) snprintf(r->anchor, sizeof r->anchor, "%s", use_a ? wa : wb);
        else gpb_note(r, "no anchor: %s", ra > 0 ? wb : wa);
        if (rate > 0)
            gpb_note(r, "%s %.1f GB/s, %s %.1f GB/s; the anchor is %s", wa, ra, wb, rb,
                 acpu != bcpu ? "the GPU's" : "the slower");
    }
    if (rate > 0) {
        r->an.rate = rate;
        r->an.median_ms = (double)bytes / (rate * 1e6);
        r->an.min_ms = r->an.median_ms;
        r->anchor_measured = 1;
    }
}

void gpb_bench_pairs(dev_run *runs, size_t ndevs, double *ms)
{
    if (!(opt.kernels & 1u << K_XCOPY))
        return;
    for (size_t i = 0; i < ndevs; i++)
        for (size_t j = 0; j < ndevs; j++)
            if (i != j && runs[i].stream_ok && runs[j].stream_ok)
                bench_pair(&runs[i], &runs[j], ms);
}

