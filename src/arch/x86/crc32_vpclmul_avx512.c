/* CRC-32 (zlib) for the avx512 tier: 512-bit VPCLMULQDQ folding with masked loads.
 *
 * Where the 64-byte blocks sit is chosen so that only one of them is partial:
 *   - below EMBD_AVX512_END_ALIGNED_BELOW bytes the last block ends at the end of the
 *     input and the first one is loaded with the bytes before the start masked to zero
 *     (leading zeros do not change a CRC whose initial value is XORed into the first
 *     message bytes). The loads are unaligned but no tail fold follows, which is what
 *     counts at these sizes: 1 KiB at offset 16 went from 27.3 to 23.3 ns. The switch
 *     was at 2 KiB; on an Intel Xeon (family 6 model 167) this layout is no slower up to
 *     16 KiB and 0.85-0.96x the time from 2 to 4 KiB at offset 16, so it runs to 6 KiB,
 *     where the aligned loop's steady state (the multiplier limit) begins;
 *   - from there on the first block is loaded from the 64-byte-aligned address at or
 *     below the start (masked the same way), every following load is aligned (ISA-L and
 *     zlib-ng lose 20-30% on unaligned input on some cores), and the last partial block
 *     (0..63 bytes) is loaded right-aligned to the end with the bytes before it masked
 *     off; with it, every register left at the end goes into the Barrett frame at its own
 *     distance (the generator has the multipliers for every distance below 512).
 * Masked-off bytes are never accessed (AVX-512 fault suppression), so no load touches
 * memory outside [buf, buf+len) even though the addresses start below it; a masked load
 * whose 64 bytes would cross a page goes through avx512_masked_mem.h, which keeps it off
 * a page holding none of its bytes (200 ns of microcode assist per access on Zen 5).
 */
#include "avx512_masked_mem.h"
#include "crc32_x86_common.h"

/* crc32_vpclmul_avx512_simde.c compiles this file again under another name. */
#ifndef EMBD_CRC32_AVX512_FN
#define EMBD_CRC32_AVX512_FN embd_crc32_vpclmul_avx512
#endif

#define NACC 4 /* 4 x 64 bytes per step: enough to cover the multiply latency */
#ifndef EMBD_AVX512_END_ALIGNED_BELOW
#define EMBD_AVX512_END_ALIGNED_BELOW 6144
#endif

#define AVX512_INLINE static inline __attribute__((always_inline))

AVX512_INLINE __m512i bcast(__m128i k) { return _mm512_broadcast_i32x4(k); }

AVX512_INLINE __m512i fold512(__m512i a, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                   _mm512_clmulepi64_epi128(a, k, 0x11), data, 0x96);
}

/* The inverted CRC placed at byte `k` (0..60) of a 64-byte vector. */
AVX512_INLINE __m512i crc_at(uint32_t x, unsigned k) {
  /* At byte 0 (whole 64-byte blocks, aligned starts) the permute's latency is avoidable. */
  if (k == 0) return _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)x));
  /* lane i takes lane i - k: the CRC's 4 bytes land at k..k+3 */
  const __m512i idx = embd_avx512_lanes_from(-(int)k);
  /* Bytes 4..63 of the source are zero, so every index outside k..k+3 picks a zero. */
  /* zext, not cast: a cast leaves the upper bytes undefined (zero on hardware after
   * vmovd, but not in simde's emulation, where the avx512-simde row caught it). */
  return _mm512_permutexvar_epi8(idx, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)x)));
}

static inline const void *addr(uintptr_t a) { return (const void *)a; }

/* The 4 lanes of `z` folded into the Barrett frame with the 4 multiplier pairs at `k`
 * (embd_crc32_x86_kaddr_y(d): the first lane d bytes before the end of the message, the
 * last d - 48). */
AVX512_INLINE __m512i fold_yk(__m512i z, const uint64_t *k) {
  const __m512i m = _mm512_loadu_si512(k);
  return _mm512_xor_si512(_mm512_clmulepi64_epi128(z, m, 0x00),
                          _mm512_clmulepi64_epi128(z, m, 0x11));
}

/* The same for the distance `d` (48 <= d < 512). */
AVX512_INLINE __m512i fold_y(__m512i z, size_t d) {
  return fold_yk(z, embd_crc32_x86_kaddr_y(d));
}

/* The CRC (not inverted) from the Barrett-frame terms of 4 lanes and one more term `t`. */
AVX512_INLINE uint32_t lanes_to_y_plus(__m512i y, __m128i t) {
  __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64(y, 1));
  return embd_crc32_x86_finish_y(_mm_ternarylogic_epi64(
      _mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1), t, 0x96));
}

/* The same without the extra term. */
AVX512_INLINE uint32_t lanes_to_y(__m512i y) { return lanes_to_y_plus(y, _mm_setzero_si128()); }

