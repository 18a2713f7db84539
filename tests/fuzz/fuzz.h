/* What the fuzz targets share: core's internal parsers, and a way to stop on a broken rule. */
#ifndef GPUPORT_FUZZ_H
#define GPUPORT_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The input as a NUL-terminated string (inputs with a NUL inside are cut there, as C would). */
static inline char *fuzz_text(const unsigned char *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A broken promise of the code under test: stop, so that libFuzzer keeps the input. */
#define FUZZ_REQUIRE(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: %s:%d: %s does not hold\n", __FILE__, __LINE__, #cond);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
