/* GPUPORT_TRACE=FILE.csv: one row per command, timed by backend events recorded around it on its
 * stream. Rows wait in a pending list until their events can be read without blocking anyone:
 * at a synchronize or stream destroy (the caller waits there anyway), when the list grows (only
 * finished ones), and at exit. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct gp__trace_rec {
    gp__trace_token *next;
    gp_device *dev;
    gp_stream *stream; /* NULL for a row on the host clock */
    unsigned stream_no;
    void *ev[2];       /* the backend's events before and after the command */
    double host_us[2]; /* host rows: from the trace's base */
    unsigned long long seq;
    const char *command;
    char name[128];
    size_t bytes;
    char work[64];
};

typedef struct trace_dev {
    gp_device *dev;
    void *ref;      /* every device time of this device counts from this event */
    double ref_us;  /* host time when ref was recorded, so that host and device rows roughly line up */
    int ref_done;
    unsigned streams; /* numbers given out so far */
    void **spare;   /* events whose rows are written, ready for another command */
    size_t nspare, cap;
} trace_dev;

typedef struct stream_no {
    gp_stream *stream;
    unsigned no;
} stream_no;

atomic_int gp__trace_state;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards everything below */
static FILE *out;
static double base_us;
static unsigned long long next_seq;
static trace_dev *devs;
static size_t ndevs;
static stream_no *numbers;
static size_t nnumbers;
static gp__trace_token *pending, **pending_tail = &pending;
static size_t npending, reap_at = 1024;

static double host_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void resolve(gp_device *dev, gp_stream *stream, int wait);

static void finish(void)
{
    pthread_mutex_lock(&lock);
    resolve(NULL, NULL, 1);
    atomic_store(&gp__trace_state, GP__TRACE_OFF);
    fclose(out);
    out = NULL;
    pthread_mutex_unlock(&lock);
}

/* The trace file, created or emptied; never through a symbolic link (which could point at
 * another file of the user's to overwrite), nor anything but a regular file; NULL after one
 * message. */
static FILE *open_output(const char *path)
{
    struct stat st;
    const char *why = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        why = "it is a symbolic link, which is never followed: name the file itself";
    else if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        why = "it is not a regular file";
    else if (st.st_uid == geteuid() && fchmod(fd, 0600) != 0) /* the user's alone, whatever the umask */
        why = strerror(errno);
    FILE *f = why ? NULL : fdopen(fd, "w");
    if (!f && !why) why = strerror(errno);
    if (why) {
        fprintf(stderr, "GPUPORT_TRACE: cannot open %s for writing: %s; tracing is off\n", path, why);
        if (fd >= 0) close(fd);
    }
    return f;
}

static void open_trace(void)
{
    const char *path = getenv("GPUPORT_TRACE");
    if (path && *path) out = open_output(path);
    /* Registered after the plugins' runtimes have started, so it runs before their own exit
     * handlers; a library destructor would run after theirs (plugins are loaded later). */
    if (out && atexit(finish) != 0) {
        fprintf(stderr, "GPUPORT_TRACE: cannot register the exit handler; tracing is off\n");
        fclose(out);
        out = NULL;
    }
    if (out) {
        fputs("seq,device,device_name,stream,command,name,bytes,work,clock,start_us,end_us,duration_us\n", out);
        fflush(out);
        base_us = host_us();
    }
    atomic_store(&gp__trace_state, out ? GP__TRACE_ON : GP__TRACE_OFF);
}

/* The device's state, its reference event recorded on stream when tracing of it starts. */
static trace_dev *dev_state(gp_device *dev, gp_stream *stream)
{
    for (size_t i = 0; i < ndevs; i++)
        if (devs[i].dev == dev) return &devs[i];
    trace_dev *grown = realloc(devs, (ndevs + 1) * sizeof *devs);
    if (!grown) return NULL;
    devs = grown;
    trace_dev *d = &devs[ndevs];
    memset(d, 0, sizeof *d);
    d->dev = dev;
    if (dev->be->event_create(dev->impl, &d->ref) != GP_SUCCESS) return NULL;
    if (dev->be->event_record(dev->impl, d->ref, stream->impl) != GP_SUCCESS) {
        dev->be->event_destroy(dev->impl, d->ref);
        return NULL;
    }
    d->ref_us = host_us() - base_us;
    ndevs++;
    return d;
}

