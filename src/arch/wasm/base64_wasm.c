/* base64 block kernels of the wasm-simd128 tier, written for WebAssembly SIMD128 itself:
 * the NEON kernels through simde were slower than the scalar loop here (vqtbl4q, vld4q
 * and vst3q have no single-instruction form in SIMD128 and became lane loops: 0.1 GB/s
 * against the scalar reference's 0.15, measured by js/bench.mjs). Contract and tails:
 * src/core/base64_driver.h (the same checks, errors and offsets as every tier).
 *
 * Decode, 16 characters -> 12 bytes: the standard alphabet by nibble lookups (three
 * swizzles), the URL one by unsigned range compares; both reject everything outside the
 * alphabet ('=' and bytes >= 0x80 included), and such a block stops the kernel before
 * anything of it is stored. The value is the character plus its class's offset; the four 6-bit values of a
 * quad are joined with shifts inside 16- then 32-bit lanes and a byte shuffle puts the
 * three bytes in order; exactly 12 bytes are stored (one 64-bit and one 32-bit lane).
 *
 * Encode, 12 bytes -> 16 characters: a shuffle gathers each 3-byte group into one 32-bit
 * lane, shifts and masks cut the four 6-bit indices into its bytes, and the index plus
 * its range's offset is the character. Reads 16 bytes per step, so steps while 16 remain. */
#include <wasm_simd128.h>

#include "simd128_neon.h"

#include "base64_driver.h"

static inline v128_t in_range(v128_t c, uint8_t lo, uint8_t hi) {
  return wasm_v128_and(wasm_u8x16_ge(c, wasm_u8x16_splat(lo)), wasm_u8x16_le(c, wasm_u8x16_splat(hi)));
}

/* The standard alphabet by nibble lookups (Wojciech Muła's SSSE3 scheme, pshufb ->
 * i8x16.swizzle): the low nibble picks a mask of the high nibbles that are valid with it,
 * the high nibble a bit; no bit, no character of the alphabet (bytes >= 0x80 have a high
 * nibble with no bit). The high nibble also picks the offset to the 6-bit value ('/' is
 * the one character whose offset differs from its row's). */
static inline int dec_std16(v128_t c, v128_t *v) {
  const v128_t hi = wasm_u8x16_shr(c, 4), lo = wasm_v128_and(c, wasm_i8x16_splat(0x0f));
  const v128_t mask_lut = wasm_i8x16_make((int8_t)0xa8, (int8_t)0xf8, (int8_t)0xf8, (int8_t)0xf8,
                                          (int8_t)0xf8, (int8_t)0xf8, (int8_t)0xf8, (int8_t)0xf8,
                                          (int8_t)0xf8, (int8_t)0xf8, (int8_t)0xf0, 0x54, 0x50, 0x50,
                                          0x50, 0x54);
  const v128_t bit_lut = wasm_i8x16_make(0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, (int8_t)0x80,
                                         0, 0, 0, 0, 0, 0, 0, 0);
  const v128_t shift_lut = wasm_i8x16_make(0, 0, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
  const v128_t ok = wasm_v128_and(wasm_i8x16_swizzle(mask_lut, lo), wasm_i8x16_swizzle(bit_lut, hi));
  if (!wasm_i8x16_all_true(ok)) return 0;
  const v128_t shift = wasm_v128_bitselect(wasm_i8x16_splat(16), wasm_i8x16_swizzle(shift_lut, hi),
                                           wasm_i8x16_eq(c, wasm_i8x16_splat('/')));
  *v = wasm_i8x16_add(c, shift);
  return 1;
}

/* Any alphabet by range compares (the URL one, and the reference for the lookups above). */
static inline int dec_ranges16(v128_t c, v128_t v62, v128_t v63, v128_t s62, v128_t s63, v128_t *v) {
  const v128_t up = in_range(c, 'A', 'Z'), lo = in_range(c, 'a', 'z'), dg = in_range(c, '0', '9');
  const v128_t e62 = wasm_i8x16_eq(c, v62), e63 = wasm_i8x16_eq(c, v63);
  const v128_t ok = wasm_v128_or(wasm_v128_or(up, lo), wasm_v128_or(dg, wasm_v128_or(e62, e63)));
  if (!wasm_i8x16_all_true(ok)) return 0;
  v128_t off = wasm_v128_and(up, wasm_i8x16_splat(-65));
  off = wasm_v128_or(off, wasm_v128_and(lo, wasm_i8x16_splat(-71)));
  off = wasm_v128_or(off, wasm_v128_and(dg, wasm_i8x16_splat(4)));
  off = wasm_v128_or(off, wasm_v128_and(e62, s62));
  off = wasm_v128_or(off, wasm_v128_and(e63, s63));
  *v = wasm_i8x16_add(c, off);
  return 1;
}

/* 16 6-bit values (a b c d per quad) -> 12 bytes at d. */
static inline void pack12(uint8_t *d, v128_t v) {
  /* 16-bit lanes (a, b): a << 6 | b; 32-bit lanes (ab, cd): ab << 12 | cd */
  const v128_t ab = wasm_v128_or(wasm_i16x8_shl(wasm_v128_and(v, wasm_i16x8_splat(0xff)), 6),
                                 wasm_u16x8_shr(v, 8));
  const v128_t w = wasm_v128_or(wasm_i32x4_shl(wasm_v128_and(ab, wasm_i32x4_splat(0xffff)), 12),
                                wasm_u32x4_shr(ab, 16));
  const v128_t o = wasm_i8x16_shuffle(w, w, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0, 0, 0, 0);
  wasm_v128_store64_lane(d, o, 0);
  wasm_v128_store32_lane(d + 8, o, 2);
}

static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  size_t i = 0;
  uint8_t *d = dst;
  v128_t v;
  if (!url) {
    for (; i + 16 <= n; i += 16) {
      if (!dec_std16(wasm_v128_load(src + i), &v)) return i;
      pack12(d, v);
      d += 12;
    }
    return i;
  }
  const v128_t s62 = wasm_i8x16_splat((int8_t)(62 - '-')), s63 = wasm_i8x16_splat((int8_t)(63 - '_'));
  const v128_t v62 = wasm_u8x16_splat('-'), v63 = wasm_u8x16_splat('_');
  for (; i + 16 <= n; i += 16) {
    if (!dec_ranges16(wasm_v128_load(src + i), v62, v63, s62, s63, &v)) return i;
    pack12(d, v);
    d += 12;
  }
  return i;
}

