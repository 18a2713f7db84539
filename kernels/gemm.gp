/* gp_gemm's tiled kernel: C = alpha * op(A) * op(B) + beta * C, row-major C (core turns
 * column-major calls around, so one case is all the kernel knows). Built per shape and case:
 *   -DGEMM_SHAPE=tile_m,tile_n,tile_k,work_m,work_n  (gp_gemm_params)
 *   -DGEMM_FLAGS=bits: 1 A transposed, 2 B transposed, 4 M, N and K are multiples of the tile
 *                (no bounds checks), 8 64-bit indices (some matrix spans 2^32 elements or more),
 *                16 the direct variant for CPUs (below), 32 offsets and leading dimensions of A
 *                and B are multiples of 16 bytes, 64 a slice of k per index of the launch's
 *                second dimension (gemm.c's split), 128 C's offset and leading dimension are
 *                multiples of 16 bytes.
 *   -DGEMM_STAGES=n, 3 to 5: asynchronous copies, n steps in flight (PIPE, below) where the
 *                kernel has them; else 0.
 * One shape string keeps the options short enough for the built-in kernel table.
 *
 * A work-group computes a TM x TN block of C in a 1D group of NT items. Per step of TK, the
 * tiles of op(A) and op(B) are stored k-major in local memory (As[k][m], Bs[k][n]), so each
 * item reads contiguous runs for its WM x WN block of accumulators, kept in registers. Tiles
 * are double-buffered: the next tile's global loads go to registers before the current tile's
 * products, and to the other buffer after them, so one barrier per step suffices. Where the
 * prelude has asynchronous copies (CUDA from sm_80 on) and -DGEMM_STAGES asks for them,
 * the tiles go straight from global to local memory instead, several steps in flight
 * (PIPE, below), in the launch's local memory (GP_LOCAL_ARG, sized by pipe_stages in gemm.c),
 * which can pass the 48 KiB that CUDA allows a kernel's own arrays. CPUs run the direct
 * variant instead (below). */

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
#define DIRECT ((GEMM_FLAGS >> 4) & 1)
#define ALIGNED ((GEMM_FLAGS >> 5) & 1)
#define SPLIT ((GEMM_FLAGS >> 6) & 1)
#define ALIGNED_C ((GEMM_FLAGS >> 7) & 1)
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

/* FP64 matrix instructions where the prelude has them (GP__MMA_F64: NVIDIA from sm_80 on, through
 * CUDA or NVIDIA's OpenCL) and the shape lets warps tile the block evenly. A warp of 32 then computes 8*WM rows by
 * 4*WN columns of C as 16 x 8 blocks; a lane holds, of each, two neighbouring elements in row
 * r and two in row r + 8 (r = lane / 4), which is WM x WN accumulators, as on the other path. */
#if DIRECT
#define MMA 0
#define ROW(ty, i) ((ty) * WM + (i))
#define COL(tx, j) ((tx) * WN + (j))
#elif defined(GP__MMA_F64) && GP_TYPE == 2 && RM % 8 == 0 && RN % 4 == 0 && TK % 8 == 0 && WM % 2 == 0 && WN % 2 == 0
#define MMA 1
#define ROW(ty, i) ((ty) + 8 * (i))
#define COL(tx, j) ((tx) + 8 * ((j) / 2) + (j) % 2)
#else
#define MMA 0
#define ROW(ty, i) (((i) / VM) * (RM * VM) + (ty) * VM + (i) % VM)
#define COL(tx, j) (((j) / VN) * (RN * VN) + (tx) * VN + (j) % VN)
#endif

/* Rows of the local tiles are padded by 4 elements: A's tile is filled along k when A is not
 * transposed, and the padding spreads those stores over the banks, as it does the matrix
 * instructions' reads of 4 rows at once. */
#define SA (TM + 4)
#define SB (TN + 4)
#ifndef GEMM_STAGES
#define GEMM_STAGES 0
#endif

/* d[0 .. n-1] = the n neighbouring elements at p, read as one vector; PTR is GP_LOCAL_PTR or
 * GEMM_GLOBAL_PTR. */
#define GEMM_CAT_(a, b) a##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
#define GEMM_GLOBAL_PTR(V) GP_GLOBAL V *
#define GEMM_READ(n, d, p, PTR) GEMM_CAT(GEMM_READ, n)(d, p, PTR)
#define GEMM_READ1(d, p, PTR) (d)[0] = *(p)
#define GEMM_READ2(d, p, PTR)                                                                  \
    do {                                                                                       \
        GEMM_CAT(T, 2) v_ = *(const PTR(GEMM_CAT(T, 2)))(p);                                   \
        (d)[0] = v_.x, (d)[1] = v_.y;                                                          \
    } while (0)
#define GEMM_READ4(d, p, PTR)                                                                  \
    do {                                                                                       \
        GEMM_CAT(T, 4) v_ = *(const PTR(GEMM_CAT(T, 4)))(p);                                   \
        (d)[0] = v_.x, (d)[1] = v_.y, (d)[2] = v_.z, (d)[3] = v_.w;                            \
    } while (0)

