/* CRC-32 (zlib) for aarch64 CPUs with CRC32 and PMULL: 128-bit carry-less folding for
 * long inputs, the crc32 instructions for short ones, the head and the tail. Compiled with
 * -march=armv8-a+crc+crypto (GCC 12 needs +crypto for vmull_p64; +aes is not enough).
 *
 * Conventions (from scripts/gen_crc32_tables.py): a 16-byte lane loaded little-endian has
 * its first 8 bytes in 64-bit lane 0; folding it D bytes forward is
 *     clmul(lane0, FOLD_D_HI) ^ clmul(lane1, FOLD_D_LO),
 * a 96-bit value congruent to the lane times x^(8D), to be XORed into the 16 bytes D
 * bytes later. Once one register R ends where the folded data ends, CRC_raw(0, R) (two
 * crc32d) is what is owed, and the state continues through the remaining bytes. */
#include <arm_neon.h>

#include "crc32_arm_common.h"

/* The folding path needs 128 bytes plus up to 15 for alignment. Its fixed cost (a
 * 3-level reduction, up to 7 single folds, two crc32d) is a few dozen cycles, about what
 * the 18 crc32d of a 144-byte chain cost. An estimate from published latencies, not a
 * measurement: no aarch64 hardware was at hand, and qemu timings mean nothing. */
#define EMBD_PMULL_MIN 144

#if !defined(__AARCH64EB__)

/* { FOLD_D_HI, FOLD_D_LO }: lane 0 multiplies the lane's first 8 bytes. */
#define EMBD_PMULL_K(d)                                    \
  vcombine_p64(vcreate_p64(EMBD_CRC32_FOLD_##d##_HI), \
               vcreate_p64(EMBD_CRC32_FOLD_##d##_LO))

static inline __attribute__((always_inline)) uint64x2_t load16(const uint8_t *p) {
  return vreinterpretq_u64_u8(vld1q_u8(p)); /* no alignment requirement */
}

/* a moved forward by the distance k encodes, XORed with `data`. */
static inline __attribute__((always_inline)) uint64x2_t fold(uint64x2_t a, poly64x2_t k,
                                                             uint64x2_t data) {
  const poly128_t lo = vmull_p64((poly64_t)vgetq_lane_u64(a, 0), vgetq_lane_p64(k, 0));
  const poly128_t hi = vmull_high_p64(vreinterpretq_p64_u64(a), k);
  return veorq_u64(veorq_u64(vreinterpretq_u64_p128(lo), data), vreinterpretq_u64_p128(hi));
}

uint32_t embd_crc32_armv8_pmull(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t c = ~crc;
  if (len < EMBD_PMULL_MIN) return ~embd_crc32_arm_raw(c, p, len);

  /* Align the vector loads to 16 bytes (no cache-line splits) with at most four crc32
   * instructions; their state then enters the first lane like an initial CRC. */
  const size_t head = (size_t)(-(uintptr_t)p & 15);
  c = embd_crc32_arm_serial(c, p, head);
  p += head;
  len -= head; /* >= 129 */

  /* Eight accumulators, 128 bytes per step: a fold is two PMULLs (latency 2-3) and two
   * EORs; eight independent chains keep the multipliers busy instead of waiting. */
  uint64x2_t acc[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) acc[i] = load16(p + 16 * i);
  acc[0] = veorq_u64(acc[0], vcombine_u64(vcreate_u64(c), vcreate_u64(0)));
  p += 128;
  len -= 128;

  const poly64x2_t k128 = EMBD_PMULL_K(128);
  while (len >= 128) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) acc[i] = fold(acc[i], k128, load16(p + 16 * i));
    p += 128;
    len -= 128;
  }

  /* Tree reduction: lane i is folded onto lane i+1, then by 32 and 64 bytes. */
  const poly64x2_t k16 = EMBD_PMULL_K(16), k32 = EMBD_PMULL_K(32), k64 = EMBD_PMULL_K(64);
  acc[0] = fold(acc[0], k16, acc[1]);
  acc[2] = fold(acc[2], k16, acc[3]);
  acc[4] = fold(acc[4], k16, acc[5]);
  acc[6] = fold(acc[6], k16, acc[7]);
  acc[0] = fold(acc[0], k32, acc[2]);
  acc[4] = fold(acc[4], k32, acc[6]);
  uint64x2_t v = fold(acc[0], k64, acc[4]);

  while (len >= 16) {
    v = fold(v, k16, load16(p));
    p += 16;
    len -= 16;
  }
  c = __crc32d(__crc32d(0, vgetq_lane_u64(v, 0)), vgetq_lane_u64(v, 1));
  return ~embd_crc32_arm_serial(c, p, len);
}

#else
/* Big-endian aarch64: NEON lane numbering differs and nobody runs it; the CMake probe
 * does not match aarch64_be anyway. The crc32 path is endian-correct. */
uint32_t embd_crc32_armv8_pmull(uint32_t crc, const void *buf, size_t len) {
  return ~embd_crc32_arm_raw(~crc, (const uint8_t *)buf, len);
}
#endif
