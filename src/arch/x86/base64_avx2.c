/* base64 block kernels, avx2 tier, after Muła and Lemire, "Faster Base64 Encoding and
 * Decoding Using AVX2 Instructions" (ACM TOWEB 2018). Contract: src/base64_driver.h.
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
 * scalar loop gets nothing unless n < 16. Inputs under one block (32 characters, 28
 * bytes) take base64_sse42.c's 128-bit loops.
 *
 * The steps (both widths) and the 128-bit loops are in base64_x86_template.h, shared
 * with base64_sse42.c; this file compiles them with the avx2 tier's flags. */
#define B64_W 128
#include "base64_x86_template.h"
#define B64_W 256
#include "base64_x86_template.h"

/* ---- decode ---- */

/* 32 values -> 24 bytes in the low 24 bytes. */
B64_INLINE __m256i b64_dec_pack24(__m256i v) {
  return _mm256_permutevar8x32_epi32(b64_dec_pack_256(v),
                                     _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
}

/* Decodes the 32 characters at s into exactly 24 bytes at d; 0 (nothing stored) when
 * they hold a character outside the alphabet. */
B64_INLINE int b64_dec32_exact(uint8_t *d, const uint8_t *s, const b64_dec_consts_256 *k) {
  __m256i l, h;
  const __m256i v = b64_dec_translate_256(_mm256_loadu_si256((const __m256i *)s), k, &l, &h);
  if (!_mm256_testz_si256(l, h)) return 0;
  const __m256i p = b64_dec_pack24(v);
  _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(p));
  _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(p, 1));
  return 1;
}

B64_INLINE size_t b64_dec(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  if (n < 32) return b64_dec_128(dst, src, n, url);
  const b64_dec_consts_256 k = b64_dec_setup_256(url);
  const size_t out = n / 4 * 3;
  int bad;
  size_t i = b64_dec_pairs_256(dst, src, n, out, &k, &bad), o = i / 4 * 3;
  if (bad) return i;
  for (; i + 32 <= n; i += 32, o += 24)
    if (!b64_dec32_exact(dst + o, src + i, &k)) return i;
  if (i == n) return i;
  /* under 32 characters left: one block ending at n, overlapping characters already
   * decoded (it rewrites the same bytes); when it holds a bad character, those before it
   * are the scalar loop's */
  return b64_dec32_exact(dst + out - 24, src + n - 32, &k) ? n : i;
}

/* ---- encode ---- */

/* Block at src + i (i >= 4): one 32-byte load from src + i - 4, so that lane 0 holds
 * bytes i .. i + 12 at offset 4 and lane 1 bytes i + 12 .. i + 24 at offset 0; reads
 * src[i - 4 .. i + 28). */
B64_INLINE __m256i b64_enc_block(const uint8_t *s, __m256i lut) {
  const __m256i in = _mm256_loadu_si256((const __m256i *)(s - 4));
  return b64_enc_translate_256(
      b64_enc_split_256(in, _mm256_setr_epi8(B64_ENC_AT4, B64_ENC_AT0)), lut);
}

/* Block at src + i (i >= 4) from two 16-byte loads, both 4 bytes early: reads
 * src[i - 4 .. i + 24). */
B64_INLINE __m256i b64_enc_block_exact(const uint8_t *s, __m256i lut) {
  const __m256i in =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s - 4))),
                              _mm_loadu_si128((const __m128i *)(s + 8)), 1);
  return b64_enc_translate_256(
      b64_enc_split_256(in, _mm256_setr_epi8(B64_ENC_AT4, B64_ENC_AT4)), lut);
}

B64_INLINE size_t b64_enc(char *dst, const uint8_t *src, size_t n, int url) {
  if (n < 28) return b64_enc_128(dst, src, n, url);
  const __m256i lut = b64_enc_lut_256(url);
  const size_t out = n / 3 * 4;
  /* the first block: two 16-byte loads, from src and src + 12 */
  const __m256i in =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)src)),
                              _mm_loadu_si128((const __m128i *)(src + 12)), 1);
  const __m256i at0 = _mm256_setr_epi8(B64_ENC_AT0, B64_ENC_AT0);
  _mm256_storeu_si256((__m256i *)dst, b64_enc_translate_256(b64_enc_split_256(in, at0), lut));
  size_t i = 24, o = 32;
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

B64_X86_IMPL(avx2, b64_dec, b64_enc)
