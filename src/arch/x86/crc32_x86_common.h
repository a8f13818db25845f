/* 128-bit building blocks shared by the x86 CRC-32 folding kernels. Included by each
 * kernel file, so every copy is compiled with that file's -m flags (PCLMULQDQ at least).
 * Conventions (register bit m = coefficient of x^(127-m), multipliers x^(N-1) mod G)
 * are explained in scripts/gen_crc32_tables.py, which also checks them against zlib. */
#ifndef EMBD_CRC32_X86_COMMON_H
#define EMBD_CRC32_X86_COMMON_H

#include <immintrin.h>

#include "crc32_scalar.h"
#include "internal.h"

/* { FOLD_D_HI, FOLD_D_LO } as one vector: the low qword multiplies the lane's low qword. */
#define EMBD_K128(d) _mm_set_epi64x((long long)EMBD_CRC32_FOLD_##d##_LO, \
                                    (long long)EMBD_CRC32_FOLD_##d##_HI)

/* The 16 bytes `a` moved forward by the distance `k` encodes (a 96-bit result). */
static inline __m128i embd_fold128(__m128i a, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* CRC_raw(0, r): what is still owed once everything is folded into one register that
 * ends where the message ends. Sixteen independent table loads beat a Barrett reduction's
 * chain of three dependent multiplies here, and reuse the scalar reference's tables. */
static inline uint32_t embd_crc32_x86_finish_barrett(__m128i r) {
  /* R * x^32 mod G: fold the high 64 bits (x^95, x^63 mod G), then Barrett with
   * mu = floor(x^64 / G). The constants come from scripts/gen_crc32_tables.py, which
   * checks the reduction; the bit positions are checked by the tests against the table
   * finish below. */
  const __m128i k = _mm_set_epi64x((long long)EMBD_CRC32_BARRETT_X63,
                                   (long long)EMBD_CRC32_BARRETT_X95);
  const __m128i mg = _mm_set_epi64x((long long)EMBD_CRC32_BARRETT_POLY,
                                    (long long)EMBD_CRC32_BARRETT_MU);
  __m128i t = _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00),
                            _mm_slli_si128(_mm_srli_si128(r, 8), 4));
  __m128i u = _mm_xor_si128(_mm_clmulepi64_si128(t, k, 0x10), t);
  /* Barrett on the 32 bits in u's bytes 8..11, kept in vector registers: a round trip
   * through general registers between the multiplies adds latency the 64-byte case feels. */
  const __m128i lo32_of_hi = _mm_set_epi32(0, -1, 0, 0);
  const __m128i hi32_of_lo = _mm_set_epi32(0, 0, -1, 0);
  __m128i p1 = _mm_clmulepi64_si128(_mm_and_si128(u, lo32_of_hi), mg, 0x01);
  __m128i q = _mm_and_si128(_mm_slli_epi64(p1, 1), hi32_of_lo); /* q << 32 */
  __m128i p2 = _mm_clmulepi64_si128(q, mg, 0x10);
  __m128i v = _mm_xor_si128(_mm_srli_epi64(u, 32), _mm_srli_epi64(p2, 31));
  return (uint32_t)_mm_extract_epi32(v, 2);
}

/* Two ways to finish, measured on Zen 4 with google-benchmark (independent calls):
 * Barrett costs four dependent carry-less multiplies but few instructions, the table
 * step no multiplies but ~50 instructions. At 64 bytes Barrett wins (7.6 vs 10.7 ns),
 * at 1 KiB and above the multiplier is the bottleneck and the table step wins. */
static inline uint32_t embd_crc32_x86_finish(__m128i r) {
  /* From general registers rather than a store and byte reloads: vector-to-byte store
   * forwarding adds latency that the 64-byte case feels. */
  uint64_t lo = (uint64_t)_mm_cvtsi128_si64(r);
  uint64_t hi = (uint64_t)_mm_extract_epi64(r, 1);
  const uint32_t(*t)[256] = embd_crc32_slice;
  return t[15][lo & 0xFF] ^ t[14][(lo >> 8) & 0xFF] ^ t[13][(lo >> 16) & 0xFF] ^
         t[12][(lo >> 24) & 0xFF] ^ t[11][(lo >> 32) & 0xFF] ^ t[10][(lo >> 40) & 0xFF] ^
         t[9][(lo >> 48) & 0xFF] ^ t[8][lo >> 56] ^ t[7][hi & 0xFF] ^ t[6][(hi >> 8) & 0xFF] ^
         t[5][(hi >> 16) & 0xFF] ^ t[4][(hi >> 24) & 0xFF] ^ t[3][(hi >> 32) & 0xFF] ^
         t[2][(hi >> 40) & 0xFF] ^ t[1][(hi >> 48) & 0xFF] ^ t[0][hi >> 56];
}

/* Fold `r` (which ends `tail` bytes before `end`) over the last 1..15 bytes. Needs at
 * least 16 readable bytes before `end`: the last 16 are loaded and the ones already
 * folded are masked away. */
static inline __m128i embd_crc32_x86_tail16(__m128i r, const uint8_t *end, size_t tail) {
  static const uint8_t keep_mask[32] = {
      0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  __m128i last = _mm_loadu_si128((const __m128i *)(const void *)(end - 16));
  last = _mm_and_si128(last, _mm_loadu_si128((const __m128i *)(const void *)(keep_mask + tail)));
  __m128i k = _mm_loadu_si128((const __m128i *)(const void *)embd_crc32_fold_by[tail]);
  return _mm_xor_si128(embd_fold128(r, k), last);
}

/* Messages of 16..63 bytes (and the end of longer ones): one register, 16 bytes at a time.
 * `r` already holds the first 16 bytes (with the initial CRC folded in), p points after
 * them. `short_msg`: the whole message is short, so finish with Barrett (see above). */
static inline uint32_t embd_crc32_x86_rest(__m128i r, const uint8_t *p, size_t len,
                                           int short_msg) {
  const __m128i k16 = EMBD_K128(16);
  while (len >= 16) {
    r = _mm_xor_si128(embd_fold128(r, k16), _mm_loadu_si128((const __m128i *)(const void *)p));
    p += 16;
    len -= 16;
  }
  if (len) r = embd_crc32_x86_tail16(r, p + len, len);
  return short_msg ? embd_crc32_x86_finish_barrett(r) : embd_crc32_x86_finish(r);
}

/* The first 16 bytes with the (inverted) CRC XORed into the first 4. */
static inline __m128i embd_crc32_x86_first(const uint8_t *p, uint32_t x) {
  return _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p),
                       _mm_cvtsi32_si128((int)x));
}

#endif
