/* gpuport-bench: the output: the table, CSV and JSON, the comparison of NVIDIA's OpenCL with the
 * CUDA backend, and the SVG chart. */
#include "bench.h"

/* OpenCL on an NVIDIA GPU against gpuport's CUDA backend on the device of the same name. */
void gpb_compare_with_cuda(void)
{
    for (size_t i = 0; i < nresults; i++) {
        result *r = &results[i];
        if (!r->nvidia_gpu || strcmp(r->backend, "opencl") || !r->measured)
            continue;
        for (size_t j = 0; j < nresults; j++) {
            const result *c = &results[j];
            if (!strcmp(c->backend, "cuda") && c->k == r->k && !strcmp(c->shape, r->shape) && c->measured &&
                c->gp.rate > 0 && !strcmp(c->device, r->device)) {
                r->vs_cuda = r->gp.rate / c->gp.rate;
                break;
            }
        }
    }
}

/* ---- Output ---------------------------------------------------------------------------- */

static double ratio_of(const result *r)
{
    return r->measured && r->anchor_measured && r->an.rate > 0 ? r->gp.rate / r->an.rate : 0;
}

static const char *status_of(const result *r)
{
    return r->failed ? "FAIL" : r->measured ? "ok" : "skip";
}

/* "1234.5 GB/s", "850.2 GFLOP/s", "45.31 TFLOP/s". */
static void rate_text(char *text, size_t len, int have, double rate, enum kernel k)
{
    if (!have)
        snprintf(text, len, "-");
    else if (kd[k].shape != GEMM)
        snprintf(text, len, "%.1f GB/s", rate);
    else if (rate >= 1000)
        snprintf(text, len, "%.2f TFLOP/s", rate / 1000);
    else
        snprintf(text, len, "%.1f GFLOP/s", rate);
}

static void put_escaped(FILE *f, const char *s, int json)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (json && (c == '"' || c == '\\'))
            fprintf(f, "\\%c", c);
        else if (json && c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (!json && c == '"')
            fputs("\"\"", f);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* CSV and JSON: one field each, numbers at full precision, empty or null where there is none. */
static void put_field(int first, const char *key, const char *string, int have, double number)
{
    if (opt.json)
        printf("%s\"%s\": ", first ? "" : ", ", key);
    else if (!first)
        putchar(',');
    if (string)
        put_escaped(stdout, string, opt.json);
    else if (have)
        printf("%.6g", number);
    else if (opt.json)
        printf("null");
}

void gpb_report_machine(void)
{
    static const char *const keys[] = {"device", "device_name", "backend", "kernel", "size", "shape", "median_ms",
                                       "min_ms", "rate", "unit", "anchor", "anchor_median_ms", "anchor_min_ms",
                                       "anchor_rate", "ratio", "vs_cuda", "check", "note"};
    if (opt.csv)
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            printf("%s%s", i ? "," : "", keys[i]);
    printf(opt.json ? "[" : "\n");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        double ratio = ratio_of(r);
        if (opt.json)
            printf("%s\n  {", i ? "," : "");
        put_field(1, keys[0], r->spec, 0, 0);
        put_field(0, keys[1], r->device, 0, 0);
        put_field(0, keys[2], r->backend, 0, 0);
        put_field(0, keys[3], kd[r->k].name, 0, 0);
        put_field(0, keys[4], NULL, 1, (double)r->size);
        put_field(0, keys[5], r->shape, 0, 0);
        put_field(0, keys[6], NULL, r->measured, r->gp.median_ms);
        put_field(0, keys[7], NULL, r->measured, r->gp.min_ms);
        put_field(0, keys[8], NULL, r->measured, r->gp.rate);
        put_field(0, keys[9], kd[r->k].shape == GEMM ? "GFLOP/s" : "GB/s", 0, 0);
        put_field(0, keys[10], r->anchor, 0, 0);
        put_field(0, keys[11], NULL, r->anchor_measured, r->an.median_ms);
        put_field(0, keys[12], NULL, r->anchor_measured, r->an.min_ms);
        put_field(0, keys[13], NULL, r->anchor_measured, r->an.rate);
        put_field(0, keys[14], NULL, ratio > 0, ratio);
        put_field(0, keys[15], NULL, r->vs_cuda > 0, r->vs_cuda);
        put_field(0, keys[16], status_of(r), 0, 0);
        put_field(0, keys[17], r->note, 0, 0);
        printf(opt.json ? "}" : "\n");
    }
    if (opt.json)
        printf("\n]\n");
}

