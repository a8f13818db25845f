/* A JSON number's text -> the float32 nearest it, rounded once (round to nearest, ties to
 * even), at any digit count and exponent. Not installed.
 *
 * Fast path (the numbers embedding servers print: at most 19 significant digits and a
 * decimal exponent the conversion below takes): the significand w < 2^64 becomes a double
 * (exact up to 2^53, else rounded once) and is multiplied by 10^e (an exact double for
 * e = 0..22, a correctly rounded one for e = -44..-1): at most three roundings of relative
 * error 2^-53 each, so the double d is within 4 ulps of the exact value. Narrowing d to float
 * rounds again, which gives the float nearest the decimal unless a float32 midpoint lies
 * between the decimal and d; a midpoint (25 significant bits) is a double whose dropped 29
 * bits are 1000...0, so d is narrowed only when those bits are more than 8 ulps from that
 * pattern (a midpoint of the neighbouring binade is 2^27 ulps away or more). The digit
 * texts JavaScript prints for float32 values widened to double (JSON.stringify, 17
 * significant digits) take this path too, and only about one number in 2^25 is declined.
 * Those, and every number outside the fast path, go to fast_float's from_chars<float>
 * (exact for any input; Debian's libfast-float-dev).
 *
 * The scanner checks RFC 8259's number grammar on the way (no leading zeros, a digit
 * after '.' and in the exponent), so the decoder needs no second pass. */
#ifndef EMBD_DECIMAL_H
#define EMBD_DECIMAL_H

#include <stdint.h>
#include <string.h>

#include "json_strict.h" /* (and the SSE2 / NEON / wasm SIMD128 headers) */

#ifdef __cplusplus
extern "C" {
#endif

/* Exact: the text [p, q) is a valid JSON number. *out gets the nearest float (infinity
 * beyond the range; +-0 below half the smallest subnormal). */
EMBD_INTERNAL void embd_decimal_f32_slow(const uint8_t *p, const uint8_t *q, float *out);

#ifdef __cplusplus
}
#endif

static inline int embd_dec_digit(const uint8_t *p, const uint8_t *end) {
  return p < end && (unsigned)(*p - '0') < 10u;
}

/* The 8 bytes at p as a word whose low byte is p[0], on any host. */
static inline uint64_t embd_dec_load(const uint8_t *p) {
  uint64_t x;
  memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  x = __builtin_bswap64(x);
#endif
  return x;
}

/* Bit 7 of a byte of x set where the byte is not an ASCII digit ('0' + 0x46 carries into
 * bit 7 for bytes above '9', the subtraction borrows into it below '0'). Exact up to and
 * including the first non-digit: a carry or borrow starts only at a non-digit byte and
 * only moves up, so ctz of the result finds the first non-digit. */
static inline uint64_t embd_dec_nondigits(uint64_t x) {
  return ((x + UINT64_C(0x4646464646464646)) | (x - UINT64_C(0x3030303030303030))) &
         UINT64_C(0x8080808080808080);
}

/* Eight digit values (0..9 per byte, the first digit in the low byte) as one number:
 * pairs, quads and the two halves combined by multiplies (Lemire's method). */
static inline uint64_t embd_dec_combine8(uint64_t x) {
  x = x * 10 + (x >> 8); /* pairs in bytes 0, 2, 4, 6 */
  return (((x & UINT64_C(0x000000FF000000FF)) * (100 + (UINT64_C(1000000) << 32))) +
          (((x >> 16) & UINT64_C(0x000000FF000000FF)) * (1 + (UINT64_C(10000) << 32)))) >> 32;
}

/* The value of the first n (0..8) bytes of x, which are digits: shifted to the top of the
 * word, the zero bytes below them are leading zeros. Two shifts, because n = 0 means 64. */
static inline uint64_t embd_dec_prefix(uint64_t x, unsigned n) {
  x -= UINT64_C(0x3030303030303030); /* borrows start above the digits: shifted out */
  x = (x << (32 - 4 * n)) << (32 - 4 * n);
  return embd_dec_combine8(x);
}

/* Eight ASCII digits at p (8 readable bytes) as their value in *v, or 0 if not all eight
 * are digits. */
static inline int embd_dec_eight(const uint8_t *p, uint64_t *v) {
  const uint64_t x = embd_dec_load(p);
  if (embd_dec_nondigits(x) != 0) return 0;
  *v = embd_dec_combine8(x - UINT64_C(0x3030303030303030));
  return 1;
}

