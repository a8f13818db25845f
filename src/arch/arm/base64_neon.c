/* base64 block kernels with NEON, written against simde's NEON API: on aarch64 they
 * compile to native NEON (no extra flags); on x86 the file is built with the sse42
 * family's flags and registered as "neon-simde" (never picked by the dispatcher) so that
 * the NEON code path is tested natively too. Contract: src/core/base64_driver.h.
 *
 * Decode, 64 characters -> 48 bytes per block: vld4q de-interleaves the characters into
 * the four positions of 16 quads; each position is looked up in a 128-entry table
 * (two vqtbl4q lookups of 64 entries: characters 0..63, then c ^ 0x40 for 64..127;
 * out-of-range indices give 0) that maps the alphabet to 0..63 and everything else,
 * '=' included, to 0xFF; characters >= 0x80 are caught by their own top bit. A block
 * with any top bit set in (value | character) stops the kernel before anything of it is
 * stored. The 6-bit values are packed to three byte vectors and vst3q interleaves them
 * into 48 bytes. One 32 -> 24 block on 8-lane vectors (vld4 / vst3) follows for the rest.
 *
 * Encode, 48 bytes -> 64 characters per block: vld3q de-interleaves the 3-byte groups,
 * shifts and masks make four 6-bit index vectors, one vqtbl4q lookup each in the
 * 64-character alphabet, and vst4q interleaves them. Then one 24 -> 32 block.
 *
 * Loads and stores are exactly the block's bytes: nothing outside src[0 .. n) is read,
 * nothing outside dst[0 .. consumed) written. */
#include <simde/arm/neon.h>

#include "base64_driver.h"

