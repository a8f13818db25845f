/* The base64 driver every implementation shares: argument checks, the length and
 * capacity rules, padding, the last group, trailing bits and every error message live
 * here once, so that all implementations give the same result, error and offset by
 * construction. An implementation only supplies two block kernels:
 *
 *   size_t dec(uint8_t *dst, const uint8_t *src, size_t n, int url);
 *     Decodes src[0 .. n) (n a multiple of 4, no padding expected) from the start, in
 *     whole blocks of its choosing, and stops at the first block holding any character
 *     outside the alphabet ('=' included) or when fewer than a block remain. Returns the
 *     characters consumed (a multiple of 4); has written consumed / 4 * 3 bytes (and,
 *     when it stopped at a bad block, possibly scratch after them: the decode then fails).
 *     It may read only src[0 .. n) and write only dst[0 .. n / 4 * 3): vector stores that
 *     would spill past that must be masked or left to the scalar loop. It may return 0
 *     (e.g. an alphabet it does not handle): the scalar loop then does everything.
 *   size_t enc(char *dst, const uint8_t *src, size_t n, int url);
 *     Encodes whole 3-byte groups of src[0 .. n) from the start; returns the bytes
 *     consumed (a multiple of 3); has written consumed / 3 * 4 characters. May read only
 *     src[0 .. n) and write only dst[0 .. n / 3 * 4).
 *
 * The header is compiled into each kernel file (with that file's -m flags) so the
 * driver inlines the kernel; EMBD_B64_DEFINE_IMPL(name, dec, enc) defines
 * embd_base64_decode_<name> and embd_base64_encode_<name> with the public contract. */
#ifndef EMBD_BASE64_DRIVER_H
#define EMBD_BASE64_DRIVER_H

#include "base64_tables.h"
#include "embd/base64.h"
#include "internal.h"

typedef size_t (*embd_b64_dec_block)(uint8_t *dst, const uint8_t *src, size_t n, int url);
typedef size_t (*embd_b64_enc_block)(char *dst, const uint8_t *src, size_t n, int url);

/* Whole quads of valid characters; stops at the first quad holding anything else.
 * Returns the characters consumed. */
static inline size_t embd_b64_dec_scalar(uint8_t *d, const uint8_t *s, size_t n, int url) {
  const uint32_t(*t)[256] = url ? embd_b64_dec_url : embd_b64_dec_std;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  /* 16 characters -> 12 bytes. The memory-order tables put a quad's three bytes in the
   * low bytes of a uint32 (bit 31 set for anything outside the alphabet), so two quads
   * make one 8-byte store with a shift and an OR. The second store of a block covers
   * the first one's two spare bytes and spills two of its own into the next block, so
   * the loop leaves the last 4 characters to the quad loop and never writes past
   * dst[0 .. n / 4 * 3). The loop is bound by loads (two per character); this layout
   * spends the fewest other instructions around them. */
  const uint32_t(*m)[256] = url ? embd_b64_dec_mem_url : embd_b64_dec_mem_std;
  for (; i + 20 <= n; i += 16) {
    const uint8_t *p = s + i;
    const uint32_t x0 = m[0][p[0]] | m[1][p[1]] | m[2][p[2]] | m[3][p[3]];
    const uint32_t x1 = m[0][p[4]] | m[1][p[5]] | m[2][p[6]] | m[3][p[7]];
    const uint32_t x2 = m[0][p[8]] | m[1][p[9]] | m[2][p[10]] | m[3][p[11]];
    const uint32_t x3 = m[0][p[12]] | m[1][p[13]] | m[2][p[14]] | m[3][p[15]];
    if ((x0 | x1 | x2 | x3) & 0x80000000u) break;
    const uint64_t a = (uint64_t)x0 | (uint64_t)x1 << 24, b = (uint64_t)x2 | (uint64_t)x3 << 24;
    memcpy(d, &a, 8);
    memcpy(d + 6, &b, 8);
    d += 12;
  }
#else
  /* 16 characters -> 12 bytes: four quads looked up (each a 24-bit value, bit 31 set for
   * anything outside the alphabet), then stored byte by byte in big-endian order (one
   * 8-byte and one 4-byte store on a big-endian host). */
  for (; i + 16 <= n; i += 16) {
    const uint8_t *p = s + i;
    const uint32_t x0 = t[0][p[0]] | t[1][p[1]] | t[2][p[2]] | t[3][p[3]];
    const uint32_t x1 = t[0][p[4]] | t[1][p[5]] | t[2][p[6]] | t[3][p[7]];
    const uint32_t x2 = t[0][p[8]] | t[1][p[9]] | t[2][p[10]] | t[3][p[11]];
    const uint32_t x3 = t[0][p[12]] | t[1][p[13]] | t[2][p[14]] | t[3][p[15]];
    if ((x0 | x1 | x2 | x3) & 0x80000000u) break;
    const uint64_t hi = (uint64_t)x0 << 40 | (uint64_t)x1 << 16 | x2 >> 8;
    const uint32_t lo = x2 << 24 | x3;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy(d, &hi, 8);
    memcpy(d + 8, &lo, 4);
#else
    for (int k = 0; k < 8; k++) d[k] = (uint8_t)(hi >> (56 - 8 * k));
    for (int k = 0; k < 4; k++) d[8 + k] = (uint8_t)(lo >> (24 - 8 * k));
#endif
    d += 12;
  }
#endif
  for (; i + 4 <= n; i += 4) {
    const uint32_t x = t[0][s[i]] | t[1][s[i + 1]] | t[2][s[i + 2]] | t[3][s[i + 3]];
    if (x & 0x80000000u) break;
    d[0] = (uint8_t)(x >> 16), d[1] = (uint8_t)(x >> 8), d[2] = (uint8_t)x;
    d += 3;
  }
  return i;
}

