/* gpuport-test, the conformance suite: every cmocka group once per selected device, one section
 * per device and a summary line per device, results also as JUnit XML and a JSON report; the
 * build tree's ctest runs the same program. Each test runs alone with its output captured, so
 * that its outcome, time and message (the reason for a skip, the error for a failure) are known
 * per test. Exit 0 when nothing failed, 1 when something did, 77 with no device to test. */
#define _GNU_SOURCE
#include "common.h"
#include "rss.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
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
    {"cuda-c", tst_cuda_c_tests, &tst_cuda_c_tests_count},
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
enum { NGROUPS = sizeof groups / sizeof groups[0] };

typedef struct outcome {
    int device, group;
    const char *test;
    char result; /* 'p'assed, 'f'ailed, 's'kipped */
    double seconds;
    char *message; /* what the test printed: a skip's reason, a failure's error */
} outcome;

static outcome *outcomes;
static size_t noutcomes, cap;
static int verbose; /* --verbose or GPUPORT_DEBUG: what passing tests print is shown too (stderr) */

/* Whether --group asked for the test: no --group, its group's name, or "group/test". */
static int wanted(const char *const *only, size_t nonly, const char *group, const char *test)
{
    size_t n = strlen(group);
    for (size_t o = 0; o < nonly; o++)
        if (!strncmp(only[o], group, n) && (!only[o][n] || (only[o][n] == '/' && !strcmp(only[o] + n + 1, test))))
            return 1;
    return nonly == 0;
}

static const char usage[] =
    "usage: gpuport-test [--device SPEC]... [--backend NAME] [--group NAME]... [--list] [--json FILE]\n"
    "                    [--junit FILE] [--repeat N] [--verbose]\n"
    "  --device SPEC  a device to test (cuda:0, opencl:1, gpu, cpu; repeatable); default: every device\n"
    "  --backend NAME every device of one backend (cuda, hip, opencl)\n"
    "  --group NAME   only this group of tests, or GROUP/TEST only that test (repeatable); --list names them\n"
    "  --list         the devices and the groups with their tests, then exit\n"
    "  --json FILE    a JSON report: gpuport's version, each device's info, every test's outcome\n"
    "  --junit FILE   the outcomes as JUnit XML, one testsuite per device and group\n"
    "  --repeat N     every test N times in one process, the host's RSS after each round (soak)\n"
    "  --verbose      show what passing tests print too (as GPUPORT_DEBUG does); failures and skips\n"
    "                 always show theirs\n"
    "GPUPORT_TEST_DEVICES=opencl:0,cuda:0 also narrows the devices. Exit status: 0 when nothing\n"
    "failed, 1 when a test failed, 2 on bad usage, 77 when there is no device to test.\n";

/* 1 when spec ("opencl:0") is one of the comma-separated entries of list. */
static int spec_listed(const char *list, const char *spec)
{
    size_t len = strlen(spec);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ') p++;
        size_t n = strcspn(p, ", ");
        if (n == len && strncmp(p, spec, n) == 0) return 1;
        p += n;
    }
    return 0;
}


static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(n > 0 ? (size_t)n + 1 : 1);
    size_t got = s && n > 0 ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (s) s[got] = 0;
    return s;
}

/* Runs one test as a group of its own, its stdout and stderr captured in out_path and cmocka's
 * XML in xml_path, and records its outcome. */
