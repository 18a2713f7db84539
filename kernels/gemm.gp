/* gp_gemm's tiled kernel: C = alpha * op(A) * op(B) + beta * C, row-major C (core turns
 * column-major calls around, so one case is all the kernel knows). Built per shape and case:
 *   -DGEMM_SHAPE=tile_m,tile_n,tile_k,work_m,work_n  (gp_gemm_params)
 *   -DGEMM_FLAGS=bits: 1 A transposed, 2 B transposed, 4 M, N and K are multiples of the tile
 *                (no bounds checks), 8 64-bit indices (some matrix spans 2^32 elements or more).
 * One shape string keeps the options short enough for the built-in kernel table.
 *
 * A work-group computes a TM x TN block of C in a 1D group of NT items. Per step of TK, the
 * tiles of op(A) and op(B) are stored k-major in local memory (As[k][m], Bs[k][n]), so each
 * item reads contiguous runs for its WM x WN block of accumulators, kept in registers. Tiles
 * are double-buffered: the next tile's global loads go to registers before the current tile's
 * products, and to the other buffer after them, so one barrier per step suffices. */

#define GEMM_ARG0(a, b, c, d, e) a
#define GEMM_ARG1(a, b, c, d, e) b
#define GEMM_ARG2(a, b, c, d, e) c
#define GEMM_ARG3(a, b, c, d, e) d
#define GEMM_ARG4(a, b, c, d, e) e
#define GEMM_APPLY(m, args) m args
#define TM GEMM_APPLY(GEMM_ARG0, (GEMM_SHAPE))
#define TN GEMM_APPLY(GEMM_ARG1, (GEMM_SHAPE))
#define TK GEMM_APPLY(GEMM_ARG2, (GEMM_SHAPE))
#define WM GEMM_APPLY(GEMM_ARG3, (GEMM_SHAPE))
#define WN GEMM_APPLY(GEMM_ARG4, (GEMM_SHAPE))

#define TRANS_A (GEMM_FLAGS & 1)
#define TRANS_B ((GEMM_FLAGS >> 1) & 1)
#define EXACT ((GEMM_FLAGS >> 2) & 1)
#if (GEMM_FLAGS >> 3) & 1
#define IDX ulong
#else
#define IDX uint
#endif

#define RM (TM / WM)  /* items along m */
#define RN (TN / WN)  /* items along n */
#define NT (RM * RN)
#define LA (TM * TK / NT) /* elements of A each item loads per step */
#define LB (TK * TN / NT)

/* An item's rows come in runs of VM (16 bytes where WM allows), runs of neighbouring items
 * side by side: its local reads are then 16-byte vectors free of bank conflicts, and its stores
 * of C neighbour those of the next item. Columns likewise. */
#if GP_TYPE == 1
#define VEC 4
#else
#define VEC 2
#endif
#if WM % VEC == 0
#define VM VEC
#elif WM % 2 == 0
#define VM 2
#else
#define VM 1
#endif
#if WN % VEC == 0
#define VN VEC
#elif WN % 2 == 0
#define VN 2
#else
#define VN 1
#endif
#define ROW(ty, i) (((i) / VM) * (RM * VM) + (ty) * VM + (i) % VM)
#define COL(tx, j) (((j) / VN) * (RN * VN) + (tx) * VN + (j) % VN)

/* Rows of the local tiles are padded by 16 bytes: A's tile is filled along k when A is not
 * transposed, and the padding spreads those stores over the banks. */
#define SA (TM + VEC)
#define SB (TN + VEC)

/* Groups are numbered along n within bands of GROUP_M block rows, so that groups running at
 * once share rows of A and columns of B in the cache. */
#define GROUP_M 8

