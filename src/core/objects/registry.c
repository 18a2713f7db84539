/* Plugin loading, the device list and device selection. */
#define _GNU_SOURCE /* dladdr */
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const backend_names[] = {"cuda", "hip", "opencl"};
#define NBACKENDS (sizeof backend_names / sizeof backend_names[0])

static gp_backend_info backends[NBACKENDS];
static gp_device **devices;
static size_t ndevices;
static gp_status init_status;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* The folder holding libgpuport itself, absolute, so that a build tree finds its plugins; ""
 * when the loader knows the library by a bare name (then there is no folder to search, and
 * the current folder is never taken for one). */
static void own_folder(char *out, size_t len)
{
    Dl_info di;
    char resolved[PATH_MAX];
    out[0] = '\0';
    if (!dladdr((void *)own_folder, &di) || !di.dli_fname || !strchr(di.dli_fname, '/')) return;
    const char *name = di.dli_fname[0] == '/' ? di.dli_fname : realpath(di.dli_fname, resolved);
    if (!name) return;
    snprintf(out, len, "%s", name);
    *strrchr(out, '/') = '\0';
}

#define MAX_FOLDERS 19

/* Fills folders with the search order of DESIGN.md; returns how many. The last three places
 * are always searched; GPUPORT_PLUGIN_PATH may name up to 16 folders before them. Only
 * absolute folders are searched: a relative one would depend on the current folder. */
static size_t plugin_folders(char folders[][512], size_t max, char *skipped, size_t skipped_len, size_t *named)
{
    size_t n = 0, used = 0;
    const char *env = getenv("GPUPORT_PLUGIN_PATH");
    skipped[0] = '\0';
    while (env && *env && n < max - 3) {
        size_t len = strcspn(env, ":");
        if (len >= 512)
            gp__debug("load", "GPUPORT_PLUGIN_PATH: a folder name of %zu characters is passed over", len);
        else if (len > 0 && env[0] != '/') {
            if (used < skipped_len)
                used += (size_t)snprintf(skipped + used, skipped_len - used, "%s'%.*s'", used ? ", " : "", (int)len, env);
            gp__debug("load", "GPUPORT_PLUGIN_PATH: '%.*s' is not an absolute folder; passed over", (int)len, env);
        } else if (len > 0) {
            memcpy(folders[n], env, len);
            folders[n++][len] = '\0';
        }
        env += len + (env[len] == ':');
    }
    *named = n;
    if (n < max) snprintf(folders[n++], 512, "%s", GP__PLUGIN_DIR);
    /* Beside libgpuport: <libdir>/gpuport of an installation moved elsewhere, then a build tree. */
    char own[512];
    own_folder(own, sizeof own);
    if (own[0] && n + 2 <= max) {
        snprintf(folders[n++], 512, "%s/gpuport", own);
        snprintf(folders[n++], 512, "%s", own);
    }
    return n;
}

static int add_device(gp_device *dev)
{
    gp_device **grown = realloc(devices, (ndevices + 1) * sizeof *devices);
    if (!grown) return 0;
    devices = grown;
    devices[ndevices++] = dev;
    return 1;
}

static void open_devices(const gp__backend *be, gp_backend_info *bi, size_t count)
{
    size_t opened = 0;
    for (size_t i = 0; i < count; i++) {
        gp_device *dev = calloc(1, sizeof *dev);
        if (!dev) break;
        dev->be = be;
        if (be->device_open(i, &dev->impl, &dev->info) != GP_SUCCESS) {
            gp__debug("load", "%s:%zu did not open: %s", bi->name, i, gp_last_error());
            free(dev);
            continue;
        }
        snprintf(dev->info.backend, sizeof dev->info.backend, "%s", bi->name);
        dev->info.backend_index = opened;
        /* a plugin that does not tell its own arrays apart gives them all of it */
        if (!dev->info.local_mem_own_bytes || dev->info.local_mem_own_bytes > dev->info.local_mem_bytes)
            dev->info.local_mem_own_bytes = dev->info.local_mem_bytes;
        be->device_cache_id(dev->impl, dev->cache_id, sizeof dev->cache_id);
        pthread_mutex_init(&dev->lock, NULL);
        gp_stream *s = calloc(1, sizeof *s);
        if (!s || be->stream_create(dev->impl, &s->impl) != GP_SUCCESS) {
            gp__debug("load", "%s:%zu has no default stream: %s", bi->name, i, gp_last_error());
            free(s);
            be->device_close(dev->impl);
            pthread_mutex_destroy(&dev->lock);
            free(dev);
            continue;
        }
        s->be = be;
        s->dev = dev;
        s->owned = 1;
        atomic_init(&s->refs, 1);
        pthread_mutex_init(&s->lock, NULL);
        dev->default_stream = s;
        if (!add_device(dev)) {
            be->stream_destroy(dev->impl, s->impl);
            be->device_close(dev->impl);
            pthread_mutex_destroy(&s->lock);
            pthread_mutex_destroy(&dev->lock);
            free(s);
            free(dev);
            break;
        }
        opened++;
        gp__debug("load", "%s:%zu is %s", bi->name, dev->info.backend_index, dev->info.name);
    }
    bi->device_count = opened;
}

