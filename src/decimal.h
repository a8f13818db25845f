/* A JSON number's text -> the float32 nearest it, rounded once (round to nearest, ties to
 * even), at any digit count and exponent. Not installed.
 *
 * Fast path (the numbers embedding servers print: at most 19 significant digits and a
 * decimal exponent within +-22): the significand w < 2^53 and 10^|e| are exact doubles,
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

/* The number at p (its first byte); returns the position after it and sets *out, or NULL
 * with the fault recorded in j (not a number, or a grammar fault). */
static inline const uint8_t *embd_decimal_f32(embd_json *j, const uint8_t *p, float *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const uint8_t *end = j->end, *s = p;
  int neg = 0;
  if (p < end && *p == '-') neg = 1, p++;
  uint64_t w = 0;
  int nd = 0;       /* significant digits taken into w */
  int dropped = 0;  /* digits beyond the 19 that w holds: the slow path decides */
  int64_t e10 = 0;
  if (!embd_dec_digit(p, end)) {
    if (p >= end) return embd_json_fault(j, end, "the text ends inside a number");
    return embd_json_fault(j, p, neg ? "'-' without digits after it" : "not a number");
  }
  if (*p == '0') {
    p++;
    if (embd_dec_digit(p, end)) return embd_json_fault(j, p - 1, "a number with a leading zero");
  } else {
    do {
      if (nd < 19) w = w * 10 + (uint64_t)(*p - '0'), nd++;
      else dropped = 1, e10++;
      p++;
    } while (embd_dec_digit(p, end));
  }
  if (p < end && *p == '.') {
    p++;
    if (!embd_dec_digit(p, end))
      return embd_json_fault(j, p, p < end ? "no digit after a decimal point" : "the text ends inside a number");
    do {
      unsigned d = (unsigned)(*p - '0');
      if (nd < 19) {
        if (w || d) w = w * 10 + d, nd++;  /* leading zeros are not significant */
        e10--;
      } else {
        dropped = 1;
      }
      p++;
    } while (embd_dec_digit(p, end));
  }
  if (p < end && (*p | 0x20) == 'e') {
    p++;
    int eneg = 0;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p == '-', p++;
    if (!embd_dec_digit(p, end))
      return embd_json_fault(j, p, p < end ? "no digit in a number's exponent" : "the text ends inside a number");
    int64_t x = 0;
    do {
      if (x < 100000000) x = x * 10 + (*p - '0');  /* far beyond any float: saturate */
      p++;
    } while (embd_dec_digit(p, end));
    e10 += eneg ? -x : x;
  }
  if (w == 0 && !dropped) {
    *out = neg ? -0.0f : 0.0f;
    return p;
  }
  if (!dropped && w <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
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
  embd_decimal_f32_slow(s, p, out);
  return p;
}

#endif
