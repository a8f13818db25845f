/* base64 block kernels, avx2 tier, after Muła and Lemire, "Faster Base64 Encoding and
 * Decoding Using AVX2 Instructions" (ACM TOWEB 2018). Contract: src/core/base64_driver.h.
 * The same steps as base64_sse42.c on 256-bit vectors (pshufb works per 128-bit lane):
 *
 * Decode, 32 characters -> 24 bytes per block: nibble-lookup validation, offset table by
 * high nibble, vpmaddubsw + vpmaddwd packing, vpshufb to 12 bytes per lane. Two blocks
 * per iteration, validated together with one vptest per block on the two class masks
 * (no AND needed) before anything is stored (a pair holding a bad character returns at
 * its start: the scalar loop takes over); each lane is stored as 16 bytes (12 useful),
 * so the paired loop runs only while the last store ends inside dst[0 .. n / 4 * 3).
 * Single blocks then put the lanes together with vpermd and store exactly 16 + 8 bytes;
 * the last block is the one ending at n (overlapping characters already decoded,
 * rewriting the same bytes), or for n under 32 a 128-bit block with 8 + 4.
 *
 * Encode, 24 bytes -> 32 characters per block: one 32-byte load from 4 bytes before the
 * block puts its first 12 bytes in lane 0 at offset 4 and the next 12 in lane 1 at offset
 * 0 (the first block, with nothing before it, is two 16-byte loads); vpshufb, vpmulhuw /
 * vpmullw field extraction and the vpshufb offset translation. Blocks run while the loads
 * stay inside src[0 .. n); the last block (or 128-bit block, for n under 28) is the one
 * ending at n, loaded from 4 bytes early, rewriting characters already stored: the
 * scalar loop gets nothing unless n < 16. */
#include <immintrin.h>

#include "base64_driver.h"

#define B64_INLINE static inline __attribute__((always_inline))

/* ---- decode ---- */

typedef struct {
  __m256i lut_lo, lut_hi, lut_roll, special, steer;
} b64_dec_consts;

#define B64_X2(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)

B64_INLINE b64_dec_consts b64_dec_setup(int url) {
  b64_dec_consts k;
  if (!url) {
    /* classes: 0x01 hi 0,1,8..15 (nothing valid); 0x02 hi 2 (only '+' 0x2B, '/' 0x2F);
     * 0x04 hi 3 (digits, lo 0..9); 0x08 hi 4,6 (lo 1..15); 0x10 hi 5,7 (lo 0..10). */
    k.lut_lo = B64_X2(0x0B, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x15,
                      0x17, 0x17, 0x17, 0x15);
    k.lut_hi = B64_X2(0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01, 0x01,
                      0x01, 0x01, 0x01, 0x01);
    /* index = hi nibble, minus one for '/': [1] '/', [2] '+', [3] digits, [4..7] letters */
    k.lut_roll = B64_X2(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    k.special = _mm256_set1_epi8('/');
    k.steer = _mm256_set1_epi8(-1);
  } else {
    /* classes: 0x01 as above; 0x02 hi 2 (only '-' 0x2D); 0x04 hi 3; 0x08 hi 4,6;
     * 0x10 hi 5 (lo 0..10 and '_' 0x5F); 0x20 hi 7 (lo 0..10). */
    k.lut_lo = B64_X2(0x0B, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x37,
                      0x37, 0x35, 0x37, 0x27);
    k.lut_hi = B64_X2(0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x20, 0x01, 0x01, 0x01, 0x01,
                      0x01, 0x01, 0x01, 0x01);
    /* index = hi nibble, plus 8 for '_' (slot 13, whose high nibble is never valid) */
    k.lut_roll = B64_X2(0, 0, 17, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, -32, 0, 0);
    k.special = _mm256_set1_epi8('_');
    k.steer = _mm256_set1_epi8(8);
  }
  return k;
}

/* 32 characters -> 6-bit values; *bad gets a non-zero byte where a character is outside
 * the alphabet. */
B64_INLINE __m256i b64_dec_translate(__m256i x, const b64_dec_consts *k, __m256i *bad) {
  const __m256i nib = _mm256_set1_epi8(0x0f);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(x, 4), nib);
  const __m256i lo = _mm256_and_si256(x, nib);
  *bad = _mm256_and_si256(_mm256_shuffle_epi8(k->lut_lo, lo), _mm256_shuffle_epi8(k->lut_hi, hi));
  const __m256i sp = _mm256_and_si256(_mm256_cmpeq_epi8(x, k->special), k->steer);
  return _mm256_add_epi8(x, _mm256_shuffle_epi8(k->lut_roll, _mm256_add_epi8(hi, sp)));
}

