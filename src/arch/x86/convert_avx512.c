/* dtype -> float32 and float32 -> f16/bf16 with AVX-512 F/BW/VL (the avx512 family's
 * flags). 16 floats (64 bytes) per vector: vcvtph2ps / vcvtps2ph zmm for f16 and e5m2
 * (AVX512F itself, no F16C needed; e4m3 too, as a scaled binary16), a shift for bf16,
 * vptestmd masks for packed bits, vpmovdw to narrow the encoded halves.
 *
 * Not used: AVX512-BF16's vcvtneps2bf16 (it flushes subnormals and ignores MXCSR, so it
 * is not the round-to-nearest-even reference bit for bit), AVX512-FP16 (its conversions
 * are the same vcvtph2ps/vcvtps2ph work; no gain to measure on the machines at hand).
 *
 * Tails: one more full block ending at the last element (dst never overlaps src), the
 * scalar reference below one block. */
#include <immintrin.h>

#include "internal.h"
#include "convert_kernel.h"
#include "convert_e4m3_x86.h"

/* The functions' names: embd_<kind>_avx512, or embd_<kind>_<CVT_ISA> when another file
 * includes this one (convert_avx512_simde.c: the same code through simde). */
#ifndef CVT_ISA
#define CVT_ISA avx512
#endif
#define CVT_END() _mm256_zeroupper()

#define C32(v) _mm512_set1_epi32((int)(v))
#define LD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define LD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ST256(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))

AI __m256i swap16_256(void) {
  return _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0, 3, 2, 5, 4,
                          7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
}

/* ---- f16, bf16 ------------------------------------------------------------------- */

AI void f16_block(float *d, const uint8_t *s, int be, __m256i sw) {
  __m256i v = LD256(s);
  if (be) v = _mm256_shuffle_epi8(v, sw);
  _mm512_storeu_ps(d, _mm512_cvtph_ps(v));
}

CVT_DECODE(f16, 16, 2, CVT_BY_ORDER, f16_block, (const __m256i sw = swap16_256();), (, sw))

AI void bf16_block(float *d, const uint8_t *s, int be, __m256i sw) {
  __m256i v = LD256(s);
  if (be) v = _mm256_shuffle_epi8(v, sw);
  _mm512_storeu_si512((void *)d, _mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

CVT_DECODE(bf16, 16, 2, CVT_BY_ORDER, bf16_block, (const __m256i sw = swap16_256();), (, sw))

/* ---- fp8 ------------------------------------------------------------------------- */

/* 16 e5m2 bytes: byte << 8 is the binary16. */
AI void e5m2_block(float *d, const uint8_t *s) {
  const __m256i h = _mm256_slli_epi16(_mm256_cvtepu8_epi16(LD128(s)), 8);
  _mm512_storeu_ps(d, _mm512_cvtph_ps(h));
}

CVT_DECODE(e5m2, 16, 1, CVT_ONE, e5m2_block, (), ())

/* e4m3fn as a binary16 scaled by 2^-8 (convert_e4m3_x86.h, which says why it is
 * exact), vcvtph2ps, times 256. */
AI void e4m3_block(float *d, const uint8_t *s) {
  const __m256i h = e4m3_half_256(LD128(s));
  _mm512_storeu_ps(d, _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0f)));
}

CVT_DECODE(e4m3, 16, 1, CVT_ONE, e4m3_block, (), ())

/* ---- int8, uint8 ----------------------------------------------------------------- */

AI void i8_block(float *d, const uint8_t *s) {
  _mm512_storeu_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(LD128(s))));
}
AI void u8_block(float *d, const uint8_t *s) {
  _mm512_storeu_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(LD128(s))));
}

CVT_DECODE(i8, 16, 1, CVT_ONE, i8_block, (), ())

CVT_DECODE(u8, 16, 1, CVT_ONE, u8_block, (), ())

/* ---- packed bits ----------------------------------------------------------------- */

/* Two bytes -> 16 floats: both bytes in every lane, lane j tested against bit 7 - j of
 * the first byte (j < 8) or bit 15 - j of the second: the mask selects `one`. */
AI void bits_pair(float *d, const uint8_t *s, uint32_t flip, __m512i m, __m512 one, __m512 zero) {
  const uint32_t w = ((uint32_t)s[0] | (uint32_t)s[1] << 8) ^ flip;
  const __mmask16 k = _mm512_test_epi32_mask(_mm512_set1_epi32((int)w), m);
  _mm512_storeu_ps(d, _mm512_mask_blend_ps(k, zero, one));
}

AI void bits_avx512(float *dst, const uint8_t *s, size_t n, uint8_t flip, float one,
                    float zero) {
  const size_t nb = n / 8;
  const __m512i m = _mm512_setr_epi32(0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01, 0x8000,
                                      0x4000, 0x2000, 0x1000, 0x800, 0x400, 0x200, 0x100);
  const __m512 o = _mm512_set1_ps(one), z = _mm512_set1_ps(zero);
  const uint32_t f = flip * 0x0101u;
#define STEP(i) bits_pair(dst + 8 * (i), s + (i), f, m, o, z)
  DRIVE(nb, 2, STEP);
#undef STEP
  _mm256_zeroupper();
}

CVT_BITS(binary, 16, bits_avx512, (, 0x80, 1.0f, -1.0f))

CVT_BITS(ubinary, 16, bits_avx512, (, 0, 1.0f, 0.0f))

/* ---- encode: float32 -> f16, bf16 ------------------------------------------------- */

AI void enc_f16_block(uint8_t *d, const float *s, int be, __m256i sw) {
  __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (be) h = _mm256_shuffle_epi8(h, sw);
  ST256(d, h);
}

CVT_ENCODE(f16, 16, CVT_BY_ORDER, enc_f16_block, (const __m256i sw = swap16_256();), (, sw))

AI void enc_bf16_block(uint8_t *d, const float *s, int be, __m256i sw) {
  const __m512i x = _mm512_castps_si512(_mm512_loadu_ps(s));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), C32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(C32(0x7fff), lsb)), 16);
  const __mmask16 isnan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, C32(0x7fffffff)), C32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, isnan, _mm512_or_si512(_mm512_srli_epi32(x, 16), C32(0x40)));
  __m256i h = _mm512_cvtepi32_epi16(r);
  if (be) h = _mm256_shuffle_epi8(h, sw);
  ST256(d, h);
}

CVT_ENCODE(bf16, 16, CVT_BY_ORDER, enc_bf16_block, (const __m256i sw = swap16_256();), (, sw))
