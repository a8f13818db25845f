/* CRC-32 (zlib) with the ARMv8 CRC32 instructions, shared by the two aarch64 kernel
 * files (each includes it, so each copy is compiled with that file's -march: +crc at
 * least). Everything here works on raw CRC state (not inverted), like crc32_scalar.h.
 *
 * __crc32b/h/w/d are the zlib polynomial (0xEDB88320, reflected) without the pre- and
 * post-inversion: __crc32d(c, v) = CRC_raw(c, the 8 bytes of v, little-endian).
 *
 * Three streams: crc32 instructions have a latency of 2-3 cycles and a throughput of one
 * per cycle on current cores, so a single dependency chain runs at a third to a half of
 * the unit's speed. Long inputs are cut into blocks of three equal streams computed
 * independently and joined with
 *     CRC_raw(c, A B C) = shift(CRC_raw(c, A), |B|+|C|) ^ shift(CRC_raw(0, B), |C|)
 *                         ^ CRC_raw(0, C),     shift(v, n) = v * x^(8n) mod G
 * (CRC_raw is linear in the state and the message). The shift is a 32x32 carry-less
 * multiply by a constant, done with shifted XORs (no PMULL needed: this path is the one
 * CPUs without PMULL, like the Raspberry Pi 4's Cortex-A72, run), then one crc32w. */
#ifndef EMBD_CRC32_ARM_COMMON_H
#define EMBD_CRC32_ARM_COMMON_H

#include <arm_acle.h>
#include <string.h>

#include "crc32_tables.h"
#include "internal.h"

#define EMBD_ARM_INLINE static inline __attribute__((always_inline))

/* Little-endian loads of any alignment (memcpy: no aliasing or alignment UB; compilers
 * emit one ldr). On big-endian aarch64 the bytes are swapped so the instructions still
 * see message order. */
EMBD_ARM_INLINE uint64_t embd_arm_le64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__AARCH64EB__)
  v = __builtin_bswap64(v);
#endif
  return v;
}

EMBD_ARM_INLINE uint32_t embd_arm_le32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
#if defined(__AARCH64EB__)
  v = __builtin_bswap32(v);
#endif
  return v;
}

EMBD_ARM_INLINE uint16_t embd_arm_le16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
#if defined(__AARCH64EB__)
  v = __builtin_bswap16(v);
#endif
  return v;
}

/* One dependency chain, any length. The 32-byte loop is unrolled only for the loop
 * overhead: the chain itself is serial. */