/* The same, the validation left as two class masks that must share no bit. */
B64_INLINE __m256i b64_dec_translate2(__m256i x, const b64_dec_consts *k, __m256i *lob,
                                      __m256i *hib) {
  const __m256i nib = _mm256_set1_epi8(0x0f);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(x, 4), nib);
  const __m256i lo = _mm256_and_si256(x, nib);
  *lob = _mm256_shuffle_epi8(k->lut_lo, lo);
  *hib = _mm256_shuffle_epi8(k->lut_hi, hi);
  const __m256i sp = _mm256_and_si256(_mm256_cmpeq_epi8(x, k->special), k->steer);
  return _mm256_add_epi8(x, _mm256_shuffle_epi8(k->lut_roll, _mm256_add_epi8(hi, sp)));
}

/* 32 values -> 12 bytes at the bottom of each lane. */
B64_INLINE __m256i b64_dec_pack_lanes(__m256i v) {
  const __m256i w = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
  const __m256i d = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00011000));
  return _mm256_shuffle_epi8(d, B64_X2(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1));
}

/* 32 values -> 24 bytes in the low 24 bytes. */
B64_INLINE __m256i b64_dec_pack(__m256i v) {
  const __m256i w = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
  const __m256i d = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00011000));
  const __m256i s = _mm256_shuffle_epi8(
      d, B64_X2(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1));
  return _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
}

/* The 128-bit block of base64_sse42.c, for the last 16 .. 31 characters. */
B64_INLINE __m128i b64_dec_translate128(__m128i x, const b64_dec_consts *k, __m128i *bad) {
  const __m128i nib = _mm_set1_epi8(0x0f);
  const __m128i hi = _mm_and_si128(_mm_srli_epi32(x, 4), nib);
  const __m128i lo = _mm_and_si128(x, nib);
  *bad = _mm_and_si128(_mm_shuffle_epi8(_mm256_castsi256_si128(k->lut_lo), lo),
                       _mm_shuffle_epi8(_mm256_castsi256_si128(k->lut_hi), hi));
  const __m128i sp = _mm_and_si128(_mm_cmpeq_epi8(x, _mm256_castsi256_si128(k->special)),
                                   _mm256_castsi256_si128(k->steer));
  return _mm_add_epi8(
      x, _mm_shuffle_epi8(_mm256_castsi256_si128(k->lut_roll), _mm_add_epi8(hi, sp)));
}

B64_INLINE __m128i b64_dec_pack128(__m128i v) {
  const __m128i w = _mm_maddubs_epi16(v, _mm_set1_epi32(0x01400140));
  const __m128i d = _mm_madd_epi16(w, _mm_set1_epi32(0x00011000));
  return _mm_shuffle_epi8(d, _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1,
                                           -1));
}

/* Decodes the block at src + i into dst + o: 24 bytes, stored exactly. */
B64_INLINE int b64_dec32_exact(uint8_t *d, const uint8_t *s, const b64_dec_consts *k) {
  __m256i b;
  const __m256i v = b64_dec_translate(_mm256_loadu_si256((const __m256i *)s), k, &b);
  if (!_mm256_testz_si256(b, b)) return 0;
  const __m256i p = b64_dec_pack(v);
  _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(p));
  _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(p, 1));
  return 1;
}

