/* See clmul_ceiling.h. Compiled with -msse4.2 -mpclmul. */
#include <immintrin.h>

#include "clmul_ceiling.h"

#define CHAINS(F, K)                                                                        \
  a0 = F(a0, K, 0x00), a1 = F(a1, K, 0x11), a2 = F(a2, K, 0x00), a3 = F(a3, K, 0x11),       \
  a4 = F(a4, K, 0x00), a5 = F(a5, K, 0x11), a6 = F(a6, K, 0x00), a7 = F(a7, K, 0x11)

uint64_t embd_bench_clmul_ceiling_xmm(size_t n) {
  const __m128i k = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
  __m128i a0 = _mm_set1_epi64x(1), a1 = _mm_set1_epi64x(2), a2 = _mm_set1_epi64x(3),
          a3 = _mm_set1_epi64x(4), a4 = _mm_set1_epi64x(5), a5 = _mm_set1_epi64x(6),
          a6 = _mm_set1_epi64x(7), a7 = _mm_set1_epi64x(8);
  /* 16 bytes = two products = two instructions; eight per round covers 64 bytes. */
  for (size_t i = 0; i + 64 <= n; i += 64) {
    CHAINS(_mm_clmulepi64_si128, k);
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),
                     "+x"(a7));
  }
  const __m128i s = _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(a0, a1), _mm_xor_si128(a2, a3)),
                                  _mm_xor_si128(_mm_xor_si128(a4, a5), _mm_xor_si128(a6, a7)));
  return (uint64_t)_mm_cvtsi128_si64(s);
}