static char run_one(int device, int group, const struct CMUnitTest *test, const char *tmp)
{
    char out_path[4200], xml_path[4200], name[512];
    snprintf(out_path, sizeof out_path, "%s/out", tmp);
    snprintf(xml_path, sizeof xml_path, "%s/result.xml", tmp);
    snprintf(name, sizeof name, "%s:%zu %s", tst_info.backend, tst_info.backend_index, groups[group].name);
    unlink(xml_path);
    setenv("CMOCKA_XML_FILE", xml_path, 1);
    cmocka_set_message_output(CM_OUTPUT_XML);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2), fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
    double t0 = now_s();
    int failed = _cmocka_run_group_tests(name, test, 1, NULL, NULL);
    double seconds = now_s() - t0;
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1), dup2(saved_err, 2), close(saved_out), close(saved_err);
    char *xml = read_file(xml_path), *text = read_file(out_path);
    char result = failed ? 'f' : xml && strstr(xml, "<skipped") ? 's' : 'p';
    free(xml);
    if (noutcomes == cap) {
        outcome *grown = realloc(outcomes, (cap = cap ? 2 * cap : 256) * sizeof *outcomes);
        if (!grown) exit(1); /* a test program: no memory left to report with */
        outcomes = grown;
    }
    /* The message without a trailing newline. */
    size_t len = text ? strlen(text) : 0;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) text[--len] = 0;
    outcomes[noutcomes++] = (outcome){device, group, test->name, result, seconds, text};
    if (verbose && len && result == 'p') fprintf(stderr, "%s\n", text);
    printf("  %s %-36s %8.3f s%s%s\n", result == 'p' ? "PASS" : result == 'f' ? "FAIL" : "SKIP", test->name, seconds,
           len && result != 'p' ? "  " : "", len && result != 'p' ? text : "");
    fflush(stdout);
    return result;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '<') fputs("&lt;", f);
        else if (c == '>') fputs("&gt;", f);
        else if (c == '&') fputs("&amp;", f);
        else if (c == '"') fputs("&quot;", f);
        else if (c >= 0x20 || c == '\n' || c == '\t') fputc(c, f);
    }
}

static const char *outcome_name(char r) { return r == 'p' ? "passed" : r == 'f' ? "failed" : "skipped"; }

static int write_json(const char *path, gp_device **devs, const size_t *selected, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "{\n  \"tool\": \"gpuport-test\",\n  \"gpuport\": ");
    json_string(f, gp_version_string());
    fprintf(f, ",\n  \"date\": \"%s\",\n  \"host\": {\"name\": ", when);
    json_string(f, u.nodename);
    fprintf(f, ", \"system\": ");
    json_string(f, u.sysname);
    fprintf(f, ", \"release\": ");
    json_string(f, u.release);
    fprintf(f, ", \"machine\": ");
    json_string(f, u.machine);
    fprintf(f, "},\n  \"devices\": [");
    for (size_t d = 0; d < n; d++) {
        gp_device_info info;
        gp_device_get_info(devs[selected[d]], &info);
        fprintf(f, "%s\n    {\"spec\": \"%s:%zu\", \"name\": ", d ? "," : "", info.backend, info.backend_index);
        json_string(f, info.name);
        fprintf(f, ", \"vendor\": ");
        json_string(f, info.vendor);
        fprintf(f, ", \"backend\": \"%s\", \"type\": \"%s\", \"driver_version\": ", info.backend,
                info.type == GP_DEVICE_GPU ? "gpu" : info.type == GP_DEVICE_CPU ? "cpu" : "other");
        json_string(f, info.driver_version);
        fprintf(f, ", \"runtime_version\": ");
        json_string(f, info.runtime_version);
        fprintf(f, ",\n     \"global_mem_bytes\": %llu, \"compute_units\": %u, \"fp64\": %s,\n     \"tests\": [",
                (unsigned long long)info.global_mem_bytes, info.compute_units, info.fp64 ? "true" : "false");
        size_t counts[3] = {0, 0, 0}, k = 0;
        for (size_t i = 0; i < noutcomes; i++) {
            const outcome *o = &outcomes[i];
            if (o->device != (int)d) continue;
            counts[o->result == 'p' ? 0 : o->result == 'f' ? 1 : 2]++;
            fprintf(f, "%s\n       {\"group\": \"%s\", \"name\": \"%s\", \"outcome\": \"%s\", \"seconds\": %.3f, \"message\": ",
                    k++ ? "," : "", groups[o->group].name, o->test, outcome_name(o->result), o->seconds);
            json_string(f, o->result == 'p' ? "" : o->message);
            fputc('}', f);
        }
        fprintf(f, "],\n     \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu}", counts[0], counts[1], counts[2]);
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) ? (perror(path), 1) : 0;
}

