/* 32-bit byte swaps: the portable scalar kernel and the public entry points. */
#include "internal.h"

/* Below this many words the inline loop beats loading the dispatch pointer and the SIMD
 * kernels' setup. */
#define EMBD_BSWAP32_DISPATCH_MIN 16

void embd_bswap32_scalar(void *dst, const void *src, size_t n) {
  embd_bswap32_words((uint8_t *)dst, (const uint8_t *)src, n);
}

void embd_bswap32(void *dst, const void *src, size_t n) {
  if (n < EMBD_BSWAP32_DISPATCH_MIN) {
    embd_bswap32_words((uint8_t *)dst, (const uint8_t *)src, n);
    return;
  }
  embd_bswap32_dispatched()(dst, src, n);
}

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
#elif defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_LE 0
#else
#error "embd: unknown host byte order"
#endif

/* Host order equals the wire order: a copy, or nothing in place. */
static void copy_words(void *dst, const void *src, size_t n) {
  if (n == 0 || dst == src) return;
  memcpy(dst, src, 4 * n);
}

void embd_f32_from_le(float *dst, const void *src, size_t n) {
  if (HOST_LE)
    copy_words(dst, src, n);
  else
    embd_bswap32(dst, src, n);
}

void embd_f32_to_le(void *dst, const float *src, size_t n) {
  if (HOST_LE)
    copy_words(dst, src, n);
  else
    embd_bswap32(dst, src, n);
}

void embd_u32_from_be(uint32_t *dst, const void *src, size_t n) {
  if (HOST_LE)
    embd_bswap32(dst, src, n);
  else
    copy_words(dst, src, n);
}

void embd_u32_to_be(void *dst, const uint32_t *src, size_t n) {
  if (HOST_LE)
    embd_bswap32(dst, src, n);
  else
    copy_words(dst, src, n);
}
