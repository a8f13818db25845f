/* Table-driven CRC-32 steps, inline so that every kernel (SIMD ones for their heads,
 * tails and final reduction) shares one trusted scalar core. Works on raw CRC state
 * (not inverted). Byte loads keep it endian-neutral: on little-endian hosts compilers
 * merge them into one 32-bit load, on big-endian ones into a load plus byte swap. */
#ifndef EMBD_CRC32_SCALAR_H
#define EMBD_CRC32_SCALAR_H

#include <stddef.h>
#include <stdint.h>

#include "crc32_tables.h"

#define EMBD_CRC32_T embd_crc32_slice

static inline uint32_t embd_crc32_le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}

/* One byte at a time: for the 0..3 bytes no table step can take. */
static inline uint32_t embd_crc32_raw_bytes(uint32_t c, const uint8_t *p, size_t n) {
  while (n--) c = (c >> 8) ^ EMBD_CRC32_T[0][(c ^ *p++) & 0xFF];
  return c;
}

/* 4 <= n <= 16 bytes in one step: every table lookup is independent, so the latency is
 * one load plus an XOR tree whatever n is (the 12-byte frame header CRC is this). */
static inline __attribute__((always_inline)) uint32_t embd_crc32_raw_upto16(uint32_t c, const uint8_t *p, size_t n) {
  uint32_t x = c ^ embd_crc32_le32(p);
  uint32_t r = EMBD_CRC32_T[n - 1][x & 0xFF] ^ EMBD_CRC32_T[n - 2][(x >> 8) & 0xFF] ^
               EMBD_CRC32_T[n - 3][(x >> 16) & 0xFF] ^ EMBD_CRC32_T[n - 4][x >> 24];
  for (size_t i = 4; i < n; i++) r ^= EMBD_CRC32_T[n - 1 - i][p[i]];
  return r;
}

/* Exactly 16 bytes: also the final reduction of the folding kernels. */
static inline uint32_t embd_crc32_raw_16(uint32_t c, const uint8_t *p) {
  uint32_t x = c ^ embd_crc32_le32(p);
  return EMBD_CRC32_T[15][x & 0xFF] ^ EMBD_CRC32_T[14][(x >> 8) & 0xFF] ^
         EMBD_CRC32_T[13][(x >> 16) & 0xFF] ^ EMBD_CRC32_T[12][x >> 24] ^
         EMBD_CRC32_T[11][p[4]] ^ EMBD_CRC32_T[10][p[5]] ^ EMBD_CRC32_T[9][p[6]] ^
         EMBD_CRC32_T[8][p[7]] ^ EMBD_CRC32_T[7][p[8]] ^ EMBD_CRC32_T[6][p[9]] ^
         EMBD_CRC32_T[5][p[10]] ^ EMBD_CRC32_T[4][p[11]] ^ EMBD_CRC32_T[3][p[12]] ^
         EMBD_CRC32_T[2][p[13]] ^ EMBD_CRC32_T[1][p[14]] ^ EMBD_CRC32_T[0][p[15]];
}

/* Any length, raw state. */
static inline uint32_t embd_crc32_raw(uint32_t c, const uint8_t *p, size_t n) {
  while (n >= 16) {
    c = embd_crc32_raw_16(c, p);
    p += 16;
    n -= 16;
  }
  if (n >= 4) return embd_crc32_raw_upto16(c, p, n);
  return embd_crc32_raw_bytes(c, p, n);
}

#endif
