/* Streams and events. */
#include "internal.h"

#include <stdlib.h>

gp_status gp__stream_for(gp_stream *stream, gp_device *dev, const char *what, gp_stream **out)
{
    if (!stream) stream = dev->default_stream;
    if (stream->dev != dev)
        return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the stream is on %s:%zu but the work is for %s:%zu", what,
                        stream->dev->info.backend, stream->dev->info.backend_index, dev->info.backend,
                        dev->info.backend_index);
    *out = stream;
    return GP_SUCCESS;
}

gp_status gp__stream_add(gp_device *device, void *impl, int owned, gp_stream **stream)
{
    gp_stream *s = calloc(1, sizeof *s);
    if (!s) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "no host memory for the stream's handle");
    s->be = device->be;
    s->dev = device;
    s->impl = impl;
    s->owned = owned;
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_lock(&device->lock);
    s->next = device->streams;
    device->streams = s;
    pthread_mutex_unlock(&device->lock);
    *stream = s;
    return GP_SUCCESS;
}

gp_status gp_stream_create(gp_device *device, gp_stream **stream)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(stream, "stream");
    void *impl = NULL;
    gp_status st = device->be->stream_create(device->impl, &impl);
    if (st == GP_SUCCESS && (st = gp__stream_add(device, impl, 1, stream)) != GP_SUCCESS)
        device->be->stream_destroy(device->impl, impl);
    return st;
}

void gp__stream_unref(gp_stream *stream)
{
    if (atomic_fetch_sub(&stream->refs, 1) != 1) return;
    gp__trace_forget(stream);
    if (stream->cleanup) stream->cleanup(stream);
    pthread_mutex_destroy(&stream->lock);
    if (stream->owned) stream->be->stream_destroy(stream->dev->impl, stream->impl);
    free(stream);
}

gp_status gp_stream_destroy(gp_stream *stream)
{
    if (!stream) return GP_SUCCESS;
    gp_device *dev = stream->dev;
    if (stream == dev->default_stream)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_stream_destroy: the default stream belongs to the library");
    gp_status st = stream->be->stream_synchronize(dev->impl, stream->impl);
    pthread_mutex_lock(&dev->lock);
    for (gp_stream **p = &dev->streams; *p; p = &(*p)->next)
        if (*p == stream) {
            *p = stream->next;
            break;
        }
    pthread_mutex_unlock(&dev->lock);
    gp__stream_unref(stream);
    return st;
}

gp_status gp_stream_get_default(gp_device *device, gp_stream **stream)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(stream, "stream");
    *stream = device->default_stream;
    return GP_SUCCESS;
}

gp_status gp_stream_synchronize(gp_stream *stream)
{
    if (!stream) return gp__each_default_stream(gp_stream_synchronize);
    gp_status st = stream->be->stream_synchronize(stream->dev->impl, stream->impl);
    gp__trace_flush(stream->dev, stream);
    return st;
}

gp_status gp_event_create(gp_device *device, gp_event **event)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(event, "event");
    gp_event *e = calloc(1, sizeof *e);
    if (!e) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_event_create: no host memory for the handle");
    gp_status st = device->be->event_create(device->impl, &e->impl);
    if (st != GP_SUCCESS) {
        free(e);
        return st;
    }
    e->be = device->be;
    e->dev = device;
    atomic_init(&e->recorded, 0);
    *event = e;
    return GP_SUCCESS;
}

gp_status gp_event_destroy(gp_event *event)
{
    if (!event) return GP_SUCCESS;
    event->be->event_destroy(event->dev->impl, event->impl);
    free(event);
    return GP_SUCCESS;
}

gp_status gp_event_record(gp_event *event, gp_stream *stream)
{
    GP__CHECK_HANDLE(event, "event");
    gp_status st = gp__stream_for(stream, event->dev, "gp_event_record", &stream);
    if (st == GP_SUCCESS) st = event->be->event_record(event->dev->impl, event->impl, stream->impl);
    if (st == GP_SUCCESS) atomic_store(&event->recorded, 1);
    return st;
}

gp_status gp_stream_wait_event(gp_stream *stream, gp_event *event)
{
    GP__CHECK_HANDLE(event, "event");
    if (!stream) stream = event->dev->default_stream;
    if (!atomic_load(&event->recorded)) return GP_SUCCESS; /* nothing to wait for, as in CUDA */
    /* An event of another device: on the device where its plugin can, else on the host. */
    if (stream->dev != event->dev && !(stream->be == event->be && stream->be->events_across_devices))
        return gp_event_synchronize(event);
    return stream->be->stream_wait_event(stream->dev->impl, stream->impl, event->impl);
}

gp_status gp_event_synchronize(gp_event *event)
{
    GP__CHECK_HANDLE(event, "event");
    if (!atomic_load(&event->recorded)) return GP_SUCCESS;
    return event->be->event_synchronize(event->dev->impl, event->impl);
}

gp_status gp_event_query(gp_event *event)
{
    GP__CHECK_HANDLE(event, "event");
    if (!atomic_load(&event->recorded)) return GP_SUCCESS;
    return event->be->event_query(event->dev->impl, event->impl);
}

gp_status gp_event_elapsed_ms(gp_event *start, gp_event *end, double *ms)
{
    GP__CHECK_HANDLE(start, "start");
    GP__CHECK_HANDLE(end, "end");
    GP__CHECK_OUT(ms, "ms");
    if (start->dev != end->dev)
        return gp__fail(GP_ERROR_DEVICE_MISMATCH, "gp_event_elapsed_ms: the two events are on different devices");
    if (!atomic_load(&start->recorded) || !atomic_load(&end->recorded))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_event_elapsed_ms: the %s event was never recorded",
                        atomic_load(&start->recorded) ? "end" : "start");
    return start->be->event_elapsed_ms(start->dev->impl, start->impl, end->impl, ms);
}

gp_status gp_device_synchronize(gp_device *device)
{
    GP__CHECK_HANDLE(device, "device");
    /* Wait outside the lock, so that other threads can make and free streams meanwhile; each
     * stream is held by a reference, so one destroyed during the wait is freed after it. */
    pthread_mutex_lock(&device->lock);
    size_t n = 1;
    for (gp_stream *s = device->streams; s; s = s->next) n++;
    gp_stream **held = malloc(n * sizeof *held);
    if (held) {
        n = 0;
        held[n++] = device->default_stream;
        for (gp_stream *s = device->streams; s; s = s->next) {
            atomic_fetch_add(&s->refs, 1);
            held[n++] = s;
        }
    }
    pthread_mutex_unlock(&device->lock);
    if (!held) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_device_synchronize: no host memory");
    gp_status st = GP_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        if (st == GP_SUCCESS) st = device->be->stream_synchronize(device->impl, held[i]->impl);
        if (i > 0) gp__stream_unref(held[i]);
    }
    free(held);
    gp__trace_flush(device, NULL);
    return st;
}
