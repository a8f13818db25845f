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

#include "json_strict.h"

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

/* Eight ASCII digits at p (8 readable bytes) as their value in *v, or 0 if not all eight
 * are digits. SWAR: the bytes as one little-endian word, the digit test on every byte at
 * once, then pairs, quads and the two halves combined by multiplies (Lemire's method). */
static inline int embd_dec_eight(const uint8_t *p, uint64_t *v) {
  uint64_t x;
  memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  x = __builtin_bswap64(x);
#endif
  /* A byte is a digit iff it is >= '0' and adding 0x46 does not carry into bit 7. */
  if ((((x + UINT64_C(0x4646464646464646)) | (x - UINT64_C(0x3030303030303030))) &
       UINT64_C(0x8080808080808080)) != 0)
    return 0;
  x -= UINT64_C(0x3030303030303030);
  x = x * 10 + (x >> 8); /* pairs in bytes 0, 2, 4, 6 */
  x = (((x & UINT64_C(0x000000FF000000FF)) * (100 + (UINT64_C(1000000) << 32))) +
       (((x >> 16) & UINT64_C(0x000000FF000000FF)) * (1 + (UINT64_C(10000) << 32)))) >> 32;
  *v = x;
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

/* The number at p (its first byte); returns the position after it and sets *out, or NULL
 * with the fault recorded in j (not a number, or a grammar fault). */
static inline const uint8_t *embd_decimal_f32(embd_json *j, const uint8_t *p, float *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
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
  if (__builtin_expect(nd <= 19, 1)) {
    if (w == 0) {
      *out = neg ? -0.0f : 0.0f;
      return p;
    }
    if (w <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
      double d = (double)w;
      d = e10 < 0 ? d / p10[-e10] : d * p10[e10];
      /* d >= 1e-22 here: a normal float, whose dropped 29 bits are 1000...0 on a midpoint. */
      uint64_t b;
      memcpy(&b, &d, 8);
      if ((b & 0x1FFFFFFFu) != 0x10000000u) {
        float f = (float)d;
        *out = neg ? -f : f;
        return p;
      }
    }
  }
  embd_decimal_f32_slow(s, p, out);
  return p;
}

#endif
