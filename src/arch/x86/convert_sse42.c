/* dtype -> float32 and float32 -> f16/bf16 with SSSE3/SSE4.1 integer and float tricks
 * (no F16C: the sse42 tier's CPUs, Westmere and friends, do not have it). Built with the
 * sse42 family's flags. Bit-exact with the scalar reference (src/core/convert.c), checked
 * by tests/test_convert.c over every input of each 8- and 16-bit dtype.
 *
 * f16 -> f32 with integer ops, independent of MXCSR (rounding mode, DAZ, FTZ):
 *   a = (h & 0x7fff) << 13 is the half's exponent and mantissa at float32 positions;
 *   normal: a + (112 << 23) rebiases the exponent; inf/NaN (a >= 0x1f << 23): another
 *   112 << 23 takes the exponent to 255, NaNs get the quiet bit; subnormal (a < 1 << 23):
 *   bits(a + (113 << 23)) as a float is 2^-14 * (1 + m/1024), minus 2^-14 leaves
 *   m * 2^-24 exactly (both operands and the result are normal floats, so DAZ/FTZ and
 *   the rounding mode do not matter).
 * Byte order and widening are one pshufb per output vector (zeroing index 0x80).
 *
 * Tails: every kernel writes each output element from its own input only, and dst never
 * overlaps src (embd/convert.h), so the last partial block is one more full block ending
 * at the last element (re-writing a few elements with the same values); inputs shorter
 * than one block go to the scalar reference. */
#include <immintrin.h>

#include "internal.h"
#include "convert_kernel.h"

#define CVT_ISA sse42
#define CVT_END() ((void)0)

#define C32(v) _mm_set1_epi32((int)(v))

/* x holds a binary16 in the upper half of each 32-bit lane (h << 16): its float32. */
AI __m128i f16hi_to_f32(__m128i x) {
  const __m128i sign = _mm_and_si128(x, C32(0x80000000u));
  const __m128i a = _mm_srli_epi32(_mm_and_si128(x, C32(0x7fff0000u)), 3);
  __m128i r = _mm_add_epi32(a, C32(0x38000000u));
  const __m128 den = _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(a, C32(0x38800000u))),
                                _mm_castsi128_ps(C32(0x38800000u)));
  r = _mm_blendv_epi8(r, _mm_castps_si128(den), _mm_cmplt_epi32(a, C32(0x00800000u)));
  r = _mm_add_epi32(r, _mm_and_si128(_mm_cmpgt_epi32(a, C32(0x0f7fffffu)), C32(0x38000000u)));
  r = _mm_or_si128(r, _mm_and_si128(_mm_cmpgt_epi32(a, C32(0x0f800000u)), C32(0x00400000u)));
  return _mm_or_si128(r, sign);
}

/* pshufb indices that put 16-bit element (first + i) of a 16-byte block into the upper
 * half of 32-bit lane i, in either byte order; 0x80 zeroes the lower half. */
AI __m128i widen16_mask(int first, int be) {
  const char lo = (char)(2 * first + (be ? 1 : 0)), hi = (char)(2 * first + (be ? 0 : 1));
  return _mm_setr_epi8(-128, -128, lo, hi, -128, -128, (char)(lo + 2), (char)(hi + 2), -128, -128,
                       (char)(lo + 4), (char)(hi + 4), -128, -128, (char)(lo + 6), (char)(hi + 6));
}

/* Byte k of the block into the top byte of lane i (k = first + i). */
AI __m128i widen8_mask(int first) {
  const char k = (char)first;
  return _mm_setr_epi8(-128, -128, -128, k, -128, -128, -128, (char)(k + 1), -128, -128, -128,
                       (char)(k + 2), -128, -128, -128, (char)(k + 3));
}

/* ---- f16, bf16 ------------------------------------------------------------------- */

AI void f16_block(float *d, const uint8_t *s, __m128i m0, __m128i m1) {
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
  _mm_storeu_si128((__m128i *)(void *)d, f16hi_to_f32(_mm_shuffle_epi8(v, m0)));
  _mm_storeu_si128((__m128i *)(void *)(d + 4), f16hi_to_f32(_mm_shuffle_epi8(v, m1)));
}

