/* Proves GPUPORT_TRACE writes one CSV row per command, with its device, stream, size and device
 * times, as soon as the stream is synchronized; and that an unwritable file, or a symbolic link
 * (to another file, which must stay as it was), turns tracing off with one message while every
 * call still succeeds. Its own process: the variable is read once. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuport.h"

#define OK(call)                                                                                   \
    do {                                                                                           \
        gp_status s_ = (call);                                                                     \
        if (s_ != GP_SUCCESS) fail_msg("%s -> %s: %s", #call, gp_status_name(s_), gp_last_error()); \
    } while (0)

enum { N = 1000, COLS = 12, MAX_ROWS = 64 };
enum { SEQ, DEVICE, DEVICE_NAME, STREAM, COMMAND, NAME, BYTES, WORK, CLOCK, START, END, DURATION };

static const char *path;
static char victim[4200]; /* --symlink: the file the link points at */
static const char victim_text[] = "a file of the user's that tracing must not overwrite\n";
static gp_device *dev;
static gp_device_info info;
static char dev_spec[48];

static const char *src = "GP_KERNEL void twice_plus_one(GP_GLOBAL const uint *x, GP_GLOBAL uint *y, uint n)\n"
                         "{\n"
                         "    uint i = gp_global_id(0);\n"
                         "    if (i < n) y[i] = 2u * x[i] + 1u;\n"
                         "}\n";

typedef struct row {
    char f[COLS][300];
} row;

/* Splits one CSV record (RFC 4180 quoting) into COLS fields; 0 when the count is wrong. */
static int parse(const char *line, row *r)
{
    int col = 0;
    size_t len = 0;
    int quoted = 0;
    memset(r, 0, sizeof *r);
    for (const char *p = line; *p && *p != '\n'; p++) {
        if (quoted) {
            if (*p == '"' && p[1] == '"') p++;
            else if (*p == '"') {
                quoted = 0;
                continue;
            }
        } else if (*p == '"') {
            quoted = 1;
            continue;
        } else if (*p == ',') {
            if (++col == COLS) return 0;
            len = 0;
            continue;
        }
        if (len + 1 < sizeof r->f[col]) r->f[col][len++] = *p;
    }
    return col == COLS - 1;
}

/* Every row of the file so far; checks the header. */
static size_t read_rows(row *rows)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "seq,device,device_name,stream,command,name,bytes,work,clock,start_us,end_us,duration_us\n");
    size_t n = 0;
    while (n < MAX_ROWS && fgets(line, sizeof line, f)) {
        if (!parse(line, &rows[n])) fail_msg("not %d fields: %s", COLS, line);
        n++;
    }
    fclose(f);
    return n;
}

/* Times are printed to the nanosecond; CUDA's event times are float milliseconds. */
static double slack(double us) { return 1e-3 + fabs(us) * FLT_EPSILON; }

static void check_times(const row *r, const char *clock)
{
    assert_string_equal(r->f[CLOCK], clock);
    double start = atof(r->f[START]), end = atof(r->f[END]), duration = atof(r->f[DURATION]);
    if (start < 0 || end < start || fabs(end - start - duration) > 2 * slack(end))
        fail_msg("%s row %s: start %f, end %f, duration %f", r->f[COMMAND], r->f[SEQ], start, end, duration);
}

/* bytes NULL: any positive count. */
static void check_row(const row *r, const char *stream, const char *command, const char *name, const char *bytes,
                      const char *work)
{
    assert_string_equal(r->f[DEVICE], dev_spec);
    assert_string_equal(r->f[DEVICE_NAME], info.name);
    assert_string_equal(r->f[STREAM], stream);
    assert_string_equal(r->f[COMMAND], command);
    assert_string_equal(r->f[NAME], name);
    if (bytes) assert_string_equal(r->f[BYTES], bytes);
    else assert_true(atoll(r->f[BYTES]) > 0);
    assert_string_equal(r->f[WORK], work);
    check_times(r, stream[0] ? "device" : "host");
}

