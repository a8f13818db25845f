/* bswap32 with SSSE3 pshufb, 4 x 16 bytes per iteration. Built with the sse42 family's
 * flags. Out-of-place swaps above the last-level cache use streaming stores (swap_stream).
 *
 * The tail is one overlapping 16-byte vector ending at the last word. It is loaded
 * before anything is stored, so the in-place case (dst == src) never re-reads a word
 * that was already swapped. */
#include <immintrin.h>

#include "internal.h"

#define BS_VEC __m128i
#define BS_W 16
#define BS_LOAD(p) _mm_loadu_si128((const __m128i *)(p))
#define BS_PTR(p) (__m128i *)(p)
#define BS_STOREU _mm_storeu_si128
#define BS_STREAM _mm_stream_si128
#define BS_SHUF _mm_shuffle_epi8
#include "bswap_x86_template.h"

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
  SWAP_LOOP(BS_STOREU, d, s, i, bytes, m);
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
