/* gpuport kernel dialect on CUDA C++ (NVRTC, or nvcc for prebuilt binaries). The rest of the
 * dialect is prelude_cuhip.h, joined after this file. */
#define GP_BACKEND_CUDA 1
