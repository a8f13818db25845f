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

/* CRC_raw(0, r) from y, a 96-bit value in the Barrett frame (scripts/gen_crc32_tables.py):
 * Barrett with floor(x^95 / G) and G, two dependent multiplies; the CRC is in bits
 * 64..95. Kernels that fold every chunk with embd_crc32_fold_y land there directly. */
static inline uint32_t embd_crc32_x86_finish_y(__m128i y) {
  const __m128i mg = _mm_set_epi64x((long long)EMBD_CRC32_BARRETT_POLY,
                                    (long long)EMBD_CRC32_BARRETT_MU);
  __m128i q = _mm_clmulepi64_si128(y, mg, 0x00);
  y = _mm_xor_si128(y, _mm_clmulepi64_si128(q, mg, 0x10));
  return (uint32_t)_mm_extract_epi32(y, 2);
}

/* The 16 bytes `r` that end where the message ends, moved into the Barrett frame: its
 * first 8 bytes folded into the last 8 with x^95 mod G (128 -> 96 bits). */
static inline __m128i embd_crc32_x86_to_y(__m128i r) {
  const __m128i k = _mm_set_epi64x(0, (long long)EMBD_CRC32_BARRETT_X95);
  return _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00), _mm_srli_si128(r, 8));
}

/* CRC_raw(0, r): what is still owed once everything is folded into one register that
 * ends where the message ends. Three dependent multiplies (modelled bit for bit by
 * barrett_finish() in scripts/gen_crc32_tables.py). */
static inline uint32_t embd_crc32_x86_finish_barrett(__m128i r) {
  return embd_crc32_x86_finish_y(embd_crc32_x86_to_y(r));
}

/* The multipliers that fold a 16-byte chunk `d` bytes before the end into the Barrett
 * frame (0 <= d < EMBD_CRC32_FOLD_Y_N). */
static inline __m128i embd_crc32_x86_ky(size_t d) {
  return _mm_loadu_si128((const __m128i *)(const void *)EMBD_CRC32_FOLD_Y(d));
}

/* The inverted CRC `x` (low 4 bytes) as a term of its own in the Barrett frame: it sits
 * over the first 4 bytes of the message's first 16-byte chunk, whose multiplier pair is
 * `k`, so it is one multiply by the pair's low half. Added just before Barrett, it keeps
 * the CRC off the data's fold and lane-reduction chain: from one call's CRC to the next
 * there are this multiply and Barrett's two. */
static inline __m128i embd_crc32_x86_crc_term(__m128i x, __m128i k) {
  return _mm_clmulepi64_si128(x, k, 0x00);
}

/* &EMBD_CRC32_FOLD_Y(d) for 0 <= d < EMBD_CRC32_FOLD_Y_N (512), computed as
 * 16 * (32 * (d % 16) + 31 - d / 16) = 513 * (d % 16) + 496 - d bytes into the table:
 * three instructions where the compiler makes ten of the row and column form. The
 * entries for d - 16, d - 32, ... follow the one for d, so one 64-byte load from here
 * gives the multipliers of a zmm whose last lane is d - 48 bytes before the end. */
static inline const uint64_t *embd_crc32_x86_kaddr_y(size_t d) {
  return (const uint64_t *)(const void *)((const uint8_t *)embd_crc32_fold_y +
                                          513 * (d & 15) + 496 - d);
}

/* 16 zero bytes, then 32 of 0xff: from `keep_mask + keep` (keep 1..16), 16 - keep zeros
 * and then ones, the mask that keeps the last `keep` bytes of 16, or the last 16 + keep
 * of 32. */
static const uint8_t embd_crc32_x86_keep_mask[48] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* The last 16 bytes before `end` with all but the last `keep` (1..16) zeroed: the part of
 * the final chunk that no earlier chunk covers. */
static inline __m128i embd_crc32_x86_last(const uint8_t *end, size_t keep) {
  return _mm_and_si128(
      _mm_loadu_si128((const __m128i *)(const void *)(end - 16)),
      _mm_loadu_si128((const __m128i *)(const void *)(embd_crc32_x86_keep_mask + keep)));
}

#endif