B64_INLINE int b64_dec16_exact(uint8_t *d, const uint8_t *s, const b64_dec_consts *k) {
  __m128i b;
  const __m128i v = b64_dec_translate128(_mm_loadu_si128((const __m128i *)s), k, &b);
  if (!_mm_testz_si128(b, b)) return 0;
  const __m128i p = b64_dec_pack128(v);
  _mm_storel_epi64((__m128i *)d, p);
  const uint32_t w = (uint32_t)_mm_extract_epi32(p, 2);
  memcpy(d + 8, &w, 4);
  return 1;
}

B64_INLINE size_t b64_dec(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  const b64_dec_consts k = b64_dec_setup(url);
  const size_t out = n / 4 * 3;
  size_t i = 0, o = 0;
  /* pairs: reads src[i .. i + 64), writes dst[o .. o + 56) */
  for (; i + 64 <= n && o + 56 <= out; i += 64, o += 48) {
    __m256i l0, h0, l1, h1;
    const __m256i v0 =
        b64_dec_translate2(_mm256_loadu_si256((const __m256i *)(src + i)), &k, &l0, &h0);
    const __m256i v1 =
        b64_dec_translate2(_mm256_loadu_si256((const __m256i *)(src + i + 32)), &k, &l1, &h1);
    if (!(_mm256_testz_si256(l0, h0) & _mm256_testz_si256(l1, h1))) return i;
    const __m256i p0 = b64_dec_pack_lanes(v0), p1 = b64_dec_pack_lanes(v1);
    _mm_storeu_si128((__m128i *)(dst + o), _mm256_castsi256_si128(p0));
    _mm_storeu_si128((__m128i *)(dst + o + 12), _mm256_extracti128_si256(p0, 1));
    _mm_storeu_si128((__m128i *)(dst + o + 24), _mm256_castsi256_si128(p1));
    _mm_storeu_si128((__m128i *)(dst + o + 36), _mm256_extracti128_si256(p1, 1));
  }
  for (; i + 32 <= n; i += 32, o += 24)
    if (!b64_dec32_exact(dst + o, src + i, &k)) return i;
  if (i == n) return i;
  /* under 32 characters left: one block ending at n, overlapping characters already
   * decoded (it rewrites the same bytes); when it holds a bad character, those before it
   * are the scalar loop's */
  if (n >= 32) return b64_dec32_exact(dst + out - 24, src + n - 32, &k) ? n : i;
  if (i + 16 <= n) {
    if (!b64_dec16_exact(dst + o, src + i, &k)) return i;
    i += 16;
  }
  if (i < n && n >= 16 && b64_dec16_exact(dst + out - 12, src + n - 16, &k)) i = n;
  return i;
}

static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  return url ? b64_dec(dst, src, n, 1) : b64_dec(dst, src, n, 0);
}

/* ---- encode ---- */

/* Per lane: 12 bytes at offset 0 or 4 -> 16 values, one per byte. */
B64_INLINE __m256i b64_enc_split(__m256i in, int shift) {
  /* shift 0: both lanes at offset 0; 4: lane 0 at 4, lane 1 at 0; 8: both at 4 */
  const __m256i x = _mm256_shuffle_epi8(
      in, shift == 0   ? B64_X2(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10)
          : shift == 4 ? _mm256_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15,
                                          14, 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10)
                       : B64_X2(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14));
  const __m256i ac = _mm256_mulhi_epu16(_mm256_and_si256(x, _mm256_set1_epi32(0x0FC0FC00)),
                                        _mm256_set1_epi32(0x04000040));
  const __m256i bd = _mm256_mullo_epi16(_mm256_and_si256(x, _mm256_set1_epi32(0x003F03F0)),
                                        _mm256_set1_epi32(0x01000010));
  return _mm256_or_si256(ac, bd);
}