static int write_junit(const char *path, gp_device **devs, const size_t *selected, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<testsuites name=\"gpuport-test %s\">\n", gp_version_string());
    for (size_t d = 0; d < n; d++) {
        gp_device_info info;
        gp_device_get_info(devs[selected[d]], &info);
        for (int g = 0; g < NGROUPS; g++) {
            size_t tests = 0, failures = 0, skipped = 0;
            double time = 0;
            for (size_t i = 0; i < noutcomes; i++)
                if (outcomes[i].device == (int)d && outcomes[i].group == g)
                    tests++, failures += outcomes[i].result == 'f', skipped += outcomes[i].result == 's',
                        time += outcomes[i].seconds;
            if (!tests) continue;
            fprintf(f, "  <testsuite name=\"%s:%zu ", info.backend, info.backend_index);
            xml_text(f, info.name);
            fprintf(f, " %s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
                    groups[g].name, tests, failures, skipped, time);
            for (size_t i = 0; i < noutcomes; i++) {
                const outcome *o = &outcomes[i];
                if (o->device != (int)d || o->group != g) continue;
                fprintf(f, "    <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\">", groups[g].name, o->test, o->seconds);
                if (o->result != 'p') {
                    fprintf(f, o->result == 'f' ? "<failure message=\"" : "<skipped message=\"");
                    xml_text(f, o->message);
                    fprintf(f, "\"/>");
                }
                fprintf(f, "</testcase>\n");
            }
            fprintf(f, "  </testsuite>\n");
        }
    }
    fprintf(f, "</testsuites>\n");
    return fclose(f) ? (perror(path), 1) : 0;
}

/* A folder of the process's own, for the captured output and, unless GPUPORT_CACHE_DIR is set,
 * the kernel cache, so that the suite never touches the user's. */
static char tmp_dir[4096];

static void remove_tmp(void)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (tmp_dir[0] && system(cmd) != 0) fprintf(stderr, "gpuport-test: could not remove %s\n", tmp_dir);
}