/* Digits at p into *w (wrapping beyond 19, when *nd says the slow path decides); returns
 * the position after them. */
static inline const uint8_t *embd_dec_digits(const uint8_t *p, const uint8_t *end, uint64_t *w,
                                             int *nd) {
  uint64_t x = *w, v;
  int n = *nd;
  while (end - p >= 8 && embd_dec_eight(p, &v)) {
    x = x * 100000000u + v;
    n += 8;
    p += 8;
  }
  while (p < end && (unsigned)(*p - '0') < 10u) {
    x = x * 10 + (unsigned)(*p - '0');
    n++;
    p++;
  }
  *w = x;
  *nd = n;
  return p;
}

/* w * 10^e10 (w < 2^64: at most 19 digits) as the nearest float in *out, negated if neg;
 * 0 when the fast path does not apply (the slow path decides): w >= 2^63, an exponent beyond
 * -44..22 (w * 10^e10 stays below 10^38, finite, by the limit on positive ones), a float
 * below the normal range, or d within 8 ulps of a float32 midpoint (the header says why
 * that is exact). */
static inline int embd_dec_to_f32(uint64_t w, int64_t e10, int neg, float *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  /* 10^-k rounded to double (the compiler rounds each literal correctly): a multiply by
   * one is a third rounding beside w's and the product's, cheaper than a division by
   * 10^k (Zen 1: 4 cycles of latency, not 13, and pipelined). */
  static const double n10[45] = {
      1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13,
      1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22, 1e-23, 1e-24, 1e-25, 1e-26,
      1e-27, 1e-28, 1e-29, 1e-30, 1e-31, 1e-32, 1e-33, 1e-34, 1e-35, 1e-36, 1e-37, 1e-38, 1e-39,
      1e-40, 1e-41, 1e-42, 1e-43, 1e-44};
  /* w = 0 needs no case of its own: d is 0, narrowed exactly (and signed below). Below 2^63
   * (all but the largest 19-digit numbers): a signed conversion, one instruction on
   * x86-64 where an unsigned one is a branch and a fix-up. */
  if ((int64_t)w < 0) return 0;
  double d = (double)(int64_t)w;
  if (e10 < 0) {
    if (e10 < -44) return 0;
    d *= n10[-e10];
    /* a subnormal float's midpoints sit elsewhere ("1.2345678901234567e-40") */
    if (__builtin_expect(e10 < -22, 0) && d < 0x1p-126) return 0;
  } else {
    if (e10 > 18 && (e10 > 22 || w > (UINT64_C(1) << 53))) return 0;
    d *= p10[e10];
  }
  /* d >= 1e-22 or 2^-126 here (or 0): a normal float, whose dropped 29 bits are
   * 1000...0 on a midpoint; more than 8 ulps from that pattern, no midpoint is within d's
   * error. */
  uint64_t b;
  memcpy(&b, &d, 8);
  if ((uint32_t)((uint32_t)(b & 0x1FFFFFFFu) - (0x10000000u - 8u)) <= 16u) return 0;
  /* The sign as a bit, not a branch: half the numbers of an embedding are negative. */
  float f = (float)d;
  uint32_t fb;
  memcpy(&fb, &f, 4);
  fb |= (uint32_t)neg << 31;
  memcpy(out, &fb, 4);
  return 1;
}

/* Bytes embd_decimal_f32_fast may read from its p (it never reads further), and bytes
 * before p it may read (EMBD_DEC_FAST_BEHIND: its caller passes the text's start, and
 * the fast path declines a number nearer the start than that). */
#define EMBD_DEC_FAST_READ 48
#define EMBD_DEC_FAST_BEHIND 32

/* The most fraction digits embd_dec_fraction values: 24 with SSE2 and wasm SIMD128 (what
 * JSON.stringify prints for a float32 widened to double: 17 significant digits, after up
 * to 6 leading zeros), 15 elsewhere (the numbers servers print as shortest float32 text;
 * longer ones take the careful parser). */
#if defined(__SSE2__) || defined(__wasm_simd128__)
#define EMBD_DEC_FRACTION_MAX 24u
#else
#define EMBD_DEC_FRACTION_MAX 15u
#endif

#if defined(__SSE2__)
/* embd_dec_fraction's SSE2 path for 16 or more digits: the next 16 bytes' digit test, then
 * the 32 bytes that end at the last digit valued as two halves at once. */