/* A plugin is code: one in a folder of GPUPORT_PLUGIN_PATH is opened only when it and every
 * folder on the way belong to this user or root and no one else can write them (gp__open_path,
 * gp__trusted), and then loaded from the descriptor that was checked, so that nothing can be
 * swapped in between. Those beside libgpuport or in its installed folder are not checked:
 * whoever can write there can replace libgpuport itself. The descriptor, or -1 and why. */
static int open_trusted_plugin(const char *path, char *why, size_t len)
{
    char walk[1024];
    struct stat st;
    int fd = gp__open_path(path, O_RDONLY, 1, 0, walk, sizeof walk);
    if (fd < 0) {
        snprintf(why, len, "%s is refused: %s", path, walk);
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, len, "%s is not a regular file", path);
    } else if (gp__trusted(&st, path, 0, why, len)) {
        return fd;
    }
    close(fd);
    return -1;
}

/* The table of the plugin file at path (read through fd when fd >= 0) when it is a gpuport
 * plugin of this ABI; otherwise NULL, the file closed again and why written. */
static const gp__backend *open_plugin(const char *path, int fd, const char *name, void **dl, char *why, size_t len)
{
    char by_fd[64];
    snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", fd);
    *dl = dlopen(fd >= 0 ? by_fd : path, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        const char *e = dlerror();
        snprintf(why, len, "%s did not load: %s%s", path, e ? e : "no reason given",
                 fd >= 0 ? " (loaded through its checked descriptor in /proc/self/fd)" : "");
        return NULL;
    }
    gp__plugin_entry_fn entry;
    *(void **)&entry = dlsym(*dl, GP__PLUGIN_ENTRY);
    const gp__backend *be = entry ? entry() : NULL;
    if (!be)
        snprintf(why, len, "%s is not a gpuport plugin: it has no %s", path, GP__PLUGIN_ENTRY);
    else if (be->abi != GP__PLUGIN_ABI)
        snprintf(why, len, "%s was built for plugin ABI %u but this libgpuport %s needs ABI %u: rebuild the plugin with this gpuport",
                 path, (unsigned)be->abi, gp_version_string(), (unsigned)GP__PLUGIN_ABI);
    else if (!be->name || strcmp(be->name, name) != 0)
        snprintf(why, len, "%s is the plugin of backend '%s', not of %s", path, be->name ? be->name : "?", name);
    else
        return be;
    dlclose(*dl);
    *dl = NULL;
    return NULL;
}

static void load_backend(size_t which)
{
    gp_backend_info *bi = &backends[which];
    const char *name = backend_names[which];
    snprintf(bi->name, sizeof bi->name, "%s", name);

    char folders[MAX_FOLDERS][512], tried[2048] = "", passed[1024] = "", relative[512], path[600], why[600];
    size_t named, nf = plugin_folders(folders, MAX_FOLDERS, relative, sizeof relative, &named);
    void *dl = NULL;
    const gp__backend *be = NULL;
    /* A file that does not load, or loads but is no plugin of this ABI, is passed over for the
     * next folder's, and why is kept. */
    for (size_t i = 0; i < nf && !be; i++) {
        snprintf(path, sizeof path, "%s/libgpuport-%s.so", folders[i], name);
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", folders[i]);
        if (access(path, F_OK) != 0) continue;
        if (i >= named) {
            be = open_plugin(path, -1, name, &dl, why, sizeof why);
        } else {
            int fd = open_trusted_plugin(path, why, sizeof why);
            if (fd >= 0) be = open_plugin(path, fd, name, &dl, why, sizeof why);
            if (fd >= 0) close(fd);
        }
        if (!be) {
            gp__debug("load", "%s: passed over: %s", name, why);
            used = strlen(passed);
            snprintf(passed + used, sizeof passed - used, "%s%s", used ? "; " : "", why);
        }
    }
    if (!be) {
        snprintf(bi->reason, sizeof bi->reason,
                 "no usable plugin libgpuport-%s.so (looked in %s%s%s)%s%s; this gpuport was built without the %s "
                 "backend, or set GPUPORT_PLUGIN_PATH to the absolute folder that holds it",
                 name, tried, relative[0] ? "; relative folders are never searched: " : "", relative,
                 passed[0] ? "; passed over: " : "", passed, name);
        gp__debug("load", "%s: %s", name, bi->reason);
        return;
    }
    snprintf(bi->plugin_path, sizeof bi->plugin_path, "%s", path);
    gp__debug("load", "%s: loaded %s", name, path);

    size_t count = 0;
    if (be->init(&gp__host_table, bi->reason, sizeof bi->reason, bi->version, sizeof bi->version, &count) !=
        GP_SUCCESS) {
        if (!bi->reason[0]) snprintf(bi->reason, sizeof bi->reason, "the %s runtime did not start", name);
    } else {
        open_devices(be, bi, count);
        bi->available = bi->device_count > 0;
        if (!bi->available && !bi->reason[0])
            snprintf(bi->reason, sizeof bi->reason, "the %s runtime works but shows no device", name);
    }
    /* The reason also keeps what was passed over on the way, if anything. */
    size_t used = strlen(bi->reason);
    if (passed[0]) snprintf(bi->reason + used, sizeof bi->reason - used, "%spassed over: %s", used ? "; " : "", passed);
    if (!bi->available) {
        /* a plugin without devices has released its runtime (backend.h); nothing of it is kept */
        dlclose(dl);
        gp__debug("load", "%s: unavailable, so its plugin was unloaded: %s", name, bi->reason);
    }
}

