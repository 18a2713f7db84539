/* Runner: every cmocka group once per selected device (or --repeat N times in one process,
 * printing the host's RSS after each round, for soak runs); exit 77 when the backend has no
 * device. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    const struct CMUnitTest *tests;
    const size_t *count;
} groups[] = {
    {"device", tst_device_tests, &tst_device_tests_count},
    {"buffers", tst_buffer_tests, &tst_buffer_tests_count},
    {"copies", tst_copy_tests, &tst_copy_tests_count},
    {"streams", tst_stream_tests, &tst_stream_tests_count},
    {"programs", tst_kernel_tests, &tst_kernel_tests_count},
    {"launches", tst_launch_tests, &tst_launch_tests_count},
    {"threads", tst_thread_tests, &tst_thread_tests_count},
    {"bad-input", tst_bad_input_tests, &tst_bad_input_tests_count},
    {"cache", tst_cache_tests, &tst_cache_tests_count},
    {"map", tst_map_tests, &tst_map_tests_count},
    {"reduce", tst_reduce_tests, &tst_reduce_tests_count},
    {"scan", tst_scan_tests, &tst_scan_tests_count},
    {"stencil", tst_stencil_tests, &tst_stencil_tests_count},
    {"gemm", tst_gemm_tests, &tst_gemm_tests_count},
    {"interop", tst_interop_tests, &tst_interop_tests_count},
    {"pairs", tst_pair_tests, &tst_pair_tests_count},
};

/* 1 when spec ("opencl:0") is one of the comma-separated entries of list. */
static int spec_listed(const char *list, const char *spec)
{
    size_t len = strlen(spec);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ')
            p++;
        size_t n = strcspn(p, ", ");
        if (n == len && strncmp(p, spec, n) == 0)
            return 1;
        p += n;
    }
    return 0;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--backend cuda|hip|opencl] [--group NAME]... [--repeat N]\n"
                    "GPUPORT_TEST_DEVICES=opencl:0,cuda:0 limits the devices.\n", argv0);
    return 2;
}

static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

int main(int argc, char **argv)
{
    const char *backend = NULL, *only[16];
    size_t nonly = 0;
    long repeat = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backend = argv[++i];
        else if (strcmp(argv[i], "--group") == 0 && i + 1 < argc && nonly < 16)
            only[nonly++] = argv[++i];
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc && (repeat = atol(argv[++i])) > 0)
            continue;
        else
            return usage(argv[0]);
    }
    const char *filter = getenv("GPUPORT_TEST_DEVICES");
    if (filter && !*filter)
        filter = NULL;

    size_t count = 0;
    gp_status s = gp_device_count(&count);
    if (s != GP_SUCCESS) {
        fprintf(stderr, "gp_device_count: %s: %s\n", gp_status_name(s), gp_last_error());
        return 1;
    }
    gp_device **all = calloc(count ? count : 1, sizeof *all);
    size_t *selected = calloc(count ? count : 1, sizeof *selected);
    size_t nselected = 0;
    if (!all || !selected)
        return 1;
    for (size_t i = 0; i < count; i++) {
        gp_device_info info;
        s = gp_device_get(i, &all[i]);
        if (s == GP_SUCCESS)
            s = gp_device_get_info(all[i], &info);
        if (s != GP_SUCCESS) {
            fprintf(stderr, "device %zu: %s: %s\n", i, gp_status_name(s), gp_last_error());
            return 1;
        }
        char spec[64];
        snprintf(spec, sizeof spec, "%s:%zu", info.backend, info.backend_index);
        if (backend && strcmp(info.backend, backend) != 0)
            continue;
        if (filter && !spec_listed(filter, spec))
            continue;
        selected[nselected++] = i;
    }
    tst_all_devices = all;
    tst_all_count = count;

    if (nselected == 0) {
        /* GPUPORT_TEST_REQUIRE names backends that must have a device (CI's pocl): there a
         * missing device is a failure, not a skip. */
        const char *required = getenv("GPUPORT_TEST_REQUIRE");
        int must = backend && required && spec_listed(required, backend);
        fprintf(stderr, "no %s device to test%s; %s\n", backend ? backend : "gpuport",
                filter ? " in GPUPORT_TEST_DEVICES" : "", must ? "GPUPORT_TEST_REQUIRE says there must be one" : "skipping");
        free(all);
        free(selected);
        return must ? 1 : 77;
    }

    int failed = 0;
    for (long round = 1; round <= repeat; round++) {
    for (size_t d = 0; d < nselected; d++) {
        tst_dev = all[selected[d]];
        if (gp_device_get_info(tst_dev, &tst_info) != GP_SUCCESS)
            return 1;
        for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
            int wanted = nonly == 0;
            for (size_t o = 0; o < nonly; o++) wanted |= strcmp(only[o], groups[g].name) == 0;
            if (!wanted)
                continue;
            char name[512];
            snprintf(name, sizeof name, "%s:%zu (%s) %s", tst_info.backend, tst_info.backend_index, tst_info.name,
                     groups[g].name);
            printf("=== %s\n", name);
            fflush(stdout);
            failed += _cmocka_run_group_tests(name, groups[g].tests, *groups[g].count, NULL, NULL);
        }
    }
    if (repeat > 1) {
        printf("=== round %ld of %ld: %d failed so far, RSS %.1f MiB\n", round, repeat, failed, rss_mib());
        fflush(stdout);
    }
    }
    free(all);
    free(selected);
    return failed ? 1 : 0;
}