GP_KERNEL void gp_gemm(GP_GLOBAL const T *A, ulong a_off, IDX lda, GP_GLOBAL const T *B, ulong b_off, IDX ldb,
                       GP_GLOBAL T *C, ulong c_off, IDX ldc, IDX M, IDX N, IDX K, T alpha, T beta)
{
    GP_LOCAL T As[2 * TK * SA];
    GP_LOCAL T Bs[2 * TK * SB];
    uint t = gp_local_id(0), tx = t % RN, ty = t / RN;

    uint nbm = (uint)((M + TM - 1) / TM), nbn = (uint)((N + TN - 1) / TN), g = gp_group_id(0);
    uint band = GROUP_M * nbn, first = g / band * GROUP_M;
    uint rows = nbm - first < GROUP_M ? nbm - first : GROUP_M;
    IDX m0 = (IDX)(first + g % band % rows) * TM, n0 = (IDX)(g % band / rows) * TN;

    /* Each pointer moves by one tile of k per step; what is left is 32-bit unless GEMM_FLAGS
     * asks for 64. */
#if TRANS_A
    GP_GLOBAL const T *a = A + a_off + m0;
#else
    GP_GLOBAL const T *a = A + a_off + (ulong)m0 * lda;
#endif
#if TRANS_B
    GP_GLOBAL const T *b = B + b_off + (ulong)n0 * ldb;
#else
    GP_GLOBAL const T *b = B + b_off + n0;
#endif

    T acc[WM][WN];
#pragma unroll
    for (uint i = 0; i < WM; i++)
#pragma unroll
        for (uint j = 0; j < WN; j++) acc[i][j] = (T)0;
    T ra[LA], rb[LB];

    /* Loads step k0's tiles into ra and rb. Consecutive items take consecutive elements of the
     * matrix's rows (coalesced); element e of the tile is (kk, ii) of op(A). */
#if TRANS_A
#define A_KK(e) ((e) / TM)
#define A_II(e) ((e) % TM)
#define A_AT(kk, ii) ((IDX)(kk) * lda + (ii))
#else
#define A_KK(e) ((e) % TK)
#define A_II(e) ((e) / TK)
#define A_AT(kk, ii) ((IDX)(ii) * lda + (kk))
#endif
#if TRANS_B
#define B_KK(e) ((e) % TK)
#define B_JJ(e) ((e) / TK)
#define B_AT(kk, jj) ((IDX)(jj) * ldb + (kk))
#else
#define B_KK(e) ((e) / TN)
#define B_JJ(e) ((e) % TN)
#define B_AT(kk, jj) ((IDX)(kk) * ldb + (jj))
#endif
#if EXACT
#define GEMM_LOAD(k0)                                                                          \
    do {                                                                                       \
        _Pragma("unroll") for (uint l = 0; l < LA; l++) {                                      \
            uint e = t + l * NT;                                                               \
            ra[l] = a[A_AT(A_KK(e), A_II(e))];                                                 \
        }                                                                                      \
        _Pragma("unroll") for (uint l = 0; l < LB; l++) {                                      \
            uint e = t + l * NT;                                                               \
            rb[l] = b[B_AT(B_KK(e), B_JJ(e))];                                                 \
        }                                                                                      \
    } while (0)
#else
#define GEMM_LOAD(k0)                                                                          \
    do {                                                                                       \
        _Pragma("unroll") for (uint l = 0; l < LA; l++) {                                      \
            uint e = t + l * NT;                                                               \
            ra[l] = m0 + A_II(e) < M && (k0) + A_KK(e) < K ? a[A_AT(A_KK(e), A_II(e))] : (T)0; \
        }                                                                                      \
        _Pragma("unroll") for (uint l = 0; l < LB; l++) {                                      \
            uint e = t + l * NT;                                                               \
            rb[l] = n0 + B_JJ(e) < N && (k0) + B_KK(e) < K ? b[B_AT(B_KK(e), B_JJ(e))] : (T)0; \
        }                                                                                      \
    } while (0)
#endif
#define GEMM_STORE(buf)                                                                        \
    do {                                                                                       \
        _Pragma("unroll") for (uint l = 0; l < LA; l++) {                                      \
            uint e = t + l * NT;                                                               \
            As[(buf) * (TK * SA) + A_KK(e) * SA + A_II(e)] = ra[l];                            \
        }                                                                                      \
        _Pragma("unroll") for (uint l = 0; l < LB; l++) {                                      \
            uint e = t + l * NT;                                                               \
            Bs[(buf) * (TK * SB) + B_KK(e) * SB + B_JJ(e)] = rb[l];                            \
        }                                                                                      \
    } while (0)
#if TRANS_A
#define A_STEP ((ulong)TK * lda)
#else
#define A_STEP TK
#endif
#if TRANS_B
#define B_STEP TK
#else
#define B_STEP ((ulong)TK * ldb)
#endif

    IDX steps = (K + TK - 1) / TK;
    uint cur = 0;
    if (steps > 0) {
        GEMM_LOAD((IDX)0);
        GEMM_STORE(0);
    }
    gp_barrier();
    for (IDX s = 0; s < steps; s++) {
        int more = s + 1 < steps;
        if (more) {
            a += A_STEP;
            b += B_STEP;
            GEMM_LOAD((s + 1) * TK);
        }
        const GP_LOCAL_PTR(T) as = As + cur * (TK * SA);
        const GP_LOCAL_PTR(T) bs = Bs + cur * (TK * SB);
#pragma unroll
        for (uint kk = 0; kk < TK; kk++) {
            T av[WM], bv[WN];
#pragma unroll
            for (uint i = 0; i < WM; i++) av[i] = as[kk * SA + ROW(ty, i)];
#pragma unroll
            for (uint j = 0; j < WN; j++) bv[j] = bs[kk * SB + COL(tx, j)];
#pragma unroll
            for (uint i = 0; i < WM; i++)
#pragma unroll
                for (uint j = 0; j < WN; j++) acc[i][j] += av[i] * bv[j];
        }
        if (more) GEMM_STORE(cur ^ 1);
        gp_barrier();
        cur ^= 1;
    }

    /* beta == 0 never reads C, so NaN there does not spread. */
    C += c_off;
#pragma unroll
    for (uint i = 0; i < WM; i++) {
        IDX r = m0 + ROW(ty, i);
#pragma unroll
        for (uint j = 0; j < WN; j++) {
            IDX c = n0 + COL(tx, j);
            if (EXACT || (r < M && c < N)) {
                IDX at = r * ldc + c;
                C[at] = beta == (T)0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * C[at];
            }
        }
    }
}