int main(int argc, char **argv)
{
    const char *backend = NULL, *only[NGROUPS], *specs[64], *json = NULL, *junit = NULL;
    size_t nonly = 0, nspecs = 0;
    long repeat = 1;
    int list = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--backend") && v) backend = argv[++i];
        else if (!strcmp(a, "--group") && v && nonly < NGROUPS) only[nonly++] = argv[++i];
        else if (!strcmp(a, "--device") && v && nspecs < 64) specs[nspecs++] = argv[++i];
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--junit") && v) junit = argv[++i];
        else if (!strcmp(a, "--repeat") && v && (repeat = atol(argv[++i])) > 0) continue;
        else if (!strcmp(a, "--list")) list = 1;
        else if (!strcmp(a, "--verbose")) verbose = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return fputs(usage, stdout), 0;
        else return fprintf(stderr, "gpuport-test: unknown or incomplete option '%s'\n%s", a, usage), 2;
    }
    for (size_t o = 0; o < nonly; o++) {
        int known = 0;
        for (int g = 0; g < NGROUPS; g++)
            for (size_t t = 0; t < *groups[g].count; t++) known |= wanted(&only[o], 1, groups[g].name, groups[g].tests[t].name);
        if (!known) return fprintf(stderr, "gpuport-test: no group or test '%s' (--list names them)\n", only[o]), 2;
    }
    verbose |= getenv("GPUPORT_DEBUG") && *getenv("GPUPORT_DEBUG");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/gpuport-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) return perror("gpuport-test: a temporary folder"), 1;
    atexit(remove_tmp);
    if (!getenv("GPUPORT_CACHE_DIR")) {
        char cache[4200];
        snprintf(cache, sizeof cache, "%s/kernel-cache", tmp_dir);
        setenv("GPUPORT_CACHE_DIR", cache, 1);
    }

    const char *filter = getenv("GPUPORT_TEST_DEVICES");
    if (filter && !*filter) filter = NULL;
    size_t count = 0;
    gp_status s = gp_device_count(&count);
    if (s != GP_SUCCESS) return fprintf(stderr, "gp_device_count: %s: %s\n", gp_status_name(s), gp_last_error()), 1;
    gp_device **all = calloc(count ? count : 1, sizeof *all);
    size_t *selected = calloc(count ? count : 1, sizeof *selected), nselected = 0;
    if (!all || !selected) return 1;
    for (size_t i = 0; i < count; i++) {
        gp_device_info info;
        s = gp_device_get(i, &all[i]);
        if (s == GP_SUCCESS) s = gp_device_get_info(all[i], &info);
        if (s != GP_SUCCESS) {
            fprintf(stderr, "device %zu: %s: %s\n", i, gp_status_name(s), gp_last_error());
            free(all);
            free(selected);
            return 1;
        }
        char spec[64];
        snprintf(spec, sizeof spec, "%s:%zu", info.backend, info.backend_index);
        int wanted = (!backend || !strcmp(info.backend, backend)) && (!filter || spec_listed(filter, spec));
        if (nspecs) {
            int named = 0;
            for (size_t k = 0; k < nspecs; k++) {
                gp_device *d = NULL;
                named |= gp_device_find(specs[k], &d) == GP_SUCCESS && d == all[i];
            }
            wanted &= named;
        }
        if (wanted) selected[nselected++] = i;
    }
    for (size_t k = 0; k < nspecs; k++) {
        gp_device *d = NULL;
        if (gp_device_find(specs[k], &d) != GP_SUCCESS) {
            fprintf(stderr, "gpuport-test: --device %s: %s\n", specs[k], gp_last_error());
            free(all);
            free(selected);
            return 77;
        }
    }
    tst_all_devices = all;
    tst_all_count = count;

    if (list) {
        printf("devices:\n");
        for (size_t d = 0; d < nselected; d++) {
            gp_device_info info;
            gp_device_get_info(all[selected[d]], &info);
            printf("  %s:%zu  %s\n", info.backend, info.backend_index, info.name);
        }
        printf("groups:\n");
        for (int g = 0; g < NGROUPS; g++) {
            printf("  %s:", groups[g].name);
            for (size_t t = 0; t < *groups[g].count; t++) printf(" %s", groups[g].tests[t].name);
            printf("\n");
        }
        free(all);
        free(selected);
        return 0;
    }
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

    printf("gpuport-test, gpuport %s\n", gp_version_string());
    for (long round = 1; round <= repeat; round++) {
        for (size_t d = 0; d < nselected; d++) {
            tst_dev = all[selected[d]];
            if (gp_device_get_info(tst_dev, &tst_info) != GP_SUCCESS) break; /* a device just listed: not expected */
            printf("\n=== %s:%zu: %s (%s, driver %s)\n", tst_info.backend, tst_info.backend_index, tst_info.name,
                   tst_info.vendor, tst_info.driver_version);
            for (int g = 0; g < NGROUPS; g++) {
                int header = 0;
                for (size_t t = 0; t < *groups[g].count; t++) {
                    if (!wanted(only, nonly, groups[g].name, groups[g].tests[t].name)) continue;
                    if (!header++) printf("--- %s\n", groups[g].name);
                    run_one((int)d, g, &groups[g].tests[t], tmp_dir);
                }
            }
        }
        if (repeat > 1) {
            size_t failed = 0;
            for (size_t i = 0; i < noutcomes; i++) failed += outcomes[i].result == 'f';
            printf("=== round %ld of %ld: %zu failed so far, RSS %.1f MiB\n", round, repeat, failed, tst_rss_mib());
        }
    }

    printf("\nsummary:\n");
    size_t total_failed = 0;
    for (size_t d = 0; d < nselected; d++) {
        gp_device_info info;
        gp_device_get_info(all[selected[d]], &info);
        size_t c[3] = {0, 0, 0};
        for (size_t i = 0; i < noutcomes; i++)
            if (outcomes[i].device == (int)d) c[outcomes[i].result == 'p' ? 0 : outcomes[i].result == 'f' ? 1 : 2]++;
        total_failed += c[1];
        printf("%s:%zu %s: %zu passed, %zu failed, %zu skipped\n", info.backend, info.backend_index, info.name, c[0],
               c[1], c[2]);
        for (size_t i = 0; i < noutcomes; i++) {
            const outcome *o = &outcomes[i];
            if (o->device == (int)d && o->result != 'p')
                printf("    %s %s/%s: %.200s\n", o->result == 'f' ? "failed " : "skipped", groups[o->group].name,
                       o->test, o->message);
        }
    }
    int status = total_failed ? 1 : 0;
    if (json && write_json(json, all, selected, nselected)) status = 1;
    if (junit && write_junit(junit, all, selected, nselected)) status = 1;
    for (size_t i = 0; i < noutcomes; i++) free(outcomes[i].message);
    free(outcomes);
    free(all);
    free(selected);
    return status;
}
