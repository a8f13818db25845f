/* memchr for the SIMD128 module, in place of wasi-libc's. Debian's wasi-libc is built
 * without SIMD128, and its memchr (musl's, 4 bytes a step on wasm32) was 48% of
 * decodeOpenAI on a base64 body in a node --cpu-prof profile: the OpenAI decoder finds
 * each string's closing quote and then checks it for a backslash, two scans of every
 * 8 KiB embedding string (src/json/openai.cc, base64_string). Linked before libc, this
 * definition is the one every caller in the module gets (libc's object is then never
 * pulled from the archive).
 *
 * 64 bytes a step (four compares, one bitmask test), then 16, then the last bytes in one
 * load that ends at s + n (overlapping bytes already known not to match), so nothing
 * outside s[0 .. n) is read. Below 16 bytes, a byte loop. */
#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

static inline const void *at_first(const uint8_t *p, uint32_t mask) {
  return p + __builtin_ctz(mask);
}

/* no_builtin: the byte loop must not be recognised as a call to memchr (itself). */
__attribute__((no_builtin)) void *memchr(const void *src, int c, size_t n) {
  const uint8_t *p = (const uint8_t *)src;
  const uint8_t ch = (uint8_t)c;
  if (n < 16) {
    for (; n; n--, p++)
      if (*p == ch) return (void *)p;
    return NULL;
  }
  const v128_t k = wasm_i8x16_splat((int8_t)ch);
  const uint8_t *end = p + n;
  for (; end - p >= 64; p += 64) {
    const v128_t e0 = wasm_i8x16_eq(wasm_v128_load(p), k);
    const v128_t e1 = wasm_i8x16_eq(wasm_v128_load(p + 16), k);
    const v128_t e2 = wasm_i8x16_eq(wasm_v128_load(p + 32), k);
    const v128_t e3 = wasm_i8x16_eq(wasm_v128_load(p + 48), k);
    if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(e0, e1), wasm_v128_or(e2, e3)))) {
      uint32_t m = wasm_i8x16_bitmask(e0);
      if (m) return (void *)at_first(p, m);
      if ((m = wasm_i8x16_bitmask(e1))) return (void *)at_first(p + 16, m);
      if ((m = wasm_i8x16_bitmask(e2))) return (void *)at_first(p + 32, m);
      return (void *)at_first(p + 48, wasm_i8x16_bitmask(e3));
    }
  }
  for (; end - p >= 16; p += 16) {
    const uint32_t m = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(p), k));
    if (m) return (void *)at_first(p, m);
  }
  if (p == end) return NULL;
  /* The last 1..15 bytes: the 16 ending at end (n >= 16, so they are all inside; those
   * before p are known not to match). */
  const uint8_t *q = end - 16;
  const uint32_t m = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(q), k));
  return m ? (void *)at_first(q, m) : NULL;
}