static inline __attribute__((noinline)) uint64_t embd_dec_fraction_long_sse2(const uint8_t *f, unsigned *n) {
  static const uint8_t window[64] = {
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const __m128i zero = _mm_setzero_si128(), c0 = _mm_set1_epi8('0'), c9 = _mm_set1_epi8(9);
  const __m128i m10 = _mm_set1_epi32((1 << 16) | 10), m100 = _mm_set1_epi32((1 << 16) | 100);
  const __m128i m10k = _mm_set1_epi32((1 << 16) | 10000);
  const __m128i t1 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(f + 16)), c0);
  const unsigned d1 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t1, c9), t1));
  const unsigned k2 = 16 + (unsigned)__builtin_ctz(~d1 | (1u << 9)); /* 16..25 */
  __m128i v0 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(f + k2 - 32)), c0);
  __m128i v1 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(f + k2 - 16)), c0);
  v0 = _mm_and_si128(v0, _mm_loadu_si128((const __m128i *)(const void *)(window + k2)));
  const __m128i a0 = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(v0, zero), m10),
                                     _mm_madd_epi16(_mm_unpackhi_epi8(v0, zero), m10)); /* 8 x 0..99 */
  const __m128i a1 = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(v1, zero), m10),
                                     _mm_madd_epi16(_mm_unpackhi_epi8(v1, zero), m10));
  const __m128i b = _mm_packs_epi32(_mm_madd_epi16(a0, m100), _mm_madd_epi16(a1, m100)); /* 8 x 0..9999 */
  const __m128i c = _mm_madd_epi16(b, m10k); /* 4 x 8 digits: v0's two, then v1's two */
  const uint64_t x = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(c, c));
  /* the digits before the last 16 (c's lane 0 is 0 for k2 <= 24): below 1000, or the
   * value would pass 10^19 */
  const uint32_t h = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(c, 4));
  *n = h < 1000 ? k2 : 99;
  return h * UINT64_C(10000000000000000) + (x & 0xFFFFFFFFu) * 100000000u + (x >> 32);
}
#endif

#if defined(__wasm_simd128__)
/* embd_dec_fraction's SIMD128 path for 16 or more digits (apart, as SSE2's, but inlined:
 * V8 measured no gain from a call): both 16-byte digit tests, then the 32 bytes that end
 * at the last digit valued at once. */
static inline uint64_t embd_dec_fraction_long_wasm(const uint8_t *f, unsigned *n) {
  static const uint8_t window[64] = {
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const v128_t c0 = wasm_i8x16_splat('0'), c9 = wasm_i8x16_splat(9);
  const v128_t t0 = wasm_i8x16_sub(wasm_v128_load(f), c0), t1 = wasm_i8x16_sub(wasm_v128_load(f + 16), c0);
  const unsigned dig = (unsigned)wasm_i8x16_bitmask(wasm_u8x16_le(t0, c9)) |
                       (unsigned)wasm_i8x16_bitmask(wasm_u8x16_le(t1, c9)) << 16;
  const unsigned k = (unsigned)__builtin_ctz(~dig | (1u << 25)); /* 0..25 */
  const v128_t v0 = wasm_v128_and(wasm_i8x16_sub(wasm_v128_load(f + k - 32), c0), wasm_v128_load(window + k));
  const v128_t v1 = wasm_v128_and(wasm_i8x16_sub(wasm_v128_load(f + k - 16), c0), wasm_v128_load(window + k + 16));
  /* bytes -> 16-bit lanes; each dot sums a more significant lane times 10^m and the next */
  const v128_t m10 = wasm_i32x4_splat((1 << 16) | 10), m100 = wasm_i32x4_splat((1 << 16) | 100);
  const v128_t m10k = wasm_i32x4_splat((1 << 16) | 10000);
  const v128_t a0 = wasm_i16x8_narrow_i32x4(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(v0), m10),
                                            wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(v0), m10));
  const v128_t a1 = wasm_i16x8_narrow_i32x4(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(v1), m10),
                                            wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(v1), m10));
  const v128_t b = wasm_i16x8_narrow_i32x4(wasm_i32x4_dot_i16x8(a0, m100), wasm_i32x4_dot_i16x8(a1, m100));
  const v128_t c = wasm_i32x4_dot_i16x8(b, m10k); /* 4 x 8 digits: v0's two, then v1's two */
  /* the digits before the last 16 (lane 0 is 0 for k <= 24): below 1000, or the value
   * would pass 10^19 */
  const uint32_t h = wasm_u32x4_extract_lane(c, 1);
  *n = h < 1000 ? k : 99;
  return h * UINT64_C(10000000000000000) + (uint64_t)wasm_u32x4_extract_lane(c, 2) * 100000000u +
         wasm_u32x4_extract_lane(c, 3);
}
#endif

