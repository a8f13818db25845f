/* A JSON number's text -> the float32 nearest it, rounded once (round to nearest, ties to
 * even), at any digit count and exponent. Not installed.
 *
 * Fast path (the numbers embedding servers print: at most 19 digits, leading zeros of
 * the fraction counted, and a decimal exponent within +-22): the significand w < 2^53 and 10^|e| are exact doubles,
 * so w * 10^e (or w / 10^-e) is one correctly rounded IEEE operation (Clinger). Narrowing
 * that double to float rounds a second time, which can differ from rounding the decimal
 * once only when the double sits exactly on a midpoint between two floats (a midpoint has
 * 25 significant bits, so a double strictly between the decimal and the double would be
 * nearer the decimal, a contradiction). Those, and every number outside the fast path, go
 * to fast_float's from_chars<float> (exact for any input; Debian's libfast-float-dev).
 *
 * The scanner checks RFC 8259's number grammar on the way (no leading zeros, a digit
 * after '.' and in the exponent), so the decoder needs no second pass. */
#ifndef EMBD_DECIMAL_H
#define EMBD_DECIMAL_H

#include <stdint.h>
#include <string.h>

#include "json_strict.h" /* (and the SSE2 / NEON headers) */

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

/* w * 10^e10 (w <= 19 digits) as the nearest float in *out, negated if neg; 0 when the fast
 * path does not apply (the slow path decides). */
static inline int embd_dec_to_f32(uint64_t w, int64_t e10, int neg, float *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (w == 0) {
    *out = neg ? -0.0f : 0.0f;
    return 1;
  }
  if (w <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
    double d = (double)w;
    d = e10 < 0 ? d / p10[-e10] : d * p10[e10];
    /* d >= 1e-22 here: a normal float, whose dropped 29 bits are 1000...0 on a midpoint. */
    uint64_t b;
    memcpy(&b, &d, 8);
    if ((b & 0x1FFFFFFFu) != 0x10000000u) {
      /* The sign as a bit, not a branch: half the numbers of an embedding are negative. */
      float f = (float)d;
      uint32_t fb;
      memcpy(&fb, &f, 4);
      fb |= (uint32_t)neg << 31;
      memcpy(out, &fb, 4);
      return 1;
    }
  }
  return 0;
}

/* Bytes embd_decimal_f32_fast may read from its p (it never reads further), and bytes
 * before p it may read (EMBD_DEC_FAST_BEHIND: its caller passes the text's start, and
 * the fast path declines a number nearer the start than that). */
#define EMBD_DEC_FAST_READ 32
#define EMBD_DEC_FAST_BEHIND 16

/* The fraction digits at f (after the '.'): *n gets their count and the return value
 * their value, or 0 when there are none or more than 15 (the careful parser's). Reads
 * f - 16 .. f + 15.
 *
 * SSE2 and NEON (every x86-64 and aarch64 has them): one 16-byte digit test, its first
 * non-digit by ctz; then the 16 bytes that END at the last digit, masked so the bytes
 * before the first digit become leading zeros (a sliding window over a 32-byte
 * table), valued by pairwise multiply-adds (10,1), (100,1), (10000,1): about 20
 * instructions for any count, no branch on it. Elsewhere: the SWAR test and
 * embd_dec_prefix on two words. */
static inline uint64_t embd_dec_fraction(const uint8_t *f, unsigned *n) {
#if defined(__SSE2__) || (defined(__aarch64__) && defined(__ARM_NEON))
  static const uint8_t window[32] = {0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                                     0,    0,    0,    0,    0,    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
#endif
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128(), c0 = _mm_set1_epi8('0');
  const __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)f), c0);
  const __m128i dig = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);
  const unsigned k = (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(dig)); /* 0..16 */
  *n = k;
  if (k - 1u >= 15u) return 0;
  __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(f + k - 16)), c0);
  v = _mm_and_si128(v, _mm_loadu_si128((const __m128i *)(const void *)(window + k)));
  /* bytes -> 16-bit lanes; each madd sums a more significant lane times 10^m and the next */
  const __m128i m10 = _mm_set1_epi32((1 << 16) | 10), m100 = _mm_set1_epi32((1 << 16) | 100);
  const __m128i m10k = _mm_set1_epi32((1 << 16) | 10000);
  __m128i a = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(v, zero), m10),
                              _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), m10)); /* 8 x 0..99 */
  a = _mm_madd_epi16(a, m100);                                                  /* 4 x 0..9999 */
  a = _mm_madd_epi16(_mm_packs_epi32(a, a), m10k);                              /* 2 x 8 digits */
  const uint64_t x = (uint64_t)_mm_cvtsi128_si64(a);
  return (x & 0xFFFFFFFFu) * 100000000u + (x >> 32);
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
  const uint64_t lo = vgetq_lane_u64(b64, 0), hi = vgetq_lane_u64(b64, 1);
  const uint64_t d0 = (lo & 0xFFFFFFFFu) * 10000u + (lo >> 32), d1 = (hi & 0xFFFFFFFFu) * 10000u + (hi >> 32);
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
 * digits, 1..15 fraction digits (19 in all), an exponent of at most 3 digits. Digit
 * runs are found by ctz over a whole-word digit test (embd_dec_fraction), so a body
 * whose numbers vary in length (shortest round-trip text) costs no mispredicted loop
 * exits. Returns the position after the number with *out set, or NULL (nothing written)
 * for anything else: a grammar fault, more digits, a value the fast conversion leaves to
 * the slow path, or p nearer than EMBD_DEC_FAST_BEHIND to the text's start `base`; the
 * careful parser below then decides. Reads p - EMBD_DEC_FAST_BEHIND .. p +
 * EMBD_DEC_FAST_READ - 1 at most. */
static inline const uint8_t *embd_decimal_f32_fast(const uint8_t *p, const uint8_t *base, float *out) {
  static const uint64_t p10[16] = {1,          10,          100,          1000,          10000,
                                   100000,     1000000,     10000000,     100000000,     1000000000,
                                   10000000000, 100000000000, 1000000000000, 10000000000000,
                                   100000000000000, 1000000000000000};
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
    if (n - 1u >= 15u || ni + n > 19) return NULL;
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
