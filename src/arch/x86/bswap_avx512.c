/* bswap32 with AVX-512BW vpshufb, 4 x 64 bytes per iteration. Built with the avx512
 * family's flags. Out-of-place swaps above the last-level cache use streaming stores
 * (swap_stream).
 *
 * The last 0..63 bytes are one masked load and one masked store: masked-off bytes are
 * neither read (no fault, even next to an unmapped page) nor written, so nothing
 * outside [src, src + 4n) / [dst, dst + 4n) is touched, and the in-place case is safe
 * because every byte is loaded before its own store. */
#include <immintrin.h>

#include "internal.h"

/* The main loop of both paths, from byte i up to the last whole vector: 4 x 64 bytes an
 * iteration, then 64 at a time, each vector stored with STORE (the ordinary store, or the
 * streaming one once d + i is 64-byte aligned). Leaves bytes - i < 64. */
#define SWAP_LOOP(STORE, d, s, i, bytes, m)                                           \
  do {                                                                                \
    for (; (i) + 256 <= (bytes); (i) += 256) {                                        \
      __m512i a_ = _mm512_loadu_si512((const void *)((s) + (i)));                     \
      __m512i b_ = _mm512_loadu_si512((const void *)((s) + (i) + 64));                \
      __m512i c_ = _mm512_loadu_si512((const void *)((s) + (i) + 128));               \
      __m512i e_ = _mm512_loadu_si512((const void *)((s) + (i) + 192));               \
      STORE((void *)((d) + (i)), _mm512_shuffle_epi8(a_, (m)));                       \
      STORE((void *)((d) + (i) + 64), _mm512_shuffle_epi8(b_, (m)));                  \
      STORE((void *)((d) + (i) + 128), _mm512_shuffle_epi8(c_, (m)));                 \
      STORE((void *)((d) + (i) + 192), _mm512_shuffle_epi8(e_, (m)));                 \
    }                                                                                 \
    for (; (i) + 64 <= (bytes); (i) += 64)                                            \
      STORE((void *)((d) + (i)),                                                      \
            _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)((s) + (i))), (m))); \
  } while (0)

/* Out of place, above embd_bswap32_nt_min: as the avx2 kernel's swap_stream, with
 * 64-byte streaming stores (bytes >= 128, d word-aligned). */
static void swap_stream(uint8_t *d, const uint8_t *s, size_t bytes, __m512i m) {
  _mm512_storeu_si512((void *)d, _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)s), m));
  size_t i = (size_t)(-(uintptr_t)d & 63);
  SWAP_LOOP(_mm512_stream_si512, d, s, i, bytes, m);
  if (i < bytes)
    _mm512_storeu_si512((void *)(d + bytes - 64),
                        _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)(s + bytes - 64)), m));
  _mm_sfence();
}

void embd_bswap32_avx512(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  const size_t bytes = 4 * n;
  const __m512i m = _mm512_broadcast_i32x4(
      _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12));
  if (d != s && bytes >= 128 && ((uintptr_t)d & 3) == 0 && bytes >= embd_bswap32_nt_min()) {
    swap_stream(d, s, bytes, m);
    _mm256_zeroupper();
    return;
  }
  size_t i = 0;
  SWAP_LOOP(_mm512_storeu_si512, d, s, i, bytes, m);
  if (i < bytes) {
    const __mmask64 k = (UINT64_C(1) << (bytes - i)) - 1; /* bytes - i < 64 */
    const __m512i v = _mm512_maskz_loadu_epi8(k, (const void *)(s + i));
    _mm512_mask_storeu_epi8((void *)(d + i), k, _mm512_shuffle_epi8(v, m));
  }
  _mm256_zeroupper();
}
