/* Built-in scans: one pass over the data with a decoupled look-back.
 *
 * Each work-group scans one tile of GP_SCAN_ITEMS elements per work-item. On GPUs a tile is
 * its group's id: they start groups in id order, so a tile only waits on tiles already
 * running. Elsewhere (pocl runs groups on a few threads in no promised order) a tile takes a
 * ticket from an atomic counter when its group starts, which gives the same guarantee. A tile
 * publishes its aggregate, looks back over its predecessors' published values until it meets
 * an inclusive prefix, then publishes its own inclusive prefix.
 *
 * A tile is loaded coalesced into local memory; each work-item totals its consecutive items,
 * GP_SCAN_RAKERS work-items scan the totals and one the rakers' sums; the whole group reads
 * the GP_SCAN_LOOK nearest predecessors at once and folds them in a tree, so one memory round
 * trip covers a window of predecessors, where one work-item walking back would pay one per
 * tile. Only plain local memory and barriers: on the H100 this ran at 0.99x CUB with CUDA and
 * NVIDIA's OpenCL, where an earlier version built on subgroup scans ran at 0.94-0.95x.
 *
 * Tiles publish through tagged words (kernels/types.gp) with the call's stamp, so nothing is
 * zeroed between launches. state: [0] the ticket counter, which the tile that takes the last
 * ticket puts back to zero, then from byte 16 GP_WORDS(T) words per tile.
 */

/* The shape: elements per work-item and the largest work-group the host launches (a power of
 * two), the same as src/core/scan.c's. Chosen on an H100: 256 x 32 four-byte items ran at 0.99x
 * CUB, 128 x 32 at 0.96-0.97x, 128 x 16 at 0.74x. */
#if GP_TYPE == 2 || GP_TYPE == 5 || GP_TYPE == 6
#ifndef GP_SCAN_ITEMS
#define GP_SCAN_ITEMS 16
#endif
#define GP_SCAN_PAD(i) ((i) + ((i) >> 4))
#else
#ifndef GP_SCAN_ITEMS
#define GP_SCAN_ITEMS 32
#endif
#define GP_SCAN_PAD(i) ((i) + ((i) >> 5))
#endif
#ifndef GP_SCAN_GROUP
#define GP_SCAN_GROUP 256
#endif
/* Loops that only a tile at the end of the data takes stay rolled: unrolled, they doubled the
 * kernel's code, and the whole scan ran 3% slower on the H100. */
#define GP_SCAN_COLD _Pragma("unroll 1")
/* How many predecessors a tile reads at once when it looks back (a power of two, at most the
 * group). */
#define GP_SCAN_LOOK 32
#define GP_SCAN_TILE (GP_SCAN_GROUP * GP_SCAN_ITEMS)

/* A tile's published value: words tagged (kernels/types.gp) with the call's stamp and, in the
 * low two bits, the status: 1 aggregate, 2 inclusive prefix. */
GP_FUNC void gp_scan_publish(GP_GLOBAL volatile ulong *slot, uint stamp, uint status, T value)
{
    GP_PUBLISH_WORDS(T, slot, stamp << 2 | status, value);
}

/* The status of a slot (0 while it holds nothing of this call) and its value. */
GP_FUNC uint gp_scan_read(GP_GLOBAL volatile ulong *slot, uint stamp, T *value)
{
    uint tag;
    GP_READ_WORDS(T, slot, *value, tag);
    return tag >> 2 == stamp ? tag & 3u : 0u;
}

/* Integer sums wrap as unsigned C arithmetic does; min and max of floats skip NaNs. */
#if T_IS_FLOAT
#define GP_SCAN_SUM(a, b) ((a) + (b))
#define GP_SCAN_MIN(a, b) fmin((a), (b))
#define GP_SCAN_MAX(a, b) fmax((a), (b))
#else
#if GP_TYPE == 3 || GP_TYPE == 4
#define GP_SCAN_UT uint
#else
#define GP_SCAN_UT ulong
#endif
#define GP_SCAN_SUM(a, b) ((T)((GP_SCAN_UT)(a) + (GP_SCAN_UT)(b)))
#define GP_SCAN_MIN(a, b) ((b) < (a) ? (b) : (a))
#define GP_SCAN_MAX(a, b) ((b) > (a) ? (b) : (a))
#endif

