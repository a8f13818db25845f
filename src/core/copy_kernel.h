/* The identity ("copy") kernels beside the bswap32 ones: one template, instantiated by
 * bswap.c (scalar, 8-byte words), bswap_ssse3.c (16-byte SSE2), bswap_avx2.c (32-byte
 * AVX2) and bswap_neon.c (16-byte NEON), each with its own vector type.
 *
 * Why not memcpy: glibc 2.36 on AMD Zen 3 copies 2,112 B .. 512 KiB with `rep movsb`,
 * which runs at ~3 GB/s instead of ~48 when 0 < (dst - src) mod 4096 < 32 (glibc bug
 * 30994); a 1536-dim frame (6 KiB) then took 2 us instead of ~90 ns. The loop here has no
 * such cliff:
 *   - the stores are aligned to the vector width (one unaligned head and tail vector):
 *     split stores cost far more than split loads, whatever the source alignment;
 *   - the direction is chosen from D = (dst - src) mod 4096: when 0 < D < 2048 the
 *     destination runs just ahead of the source in the 4 KiB address space, a forward
 *     copy's loads would alias (low 12 bits) the stores still in flight and wait for them,
 *     so the copy runs backward; otherwise forward (loads then never alias recent stores).
 *
 * Contract (every instantiation, tested in tests/test_bswap.c): copies n bytes, any n,
 * any alignment of either pointer; dst == src is allowed (nothing changes), any other
 * overlap is not. Reads only [src, src + n), writes only [dst, dst + n).
 *
 * Before including, define:
 *   CP_NAME             the function's name
 *   CP_VEC              the vector type, CP_W its size in bytes (a power of two, 8..32)
 *   CP_LOAD(p)          an unaligned load of CP_W bytes at p
 *   CP_STORE(p, v)      an unaligned store
 *   CP_STORE_A(p, v)    a store to a CP_W-aligned p
 * and optionally CP_END() (e.g. vzeroupper), run before returning from the vector path.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef EMBD_COPY_SMALL_DEFINED
#define EMBD_COPY_SMALL_DEFINED
/* n < 64 bytes: two overlapping moves of the largest power of two <= n. Fixed-size
 * memcpy calls compile to plain moves. All loads come before the stores. */
static inline void embd_copy_small_(uint8_t *d, const uint8_t *s, size_t n) {
  if (n >= 32) {
    uint8_t a[32], b[32];
    memcpy(a, s, 32);
    memcpy(b, s + n - 32, 32);
    memcpy(d, a, 32);
    memcpy(d + n - 32, b, 32);
  } else if (n >= 16) {
    uint64_t a0, a1, b0, b1;
    memcpy(&a0, s, 8);
    memcpy(&a1, s + 8, 8);
    memcpy(&b0, s + n - 16, 8);
    memcpy(&b1, s + n - 8, 8);
    memcpy(d, &a0, 8);
    memcpy(d + 8, &a1, 8);
    memcpy(d + n - 16, &b0, 8);
    memcpy(d + n - 8, &b1, 8);
  } else if (n >= 8) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n) {
    /* 1..3 bytes: first, middle, last (some the same byte). */
    const uint8_t a = s[0], b = s[n >> 1], c = s[n - 1];
    d[0] = a;
    d[n >> 1] = b;
    d[n - 1] = c;
  }
}
#endif

#ifndef CP_END
#define CP_END() ((void)0)
#endif

void CP_NAME(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  if (n < 2 * CP_W) {
    embd_copy_small_(d, s, n);
    return;
  }
  const CP_VEC head = CP_LOAD(s), tail = CP_LOAD(s + n - CP_W);
  const size_t dist = (size_t)((uintptr_t)d - (uintptr_t)s) & 4095;
  if (dist - 1 < 2047) {
    /* Backward: d + e is aligned, e in (n - CP_W, n]; blocks [e - CP_W, e) downwards while
     * they stay above byte 0; the head vector covers what is left below. */
    size_t e = n - (size_t)((uintptr_t)(d + n) & (CP_W - 1));
    CP_STORE(d + n - CP_W, tail);
    for (; e > 4 * CP_W; e -= 4 * CP_W) {
      const CP_VEC a = CP_LOAD(s + e - CP_W), b = CP_LOAD(s + e - 2 * CP_W);
      const CP_VEC c = CP_LOAD(s + e - 3 * CP_W), f = CP_LOAD(s + e - 4 * CP_W);
      CP_STORE_A(d + e - CP_W, a);
      CP_STORE_A(d + e - 2 * CP_W, b);
      CP_STORE_A(d + e - 3 * CP_W, c);
      CP_STORE_A(d + e - 4 * CP_W, f);
    }
    for (; e > CP_W; e -= CP_W) CP_STORE_A(d + e - CP_W, CP_LOAD(s + e - CP_W));
    CP_STORE(d, head);
  } else {
    /* Forward: d + i is aligned, i in [1, CP_W]; the tail vector covers the last bytes. */
    size_t i = CP_W - (size_t)((uintptr_t)d & (CP_W - 1));
    CP_STORE(d, head);
    for (; i + 4 * CP_W <= n; i += 4 * CP_W) {
      const CP_VEC a = CP_LOAD(s + i), b = CP_LOAD(s + i + CP_W);
      const CP_VEC c = CP_LOAD(s + i + 2 * CP_W), f = CP_LOAD(s + i + 3 * CP_W);
      CP_STORE_A(d + i, a);
      CP_STORE_A(d + i + CP_W, b);
      CP_STORE_A(d + i + 2 * CP_W, c);
      CP_STORE_A(d + i + 3 * CP_W, f);
    }
    for (; i + CP_W <= n; i += CP_W) CP_STORE_A(d + i, CP_LOAD(s + i));
    CP_STORE(d + n - CP_W, tail);
  }
  CP_END();
}

#undef CP_NAME
#undef CP_VEC
#undef CP_W
#undef CP_LOAD
#undef CP_STORE
#undef CP_STORE_A
#undef CP_END