static const uint8_t k_dec_std[128] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 62,  255, 255, 255, 63,
    52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  255, 255, 255, 255, 255, 255,
    255, 0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,
    15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  255, 255, 255, 255, 255,
    255, 26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,
    41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  255, 255, 255, 255, 255,
};
static const uint8_t k_dec_url[128] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 62,  255, 255,
    52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  255, 255, 255, 255, 255, 255,
    255, 0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,
    15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  255, 255, 255, 255, 63,
    255, 26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,
    41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  255, 255, 255, 255, 255,
};
static const char k_enc_std[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char k_enc_url[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static inline simde_uint8x16x4_t load_table(const uint8_t *t) {
  simde_uint8x16x4_t r;
  r.val[0] = simde_vld1q_u8(t);
  r.val[1] = simde_vld1q_u8(t + 16);
  r.val[2] = simde_vld1q_u8(t + 32);
  r.val[3] = simde_vld1q_u8(t + 48);
  return r;
}

/* 6-bit value of each character, 0xFF for characters 0..127 outside the alphabet, 0 for
 * 128..255 (the caller ORs the character in, whose top bit flags those). */
static inline simde_uint8x16_t lookup16(simde_uint8x16x4_t lo, simde_uint8x16x4_t hi,
                                        simde_uint8x16_t c) {
  return simde_vorrq_u8(simde_vqtbl4q_u8(lo, c),
                        simde_vqtbl4q_u8(hi, simde_veorq_u8(c, simde_vdupq_n_u8(0x40))));
}

static inline simde_uint8x8_t lookup8(simde_uint8x16x4_t lo, simde_uint8x16x4_t hi,
                                      simde_uint8x8_t c) {
  return simde_vorr_u8(simde_vqtbl4_u8(lo, c),
                       simde_vqtbl4_u8(hi, simde_veor_u8(c, simde_vdup_n_u8(0x40))));
}

static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  if (n < 32) return 0;
  const uint8_t *t = url ? k_dec_url : k_dec_std;
  const simde_uint8x16x4_t lo = load_table(t), hi = load_table(t + 64);
  size_t i = 0;
  uint8_t *d = dst;
  for (; i + 64 <= n; i += 64) {
    const simde_uint8x16x4_t c = simde_vld4q_u8(src + i);
    const simde_uint8x16_t a = lookup16(lo, hi, c.val[0]), b = lookup16(lo, hi, c.val[1]);
    const simde_uint8x16_t e = lookup16(lo, hi, c.val[2]), f = lookup16(lo, hi, c.val[3]);
    const simde_uint8x16_t bad =
        simde_vorrq_u8(simde_vorrq_u8(simde_vorrq_u8(a, b), simde_vorrq_u8(e, f)),
                       simde_vorrq_u8(simde_vorrq_u8(c.val[0], c.val[1]),
                                      simde_vorrq_u8(c.val[2], c.val[3])));
    if (simde_vmaxvq_u8(bad) & 0x80) return i;
    simde_uint8x16x3_t o;
    o.val[0] = simde_vorrq_u8(simde_vshlq_n_u8(a, 2), simde_vshrq_n_u8(b, 4));
    o.val[1] = simde_vorrq_u8(simde_vshlq_n_u8(b, 4), simde_vshrq_n_u8(e, 2));
    o.val[2] = simde_vorrq_u8(simde_vshlq_n_u8(e, 6), f);
    simde_vst3q_u8(d, o);
    d += 48;
  }
  if (i + 32 <= n) {
    const simde_uint8x8x4_t c = simde_vld4_u8(src + i);
    const simde_uint8x8_t a = lookup8(lo, hi, c.val[0]), b = lookup8(lo, hi, c.val[1]);
    const simde_uint8x8_t e = lookup8(lo, hi, c.val[2]), f = lookup8(lo, hi, c.val[3]);
    const simde_uint8x8_t bad =
        simde_vorr_u8(simde_vorr_u8(simde_vorr_u8(a, b), simde_vorr_u8(e, f)),
                      simde_vorr_u8(simde_vorr_u8(c.val[0], c.val[1]),
                                    simde_vorr_u8(c.val[2], c.val[3])));
    if (simde_vmaxv_u8(bad) & 0x80) return i;
    simde_uint8x8x3_t o;
    o.val[0] = simde_vorr_u8(simde_vshl_n_u8(a, 2), simde_vshr_n_u8(b, 4));
    o.val[1] = simde_vorr_u8(simde_vshl_n_u8(b, 4), simde_vshr_n_u8(e, 2));
    o.val[2] = simde_vorr_u8(simde_vshl_n_u8(e, 6), f);
    simde_vst3_u8(d, o);
    i += 32;
  }
  return i;
}

static size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  if (n < 24) return 0;
  const simde_uint8x16x4_t alpha = load_table((const uint8_t *)(url ? k_enc_url : k_enc_std));
  const simde_uint8x16_t m6 = simde_vdupq_n_u8(63);
  size_t i = 0;
  uint8_t *d = (uint8_t *)dst;
  for (; i + 48 <= n; i += 48) {
    const simde_uint8x16x3_t x = simde_vld3q_u8(src + i);
    simde_uint8x16x4_t o;
    o.val[0] = simde_vshrq_n_u8(x.val[0], 2);
    o.val[1] = simde_vandq_u8(
        simde_vorrq_u8(simde_vshlq_n_u8(x.val[0], 4), simde_vshrq_n_u8(x.val[1], 4)), m6);
    o.val[2] = simde_vandq_u8(
        simde_vorrq_u8(simde_vshlq_n_u8(x.val[1], 2), simde_vshrq_n_u8(x.val[2], 6)), m6);
    o.val[3] = simde_vandq_u8(x.val[2], m6);
    for (int k = 0; k < 4; k++) o.val[k] = simde_vqtbl4q_u8(alpha, o.val[k]);
    simde_vst4q_u8(d, o);
    d += 64;
  }
  if (i + 24 <= n) {
    const simde_uint8x8_t m = simde_vdup_n_u8(63);
    const simde_uint8x8x3_t x = simde_vld3_u8(src + i);
    simde_uint8x8x4_t o;
    o.val[0] = simde_vshr_n_u8(x.val[0], 2);
    o.val[1] =
        simde_vand_u8(simde_vorr_u8(simde_vshl_n_u8(x.val[0], 4), simde_vshr_n_u8(x.val[1], 4)), m);
    o.val[2] =
        simde_vand_u8(simde_vorr_u8(simde_vshl_n_u8(x.val[1], 2), simde_vshr_n_u8(x.val[2], 6)), m);
    o.val[3] = simde_vand_u8(x.val[2], m);
    for (int k = 0; k < 4; k++) o.val[k] = simde_vqtbl4_u8(alpha, o.val[k]);
    simde_vst4_u8(d, o);
    i += 24;
  }
  return i;
}

EMBD_B64_DEFINE_IMPL(neon, dec_block, enc_block)
