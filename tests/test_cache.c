/* Proves the kernel cache writes entries to GPUPORT_CACHE_DIR, reuses them, rebuilds damaged ones,
 * ones copied over another entry's name and anything that is not a regular file, and falls back
 * to memory where the folder cannot be written; and that it trusts no folder or entry that
 * someone else could have written (another owner, group- or world-writable, a link), keeps a
 * folder of its own inside a shared sticky one, and reads another owner's entries only when
 * GPUPORT_CACHE_TRUST names that owner. Cases that need another owner run only as root. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, nftw, strdup */
#define _XOPEN_SOURCE 700
#include "common.h"
#include "core/internal.h" /* gp__sha256, to forge an entry's plain checksum */

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fixture {
    char dir[512];
    char *saved; /* GPUPORT_CACHE_DIR before the test, restored after */
    int had_saved;
    char *saved_trust; /* GPUPORT_CACHE_TRUST likewise */
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
    f->saved_trust = tst_save_env("GPUPORT_CACHE_TRUST");
    unsetenv("GPUPORT_CACHE_TRUST");
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
    tst_restore_env("GPUPORT_CACHE_TRUST", f->saved_trust);
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
        /* the folder's secret (cache.c) is no entry */
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "secret") == 0)
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

/* The uid of "nobody", for folders and entries of another owner; skips where this process
 * cannot give a file away (only root can). */
static uid_t other_user(void)
{
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || !pw)
        skip();
    return pw->pw_uid;
}

