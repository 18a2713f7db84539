/* gpuport-bench: what every file uses: a result's notes, the progress line, the clock, the
 * median of the runs, and the time budget. */
#include "bench.h"

/* Adds a sentence to a result's note, "; " between parts. */
void gpb_note(result *r, const char *fmt, ...)
{
    size_t len = strlen(r->note);
    if (len && len + 2 < sizeof r->note)
        len += (size_t)snprintf(r->note + len, sizeof r->note - len, "; ");
    if (len >= sizeof r->note)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + len, sizeof r->note - len, fmt, ap);
    va_end(ap);
}

/* What is running now, on stderr: one line rewritten in place on a terminal, else plain lines. */
void gpb_progress(const char *fmt, ...)
{
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (progress_tty)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s", nresults, nplanned, text);
    else
        fprintf(stderr, "gpuport-bench: [%zu/%zu] %s\n", nresults, nplanned, text);
}

double gpb_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ms holds reps + 1 runs; the first is dropped. work: bytes, or flops for GEMM, per run. */
figure gpb_summarize(double *ms, int reps, double work)
{
    figure f;
    qsort(ms + 1, (size_t)reps, sizeof *ms, cmp_double);
    f.median_ms = reps % 2 ? ms[1 + reps / 2] : (ms[reps / 2] + ms[1 + reps / 2]) / 2;
    f.min_ms = ms[1];
    f.rate = f.median_ms > 0 ? work / (f.median_ms * 1e6) : 0;
    return f;
}

size_t gpb_elem_size(enum kernel k)
{
    return k == K_DGEMM ? sizeof(double) : sizeof(float);
}

/* Whether a figure of reps + 1 runs of one_ms each would overrun the budget; says so in r. */
int gpb_over_budget(result *r, const char *who, double one_ms, const char *why)
{
    double total_s = one_ms * (opt.reps + 1) / 1e3;
    if (total_s <= budget_s)
        return 0;
    gpb_note(r, "%s skipped: %d runs would take about %.0f s (%s), over the %.0f s budget", who, opt.reps + 1, total_s,
         why, budget_s);
    return 1;
}

/* Whether the previous size's time, scaled by the work, foresees an overrun. */
int gpb_foreseen_over_budget(job *j, result *r, int anchor, const char *who)
{
    double work = j->d->last[j->k][anchor].work, ms = j->d->last[j->k][anchor].ms;
    char why[80];
    snprintf(why, sizeof why, "foreseen from %.3g ms at a smaller size", ms);
    return work > 0 && gpb_over_budget(r, who, ms * j->work / work, why);
}

void gpb_remember(job *j, int anchor, const figure *f)
{
    j->d->last[j->k][anchor].work = j->work;
    j->d->last[j->k][anchor].ms = f->median_ms;
}
