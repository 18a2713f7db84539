/* Core's own view of every object: each begins with its backend's table, as in the ICD loader. */
#ifndef GPUPORT_INTERNAL_H
#define GPUPORT_INTERNAL_H

#include "backends/backend.h"

#include <pthread.h>
#include <stdatomic.h>

struct gp_device {
    const gp__backend *be;
    void *impl;
    gp_device_info info;
    char cache_id[512];
    gp_stream *default_stream;
    pthread_mutex_t lock; /* guards the list of streams below */
    gp_stream *streams;
};

struct gp_buffer {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    size_t size;
    gp_memory memory;
    void *mapped; /* the host address while mapped */
};

struct gp_stream {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_stream *next; /* in dev->streams */
};

struct gp_event {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    int recorded;
};

struct gp_program {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_program_info info;
    atomic_int refs; /* the caller's handle plus one per kernel */
};

struct gp_kernel {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_program *program;
    gp__kernel_props props;
    char name[128];
};

/* error.c */
gp_status gp__fail(gp_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gp__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gp__set_error_text(const char *text);
int gp__debug_on(const char *topic);
void gp__debug(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern const gp__host gp__host_table;

/* registry.c: loads the plugins once; every public entry point that needs them calls this. */
gp_status gp__init(void);

/* stream.c: the stream a call runs on (NULL = the device's default), checked against dev. */
gp_status gp__stream_for(gp_stream *stream, gp_device *dev, const char *what, gp_stream **out);

/* cache.c: the kernel cache. key is 32 bytes. */
int gp__cache_load(const unsigned char key[32], void **binary, size_t *bytes, int *on_disk);
int gp__cache_store(const unsigned char key[32], const void *binary, size_t bytes);

/* sha256.c */
typedef struct gp__sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t fill;
} gp__sha256;
void gp__sha256_init(gp__sha256 *s);
void gp__sha256_update(gp__sha256 *s, const void *data, size_t n);
void gp__sha256_final(gp__sha256 *s, unsigned char out[32]);

#define GP__CHECK_OUT(p, name)                                                                 \
    do {                                                                                       \
        if (!(p)) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: " name " is NULL", __func__); \
    } while (0)
#define GP__CHECK_HANDLE(h, name)                                                              \
    do {                                                                                       \
        if (!(h)) return gp__fail(GP_ERROR_INVALID_HANDLE, "%s: " name " is NULL", __func__);   \
    } while (0)

#endif
