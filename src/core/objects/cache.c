/* The kernel cache: compiled programs on disk, keyed by everything that changes the binary.
 * An entry is written to a temporary file and renamed, so readers never see half of one; each
 * carries its own key and checksum, so a damaged entry, or one copied over another's name,
 * reads as a miss and is rebuilt. A checksum anyone can compute proves nothing about who wrote
 * an entry, so the folder and each entry must also pass gp__trusted, checked on the open
 * descriptor, and everything after goes through that descriptor. Where the folder is refused or
 * cannot be written, entries are kept in memory, the newest MEM_LIMIT bytes of them, so that a
 * process that builds kernels without end does not grow without end. */
#define _GNU_SOURCE /* AT_EACCESS */
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

/* GPUPORT_CACHE_DIR, else $XDG_CACHE_HOME/gpuport, else ~/.cache/gpuport; trailing slashes
 * dropped, so that the folder itself, not what a link there points to, is checked. */
int gp__cache_folder(char *out, size_t len)
{
    const char *dir = getenv("GPUPORT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int fits;
    if (dir && *dir) fits = snprintf(out, len, "%s", dir) < (int)len;
    else if (xdg && *xdg) fits = snprintf(out, len, "%s/gpuport", xdg) < (int)len;
    else if (home && *home) fits = snprintf(out, len, "%s/.cache/gpuport", home) < (int)len;
    else return 0;
    for (size_t n = strlen(out); fits && n > 1 && out[n - 1] == '/'; n--) out[n - 1] = '\0';
    return fits;
}

/* mkdir -p, for the folder part of path: what it makes is this user's alone (0700). */
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

/* The reason the cache folder was last refused: each new one is said once. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char said[1200];

static void say_once(const char *why)
{
    pthread_mutex_lock(&said_lock);
    int fresh = strcmp(said, why) != 0;
    if (fresh) snprintf(said, sizeof said, "%s", why);
    pthread_mutex_unlock(&said_lock);
    if (fresh) gp__debug(gp__debug_on("load") ? "load" : "compile", "%s; kernels are kept in memory", why);
}

/* Opens path as a folder, never through a link, and checks it; -1 and why when it fails. */
static int open_checked(const char *path, int cache_owners, char *why, size_t len)
{
    char what[4200];
    struct stat st;
    snprintf(what, sizeof what, "the cache folder %s", path);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            snprintf(why, len, "%s is a symbolic link: name the folder it points to instead", what);
        else
            snprintf(why, len, "%s cannot be opened: %s", what, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(why, len, "%s cannot be read: %s", what, strerror(errno));
    } else if (gp__trusted(&st, what, cache_owners, why, len)) {
        return fd;
    } else if ((st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH))) {
        /* A shared sticky folder such as /tmp: what this user makes in it, no one else can
         * remove or rename, so a folder of this user's own inside it is safe. */
        return -2 - fd;
    }
    close(fd);
    return -1;
}

/* The cache folder, opened after the checks; path gets the folder in use, which inside a shared
 * sticky folder is this user's own <uid> subfolder. -1 and why when entries must stay in memory. */
static int open_folder(char *path, size_t len, char *why, size_t wlen)
{
    if (!gp__cache_folder(path, len)) {
        snprintf(why, wlen, "no cache folder: GPUPORT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset or too long");
        return -1;
    }
    if (!make_parents(path) || (mkdir(path, 0700) != 0 && errno != EEXIST)) {
        snprintf(why, wlen, "the cache folder %s cannot be created: %s", path, strerror(errno));
        return -1;
    }
    int fd = open_checked(path, 1, why, wlen);
    if (fd >= -1) return fd;
    int shared = -2 - fd;
    char uid[24];
    size_t used = strlen(path);
    snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
    if (snprintf(path + used, len - used, "/%s", uid) >= (int)(len - used) ||
        (mkdirat(shared, uid, 0700) != 0 && errno != EEXIST)) {
        snprintf(why, wlen, "the cache folder %s cannot be created: %s", path, strerror(errno));
        fd = -1;
    } else {
        fd = open_checked(path, 0, why, wlen);
    }
    close(shared);
    if (fd >= 0) why[0] = '\0';
    return fd;
}

/* An entry of the open folder, for reading: a regular file of a trusted owner that no one else
 * can write, checked on the descriptor. Non-blocking and never through a link, so that a FIFO or
 * a device in its place cannot hang or redirect the read. -1 when it is missing or refused. */
static int open_entry(int dir, const char *folder, const char *name)
{
    char what[4400], why[600];
    snprintf(what, sizeof what, "the cache entry %s/%s", folder, name);
    struct stat st;
    int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) gp__debug("compile", "%s cannot be opened (%s); it will be rebuilt", what, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        snprintf(why, sizeof why, "%s is not a regular file", what);
    else if (gp__trusted(&st, what, 1, why, sizeof why))
        return fd;
    gp__debug("compile", "%s; not used, it will be rebuilt", why);
    close(fd);
    return -1;
}

/* Writes head and body to name in the open folder through a temporary file of this user's
 * alone, renamed into place, so readers never see half of it; 1 when it was written. */