/* Global loads take VLA (VLB) neighbouring elements of A (B) at once where the tiles lie whole
 * and 16-byte aligned and the items' shares are whole vectors. */
#if EXACT && ALIGNED && (TRANS_A ? TM : TK) % VEC == 0 && LA % VEC == 0
#define VLA VEC
#else
#define VLA 1
#endif
#if EXACT && ALIGNED && (TRANS_B ? TK : TN) % VEC == 0 && LB % VEC == 0
#define VLB VEC
#else
#define VLB 1
#endif

/* PIPE: the local tiles are laid out as the matrices store them, so that each 16-byte piece
 * of a line copies straight in: A's lines run along k unless A is transposed, B's along n
 * unless B is. Lines along k are padded by 4 elements too (f64, tile_k a multiple of 8): each
 * half-warp's reads of 4 lines by 4 k then fall on 32 different banks. With 2 (every bank
 * twice over the whole warp, but not per half) DGEMM ran 10-11% slower on an H100; so did two
 * layouts as free of bank conflicts, the same instructions but the addresses: lines not padded
 * with their pieces swizzled (k ^ 4 on lines 2 and 3 of each 4), 11% slower from N = 2048, and
 * lines padded by 4 each pair, 13% (cause not found). Three steps of 128 x 64 then took 37 or
 * 43 KiB instead of 49 and fit NVIDIA OpenCL's 48, but ran 5-13% slower there from N = 1024
 * than its registers' staging (its compiler takes the same cp.async). B's lines not padded but
 * swizzled (column n of line k at n ^ 4 (k % 4)), A's padded, take three steps in exactly 48
 * KiB: CUDA ran that 5-8% slower from N = 2048 with five steps, and NVIDIA's OpenCL counts 1 byte
 * of the kernel's own local memory besides, so it does not fit there. Each item copies whole
 * pieces at the same place in lines NT / (pieces per line) apart. Elsewhere the tiles are
 * k-major, in two buffers. */
#if GEMM_STAGES >= 3 && GEMM_STAGES <= 5 && MMA && defined(GP__CP_ASYNC) && VLA == VEC && VLB == VEC && \
    NT % ((TRANS_A ? TM : TK) / VEC) == 0 && NT % ((TRANS_B ? TK : TN) / VEC) == 0
#define PIPE 1
#define NBUF GEMM_STAGES
#define SK (TK + 4)
#else
#define PIPE 0
#define NBUF 2
#endif

/* GEMM_UNROLL: the main loop takes NBUF steps at a time, so that each step's buffer is a
 * constant and its local addresses are worked out once instead of every step. On an H100 that
 * took the 128 x 128 SGEMM from 594 instructions a step (512 of them products) to 565 and ran it
 * 3-5% faster from N = 1536; the 128 x 64 DGEMM from 151 to 117, 4-6% faster from N = 2048.
 * Items of fewer than 64 accumulators keep the buffer in a variable: unrolled, the 64 x 64
 * DGEMM took 90 registers instead of 72, two groups fit an SM instead of three, and it ran 9%
 * slower at N = 3072; the 64 x 32 SGEMM ran 16% slower at N = 512 (cause not found). So do the
 * FP64 matrix instructions without PIPE (NVIDIA's OpenCL), which ran 10-30% slower unrolled. */
#define GEMM_UNROLL (WM * WN >= 64 && (PIPE || !MMA))
/* GEMM_AHEAD: without PIPE, a group of 256 items of 64 accumulators (NVIDIA's OpenCL's 128 x 128
 * DGEMM: 244 registers, one group an SM) loads each tile two steps ahead, into two sets of
 * registers that take turns (so the loop takes two steps at a time), and the loads have two
 * steps' products to arrive in, where no other group on the SM hides them: on an H100 2.5-4.5%
 * faster from N = 1536 (45.5 -> 46.9 TFLOP/s at 4096, 47.2 -> 48.7 at 8192). Where two groups
 * share an SM the extra registers cost more than they give: through NVIDIA's OpenCL 128 x 64 ran
 * 3-9% slower so at N = 2048 / 4096 / 8192, and the 64 x 64 x 16 of 4 x 4 items 11% slower at
 * N = 1024. The CUDA backend without PIPE, the same registers' staging, ran the 128 x 64 DGEMM
 * at 43-46 TFLOP/s from N = 2048 with two steps ahead and 39-44 with one: no faster than
 * NVIDIA's OpenCL. What PIPE's copies give CUDA (57 TFLOP/s) is what NVIDIA's OpenCL lacks room
 * for (the class table in gemm.c). */
