/* See clmul_ceiling.h. Compiled with -mavx2 -mvpclmulqdq. */
#include <immintrin.h>

#include "clmul_ceiling.h"

#define CHAINS(F, K)                                                                        \
  a0 = F(a0, K, 0x00), a1 = F(a1, K, 0x11), a2 = F(a2, K, 0x00), a3 = F(a3, K, 0x11),       \
  a4 = F(a4, K, 0x00), a5 = F(a5, K, 0x11), a6 = F(a6, K, 0x00), a7 = F(a7, K, 0x11)

uint64_t embd_bench_clmul_ceiling_ymm(size_t n) {
  const __m256i k = _mm256_set_epi64x(0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL);
  __m256i a0 = _mm256_set1_epi64x(1), a1 = _mm256_set1_epi64x(2), a2 = _mm256_set1_epi64x(3),
          a3 = _mm256_set1_epi64x(4), a4 = _mm256_set1_epi64x(5), a5 = _mm256_set1_epi64x(6),
          a6 = _mm256_set1_epi64x(7), a7 = _mm256_set1_epi64x(8);
  /* 32 bytes = four products = two instructions (two lanes each); eight per round covers
   * 128 bytes. */
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    CHAINS(_mm256_clmulepi64_epi128, k);
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),
                     "+x"(a7));
  }
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_clmulepi64_epi128(a0, k, 0x00), a1 = _mm256_clmulepi64_epi128(a1, k, 0x11);
    __asm__ volatile("" : "+x"(a0), "+x"(a1));
  }
  const __m256i s = _mm256_xor_si256(
      _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)),
      _mm256_xor_si256(_mm256_xor_si256(a4, a5), _mm256_xor_si256(a6, a7)));
  return (uint64_t)_mm256_extract_epi64(s, 0) ^ (uint64_t)_mm256_extract_epi64(s, 3);
}