static pid_t init_pid;

/* Work still queued at exit (a pocl kernel compiling on pocl's own thread at its first launch,
 * say) would run on while exit tears down the runtimes under it: the vendors' exit handlers,
 * LLVM's inside pocl among them, were registered as their libraries loaded, so this one,
 * registered after them, runs first and lets every stream finish. Not in a forked child: the
 * runtimes' threads did not come along, and their queues would never drain. */
static void finish_at_exit(void)
{
    if (getpid() != init_pid) return;
    for (size_t i = 0; i < ndevices; i++) {
        gp_device *d = devices[i];
        pthread_mutex_lock(&d->lock); /* held while it waits, so that the list cannot change under it */
        gp_status st = d->be->stream_synchronize(d->impl, d->default_stream->impl);
        for (gp_stream *s = d->streams; s; s = s->next)
            if (d->be->stream_synchronize(d->impl, s->impl) != GP_SUCCESS) st = GP_ERROR_BACKEND;
        pthread_mutex_unlock(&d->lock);
        if (st != GP_SUCCESS)
            gp__debug("load", "at exit, %s:%zu did not finish its work: %s", d->info.backend, d->info.backend_index,
                      gp_last_error());
    }
}

/* The signals of a crash. LLVM's handler for them (pocl's LLVM, or one that a vendor runtime or
 * MPI's hwloc brought) returns from a signal sent by kill, so that a process told to die lives
 * on: a rank of a job then waits for ever. Each handler that the plugins' runtimes changed (one
 * may even point into a runtime unloaded again), and LLVM's wherever it came from, is put back
 * as it was (LLVM's to the default). pocl's SIGFPE handler stays: it turns a kernel's integer
 * division by zero into a result instead of a crash (POCL_SIGFPE_HANDLER=0 turns it off, as
 * docs/mpi.md says). */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NCRASH (sizeof crash_signals / sizeof crash_signals[0])

static void *handler_of(const struct sigaction *sa)
{
    return sa->sa_flags & SA_SIGINFO ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;
}

/* The library holding the handler, or "" (the default, ignored, or code no longer loaded). */
static const char *library_of(void *handler)
{
    Dl_info di;
    if (handler == (void *)SIG_DFL || handler == (void *)SIG_IGN || !dladdr(handler, &di) || !di.dli_fname) return "";
    return di.dli_fname;
}

static void restore_crash_signals(const struct sigaction before[NCRASH])
{
    for (size_t i = 0; i < NCRASH; i++) {
        struct sigaction now;
        if (sigaction(crash_signals[i], NULL, &now) != 0) continue;
        const char *lib = library_of(handler_of(&now)), *was = library_of(handler_of(&before[i]));
        int changed = handler_of(&now) != handler_of(&before[i]) || now.sa_flags != before[i].sa_flags;
        if ((crash_signals[i] == SIGFPE && strstr(lib, "libpocl")) || (!changed && !strstr(lib, "libLLVM"))) continue;
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(crash_signals[i], strstr(was, "libLLVM") || !changed ? &dfl : &before[i], NULL);
        gp__debug("load", "signal %d: the handler of %s was put back as it was before (%s)", crash_signals[i],
                  lib[0] ? lib : "a library", was[0] && changed ? was : "the default");
    }
}

static void init_all(void)
{
    struct sigaction before[NCRASH];
    for (size_t i = 0; i < NCRASH; i++) sigaction(crash_signals[i], NULL, &before[i]);
    for (size_t i = 0; i < NBACKENDS; i++) load_backend(i);
    restore_crash_signals(before);
    init_pid = getpid();
    if (ndevices && atexit(finish_at_exit) != 0)
        gp__debug("load", "the exit handler could not be registered: work left queued at exit may crash it");
    init_status = GP_SUCCESS;
}