#define GEMM_AHEAD (MMA && !PIPE && WM * WN >= 64 && NT >= 256)
#if PIPE && !TRANS_A
#define AT(k, m) ((m) * SK + (k))
#define A_TILE (TM * SK)
#else
#define AT(k, m) ((k) * SA + (m))
#define A_TILE (TK * SA)
#endif
#if PIPE && TRANS_B
#define BT(k, n) ((n) * SK + (k))
#define B_TILE (TN * SK)
#else
#define BT(k, n) ((k) * SB + (n))
#define B_TILE (TK * SB)
#endif

/* Groups are numbered along n within bands of GROUP_M block rows, so that groups running at
 * once share rows of A and columns of B in the cache: tile g of nbm x nbn starts at row m0 and
 * column n0 of C. */
#define GROUP_M 8
#define GEMM_TILE(g, nbm, nbn, m0, n0)                                                         \
    do {                                                                                       \
        uint band_ = GROUP_M * (nbn), first_ = (g) / band_ * GROUP_M;                          \
        uint rows_ = (nbm) - first_ < GROUP_M ? (nbm) - first_ : GROUP_M;                      \
        m0 = (IDX)(first_ + (g) % band_ % rows_) * TM, n0 = (IDX)((g) % band_ / rows_) * TN;   \
    } while (0)