CVT_DECODE(f16, 8, 2, CVT_ONE, f16_block, (const __m128i m0 = widen16_mask(0, be), m1 = widen16_mask(4, be);),
           (, m0, m1))

AI void bf16_block(float *d, const uint8_t *s, __m128i m0, __m128i m1) {
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
  _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(v, m0));
  _mm_storeu_si128((__m128i *)(void *)(d + 4), _mm_shuffle_epi8(v, m1));
}

CVT_DECODE(bf16, 8, 2, CVT_ONE, bf16_block, (const __m128i m0 = widen16_mask(0, be), m1 = widen16_mask(4, be);),
           (, m0, m1))

/* ---- fp8 ------------------------------------------------------------------------- */

/* e5m2 is the upper byte of a binary16: byte << 24 is (h << 16). */
AI void e5m2_block(float *d, const uint8_t *s) {
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
  _mm_storeu_si128((__m128i *)(void *)d, f16hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(0))));
  _mm_storeu_si128((__m128i *)(void *)(d + 4), f16hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(4))));
  _mm_storeu_si128((__m128i *)(void *)(d + 8), f16hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(8))));
  _mm_storeu_si128((__m128i *)(void *)(d + 12),
                   f16hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(12))));
}

CVT_DECODE(e5m2, 16, 1, CVT_ONE, e5m2_block, (), ())

/* x = byte << 24, byte an e4m3fn: a = the exponent and mantissa at float32 positions
 * (exponent bits 23..26, mantissa 20..22). Normal: rebias by 120 << 23; subnormal
 * (m * 2^-9): bits(a + (121 << 23)) - 2^-6, exact as for f16; S.1111.111: quiet NaN. */
AI __m128i e4m3hi_to_f32(__m128i x) {
  const __m128i sign = _mm_and_si128(x, C32(0x80000000u));
  const __m128i a = _mm_srli_epi32(_mm_and_si128(x, C32(0x7f000000u)), 4);
  __m128i r = _mm_add_epi32(a, C32(0x3c000000u));
  const __m128 den = _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(a, C32(0x3c800000u))),
                                _mm_castsi128_ps(C32(0x3c800000u)));
  r = _mm_blendv_epi8(r, _mm_castps_si128(den), _mm_cmplt_epi32(a, C32(0x00800000u)));
  r = _mm_blendv_epi8(r, C32(0x7fc00000u), _mm_cmpeq_epi32(a, C32(0x07f00000u)));
  return _mm_or_si128(r, sign);
}

AI void e4m3_block(float *d, const uint8_t *s) {
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
  _mm_storeu_si128((__m128i *)(void *)d, e4m3hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(0))));
  _mm_storeu_si128((__m128i *)(void *)(d + 4), e4m3hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(4))));
  _mm_storeu_si128((__m128i *)(void *)(d + 8), e4m3hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(8))));
  _mm_storeu_si128((__m128i *)(void *)(d + 12),
                   e4m3hi_to_f32(_mm_shuffle_epi8(v, widen8_mask(12))));
}

CVT_DECODE(e4m3, 16, 1, CVT_ONE, e4m3_block, (), ())

/* ---- int8, uint8 ----------------------------------------------------------------- */

#define INT8_BLOCK(name, widen)                                                            \
  AI void name(float *d, const uint8_t *s) {                                               \
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);                   \
    _mm_storeu_ps(d, _mm_cvtepi32_ps(widen(v)));                                           \
    _mm_storeu_ps(d + 4, _mm_cvtepi32_ps(widen(_mm_srli_si128(v, 4))));                    \
    _mm_storeu_ps(d + 8, _mm_cvtepi32_ps(widen(_mm_srli_si128(v, 8))));                    \
    _mm_storeu_ps(d + 12, _mm_cvtepi32_ps(widen(_mm_srli_si128(v, 12))));                  \
  }
INT8_BLOCK(i8_block, _mm_cvtepi8_epi32)
INT8_BLOCK(u8_block, _mm_cvtepu8_epi32)

