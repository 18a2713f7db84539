/* Loading the driver and the runtime compiler, and the plugin's init. */
#include "cuhip.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void *ch_driver_lib, *ch_rtc_lib;
static const char *ch_driver_name; /* the name ch_driver_lib was opened by */
char gp__ch_rtc_tried[1536]; /* for the message when the runtime compiler is missing */


/* Returns the first symbol the library lacks, or NULL. */
static const char *ch_resolve_driver(void *lib)
{
#define CH__LOAD(field, fn, sym)                                                               \
    if (!(gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym)))                                   \
        return sym;
#define CH__LOAD_OPTIONAL(field, fn, sym) gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym);
    CH_DRIVER_API(CH__LOAD)
    CH_DRIVER_API_OPTIONAL(CH__LOAD_OPTIONAL)
    CH_INTEROP_API(CH__LOAD_OPTIONAL)
    return NULL;
}

static const char *ch_resolve_rtc(void *lib)
{
    CH_RTC_API(CH__LOAD)
    return NULL;
#undef CH__LOAD
#undef CH__LOAD_OPTIONAL
}

/* The runtime compiler is optional: without it only prebuilt binaries load. Tried in order:
 * the loader's own search, then each of the vendor's folders, then the vendor's fallback
 * library. */
static void ch_load_rtc(void)
{
    gp__ch_rtc_tried[0] = '\0';
    ch_rtc_lib = gp__ch_find_lib(gp__ch_vendor_rtc_libs, ch_resolve_rtc, gp__ch_rtc_tried, sizeof gp__ch_rtc_tried, NULL, 0);
    const char *fallback = gp__ch_vendor_rtc_fallback();
    if (!ch_rtc_lib && fallback)
        ch_rtc_lib = gp__ch_try_lib(fallback, ch_resolve_rtc, gp__ch_rtc_tried, sizeof gp__ch_rtc_tried, NULL, 0);
    if (!ch_rtc_lib)
        return; /* gp__ch_rtc_loaded stays 0, so no rtc_* entry is used */
    int major = 0, minor = 0;
    if (gp__ch.rtc_version(&major, &minor) == CH_RTC_SUCCESS)
        snprintf(gp__ch_rtc_version, sizeof gp__ch_rtc_version, "%d.%d", major, minor);
    gp__ch_rtc_loaded = 1;
    gp__ch_host->debug("load", "%s %s loaded", CH_RTC_TITLE, gp__ch_rtc_version);
}

/* A runtime that shows no device is let go of, with the compiler: ROCm's brings LLVM and its
 * own exit handlers into every process, GPU or not. Core then closes the plugin itself. */
static void ch_release(void)
{
    if (ch_rtc_lib) dlclose(ch_rtc_lib); /* on ROCm 5, a second reference of the runtime */
    if (ch_driver_lib) {
        dlclose(ch_driver_lib);
        gp__ch_host->debug("load", "no device, so %s was unloaded again", ch_driver_name);
    }
    ch_rtc_lib = ch_driver_lib = NULL;
    gp__ch_rtc_loaded = 0;
    memset(&gp__ch, 0, sizeof gp__ch);
}

static gp_status ch_start(char *reason, size_t reason_len, char *version, size_t version_len, size_t *ndevices)
{
    if (!ch_driver_lib) {
        char first_error[384] = "";
        void *lib = NULL;
        for (size_t i = 0; gp__ch_vendor_driver_libs[i] && !lib; i++) {
            lib = dlopen(ch_driver_name = gp__ch_vendor_driver_libs[i], RTLD_NOW | RTLD_LOCAL);
            const char *e = lib ? NULL : dlerror();
            if (i == 0 && e)
                snprintf(first_error, sizeof first_error, "%s", e);
        }
        if (!lib) {
            snprintf(reason, reason_len, "%s not found (%s): %s", gp__ch_vendor_driver_libs[0], first_error,
                     gp__ch_vendor_driver_hint);
            return GP_ERROR_BACKEND_UNAVAILABLE;
        }
        const char *missing = ch_resolve_driver(lib);
        if (missing) {
            snprintf(reason, reason_len, "the %s lacks %s: it is too old; %s", CH_DRIVER_TITLE, missing,
                     gp__ch_vendor_driver_hint);
            dlclose(lib);
            return GP_ERROR_BACKEND_UNAVAILABLE;
        }
        ch_driver_lib = lib;
    }
    gp_status st = gp__ch_vendor_init(reason, reason_len);
    if (st != GP_SUCCESS)
        return st;
    if (!ch_rtc_lib)
        ch_load_rtc();

    int count = 0;
    ch_result r = gp__ch.device_get_count(&count);
    if (r != CH_SUCCESS) {
        snprintf(reason, reason_len, "counting devices failed: %s (%d)", gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    *ndevices = count > 0 ? (size_t)count : 0;
    snprintf(version, version_len, "%s %s, %s %s", CH_DRIVER_TITLE, gp__ch_driver_version, CH_RTC_TITLE,
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "not found");
    return GP_SUCCESS;
}

gp_status gp__ch_init(const gp__host *host, char *reason, size_t reason_len, char *version, size_t version_len,
                      size_t *ndevices)
{
    gp__ch_host = host;
    *ndevices = 0;
    gp_status st = ch_start(reason, reason_len, version, version_len, ndevices);
    if (st != GP_SUCCESS || *ndevices == 0) ch_release();
    return st;
}