/* f->dir/name made with exactly mode (no umask), owned by owner unless that is -1. */
static void make_folder(const fixture *f, const char *name, mode_t mode, uid_t owner, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", f->dir, name);
    assert_int_equal(mkdir(path, 0700), 0);
    if (owner != (uid_t)-1)
        assert_int_equal(chown(path, owner, (gid_t)-1), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* With GPUPORT_CACHE_DIR at dir, kernels are compiled, kept in memory (a second create is a hit
 * from memory), nothing is written below dir, and gp_cache_get_info names dir and says why. */
static void refused(const char *dir, const char *why)
{
    assert_int_equal(setenv("GPUPORT_CACHE_DIR", dir, 1), 0);
    size_t before = for_each_file(dir, NULL);
    char *src = unique_source();
    gp_program_info a = create_and_run(src, NULL, 1), b = create_and_run(src, NULL, 1);
    assert_int_equal(a.from_cache, 0);
    assert_int_equal(a.cache_on_disk, 0);
    assert_int_equal(b.from_cache, 1);
    assert_int_equal(b.cache_on_disk, 0);
    assert_int_equal(for_each_file(dir, NULL), before);
    gp_cache_info info;
    GP_OK(gp_cache_get_info(&info));
    assert_int_equal(info.on_disk, 0);
    if (!strstr(info.reason, dir) || !strstr(info.reason, why))
        fail_msg("the reason should name %s and say '%s': '%s'", dir, why, info.reason);
    free(src);
}

static void folder_of_another_user_is_refused(void **state)
{
    char dir[600];
    make_folder(*state, "theirs", 0700, other_user(), dir, sizeof dir);
    refused(dir, "belongs to uid");
}

static void world_writable_folder_is_refused(void **state)
{
    char dir[600];
    make_folder(*state, "open", 0777, (uid_t)-1, dir, sizeof dir);
    refused(dir, "mode 0777");
}

static void group_writable_folder_is_refused(void **state)
{
    char dir[600];
    make_folder(*state, "group", 0770, (uid_t)-1, dir, sizeof dir);
    refused(dir, "mode 0770");
}

/* A link to a good folder: whoever can change the link could point it elsewhere later. */
static void linked_folder_is_refused(void **state)
{
    fixture *f = *state;
    char dir[600], link[600];
    make_folder(f, "real", 0700, (uid_t)-1, dir, sizeof dir);
    snprintf(link, sizeof link, "%s/link", f->dir);
    assert_int_equal(symlink(dir, link), 0);
    refused(link, "symbolic link");
    assert_int_equal(for_each_file(dir, NULL), 0);
}

/* A sticky folder anyone can write (a course's /tmp/gpuport-cache): entries go to this user's own
 * <uid> folder inside it, made 0700, and are reused from disk. */
static void sticky_shared_folder_gets_a_folder_per_user(void **state)
{
    fixture *f = *state;
    char dir[600], mine[700];
    make_folder(f, "shared", 01777, (uid_t)-1, dir, sizeof dir);
    snprintf(mine, sizeof mine, "%s/%u", dir, (unsigned)geteuid());
    assert_int_equal(setenv("GPUPORT_CACHE_DIR", dir, 1), 0);
    char *src = unique_source();
    gp_program_info a = create_and_run(src, NULL, 1), b = create_and_run(src, NULL, 1);
    assert_int_equal(a.cache_on_disk, 1);
    assert_int_equal(b.from_cache, 1);
    assert_int_equal(b.cache_on_disk, 1);
    struct stat st;
    assert_int_equal(lstat(mine, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(for_each_file(mine, NULL), 1);
    gp_cache_info info;
    GP_OK(gp_cache_get_info(&info));
    assert_string_equal(info.folder, mine);
    assert_int_equal(info.on_disk, 1);
    assert_string_equal(info.reason, "");
    free(src);
}

/* Someone else made this user's <uid> folder in the shared one first: it is not used. */
static void planted_folder_per_user_is_refused(void **state)
{
    fixture *f = *state;
    uid_t other = other_user();
    char dir[600], mine[700];
    make_folder(f, "shared", 01777, (uid_t)-1, dir, sizeof dir);
    snprintf(mine, sizeof mine, "%s/%u", dir, (unsigned)geteuid());
    assert_int_equal(mkdir(mine, 0700), 0);
    assert_int_equal(chown(mine, other, (gid_t)-1), 0);
    refused(dir, "belongs to uid");
}

/* The one entry of a program compiled into f->dir, damaged by change; the next create must not
 * use it, rebuild it and write it back as this user's own, which the create after that uses. */
static void entry_refused_after(fixture *f, void (*change)(const char *entry, const fixture *f))
{
    char *src = unique_source();
    create_and_run(src, NULL, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(f->dir, remember), 1);
    char entry[1024];
    snprintf(entry, sizeof entry, "%s", found_entry);
    change(entry, f);
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 0);
    struct stat st;
    assert_int_equal(lstat(entry, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_mode & 077, 0);
    gp_program_info again = create_and_run(src, NULL, 1);
    assert_int_equal(again.from_cache, 1);
    assert_int_equal(again.cache_on_disk, 1);
    free(src);
}

static uid_t nobody;
static void give_away(const char *entry, const fixture *f)
{
    (void)f;
    assert_int_equal(chown(entry, nobody, (gid_t)-1), 0);
}

static void make_0666(const char *entry, const fixture *f)
{
    (void)f;
    assert_int_equal(chmod(entry, 0666), 0);
}

static void make_0620(const char *entry, const fixture *f)
{
    (void)f;
    assert_int_equal(chmod(entry, 0620), 0);
}

/* The entry moved to another name, a link to it in its place. */
static void link_elsewhere(const char *entry, const fixture *f)
{
    char moved[700];
    snprintf(moved, sizeof moved, "%s/moved", f->dir);
    assert_int_equal(rename(entry, moved), 0);
    assert_int_equal(symlink(moved, entry), 0);
}

static void entry_of_another_user_is_refused(void **state)
{
    nobody = other_user();
    entry_refused_after(*state, give_away);
}

static void entry_writable_by_all_is_refused(void **state) { entry_refused_after(*state, make_0666); }

static void entry_writable_by_its_group_is_refused(void **state) { entry_refused_after(*state, make_0620); }

static void linked_entry_is_refused(void **state) { entry_refused_after(*state, link_elsewhere); }

/* A teacher's read-only cache: a folder and entries of another owner, mode 0755 and 0644, are
 * read only while GPUPORT_CACHE_TRUST names that owner. */
static void trusted_owner_is_read(void **state)
{
    fixture *f = *state;
    uid_t other = other_user();
    char dir[600], trust[32];
    make_folder(f, "teacher", 0700, (uid_t)-1, dir, sizeof dir);
    assert_int_equal(setenv("GPUPORT_CACHE_DIR", dir, 1), 0);
    char *src = unique_source();
    assert_int_equal(create_and_run(src, NULL, 1).cache_on_disk, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(dir, remember), 1);
    assert_int_equal(chown(found_entry, other, (gid_t)-1), 0);
    assert_int_equal(chmod(found_entry, 0644), 0);
    assert_int_equal(chown(dir, other, (gid_t)-1), 0);
    assert_int_equal(chmod(dir, 0755), 0);

    snprintf(trust, sizeof trust, "12345,%u", (unsigned)other);
    assert_int_equal(setenv("GPUPORT_CACHE_TRUST", trust, 1), 0);
    gp_program_info hit = create_and_run(src, NULL, 1);
    assert_int_equal(hit.from_cache, 1);
    assert_int_equal(hit.cache_on_disk, 1);
    gp_cache_info info;
    GP_OK(gp_cache_get_info(&info));
    assert_int_equal(info.on_disk, 1);
    assert_string_equal(info.folder, dir);

    /* Another uid's trust is not this one's. */
    assert_int_equal(setenv("GPUPORT_CACHE_TRUST", "12345", 1), 0);
    refused(dir, "GPUPORT_CACHE_TRUST does not name it");
    free(src);
}

/* A garbage binary in an entry whose own checksum is valid, as anything can compute one (the
 * plain SHA-256 of the payload): gpuport did not write it there, so it is rebuilt, never handed
 * to the backend, whose loader (pocl's) may crash on it. */
static void entry_not_written_by_gpuport_is_rebuilt(void **state)
{
    fixture *f = *state;
    char *src = unique_source();
    create_and_run(src, NULL, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(f->dir, remember), 1);
    FILE *fp = fopen(found_entry, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    assert_true(size > 80);
    unsigned char *buf = tst_malloc((size_t)size);
    assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    for (long i = 80; i < size; i++) buf[i] = (unsigned char)(i * 131 + 7);
    gp__sha256 h;
    gp__sha256_init(&h);
    gp__sha256_update(&h, buf + 80, (size_t)size - 80);
    gp__sha256_final(&h, buf + 48);
    assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
    assert_int_equal(fwrite(buf, 1, (size_t)size, fp), (size_t)size);
    assert_int_equal(fclose(fp), 0);
    free(buf);
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 0);
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 1);
    free(src);
}

/* A 6 GiB sparse file in an entry's place whose header claims all of it: it is larger than any
 * entry gpuport writes, so it is rebuilt without being read (the peak of resident memory stays
 * far below its size). */
static void entry_larger_than_any_written_is_not_read(void **state)
{
    fixture *f = *state;
    char *src = unique_source();
    create_and_run(src, NULL, 1);
    skip_entry = NULL;
    assert_int_equal(for_each_file(f->dir, remember), 1);
    const uint64_t size = (uint64_t)6 << 30, payload = size - 80;
    int fd = open(found_entry, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &payload, 8, 40), 8);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    assert_int_equal(close(fd), 0);
    struct rusage before, after;
    assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 0);
    assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
    if (after.ru_maxrss - before.ru_maxrss > 1024 * 1024) /* KiB */
        fail_msg("the peak resident memory grew by %ld KiB", after.ru_maxrss - before.ru_maxrss);
    assert_int_equal(create_and_run(src, NULL, 1).from_cache, 1);
    free(src);
}

/* The mode of every file in dir (entries and the secret) is want. */
static mode_t want_mode;
static void has_want_mode(const char *path, off_t size)
{
    (void)size;
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    if ((st.st_mode & 07777) != want_mode) fail_msg("%s is mode %04o, not %04o", path, st.st_mode & 07777, want_mode);
}

/* Entries are this user's alone (0600) whatever the umask, and 0644 in a folder others may read
 * (a teacher's, shared on purpose). */
static void entry_modes_ignore_the_umask(void **state)
{
    fixture *f = *state;
    mode_t old = umask(0);
    char dir[600];
    for (int shared = 0; shared < 2; shared++) {
        make_folder(f, shared ? "shared-0755" : "own-0700", shared ? 0755 : 0700, (uid_t)-1, dir, sizeof dir);
        assert_int_equal(setenv("GPUPORT_CACHE_DIR", dir, 1), 0);
        char *src = unique_source();
        assert_int_equal(create_and_run(src, NULL, 1).cache_on_disk, 1);
        want_mode = shared ? 0644 : 0600;
        assert_int_equal(for_each_file(dir, has_want_mode), 1);
        char secret[700];
        snprintf(secret, sizeof secret, "%s/secret", dir);
        has_want_mode(secret, 0);
        free(src);
    }
    umask(old);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
const struct CMUnitTest tst_cache_tests[] = {
    T(entry_written_and_reused),
    T(options_and_source_are_part_of_the_key),
    T(damaged_entries_are_rebuilt),
    T(entry_under_another_name_is_rebuilt),
    T(fifo_in_place_of_an_entry),
    T(unwritable_folder_falls_back_to_memory),
    T(folder_of_another_user_is_refused),
    T(world_writable_folder_is_refused),
    T(group_writable_folder_is_refused),
    T(linked_folder_is_refused),
    T(sticky_shared_folder_gets_a_folder_per_user),
    T(planted_folder_per_user_is_refused),
    T(entry_of_another_user_is_refused),
    T(entry_writable_by_all_is_refused),
    T(entry_writable_by_its_group_is_refused),
    T(linked_entry_is_refused),
    T(trusted_owner_is_read),
    T(entry_not_written_by_gpuport_is_rebuilt),
    T(entry_larger_than_any_written_is_not_read),
    T(entry_modes_ignore_the_umask),
};
const size_t tst_cache_tests_count = sizeof tst_cache_tests / sizeof tst_cache_tests[0];