static int write_file(int dir, const char *name, const void *head, size_t hbytes, const void *body, size_t bytes)
{
    static atomic_uint serial;
    char tmp[600];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", name, (long)getpid(), atomic_fetch_add(&serial, 1));
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) return 0;
    }
    if (fd < 0) return 0;
    const unsigned char *parts[2] = {head, body};
    size_t left[2] = {hbytes, bytes};
    int ok = 1;
    for (int i = 0; i < 2 && ok; i++)
        while (ok && left[i] > 0) {
            ssize_t w = write(fd, parts[i], left[i]);
            ok = w > 0;
            if (ok) parts[i] += w, left[i] -= (size_t)w;
        }
    ok = close(fd) == 0 && ok && renameat(dir, tmp, dir, name) == 0;
    if (!ok) unlinkat(dir, tmp, 0);
    return ok;
}

static void entry_name(const unsigned char key[32], char out[70])
{
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", key[i]);
    memcpy(out + 64, ".bin", 5);
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

static void *read_entry(int dir, const char *folder, const unsigned char key[32], size_t *bytes)
{
    char name[70];
    entry_name(key, name);
    int fd = open_entry(dir, folder, name);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *data = NULL;
    size_t n = 0, payload = 0;
    if (fstat(fd, &st) == 0 && st.st_size > HEADER && (uint64_t)st.st_size <= SIZE_MAX &&
        (data = malloc((size_t)st.st_size)) != NULL) {
        ssize_t r;
        while (n < (size_t)st.st_size && (r = read(fd, data + n, (size_t)st.st_size - n)) > 0) n += (size_t)r;
        payload = n == (size_t)st.st_size ? gp__cache_entry_payload(data, n, key) : 0;
    }
    close(fd);
    if (!payload) {
        free(data);
        gp__debug("compile", "the cache entry %s/%s is damaged or written for another key; it will be rebuilt", folder,
                  name);
        return NULL;
    }
    memmove(data, data + HEADER, payload);
    *bytes = payload;
    return data;
}

int gp__cache_load(const unsigned char key[32], void **binary, size_t *bytes, int *on_disk)
{
    char folder[4200], why[1200];
    int dir = open_folder(folder, sizeof folder, why, sizeof why);
    if (dir < 0) say_once(why);
    *binary = dir >= 0 ? read_entry(dir, folder, key, bytes) : NULL;
    if (dir >= 0) close(dir);
    if (*binary) {
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

/* Writes name in the cache folder; 0 with the reason said when it could not. */
static int store(const char *name, const void *head, size_t hbytes, const void *body, size_t bytes)
{
    char folder[4200], why[1200];
    int dir = open_folder(folder, sizeof folder, why, sizeof why);
    if (dir < 0) {
        say_once(why);
        return 0;
    }
    int ok = write_file(dir, name, head, hbytes, body, bytes);
    if (!ok) gp__debug("compile", "%s/%s cannot be written (%s); kept in memory", folder, name, strerror(errno));
    close(dir);
    return ok;
}

int gp__cache_store(const unsigned char key[32], const void *binary, size_t bytes)
{
    unsigned char head[HEADER];
    uint64_t size = bytes;
    gp__sha256 h;
    memcpy(head, magic, 8);
    memcpy(head + KEY_AT, key, 32);
    memcpy(head + SIZE_AT, &size, 8);
    gp__sha256_init(&h);
    gp__sha256_update(&h, binary, bytes);
    gp__sha256_final(&h, head + SUM_AT);
    char name[70];
    entry_name(key, name);
    if (store(name, head, HEADER, binary, bytes)) return 1;
    keep_in_memory(key, binary, bytes);
    return 0;
}

int gp__cache_write_text(const char *name, const char *text) { return store(name, NULL, 0, text, strlen(text)); }

int gp__cache_read_text(const char *name, char *out, size_t len)
{
    char folder[4200], why[1200];
    int dir = open_folder(folder, sizeof folder, why, sizeof why), fd = -1;
    ssize_t n = -1;
    if (dir < 0) say_once(why);
    else if ((fd = open_entry(dir, folder, name)) >= 0) n = read(fd, out, len - 1);
    if (fd >= 0) close(fd);
    if (dir >= 0) close(dir);
    out[n > 0 ? n : 0] = '\0';
    return n > 0;
}

gp_status gp_cache_get_info(gp_cache_info *info)
{
    GP__CHECK_OUT(info, "info");
    memset(info, 0, sizeof *info);
    int dir = open_folder(info->folder, sizeof info->folder, info->reason, sizeof info->reason);
    if (dir < 0) {
        say_once(info->reason);
        return GP_SUCCESS;
    }
    info->on_disk = 1;
    info->writable = faccessat(dir, ".", W_OK, AT_EACCESS) == 0;
    if (!info->writable)
        snprintf(info->reason, sizeof info->reason, "%s cannot be written by you: its entries are read, new ones kept "
                 "in memory", info->folder);
    close(dir);
    return GP_SUCCESS;
}