EMBD_ARM_INLINE uint32_t embd_crc32_arm_serial(uint32_t c, const uint8_t *p, size_t n) {
  while (n >= 32) {
    c = __crc32d(c, embd_arm_le64(p));
    c = __crc32d(c, embd_arm_le64(p + 8));
    c = __crc32d(c, embd_arm_le64(p + 16));
    c = __crc32d(c, embd_arm_le64(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    c = __crc32d(c, embd_arm_le64(p));
    p += 8;
    n -= 8;
  }
  if (n & 4) {
    c = __crc32w(c, embd_arm_le32(p));
    p += 4;
  }
  if (n & 2) {
    c = __crc32h(c, embd_arm_le16(p));
    p += 2;
  }
  if (n & 1) c = __crc32b(c, *p);
  return c;
}

/* shift(v, D) = CRC_raw(v, D zero bytes) = v * x^(8D) mod G, given k = FOLD_D_LO >> 32,
 * i.e. x^(8D-1) mod G as a 32-bit reflected value (bit i = coefficient of x^(31-i)).
 *
 * Why it works: the integer carry-less product p = v (x) k has bit m = coefficient of
 * x^(62-m) of v*k = v * x^(8D-1). Times x, bit m is the coefficient of x^(63-m): the low
 * half (bits 0..31) is a 32-bit reflected value times x^32, which is what crc32w(0, lo)
 * reduces (CRC_raw(0, w) = w * x^32 mod G), and the high half is already reduced.
 *
 * k is a compile-time constant after inlining: the loop unrolls into one shifted EOR per
 * set bit of k (about 16), spread over four chains to keep the latency short. */
EMBD_ARM_INLINE uint32_t embd_crc32_arm_shift(uint32_t v, uint32_t k) {
  uint64_t r[4] = {0, 0, 0, 0};
  const uint64_t w = v;
#pragma GCC unroll 32
  for (int j = 0; j < 32; j++)
    if ((k >> j) & 1) r[j & 3] ^= w << j;
  const uint64_t p = (r[0] ^ r[1]) ^ (r[2] ^ r[3]);
  return __crc32w(0, (uint32_t)p) ^ (uint32_t)(p >> 32);
}

#define EMBD_ARM_SHIFT_K(d) ((uint32_t)(EMBD_CRC32_FOLD_##d##_LO >> 32))

/* One block of three streams of s bytes each (s a multiple of 8), starting at state c.
 * k1 = EMBD_ARM_SHIFT_K(s), k2 = EMBD_ARM_SHIFT_K(2s). */
EMBD_ARM_INLINE uint32_t embd_crc32_arm_3way(uint32_t c, const uint8_t *p, size_t s,
                                             uint32_t k1, uint32_t k2) {
  uint32_t a = c, b = 0, d = 0;
  const uint8_t *pb = p + s, *pd = p + 2 * s;
#pragma GCC unroll 4
  for (size_t i = 0; i < s; i += 8) {
    a = __crc32d(a, embd_arm_le64(p + i));
    b = __crc32d(b, embd_arm_le64(pb + i));
    d = __crc32d(d, embd_arm_le64(pd + i));
  }
  return embd_crc32_arm_shift(a, k2) ^ embd_crc32_arm_shift(b, k1) ^ d;
}

/* Block sizes: the join costs roughly 20 cycles of latency (which stream A of the next
 * block waits for), so long inputs take 3 x 512-byte blocks (192 crc32d per join); a
 * 3 x 128 block (48 crc32d) should still beat one chain by about 2x from 384 bytes.
 * Estimates from published latencies (crc32 2-3 cycles, EOR 1), not measurements: no
 * aarch64 hardware was at hand, and qemu timings mean nothing. */
#define EMBD_ARM_LONG 512
#define EMBD_ARM_SHORT 128

/* Any length, raw state: the crc32-instruction kernel. */
EMBD_ARM_INLINE uint32_t embd_crc32_arm_raw(uint32_t c, const uint8_t *p, size_t n) {
  if (n >= 8) {
    /* 8-byte loads from an 8-byte boundary: never split across cache lines. */
    const size_t head = (size_t)(-(uintptr_t)p & 7);
    if (head & 1) {
      c = __crc32b(c, *p);
      p += 1;
    }
    if (head & 2) {
      c = __crc32h(c, embd_arm_le16(p));
      p += 2;
    }
    if (head & 4) {
      c = __crc32w(c, embd_arm_le32(p));
      p += 4;
    }
    n -= head;
  }
  while (n >= 3 * EMBD_ARM_LONG) {
    c = embd_crc32_arm_3way(c, p, EMBD_ARM_LONG, EMBD_ARM_SHIFT_K(512), EMBD_ARM_SHIFT_K(1024));
    p += 3 * EMBD_ARM_LONG;
    n -= 3 * EMBD_ARM_LONG;
  }
  while (n >= 3 * EMBD_ARM_SHORT) {
    c = embd_crc32_arm_3way(c, p, EMBD_ARM_SHORT, EMBD_ARM_SHIFT_K(128), EMBD_ARM_SHIFT_K(256));
    p += 3 * EMBD_ARM_SHORT;
    n -= 3 * EMBD_ARM_SHORT;
  }
  return embd_crc32_arm_serial(c, p, n);
}

#endif