static inline size_t embd_b64_enc_scalar(char *d, const uint8_t *s, size_t n, int url) {
  const uint16_t *t = url ? embd_b64_enc_url : embd_b64_enc_std;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
  /* 24 bytes -> 32 characters: three 8-byte big-endian loads (exactly the 24 bytes),
   * sixteen 12-bit indices, each a character pair copied from the table as it is laid
   * out in memory (first character first on this little-endian host). */
  for (; i + 24 <= n; i += 24) {
    uint64_t v0, v1, v2;
    memcpy(&v0, s + i, 8);
    memcpy(&v1, s + i + 8, 8);
    memcpy(&v2, s + i + 16, 8);
    v0 = __builtin_bswap64(v0), v1 = __builtin_bswap64(v1), v2 = __builtin_bswap64(v2);
    const uint64_t m = 4095;
    const uint16_t *e[16] = {
        t + (v0 >> 52),           t + (v0 >> 40 & m),       t + (v0 >> 28 & m),
        t + (v0 >> 16 & m),       t + (v0 >> 4 & m),        t + ((v0 << 8 | v1 >> 56) & m),
        t + (v1 >> 44 & m),       t + (v1 >> 32 & m),       t + (v1 >> 20 & m),
        t + (v1 >> 8 & m),        t + ((v1 << 4 | v2 >> 60) & m), t + (v2 >> 48 & m),
        t + (v2 >> 36 & m),       t + (v2 >> 24 & m),       t + (v2 >> 12 & m),
        t + (v2 & m)};
    for (int k = 0; k < 16; k++) memcpy(d + 2 * k, e[k], 2);
    d += 32;
  }
#endif
  for (; i + 3 <= n; i += 3) {
    const uint32_t x = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    const uint16_t a = t[x >> 12], b = t[x & 4095];
    d[0] = (char)(a & 255), d[1] = (char)(a >> 8), d[2] = (char)(b & 255), d[3] = (char)(b >> 8);
    d += 4;
  }
  return i;
}

static inline int embd_b64_valid(unsigned char c, int url) {
  return !(embd_b64_dec_std[0][c] & 0x80000000u) ? !url || (c != '+' && c != '/')
                                                 : url && (c == '-' || c == '_');
}

