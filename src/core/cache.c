/* The kernel cache: compiled programs on disk, keyed by everything that changes the binary.
 * An entry is written to a temporary file and renamed, so readers never see half of one; each
 * carries its own key and checksum, so a damaged entry, or one copied over another's name,
 * reads as a miss and is rebuilt; only regular files are opened. Where the folder cannot be
 * written, entries are kept in memory, the newest MEM_LIMIT bytes of them, so that a process that
 * builds kernels without end does not grow without end. */
#define _GNU_SOURCE /* mkstemp, strdup */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'G', 'P', 'C', 'A', 'C', 'H', 'E', '2'};
enum { KEY_AT = 8, SIZE_AT = 40, SUM_AT = 48, HEADER = 80 }; /* magic, key, payload size, payload SHA-256 */

typedef struct mem_entry {
    unsigned char key[32];
    void *data;
    size_t bytes;
    struct mem_entry *next;
} mem_entry;

#define MEM_LIMIT ((size_t)16 << 20)
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_entry *mem_entries; /* newest first */

/* GPUPORT_CACHE_DIR, else $XDG_CACHE_HOME/gpuport, else ~/.cache/gpuport. */
int gp__cache_folder(char *out, size_t len)
{
    const char *dir = getenv("GPUPORT_CACHE_DIR");
    if (dir && *dir) return snprintf(out, len, "%s", dir) < (int)len;
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) return snprintf(out, len, "%s/gpuport", xdg) < (int)len;
    const char *home = getenv("HOME");
    if (home && *home) return snprintf(out, len, "%s/.cache/gpuport", home) < (int)len;
    return 0;
}

static int entry_path(const unsigned char key[32], char *out, size_t len)
{
    char dir[4096];
    snprintf(out, len, "no cache folder: GPUPORT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset or too long");
    if (!gp__cache_folder(dir, sizeof dir)) return 0;
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    return snprintf(out, len, "%s/%s.bin", dir, hex) < (int)len;
}

/* mkdir -p, for the folder part of path. */
static int make_parents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return 0;
        *p = '/';
    }
    return 1;
}

size_t gp__cache_entry_payload(const unsigned char *file, size_t n, const unsigned char key[32])
{
    uint64_t size;
    unsigned char sum[32];
    if (n <= HEADER || memcmp(file, magic, 8) != 0 || memcmp(file + KEY_AT, key, 32) != 0) return 0;
    memcpy(&size, file + SIZE_AT, 8);
    if (size != n - HEADER) return 0;
    gp__sha256 h;
    gp__sha256_init(&h);
    gp__sha256_update(&h, file + HEADER, n - HEADER);
    gp__sha256_final(&h, sum);
    return memcmp(sum, file + SUM_AT, 32) == 0 ? n - HEADER : 0;
}

static void *read_entry(const char *path, const unsigned char key[32], size_t *bytes)
{
    /* Non-blocking and without following a link, so that a FIFO or device in an entry's place
     * cannot hang or redirect the read; anything but a regular file is a miss. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *data = NULL;
    size_t n = 0, payload = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > HEADER && (uint64_t)st.st_size <= SIZE_MAX &&
        (data = malloc((size_t)st.st_size)) != NULL) {
        ssize_t r;
        while (n < (size_t)st.st_size && (r = read(fd, data + n, (size_t)st.st_size - n)) > 0) n += (size_t)r;
        payload = n == (size_t)st.st_size ? gp__cache_entry_payload(data, n, key) : 0;
    }
    close(fd);
    if (!payload) {
        free(data);
        gp__debug("compile", "cache entry %s is damaged, not a regular file or written for another key; it will be "
                  "rebuilt", path);
        return NULL;
    }
    memmove(data, data + HEADER, payload);
    *bytes = payload;
    return data;
}

int gp__cache_load(const unsigned char key[32], void **binary, size_t *bytes, int *on_disk)
{
    char path[4200];
    if (entry_path(key, path, sizeof path) && (*binary = read_entry(path, key, bytes)) != NULL) {
        *on_disk = 1;
        return 1;
    }
    int found = 0;
    pthread_mutex_lock(&mem_lock);
    for (mem_entry *e = mem_entries; e && !found; e = e->next)
        if (memcmp(e->key, key, 32) == 0 && (*binary = malloc(e->bytes)) != NULL) {
            memcpy(*binary, e->data, e->bytes);
            *bytes = e->bytes;
            found = 1;
        }
    pthread_mutex_unlock(&mem_lock);
    *on_disk = 0;
    return found;
}

static int write_entry(const char *path, const unsigned char key[32], const void *binary, size_t bytes)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    if (!make_parents(path)) return 0;
    int fd = mkstemp(tmp);
    if (fd < 0) return 0;
    unsigned char head[HEADER];
    uint64_t size = bytes;
    gp__sha256 h;
    memcpy(head, magic, 8);
    memcpy(head + KEY_AT, key, 32);
    memcpy(head + SIZE_AT, &size, 8);
    gp__sha256_init(&h);
    gp__sha256_update(&h, binary, bytes);
    gp__sha256_final(&h, head + SUM_AT);
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(head, 1, HEADER, f) == HEADER && fwrite(binary, 1, bytes, f) == bytes;
    if (f) ok = fclose(f) == 0 && ok;
    else close(fd);
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    return ok;
}

static void keep_in_memory(const unsigned char key[32], const void *binary, size_t bytes)
{
    pthread_mutex_lock(&mem_lock);
    mem_entry *e = mem_entries;
    while (e && memcmp(e->key, key, 32) != 0) e = e->next;
    if (!e) { /* another thread may have kept the same binary meanwhile */
        e = malloc(sizeof *e);
        void *copy = e ? malloc(bytes) : NULL;
        if (copy) {
            memcpy(e->key, key, 32);
            memcpy(copy, binary, bytes);
            e->data = copy;
            e->bytes = bytes;
            e->next = mem_entries;
            mem_entries = e;
        } else {
            free(e);
        }
    }
    /* The newest entries that fit in MEM_LIMIT stay (the newest always); older ones go. */
    size_t kept = 0;
    for (mem_entry **p = &mem_entries; *p;) {
        kept += (*p)->bytes;
        if (kept > MEM_LIMIT && *p != mem_entries) {
            mem_entry *old = *p;
            *p = old->next;
            free(old->data);
            free(old);
        } else {
            p = &(*p)->next;
        }
    }
    pthread_mutex_unlock(&mem_lock);
}

int gp__cache_store(const unsigned char key[32], const void *binary, size_t bytes)
{
    char path[4200];
    if (entry_path(key, path, sizeof path) && write_entry(path, key, binary, bytes)) return 1;
    gp__debug("compile", "cache folder not writable (%s); keeping the binary in memory", path);
    keep_in_memory(key, binary, bytes);
    return 0;
}

int gp__cache_write_text(const char *name, const char *text)
{
    char dir[4096], path[4200], tmp[4300];
    if (!gp__cache_folder(dir, sizeof dir) || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return 0;
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    if (!make_parents(path)) return 0;
    int fd = mkstemp(tmp);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "w");
    int ok = f && fputs(text, f) >= 0;
    if (f) ok = fclose(f) == 0 && ok;
    else close(fd);
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    return ok;
}
