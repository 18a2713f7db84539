/* The kernel cache: compiled programs on disk, keyed by everything that changes the binary.
 * An entry is written to a temporary file and renamed, so readers never see half of one; each
 * carries its own key, size and digest, so a damaged entry, or one copied over another's name,
 * reads as a miss and is rebuilt. The digest is keyed by the folder's own secret (a file of
 * random bytes beside the entries, readable as they are): an entry that gpuport did not write
 * there, even with a checksum anyone could compute, is rebuilt and never handed to a backend
 * whose loader would crash on a bad binary (pocl's). Who could write an entry is a separate
 * question: the folder, the folders above it and each entry must pass gp__trusted, checked on
 * the open descriptor, and everything after goes through that descriptor. Where the folder is
 * refused or cannot be written, entries are kept in memory, the newest MEM_LIMIT bytes of them,
 * so that a process that builds kernels without end does not grow without end. */
#define _GNU_SOURCE /* AT_EACCESS */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'G', 'P', 'C', 'A', 'C', 'H', 'E', '3'};
/* magic, key, payload size, SHA-256 of the folder's secret and the payload */
enum { KEY_AT = 8, SIZE_AT = 40, SUM_AT = 48, HEADER = 80 };
static const char secret_name[] = "secret";

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

/* Opens path as a folder, never through a link, after the folders on the way (gp__open_path),
 * and checks it; -1 and why when it fails, -2 - fd for a shared sticky folder (see below). */
static int open_checked(const char *path, int cache_owners, char *why, size_t len)
{
    char what[4200], walk[1024];
    struct stat st;
    snprintf(what, sizeof what, "the cache folder %s", path);
    int fd = gp__open_path(path, O_RDONLY | O_DIRECTORY, 0, cache_owners, walk, sizeof walk);
    if (fd < 0) {
        snprintf(why, len, "%s is refused: %s", what, walk);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(why, len, "%s cannot be read: %s", what, strerror(errno));
    } else if (gp__trusted(&st, what, cache_owners, why, len)) {
        return fd;
    } else if ((st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH)) &&
               gp__owner_trusted(st.st_uid, cache_owners)) {
        /* A shared sticky folder such as /tmp, of a trusted owner (the only other one who could
         * rename what is in it): what this user makes there, no one else can remove or rename,
         * so a folder of this user's own inside it is safe. */
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
 * alone, renamed into place, so readers never see half of it; 1 when it was written. The file
 * is 0600, or 0644 in a folder others may read (a teacher's cache, shared on purpose), set on
 * the descriptor so that no umask changes it. */
static int write_file(int dir, const char *name, const void *head, size_t hbytes, const void *body, size_t bytes,
                      int replace)
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
    struct stat st;
    mode_t mode = fstat(dir, &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)) ? 0644 : 0600;
    const unsigned char *parts[2] = {head, body};
    size_t left[2] = {hbytes, bytes};
    int ok = fchmod(fd, mode) == 0;
    for (int i = 0; i < 2 && ok; i++)
        while (ok && left[i] > 0) {
            ssize_t w = write(fd, parts[i], left[i]);
            ok = w > 0;
            if (ok) parts[i] += w, left[i] -= (size_t)w;
        }
    /* without replace, a name already there stays (linkat never replaces) */
    ok = close(fd) == 0 && ok && (replace ? renameat(dir, tmp, dir, name) : linkat(dir, tmp, dir, name, 0)) == 0;
    if (!ok || !replace) unlinkat(dir, tmp, 0);
    return ok;
}

static void entry_name(const unsigned char key[32], char out[70])
{
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", key[i]);
    memcpy(out + 64, ".bin", 5);
}

static void digest(const unsigned char secret[32], const unsigned char *payload, size_t n, unsigned char out[32])
{
    gp__sha256 h;
    gp__sha256_init(&h);
    gp__sha256_update(&h, secret, 32);
    gp__sha256_update(&h, payload, n);
    gp__sha256_final(&h, out);
}

