/* bswap32 with NEON vrev32q_u8, 4 x 16 bytes per iteration, written against simde's
 * NEON API: on aarch64 it compiles to native NEON (no extra flags); on x86 it is built
 * with the sse42 family's flags (-mssse3) and registered as "neon-simde", never picked by
 * the dispatcher, so that the NEON code path is tested and measured on x86 too.
 *
 * The tail is one overlapping 16-byte vector ending at the last word, loaded before
 * anything is stored (in place, no word is read after it was swapped). */
#include <simde/arm/neon.h>

#include "internal.h"

void embd_bswap32_neon(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  const size_t bytes = 4 * n;
  if (bytes < 16) {
    embd_bswap32_words(d, s, n);
    return;
  }
  const simde_uint8x16_t tail = simde_vld1q_u8(s + bytes - 16);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    simde_uint8x16_t a = simde_vld1q_u8(s + i);
    simde_uint8x16_t b = simde_vld1q_u8(s + i + 16);
    simde_uint8x16_t c = simde_vld1q_u8(s + i + 32);
    simde_uint8x16_t e = simde_vld1q_u8(s + i + 48);
    simde_vst1q_u8(d + i, simde_vrev32q_u8(a));
    simde_vst1q_u8(d + i + 16, simde_vrev32q_u8(b));
    simde_vst1q_u8(d + i + 32, simde_vrev32q_u8(c));
    simde_vst1q_u8(d + i + 48, simde_vrev32q_u8(e));
  }
  for (; i + 16 <= bytes; i += 16) simde_vst1q_u8(d + i, simde_vrev32q_u8(simde_vld1q_u8(s + i)));
  if (i < bytes) simde_vst1q_u8(d + bytes - 16, simde_vrev32q_u8(tail));
}

/* The identity kernel of this tier (copy_kernel.h): 16-byte NEON moves, aligned stores
 * (vst1q has no alignment requirement; the alignment is for speed). */
#define CP_NAME embd_copy_neon
#define CP_VEC simde_uint8x16_t
#define CP_W 16
#define CP_LOAD(p) simde_vld1q_u8(p)
#define CP_STORE(p, v) simde_vst1q_u8((p), (v))
#define CP_STORE_A(p, v) simde_vst1q_u8((p), (v))
#include "copy_kernel.h"
