/* dtype -> float32 and float32 -> f16/bf16 with AVX2 and F16C. Built with the avx2
 * family's flags plus -mf16c (cmake/EmbdIsaFlags.cmake: this file only; its registry
 * row lists EMBD_CPU_F16C as an extra, so a CPU or an EMBD_ISA spec without F16C never
 * runs it).
 *
 * f16 (and e5m2, the upper byte of a binary16) go through vcvtph2ps: exact, NaNs quieted
 * with payload and sign kept, as the scalar reference does. Encode f16 is vcvtps2ph with
 * the rounding mode in the immediate (nearest even, whatever MXCSR says): NaNs quieted
 * with their upper payload bits, overflow to infinity, subnormals produced. bf16 is a
 * shift one way and integer round-to-nearest-even the other. e4m3 is a shift to a scaled
 * binary16, then vcvtph2ps (e4m3_block).
 *
 * Tails: as in convert_sse42.c, one more full block ending at the last element (dst never
 * overlaps src), the scalar reference below one block. */
#include <immintrin.h>

#include "internal.h"
#include "convert_kernel.h"
#include "convert_e4m3_x86.h"

#define CVT_ISA avx2
#define CVT_END() _mm256_zeroupper()

#define C32(v) _mm256_set1_epi32((int)(v))
#define LD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST128(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

static const uint8_t swap16_tbl[16] = {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14};

/* ---- f16, bf16 ------------------------------------------------------------------- */

AI void f16_block(float *d, const uint8_t *s, int be, __m128i sw) {
  __m128i v = LD128(s);
  if (be) v = _mm_shuffle_epi8(v, sw);
  _mm256_storeu_ps(d, _mm256_cvtph_ps(v));
}

CVT_DECODE(f16, 8, 2, CVT_BY_ORDER, f16_block, (const __m128i sw = LD128(swap16_tbl);), (, sw))

/* 16 bf16s (32 bytes): punpck{l,h}wd with zero puts each element into the upper half of
 * a 32-bit lane (the float32 bits), in-lane, so elements 0-3 and 8-11 land in one vector,
 * 4-7 and 12-15 in the other; vperm2i128 puts them back in order. One load, two unpacks,
 * two lane permutes and two stores: 86-90 GB/s at 1536 here, where a vbroadcasti128 +
 * vpshufb per 8 elements, or vpmovzxwd + vpslld, ran at 50-64 (the shuffle port). BE
 * swaps each element's bytes first (one more vpshufb). */
AI void bf16_block(float *d, const uint8_t *s, int be, __m256i sw) {
  __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
  if (be) v = _mm256_shuffle_epi8(v, sw);
  const __m256i z = _mm256_setzero_si256();
  const __m256i lo = _mm256_unpacklo_epi16(z, v), hi = _mm256_unpackhi_epi16(z, v);
  _mm256_storeu_si256((__m256i *)(void *)d, _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256((__m256i *)(void *)(d + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
}

CVT_DECODE(bf16, 16, 2, CVT_BY_ORDER, bf16_block,
           (const __m256i sw = _mm256_broadcastsi128_si256(LD128(swap16_tbl));), (, sw))

/* ---- fp8 ------------------------------------------------------------------------- */

/* 16 e5m2 bytes: byte << 8 is the binary16 (punpck with zero), then vcvtph2ps. */
AI void e5m2_block(float *d, const uint8_t *s) {
  const __m128i v = LD128(s), zero = _mm_setzero_si128();
  _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_unpacklo_epi8(zero, v)));
  _mm256_storeu_ps(d + 8, _mm256_cvtph_ps(_mm_unpackhi_epi8(zero, v)));
}

CVT_DECODE(e5m2, 16, 1, CVT_ONE, e5m2_block, (), ())

/* e4m3fn through F16C: a binary16 scaled by 2^-8 (convert_e4m3_x86.h, which says why
 * it is exact), vcvtph2ps, times 256. */
AI void e4m3_block(float *d, const uint8_t *s) {
  const __m256i h = e4m3_half_256(LD128(s));
  const __m256 scale = _mm256_set1_ps(256.0f);
  _mm256_storeu_ps(d, _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), scale));
  _mm256_storeu_ps(d + 8, _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)), scale));
}

CVT_DECODE(e4m3, 16, 1, CVT_ONE, e4m3_block, (), ())

/* ---- int8, uint8 ----------------------------------------------------------------- */

