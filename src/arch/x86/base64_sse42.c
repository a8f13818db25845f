/* base64 block kernels, sse42 tier (SSSE3/SSE4.1 instructions, 128-bit), after Muła and
 * Lemire, "Faster Base64 Encoding and Decoding Using AVX2 Instructions" (ACM TOWEB 2018).
 * Contract: src/core/base64_driver.h.
 *
 * Decode, 16 characters -> 12 bytes per block:
 *   validation: two pshufb lookups, by low and by high nibble, of class bit masks; a
 *     character is outside the alphabet iff the two masks share a bit (ptest);
 *   translation: pshufb of an offset table by high nibble, the one character whose high
 *     nibble is shared with a different offset ('/' standard, '_' URL) steered to a spare
 *     table slot by a compare;
 *   packing: pmaddubsw (a * 64 + b, c * 64 + d), pmaddwd (into 24 bits per dword),
 *     pshufb compaction of 4 x 3 bytes into the low 12.
 * Two blocks per iteration, validated together (ptest of the two masks, no AND needed)
 * before anything is stored; a pair holding a bad character returns at its start and the
 * driver's scalar loop takes over there. The 16-byte stores carry 12 useful bytes: the
 * paired loop runs only while the second store ends inside dst[0 .. n / 4 * 3); the last
 * blocks store exactly 8 + 4 bytes, the very last being the one that ends at n
 * (overlapping characters already decoded, rewriting the same bytes).
 *
 * Encode, 12 bytes -> 16 characters per block: pshufb into (s1 s0 s2 s1) per dword,
 * pmulhuw / pmullw to move the four 6-bit fields into their bytes, then the offset
 * translation by pshufb (index: saturating v - 51, plus one for v >= 26). Loads are 16
 * bytes for 12 used: the first block loads from src, every later one from 4 bytes before
 * it (the used bytes at offset 4), so no load passes the block's end; the last block is
 * the one ending at n, rewriting characters already stored. n < 16 is the scalar loop's. */
#include <immintrin.h>

#include "base64_driver.h"

#define B64_INLINE static inline __attribute__((always_inline))

/* ---- decode ---- */

typedef struct {
  __m128i lut_lo, lut_hi, lut_roll, special, steer;
} b64_dec_consts;

B64_INLINE b64_dec_consts b64_dec_setup(int url) {
  b64_dec_consts k;
  if (!url) {
    /* classes: 0x01 hi 0,1,8..15 (nothing valid); 0x02 hi 2 (only '+' 0x2B, '/' 0x2F);
     * 0x04 hi 3 (digits, lo 0..9); 0x08 hi 4,6 (lo 1..15); 0x10 hi 5,7 (lo 0..10). */
    k.lut_lo = _mm_setr_epi8(0x0B, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07,
                             0x15, 0x17, 0x17, 0x17, 0x15);
    k.lut_hi = _mm_setr_epi8(0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01,
                             0x01, 0x01, 0x01, 0x01, 0x01);
    /* index = hi nibble, minus one for '/': [1] '/', [2] '+', [3] digits, [4..7] letters */
    k.lut_roll = _mm_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    k.special = _mm_set1_epi8('/');
    k.steer = _mm_set1_epi8(-1);
  } else {
    /* classes: 0x01 as above; 0x02 hi 2 (only '-' 0x2D); 0x04 hi 3; 0x08 hi 4,6;
     * 0x10 hi 5 (lo 0..10 and '_' 0x5F); 0x20 hi 7 (lo 0..10). */
    k.lut_lo = _mm_setr_epi8(0x0B, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07,
                             0x37, 0x37, 0x35, 0x37, 0x27);
    k.lut_hi = _mm_setr_epi8(0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x20, 0x01, 0x01, 0x01,
                             0x01, 0x01, 0x01, 0x01, 0x01);
    /* index = hi nibble, plus 8 for '_' (slot 13, whose high nibble is never valid) */
    k.lut_roll = _mm_setr_epi8(0, 0, 17, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, -32, 0, 0);
    k.special = _mm_set1_epi8('_');
    k.steer = _mm_set1_epi8(8);
  }
  return k;
}

/* Translates 16 characters into 6-bit values; *lob and *hib get class masks by low and
 * high nibble, which share a bit exactly where a character is outside the alphabet. */
B64_INLINE __m128i b64_dec_translate(__m128i x, const b64_dec_consts *k, __m128i *lob,
                                     __m128i *hib) {
  const __m128i nib = _mm_set1_epi8(0x0f);
  const __m128i hi = _mm_and_si128(_mm_srli_epi32(x, 4), nib);
  const __m128i lo = _mm_and_si128(x, nib);
  *lob = _mm_shuffle_epi8(k->lut_lo, lo);
  *hib = _mm_shuffle_epi8(k->lut_hi, hi);
  const __m128i sp = _mm_and_si128(_mm_cmpeq_epi8(x, k->special), k->steer);
  return _mm_add_epi8(x, _mm_shuffle_epi8(k->lut_roll, _mm_add_epi8(hi, sp)));
}

/* 16 values (4 per dword, first character first) -> 12 bytes in the low lanes. */
B64_INLINE __m128i b64_dec_pack(__m128i v) {
  const __m128i w = _mm_maddubs_epi16(v, _mm_set1_epi32(0x01400140));
  const __m128i d = _mm_madd_epi16(w, _mm_set1_epi32(0x00011000));
  return _mm_shuffle_epi8(d, _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1,
                                           -1));
}

