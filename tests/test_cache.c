/* Proves the kernel cache writes entries to GPUPORT_CACHE_DIR, reuses them, rebuilds damaged ones,
 * ones copied over another entry's name and anything that is not a regular file, and falls back
 * to memory where the folder cannot be written. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, nftw, strdup */
#define _XOPEN_SOURCE 700
#include "common.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fixture {
    char dir[512];
    char *saved; /* GPUPORT_CACHE_DIR before the test, restored after */
    int had_saved;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    const char *old = getenv("GPUPORT_CACHE_DIR");
    f->had_saved = old != NULL;
    f->saved = old ? strdup(old) : NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/gpuport-cache-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir))
        return -1;
    return setenv("GPUPORT_CACHE_DIR", f->dir, 1);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    if (f->had_saved)
        setenv("GPUPORT_CACHE_DIR", f->saved, 1);
    else
        unsetenv("GPUPORT_CACHE_DIR");
    int rc = f->dir[0] ? nftw(f->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) : 0;
    free(f->saved);
    free(f);
    return rc;
}

/* Calls fn on every regular file below dir; returns how many there are. */
static size_t for_each_file(const char *dir, void (*fn)(const char *path, off_t size))
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            n += for_each_file(path, fn);
        } else if (S_ISREG(st.st_mode)) {
            n++;
            if (fn)
                fn(path, st.st_size);
        }
    }
    closedir(d);
    return n;
}

static void overwrite_with_garbage(const char *path, off_t size)
{
    unsigned char junk[4096];
    size_t n = size > 0 && (size_t)size < sizeof junk ? (size_t)size : sizeof junk;
    tst_random_bytes(junk, n, 31337);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(junk, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void truncate_to_zero(const char *path, off_t size)
{
    (void)size;
    assert_int_equal(truncate(path, 0), 0);
}

static void truncate_to_half(const char *path, off_t size)
{
    assert_int_equal(truncate(path, size / 2), 0);
}

/* Same size, inverted second half: only a checksum (or the loader) can tell. */
static void invert_second_half(const char *path, off_t size)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    unsigned char *buf = tst_malloc((size_t)size);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    for (off_t i = size / 2; i < size; i++)
        buf[i] = (unsigned char)~buf[i];
    assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
    assert_int_equal(fwrite(buf, 1, (size_t)size, fp), (size_t)size);
    free(buf);
    assert_int_equal(fclose(fp), 0);
}

/* A source no other test of this process compiles, so the in-memory cache cannot answer for it. */
static char *unique_source(void)
{
    static unsigned counter;
    char *src = tst_malloc(1024);
    snprintf(src, 1024,
             "#define SALT %uu\n"
             "#ifndef MUL\n#define MUL 1\n#endif\n"
             "GP_KERNEL void affine(GP_GLOBAL uint *v, uint n)\n"
             "{\n"
             "    uint i = gp_global_id(0);\n"
             "    if (i < n) v[i] = v[i] * MUL + SALT;\n"
             "}\n",
             (unsigned)getpid() * 1000u + ++counter);
    return src;
}

static uint32_t salt_of(const char *src)
{
    return (uint32_t)strtoul(src + strlen("#define SALT "), NULL, 10);
}

/* Creates the program and checks it computes v * mul + salt; returns its info. */
static gp_program_info create_and_run(const char *src, const char *options, uint32_t mul)
{
    enum { N = 333 };
    uint32_t v[N], ref[N];
    const uint32_t salt = salt_of(src);
    for (uint32_t i = 0; i < N; i++) {
        v[i] = i * 17 + 5;
        ref[i] = v[i] * mul + salt;
    }
    gp_program *p = tst_program(src, options);
    gp_program_info info;
    GP_OK(gp_program_get_info(p, &info));
    gp_kernel *k = tst_kernel(p, "affine");
    gp_buffer *b = tst_buffer(GP_MEMORY_DEVICE, sizeof v);
    GP_OK(gp_buffer_write(NULL, b, 0, v, sizeof v));
    uint32_t n = N;
    size_t global = N;
    gp_arg args[] = {GP_BUFFER(b), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, NULL, 2, args));
    GP_OK(gp_buffer_read(NULL, b, 0, v, sizeof v));
    GP_OK(gp_buffer_destroy(b));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
    assert_memory_equal(v, ref, sizeof v);
    return info;
}

static void entry_written_and_reused(void **state)
{
    fixture *f = *state;
    char *src = unique_source();
    assert_int_equal(for_each_file(f->dir, NULL), 0);
    gp_program_info a = create_and_run(src, NULL, 1);
    assert_int_equal(a.from_cache, 0);
    assert_int_equal(a.cache_on_disk, 1);
    size_t files = for_each_file(f->dir, NULL);
    assert_true(files >= 1);
    gp_program_info b = create_and_run(src, NULL, 1);
    assert_int_equal(b.from_cache, 1);
    assert_int_equal(b.cache_on_disk, 1);
    assert_int_equal(b.binary_bytes, a.binary_bytes);
    assert_int_equal(for_each_file(f->dir, NULL), files);
    free(src);
}

