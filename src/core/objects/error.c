/* Status names, the per-thread detail message and GPUPORT_DEBUG output. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned gp_version(void) { return GP_VERSION_NUMBER; }

const char *gp_version_string(void)
{
#define GP__STR2(x) #x
#define GP__STR(x) GP__STR2(x)
    return GP__STR(GP_VERSION_MAJOR) "." GP__STR(GP_VERSION_MINOR) "." GP__STR(GP_VERSION_PATCH);
}

const char *gp_status_name(gp_status status)
{
    switch (status) {
#define GP__NAME(name, value, text) case name: return #name;
        GP_STATUS_LIST(GP__NAME)
#undef GP__NAME
    }
    return "GP_STATUS_UNKNOWN";
}

const char *gp_status_string(gp_status status)
{
    switch (status) {
#define GP__TEXT(name, value, text) case name: return text;
        GP_STATUS_LIST(GP__TEXT)
#undef GP__TEXT
    }
    return "an unknown status value";
}

/* The detail message lives in thread-specific storage so that a thread's exit frees it. */
static pthread_key_t error_key;
static pthread_once_t error_once = PTHREAD_ONCE_INIT;

static void error_key_make(void) { pthread_key_create(&error_key, free); }

static void set_text(const char *text, size_t len)
{
    pthread_once(&error_once, error_key_make);
    char *old = pthread_getspecific(error_key);
    char *buf = realloc(old, len + 1);
    if (!buf) return; /* keep the old message rather than none */
    memcpy(buf, text, len);
    buf[len] = '\0';
    pthread_setspecific(error_key, buf);
}

const char *gp_last_error(void)
{
    pthread_once(&error_once, error_key_make);
    const char *s = pthread_getspecific(error_key);
    return s ? s : "";
}

void gp__set_error_text(const char *text) { set_text(text, strlen(text)); }

static void vset(const char *fmt, va_list ap)
{
    char small[1024];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        set_text(small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, ap2);
            set_text(big, (size_t)n);
            free(big);
        } else {
            set_text(small, sizeof small - 1);
        }
    }
    va_end(ap2);
}

void gp__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(fmt, ap);
    va_end(ap);
}

static gp_status vfail(gp_status status, const char *fmt, va_list ap)
{
    vset(fmt, ap);
    gp__debug("error", "%s: %s", gp_status_name(status), gp_last_error());
    return status;
}

gp_status gp__fail(gp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(status, fmt, ap);
    va_end(ap);
    return status;
}

gp_status gp_set_last_error(gp_status status, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vfail(status, format, ap);
    va_end(ap);
    return status;
}

/* GPUPORT_DEBUG is read once: a comma-separated list of topics, or "all". */
static const char *debug_spec;
static pthread_once_t debug_once = PTHREAD_ONCE_INIT;

static void debug_read(void) { debug_spec = getenv("GPUPORT_DEBUG"); }

int gp__debug_on(const char *topic)
{
    pthread_once(&debug_once, debug_read);
    return gp__topic_listed(debug_spec, topic);
}

void gp__debug(const char *topic, const char *fmt, ...)
{
    if (!gp__debug_on(topic)) return;
    va_list ap;
    va_start(ap, fmt);
    flockfile(stderr);
    fprintf(stderr, "gpuport[%s]: ", topic);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    funlockfile(stderr);
    va_end(ap);
}

const gp__host gp__host_table = {gp__set_error, gp__set_error_text, gp__debug, gp__debug_on};
