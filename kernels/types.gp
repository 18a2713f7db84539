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
