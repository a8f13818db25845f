/* bswap32 with AVX2 vpshufb, 4 x 32 bytes per iteration. Built with the avx2 family's
 * flags. Out-of-place swaps above the last-level cache use streaming stores (swap_stream).
 *
 * Tails: one overlapping 32-byte vector ending at the last word (or, for 16..31 bytes,
 * two overlapping 16-byte ones), loaded before anything is stored so that the in-place
 * case (dst == src) never re-reads a word that was already swapped. */
#include <immintrin.h>

#include "internal.h"

#define BS_VEC __m256i
#define BS_W 32
#define BS_LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define BS_PTR(p) (__m256i *)(p)
#define BS_STOREU _mm256_storeu_si256
#define BS_STREAM _mm256_stream_si256
#define BS_SHUF _mm256_shuffle_epi8
#include "bswap_x86_template.h"

void embd_bswap32_avx2(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  const size_t bytes = 4 * n;
  const __m128i m16 = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  if (bytes < 32) {
    if (bytes < 16) {
      embd_bswap32_words(d, s, n);
      return;
    }
    const __m128i a = _mm_loadu_si128((const __m128i *)s);
    const __m128i b = _mm_loadu_si128((const __m128i *)(s + bytes - 16));
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(a, m16));
    _mm_storeu_si128((__m128i *)(d + bytes - 16), _mm_shuffle_epi8(b, m16));
    return;
  }
  const __m256i m = _mm256_broadcastsi128_si256(m16);
  if (d != s && bytes >= 64 && ((uintptr_t)d & 3) == 0 && bytes >= embd_bswap32_nt_min()) {
    swap_stream(d, s, bytes, m);
    _mm256_zeroupper();
    return;
  }
  const __m256i tail = _mm256_loadu_si256((const __m256i *)(s + bytes - 32));
  size_t i = 0;
  SWAP_LOOP(BS_STOREU, d, s, i, bytes, m);
  if (i < bytes) _mm256_storeu_si256((__m256i *)(d + bytes - 32), _mm256_shuffle_epi8(tail, m));
  _mm256_zeroupper();
}

/* The identity kernel of this tier (copy_kernel.h): 32-byte moves, aligned stores. The
 * avx512 tier uses it too: 64-byte stores gain nothing on the AVX-512 CPUs that have the
 * rep-movsb cliff (Zen 4 splits them in two), and this one is tested on AVX2 machines. */
#define CP_NAME embd_copy_avx2
#define CP_VEC __m256i
#define CP_W 32
#define CP_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define CP_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define CP_STORE_A(p, v) _mm256_store_si256((__m256i *)(void *)(p), (v))
#define CP_END() _mm256_zeroupper()
#include "copy_kernel.h"