CVT_DECODE(i8, 16, 1, CVT_ONE, i8_block, (), ())

CVT_DECODE(u8, 16, 1, CVT_ONE, u8_block, (), ())

/* ---- packed bits ----------------------------------------------------------------- */

/* Packed bits by table: each nibble of the input is 4 floats (16 bytes), one aligned load
 * from a 16-entry table (256 bytes per dtype) and one store. At one load and one store
 * per 16 output bytes this beats the vector bit tests (pshufb, pand, pcmpeqd, pand per 4
 * floats) on the SSE4 machines this tier is for, and it keeps to the L1 cache. */
#define NIB(v, one, zero)                                                                \
  {((v) & 8) ? (one) : (zero), ((v) & 4) ? (one) : (zero), ((v) & 2) ? (one) : (zero), \
   ((v) & 1) ? (one) : (zero)}
#define NIB16(one, zero)                                                                  \
  {NIB(0, one, zero),  NIB(1, one, zero),  NIB(2, one, zero),  NIB(3, one, zero),         \
   NIB(4, one, zero),  NIB(5, one, zero),  NIB(6, one, zero),  NIB(7, one, zero),         \
   NIB(8, one, zero),  NIB(9, one, zero),  NIB(10, one, zero), NIB(11, one, zero),        \
   NIB(12, one, zero), NIB(13, one, zero), NIB(14, one, zero), NIB(15, one, zero)}
/* ubinary: 1.0 / 0.0; binary (indexed by the packed nibble, i.e. the stored one with bit
 * 7 flipped back): +1.0 / -1.0 */
static const uint32_t ubin_tbl[16][4] __attribute__((aligned(64))) = NIB16(0x3f800000u, 0u);
static const uint32_t bin_tbl[16][4] __attribute__((aligned(64))) =
    NIB16(0x3f800000u, 0xbf800000u);

AI void bits_sse42(float *dst, const uint8_t *s, size_t n, int binary) {
  const uint32_t(*t)[4] = binary ? bin_tbl : ubin_tbl;
  const size_t nb = n / 8;
  const uint64_t flip = binary ? UINT64_C(0x8080808080808080) : 0;
  size_t i = 0;
  for (; i + 8 <= nb; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    w ^= flip;
    float *d = dst + 8 * i;
    for (int k = 0; k < 8; k++, w >>= 8, d += 8) { /* little-endian: byte k of the word */
      _mm_storeu_si128((__m128i *)(void *)d, _mm_load_si128((const __m128i *)(const void *)t[(w >> 4) & 15]));
      _mm_storeu_si128((__m128i *)(void *)(d + 4), _mm_load_si128((const __m128i *)(const void *)t[w & 15]));
    }
  }
  for (; i < nb; i++) {
    const unsigned b = (unsigned)(s[i] ^ (uint8_t)flip);
    _mm_storeu_si128((__m128i *)(void *)(dst + 8 * i), _mm_load_si128((const __m128i *)(const void *)t[b >> 4]));
    _mm_storeu_si128((__m128i *)(void *)(dst + 8 * i + 4), _mm_load_si128((const __m128i *)(const void *)t[b & 15]));
  }
}

CVT_BITS(binary, 0, bits_sse42, (, 1))

CVT_BITS(ubinary, 0, bits_sse42, (, 0))

/* ---- encode: float32 -> f16, bf16 ------------------------------------------------- */

/* Round to nearest even as the scalar reference does. Normal results with integer ops:
 * |x| clamped to 65536 first (at or above 65520 the rounding carries into exponent field
 * 31 with a zero mantissa, i.e. infinity: no separate overflow case). A subnormal result
 * is round(|x| * 2^24) with roundps's explicit nearest-even mode (the multiply by a
 * power of two is exact, so MXCSR's rounding mode never enters); NaNs are quieted with
 * their upper payload bits. Those two are rare in real data (an embedding value below
 * 2^-14, a NaN), so a block of 8 takes them only when one of its lanes needs them. */