gp_status gp__init(void)
{
    pthread_once(&init_once, init_all);
    return init_status;
}

gp_status gp_backend_count(size_t *count)
{
    GP__CHECK_OUT(count, "count");
    gp__init();
    *count = NBACKENDS;
    return GP_SUCCESS;
}

gp_status gp_backend_get_info(size_t index, gp_backend_info *info)
{
    GP__CHECK_OUT(info, "info");
    gp__init();
    if (index >= NBACKENDS)
        return gp__fail(GP_ERROR_NOT_FOUND, "gp_backend_get_info: index %zu, but there are %zu backends", index,
                        (size_t)NBACKENDS);
    *info = backends[index];
    return GP_SUCCESS;
}

gp_status gp_device_count(size_t *count)
{
    GP__CHECK_OUT(count, "count");
    gp__init();
    *count = ndevices;
    return GP_SUCCESS;
}

gp_status gp_device_get(size_t index, gp_device **device)
{
    GP__CHECK_OUT(device, "device");
    gp__init();
    if (index >= ndevices)
        return gp__fail(GP_ERROR_NOT_FOUND, "gp_device_get: index %zu, but there are %zu devices", index, ndevices);
    *device = devices[index];
    return GP_SUCCESS;
}

gp_status gp_device_get_info(const gp_device *device, gp_device_info *info)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(info, "info");
    *info = device->info;
    return GP_SUCCESS;
}

/* The best GPU: native backends (listed first) before OpenCL, then the most memory. */
static gp_device *best_of_type(gp_device_type type)
{
    gp_device *best = NULL;
    for (size_t i = 0; i < ndevices; i++) {
        gp_device *d = devices[i];
        if (d->info.type != type) continue;
        if (!best) best = d;
        else if (strcmp(best->info.backend, d->info.backend) == 0 &&
                 d->info.global_mem_bytes > best->info.global_mem_bytes)
            best = d;
    }
    return best;
}

/* Lists what there is, so that a failed selection says what would have worked. */
static void describe_devices(char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < ndevices && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s:%zu (%s)", i ? ", " : "", devices[i]->info.backend,
                                 devices[i]->info.backend_index, devices[i]->info.name);
    if (ndevices == 0 && len) used = (size_t)snprintf(out, len, "none");
    for (size_t b = 0; b < NBACKENDS && used < len; b++)
        if (!backends[b].available)
            used += (size_t)snprintf(out + used, len - used, "; %s unavailable: %s", backends[b].name,
                                     backends[b].reason);
}

static gp_status find(const char *spec, const char *origin, gp_device **device)
{
    gp_device *found = NULL;
    char backend[16];
    size_t index = 0;
    switch (gp__parse_device_spec(spec, backend, &index)) {
    case GP__SPEC_GPU: found = best_of_type(GP_DEVICE_GPU); break;
    case GP__SPEC_CPU: found = best_of_type(GP_DEVICE_CPU); break;
    case GP__SPEC_BACKEND:
        for (size_t i = 0; i < ndevices && !found; i++)
            if (strcmp(devices[i]->info.backend, backend) == 0 && devices[i]->info.backend_index == index)
                found = devices[i];
        break;
    }
    if (!found) {
        char there[2048];
        describe_devices(there, sizeof there);
        return gp__fail(GP_ERROR_NOT_FOUND,
                        "%s'%s' names no device (use gpu, cpu, or BACKEND:N such as opencl:0); devices here: %s",
                        origin, spec, there);
    }
    *device = found;
    return GP_SUCCESS;
}

gp_status gp_device_find(const char *spec, gp_device **device)
{
    GP__CHECK_OUT(spec, "spec");
    GP__CHECK_OUT(device, "device");
    gp__init();
    return find(spec, "", device);
}

gp_status gp_device_default(gp_device **device)
{
    GP__CHECK_OUT(device, "device");
    gp__init();
    const char *env = getenv("GPUPORT_DEVICE");
    if (env && *env) return find(env, "GPUPORT_DEVICE=", device);
    gp_device *d = best_of_type(GP_DEVICE_GPU);
    if (!d) d = best_of_type(GP_DEVICE_CPU);
    if (!d && ndevices) d = devices[0];
    if (!d) {
        char there[2048];
        describe_devices(there, sizeof there);
        return gp__fail(GP_ERROR_NOT_FOUND, "no device found: %s", there);
    }
    *device = d;
    return GP_SUCCESS;
}

gp_status gp__each_default_stream(gp_status (*fn)(gp_stream *stream))
{
    gp__init();
    gp_status st = GP_SUCCESS;
    for (size_t i = 0; i < ndevices && st == GP_SUCCESS; i++) st = fn(devices[i]->default_stream);
    return st;
}