/* 65..511 bytes as nb = ceil(len / 64) blocks that end at the end, the first one loaded
 * with the 64 nb - len bytes before the start masked to zero, every 16-byte lane folded
 * straight to the end in one step (the AVX2 kernel's short path,
 * crc32_pclmul_template.h): all the multiplies are independent, so the latency is one
 * fold, the lane reduction and the Barrett finish whatever nb is (a chain of 64-byte
 * folds added a multiply per block). Block j's lanes are 64 (nb - 1 - j) + 48, + 32,
 * + 16, + 0 bytes from the end: four consecutive multiplier pairs of embd_crc32_fold_y,
 * one load, and they go straight into the Barrett frame, so only Barrett's two dependent
 * multiplies follow. The inverted CRC is a term of its own: the 16-byte lane [x, 0, 0, 0]
 * that the message's first 16 bytes occupy, len - 16 bytes from the end, one multiply of
 * its low half, added before Barrett. Placed into the first block at byte 64 nb - len
 * instead, as before, it needed a broadcast, a subtract and a vpermb (three port-5 uops
 * on Intel, on the CRC's own chain), and the lengths that would have put it across two
 * blocks took 1..3 bytes by table first. nb is a constant in each caller, so each block
 * count is straight-line code. */
AVX512_INLINE uint32_t crc_direct(uint32_t x, uintptr_t end, size_t len, const unsigned nb,
                                  const int edge) {
  const unsigned k = 64 * nb - (unsigned)len;
  const uintptr_t q = end - 64 * nb;
  const __m128i t =
      embd_crc32_x86_crc_term(_mm_cvtsi32_si128((int)x), embd_crc32_x86_ky(len - 16));
  __m512i acc = fold_y(EMBD_AVX512_MASKZ_LOADU(edge, ~UINT64_C(0) << k, addr(q)),
                       64 * (nb - 1) + 48);
  for (unsigned j = 1; j < nb; j++)
    acc = _mm512_xor_si512(acc,
                           fold_y(_mm512_loadu_si512(addr(q + 64 * j)), 64 * (nb - 1 - j) + 48));
  return lanes_to_y_plus(acc, t);
}

/* 16..64 bytes in one register loaded from the start, zeros after them; each lane's
 * multipliers for this length from embd_crc32_fold_head (a lane that runs past the end
 * sits at a negative distance). The inverted CRC is a term of its own, as in crc_direct:
 * its 4 bytes times the first lane's low multiplier, one 128-bit multiply added just
 * before Barrett, so the chain from one call's CRC to the next is that multiply and
 * Barrett's two. XORed into the first 4 bytes instead, as before, it also waited for the
 * 512-bit fold and both lane extracts (Intel Xeon, family 6 model 207: chained CRCs of
 * 20..64 bytes 10.0-10.2 ns, now 6.4-6.8; independent ones unchanged). The right-aligned
 * form (crc_direct with one block) needed the CRC moved to byte 64 - len first, a
 * broadcast, a subtract and a vpermb: this form takes 0.89-0.93x its time for
 * independent CRCs of 24..63 bytes. (At 64 bytes the length switch below cost more than
 * the whole fold.) */
AVX512_INLINE uint32_t crc_head(uint32_t x, const uint8_t *p, size_t len, const int edge) {
  const uint64_t *k = embd_crc32_fold_head[len - 16];
  const __mmask64 m = _bzhi_u64(~UINT64_C(0), (unsigned)len);
  return lanes_to_y_plus(fold_yk(EMBD_AVX512_MASKZ_LOADU(edge, m, p), k),
                         embd_crc32_x86_crc_term(_mm_cvtsi32_si128((int)x),
                                                 _mm_loadu_si128((const __m128i *)(const void *)k)));
}

static uint32_t crc32_avx512_edge(uint32_t crc, const void *buf, size_t len);

/* The body, compiled twice (see the end of the file): `edge` is 0 in the public
 * function, which checks on each path whose masked load could reach a page holding none
 * of the input and then tail-calls the copy with `edge` 1, whose loads move onto the
 * input's page (avx512_masked_mem.h). */
