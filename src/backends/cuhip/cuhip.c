/* The plugin: its devices, and the table of every gp__backend hook, once for CUDA and HIP alike
 * (cuhip.h says how a plugin binds it; the hooks live in load.c, memory.c, program.c, interop.c
 * and blas.c). */
#include "cuhip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Devices ---- */

static int ch_attr(gp__ch_device *d, int attr)
{
    int v = 0;
    if (gp__ch.device_get_attribute(&v, attr, d->device) != CH_SUCCESS)
        return 0;
    return v;
}

static gp_status ch_device_open(size_t index, void **out, gp_device_info *info)
{
    gp__ch_device *d = calloc(1, sizeof *d);
    if (!d)
        return gp__ch_no_host_memory();
    d->ordinal = (int)index;
    ch_result r = gp__ch.device_get(&d->device, d->ordinal);
    if (r == CH_SUCCESS)
        r = gp__ch.device_get_name(d->name, (int)sizeof d->name, d->device);
    if (r != CH_SUCCESS) {
        free(d);
        return gp__ch_fail(r, "opening the device");
    }
    snprintf(info->vendor, sizeof info->vendor, "%s", CH_VENDOR); /* the vendor part may say otherwise */
    gp_status st = gp__ch_vendor_device_open(d, info);
    if (st != GP_SUCCESS) {
        free(d);
        return st;
    }
    pthread_mutex_init(&d->fill_lock, NULL);
    pthread_mutex_init(&d->blas_lock, NULL);

    size_t total = 0;
    gp__ch.device_total_mem(&total, d->device);
    snprintf(info->name, sizeof info->name, "%s", d->name);
    info->type = GP_DEVICE_GPU;
    info->global_mem_bytes = total;
    info->local_mem_bytes = info->local_mem_own_bytes = (uint64_t)ch_attr(d, CH_ATTR_SHARED_MEM_PER_BLOCK);
#ifdef CH_ATTR_SHARED_MEM_OPTIN /* what a launch can have, past the default limit (gp__ch_launch) */
    uint64_t optin = (uint64_t)ch_attr(d, CH_ATTR_SHARED_MEM_OPTIN);
    if (optin > info->local_mem_bytes)
        info->local_mem_bytes = optin;
#endif
    info->compute_units = (uint32_t)ch_attr(d, CH_ATTR_COMPUTE_UNITS);
    info->max_work_group_size = (size_t)ch_attr(d, CH_ATTR_MAX_THREADS_PER_BLOCK);
    info->max_work_item_sizes[0] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_X);
    info->max_work_item_sizes[1] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_Y);
    info->max_work_item_sizes[2] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_Z);
    info->subgroup_size = (uint32_t)ch_attr(d, CH_ATTR_WARP_SIZE);
    info->fp64 = 1;
    info->unified_memory = ch_attr(d, CH_ATTR_INTEGRATED) != 0;
    snprintf(info->driver_version, sizeof info->driver_version, "%s", gp__ch_driver_version);
    snprintf(info->runtime_version, sizeof info->runtime_version, "%s",
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "none");
    gp__ch_host->debug("load", "%s:%d is %s", CH_BACKEND_NAME, d->ordinal, d->name);
    *out = d;
    return GP_SUCCESS;
}

static void ch_device_close(void *dev)
{
    gp__ch_device *d = dev;
    gp__ch_blas_close(d);
    if (d->fill_module) {
        gp__ch_vendor_enter(d);
        gp__ch.module_unload(d->fill_module);
    }
    pthread_mutex_destroy(&d->fill_lock);
    pthread_mutex_destroy(&d->blas_lock);
    gp__ch_vendor_device_close(d);
    free(d);
}

static void ch_device_cache_id(void *dev, char *buf, size_t len)
{
    gp__ch_vendor_cache_id(dev, buf, len);
}

/* ---- The table ---- */

static const gp__backend ch_backend = {
    .abi = GP__PLUGIN_ABI,
    .name = CH_BACKEND_NAME,
    .prelude = gp__ch_prelude,
    .init = gp__ch_init,
    .device_open = ch_device_open,
    .device_close = ch_device_close,
    .device_cache_id = ch_device_cache_id,
    .buffer_create = gp__ch_buffer_create,
    .buffer_destroy = gp__ch_buffer_destroy,
    .buffer_map = gp__ch_buffer_map,
    .buffer_unmap = gp__ch_buffer_unmap,
    .stream_create = gp__ch_stream_create,
    .stream_destroy = gp__ch_stream_destroy,
    .stream_synchronize = gp__ch_sync,
    .write = gp__ch_write,
    .read = gp__ch_read,
    .copy = gp__ch_copy,
    .fill = gp__ch_fill,
    .event_create = gp__ch_event_create,
    .event_destroy = gp__ch_event_destroy,
    .event_record = gp__ch_event_record,
    .stream_wait_event = gp__ch_stream_wait_event,
    .event_synchronize = gp__ch_event_synchronize,
    .event_query = gp__ch_event_query,
    .event_elapsed_ms = gp__ch_event_elapsed_ms,
    .program_build = gp__ch_program_build,
    .program_load = gp__ch_program_load,
    .program_destroy = gp__ch_program_destroy,
    .kernel_create = gp__ch_kernel_create,
    .program_global = gp__ch_program_global,
    .kernel_destroy = gp__ch_kernel_destroy,
    .launch = gp__ch_launch,
    .blas_info = gp__ch_blas_info,
    .blas_gemm = gp__ch_blas_gemm,
    .native_device = gp__ch_native_device,
    .native_stream = gp__ch_native_stream,
    .native_buffer = gp__ch_native_buffer,
    .native_event = gp__ch_native_event,
    .buffer_wrap = gp__ch_buffer_wrap,
    .buffer_register = gp__ch_buffer_register,
    .stream_wrap = gp__ch_stream_wrap,
    .can_copy_peer = gp__ch_can_copy_peer,
    .copy_peer = gp__ch_copy_peer,
#ifdef CH_EXPORTS_MEMORY
    .device_uuid = gp__ch_device_uuid,
    .buffer_export = gp__ch_buffer_export,
#endif
    .events_across_devices = 1,
};

GP_API const gp__backend *gp_plugin_entry(void);
const gp__backend *gp_plugin_entry(void)
{
    return &ch_backend;
}