/* Decodes 16 characters at s into exactly 12 bytes at d; 0 (nothing stored) when they
 * hold a character outside the alphabet. */
B64_INLINE int b64_dec16_exact(uint8_t *d, const uint8_t *s, const b64_dec_consts *k) {
  __m128i l, h;
  const __m128i v = b64_dec_translate(_mm_loadu_si128((const __m128i *)s), k, &l, &h);
  if (!_mm_testz_si128(l, h)) return 0;
  const __m128i p = b64_dec_pack(v);
  _mm_storel_epi64((__m128i *)d, p);
  const uint32_t w = (uint32_t)_mm_extract_epi32(p, 2);
  memcpy(d + 8, &w, 4);
  return 1;
}

B64_INLINE size_t b64_dec(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  const b64_dec_consts k = b64_dec_setup(url);
  const size_t out = n / 4 * 3;
  size_t i = 0, o = 0;
  /* pairs: reads src[i .. i + 32), writes dst[o .. o + 28) */
  for (; i + 32 <= n && o + 28 <= out; i += 32, o += 24) {
    __m128i l0, h0, l1, h1;
    const __m128i v0 =
        b64_dec_translate(_mm_loadu_si128((const __m128i *)(src + i)), &k, &l0, &h0);
    const __m128i v1 =
        b64_dec_translate(_mm_loadu_si128((const __m128i *)(src + i + 16)), &k, &l1, &h1);
    const __m128i bad = _mm_or_si128(_mm_and_si128(l0, h0), _mm_and_si128(l1, h1));
    if (!_mm_testz_si128(bad, bad)) return i;
    _mm_storeu_si128((__m128i *)(dst + o), b64_dec_pack(v0));
    _mm_storeu_si128((__m128i *)(dst + o + 12), b64_dec_pack(v1));
  }
  for (; i + 16 <= n; i += 16, o += 12)
    if (!b64_dec16_exact(dst + o, src + i, &k)) return i;
  /* under 16 characters left: the block ending at n, over characters already decoded
   * (it rewrites the same bytes); when it holds a bad character, the scalar loop takes
   * the characters before it */
  if (i < n && n >= 16 && b64_dec16_exact(dst + out - 12, src + n - 16, &k)) i = n;
  return i;
}

static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  return url ? b64_dec(dst, src, n, 1) : b64_dec(dst, src, n, 0);
}

/* ---- encode ---- */

/* 12 bytes at offset 0 (shifted 0) or 4 (shifted 1) of `in` -> 16 values, one per byte. */
B64_INLINE __m128i b64_enc_split(__m128i in, int shifted) {
  const __m128i x = _mm_shuffle_epi8(
      in, shifted ? _mm_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14)
                  : _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10));
  const __m128i ac = _mm_mulhi_epu16(_mm_and_si128(x, _mm_set1_epi32(0x0FC0FC00)),
                                     _mm_set1_epi32(0x04000040));
  const __m128i bd = _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi32(0x003F03F0)),
                                     _mm_set1_epi32(0x01000010));
  return _mm_or_si128(ac, bd);
}

B64_INLINE __m128i b64_enc_translate(__m128i v, __m128i lut) {
  const __m128i idx =
      _mm_sub_epi8(_mm_subs_epu8(v, _mm_set1_epi8(51)), _mm_cmpgt_epi8(v, _mm_set1_epi8(25)));
  return _mm_add_epi8(v, _mm_shuffle_epi8(lut, idx));
}

/* The 12 bytes at s -> 16 characters; shifted: loaded from s - 4 (reads s[-4 .. 12)),
 * otherwise from s (reads s[0 .. 16)). */
B64_INLINE __m128i b64_enc_block(const uint8_t *s, int shifted, __m128i lut) {
  const __m128i in = _mm_loadu_si128((const __m128i *)(s - 4 * shifted));
  return b64_enc_translate(b64_enc_split(in, shifted), lut);
}

B64_INLINE size_t b64_enc(char *dst, const uint8_t *src, size_t n, int url) {
  /* [0] 0..25, [1] 26..51, [2..11] digits, [12] 62, [13] 63 */
  const __m128i lut = url ? _mm_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -17,
                                          32, 0, 0)
                          : _mm_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19,
                                          -16, 0, 0);
  const size_t out = n / 3 * 4;
  if (n < 16) return 0;
  _mm_storeu_si128((__m128i *)dst, b64_enc_block(src, 0, lut));
  size_t i = 12, o = 16; /* every later block is loaded from 4 bytes early */
  for (; i + 24 <= n; i += 24, o += 32) {
    const __m128i a = b64_enc_block(src + i, 1, lut), b = b64_enc_block(src + i + 12, 1, lut);
    _mm_storeu_si128((__m128i *)(dst + o), a);
    _mm_storeu_si128((__m128i *)(dst + o + 16), b);
  }
  if (i + 12 <= n) {
    _mm_storeu_si128((__m128i *)(dst + o), b64_enc_block(src + i, 1, lut));
    i += 12;
  }
  /* under 12 bytes left: the block ending at n, over groups already encoded */
  if (i < n) _mm_storeu_si128((__m128i *)(dst + out - 16), b64_enc_block(src + n - 12, 1, lut));
  return n;
}

static size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  return url ? b64_enc(dst, src, n, 1) : b64_enc(dst, src, n, 0);
}

EMBD_B64_DEFINE_IMPL(sse42, dec_block, enc_block)
