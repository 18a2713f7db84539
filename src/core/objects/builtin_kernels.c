/* The built-in kernels: each built-in source compiled once per device and options, then kept
 * with the device. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp__builtin {
    const char *source; /* embedded text: compared by address */
    const char *options, *name; /* in text[] */
    gp_program *program;
    gp_kernel *kernel;
    gp__builtin *next;
    char text[];
};

gp_status gp__builtin_kernel(gp_device *dev, const char *source, const char *options, const char *name,
                             size_t nparams, gp_kernel **kernel)
{
    /* Compiling under the lock keeps two threads from building the same kernel twice; it
     * happens once per kernel and device. */
    pthread_mutex_lock(&dev->lock);
    gp_status st = GP_SUCCESS;
    gp__builtin *b = dev->builtins;
    while (b && !(b->source == source && strcmp(b->options, options) == 0 && strcmp(b->name, name) == 0))
        b = b->next;
    gp_program *program = NULL;
    if (!b) {
        /* Another kernel of the same source and options shares the program. */
        for (gp__builtin *o = dev->builtins; o && !program; o = o->next)
            if (o->source == source && strcmp(o->options, options) == 0) program = o->program;
        size_t olen = strlen(options) + 1, nlen = strlen(name) + 1;
        b = calloc(1, sizeof *b + olen + nlen);
        if (!b) st = gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "no host memory for a built-in kernel");
        if (st == GP_SUCCESS && !program) st = gp_program_create(dev, source, options, &program);
        else if (st == GP_SUCCESS) atomic_fetch_add(&program->refs, 1);
        if (st == GP_SUCCESS) {
            st = gp__kernel_create(program, name, nparams, &b->kernel);
            gp_program_destroy(program); /* the kernel holds it */
        }
        if (st == GP_SUCCESS) {
            b->source = source;
            b->options = memcpy(b->text, options, olen);
            b->name = memcpy(b->text + olen, name, nlen);
            b->program = program;
            b->next = dev->builtins;
            dev->builtins = b;
        } else {
            free(b);
            b = NULL;
        }
    }
    pthread_mutex_unlock(&dev->lock);
    if (b) *kernel = b->kernel;
    return st;
}
