/* See clmul_ceiling.h. Compiled with -mavx2 -mvpclmulqdq. */
#include <immintrin.h>

#include "clmul_ceiling.h"

#define CC_NAME embd_bench_clmul_ceiling_ymm
#define CC_VEC __m256i
#define CC_W 32
#define CC_CLMUL _mm256_clmulepi64_epi128
#define CC_SET1(x) _mm256_set1_epi64x(x)
#define CC_K _mm256_set_epi64x(0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL)
#define CC_XOR _mm256_xor_si256
#define CC_FOLD(s) ((uint64_t)_mm256_extract_epi64(s, 0) ^ (uint64_t)_mm256_extract_epi64(s, 3))
#define CC_REG(v) "+x"(v)
#include "clmul_ceiling_wide.h"
