/* bswap32 with AVX-512BW vpshufb, 4 x 64 bytes per iteration. Built with the avx512
 * family's flags. Out-of-place swaps above the last-level cache use streaming stores
 * (swap_stream).
 *
 * The last 0..63 bytes are one masked load and one masked store (kept on the pages of
 * their own bytes near a page boundary: avx512_masked_mem.h): masked-off bytes are
 * neither read (no fault, even next to an unmapped page) nor written, so nothing
 * outside [src, src + 4n) / [dst, dst + 4n) is touched, and the in-place case is safe
 * because every byte is loaded before its own store. */
#include <immintrin.h>

#include "avx512_masked_mem.h"
#include "internal.h"

#define BS_VEC __m512i
#define BS_W 64
#define BS_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define BS_PTR(p) (void *)(p)
#define BS_STOREU _mm512_storeu_si512
#define BS_STREAM _mm512_stream_si512
#define BS_SHUF _mm512_shuffle_epi8
#include "bswap_x86_template.h"

/* The body, compiled twice: with plain masked accesses for the last 0..63 bytes (edge 0),
 * and with page-keeping ones (edge 1, avx512_masked_mem.h) for the calls whose src or
 * dst ends near a page boundary, which the public function sends there first thing (a
 * tail call: deciding at the tail instead gave the function three more saved registers
 * and 25 words 2.6 -> 3.5 ns). */
static inline __attribute__((always_inline)) void bswap_body(void *dst, const void *src,
                                                             size_t n, const int edge) {
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
  SWAP_LOOP(BS_STOREU, d, s, i, bytes, m);
  if (i < bytes) {
    const __mmask64 k = (UINT64_C(1) << (bytes - i)) - 1; /* bytes - i < 64 */
    const __m512i v = EMBD_AVX512_MASKZ_LOADU(edge, k, s + i);
    EMBD_AVX512_MASK_STOREU(edge, d + i, k, _mm512_shuffle_epi8(v, m));
  }
  _mm256_zeroupper();
}

static __attribute__((noinline)) void bswap_edge(void *dst, const void *src, size_t n) {
  bswap_body(dst, src, n, 1);
}

void embd_bswap32_avx512(void *dst, const void *src, size_t n) {
  if (embd_avx512_near_page_ends((const uint8_t *)src + 4 * n, (uint8_t *)dst + 4 * n)) {
    bswap_edge(dst, src, n);
    return;
  }
  bswap_body(dst, src, n, 0);
}
