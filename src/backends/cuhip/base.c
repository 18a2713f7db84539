/* The state every file of the shared CUDA/HIP code uses: the resolved entry points, core's
 * table, the versions; failures turned into statuses; libraries looked for in the vendor's
 * folders. */
#include "cuhip.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

gp__ch_api gp__ch;
const gp__host *gp__ch_host;
int gp__ch_rtc_loaded;
char gp__ch_driver_version[32], gp__ch_rtc_version[32];

gp_status gp__ch_fail(ch_result r, const char *what)
{
    gp__ch_host->set_error("%s failed: %s (%d)", what, gp__ch_vendor_error_name(r), (int)r);
    if (r == CH_ERROR_OUT_OF_MEMORY)
        return GP_ERROR_OUT_OF_DEVICE_MEMORY;
    if (r == CH_ERROR_NOT_FOUND)
        return GP_ERROR_NOT_FOUND;
    return GP_ERROR_BACKEND;
}

gp_status gp__ch_no_host_memory(void)
{
    gp__ch_host->set_error("out of host memory");
    return GP_ERROR_OUT_OF_HOST_MEMORY;
}

static void ch_append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, fmt, a, b);
}

/* Opens path and resolves it; the library, or NULL with the failure appended to tried and, when
 * it is the first, copied to first. */
void *gp__ch_try_lib(const char *path, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                     char *first, size_t first_len)
{
    char why[512];
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
    if (lib && !(missing = resolve(lib)))
        return lib;
    if (lib) {
        snprintf(why, sizeof why, "%s lacks %s", path, missing);
        dlclose(lib);
    } else {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s", e ? e : path);
    }
    if (tried)
        ch_append(tried, tried_len, "%s%s", tried[0] ? "; " : "", why);
    if (first && first_len && !first[0])
        snprintf(first, first_len, "%s", why);
    return NULL;
}

void *gp__ch_find_lib(const char *const *names, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                      char *first, size_t first_len)
{
    char dir[1024], path[1200];
    void *lib = NULL;
    for (size_t d = 0; !lib && (d == 0 || gp__ch_vendor_lib_dirs[d - 1]); d++) {
        const char *folder = d ? gp__ch_vendor_lib_dirs[d - 1] : NULL;
        if (folder && folder[0] == '$') {
            size_t vlen = strcspn(folder + 1, "/");
            char var[64];
            snprintf(var, sizeof var, "%.*s", (int)(vlen < sizeof var ? vlen : sizeof var - 1), folder + 1);
            const char *value = getenv(var);
            if (!value || !value[0])
                continue;
            snprintf(dir, sizeof dir, "%s%s", value, folder + 1 + vlen);
            folder = dir;
        }
        for (size_t n = 0; !lib && names[n]; n++) {
            snprintf(path, sizeof path, "%s%s%s", folder ? folder : "", folder ? "/" : "", names[n]);
            lib = gp__ch_try_lib(path, resolve, tried, tried_len, first, first_len);
        }
    }
    return lib;
}