/* The work-items' totals are scanned by GP_SCAN_RAKERS work-items over consecutive runs
 * (padded against bank conflicts), then work-item 0 scans the runs' totals: a fixed number of
 * barriers, none inside a loop (CPU compilers such as pocl's take long over those). */
#define GP_SCAN_RAKERS 16
#define GP_SCAN_SPAD(i) ((i) + (i) / GP_SCAN_RAKERS)

#define GP_SCAN_KERNEL(NAME, OP, IDENT)                                                          \
    GP_KERNEL void NAME(GP_GLOBAL const T *in, ulong in_off, GP_GLOBAL T *out, ulong out_off, ulong n, \
                        uint exclusive, uint ticket, GP_GLOBAL uint *state, uint stamp)        \
    {                                                                                          \
        GP_LOCAL T buf[GP_SCAN_PAD(GP_SCAN_TILE)];                                             \
        GP_LOCAL T sums[GP_SCAN_SPAD(GP_SCAN_GROUP)];                                          \
        GP_LOCAL T runs[GP_SCAN_RAKERS];                                                       \
        GP_LOCAL T look[GP_SCAN_LOOK];                                                         \
        GP_LOCAL uint look_status[GP_SCAN_LOOK];                                               \
        GP_LOCAL uint tile_l;                                                                  \
        GP_LOCAL T total_l, carry_l;                                                           \
        GP_GLOBAL volatile ulong *slots = (GP_GLOBAL volatile ulong *)(state + 4);             \
        uint t = gp_local_id(0), ls = gp_local_size(0);                                        \
        /* Tiles in the order groups start: a ticket where groups may start in any order   */ \
        /* (CPUs); GPUs start them in id order, as single-pass scans everywhere rely on.     */ \
        if (ticket && t == 0 && (tile_l = gp_atomic_add(state, 1u)) == gp_num_groups(0) - 1)   \
            gp_atomic_xchg(state, 0u);                                                         \
        if (ticket) gp_barrier();                                                              \
        uint tile = ticket ? tile_l : gp_group_id(0);                                          \
        ulong base = (ulong)tile * ls * GP_SCAN_ITEMS;                                         \
        in += in_off + base;                                                                   \
        out += out_off + base;                                                                 \
        ulong left = n - base;                                                                 \
        /* Coalesced loads, all issued before any is used (a load stored straight to local */ \
        /* memory waits for the one before it), then into local memory, padded so that the  */ \
        /* per-work-item reads below hit distinct banks. */                                    \
        int full = left >= (ulong)ls * GP_SCAN_ITEMS;                                          \
        if (full) {                                                                            \
            T r[GP_SCAN_ITEMS];                                                                \
            for (uint k = 0; k < GP_SCAN_ITEMS; k++) r[k] = in[k * ls + t];                    \
            for (uint k = 0; k < GP_SCAN_ITEMS; k++) buf[GP_SCAN_PAD(k * ls + t)] = r[k];      \
        } else {                                                                               \
            GP_SCAN_COLD for (uint k = 0; k < GP_SCAN_ITEMS; k++) {                            \
                uint j = k * ls + t;                                                           \
                buf[GP_SCAN_PAD(j)] = j < left ? in[j] : IDENT;                                \
            }                                                                                  \
        }                                                                                      \
        gp_barrier();                                                                          \
        /* Each work-item owns GP_SCAN_ITEMS consecutive elements: their total first. */       \
        T mine = IDENT;                                                                        \
        for (uint k = 0; k < GP_SCAN_ITEMS; k++) mine = OP(mine, buf[GP_SCAN_PAD(t * GP_SCAN_ITEMS + k)]); \
        sums[GP_SCAN_SPAD(t)] = mine;                                                          \
        gp_barrier();                                                                          \
        uint rakers = ls < GP_SCAN_RAKERS ? ls : GP_SCAN_RAKERS, run = (ls + rakers - 1) / rakers; \
        if (t < rakers) {                                                                      \
            T acc = IDENT;                                                                     \
            for (uint k = t * run; k < (t + 1) * run && k < ls; k++) {                         \
                acc = OP(acc, sums[GP_SCAN_SPAD(k)]);                                          \
                sums[GP_SCAN_SPAD(k)] = acc;                                                   \
            }                                                                                  \
            runs[t] = acc;                                                                     \
        }                                                                                      \
        gp_barrier();                                                                          \
        if (t == 0) {                                                                          \
            T acc = IDENT;                                                                     \
            for (uint r = 0; r < rakers; r++) {                                                \
                T x = runs[r];                                                                 \
                runs[r] = acc;                                                                 \
                acc = OP(acc, x);                                                              \
            }                                                                                  \
            total_l = acc;                                                                     \
            gp_scan_publish(slots + (ulong)tile * GP_WORDS(T), stamp, tile == 0 ? 2u : 1u, acc); \
        }                                                                                      \
        /* Look-back, by the whole group: work-item t waits for predecessor tile-1-t to     */ \
        /* publish, then one tree folds the window from the nearest predecessor back to the */ \
        /* nearest inclusive prefix: a pair (value, holds a prefix) combines with an older   */ \
        /* one only while it holds none. Folding in one work-item instead made each tile     */ \
        /* walk back over every tile still in flight. Only when none of the ls has a prefix  */ \
        /* yet does work-item 0 walk on alone.                                                */ \
        uint look_n = ls < GP_SCAN_LOOK ? ls : GP_SCAN_LOOK;                                   \
        if (tile > 0 && t < look_n) {                                                          \
            long j = (long)tile - 1 - (long)t;                                                 \
            T v = IDENT;                                                                       \
            uint st = 2u; /* before tile 0: an empty prefix */                                 \
            if (j >= 0)                                                                        \
                do st = gp_scan_read(slots + (ulong)j * GP_WORDS(T), stamp, &v); while (st == 0); \
            look[t] = v;                                                                       \
            look_status[t] = st;                                                               \
        }                                                                                      \
        gp_barrier();                                                                          \
        for (uint s = 1; s < GP_SCAN_LOOK; s <<= 1) { /* adjacent runs, nearest first */       \
            if (tile > 0 && t % (2 * s) == 0 && t + s < look_n && look_status[t] != 2u) {      \
                look[t] = OP(look[t + s], look[t]);                                            \
                look_status[t] = look_status[t + s];                                           \
            }                                                                                  \
            gp_barrier();                                                                      \
        }                                                                                      \
        uint first = tile > 0 && look_status[0] == 2u ? 0u : look_n;                           \
        if (t == 0) {                                                                          \
            T carry = IDENT;                                                                   \
            if (tile > 0) {                                                                    \
                carry = look[0];                                                               \
                for (ulong u = look_n; first == look_n; u++) {                                 \
                    T v = IDENT;                                                               \
                    uint st = 0;                                                               \
                    while (st == 0) st = gp_scan_read(slots + (ulong)(tile - 1 - u) * GP_WORDS(T), stamp, &v); \
                    carry = OP(v, carry);                                                      \
                    if (st == 2u) break;                                                       \
                }                                                                              \
                gp_scan_publish(slots + (ulong)tile * GP_WORDS(T), stamp, 2u, OP(carry, total_l)); \
            }                                                                                  \
            carry_l = carry;                                                                   \
        }                                                                                      \
        gp_barrier();                                                                          \
        T carry = OP(carry_l, runs[t / run]);                                                  \
        if (t % run) carry = OP(carry, sums[GP_SCAN_SPAD(t - 1)]);                             \
        for (uint k = 0; k < GP_SCAN_ITEMS; k++) {                                             \
            uint j = GP_SCAN_PAD(t * GP_SCAN_ITEMS + k);                                       \
            T x = buf[j];                                                                      \
            if (exclusive) {                                                                   \
                buf[j] = carry;                                                                \
                carry = OP(carry, x);                                                          \
            } else {                                                                           \
                carry = OP(carry, x);                                                          \
                buf[j] = carry;                                                                \
            }                                                                                  \
        }                                                                                      \
        gp_barrier();                                                                          \
        if (full) {                                                                            \
            for (uint k = 0; k < GP_SCAN_ITEMS; k++) out[k * ls + t] = buf[GP_SCAN_PAD(k * ls + t)]; \
        } else {                                                                               \
            GP_SCAN_COLD for (uint k = 0; k < GP_SCAN_ITEMS; k++) {                            \
                uint j = k * ls + t;                                                           \
                if (j < left) out[j] = buf[GP_SCAN_PAD(j)];                                    \
            }                                                                                  \
        }                                                                                      \
    }