void gpb_report_table(void)
{
    printf("%-9s %-7s %-10s %11s %10s %10s %14s  %-22s %14s %6s %7s  %s\n", "device", "backend", "kernel", "size",
           "median ms", "min ms", "rate", "anchor", "anchor rate", "ratio", "vs cuda", "check");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        char med[24] = "-", min[24] = "-", rate[24], arate[24], ratio[16] = "-", vs[16] = "-";
        if (r->measured) {
            snprintf(med, sizeof med, "%.4f", r->gp.median_ms);
            snprintf(min, sizeof min, "%.4f", r->gp.min_ms);
        }
        rate_text(rate, sizeof rate, r->measured, r->gp.rate, r->k);
        rate_text(arate, sizeof arate, r->anchor_measured, r->an.rate, r->k);
        if (ratio_of(r) > 0)
            snprintf(ratio, sizeof ratio, "%.3f", ratio_of(r));
        if (r->vs_cuda > 0)
            snprintf(vs, sizeof vs, "%.3f", r->vs_cuda);
        printf("%-9s %-7s %-10s %11s %10s %10s %14s  %-22.22s %14s %6s %7s  %s\n", r->spec, r->backend, kd[r->k].name,
               r->shape, med, min, rate, r->anchor_measured ? r->anchor : "-", arate, ratio, vs, status_of(r));
    }
    int any = 0;
    for (size_t i = 0; i < nresults; i++)
        if (results[i].note[0])
            printf("%s%s %s %s: %s\n", any++ ? "" : "\nnotes:\n", results[i].spec, kd[results[i].k].name,
                   results[i].shape, results[i].note);
}

/* ---- The chart ------------------------------------------------------------------------- */

static void svg_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

/* Grouped bars: one group per kernel and size, one bar per device (backend and device, in the
 * order measured), each gpuport's figure over its anchor's on the same device. The y axis is that
 * ratio, not GB/s or GFLOP/s: it is the one scale on which a bandwidth kernel and a GEMM, a GPU
 * and a CPU, sit side by side (absolute figures span five orders of magnitude and would need an
 * axis per kernel), and it answers the project's question, how close gpuport comes to the vendor
 * on the same device. The scale is logarithmic and bars grow from 1 (the anchor), up where
 * gpuport is faster and down where slower: 2x faster and 2x slower sit equally far from the
 * anchor, and a GPU at 0.9 stays readable beside a CPU device at 8. Absolute figures are in each
 * bar's tooltip and in the table. */
enum { BAR = 18, GAP = 28, LEFT = 64, TOP = 70, HEIGHT = 340, LEGEND_ROW = 18 };
static const char *const colours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                      "#56B4E9", "#D55E00", "#F0E442", "#000000"};

/* The chart's layout: one series a device, one group a kernel and size, the axis from 2^lo to
 * 2^hi (at least 1/2 to 2). */
typedef struct chart {
    const char *series[MAX_DEVICES];
    int nseries;
    struct group {
        enum kernel k;
        const char *shape;
    } *groups;
    int ngroups, lo, hi, group_w, width, legend_top;
} chart;

static double chart_y(const chart *c, double v) { return TOP + (c->hi - log2(v)) / (c->hi - c->lo) * HEIGHT; }

/* 0, or -1 out of memory. Groups in kernel order, each kernel's sizes in the order first met. */
static int chart_layout(chart *c)
{
    for (size_t i = 0; i < nresults; i++) {
        int s = 0;
        while (s < c->nseries && strcmp(c->series[s], results[i].spec))
            s++;
        if (s == c->nseries && c->nseries < MAX_DEVICES)
            c->series[c->nseries++] = results[i].spec;
    }
    c->groups = calloc(nresults ? nresults : 1, sizeof *c->groups);
    c->lo = -1, c->hi = 1;
    if (!c->groups)
        return -1;
    for (int k = 0; k < K_COUNT; k++)
        for (size_t i = 0; i < nresults; i++) {
            const result *r = &results[i];
            int g = 0;
            while (g < c->ngroups && !(c->groups[g].k == r->k && !strcmp(c->groups[g].shape, r->shape)))
                g++;
            if (r->k == (enum kernel)k && g == c->ngroups)
                c->groups[c->ngroups++] = (struct group){r->k, r->shape};
        }
    for (size_t i = 0; i < nresults; i++)
        if (ratio_of(&results[i]) > 0) {
            double e = log2(ratio_of(&results[i]));
            c->lo = e < c->lo ? (int)floor(e) : c->lo;
            c->hi = e > c->hi ? (int)ceil(e) : c->hi;
        }
    c->group_w = c->nseries * BAR + GAP < 84 ? 84 : c->nseries * BAR + GAP; /* room for "128x128x128" */
    c->width = LEFT + c->ngroups * c->group_w + 20;
    if (c->width < 980) /* the subtitle's width */
        c->width = 980;
    c->legend_top = TOP + HEIGHT + 56;
    return 0;
}

