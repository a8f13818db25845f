/* See clmul_ceiling.h. Compiled with -mavx512f -mvpclmulqdq. */
#include <immintrin.h>

#include "clmul_ceiling.h"

#define CHAINS(F, K)                                                                        \
  a0 = F(a0, K, 0x00), a1 = F(a1, K, 0x11), a2 = F(a2, K, 0x00), a3 = F(a3, K, 0x11),       \
  a4 = F(a4, K, 0x00), a5 = F(a5, K, 0x11), a6 = F(a6, K, 0x00), a7 = F(a7, K, 0x11)

uint64_t embd_bench_clmul_ceiling_zmm(size_t n) {
  const __m512i k = _mm512_set4_epi64(0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL);
  __m512i a0 = _mm512_set1_epi64(1), a1 = _mm512_set1_epi64(2), a2 = _mm512_set1_epi64(3),
          a3 = _mm512_set1_epi64(4), a4 = _mm512_set1_epi64(5), a5 = _mm512_set1_epi64(6),
          a6 = _mm512_set1_epi64(7), a7 = _mm512_set1_epi64(8);
  /* 64 bytes = eight products = two instructions (four lanes each); eight per round
   * covers 256 bytes. */
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    CHAINS(_mm512_clmulepi64_epi128, k);
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6),
                     "+v"(a7));
  }
  for (; i + 64 <= n; i += 64) {
    a0 = _mm512_clmulepi64_epi128(a0, k, 0x00), a1 = _mm512_clmulepi64_epi128(a1, k, 0x11);
    __asm__ volatile("" : "+v"(a0), "+v"(a1));
  }
  const __m512i s = _mm512_xor_si512(
      _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)),
      _mm512_xor_si512(_mm512_xor_si512(a4, a5), _mm512_xor_si512(a6, a7)));
  return (uint64_t)_mm512_reduce_add_epi64(s);
}
