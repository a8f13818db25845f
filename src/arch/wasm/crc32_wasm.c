/* CRC-32 of the wasm-simd128 tier, by tables: WebAssembly has no carry-less multiply, so
 * the folding kernels of the other tiers have no counterpart. The scalar reference is one
 * slice-by-16 chain, each step waiting on the previous one's XOR tree; here long inputs
 * run as three chains over three equal stretches, stepped together so the engine's JIT
 * overlaps their loads, and are joined with embd_crc32_combine (a few hundred integer
 * operations, paid once per call: only from EMBD_CRC32_WASM_SPLIT bytes). Shorter inputs
 * and the tail take the scalar steps (crc32_scalar.h), the one trusted core. */
#include "simd128_neon.h"

#include "crc32_scalar.h"
#include "internal.h"

#define EMBD_CRC32_WASM_SPLIT 3072

uint32_t embd_crc32_wasm(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  if (len < EMBD_CRC32_WASM_SPLIT) return ~embd_crc32_raw(~crc, p, len);
  const size_t part = (len / 3) & ~(size_t)15; /* each stretch a whole number of steps */
  const uint8_t *p1 = p + part, *p2 = p + 2 * part;
  uint32_t c0 = ~crc, c1 = ~UINT32_C(0), c2 = ~UINT32_C(0);
  for (size_t i = 0; i < part; i += 16) {
    c0 = embd_crc32_raw_16(c0, p + i);
    c1 = embd_crc32_raw_16(c1, p1 + i);
    c2 = embd_crc32_raw_16(c2, p2 + i);
  }
  /* c1, c2 are zlib-style CRCs of their stretches from 0 (pre- and post-inverted). */
  c2 = ~embd_crc32_raw(c2, p2 + part, len - 3 * part);
  uint32_t r = embd_crc32_combine(~c0, ~c1, part);
  return embd_crc32_combine(r, c2, len - 2 * part);
}