#if GP_SCAN_CHUNKED
/* ---- The CPU variant (-DGP_SCAN_CHUNKED=1): three passes over contiguous chunks ----------
 * A CPU runs a work-group as loops on one core, and a look-back between tiles costs it far
 * more than a pass over memory. Here a work-group is one work-item with a chunk of `per`
 * consecutive elements, as a threaded CPU scan splits its input: NAME_fold reduces each chunk
 * into partial[g] (eight accumulators, so that the loop is not one chain of dependent
 * operations), NAME_spine scans the partials in one work-item, exclusively and in place, and
 * NAME_chunks scans each chunk from its partial. The input is read twice, the output written
 * once. */
#define GP_SCAN_CHUNK_KERNELS(NAME, OP, IDENT)                                                   \
    GP_KERNEL void NAME##_fold(GP_GLOBAL const T *in, ulong in_off, ulong n, ulong per, GP_GLOBAL T *partial) \
    {                                                                                          \
        ulong g = gp_group_id(0), s = g * per, e = s + per < n ? s + per : n, i = s;           \
        T acc[8];                                                                              \
        for (int k = 0; k < 8; k++) acc[k] = IDENT;                                            \
        in += in_off;                                                                          \
        for (; i + 8 <= e; i += 8)                                                             \
            for (int k = 0; k < 8; k++) acc[k] = OP(acc[k], in[i + k]);                         \
        for (; i < e; i++) acc[0] = OP(acc[0], in[i]);                                         \
        for (int k = 1; k < 8; k++) acc[0] = OP(acc[0], acc[k]);                               \
        partial[g] = acc[0];                                                                   \
    }                                                                                          \
    GP_KERNEL void NAME##_spine(GP_GLOBAL T *partial, uint count)                              \
    {                                                                                          \
        T run = IDENT;                                                                         \
        for (uint g = 0; g < count; g++) {                                                     \
            T own = partial[g];                                                                \
            partial[g] = run;                                                                  \
            run = OP(run, own);                                                                \
        }                                                                                      \
    }                                                                                          \
    GP_KERNEL void NAME##_chunks(GP_GLOBAL const T *in, ulong in_off, GP_GLOBAL T *out, ulong out_off, ulong n, \
                                 ulong per, uint exclusive, GP_GLOBAL const T *partial)        \
    {                                                                                          \
        ulong g = gp_group_id(0), s = g * per, e = s + per < n ? s + per : n;                  \
        T carry = partial[g];                                                                  \
        in += in_off;                                                                          \
        out += out_off;                                                                        \
        if (exclusive) {                                                                       \
            for (ulong i = s; i < e; i++) {                                                    \
                T x = in[i];                                                                   \
                out[i] = carry;                                                                \
                carry = OP(carry, x);                                                          \
            }                                                                                  \
        } else {                                                                               \
            for (ulong i = s; i < e; i++) out[i] = carry = OP(carry, in[i]);                    \
        }                                                                                      \
    }
GP_SCAN_CHUNK_KERNELS(gp_scan_sum, GP_SCAN_SUM, ((T)0))
GP_SCAN_CHUNK_KERNELS(gp_scan_min, GP_SCAN_MIN, T_HIGHEST)
GP_SCAN_CHUNK_KERNELS(gp_scan_max, GP_SCAN_MAX, T_LOWEST)
#else
GP_SCAN_KERNEL(gp_scan_sum, GP_SCAN_SUM, ((T)0))
GP_SCAN_KERNEL(gp_scan_min, GP_SCAN_MIN, T_HIGHEST)
GP_SCAN_KERNEL(gp_scan_max, GP_SCAN_MAX, T_LOWEST)
#endif