static void *take_event(trace_dev *d)
{
    void *ev = NULL;
    if (d->nspare) return d->spare[--d->nspare];
    return d->dev->be->event_create(d->dev->impl, &ev) == GP_SUCCESS ? ev : NULL;
}

static void give_event(trace_dev *d, void *ev)
{
    if (!ev) return;
    if (d->nspare == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        void **grown = realloc(d->spare, cap * sizeof *grown);
        if (!grown) {
            d->dev->be->event_destroy(d->dev->impl, ev);
            return;
        }
        d->spare = grown;
        d->cap = cap;
    }
    d->spare[d->nspare++] = ev;
}

static void drop(gp__trace_token *t)
{
    if (t->stream) {
        trace_dev *d = dev_state(t->dev, t->stream);
        give_event(d, t->ev[0]);
        give_event(d, t->ev[1]);
    }
    free(t);
}

static unsigned stream_number(trace_dev *d, gp_stream *stream)
{
    if (stream == d->dev->default_stream) return 0;
    for (size_t i = 0; i < nnumbers; i++)
        if (numbers[i].stream == stream) return numbers[i].no;
    stream_no *grown = realloc(numbers, (nnumbers + 1) * sizeof *numbers);
    if (!grown) return 0;
    numbers = grown;
    numbers[nnumbers] = (stream_no){stream, ++d->streams};
    return numbers[nnumbers++].no;
}

gp__trace_token *gp__trace_start(gp_device *dev, gp_stream *stream)
{
    pthread_once(&once, open_trace);
    if (atomic_load(&gp__trace_state) != GP__TRACE_ON) return NULL;
    gp__trace_token *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->dev = dev;
    t->stream = stream;
    if (!stream) {
        t->host_us[0] = host_us() - base_us;
        return t;
    }
    pthread_mutex_lock(&lock);
    trace_dev *d = atomic_load(&gp__trace_state) == GP__TRACE_ON ? dev_state(dev, stream) : NULL;
    if (d) {
        t->ev[0] = take_event(d);
        t->ev[1] = take_event(d);
        t->stream_no = stream_number(d, stream);
    }
    pthread_mutex_unlock(&lock);
    if (d && t->ev[0] && t->ev[1] && dev->be->event_record(dev->impl, t->ev[0], stream->impl) == GP_SUCCESS)
        return t;
    pthread_mutex_lock(&lock);
    if (d) drop(t);
    else free(t);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* One CSV field: quoted when it holds a comma, a quote or a line break, quotes doubled. */
static void field(const char *s, char sep)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"') fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(sep, out);
}

static void write_row(const gp__trace_token *t, double start_us, double end_us)
{
    char dev[48], no[16] = "", bytes[24] = "";
    snprintf(dev, sizeof dev, "%s:%zu", t->dev->info.backend, t->dev->info.backend_index);
    if (t->stream) snprintf(no, sizeof no, "%u", t->stream_no);
    if (t->bytes) snprintf(bytes, sizeof bytes, "%zu", t->bytes);
    fprintf(out, "%llu,", t->seq);
    const char *fields[] = {dev, t->dev->info.name, no, t->command, t->name, bytes, t->work,
                            t->stream ? "device" : "host"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) field(fields[i], ',');
    fprintf(out, "%.3f,%.3f,%.3f\n", start_us, end_us, end_us - start_us);
}

/* Reads the times of a finished record, with wait waiting for it first. 0 when not finished. */
static int times(gp__trace_token *t, int wait, double *start_us, double *end_us)
{
    const gp__backend *be = t->dev->be;
    void *impl = t->dev->impl;
    trace_dev *d = dev_state(t->dev, t->stream);
    if (wait && (be->event_synchronize(impl, t->ev[1]) != GP_SUCCESS ||
                 be->event_synchronize(impl, d->ref) != GP_SUCCESS))
        return 0;
    if (be->event_query(impl, t->ev[1]) != GP_SUCCESS) return 0;
    if (!d->ref_done && be->event_query(impl, d->ref) != GP_SUCCESS) return 0;
    d->ref_done = 1;
    /* The duration from its own pair of events: CUDA's float milliseconds lose precision far
     * from the reference, and this keeps it to the command's own length. */
    double from_ref, length;
    if (be->event_elapsed_ms(impl, d->ref, t->ev[0], &from_ref) != GP_SUCCESS ||
        be->event_elapsed_ms(impl, t->ev[0], t->ev[1], &length) != GP_SUCCESS)
        return 0;
    *start_us = d->ref_us + from_ref * 1e3;
    *end_us = *start_us + length * 1e3;
    return 1;
}

