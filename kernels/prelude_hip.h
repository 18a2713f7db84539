/* gpuport kernel dialect on HIP C++ (hiprtc, or hipcc for prebuilt code objects).
 * docs/kernel-dialect.md describes every name. Nothing here depends on the wavefront width:
 * it is 64 on most AMD GPUs and 32 on RDNA in wave32 mode. */
#define GP_BACKEND_HIP 1

/* hiprtc includes the runtime header itself (and has no others); hipcc -include puts this
 * file before the runtime header, so include it there. */
#ifndef __HIPCC_RTC__
#include <hip/hip_runtime.h>
#endif
/* The rest of the dialect is prelude_cuhip.h, joined after this file. */
