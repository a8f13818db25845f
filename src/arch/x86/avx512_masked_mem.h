/* Byte-masked 64-byte loads and stores for the AVX-512 kernels (base64, bswap32, CRC-32)
 * that never reach into a page none of their enabled bytes is in. (The avx512 tier has
 * VBMI, whose vpermb moves the lanes.)
 *
 * AVX-512 suppresses faults on masked-off bytes, so the kernels load and store whole
 * 64-byte vectors at their edges with the bytes outside the caller's buffer masked off.
 * That is correct next to any page, but not free: when a masked-off byte lies on a page
 * that is not present (unmapped, a guard page, or a fresh page nobody has touched yet)
 * the access takes a microcode assist. On AMD Zen 5 (family 26) each such access cost
 * about 200 ns where the whole call takes 3-10 ns: a 24-byte CRC ending at a page end
 * next to an unmapped page took 200 ns instead of 3.5, 100 base64 characters decoded
 * into a buffer ending at a page end 218 ns instead of 8, and 16 KiB decoded into a
 * page-aligned 12 KiB buffer whose next page was untouched 357 ns instead of 157.
 *
 * So a 64-byte access that would cross a 4 KiB boundary is moved onto the page of its
 * enabled bytes (embd_avx512_page_shift). The kernels decide once per call, from where
 * their buffers end, whether any of their masked accesses may cross, and only then run
 * a copy of themselves built with these accesses (EMBD_AVX512_MASKZ_LOADU and
 * EMBD_AVX512_MASK_STOREU below).
 *
 * Every mask passed here is one run of consecutive lanes (a prefix, a suffix or a
 * window), so that its enabled bytes lie on one side of the boundary or straddle it.
 *
 * Included by the kernel files after their intrinsics (and, in the simde builds, after
 * simde_avx512_shims.h, whose macros then serve these helpers too). */
#ifndef EMBD_AVX512_MASKED_MEM_H
#define EMBD_AVX512_MASKED_MEM_H

#include <immintrin.h>
#include <stdint.h>

/* Non-zero when [p, p + 64) crosses a 4 KiB page boundary. */
static inline int embd_avx512_crosses_page(const void *p) {
  return ((uintptr_t)p & 4095) > 4096 - 64;
}

/* The enabled range [lo, hi) of a non-zero run-of-lanes mask. */
static inline void embd_avx512_mask_range(uint64_t k, unsigned *lo, unsigned *hi) {
  *lo = (unsigned)__builtin_ctzll(k);
  *hi = 64u - (unsigned)__builtin_clzll(k);
}

/* Byte indices i + s (mod 64): with vpermb, lane i takes lane i + s. */
static inline __m512i embd_avx512_lanes_from(int s) {
  static const uint8_t iota[64] __attribute__((aligned(64))) = {
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
  return _mm512_add_epi8(_mm512_load_si512((const void *)iota), _mm512_set1_epi8((char)s));
}

/* Where the 64 bytes at p cross a page and all enabled bytes sit on one side of the
 * boundary, the access moves to the 64 bytes that end at the boundary (enabled bytes
 * below it) or start at it (above it), with the mask shifted and the lanes moved by one
 * vpermb; the moved access spans one page, the enabled bytes' own. Where the enabled
 * bytes straddle the boundary, both pages hold some of them and the plain access is
 * fine. No stack buffer: one gave the callers a realigned stack frame.
 *
 * Returns the shift s (lane i of the moved access is lane i + s of the original, s in
 * -63..63) and the moved address, or 0 when the plain access is fine. */
static inline int embd_avx512_page_shift(uint64_t k, const void *p, const uint8_t **q) {
  const uintptr_t a = (uintptr_t)p, b = (a + 64) & ~(uintptr_t)4095; /* a < b < a + 64 */
  unsigned lo, hi;
  embd_avx512_mask_range(k, &lo, &hi);
  if (a + hi <= b) {
    *q = (const uint8_t *)(b - 64);
    return (int)(a - (b - 64)); /* lane i of p is lane i + s of q */
  }
  if (a + lo >= b) {
    *q = (const uint8_t *)b;
    return -(int)(b - a);
  }
  return 0;
}

#define EMBD_AVX512_MEM_INLINE static inline __attribute__((always_inline))

/* _mm512_maskz_loadu_epi8(k, p), touching only the enabled bytes' pages. */
EMBD_AVX512_MEM_INLINE __m512i embd_avx512_maskz_loadu(uint64_t k, const void *p) {
  const uint8_t *q;
  int s;
  if (__builtin_expect(!embd_avx512_crosses_page(p), 1) || !k ||
      !(s = embd_avx512_page_shift(k, p, &q)))
    return _mm512_maskz_loadu_epi8((__mmask64)k, p);
  const uint64_t kq = s > 0 ? k << s : k >> -s;
  return _mm512_maskz_permutexvar_epi8((__mmask64)k, embd_avx512_lanes_from(s),
                                       _mm512_maskz_loadu_epi8((__mmask64)kq, q));
}

/* _mm512_mask_storeu_epi8(p, k, v), touching only the enabled bytes' pages. */
EMBD_AVX512_MEM_INLINE void embd_avx512_mask_storeu(void *p, uint64_t k, __m512i v) {
  const uint8_t *q;
  int s;
  if (__builtin_expect(!embd_avx512_crosses_page(p), 1) || !k ||
      !(s = embd_avx512_page_shift(k, p, &q))) {
    _mm512_mask_storeu_epi8(p, (__mmask64)k, v);
    return;
  }
  const uint64_t kq = s > 0 ? k << s : k >> -s;
  _mm512_mask_storeu_epi8((void *)(uintptr_t)q, (__mmask64)kq,
                          _mm512_permutexvar_epi8(embd_avx512_lanes_from(-s), v));
}

/* A kernel whose masked accesses sit at the end of its buffers is compiled twice: with
 * edge 0 (plain masked accesses) for the calls whose buffers end away from a page
 * boundary, and with edge 1 (the accesses above) for the others. Checking inside every
 * access instead gave the inlined callers callee-saved registers or a realigned frame,
 * which cost short calls 5-15% (independent CRCs of 24..384 bytes, base64 of 100
 * characters to 1 KiB). */
#define EMBD_AVX512_MASKZ_LOADU(edge, k, p) \
  ((edge) ? embd_avx512_maskz_loadu((k), (p)) : _mm512_maskz_loadu_epi8((__mmask64)(k), (p)))
#define EMBD_AVX512_MASK_STOREU(edge, p, k, v)                   \
  do {                                                           \
    if (edge)                                                    \
      embd_avx512_mask_storeu((p), (k), (v));                    \
    else                                                         \
      _mm512_mask_storeu_epi8((p), (__mmask64)(k), (v));          \
  } while (0)

/* Non-zero when a page boundary lies within the 64 bytes from `end` (a buffer's end):
 * a masked access over the buffer's last bytes may then reach the next page. */
static inline int embd_avx512_near_page_end(const void *end) {
  return (((uintptr_t)end + 63) & 4095) < 64;
}

/* The same for either of a kernel's two buffers (its input's end and its output's):
 * whether a call takes the edge copy. */
static inline int embd_avx512_near_page_ends(const void *src_end, const void *dst_end) {
  return __builtin_expect(embd_avx512_near_page_end(src_end) | embd_avx512_near_page_end(dst_end),
                          0);
}

#endif
