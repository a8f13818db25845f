// The exact slow path of decimal.h: fast_float's from_chars<float> (Debian's
// libfast-float-dev, header-only), which rounds any decimal text once, whatever its digit
// count (a big-integer comparison decides the cases the fast algorithms cannot).
#include <fast_float/fast_float.h>

#include "decimal.h"

extern "C" void embd_decimal_f32_slow(const uint8_t *p, const uint8_t *q, float *out) {
  const char *s = reinterpret_cast<const char *>(p);
  float f = 0;
  // The text is a valid JSON number (checked by the caller), which from_chars reads whole.
  // It reports no range error in this version (an infinity or a zero comes back, the
  // correctly rounded results); later versions say result_out_of_range with the same value.
  fast_float::from_chars(s, reinterpret_cast<const char *>(q), f);
  *out = f;
}