#define INT8_BLOCK(name, widen)                                                   \
  AI void name(float *d, const uint8_t *s) {                                      \
    const __m128i v = LD128(s);                                                   \
    _mm256_storeu_ps(d, _mm256_cvtepi32_ps(widen(v)));                            \
    _mm256_storeu_ps(d + 8, _mm256_cvtepi32_ps(widen(_mm_unpackhi_epi64(v, v)))); \
  }
INT8_BLOCK(i8_block, _mm256_cvtepi8_epi32)
INT8_BLOCK(u8_block, _mm256_cvtepu8_epi32)

CVT_DECODE(i8, 16, 1, CVT_ONE, i8_block, (), ())

CVT_DECODE(u8, 16, 1, CVT_ONE, u8_block, (), ())

/* ---- packed bits ----------------------------------------------------------------- */

/* 8 bytes -> 64 floats: the bytes broadcast to both 128-bit lanes once, then per byte k
 * a vpshufb with k in every index (the byte in every byte of the vector), lane j tested
 * against bit 7 - j (MSB first); set lanes give 1.0, clear ones 0.0 (ubinary) or -1.0
 * (binary, whose stored byte is the packed byte XOR 0x80: undone on the 8-byte word).
 * All vector ops, no per-byte scalar extraction. */
AI void bits_block(float *d, const uint8_t *s, int binary, __m256i m, __m256i one) {
  uint64_t w;
  memcpy(&w, s, 8);
  if (binary) w ^= UINT64_C(0x8080808080808080);
  const __m256i v = _mm256_set1_epi64x((long long)w);
  const __m256i sign = C32(0x80000000u);
  for (int k = 0; k < 8; k++) {
    const __m256i b = _mm256_shuffle_epi8(v, _mm256_set1_epi8((char)k));
    const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(b, m), m);
    const __m256i r = binary ? _mm256_or_si256(one, _mm256_andnot_si256(set, sign))
                             : _mm256_and_si256(set, one);
    _mm256_storeu_si256((__m256i *)(void *)(d + 8 * k), r);
  }
}

/* Whole 8-byte blocks, then one more ending at the last byte (dst never overlaps src);
 * under 8 bytes the scalar reference. */
AI void bits_avx2(float *dst, const uint8_t *s, size_t n, int binary) {
  const size_t nb = n / 8;
  if (nb < 8) {
    if (binary)
      embd_cvt_binary_scalar(dst, s, n, 0);
    else
      embd_cvt_ubinary_scalar(dst, s, n, 0);
    return;
  }
  const __m256i m = _mm256_setr_epi32(0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01);
  const __m256i one = C32(0x3f800000u);
  size_t i = 0;
  for (; i + 8 <= nb; i += 8) bits_block(dst + 8 * i, s + i, binary, m, one);
  if (i < nb) bits_block(dst + 8 * (nb - 8), s + nb - 8, binary, m, one);
  _mm256_zeroupper();
}

CVT_BITS(binary, 0, bits_avx2, (, 1))

CVT_BITS(ubinary, 0, bits_avx2, (, 0))

/* ---- encode: float32 -> f16, bf16 ------------------------------------------------- */

AI void enc_f16_block(uint8_t *d, const float *s, int be, __m128i sw) {
  __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (be) h = _mm_shuffle_epi8(h, sw);
  ST128(d, h);
}

CVT_ENCODE(f16, 8, CVT_BY_ORDER, enc_f16_block, (const __m128i sw = LD128(swap16_tbl);), (, sw))

/* bf16 round to nearest even in integer lanes (result in the low 16 bits). */
AI __m256i f32_to_bf16_lanes(__m256i x) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), C32(1));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(C32(0x7fff), lsb)), 16);
  const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), C32(0x40));
  const __m256i isnan =
      _mm256_cmpgt_epi32(_mm256_and_si256(x, C32(0x7fffffff)), C32(0x7f800000));
  return _mm256_blendv_epi8(r, nan, isnan);
}

/* 16 floats -> 32 bytes: packusdw works per 128-bit lane, vpermq restores the order. */
AI void enc_bf16_block(uint8_t *d, const float *s, __m256i order) {
  const __m256i a = f32_to_bf16_lanes(_mm256_castps_si256(_mm256_loadu_ps(s)));
  const __m256i b = f32_to_bf16_lanes(_mm256_castps_si256(_mm256_loadu_ps(s + 8)));
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
  _mm256_storeu_si256((__m256i *)(void *)d, _mm256_shuffle_epi8(p, order));
}

CVT_ENCODE(bf16, 16, CVT_ONE, enc_bf16_block,
           (const __m128i sw = LD128(swap16_tbl);
            const __m128i id = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            const __m256i order = _mm256_broadcastsi128_si256(be ? sw : id);),
           (, order))