AVX512_INLINE uint32_t crc32_avx512_body(uint32_t crc, const void *buf, size_t len,
                                         const int edge) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t x = ~crc;
  if (len < 16) return ~embd_crc32_raw(x, p, len);
  const uintptr_t end = (uintptr_t)p + len;
  /* Where the masked loads reach past the input, checked as cheaply as the fast path
   * allows (a wider check cost independent CRCs of 24..64 bytes 7%): */
  const unsigned at = (unsigned)((uintptr_t)p & 4095); /* the start's place in its page */
  if (len <= 64) {
    /* the bytes after the end, up to p + 63: another page only if p is in its page's
     * last 64 bytes (the edge copy then checks exactly) */
    if (!edge && __builtin_expect(at > 4096 - 64, 0)) return crc32_avx512_edge(crc, buf, len);
    return ~crc_head(x, p, len, edge);
  }

  unsigned k = (unsigned)(-len & 63);
  /* where the blocks end at the end (below 512 bytes, and below 6 KiB when the CRC fits
   * the first block): the k bytes before the start, on the page before when at < k (the
   * aligned layout's first block stays on the start's page) */
  const int before = !edge && __builtin_expect(at < k, 0);
  if (len < 512) {
    if (before) return crc32_avx512_edge(crc, buf, len);
    switch ((len + 63) / 64) {
      case 2: return ~crc_direct(x, end, len, 2, edge);
      case 3: return ~crc_direct(x, end, len, 3, edge);
      case 4: return ~crc_direct(x, end, len, 4, edge);
      case 5: return ~crc_direct(x, end, len, 5, edge);
      case 6: return ~crc_direct(x, end, len, 6, edge);
      case 7: return ~crc_direct(x, end, len, 7, edge);
      default: return ~crc_direct(x, end, len, 8, edge);
    }
  }
  if (before && len < EMBD_AVX512_END_ALIGNED_BELOW && k <= 60)
    return crc32_avx512_edge(crc, buf, len);
  uintptr_t q, full_end;
  if (len < EMBD_AVX512_END_ALIGNED_BELOW && k <= 60) {
    /* The blocks end at the end (see the top of the file). When this path began at 64
     * bytes, the aligned layout with its tail fold took 10.9 ns there (offset 16)
     * against 7.7 ns. */
    q = end - ((len + 63) & ~(size_t)63);
    full_end = end;
  } else {
    k = (unsigned)((uintptr_t)p & 63);
    if (k > 60) {
      /* The CRC would straddle two blocks: take the 1..3 bytes up to the boundary by
       * table instead (at least 509 bytes remain). */
      x = embd_crc32_raw_bytes(x, p, 64 - k);
      len -= 64 - k;
      p += 64 - k;
      k = 0;
    }
    q = (uintptr_t)p - k;                  /* aligned */
    full_end = end & ~(uintptr_t)63;       /* end of the last full aligned block */
  }
  /* From 509 bytes on: at least 7 blocks (8 end-aligned), so the four accumulators below
   * always fill. */
  size_t nblocks = (full_end - q) / 64;
  const size_t tail = end - full_end;      /* 0..63 bytes after the last whole block */

  __m512i v = _mm512_xor_si512(EMBD_AVX512_MASKZ_LOADU(edge, ~UINT64_C(0) << k, addr(q)), crc_at(x, k));
  q += 64;
  nblocks--;

  /* The end, as crc_direct does it: every register left (the four accumulators, the 0..3
   * blocks after them, the partial last block) folded straight into the Barrett frame in
   * one parallel step, whatever its distance from the end (at most 63 + 3 * 64 + 48 +
   * 192 = 495 bytes: embd_crc32_fold_y has every distance below 512). Only Barrett's two
   * multiplies follow. Folding the accumulators into one, the blocks after them one by
   * one, then the partial block by its distance and a table or Barrett finish, as
   * before, chained eight to eleven dependent multiplies: on an Intel Xeon (family 6
   * model 207) 256 bytes took 17.8 ns against libdeflate 1.25's 9.0. Every distance
   * here is tail + 48 + 64 m (m blocks before the last whole one): one row of the table,
   * 64 bytes earlier per block further from the end, so one address serves them all. */
  const uint64_t *kb = embd_crc32_x86_kaddr_y(tail + 48);
  const __m512i kmain = bcast(EMBD_K128(256));
  __m512i a0 = v;
  __m512i a1 = _mm512_loadu_si512(addr(q));
  __m512i a2 = _mm512_loadu_si512(addr(q + 64));
  __m512i a3 = _mm512_loadu_si512(addr(q + 128));
  q += 192;
  nblocks -= 3;
  while (nblocks >= NACC) {
    a0 = fold512(a0, kmain, _mm512_loadu_si512(addr(q)));
    a1 = fold512(a1, kmain, _mm512_loadu_si512(addr(q + 64)));
    a2 = fold512(a2, kmain, _mm512_loadu_si512(addr(q + 128)));
    a3 = fold512(a3, kmain, _mm512_loadu_si512(addr(q + 192)));
    q += 256;
    nblocks -= NACC;
  }
  const uint64_t *k3 = kb - 8 * nblocks; /* a3's */
  __m512i y = _mm512_xor_si512(fold_yk(a3, k3), fold_yk(a2, k3 - 8));
  y = _mm512_ternarylogic_epi64(y, fold_yk(a1, k3 - 16), fold_yk(a0, k3 - 24), 0x96);
  for (size_t j = 0; j < nblocks; j++)
    y = _mm512_xor_si512(y, fold_yk(_mm512_loadu_si512(addr(q + 64 * j)),
                                    kb - 8 * (nblocks - 1 - j)));
  if (tail)
    y = _mm512_xor_si512(
        y, fold_y(EMBD_AVX512_MASKZ_LOADU(edge, ~UINT64_C(0) << (64 - tail), addr(end - 64)), 48));
  return ~lanes_to_y(y);
}

/* The input has a page boundary within 64 bytes of one of its ends, on the side the
 * masked loads reach over: the same code with loads that stay on the input's pages. */
static __attribute__((noinline)) uint32_t crc32_avx512_edge(uint32_t crc, const void *buf,
                                                            size_t len) {
  return crc32_avx512_body(crc, buf, len, 1);
}

uint32_t EMBD_CRC32_AVX512_FN(uint32_t crc, const void *buf, size_t len) {
  return crc32_avx512_body(crc, buf, len, 0);
}
