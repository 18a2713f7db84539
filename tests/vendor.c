/* Opens the vendors' APIs for the interop tests (vendor.h); proves nothing on its own. */
#include "vendor.h"

#include <dlfcn.h>
#include <stddef.h>

static void *open_first(const char *const *names)
{
    void *lib = NULL;
    for (size_t i = 0; names[i] && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    return lib;
}

#ifdef TST_HAVE_OPENCL
tst_cl_api tst_cl;

int tst_cl_load(void)
{
    static int loaded = -1;
    if (loaded >= 0) return loaded;
    static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
    void *lib = open_first(names), *sym;
    loaded = lib != NULL;
#define TST_CL_LOAD(fn) if (loaded) { sym = dlsym(lib, #fn); *(void **)&tst_cl.fn = sym; loaded = sym != NULL; }
    TST_CL_FUNCS(TST_CL_LOAD)
#undef TST_CL_LOAD
    static const char *const blast[] = {"libclblast.so.1", "libclblast.so", NULL};
    void *b = open_first(blast);
    if (b) *(void **)&tst_cl.sgemm = dlsym(b, "CLBlastSgemm");
    return loaded;
}
#endif

#ifdef TST_HAVE_CUDA
tst_cu_api tst_cu;

int tst_cu_load(void)
{
    static int loaded = -1;
    if (loaded >= 0) return loaded;
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *lib = open_first(names), *sym;
    loaded = lib != NULL;
#define TST_CU_LOAD(fn, name) if (loaded) { sym = dlsym(lib, name); *(void **)&tst_cu.fn = sym; loaded = sym != NULL; }
    TST_CU_FUNCS(TST_CU_LOAD)
#undef TST_CU_LOAD
    if (loaded) *(void **)&tst_cu.cuCtxCreate = dlsym(lib, "cuCtxCreate_v2");
    static const char *const blas[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                       "/usr/local/cuda/lib64/libcublas.so", NULL};
    void *b = open_first(blas);
    if (b) {
        *(void **)&tst_cu.cublasCreate = dlsym(b, "cublasCreate_v2");
        *(void **)&tst_cu.cublasDestroy = dlsym(b, "cublasDestroy_v2");
        *(void **)&tst_cu.cublasSetStream = dlsym(b, "cublasSetStream_v2");
        *(void **)&tst_cu.cublasSgemm = dlsym(b, "cublasSgemm_v2");
    }
    return loaded;
}
#endif
