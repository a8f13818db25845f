/* base64 block kernels of the wasm-simd128 tier, written for WebAssembly SIMD128 itself:
 * the NEON kernels through simde were slower than the scalar loop here (vqtbl4q, vld4q
 * and vst3q have no single-instruction form in SIMD128 and became lane loops: 0.1 GB/s
 * against the scalar reference's 0.15, measured by js/bench.mjs). Contract and tails:
 * src/core/base64_driver.h (the same checks, errors and offsets as every tier).
 *
 * Decode, standard alphabet: 64 characters a step (then 16), validity by nibble lookups
 * ORed over the four vectors and tested once, the values by one lookup of the high nibble,
 * the quads packed by shifts in 16-bit lanes and one i32x4.dot, each 12-byte group stored
 * with a full 16-byte store the next group overwrites (1.54 against 0.72 GB/s for the
 * 16-character loop this replaced, both measured interleaved in Node 20 on Zen 1). The
 * URL alphabet: 16 characters a step by unsigned range compares. Both reject everything
 * outside the alphabet ('=' and bytes >= 0x80 included), and such a block stops the
 * kernel before anything of it is stored.
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

/* Constants of the standard-alphabet loop, loaded once through an address the compiler
 * cannot see through (the empty asm): otherwise clang re-emits each v128.const inside the
 * loop, and V8 builds every one from immediates (several instructions apiece) on every
 * iteration, since it hoists nothing out of loops. Loaded, they stay in registers. */
enum { K_BAD, K_BIT, K_SHIFT, K_NIB, K_SLASH, K_HI6, K_DOT, K_COUNT };
static const uint8_t std_k[K_COUNT][16] __attribute__((aligned(16))) = {
    /* K_BAD by low nibble: a bit for each high nibble that is NOT valid with it (0x01:
     * high nibbles 0, 1, 8-15, never valid; 0x02 .. 0x40: high nibbles 2 .. 7) */
    {0xab, 0x83, 0x83, 0x83, 0x83, 0x83, 0x83, 0x83, 0x83, 0x83, 0x87, 0xd5, 0xd7, 0xd7, 0xd7, 0xd5},
    /* K_BIT by high nibble */
    {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01},
    /* K_SHIFT by high nibble, '/' moved to row 1: character + shift = 6-bit value */
    {0, 16, 19, 4, (uint8_t)-65, (uint8_t)-65, (uint8_t)-71, (uint8_t)-71, 0, 0, 0, 0, 0, 0, 0, 0},
    {15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15},
    {'/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/', '/'},
    /* K_HI6: 16-bit 0x0fc0 (the first value of a pair, shifted left by 6) */
    {0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f, 0xc0, 0x0f},
    /* K_DOT: 16-bit weights 4096, 1 (i32x4.dot joins two 12-bit halves) */
    {0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00},
};
typedef struct { v128_t bad, bit, shift, nib, slash, hi6, dot; } std_consts;

static inline std_consts std_load(void) {
  const uint8_t *k = std_k[0];
  __asm__("" : "+r"(k));
  std_consts c;
  c.bad = wasm_v128_load(k + 16 * K_BAD), c.bit = wasm_v128_load(k + 16 * K_BIT);
  c.shift = wasm_v128_load(k + 16 * K_SHIFT), c.nib = wasm_v128_load(k + 16 * K_NIB);
  c.slash = wasm_v128_load(k + 16 * K_SLASH), c.hi6 = wasm_v128_load(k + 16 * K_HI6);
  c.dot = wasm_v128_load(k + 16 * K_DOT);
  return c;
}

/* The standard alphabet by nibble lookups (Wojciech Mula's SSSE3 scheme, pshufb ->
 * i8x16.swizzle; every index is below 16, so no lane is zeroed by range): the low nibble
 * picks the high nibbles that are NOT valid with it, the high nibble a bit; a set bit
 * in their AND marks a character outside the alphabet (bytes >= 0x80 and '=' included).
 * Returns that mask (OR four of them, test once). */
static inline v128_t std_bad(const std_consts *k, v128_t c) {
  const v128_t hi = wasm_v128_and(wasm_u16x8_shr(c, 4), k->nib), lo = wasm_v128_and(c, k->nib);
  return wasm_v128_and(wasm_i8x16_swizzle(k->bad, lo), wasm_i8x16_swizzle(k->bit, hi));
}
/* Valid characters -> 6-bit values: the high nibble picks the offset; '/' is the one
 * character whose offset differs from its row's, and its high nibble minus one (the eq
 * mask is -1) picks row 1, which holds its offset. */
static inline v128_t std_values(const std_consts *k, v128_t c) {
  const v128_t hi = wasm_v128_and(wasm_u16x8_shr(c, 4), k->nib);
  const v128_t row = wasm_i8x16_add(hi, wasm_i8x16_eq(c, k->slash));
  return wasm_i8x16_add(c, wasm_i8x16_swizzle(k->shift, row));
}
/* 16 6-bit values (a b c d per quad) -> the 12 bytes in order in lanes 0-11: a << 6 | b
 * in each 16-bit lane, then one i32x4.dot (x 4096 + x 1) per quad, then a constant
 * shuffle (V8 uses its mask as a memory operand of pshufb; a swizzle by a vector held in
 * a register would also need the range clamp V8 adds to every swizzle). */
static inline v128_t std_pack(const std_consts *k, v128_t v) {
  const v128_t ab = wasm_v128_or(wasm_v128_and(wasm_i16x8_shl(v, 6), k->hi6), wasm_u16x8_shr(v, 8));
  const v128_t w = wasm_i32x4_dot_i16x8(ab, k->dot);
  return wasm_i8x16_shuffle(w, w, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 3, 7, 11, 15);
}

/* Standard alphabet: 64 characters a step while a full 16-byte store of the last of
 * their four 12-byte groups stays inside dst (i + 72 <= n), then 16 at a time, the last
 * group stored as exactly 12 bytes. A 64-character step holding a character outside the
 * alphabet returns at its start; the scalar loop of the driver then finds the block. */
static size_t dec_std(uint8_t *dst, const uint8_t *src, size_t n) {
  const std_consts k = std_load();
  size_t i = 0;
  uint8_t *d = dst;
  for (; i + 72 <= n; i += 64) {
    const v128_t c0 = wasm_v128_load(src + i), c1 = wasm_v128_load(src + i + 16);
    const v128_t c2 = wasm_v128_load(src + i + 32), c3 = wasm_v128_load(src + i + 48);
    const v128_t bad = wasm_v128_or(wasm_v128_or(std_bad(&k, c0), std_bad(&k, c1)),
                                    wasm_v128_or(std_bad(&k, c2), std_bad(&k, c3)));
    if (wasm_v128_any_true(bad)) return i;
    wasm_v128_store(d, std_pack(&k, std_values(&k, c0)));
    wasm_v128_store(d + 12, std_pack(&k, std_values(&k, c1)));
    wasm_v128_store(d + 24, std_pack(&k, std_values(&k, c2)));
    wasm_v128_store(d + 36, std_pack(&k, std_values(&k, c3)));
    d += 48;
  }
  for (; i + 16 <= n; i += 16) {
    const v128_t c = wasm_v128_load(src + i);
    if (wasm_v128_any_true(std_bad(&k, c))) return i;
    const v128_t o = std_pack(&k, std_values(&k, c));
    if (i + 24 <= n) {
      wasm_v128_store(d, o);
    } else {
      wasm_v128_store64_lane(d, o, 0);
      wasm_v128_store32_lane(d + 8, o, 2);
    }
    d += 12;
  }
  return i;
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
  if (!url) return dec_std(dst, src, n);
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
