/* Whom gpuport trusts with the files it opens on the user's behalf (the kernel cache, the GEMM
 * tune results, plugins named in GPUPORT_PLUGIN_PATH): as ssh checks its own files, one that
 * someone else could have written is not used. */
#define _GNU_SOURCE /* getpwuid_r */
#include "internal.h"

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

int gp__trusted(const struct stat *st, const char *what, int cache_owners, char *why, size_t len)
{
    uid_t me = geteuid();
    char owner[300];
    if (st->st_uid != me && st->st_uid != 0 && !(cache_owners && listed(st->st_uid))) {
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
