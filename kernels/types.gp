/* The element type of a built-in kernel, chosen by -DGP_TYPE=n with n a gp_type value:
 * T, whether it is floating point or signed, and its lowest and highest values (the
 * identities of max and min). */
#if GP_TYPE == 1
#define T float
#define T_IS_FLOAT 1
#define T_LOWEST (-GP_INFINITY_F)
#define T_HIGHEST GP_INFINITY_F
#elif GP_TYPE == 2
#define T double
#define T_IS_FLOAT 1
#define T_LOWEST (-GP_INFINITY_D)
#define T_HIGHEST GP_INFINITY_D
#elif GP_TYPE == 3
#define T int
#define T_IS_SIGNED 1
#define T_LOWEST (-2147483647 - 1)
#define T_HIGHEST 2147483647
#elif GP_TYPE == 4
#define T uint
#define T_LOWEST 0u
#define T_HIGHEST 4294967295u
#elif GP_TYPE == 5
#define T long
#define T_IS_SIGNED 1
#define T_LOWEST (-9223372036854775807L - 1L)
#define T_HIGHEST 9223372036854775807L
#elif GP_TYPE == 6
#define T ulong
#define T_LOWEST 0UL
#define T_HIGHEST 18446744073709551615UL
#else
#error "GP_TYPE must be a gp_type value from 1 to 6"
#endif
#ifndef T_IS_FLOAT
#define T_IS_FLOAT 0
#endif
#ifndef T_IS_SIGNED
#define T_IS_SIGNED T_IS_FLOAT
#endif

/* Words that one work-group publishes to the others in global memory (reduce.gp, scan.gp),
 * with neither 64-bit atomics nor the fences that OpenCL 1.2 lacks: each 32 bits of a value go
 * out in one naturally aligned 64-bit store whose high half is a tag, so a reader that sees a
 * tag sees the bits stored with it. Tags carry the call's stamp, which the host makes new for
 * every call (src/core/builtin.c, gp__sync): words that earlier calls left read as not yet
 * written, and nothing needs zeroing between calls. GP_READ_WORDS gives tag 0 while the words
 * of a value disagree. V_T is a type whose size is a multiple of 4 bytes. */
#define GP_WORDS(V_T) (sizeof(V_T) / 4)
#define GP_PUBLISH_WORDS(V_T, slot, tag, value)                                                \
    do {                                                                                       \
        union { V_T v; uint w[GP_WORDS(V_T)]; } b_;                                            \
        b_.v = (value);                                                                        \
        for (uint k_ = 0; k_ < GP_WORDS(V_T); k_++) (slot)[k_] = ((ulong)(tag) << 32) | b_.w[k_]; \
    } while (0)
#define GP_READ_WORDS(V_T, slot, value, tag)                                                   \
    do {                                                                                       \
        union { V_T v; uint w[GP_WORDS(V_T)]; } b_;                                            \
        uint t_ = 0;                                                                           \
        for (uint k_ = 0; k_ < GP_WORDS(V_T); k_++) {                                          \
            ulong w_ = (slot)[k_];                                                             \
            t_ = k_ == 0 || (uint)(w_ >> 32) == t_ ? (uint)(w_ >> 32) : 0u;                    \
            b_.w[k_] = (uint)w_;                                                               \
        }                                                                                      \
        (value) = b_.v;                                                                        \
        (tag) = t_;                                                                            \
    } while (0)