/* The title and the axis. */
static void chart_axis(FILE *f, const chart *c)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            c->width, c->legend_top + c->nseries * LEGEND_ROW + 16);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">gpuport-bench, gpuport %s: gpuport / "
               "anchor on the same device</text>\n",
            LEFT, gp_version_string());
    fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#444\">median of %d runs; 1 = the anchor (cudaMemcpy D2D, CUB, the "
               "vendor BLAS, or a C loop on the host for CPU devices); above it gpuport is faster</text>\n",
            LEFT, opt.reps);
    for (int e = c->lo; e <= c->hi; e++) {
        double py = chart_y(c, ldexp(1, e));
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", LEFT, c->width - 20, py, py,
                e ? "#ddd" : "#c00");
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s%g</text>\n", LEFT - 6, py + 4,
                e < 0 ? "1/" : "", ldexp(1, e < 0 ? -e : e));
    }
    fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">gpuport / anchor (log "
               "scale)</text>\n",
            TOP + HEIGHT / 2);
}

/* One result's bar at x, with its figures in a tooltip; or why it has none. */
static void chart_bar(FILE *f, const chart *c, const result *r, int x, int s)
{
    double v = ratio_of(r), y1 = chart_y(c, 1.0);
    if (v > 0 && !r->failed) {
        double y2 = chart_y(c, v);
        char gp_rate[24], an_rate[24];
        rate_text(gp_rate, sizeof gp_rate, 1, r->gp.rate, r->k);
        rate_text(an_rate, sizeof an_rate, 1, r->an.rate, r->k);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>", x + 1,
                y2 < y1 ? y2 : y1, BAR - 2, fabs(y2 - y1) > 1 ? fabs(y2 - y1) : 1, colours[s % 8]);
        svg_text(f, r->spec);
        fprintf(f, " %s %s: %s, anchor ", kd[r->k].name, r->shape, gp_rate);
        svg_text(f, r->anchor);
        fprintf(f, " %s, ratio %.3f</title></rect>\n", an_rate, v);
        fprintf(f, "<text transform=\"translate(%d,%.1f) rotate(-90)\" font-size=\"10\"%s>%.2f</text>\n",
                x + BAR / 2 + 4, v >= 1 ? y2 - 3 : y2 + 3, v >= 1 ? "" : " text-anchor=\"end\"", v);
    } else {
        fprintf(f, "<text transform=\"translate(%d,%.1f) rotate(-90)\" font-size=\"10\" fill=\"%s\">%s</text>\n",
                x + BAR / 2 + 4, y1 - 3, r->failed ? "#c00" : "#888",
                r->failed ? "FAIL" : r->measured ? "no anchor" : "skipped");
    }
}

/* Every group's bars, one a series, and its labels. */
static void chart_groups(FILE *f, const chart *c)
{
    for (int g = 0; g < c->ngroups; g++) {
        int x0 = LEFT + g * c->group_w + (c->group_w - c->nseries * BAR) / 2;
        for (int s = 0; s < c->nseries; s++) {
            const result *r = NULL;
            for (size_t i = 0; i < nresults && !r; i++)
                if (results[i].k == c->groups[g].k && !strcmp(results[i].shape, c->groups[g].shape) &&
                    !strcmp(results[i].spec, c->series[s]))
                    r = &results[i];
            if (r)
                chart_bar(f, c, r, x0 + s * BAR, s);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x0 + c->nseries * BAR / 2,
                TOP + HEIGHT + 18, kd[c->groups[g].k].name);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#444\">%s</text>\n",
                x0 + c->nseries * BAR / 2, TOP + HEIGHT + 32, c->groups[g].shape);
    }
}

static void chart_legend(FILE *f, const chart *c)
{
    for (int s = 0; s < c->nseries; s++) {
        const char *name = "";
        for (size_t i = 0; i < nresults; i++)
            if (!strcmp(results[i].spec, c->series[s]))
                name = results[i].device;
        int y = c->legend_top + s * LEGEND_ROW;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n<text x=\"%d\" y=\"%d\">",
                LEFT, y - 10, colours[s % 8], LEFT + 18, y);
        svg_text(f, c->series[s]);
        fputs("  ", f);
        svg_text(f, name);
        fputs("</text>\n", f);
    }
}

int gpb_plot(const char *path)
{
    chart c = {0};
    if (chart_layout(&c))
        return -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        free(c.groups);
        return -1;
    }
    chart_axis(f, &c);
    chart_groups(f, &c);
    chart_legend(f, &c);
    fputs("</svg>\n", f);
    free(c.groups);
    return fclose(f) ? -1 : 0;
}