B64_INLINE __m256i b64_enc_translate(__m256i v, __m256i lut) {
  const __m256i idx = _mm256_sub_epi8(_mm256_subs_epu8(v, _mm256_set1_epi8(51)),
                                      _mm256_cmpgt_epi8(v, _mm256_set1_epi8(25)));
  return _mm256_add_epi8(v, _mm256_shuffle_epi8(lut, idx));
}

/* Block at src + i (i >= 4): one 32-byte load from src + i - 4, so that lane 0 holds
 * bytes i .. i + 12 at offset 4 and lane 1 bytes i + 12 .. i + 24 at offset 0; reads
 * src[i - 4 .. i + 28). */
B64_INLINE __m256i b64_enc_block(const uint8_t *s, __m256i lut) {
  return b64_enc_translate(b64_enc_split(_mm256_loadu_si256((const __m256i *)(s - 4)), 4), lut);
}

/* Block at src + i (i >= 4) from two 16-byte loads, both 4 bytes early: reads
 * src[i - 4 .. i + 24). */
B64_INLINE __m256i b64_enc_block_exact(const uint8_t *s, __m256i lut) {
  const __m256i in =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s - 4))),
                              _mm_loadu_si128((const __m128i *)(s + 8)), 1);
  return b64_enc_translate(b64_enc_split(in, 8), lut);
}

/* 12 bytes at src + i, from a 16-byte load at src + i - 4 * shifted. */
B64_INLINE __m128i b64_enc_block128(const uint8_t *s, int shifted, __m256i lut) {
  const __m128i in = _mm_loadu_si128((const __m128i *)(s - 4 * shifted));
  return _mm256_castsi256_si128(
      b64_enc_translate(b64_enc_split(_mm256_castsi128_si256(in), shifted ? 8 : 0), lut));
}

B64_INLINE size_t b64_enc(char *dst, const uint8_t *src, size_t n, int url) {
  /* [0] 0..25, [1] 26..51, [2..11] digits, [12] 62, [13] 63 */
  const __m256i lut = url ? B64_X2(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -17, 32, 0, 0)
                          : B64_X2(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
  const size_t out = n / 3 * 4;
  size_t i = 0, o = 0;
  if (n >= 28) { /* the first block: two 16-byte loads, from src and src + 12 */
    const __m256i in =
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)src)),
                                _mm_loadu_si128((const __m128i *)(src + 12)), 1);
    _mm256_storeu_si256((__m256i *)dst, b64_enc_translate(b64_enc_split(in, 0), lut));
    i = 24, o = 32;
    for (; i + 52 <= n; i += 48, o += 64) {
      const __m256i a = b64_enc_block(src + i, lut), b = b64_enc_block(src + i + 24, lut);
      _mm256_storeu_si256((__m256i *)(dst + o), a);
      _mm256_storeu_si256((__m256i *)(dst + o + 32), b);
    }
    for (; i + 24 <= n; i += 24, o += 32)
      _mm256_storeu_si256((__m256i *)(dst + o), b64_enc_block_exact(src + i, lut));
    /* under 24 bytes left: one block ending at n, over groups already encoded */
    if (i < n)
      _mm256_storeu_si256((__m256i *)(dst + out - 32), b64_enc_block_exact(src + n - 24, lut));
    return n;
  }
  if (n < 16) return 0;
  _mm_storeu_si128((__m128i *)dst, b64_enc_block128(src, 0, lut));
  for (i = 12, o = 16; i + 12 <= n; i += 12, o += 16) /* loads from 4 bytes early */
    _mm_storeu_si128((__m128i *)(dst + o), b64_enc_block128(src + i, 1, lut));
  if (i < n) _mm_storeu_si128((__m128i *)(dst + out - 16), b64_enc_block128(src + n - 12, 1, lut));
  return n;
}

static size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  return url ? b64_enc(dst, src, n, 1) : b64_enc(dst, src, n, 0);
}

EMBD_B64_DEFINE_IMPL(avx2, dec_block, enc_block)