static size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  const v128_t m6 = wasm_i32x4_splat(63);
  const v128_t p62 = wasm_i8x16_splat((int8_t)((url ? '-' : '+') - 62));
  const v128_t p63 = wasm_i8x16_splat((int8_t)((url ? '_' : '/') - 63));
  size_t i = 0;
  uint8_t *d = (uint8_t *)dst;
  for (; i + 16 <= n; i += 12) {
    const v128_t x = wasm_v128_load(src + i);
    /* lane k: b2 | b1 << 8 | b0 << 16 of group k */
    const v128_t g = wasm_i8x16_shuffle(x, x, 2, 1, 0, 0, 5, 4, 3, 3, 8, 7, 6, 6, 11, 10, 9, 9);
    const v128_t v = wasm_v128_and(g, wasm_i32x4_splat(0xffffff));
    v128_t idx = wasm_v128_and(wasm_u32x4_shr(v, 18), m6);
    idx = wasm_v128_or(idx, wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(v, 12), m6), 8));
    idx = wasm_v128_or(idx, wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(v, 6), m6), 16));
    idx = wasm_v128_or(idx, wasm_i32x4_shl(wasm_v128_and(v, m6), 24));
    /* index -> character: + 'A' below 26, + 'a' - 26 below 52, + '0' - 52 below 62 */
    v128_t off = wasm_i8x16_splat('A');
    off = wasm_v128_bitselect(wasm_i8x16_splat('a' - 26), off, wasm_u8x16_ge(idx, wasm_u8x16_splat(26)));
    off = wasm_v128_bitselect(wasm_i8x16_splat('0' - 52), off, wasm_u8x16_ge(idx, wasm_u8x16_splat(52)));
    off = wasm_v128_bitselect(p62, off, wasm_i8x16_eq(idx, wasm_u8x16_splat(62)));
    off = wasm_v128_bitselect(p63, off, wasm_i8x16_eq(idx, wasm_u8x16_splat(63)));
    wasm_v128_store(d, wasm_i8x16_add(idx, off));
    d += 16;
  }
  return i;
}

EMBD_B64_DEFINE_IMPL(wasm, dec_block, enc_block)
