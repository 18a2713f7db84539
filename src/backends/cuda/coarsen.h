/* Kernels that run several work-groups in one CUDA block (coarsen.c). */
#ifndef GP_CUDA_COARSEN_H
#define GP_CUDA_COARSEN_H

#include <stddef.h>

/* The suffix of a kernel's twin, and the two parameters the twin takes after the kernel's own:
 * the launch's number of work-groups in x, and how many of them each block runs. */
#define GP__COARSEN_SUFFIX "__gp_vg"

/* ptx (NUL-terminated, as NVRTC gives it) with a twin appended for every kernel that can take
 * one: NAME__gp_vg runs work-groups per, ..., per + per - 1 of the launch in block x, one after
 * another, each seeing the ids of the launch asked for. A kernel can take one when its code
 * reads %ctaid.x and uses nothing a block shares (no barrier, shared memory, warp shuffle or
 * vote, no call). Returns the new text, malloc'ed, with *twins the count; NULL when no kernel
 * can take one or memory ran out. */
char *gp__coarsen_ptx(const char *ptx, size_t *twins);

#endif
