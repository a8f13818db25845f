/* bswap32 with SSSE3 pshufb, 4 x 16 bytes per iteration. Built with the sse42 family's
 * flags. Out-of-place swaps above the last-level cache use streaming stores (swap_stream).
 *
 * The tail is one overlapping 16-byte vector ending at the last word. It is loaded
 * before anything is stored, so the in-place case (dst == src) never re-reads a word
 * that was already swapped. */
#include <immintrin.h>

#include "internal.h"

/* The main loop of both paths, from byte i up to the last whole vector: 4 x 16 bytes an
 * iteration, then 16 at a time, each vector stored with STORE (the ordinary store, or the
 * streaming one once d + i is 16-byte aligned). Leaves bytes - i < 16. */
#define SWAP_LOOP(STORE, d, s, i, bytes, m)                                        \
  do {                                                                             \
    for (; (i) + 64 <= (bytes); (i) += 64) {                                       \
      __m128i a_ = _mm_loadu_si128((const __m128i *)((s) + (i)));                  \
      __m128i b_ = _mm_loadu_si128((const __m128i *)((s) + (i) + 16));             \
      __m128i c_ = _mm_loadu_si128((const __m128i *)((s) + (i) + 32));             \
      __m128i e_ = _mm_loadu_si128((const __m128i *)((s) + (i) + 48));             \
      STORE((__m128i *)((d) + (i)), _mm_shuffle_epi8(a_, (m)));                    \
      STORE((__m128i *)((d) + (i) + 16), _mm_shuffle_epi8(b_, (m)));               \
      STORE((__m128i *)((d) + (i) + 32), _mm_shuffle_epi8(c_, (m)));               \
      STORE((__m128i *)((d) + (i) + 48), _mm_shuffle_epi8(e_, (m)));               \
    }                                                                              \
    for (; (i) + 16 <= (bytes); (i) += 16)                                         \
      STORE((__m128i *)((d) + (i)),                                                \
            _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((s) + (i))), (m))); \
  } while (0)

/* Out of place, above embd_bswap32_nt_min: as the avx2 kernel's swap_stream, with
 * 16-byte streaming stores (bytes >= 32, d word-aligned). */
static void swap_stream(uint8_t *d, const uint8_t *s, size_t bytes, __m128i m) {
  _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)s), m));
  size_t i = (size_t)(-(uintptr_t)d & 15);
  SWAP_LOOP(_mm_stream_si128, d, s, i, bytes, m);
  if (i < bytes)
    _mm_storeu_si128((__m128i *)(d + bytes - 16),
                     _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(s + bytes - 16)), m));
  _mm_sfence();
}

void embd_bswap32_ssse3(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  const size_t bytes = 4 * n;
  if (bytes < 16) {
    embd_bswap32_words(d, s, n);
    return;
  }
  const __m128i m = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  if (d != s && bytes >= 32 && ((uintptr_t)d & 3) == 0 && bytes >= embd_bswap32_nt_min()) {
    swap_stream(d, s, bytes, m);
    return;
  }
  const __m128i tail = _mm_loadu_si128((const __m128i *)(s + bytes - 16));
  size_t i = 0;
  SWAP_LOOP(_mm_storeu_si128, d, s, i, bytes, m);
  if (i < bytes) _mm_storeu_si128((__m128i *)(d + bytes - 16), _mm_shuffle_epi8(tail, m));
}

/* The identity kernel of this tier (copy_kernel.h): SSE2 moves, 16-byte aligned stores. */
#define CP_NAME embd_copy_sse2
#define CP_VEC __m128i
#define CP_W 16
#define CP_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define CP_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define CP_STORE_A(p, v) _mm_store_si128((__m128i *)(void *)(p), (v))
#include "copy_kernel.h"
