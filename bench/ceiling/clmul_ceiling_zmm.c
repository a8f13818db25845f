/* See clmul_ceiling.h. Compiled with -mavx512f -mvpclmulqdq. */
#include <immintrin.h>

#include "clmul_ceiling.h"

#define CC_NAME embd_bench_clmul_ceiling_zmm
#define CC_VEC __m512i
#define CC_W 64
#define CC_CLMUL _mm512_clmulepi64_epi128
#define CC_SET1(x) _mm512_set1_epi64(x)
#define CC_K _mm512_set4_epi64(0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL)
#define CC_XOR _mm512_xor_si512
#define CC_FOLD(s) ((uint64_t)_mm512_reduce_add_epi64(s))
#define CC_REG(v) "+v"(v)
#include "clmul_ceiling_wide.h"