AI __m128i f16_normal(__m128i c) {
  const __m128i r = _mm_sub_epi32(c, C32(0x38000000 - 0xfff));
  return _mm_srli_epi32(_mm_add_epi32(r, _mm_and_si128(_mm_srli_epi32(c, 13), C32(1))), 13);
}

AI __m128i f16_special(__m128i r, __m128i a, __m128i c, __m128i small, __m128i isnan) {
  const __m128 v = _mm_mul_ps(_mm_castsi128_ps(c), _mm_set1_ps(0x1p24f));
  const __m128i q =
      _mm_cvtps_epi32(_mm_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  r = _mm_blendv_epi8(r, q, small);
  const __m128i nan = _mm_or_si128(C32(0x7e00), _mm_and_si128(_mm_srli_epi32(a, 13), C32(0x3ff)));
  return _mm_blendv_epi8(r, nan, isnan);
}

AI void enc_f16_block(uint8_t *d, const float *src, __m128i order) {
  const __m128i x0 = _mm_castps_si128(_mm_loadu_ps(src));
  const __m128i x1 = _mm_castps_si128(_mm_loadu_ps(src + 4));
  const __m128i a0 = _mm_and_si128(x0, C32(0x7fffffff)), a1 = _mm_and_si128(x1, C32(0x7fffffff));
  const __m128i c0 = _mm_min_epu32(a0, C32(0x47800000)), c1 = _mm_min_epu32(a1, C32(0x47800000));
  __m128i r0 = f16_normal(c0), r1 = f16_normal(c1);
  const __m128i sm0 = _mm_cmplt_epi32(c0, C32(0x38800000)), sm1 = _mm_cmplt_epi32(c1, C32(0x38800000));
  const __m128i n0 = _mm_cmpgt_epi32(a0, C32(0x7f800000)), n1 = _mm_cmpgt_epi32(a1, C32(0x7f800000));
  const __m128i any = _mm_or_si128(_mm_or_si128(sm0, sm1), _mm_or_si128(n0, n1));
  if (!_mm_testz_si128(any, any)) {
    r0 = f16_special(r0, a0, c0, sm0, n0);
    r1 = f16_special(r1, a1, c1, sm1, n1);
  }
  r0 = _mm_or_si128(r0, _mm_and_si128(_mm_srli_epi32(x0, 16), C32(0x8000)));
  r1 = _mm_or_si128(r1, _mm_and_si128(_mm_srli_epi32(x1, 16), C32(0x8000)));
  _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(_mm_packus_epi32(r0, r1), order));
}

/* bf16: (x + 0x7fff + lsb) >> 16; NaN: the upper half with the quiet bit. */
AI __m128i f32_to_bf16_lanes(__m128i x) {
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(x, 16), C32(1));
  const __m128i r = _mm_srli_epi32(_mm_add_epi32(x, _mm_add_epi32(C32(0x7fff), lsb)), 16);
  const __m128i nan = _mm_or_si128(_mm_srli_epi32(x, 16), C32(0x40));
  const __m128i isnan = _mm_cmpgt_epi32(_mm_and_si128(x, C32(0x7fffffff)), C32(0x7f800000));
  return _mm_blendv_epi8(r, nan, isnan);
}

#define ENC_BLOCK(name, lanes)                                                              \
  AI void name(uint8_t *d, const float *s, __m128i order) {                                \
    const __m128i a = lanes(_mm_castps_si128(_mm_loadu_ps(s)));                             \
    const __m128i b = lanes(_mm_castps_si128(_mm_loadu_ps(s + 4)));                         \
    _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(_mm_packus_epi32(a, b), order)); \
  }
ENC_BLOCK(enc_bf16_block, f32_to_bf16_lanes)

/* pshufb that leaves 16-bit elements alone (LE) or swaps their bytes (BE). */
AI __m128i order16(int be) {
  return be ? _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14)
            : _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

CVT_ENCODE(f16, 8, CVT_ONE, enc_f16_block, (const __m128i o = order16(be);), (, o))

CVT_ENCODE(bf16, 8, CVT_ONE, enc_bf16_block, (const __m128i o = order16(be);), (, o))