/* Writes the pending rows of the stream (NULL: of every stream of dev; dev NULL: of all) whose
 * work has finished; with wait (at exit, or a stream already drained), all of them. Call with
 * the lock held. */
static void resolve(gp_device *dev, gp_stream *stream, int wait)
{
    int wrote = 0;
    for (gp__trace_token **p = &pending; *p;) {
        gp__trace_token *t = *p;
        double start_us, end_us;
        int mine = (!dev || t->dev == dev) && (!stream || t->stream == stream);
        int done = mine && times(t, wait, &start_us, &end_us);
        if (!mine || (!done && !wait)) {
            p = &t->next;
            continue;
        }
        if (done) {
            write_row(t, start_us, end_us);
            wrote = 1;
        } else {
            gp__debug("trace", "%s row %llu dropped: its event times could not be read (%s)", t->command, t->seq,
                      gp_last_error());
        }
        *p = t->next;
        if (pending_tail == &t->next) pending_tail = p;
        npending--;
        drop(t);
    }
    if (wrote) fflush(out);
}

void gp__trace_finish(gp__trace_token *t, gp_status st, const char *command, const char *name, size_t bytes,
                      unsigned dims, const size_t *work)
{
    if (t->stream) {
        if (st == GP_SUCCESS) st = t->dev->be->event_record(t->dev->impl, t->ev[1], t->stream->impl);
    } else {
        t->host_us[1] = host_us() - base_us;
    }
    t->command = command;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    size_t used = 0;
    for (unsigned d = 0; d < dims && used < sizeof t->work; d++)
        used += (size_t)snprintf(t->work + used, sizeof t->work - used, "%s%zu", d ? "*" : "", work[d]);
    t->bytes = bytes;

    pthread_mutex_lock(&lock);
    if (st != GP_SUCCESS || atomic_load(&gp__trace_state) != GP__TRACE_ON) {
        drop(t);
    } else if (!t->stream) {
        t->seq = next_seq++;
        write_row(t, t->host_us[0], t->host_us[1]);
        fflush(out);
        free(t);
    } else {
        t->seq = next_seq++;
        *pending_tail = t;
        pending_tail = &t->next;
        /* A program that never synchronizes still gets its finished rows out, at amortized cost. */
        if (++npending >= reap_at) {
            resolve(NULL, NULL, 0);
            reap_at = npending * 2 > 1024 ? npending * 2 : 1024;
        }
    }
    pthread_mutex_unlock(&lock);
}

void gp__trace_compile(gp__trace_token *t, gp_status st, const char *source, const unsigned char key[32],
                       size_t bytes)
{
    if (!t) return;
    /* The first kernel's name says what was built; the key's prefix where there is none. */
    char name[128] = "";
    const char *p = strstr(source, "GP_KERNEL");
    if (p) {
        p += strlen("GP_KERNEL");
        p += strspn(p, " \t\r\n");
        if (strncmp(p, "void", 4) == 0) p += 4;
        p += strspn(p, " \t\r\n");
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, p, n);
        name[n] = '\0';
    }
    for (int i = 0; !name[0] && i < 6; i++) snprintf(name + 2 * i, 3, "%02x", key[i]);
    gp__trace_finish(t, st, "compile", name, bytes, 0, NULL);
}

void gp__trace_flush(gp_device *dev, gp_stream *stream)
{
    if (atomic_load(&gp__trace_state) != GP__TRACE_ON) return;
    pthread_mutex_lock(&lock);
    if (atomic_load(&gp__trace_state) == GP__TRACE_ON) resolve(dev, stream, 0);
    pthread_mutex_unlock(&lock);
}

void gp__trace_forget(gp_stream *stream)
{
    if (atomic_load(&gp__trace_state) != GP__TRACE_ON) return;
    pthread_mutex_lock(&lock);
    if (atomic_load(&gp__trace_state) == GP__TRACE_ON) resolve(stream->dev, stream, 1);
    for (size_t i = 0; i < nnumbers; i++)
        if (numbers[i].stream == stream) {
            numbers[i] = numbers[--nnumbers];
            break;
        }
    pthread_mutex_unlock(&lock);
}