static void options_and_source_are_part_of_the_key(void **state)
{
    fixture *f = *state;
    char *src = unique_source(), *other = unique_source();
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 0);
    size_t files = for_each_file(f->dir, NULL);
    assert_int_equal(create_and_run(src, "-DMUL=3", 3).from_cache, 0);
    assert_true(for_each_file(f->dir, NULL) > files);
    files = for_each_file(f->dir, NULL);
    assert_int_equal(create_and_run(other, NULL, 1).from_cache, 0);
    assert_true(for_each_file(f->dir, NULL) > files);
    /* Each of them is now its own hit. */
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 1);
    assert_int_equal(create_and_run(src, "-DMUL=3", 3).from_cache, 1);
    assert_int_equal(create_and_run(other, NULL, 1).from_cache, 1);
    free(src);
    free(other);
}

static void damaged_entries_are_rebuilt(void **state)
{
    fixture *f = *state;
    void (*damage[])(const char *, off_t) = {overwrite_with_garbage, truncate_to_zero, truncate_to_half,
                                                  invert_second_half};
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        char *src = unique_source();
        assert_int_equal(create_and_run(src, NULL, 1).from_cache, 0);
        assert_true(for_each_file(f->dir, damage[i]) >= 1);
        gp_program_info again = create_and_run(src, NULL, 1);
        if (again.from_cache != 0)
            fail_msg("damage %zu: the damaged entry was used", i);
        assert_int_equal(again.cache_on_disk, 1);
        gp_program_info third = create_and_run(src, NULL, 1);
        if (third.from_cache != 1)
            fail_msg("damage %zu: the rebuilt entry was not written back", i);
        free(src);
    }
}

/* The one entry file that is not `other` (NULL: any), copied into path. */
static char found_entry[1024];
static const char *skip_entry;
static void remember(const char *path, off_t size)
{
    (void)size;
    if (!skip_entry || strcmp(path, skip_entry) != 0)
        snprintf(found_entry, sizeof found_entry, "%s", path);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(out), 0);
}

/* An entry copied over another program's entry is a whole, valid entry, but for another key: it
 * must be rebuilt, not run (the copy computes another salt). */
static void entry_under_another_name_is_rebuilt(void **state)
{
    fixture *f = *state;
    char *a = unique_source(), *b = unique_source(), entry_a[1024];
    create_and_run(a, NULL, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(f->dir, remember), 1);
    snprintf(entry_a, sizeof entry_a, "%s", found_entry);
    create_and_run(b, NULL, 1);
    skip_entry = entry_a;
    assert_int_equal(for_each_file(f->dir, remember), 2);
    copy_file(entry_a, found_entry);
    gp_program_info again = create_and_run(b, NULL, 1); /* checks b's salt */
    assert_int_equal(again.from_cache, 0);
    assert_int_equal(create_and_run(b, NULL, 1).from_cache, 1);
    free(a);
    free(b);
}

/* A FIFO where an entry should be: the create must neither block on it nor use it. */
static void fifo_in_place_of_an_entry(void **state)
{
    fixture *f = *state;
    char *src = unique_source();
    create_and_run(src, NULL, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(f->dir, remember), 1);
    assert_int_equal(unlink(found_entry), 0);
    assert_int_equal(mkfifo(found_entry, 0600), 0);
    alarm(120); /* a blocked open would hang the suite: fail it instead */
    gp_program_info again = create_and_run(src, NULL, 1);
    alarm(0);
    assert_int_equal(again.from_cache, 0);
    struct stat st;
    assert_int_equal(stat(found_entry, &st), 0);
    assert_true(S_ISREG(st.st_mode)); /* the rebuilt entry replaced the FIFO */
    free(src);
}

static void unwritable_folder_falls_back_to_memory(void **state)
{
    fixture *f = *state;
    char file[600], below[700];
    snprintf(file, sizeof file, "%s/afile", f->dir);
    snprintf(below, sizeof below, "%s/cache", file);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(setenv("GPUPORT_CACHE_DIR", below, 1), 0);

    char *src = unique_source();
    gp_program_info a = create_and_run(src, NULL, 1);
    assert_int_equal(a.from_cache, 0);
    assert_int_equal(a.cache_on_disk, 0);
    gp_program_info b = create_and_run(src, NULL, 1);
    assert_int_equal(b.from_cache, 1);
    assert_int_equal(b.cache_on_disk, 0);
    /* Nothing but the file itself is in the folder. */
    assert_int_equal(for_each_file(f->dir, NULL), 1);
    free(src);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
const struct CMUnitTest tst_cache_tests[] = {
    T(entry_written_and_reused),
    T(options_and_source_are_part_of_the_key),
    T(damaged_entries_are_rebuilt),
    T(entry_under_another_name_is_rebuilt),
    T(fifo_in_place_of_an_entry),
    T(unwritable_folder_falls_back_to_memory),
};
const size_t tst_cache_tests_count = sizeof tst_cache_tests / sizeof tst_cache_tests[0];