/* 1 when head (HEADER bytes of a file of n bytes) begins an entry for key of that size. */
static int header_fits(const unsigned char *head, size_t n, const unsigned char key[32])
{
    uint64_t size;
    if (n <= HEADER || n - HEADER > GP__CACHE_ENTRY_MAX) return 0; /* head holds HEADER bytes only then */
    memcpy(&size, head + SIZE_AT, 8);
    return memcmp(head, magic, 8) == 0 && memcmp(head + KEY_AT, key, 32) == 0 && size == n - HEADER;
}

size_t gp__cache_entry_payload(const unsigned char *file, size_t n, const unsigned char key[32],
                               const unsigned char secret[32])
{
    unsigned char sum[32];
    if (!header_fits(file, n, key)) return 0;
    digest(secret, file + HEADER, n - HEADER, sum);
    return memcmp(sum, file + SUM_AT, 32) == 0 ? n - HEADER : 0;
}

/* The folder's secret into out: read, or with create made when there is none (whoever makes it
 * first, the others read theirs). 0 when there is none to be had. */
static int folder_secret(int dir, const char *folder, int create, unsigned char out[32])
{
    int fd = open_entry(dir, folder, secret_name);
    if (fd < 0 && create) {
        unsigned char fresh[32];
        if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh) return 0;
        write_file(dir, secret_name, NULL, 0, fresh, sizeof fresh, 0);
        fd = open_entry(dir, folder, secret_name);
    }
    ssize_t n = fd >= 0 ? read(fd, out, 32) : -1;
    if (fd >= 0) close(fd);
    return n == 32;
}

/* The entry for key, checked by size and header before its payload is read, then by digest. */
static void *read_entry(int dir, const char *folder, const unsigned char key[32], size_t *bytes)
{
    char name[70];
    unsigned char secret[32], head[HEADER];
    entry_name(key, name);
    if (!folder_secret(dir, folder, 0, secret)) return NULL; /* nothing there was written by gpuport */
    int fd = open_entry(dir, folder, name);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *data = NULL;
    size_t n = 0, payload = 0;
    if (fstat(fd, &st) == 0 && st.st_size > HEADER && (uint64_t)st.st_size <= HEADER + (uint64_t)GP__CACHE_ENTRY_MAX &&
        read(fd, head, HEADER) == HEADER && header_fits(head, (size_t)st.st_size, key) &&
        (data = malloc((size_t)st.st_size)) != NULL) {
        memcpy(data, head, HEADER);
        n = HEADER;
        ssize_t r;
        while (n < (size_t)st.st_size && (r = read(fd, data + n, (size_t)st.st_size - n)) > 0) n += (size_t)r;
        payload = n == (size_t)st.st_size ? gp__cache_entry_payload(data, n, key, secret) : 0;
    }
    close(fd);
    if (!payload) {
        free(data);
        gp__debug("compile", "the cache entry %s/%s is damaged, too large, not written by gpuport in that folder, or "
                  "written for another key; it will be rebuilt", folder, name);
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
    int ok = write_file(dir, name, head, hbytes, body, bytes, 1);
    if (!ok) gp__debug("compile", "%s/%s cannot be written (%s); kept in memory", folder, name, strerror(errno));
    close(dir);
    return ok;
}

int gp__cache_store(const unsigned char key[32], const void *binary, size_t bytes)
{
    char folder[4200], why[1200], name[70];
    unsigned char head[HEADER], secret[32];
    uint64_t size = bytes;
    memcpy(head, magic, 8);
    memcpy(head + KEY_AT, key, 32);
    memcpy(head + SIZE_AT, &size, 8);
    entry_name(key, name);
    int dir = bytes <= GP__CACHE_ENTRY_MAX ? open_folder(folder, sizeof folder, why, sizeof why) : -1;
    if (dir < 0 && bytes <= GP__CACHE_ENTRY_MAX) say_once(why);
    int ok = dir >= 0 && folder_secret(dir, folder, 1, secret);
    if (ok) {
        digest(secret, binary, bytes, head + SUM_AT);
        ok = write_file(dir, name, head, HEADER, binary, bytes, 1);
    }
    if (dir >= 0 && !ok) gp__debug("compile", "%s/%s cannot be written (%s); kept in memory", folder, name, strerror(errno));
    if (dir >= 0) close(dir);
    if (!ok) keep_in_memory(key, binary, bytes);
    return ok;
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
