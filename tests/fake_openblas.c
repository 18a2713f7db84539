/* An OpenBLAS as NumPy's wheels bring it (scipy-openblas64): its CBLAS under the scipy_ prefix
 * and 64_ suffix, with 64-bit sizes. The OpenCL plugin's host GEMM must find it by those names
 * where GPUPORT_OPENBLAS names the file; the gemm group then checks its products against the
 * tests' own loops, so this one computes for real, plainly. */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT char *scipy_openblas_get_config64_(void);
EXPORT char *scipy_openblas_get_corename64_(void);
EXPORT void scipy_cblas_sgemm64_(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                                 int64_t ldc);
EXPORT void scipy_cblas_dgemm64_(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                                 const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                                 int64_t ldc);

char *scipy_openblas_get_config64_(void)
{
    static char text[] = "OpenBLAS 0.3.99.fake64 USE64BITINT DYNAMIC_ARCH";
    return text;
}

char *scipy_openblas_get_corename64_(void)
{
    static char text[] = "SapphireRapids";
    return text;
}

/* Layouts 101 (row-major: the column-major product of the transposes, C' = B'A') and 102
 * (column-major), transposes 111 (no) and 112 (yes), as cblas.h numbers them; anything else
 * leaves C as it was, which the tests see. */
#define GEMM(name, type)                                                                                               \
    void name(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, type alpha, const type *a, int64_t lda,     \
              const type *b, int64_t ldb, type beta, type *c, int64_t ldc)                                             \
    {                                                                                                                  \
        if (layout == 101) {                                                                                           \
            name(102, tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);                                           \
            return;                                                                                                    \
        }                                                                                                              \
        if (layout != 102 || (ta != 111 && ta != 112) || (tb != 111 && tb != 112)) return;                             \
        for (int64_t j = 0; j < n; j++)                                                                                \
            for (int64_t i = 0; i < m; i++) {                                                                          \
                double sum = 0;                                                                                        \
                for (int64_t q = 0; q < k; q++)                                                                        \
                    sum += (double)a[ta == 112 ? q + i * lda : i + q * lda] *                                          \
                           (double)b[tb == 112 ? j + q * ldb : q + j * ldb];                                           \
                c[i + j * ldc] = (type)(alpha * sum + (beta != 0 ? beta * c[i + j * ldc] : 0));                        \
            }                                                                                                          \
    }
GEMM(scipy_cblas_sgemm64_, float)
GEMM(scipy_cblas_dgemm64_, double)