static void one_row_per_command(void **state)
{
    (void)state;
    uint32_t in[N], out[N], pattern = 0xabcd1234u, n = N;
    for (uint32_t i = 0; i < N; i++) in[i] = i * 7u + 3u;
    gp_program *p;
    gp_kernel *k;
    gp_stream *s;
    gp_buffer *x, *y, *z;
    OK(gp_program_create(dev, src, NULL, &p));
    OK(gp_kernel_create(p, "twice_plus_one", &k));
    OK(gp_stream_create(dev, &s));
    OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof in, &x));
    OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof in, &y));
    OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof in, &z));

    size_t global = N;
    gp_arg args[] = {GP_BUFFER(x), GP_BUFFER(y), GP_VALUE(n)};
    OK(gp_buffer_write_async(s, x, 0, in, sizeof in));
    OK(gp_kernel_launch(s, k, 1, &global, NULL, 3, args));
    OK(gp_buffer_fill_async(s, z, 0, sizeof in, &pattern, sizeof pattern));
    OK(gp_buffer_copy_async(s, z, 0, y, 0, sizeof in / 2));
    OK(gp_buffer_read_async(s, z, 0, out, sizeof out));
    OK(gp_stream_synchronize(s));
    for (uint32_t i = 0; i < N; i++) assert_int_equal(out[i], i < N / 2 ? 2u * in[i] + 1u : pattern);

    /* Before any exit: the stream's rows are there once it is synchronized. */
    static row rows[MAX_ROWS];
    assert_int_equal(read_rows(rows), 6);
    char bytes[24], half[24];
    snprintf(bytes, sizeof bytes, "%zu", sizeof in);
    snprintf(half, sizeof half, "%zu", sizeof in / 2);
    check_row(&rows[0], "", "compile", "twice_plus_one", NULL, ""); /* bytes: the binary's size */
    check_row(&rows[1], "1", "write", "host->device", bytes, "");
    check_row(&rows[2], "1", "kernel", "twice_plus_one", "", "1000*1*1");
    check_row(&rows[3], "1", "fill", "", bytes, "");
    check_row(&rows[4], "1", "copy", "device->device", half, "");
    check_row(&rows[5], "1", "read", "device->host", bytes, "");
    /* One stream runs in order: each command starts after the one before it ends. */
    for (int i = 2; i < 6; i++) {
        assert_true(atoll(rows[i].f[SEQ]) > atoll(rows[i - 1].f[SEQ]));
        double prev_end = atof(rows[i - 1].f[END]), start = atof(rows[i].f[START]);
        if (start < prev_end - 2 * slack(prev_end))
            fail_msg("%s starts at %f, before %s ends at %f", rows[i].f[COMMAND], start, rows[i - 1].f[COMMAND],
                     prev_end);
    }

    /* The default stream is number 0; a device synchronize writes its rows too. */
    OK(gp_buffer_fill_async(NULL, x, 64, 128, &pattern, sizeof pattern));
    OK(gp_device_synchronize(dev));
    assert_int_equal(read_rows(rows), 7);
    check_row(&rows[6], "0", "fill", "", "128", "");

    OK(gp_buffer_destroy(x));
    OK(gp_buffer_destroy(y));
    OK(gp_buffer_destroy(z));
    OK(gp_stream_destroy(s));
    OK(gp_kernel_destroy(k));
    OK(gp_program_destroy(p));
}

/* path names a file that cannot be created: one message on stderr, no file, calls succeed. */
static void unwritable(void **state)
{
    (void)state;
    char err_path[] = "/tmp/gpuport-trace-stderr-XXXXXX";
    int fd = mkstemp(err_path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0 && dup2(fd, 2) == 2);
    uint32_t v[4] = {1, 2, 3, 4}, back[4];
    gp_buffer *b;
    gp_status st[4];
    st[0] = gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof v, &b);
    st[1] = gp_buffer_write(NULL, b, 0, v, sizeof v);
    st[2] = gp_buffer_read(NULL, b, 0, back, sizeof back);
    st[3] = gp_buffer_destroy(b);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    for (int i = 0; i < 4; i++) assert_int_equal(st[i], GP_SUCCESS);
    assert_memory_equal(v, back, sizeof v);
    if (victim[0]) {
        char kept[sizeof victim_text + 8] = "";
        FILE *vf = fopen(victim, "r");
        assert_non_null(vf);
        size_t n = fread(kept, 1, sizeof kept - 1, vf);
        fclose(vf);
        kept[n] = '\0';
        unlink(path);
        unlink(victim);
        assert_string_equal(kept, victim_text);
    } else {
        assert_int_not_equal(access(path, F_OK), 0);
    }

    char text[4096] = "";
    FILE *f = fdopen(fd, "r");
    assert_non_null(f);
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    unlink(err_path);
    const char *first = strstr(text, "GPUPORT_TRACE: cannot open");
    if (!first || strstr(first + 1, "GPUPORT_TRACE") || !strstr(text, path) ||
        (victim[0] && !strstr(text, "symbolic link")))
        fail_msg("expected one message naming %s, got: %s", path, text);
}

int main(int argc, char **argv)
{
    int bad = argc != 3 || (strcmp(argv[1], "--file") != 0 && strcmp(argv[1], "--unwritable") != 0 &&
                             strcmp(argv[1], "--symlink") != 0);
    if (bad) {
        fprintf(stderr, "usage: %s --file|--unwritable|--symlink PATH.csv\n", argv[0]);
        return 2;
    }
    path = argv[2];
    unlink(path);
    if (strcmp(argv[1], "--symlink") == 0) {
        snprintf(victim, sizeof victim, "%s.victim", path);
        FILE *vf = fopen(victim, "w");
        if (!vf || fputs(victim_text, vf) < 0 || fclose(vf) != 0 || symlink(victim, path) != 0) {
            perror(victim);
            return 1;
        }
    }
    setenv("GPUPORT_TRACE", path, 1);

    size_t count = 0;
    if (gp_device_count(&count) != GP_SUCCESS || count == 0) {
        fprintf(stderr, "SKIP: no device\n");
        return 77;
    }
    /* GPUPORT_DEVICE picks another device than the first, to trace each backend in turn. */
    const char *want = getenv("GPUPORT_DEVICE");
    gp_status st = want && *want ? gp_device_default(&dev) : gp_device_get(0, &dev);
    if (st != GP_SUCCESS || gp_device_get_info(dev, &info) != GP_SUCCESS) {
        fprintf(stderr, "no device to trace: %s\n", gp_last_error());
        return 1;
    }
    snprintf(dev_spec, sizeof dev_spec, "%s:%zu", info.backend, info.backend_index);

    const struct CMUnitTest file[] = {cmocka_unit_test(one_row_per_command)};
    const struct CMUnitTest none[] = {cmocka_unit_test(unwritable)};
    return strcmp(argv[1], "--file") == 0 ? cmocka_run_group_tests_name(dev_spec, file, NULL, NULL)
                                          : cmocka_run_group_tests_name(dev_spec, none, NULL, NULL);
}