/* The error for character src[at] (known not to decode in its place). */
static inline embd_result embd_b64_char_error(const uint8_t *src, size_t at, int url,
                                              embd_error *err) {
  const unsigned char c = src[at];
  if (c == '=')
    return embd_fail(err, EMBD_ERR_BASE64_PADDING, at, "misplaced padding '=' at %zu", at);
  if (c >= 0x21 && c < 0x7f)
    return embd_fail(err, EMBD_ERR_BASE64_CHAR, at,
                     "invalid character '%c' at %zu (not in the %s alphabet)", c, at,
                     url ? "base64url" : "base64");
  return embd_fail(err, EMBD_ERR_BASE64_CHAR, at, "invalid character 0x%02x at %zu", c, at);
}

/* Step 1 (length rule) and the exact decoded size. */
static inline embd_result embd_b64_size(const uint8_t *src, size_t len, unsigned flags,
                                        size_t *size, size_t *body, embd_error *err) {
  const size_t r = len % 4;
  if ((!(flags & EMBD_BASE64_NOPAD) && r) || r == 1)
    return embd_fail(err, EMBD_ERR_BASE64_LENGTH, len,
                     "base64 length %zu is not a multiple of 4%s", len,
                     (flags & EMBD_BASE64_NOPAD) ? " and leaves a single character" : "");
  if (len == 0) {
    *size = *body = 0;
    return EMBD_OK;
  }
  const size_t last = r ? r : 4; /* characters in the final group */
  size_t pads = 0;
  while (pads < 2 && pads < last && src[len - 1 - pads] == '=') pads++;
  /* A final group of 4 characters without '=' follows no rule of its own: it joins the
   * body (the block kernels decode it; the first bad character is found the same way). */
  *body = r == 0 && pads == 0 ? len : len - last;
  *size = (len - last) / 4 * 3 + (last - pads > 1 ? last - pads - 1 : 0);
  return EMBD_OK;
}

/* Validates and decodes the final group g[0 .. t) at offset `at` into d. */
static inline embd_result embd_b64_last(const uint8_t *g, size_t t, size_t at, int url,
                                        uint8_t *d, embd_error *err) {
  const uint32_t(*tab)[256] = url ? embd_b64_dec_url : embd_b64_dec_std;
  size_t pad_at = 0, data = t;
  int pad = 0;
  for (size_t i = 0; i < t; i++) {
    const unsigned char c = g[i];
    if (c == '=') {
      if (i < 2) return embd_b64_char_error(g - at, at + i, url, err);
      if (!pad) pad = 1, pad_at = i, data = i;
      continue;
    }
    if (pad) return embd_b64_char_error(g - at, at + pad_at, url, err);
    if (!embd_b64_valid(c, url)) return embd_b64_char_error(g - at, at + i, url, err);
  }
  if (pad && t != 4)
    return embd_fail(err, EMBD_ERR_BASE64_PADDING, at + pad_at,
                     "partial padding at %zu: the final group has %zu characters, not 4",
                     at + pad_at, t);
  uint32_t x = 0;
  for (size_t i = 0; i < data; i++) x |= tab[i][g[i]];
  if (data == 2 && (x & 0xFFFF)) {
    return embd_fail(err, EMBD_ERR_BASE64_TRAILING_BITS, at + 1,
                     "non-zero trailing bits in '%c' at %zu (the last of 2 characters)", g[1],
                     at + 1);
  }
  if (data == 3 && (x & 0xFF)) {
    return embd_fail(err, EMBD_ERR_BASE64_TRAILING_BITS, at + 2,
                     "non-zero trailing bits in '%c' at %zu (the last of 3 characters)", g[2],
                     at + 2);
  }
  d[0] = (uint8_t)(x >> 16);
  if (data > 2) d[1] = (uint8_t)(x >> 8);
  if (data > 3) d[2] = (uint8_t)x;
  return EMBD_OK;
}