/* The fraction digits at f (after the '.'): *n gets their count, and when that is
 * 1..EMBD_DEC_FRACTION_MAX the return value is their value (below 10^19: more digits
 * with a larger value set *n past the maximum); otherwise the value is unspecified.
 * Reads f - 32 .. f + 31.
 *
 * SSE2, wasm SIMD128 and NEON: one 16-byte digit test, its first non-digit by ctz; then
 * the 16 bytes that END at the last digit, masked so the bytes before the first digit
 * become leading zeros (a sliding window over a table), valued by pairwise multiply-adds
 * (10,1), (100,1), (10000,1): no branch on the count up to 15. Sixteen or more (SSE2 and
 * SIMD128 only): the next 16 bytes' test too, and the 32 bytes that end at the last digit
 * valued as two halves at once (a branch on 16, not folded into one 32-byte form: that
 * measured 13-21% slower natively and 23% slower in Node 20 on shortest float32 text).
 * Elsewhere: the SWAR test and embd_dec_prefix on two words. */
static inline uint64_t embd_dec_fraction(const uint8_t *f, unsigned *n) {
#if defined(__SSE2__) || defined(__wasm_simd128__)
  static const uint8_t window[64] = {
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
#elif defined(__aarch64__) && defined(__ARM_NEON)
  static const uint8_t window[32] = {0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                                     0,    0,    0,    0,    0,    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
#endif
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128(), c0 = _mm_set1_epi8('0'), c9 = _mm_set1_epi8(9);
  const __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)f), c0);
  const __m128i dig = _mm_cmpeq_epi8(_mm_min_epu8(t, c9), t);
  const __m128i m10 = _mm_set1_epi32((1 << 16) | 10), m100 = _mm_set1_epi32((1 << 16) | 100);
  const __m128i m10k = _mm_set1_epi32((1 << 16) | 10000);
  const unsigned k = (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(dig)); /* 0..16 */
  if (__builtin_expect(k < 16, 1)) {
    /* Up to 15 digits (the shortest float32 texts servers print): 16 bytes, measured
     * faster natively than the 32-byte form below for them. */
    *n = k;
    __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(f + k - 16)), c0);
    v = _mm_and_si128(v, _mm_loadu_si128((const __m128i *)(const void *)(window + 16 + k)));
    /* bytes -> 16-bit lanes; each madd sums a more significant lane times 10^m and the next */
    __m128i a = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(v, zero), m10),
                                _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), m10)); /* 8 x 0..99 */
    a = _mm_madd_epi16(a, m100);                                                  /* 4 x 0..9999 */
    a = _mm_madd_epi16(_mm_packs_epi32(a, a), m10k);                              /* 2 x 8 digits */
    const uint64_t x = (uint64_t)_mm_cvtsi128_si64(a);
    return (x & 0xFFFFFFFFu) * 100000000u + (x >> 32);
  }
  /* 16 or more (JSON.stringify's 17 significant digits): out of line, which keeps the
   * inlined path above as short as it was (measured 2% faster natively). */
  return embd_dec_fraction_long_sse2(f, n);
#elif defined(__wasm_simd128__)
  const v128_t c0 = wasm_i8x16_splat('0'), c9 = wasm_i8x16_splat(9);
  const v128_t t = wasm_i8x16_sub(wasm_v128_load(f), c0);
  const unsigned k = (unsigned)__builtin_ctz(~(unsigned)wasm_i8x16_bitmask(wasm_u8x16_le(t, c9))); /* 0..16 */
  if (__builtin_expect(k < 16, 1)) {
    /* Up to 15 digits: 16 bytes, as SSE2 (the 32-byte form for every count measured 23%
     * slower on shortest float32 text in Node 20). */
    *n = k;
    const v128_t v = wasm_v128_and(wasm_i8x16_sub(wasm_v128_load(f + k - 16), c0), wasm_v128_load(window + 16 + k));
    const v128_t m10 = wasm_i32x4_splat((1 << 16) | 10), m100 = wasm_i32x4_splat((1 << 16) | 100);
    const v128_t m10k = wasm_i32x4_splat((1 << 16) | 10000);
    v128_t a = wasm_i16x8_narrow_i32x4(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(v), m10),
                                       wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(v), m10)); /* 8 x 0..99 */
    a = wasm_i32x4_dot_i16x8(a, m100);                                                          /* 4 x 0..9999 */
    a = wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(a, a), m10k);                              /* 2 x 8 digits */
    return (uint64_t)wasm_u32x4_extract_lane(a, 0) * 100000000u + wasm_u32x4_extract_lane(a, 1);
  }
  return embd_dec_fraction_long_wasm(f, n);
