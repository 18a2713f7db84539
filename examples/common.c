#include "common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int in_word(char c)
{
    return isalnum((unsigned char)c) || c == '-';
}

/* Where "--name" stands in usage as a whole word; NULL when it does not. */
static const char *find_option(const char *usage, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(usage, name); p; p = strstr(p + 1, name))
        if ((p == usage || !in_word(p[-1])) && !in_word(p[len]))
            return p;
    return NULL;
}

void ex_parse(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++) {
        const char *p = strncmp(argv[i], "--", 2) == 0 ? find_option(usage, argv[i]) : NULL;
        int help = strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
        if (!p || help) {
            if (!help)
                fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[i]);
            fputs(usage, help ? stdout : stderr);
            exit(help ? 0 : 2);
        }
        p += strlen(argv[i]);
        if (p[0] == ' ' && isupper((unsigned char)p[1]) && ++i == argc) {
            fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i - 1]);
            exit(2);
        }
    }
}

int ex_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

const char *ex_string(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

double ex_number(int argc, char **argv, const char *name, double def)
{
    const char *s = ex_string(argc, argv, name, NULL);
    if (!s)
        return def;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0)) {
        fprintf(stderr, "%s: %s wants a number >= 0, not \"%s\"\n", argv[0], name, s);
        exit(2);
    }
    return v;
}

static int run_on(gp_device *dev, int (*run)(gp_device *, void *), void *ctx)
{
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));
    printf("== %s:%zu: %s (%s)\n", info.backend, info.backend_index, info.name,
           info.type == GP_DEVICE_GPU ? "gpu" : info.type == GP_DEVICE_CPU ? "cpu" : "other");
    fflush(stdout);
    return run(dev, ctx) != 0;
}

int ex_run(int argc, char **argv, int (*run)(gp_device *, void *), void *ctx)
{
    size_t count;
    CHECK(gp_device_count(&count));
    if (count == 0) {
        fprintf(stderr, "%s: no device (gpuport-info says why); skipping\n", argv[0]);
        return 77;
    }
    gp_device *dev;
    if (!ex_flag(argc, argv, "--all")) {
        const char *spec = ex_string(argc, argv, "--device", NULL);
        CHECK(spec ? gp_device_find(spec, &dev) : gp_device_default(&dev));
        return run_on(dev, run, ctx);
    }
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        CHECK(gp_device_get(i, &dev));
        failed |= run_on(dev, run, ctx);
    }
    return failed;
}

gp_status ex_timer_start(ex_timer *timer, gp_device *device, gp_stream *stream)
{
    timer->start = timer->stop = NULL;
    timer->stream = stream;
    gp_status s = gp_event_create(device, &timer->start);
    if (s == GP_SUCCESS)
        s = gp_event_create(device, &timer->stop);
    if (s == GP_SUCCESS)
        s = gp_event_record(timer->start, stream);
    if (s != GP_SUCCESS) {
        gp_event_destroy(timer->start);
        gp_event_destroy(timer->stop);
        timer->start = timer->stop = NULL;
    }
    return s;
}

gp_status ex_timer_stop(ex_timer *timer, double *ms)
{
    gp_status s = gp_event_record(timer->stop, timer->stream);
    if (s == GP_SUCCESS)
        s = gp_event_synchronize(timer->stop);
    if (s == GP_SUCCESS)
        s = gp_event_elapsed_ms(timer->start, timer->stop, ms);
    gp_event_destroy(timer->start);
    gp_event_destroy(timer->stop);
    timer->start = timer->stop = NULL;
    return s;
}

double ex_host_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