static inline embd_result embd_b64_decode_with(embd_b64_dec_block blk, const char *src_,
                                               size_t len, unsigned flags, void *dst_,
                                               size_t cap, size_t *written, embd_error *err) {
  const uint8_t *src = (const uint8_t *)src_;
  uint8_t *dst = (uint8_t *)dst_;
  if (written) *written = 0;
  if ((!src && len) || (flags & ~EMBD_BASE64_KNOWN_FLAGS))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     src || !len ? "unknown flags 0x%x" : "NULL input (flags 0x%x)", flags);
  size_t size = 0, body = 0;
  embd_result r = embd_b64_size(src, len, flags, &size, &body, err);
  if (r != EMBD_OK) return r;
  if (size > cap || (!dst && size)) {
    if (written) *written = size; /* the bytes needed */
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0,
                     "output too small: %zu bytes decoded, capacity %zu", size, cap);
  }
  if (len == 0) { /* the only input that decodes to nothing: dst may be NULL */
    embd_no_error(err);
    return EMBD_OK;
  }
  const int url = (flags & EMBD_BASE64_URL) != 0;
  size_t i = blk ? blk(dst, src, body, url) : 0;
  if (i < body) { /* skipped when the kernel took the whole body, as it mostly does */
    i += embd_b64_dec_scalar(dst + i / 4 * 3, src + i, body - i, url);
    if (i < body) {
      for (size_t k = 0;; k++)
        if (!embd_b64_valid(src[i + k], url)) return embd_b64_char_error(src, i + k, url, err);
    }
  }
  if (len > body) {
    r = embd_b64_last(src + body, len - body, body, url, dst + body / 4 * 3, err);
    if (r != EMBD_OK) return r;
  }
  if (written) *written = size;
  embd_no_error(err);
  return EMBD_OK;
}

static inline embd_result embd_b64_encoded_size(size_t n, unsigned flags, size_t *size) {
  if (flags & ~EMBD_BASE64_KNOWN_FLAGS) return EMBD_ERR_INVALID_ARGUMENT;
  const size_t groups = n / 3, r = n % 3;
  if (groups > (SIZE_MAX - 4) / 4) return EMBD_ERR_INVALID_ARGUMENT;
  *size = groups * 4 + (r ? ((flags & EMBD_BASE64_NOPAD) ? r + 1 : 4) : 0);
  return EMBD_OK;
}

static inline embd_result embd_b64_encode_with(embd_b64_enc_block blk, const void *src_,
                                               size_t n, unsigned flags, char *dst,
                                               size_t cap, size_t *written) {
  const uint8_t *src = (const uint8_t *)src_;
  if (written) *written = 0;
  size_t size;
  if ((!src && n) || embd_b64_encoded_size(n, flags, &size) != EMBD_OK)
    return EMBD_ERR_INVALID_ARGUMENT;
  if (size > cap || (!dst && size)) {
    if (written) *written = size; /* the characters needed */
    return EMBD_ERR_OUTPUT_TOO_SMALL;
  }
  if (n == 0) return EMBD_OK; /* src and dst may be NULL */
  const int url = (flags & EMBD_BASE64_URL) != 0;
  const uint16_t *t = url ? embd_b64_enc_url : embd_b64_enc_std;
  const size_t whole = n - n % 3;
  size_t i = blk ? blk(dst, src, whole, url) : 0;
  if (i < whole) i += embd_b64_enc_scalar(dst + i / 3 * 4, src + i, whole - i, url);
  if (n > whole) {
    char *d = dst + whole / 3 * 4;
    const uint32_t w = (uint32_t)src[whole] << 16 | (n - whole > 1 ? (uint32_t)src[whole + 1] << 8 : 0);
    const uint16_t a = t[w >> 12], b = t[w & 4095];
    d[0] = (char)(a & 255), d[1] = (char)(a >> 8);
    size_t k = 2;
    if (n - whole > 1) d[k++] = (char)(b & 255);
    if (!(flags & EMBD_BASE64_NOPAD))
      while (k < 4) d[k++] = '=';
  }
  if (written) *written = size;
  return EMBD_OK;
}

#define EMBD_B64_DEFINE_IMPL(name, dec, enc)                                                   \
  embd_result embd_base64_decode_##name(const char *src, size_t len, unsigned flags, void *dst, \
                                        size_t cap, size_t *written, embd_error *err) {         \
    return embd_b64_decode_with(dec, src, len, flags, dst, cap, written, err);                  \
  }                                                                                             \
  embd_result embd_base64_encode_##name(const void *src, size_t n, unsigned flags, char *dst,   \
                                        size_t cap, size_t *written) {                          \
    return embd_b64_encode_with(enc, src, n, flags, dst, cap, written);                         \
  }

#endif
