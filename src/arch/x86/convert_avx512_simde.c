/* The avx512 conversion kernels (convert_avx512.c, the same source) compiled through
 * simde's AVX-512 emulation in the avx2 family (its flags plus -mf16c), registered as
 * "avx512-simde": tier avx2 with F16C, never picked by the dispatcher. It exists so that
 * tests/test_convert.c runs the avx512 kernels' own logic (block loops, overlapping
 * tails, masks, byte-order shuffles, the e4m3 and bf16 integer paths) on machines
 * without AVX-512, this project's CI included. It does not test the zmm instructions
 * themselves: simde 0.7.4 has no _mm512_cvtph_ps, _mm512_cvtps_ph, the widening and
 * narrowing conversions, cvtepi32_ps or the unsigned compares used there, so the shims
 * below supply them, element by element, and the half conversions through two F16C
 * ymm conversions (per element the same operation as the zmm form; only the width
 * differs). */
#include "simde_avx512_shims.h"
#include <simde/x86/f16c.h>

SHIM simde__m512 shim_mm512_cvtph_ps(simde__m256i h) {
  simde__m256 lo = simde_mm256_cvtph_ps(simde_mm256_castsi256_si128(h));
  simde__m256 hi = simde_mm256_cvtph_ps(simde_mm256_extracti128_si256(h, 1));
  return simde_mm512_insertf32x8(simde_mm512_castps256_ps512(lo), hi, 1);
}

#define shim_mm512_cvtps_ph(a, imm)                                                          \
  simde_mm256_inserti128_si256(                                                              \
      simde_mm256_castsi128_si256(simde_mm256_cvtps_ph(simde_mm512_castps512_ps256(a), imm)), \
      simde_mm256_cvtps_ph(simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a), 1)), imm), 1)

SHIM simde__m512i shim_from_u32(const uint32_t *v) { return simde_mm512_loadu_si512(v); }

SHIM simde__m512i shim_mm512_cvtepu16_epi32(simde__m256i a) {
  uint16_t in[16];
  uint32_t out[16];
  simde_mm256_storeu_si256((simde__m256i *)(void *)in, a);
  for (int i = 0; i < 16; i++) out[i] = in[i];
  return shim_from_u32(out);
}

SHIM simde__m512i shim_mm512_cvtepu8_epi32(simde__m128i a) {
  uint8_t in[16];
  uint32_t out[16];
  simde_mm_storeu_si128((simde__m128i *)(void *)in, a);
  for (int i = 0; i < 16; i++) out[i] = in[i];
  return shim_from_u32(out);
}

SHIM simde__m512i shim_mm512_cvtepi8_epi32(simde__m128i a) {
  int8_t in[16];
  uint32_t out[16];
  simde_mm_storeu_si128((simde__m128i *)(void *)in, a);
  for (int i = 0; i < 16; i++) out[i] = (uint32_t)(int32_t)in[i];
  return shim_from_u32(out);
}

SHIM simde__m512 shim_mm512_cvtepi32_ps(simde__m512i a) {
  int32_t in[16];
  float out[16];
  simde_mm512_storeu_si512(in, a);
  for (int i = 0; i < 16; i++) out[i] = (float)in[i];
  return simde_mm512_loadu_ps(out);
}

SHIM simde__mmask16 shim_cmp_epu32(simde__m512i a, simde__m512i b, int gt) {
  uint32_t x[16], y[16];
  simde_mm512_storeu_si512(x, a);
  simde_mm512_storeu_si512(y, b);
  unsigned m = 0;
  for (int i = 0; i < 16; i++) m |= (unsigned)(gt ? x[i] > y[i] : x[i] < y[i]) << i;
  return (simde__mmask16)m;
}

SHIM simde__m256i shim_mm512_cvtepi32_epi16(simde__m512i a) {
  uint32_t in[16];
  uint16_t out[16];
  simde_mm512_storeu_si512(in, a);
  for (int i = 0; i < 16; i++) out[i] = (uint16_t)in[i]; /* vpmovdw: truncation */
  return simde_mm256_loadu_si256((const simde__m256i *)(const void *)out);
}

#define _mm512_cvtph_ps shim_mm512_cvtph_ps
#define _mm512_cvtps_ph shim_mm512_cvtps_ph
#define _mm512_cvtepu16_epi32 shim_mm512_cvtepu16_epi32
#define _mm512_cvtepu8_epi32 shim_mm512_cvtepu8_epi32
#define _mm512_cvtepi8_epi32 shim_mm512_cvtepi8_epi32
#define _mm512_cvtepi32_ps shim_mm512_cvtepi32_ps
#define _mm512_cmplt_epu32_mask(a, b) shim_cmp_epu32((a), (b), 0)
#define _mm512_cmpgt_epu32_mask(a, b) shim_cmp_epu32((a), (b), 1)
#define _mm512_cvtepi32_epi16 shim_mm512_cvtepi32_epi16

#define CVT_ISA avx512simde
#include "convert_avx512.c"