#elif defined(__aarch64__) && defined(__ARM_NEON)
  const uint8x16_t c0 = vdupq_n_u8('0');
  const uint8x16_t t = vsubq_u8(vld1q_u8(f), c0);
  const uint8x16_t dig = vcleq_u8(t, vdupq_n_u8(9));
  const uint64_t other = ~vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(dig), 4)), 0);
  const unsigned k = other ? (unsigned)__builtin_ctzll(other) >> 2 : 16;
  *n = k;
  if (k - 1u >= 15u) return 0;
  const uint8x16_t v = vandq_u8(vsubq_u8(vld1q_u8(f + k - 16), c0), vld1q_u8(window + k));
  /* little-endian lanes: the low half of each lane is the more significant part */
  const uint16x8_t v16 = vreinterpretq_u16_u8(v);
  const uint16x8_t a = vmlaq_n_u16(vshrq_n_u16(v16, 8), vandq_u16(v16, vdupq_n_u16(0xFF)), 10);
  const uint32x4_t a32 = vreinterpretq_u32_u16(a);
  const uint32x4_t b = vmlaq_n_u32(vshrq_n_u32(a32, 16), vandq_u32(a32, vdupq_n_u32(0xFFFF)), 100);
  const uint64x2_t b64 = vreinterpretq_u64_u32(b);
  const uint64_t l0 = vgetq_lane_u64(b64, 0), l1 = vgetq_lane_u64(b64, 1);
  const uint64_t d0 = (l0 & 0xFFFFFFFFu) * 10000u + (l0 >> 32), d1 = (l1 & 0xFFFFFFFFu) * 10000u + (l1 >> 32);
  return d0 * 100000000u + d1;
#else
  static const uint64_t p10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  const uint64_t f0 = embd_dec_load(f), f1 = embd_dec_load(f + 8);
  const uint64_t n0m = embd_dec_nondigits(f0), n1m = embd_dec_nondigits(f1);
  const unsigned n0 = n0m ? (unsigned)__builtin_ctzll(n0m) >> 3 : 8;
  unsigned n1 = n1m ? (unsigned)__builtin_ctzll(n1m) >> 3 : 8;
  n1 = n0 == 8 ? n1 : 0; /* the second word counts only after eight digits */
  *n = n0 + n1;
  if (n0 == 0 || n1 == 8) return 0;
  return embd_dec_prefix(f0, n0) * p10[n1] + embd_dec_prefix(f1, n1);
#endif
}

/* The numbers servers print, without a branch on their digit counts: at most 7 integer
 * digits, 1..EMBD_DEC_FRACTION_MAX fraction digits (19 significant in all: leading zeros
 * of a fraction after "0." are free), an exponent of at most 3 digits. Digit runs are
 * found by ctz over a whole-word digit test (embd_dec_fraction), so a body whose numbers
 * vary in length (shortest round-trip text) costs no mispredicted loop exits. Returns the
 * position after the number with *out set, or NULL (nothing written) for anything else: a
 * grammar fault, more digits, a value the fast conversion leaves to the slow path, or p
 * nearer than EMBD_DEC_FAST_BEHIND to the text's start `base`; the careful parser below
 * then decides. Reads p - EMBD_DEC_FAST_BEHIND .. p + EMBD_DEC_FAST_READ - 1 at most. */