GP_KERNEL void gp_gemm(GP_GLOBAL const T *A, ulong a_off, IDX lda, GP_GLOBAL const T *B, ulong b_off, IDX ldb,
                       GP_GLOBAL T *C, ulong c_off, IDX ldc, IDX M, IDX N, IDX K, T alpha, T beta,
                       GP_LOCAL_ARG(GEMM_CAT(T, VEC), tiles))
{
#if PIPE
    /* NBUF buffers of A's tile, then of B's, from 16 bytes on; the argument's vector type
     * makes the launch's local memory 16-byte aligned */
    GP_LOCAL_BIND(GEMM_CAT(T, VEC), tiles);
    GP_LOCAL_PTR(T) As = (GP_LOCAL_PTR(T))tiles;
    GP_LOCAL_PTR(T) Bs = As + (NBUF * A_TILE + VEC - 1) / VEC * VEC;
#elif !DIRECT
    /* Arrays of the kernel's own where the launch's memory is not needed: on an H100 the
     * SGEMM ran 1% slower in the launch's. */
    GP_LOCAL __attribute__((aligned(16))) T As[2 * A_TILE];
    GP_LOCAL __attribute__((aligned(16))) T Bs[2 * B_TILE];
#endif
    uint t = gp_local_id(0);
#if MMA
    /* ty and tx: the lane's first row and column of C in the block; bx: the column of B it
     * feeds to the matrix instructions. Lanes are t % 32: this path exists only where a
     * subgroup is a warp of 32. */
    uint w = t / 32, r = t % 32 / 4, q = t % 4;
    uint ty = w % (RM / 8) * (8 * WM) + r, tx = w / (RM / 8) * (4 * WN) + 2 * q, bx = tx - 2 * q + r;
#else
    uint tx = t % RN, ty = t / RN;
#endif

    uint nbm = (uint)((M + TM - 1) / TM), nbn = (uint)((N + TN - 1) / TN), g = gp_group_id(0);
#if SPLIT
    g += nbm * nbn - (uint)gp_num_groups(0); /* the split's tiles are the last ones */
#endif
    IDX m0, n0;
    GEMM_TILE(g, nbm, nbn, m0, n0);

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
#if SPLIT
    /* Slice gp_group_id(1) of the launch's second dimension takes its share of K's steps and
     * writes its whole tile to C as scratch (below); gp_gemm_sum adds the slices up. */
    IDX per = (K / TK + (K % TK != 0) + gp_num_groups(1) - 1) / gp_num_groups(1) * TK;
    IDX k_first = (IDX)gp_group_id(1) * per < K ? (IDX)gp_group_id(1) * per : K;
    K = K - k_first < per ? K - k_first : per;
#if TRANS_A
    a += (ulong)k_first * lda;
#else
    a += k_first;
#endif
#if TRANS_B
    b += k_first;
#else
    b += (ulong)k_first * ldb;
#endif
#endif

    T acc[WM][WN];
#pragma unroll
    for (uint i = 0; i < WM; i++)
#pragma unroll
        for (uint j = 0; j < WN; j++) acc[i][j] = (T)0;
#if !DIRECT && !PIPE
    T ra[LA], rb[LB];
#if GEMM_AHEAD
    T ra2[LA], rb2[LB];
#endif
#endif

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
#define GEMM_LOAD(k0, ra, rb)                                                                  \
    do {                                                                                       \
        _Pragma("unroll") for (uint l = 0; l < LA / VLA; l++) {                                \
            uint e = (t + l * NT) * VLA;                                                       \
            GEMM_READ(VLA, ra + l * VLA, a + A_AT(A_KK(e), A_II(e)), GEMM_GLOBAL_PTR);         \
        }                                                                                      \
        _Pragma("unroll") for (uint l = 0; l < LB / VLB; l++) {                                \
            uint e = (t + l * NT) * VLB;                                                       \
            GEMM_READ(VLB, rb + l * VLB, b + B_AT(B_KK(e), B_JJ(e)), GEMM_GLOBAL_PTR);         \
        }                                                                                      \
    } while (0)
#else
#define GEMM_LOAD(k0, ra, rb)                                                                  \
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
/* Stores a step's tiles from ra and rb into local buffer buf, k-major. Where a vector of the global
 * loads lies along m (n), it is stored whole: element by element, a warp's stores of
 * neighbouring vectors fall four (f32) or two (f64) to a bank. On an H100 that made SGEMM 3-4%
 * and DGEMM on 128-row tiles 2-3% faster; f64 tiles of fewer rows keep the element stores, which
 * ran the 64 x 64 DGEMM at N = 512 in 0.024 ms against 0.032 for whole vectors (cause not found:
 * the same loads, stores and barriers, scheduled differently). */
#define GEMM_WHOLE (VEC == 4 || TM >= 128)
/* The n neighbouring elements at p = s[0 .. n-1], written as one vector; PTR as GEMM_READ's. */
#define GEMM_WRITE(n, p, s, PTR) GEMM_CAT(GEMM_WRITE, n)(p, s, PTR)
#define GEMM_WRITE1(p, s, PTR) *(p) = (s)[0]
#define GEMM_WRITE2(p, s, PTR)                                                                 \
    do {                                                                                       \
        GEMM_CAT(T, 2) v_;                                                                     \
        v_.x = (s)[0], v_.y = (s)[1];                                                          \
        *(PTR(GEMM_CAT(T, 2)))(p) = v_;                                                        \
    } while (0)
#define GEMM_WRITE4(p, s, PTR)                                                                 \
    do {                                                                                       \
        GEMM_CAT(T, 4) v_;                                                                     \
        v_.x = (s)[0], v_.y = (s)[1], v_.z = (s)[2], v_.w = (s)[3];                            \
        *(PTR(GEMM_CAT(T, 4)))(p) = v_;                                                        \
    } while (0)
/* One tile: S (rows of SS) from r, L elements an item in vectors of VL; whole: vector stores. */
#define GEMM_STORE_TILE(buf, S, SS, r, L, VL, KK, II, whole)                                   \
    _Pragma("unroll") for (uint l = 0; l < (L); l += (VL)) {                                   \
        uint e = (t + l / (VL) * NT) * (VL);                                                   \
        if (whole)                                                                             \
            GEMM_WRITE(VL, S + (buf) * (TK * SS) + KK(e) * SS + II(e), r + l, GP_LOCAL_PTR);   \
        else                                                                                   \
            _Pragma("unroll") for (uint v = 0; v < (VL); v++)                                  \
                S[(buf) * (TK * SS) + KK(e + v) * SS + II(e + v)] = r[l + v];                  \
    }
#define GEMM_STORE(buf, ra, rb)                                                                \
    do {                                                                                       \
        GEMM_STORE_TILE(buf, As, SA, ra, LA, VLA, A_KK, A_II, TRANS_A && GEMM_WHOLE)           \
        GEMM_STORE_TILE(buf, Bs, SB, rb, LB, VLB, B_KK, B_JJ, !TRANS_B && GEMM_WHOLE)          \
    } while (0)
#if DIRECT
    /* The direct variant, for CPUs (pocl), where a work-group runs as loops over its items on
     * one core: no local tiles, which would only be copies of what the caches hold. An item
     * computes WM neighbouring rows by WN neighbouring columns straight from A and B; the k loop
     * is cut into blocks of TK with a barrier after each, so that the items of a group take
     * turns on one block of A and B while it is in the cache. Rows and columns past the matrix
     * read its last ones; their results are not stored. In OpenCL C a row of WN columns (4, 8
     * or 16) is one vector of the language, so that the products are vector instructions
     * whatever the compiler's vectorizers make of the loops: pocl 5.0 on a Xeon made none of the
     * arrays' loops vector, and ran 8-12x slower than with the language's vectors. */
#if defined(__OPENCL_VERSION__) && (WN == 4 || WN == 8 || WN == 16)
#define GEMM_ROW GEMM_CAT(T, WN)
    GEMM_ROW row[WM];
#pragma unroll
    for (uint i = 0; i < WM; i++) row[i] = (GEMM_ROW)((T)0);
    /* Columns in a row are neighbours in B unless B is transposed or they are clamped at its edge. */
#define GEMM_STEP(k, ROW_I, COL_J)                                                             \
    do {                                                                                       \
        GEMM_ROW bv;                                                                           \
        if (!TRANS_B && COL_J(WN - 1) == COL_J(0) + WN - 1)                                    \
            bv = GEMM_CAT(vload, WN)(0, b + B_AT(k, COL_J(0)));                                \
        else                                                                                   \
            _Pragma("unroll") for (uint j = 0; j < WN; j++) ((T *)&bv)[j] = b[B_AT(k, COL_J(j))]; \
        _Pragma("unroll") for (uint i = 0; i < WM; i++) row[i] += a[A_AT(k, ROW_I(i))] * bv;    \
    } while (0)
#define GEMM_DIRECT_DONE()                                                                     \
    _Pragma("unroll") for (uint i = 0; i < WM; i++)                                            \
        _Pragma("unroll") for (uint j = 0; j < WN; j++) acc[i][j] = ((T *)&row[i])[j]
#else
#define GEMM_STEP(k, ROW_I, COL_J)                                                             \
    do {                                                                                       \
        T bv[WN];                                                                              \
        _Pragma("unroll") for (uint j = 0; j < WN; j++) bv[j] = b[B_AT(k, COL_J(j))];          \
        _Pragma("unroll") for (uint i = 0; i < WM; i++) {                                      \
            T av = a[A_AT(k, ROW_I(i))];                                                       \
            _Pragma("unroll") for (uint j = 0; j < WN; j++) acc[i][j] += av * bv[j];           \
        }                                                                                      \
    } while (0)
#define GEMM_DIRECT_DONE()
#endif
#define GEMM_DIRECT(ROW_I, COL_J)                                                              \
    for (IDX k0 = 0; k0 < K; k0 += TK) {                                                       \
        IDX k1 = K - k0 < TK ? K : k0 + TK;                                                    \
        for (IDX k = k0; k < k1; k++) GEMM_STEP(k, ROW_I, COL_J);                              \
        gp_barrier();                                                                          \
    }
    uint mi = ROW(ty, 0), nj = COL(tx, 0);
#define INSIDE_I(i) ((ulong)mi + (i))
#define INSIDE_J(j) ((ulong)nj + (j))
#define CLAMP_I(i) (m0 + mi + (i) < M ? mi + (i) : (uint)(M - 1 - m0))
#define CLAMP_J(j) (n0 + nj + (j) < N ? nj + (j) : (uint)(N - 1 - n0))
    if (EXACT || (m0 + TM <= M && n0 + TN <= N)) { /* the same for the whole group, as barriers need */
        GEMM_DIRECT(INSIDE_I, INSIDE_J)
    } else {
        GEMM_DIRECT(CLAMP_I, CLAMP_J)
    }
    GEMM_DIRECT_DONE();
#else
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

    /* The products of one step, from local buffers as and bs. */
#if MMA
/* On sm_90 the instruction that is 16 deep in k ran the 64 x 64 x 16 DGEMM 3-6% faster on an H100
 * than two 8 deep ones (N = 1024 to 4096); it needs tile_k a multiple of 16. A lane reads its
 * operands 8 bytes at a time. Two neighbouring k in one 16-byte read (the slots' k permuted, as
 * the sum allows) land in neighbouring registers, where the instruction wants rows g and g + 8
 * side by side: the moves that fix that up made the 128 x 64 DGEMM issue 45% more instructions
 * and run 8-30% slower on an H100. */
#if defined(gp__mma_f64_16x8x16) && TK % 16 == 0
#define KI 16
#define GEMM_MMA(i, j)                                                                         \
    gp__mma_f64_16x8x16(acc[i][2 * j], acc[i][2 * j + 1], acc[i + 1][2 * j], acc[i + 1][2 * j + 1], fa[0][i], \
                        fa[0][i + 1], fa[1][i], fa[1][i + 1], fa[2][i], fa[2][i + 1], fa[3][i], fa[3][i + 1], fb[0][j], \
                        fb[1][j], fb[2][j], fb[3][j])
#else
#define KI 8
#define GEMM_MMA(i, j)                                                                         \
    gp__mma_f64_16x8x8(acc[i][2 * j], acc[i][2 * j + 1], acc[i + 1][2 * j], acc[i + 1][2 * j + 1], fa[0][i], \
                       fa[0][i + 1], fa[1][i], fa[1][i + 1], fb[0][j], fb[1][j])
#endif
/* The products of one step from local buffers as and bs; `then` after the first operand reads
 * (PIPE's copies, below). fa[v], fb[v]: k = kk + 4 v + q. A's operands read per pair of rows
 * just before their matrix instructions instead ran DGEMM 1-4% slower through CUDA (N = 1024 to
 * 8192) and 17-20% slower through NVIDIA's OpenCL on an H200. */
#define GEMM_PRODUCTS_THEN(as, bs, then)                                                       \
    _Pragma("unroll") for (uint kk = 0; kk < TK; kk += KI) {                                   \
        T fa[KI / 4][WM], fb[KI / 4][WN / 2];                                                  \
        _Pragma("unroll") for (uint v = 0; v < KI / 4; v++) {                                  \
            _Pragma("unroll") for (uint i = 0; i < WM; i++) fa[v][i] = (as)[AT(kk + 4 * v + q, ROW(ty, i))]; \
            _Pragma("unroll") for (uint j = 0; j < WN / 2; j++) fb[v][j] = (bs)[BT(kk + 4 * v + q, bx + 8 * j)]; \
        }                                                                                      \
        if (kk == 0) {                                                                         \
            then;                                                                              \
        }                                                                                      \
        _Pragma("unroll") for (uint i = 0; i < WM; i += 2)                                     \
            _Pragma("unroll") for (uint j = 0; j < WN / 2; j++) GEMM_MMA(i, j);                \
    }
#define GEMM_PRODUCTS(as, bs) GEMM_PRODUCTS_THEN(as, bs, (void)0)
#else
/* The order of an item's WM x WN products of one k. Items of 8 rows or more take 4 x 4 blocks in
 * turn, each column by column with the rows walked down and up in turn, so that neighbouring
 * products share an operand: the 128 x 128 SGEMM (8 x 8 per item) then ran 0.92-0.94x cuBLAS on
 * an H100 against 0.87-0.89x row by row, its dispatch stalls (register bank conflicts) down
 * from 0.55 to 0.28 per instruction. Items of 4 rows ran 3-17% slower so, and go row by row. */
#if WM >= 8 && WM % 4 == 0 && WN % 4 == 0
#define GEMM_FMAS()                                                                            \
    _Pragma("unroll") for (uint jb = 0; jb < WN; jb += 4)                                      \
        _Pragma("unroll") for (uint ib = 0; ib < WM; ib += 4)                                  \
            _Pragma("unroll") for (uint j = jb; j < jb + 4; j++)                               \
                _Pragma("unroll") for (uint d = 0; d < 4; d++) {                               \
                    uint i = ib + (j % 2 ? 3 - d : d);                                         \
                    acc[i][j] += av[i] * bv[j];                                                \
                }
#else
#define GEMM_FMAS()                                                                            \
    _Pragma("unroll") for (uint i = 0; i < WM; i++)                                            \
        _Pragma("unroll") for (uint j = 0; j < WN; j++) acc[i][j] += av[i] * bv[j]
#endif
#define GEMM_PRODUCTS(as, bs)                                                                  \
    _Pragma("unroll") for (uint kk = 0; kk < TK; kk++) {                                       \
        T av[WM], bv[WN];                                                                      \
        _Pragma("unroll") for (uint i = 0; i < WM; i += VM)                                    \
            GEMM_READ(VM, av + i, (as) + kk * SA + ROW(ty, i), GP_LOCAL_PTR);                  \
        _Pragma("unroll") for (uint j = 0; j < WN; j += VN)                                    \
            GEMM_READ(VN, bv + j, (bs) + kk * SB + COL(tx, j), GP_LOCAL_PTR);                  \
        GEMM_FMAS();                                                                           \
    }
#endif

#if PIPE
    /* Copies tile s's pieces into buffer buf: ALINES lines of A of ALEN elements, ASTRIDE apart
     * in local memory (lda in A); B likewise. Then the next tile. */
#if TRANS_A
#define ALINES TK
#define ALEN TM
#define ASTRIDE SA
#else
#define ALINES TM
#define ALEN TK
#define ASTRIDE SK
#endif
#if TRANS_B
#define BLINES TN
#define BLEN TK
#define BSTRIDE SK
#else
#define BLINES TK
#define BLEN TN
#define BSTRIDE SB
#endif
#define GEMM_COPY(dst, src, ld, LINES, LEN, STRIDE)                                            \
    do {                                                                                       \
        uint line_ = t / (LEN / VEC), at_ = t % (LEN / VEC) * VEC;                              \
        _Pragma("unroll") for (uint l = 0; l < (LINES) * (LEN / VEC) / NT; l++, line_ += NT / (LEN / VEC)) \
            gp__cp_async16((dst) + line_ * (STRIDE) + at_, (src) + (IDX)line_ * (ld) + at_);    \
    } while (0)
#define GEMM_FETCH(buf)                                                                        \
    do {                                                                                       \
        GEMM_COPY(As + (buf) * A_TILE, a, lda, ALINES, ALEN, ASTRIDE);                         \
        GEMM_COPY(Bs + (buf) * B_TILE, b, ldb, BLINES, BLEN, BSTRIDE);                         \
        a += A_STEP;                                                                           \
        b += B_STEP;                                                                           \
    } while (0)
    /* a and b are the same for the whole group, so the compiler keeps them, their steps and the
     * loop's control in uniform registers, and works out each item's place per copy. Tried on an
     * H100: pointers of the items' own, worked out once, cut the 128 x 64 DGEMM's instructions
     * by 9% and ran it 1% faster from N = 4096, but took the loop off the uniform registers and
     * ran 64 x 64 tiles 15-20% slower; the items' offsets worked out once and added to a and b
     * per copy (139 instructions a step instead of 160) ran within 1% from N = 2048, and 32 x 64
     * tiles 9% slower at N = 1536. */
    /* Tile s + NBUF - 1 is copied into the buffer that step s - 1 read, after the barrier that
     * says every item is done with it; a group of copies is committed each step, empty or not,
     * so that waiting for all but the newest one means tile s is in. */
    IDX steps = K / TK;
#pragma unroll
    for (uint s = 0; s + 1 < NBUF; s++) {
        if (s < steps) GEMM_FETCH(s);
        gp__cp_async_commit();
    }
#define GEMM_PIPE_FETCH(s, buf)                                                                \
    do {                                                                                       \
        if ((s) + NBUF - 1 < steps) GEMM_FETCH((buf) == 0 ? NBUF - 1 : (buf) - 1);             \
        gp__cp_async_commit();                                                                 \
    } while (0)
/* Unrolled, the copies of tile s + NBUF - 1 go after the local reads of step s's operands. On
 * sm_90 ptxas puts two NOPs after each FP64 matrix instruction unless it has other work for
 * those slots (Nsight Compute's source view: a third of the 128 x 64 DGEMM's warp samples sat
 * on them); now it issues the copies there, and overlaps steps across the barrier. On an H100 that
 * took the 128 x 64 DGEMM from 0.78 / 0.80 / 0.82 / 0.86-0.87x cuBLAS to 0.82 / 0.82 / 0.85 /
 * 0.88 at N = 2048 / 3072 / 4096 / 8192. The smaller shapes, not unrolled, ran 12% slower so
 * (64 x 64 at N = 1024). Tried after it on the H100, and slower: operands read a step ahead (24
 * more registers, which spilled through NVRTC; 9-17% slower), each item's operands read through
 * one pointer with constant offsets (128 x 64 the same, the smaller shapes 8-18% slower), 128 x
 * 64 x 16 tiles with the loop not unrolled (6% slower with the 8-deep instruction, 17% with the
 * 16-deep one; unrolled, they spill), and this order on the registers' path through NVIDIA's
 * OpenCL (N = 512 12-23% faster, 1024 to 8192 0.5-5% slower). Three groups an SM instead of two
 * (launch bounds of 168 registers) ran 128 x 64 at 0.66-0.74x cuBLAS with the loop not
 * unrolled and 0.22x unrolled (it spills). */
#if GEMM_UNROLL
#define GEMM_PIPE_PRODUCTS(s, buf)                                                             \
    GEMM_PRODUCTS_THEN(As + (buf) * A_TILE, Bs + (buf) * B_TILE, GEMM_PIPE_FETCH(s, buf))
#else
#define GEMM_PIPE_PRODUCTS(s, buf)                                                             \
    do {                                                                                       \
        GEMM_PIPE_FETCH(s, buf);                                                               \
        GEMM_PRODUCTS(As + (buf) * A_TILE, Bs + (buf) * B_TILE)                                \
    } while (0)
#endif
#define GEMM_PIPE_STEP(s, buf)                                                                 \
    do {                                                                                       \
        gp__cp_async_wait(NBUF - 2);                                                           \
        gp_barrier();                                                                          \
        GEMM_PIPE_PRODUCTS(s, buf);                                                            \
    } while (0)
    IDX s = 0;
#if GEMM_UNROLL
    /* Step u of the NBUF in the loop, and of the fewer left after it. Written out: a loop over u
     * that the compiler unrolled gave the same steps, but ran 128 x 64 with 4 stages 4-6% slower
     * from N = 2048 on an H100. */
#define GEMM_PIPE_NTH(u) if (NBUF > (u)) GEMM_PIPE_STEP(s + (u), (u))
#define GEMM_PIPE_LEFT(u) if (NBUF > (u) + 1 && s + (u) < steps) GEMM_PIPE_STEP(s + (u), (u))
    for (; s + NBUF - 1 < steps; s += NBUF) {
        GEMM_PIPE_NTH(0);
        GEMM_PIPE_NTH(1);
        GEMM_PIPE_NTH(2);
        GEMM_PIPE_NTH(3);
        GEMM_PIPE_NTH(4);
    }
    GEMM_PIPE_LEFT(0);
    GEMM_PIPE_LEFT(1);
    GEMM_PIPE_LEFT(2);
    GEMM_PIPE_LEFT(3);
#else
    for (uint rd = 0; s < steps; s++, rd = rd + 1 == NBUF ? 0 : rd + 1) GEMM_PIPE_STEP(s, rd);
#endif
#else
    IDX steps = (K + TK - 1) / TK;
    if (steps > 0) {
        GEMM_LOAD((IDX)0, ra, rb);
        GEMM_STORE(0, ra, rb);
    }
#if GEMM_AHEAD
    if (steps > 1) {
        a += A_STEP;
        b += B_STEP;
        GEMM_LOAD((IDX)TK, ra2, rb2);
    }
#define GEMM_DIST 2
#define GEMM_RA2 ra2
#define GEMM_RB2 rb2
#else
#define GEMM_DIST 1
#define GEMM_RA2 ra
#define GEMM_RB2 rb
#endif
    gp_barrier();
/* Step s from buffer buf: tile s + GEMM_DIST goes into rf and bf (their last tile went into a
 * buffer at the step before), then tile s + 1, in rn and bn, into the other buffer. */
#define GEMM_TILE_STEP(s, buf, rn, bn, rf, bf)                                                 \
    do {                                                                                       \
        if ((s) + GEMM_DIST < steps) {                                                         \
            a += A_STEP;                                                                       \
            b += B_STEP;                                                                       \
            GEMM_LOAD(((s) + GEMM_DIST) * TK, rf, bf);                                         \
        }                                                                                      \
        GEMM_PRODUCTS(As + (buf) * A_TILE, Bs + (buf) * B_TILE)                                \
        if ((s) + 1 < steps) GEMM_STORE((buf) ^ 1, rn, bn);                                    \
        gp_barrier();                                                                          \
    } while (0)
    IDX s = 0;
#if GEMM_UNROLL || GEMM_AHEAD
    for (; s + 1 < steps; s += 2) {
        GEMM_TILE_STEP(s, 0, GEMM_RA2, GEMM_RB2, ra, rb);
        GEMM_TILE_STEP(s + 1, 1, ra, rb, GEMM_RA2, GEMM_RB2);
    }
    if (s < steps) GEMM_TILE_STEP(s, 0, GEMM_RA2, GEMM_RB2, ra, rb);
#else
    for (uint cur = 0; s < steps; s++, cur ^= 1) GEMM_TILE_STEP(s, cur, ra, rb, ra, rb);
#endif
#endif
#endif

    /* On the matrix instructions' path an item's columns of C come in pairs of neighbours,
     * written as one 16-byte vector where C allows it (CRUN 2). Element by element, a warp's
     * stores there cover half of each 32-byte sector they touch, and the stores of a round of
     * tiles all come at once, as it ends: in pairs, DGEMM ran 10% / 5% / 4% / 3% / 1.5% / 0.5%
     * faster on an H200 at N = 1024 / 1536 / 2048 / 2176 / 4096 / 8192. The other path's runs of
     * VN as vectors made SGEMM 3% faster at N = 1024 (64 x 128 tiles) but 1-2% slower from 2048
     * (128 x 128), and stores element by element (CRUN 1). */
#if MMA
#define CRUN 2
#else
#define CRUN 1
#endif
#if SPLIT
    /* The whole tile, the slices one after the other in C (the scratch: 16-byte aligned), each
     * with the split's tiles in order; gp_gemm_sum keeps what is inside the product. */
    C += c_off + ((ulong)gp_group_id(1) * gp_num_groups(0) + gp_group_id(0)) * (TM * TN);
#pragma unroll
    for (uint i = 0; i < WM; i++)
#pragma unroll
        for (uint j = 0; j < WN; j += CRUN)
            GEMM_WRITE(CRUN, C + ROW(ty, i) * TN + COL(tx, j), acc[i] + j, GEMM_GLOBAL_PTR);
#else
    /* beta == 0 never reads C, so NaN there does not spread. */
    C += c_off;
#if EXACT && ALIGNED_C && CRUN > 1
#pragma unroll
    for (uint i = 0; i < WM; i++) {
        GP_GLOBAL T *row = C + (m0 + ROW(ty, i)) * ldc + n0;
#pragma unroll
        for (uint j = 0; j < WN; j += CRUN) {
            T v[CRUN];
            if (beta != (T)0) GEMM_READ(CRUN, v, row + COL(tx, j), GEMM_GLOBAL_PTR);
#pragma unroll
            for (uint u = 0; u < CRUN; u++)
                v[u] = beta == (T)0 ? alpha * acc[i][j + u] : alpha * acc[i][j + u] + beta * v[u];
            GEMM_WRITE(CRUN, row + COL(tx, j), v, GEMM_GLOBAL_PTR);
        }
    }
#else
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
#endif
#endif
}

/* C = alpha * (the sum of the S slices in W of the product's last tiles, gp_gemm's SPLIT)
 * + beta * C, inside M x N: the end of gemm.c's split in k. */
GP_KERNEL void gp_gemm_sum(GP_GLOBAL const T *W, GP_GLOBAL T *C, ulong c_off, IDX ldc, IDX M, IDX N, uint S,
                           uint tiles, T alpha, T beta)
{
    ulong i = gp_global_id(0), size = (ulong)tiles * (TM * TN);
    if (i >= size) return;
    uint nbm = (uint)((M + TM - 1) / TM), nbn = (uint)((N + TN - 1) / TN);
    uint g = nbm * nbn - tiles + (uint)(i / (TM * TN)), e = (uint)(i % (TM * TN));
    IDX m0, n0;
    GEMM_TILE(g, nbm, nbn, m0, n0);
    IDX r = m0 + e / TN, c = n0 + e % TN;
    if (r >= M || c >= N) return;
    T sum = W[i];
    for (uint s = 1; s < S; s++) sum += W[s * size + i];
    GP_GLOBAL T *to = C + c_off + (ulong)r * ldc + c;
    *to = beta == (T)0 ? alpha * sum : alpha * sum + beta * *to;
}
