/* Whom gpuport trusts with the files it opens on the user's behalf (the kernel cache, the GEMM
 * tune results, plugins named in GPUPORT_PLUGIN_PATH): as ssh checks its own files, one that
 * someone else could have written is not used, nor one reached through a folder that someone
 * else could change. */
#define _GNU_SOURCE /* getpwuid_r */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when uid is one of GPUPORT_CACHE_TRUST's comma-separated numbers. */
static int listed(uid_t uid)
{
    const char *s = getenv("GPUPORT_CACHE_TRUST");
    while (s && *s) {
        unsigned long long v;
        if (gp__parse_number(&s, (uid_t)-1, &v) && (*s == ',' || !*s) && v == uid) return 1;
        s += strcspn(s, ",");
        s += *s == ',';
    }
    return 0;
}

static void owner_name(uid_t uid, char *out, size_t len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found)
        snprintf(out, len, "uid %u (%s)", (unsigned)uid, found->pw_name);
    else
        snprintf(out, len, "uid %u", (unsigned)uid);
}

int gp__owner_trusted(uid_t uid, int cache_owners)
{
    return uid == geteuid() || uid == 0 || (cache_owners && listed(uid));
}

int gp__trusted(const struct stat *st, const char *what, int cache_owners, char *why, size_t len)
{
    uid_t me = geteuid();
    char owner[300];
    if (!gp__owner_trusted(st->st_uid, cache_owners)) {
        owner_name(st->st_uid, owner, sizeof owner);
        snprintf(why, len, "%s belongs to %s, not to you (uid %u) or root%s", what, owner, (unsigned)me,
                 cache_owners ? ", and GPUPORT_CACHE_TRUST does not name it" : "");
        return 0;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        owner_name(st->st_uid, owner, sizeof owner);
        snprintf(why, len, "%s (owner %s, mode %04o) can be written by %s", what, owner,
                 (unsigned)(st->st_mode & 07777),
                 (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ? "its group and others"
                 : st->st_mode & S_IWGRP                             ? "its group"
                                                                     : "others");
        return 0;
    }
    return 1;
}

/* A folder on the way: trusted as a file is, or sticky with a trusted owner (as /tmp), where no
 * one else can rename or remove what is ours. */
static int folder_trusted(int fd, const char *folder, int cache_owners, char *why, size_t len)
{
    struct stat st;
    char what[PATH_MAX + 64];
    snprintf(what, sizeof what, "the folder %s", folder[0] ? folder : "/");
    if (fstat(fd, &st) != 0) {
        snprintf(why, len, "%s cannot be read: %s", what, strerror(errno));
        return 0;
    }
    if ((st.st_mode & S_ISVTX) && gp__owner_trusted(st.st_uid, cache_owners)) return 1;
    return gp__trusted(&st, what, cache_owners, why, len);
}

int gp__open_path(const char *path, int flags, int follow_last, int cache_owners, char *why, size_t len)
{
    char todo[2 * PATH_MAX], done[PATH_MAX] = "", target[PATH_MAX];
    if (path[0] == '/')
        snprintf(todo, sizeof todo, "%s", path);
    else if (!getcwd(todo, PATH_MAX) || snprintf(todo + strlen(todo), sizeof todo - strlen(todo), "/%s", path) < 0) {
        snprintf(why, len, "%s: the current folder cannot be named: %s", path, strerror(errno));
        return -1;
    }
    int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), links = 0;
    if (cur < 0 || !folder_trusted(cur, "", cache_owners, why, len)) goto refused;
    for (char *rest = todo;;) {
        rest += strspn(rest, "/");
        size_t n = strcspn(rest, "/");
        if (n == 0) return cur; /* the path named a folder, now open and checked */
        char name[NAME_MAX + 1];
        if (n > NAME_MAX) {
            snprintf(why, len, "%s: a name on the way is longer than %d characters", path, NAME_MAX);
            goto refused;
        }
        memcpy(name, rest, n);
        name[n] = '\0';
        rest += n;
        int last = rest[strspn(rest, "/")] == '\0';
        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            snprintf(why, len, "%s: '..' is not followed: name the folder itself", path);
            goto refused;
        }
        struct stat st;
        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            ssize_t t = -1;
            if (last && !follow_last)
                snprintf(why, len, "%s/%s is a symbolic link: name what it points to instead", done, name);
            else if (!gp__owner_trusted(st.st_uid, cache_owners))
                snprintf(why, len, "the symbolic link %s/%s belongs to uid %u, not to you or root", done, name,
                         (unsigned)st.st_uid);
            else if (++links > 40)
                snprintf(why, len, "%s: more than 40 symbolic links on the way", path);
            else if ((t = readlinkat(cur, name, target, sizeof target)) < 0 || (size_t)t >= sizeof target)
                snprintf(why, len, "the symbolic link %s/%s cannot be read", done, name);
            if (t < 0 || (size_t)t >= sizeof target) goto refused;
            target[t] = '\0';
            /* the link's target, then what was left, walked from where the link points */
            char left[2 * PATH_MAX];
            if (snprintf(left, sizeof left, "%s/%s", target, rest) >= (int)sizeof todo) {
                snprintf(why, len, "%s: too long once its links are followed", path);
                goto refused;
            }
            snprintf(todo, sizeof todo, "%s", left);
            rest = todo;
            if (target[0] == '/') {
                close(cur);
                done[0] = '\0';
                if ((cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) goto refused;
            }
            continue;
        }
        int fd = openat(cur, name, (last ? flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
        size_t used = strlen(done);
        snprintf(done + used, sizeof done - used, "/%s", name);
        if (fd < 0) {
            snprintf(why, len, "%s cannot be opened: %s", done, strerror(errno));
            goto refused;
        }
        close(cur);
        cur = fd;
        if (last) return fd; /* its own checks are the caller's */
        if (!folder_trusted(cur, done, cache_owners, why, len)) goto refused;
    }
refused:
    if (cur >= 0) close(cur);
    return -1;
}