static inline const uint8_t *embd_decimal_f32_fast(const uint8_t *p, const uint8_t *base, float *out) {
  /* 10^n for the integer part's shift by n fraction digits; 0 from 20 on, where that
   * part must be 0 (w * 0 is its value then, and no branch is needed) */
  static const uint64_t p10[25] = {1,
                                   10,
                                   100,
                                   1000,
                                   10000,
                                   100000,
                                   1000000,
                                   10000000,
                                   100000000,
                                   1000000000,
                                   10000000000,
                                   100000000000,
                                   1000000000000,
                                   10000000000000,
                                   100000000000000,
                                   1000000000000000,
                                   10000000000000000,
                                   100000000000000000,
                                   1000000000000000000,
                                   10000000000000000000u,
                                   0, 0, 0, 0, 0};
  if (p - base < EMBD_DEC_FAST_BEHIND) return NULL;
  const int neg = *p == '-';
  const uint8_t *s = p + neg;
  uint64_t w;
  unsigned ni;
  if ((unsigned)(s[0] - '0') < 10 && s[1] == '.') {
    /* One integer digit ("0.0123", "-5.1e-05"): the usual case, valued directly. */
    ni = 1;
    w = (unsigned)(s[0] - '0');
  } else {
    const uint64_t x0 = embd_dec_load(s), m0 = embd_dec_nondigits(x0);
    if (m0 == 0) return NULL; /* 8 or more integer digits */
    ni = (unsigned)__builtin_ctzll(m0) >> 3;
    if (ni == 0 || (ni > 1 && *s == '0')) return NULL; /* no digit, or a leading zero */
    w = embd_dec_prefix(x0, ni);
  }
  const uint8_t *q = s + ni;
  int64_t e10 = 0;
  if (*q == '.') {
    unsigned n;
    const uint64_t f = embd_dec_fraction(q + 1, &n);
    if (n - 1u >= EMBD_DEC_FRACTION_MAX) return NULL;
    /* At most 19 digits, or an integer part of 0 (and f < 10^19): w < 2^64 either way. */
    if (ni + n > 19 && w != 0) return NULL;
    w = w * p10[n] + f;
    e10 = -(int64_t)n;
    q += 1 + n;
  }
  if ((*q | 0x20) == 'e') {
    const uint8_t *t = q + 1;
    const int eneg = *t == '-';
    t += *t == '-' || *t == '+';
    unsigned d = (unsigned)(*t - '0'), x;
    if (d >= 10) return NULL;
    x = d, t++;
    if ((d = (unsigned)(*t - '0')) < 10) {
      x = x * 10 + d, t++;
      if ((d = (unsigned)(*t - '0')) < 10) {
        x = x * 10 + d, t++;
        if ((unsigned)(*t - '0') < 10) return NULL;
      }
    }
    e10 += eneg ? -(int64_t)x : (int64_t)x;
    q = t;
  }
  return embd_dec_to_f32(w, e10, neg, out) ? q : NULL;
}

/* The careful parser: the number at p (its first byte), any text; returns the position
 * after it and sets *out, or NULL with the fault recorded in j (not a number, or a
 * grammar fault). Callers try embd_decimal_f32_fast first (openai.cc's array loop): this
 * does not, so a number the fast path declined is not tried twice. */
static inline const uint8_t *embd_decimal_f32(embd_json *j, const uint8_t *p, float *out) {
  const uint8_t *end = j->end, *s = p;
  int neg = 0;
  if (p < end && *p == '-') neg = 1, p++;
  /* w: the digits (integer part without a lone leading 0, then the fraction, leading
   * zeros included); nd: how many; the value is w * 10^e10 while nd <= 19. */
  uint64_t w = 0;
  int nd = 0;
  int64_t e10 = 0;
  if (!embd_dec_digit(p, end)) {
    if (p >= end) return embd_json_fault(j, end, "the text ends inside a number");
    return embd_json_fault(j, p, neg ? "'-' without digits after it" : "not a number");
  }
  if (*p == '0') {
    p++;
    if (embd_dec_digit(p, end)) return embd_json_fault(j, p - 1, "a number with a leading zero");
  } else {
    p = embd_dec_digits(p, end, &w, &nd);
  }
  if (p < end && *p == '.') {
    p++;
    if (!embd_dec_digit(p, end))
      return embd_json_fault(j, p, p < end ? "no digit after a decimal point" : "the text ends inside a number");
    const int before = nd;
    p = embd_dec_digits(p, end, &w, &nd);
    e10 = before - nd;
  }
  if (p < end && (*p | 0x20) == 'e') {
    p++;
    int eneg = 0;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p == '-', p++;
    if (!embd_dec_digit(p, end))
      return embd_json_fault(j, p, p < end ? "no digit in a number's exponent" : "the text ends inside a number");
    int64_t x = 0;
    do {
      if (x < 100000000) x = x * 10 + (*p - '0'); /* far beyond any float: saturate */
      p++;
    } while (embd_dec_digit(p, end));
    e10 += eneg ? -x : x;
  }
  if (__builtin_expect(nd <= 19, 1) && embd_dec_to_f32(w, e10, neg, out)) return p;
  embd_decimal_f32_slow(s, p, out);
  return p;
}

#endif
