/* dtype -> float32 and float32 -> f16/bf16 with NEON, written against simde's NEON API
 * (as bswap_neon.c): native NEON on aarch64 (no extra flags), and on x86 built with the
 * sse42 family's flags and registered as "neon-simde" (never picked), so that this code
 * is tested on x86 too.
 *
 * f16 <-> f32: on aarch64 fcvtl / fcvtn (vcvt_f32_f16, vcvt_f16_f32): exact one way,
 * round to nearest even the other under the default FPCR, NaNs quieted with sign and
 * (upper) payload kept, like the scalar reference. simde's portable emulation of those
 * two intrinsics does not keep NaN payloads, so everywhere else the same integer
 * algorithm as convert_sse42.c runs (written with NEON calls); the cross tests run the
 * fcvt path under qemu-aarch64, the x86 tests the integer one.
 *
 * Tails: one more full block ending at the last element (dst never overlaps src), the
 * scalar reference below one block. */
#include <simde/arm/neon.h>

#include "internal.h"
#include "convert_kernel.h"

#if defined(SIMDE_ARM_NEON_A64V8_NATIVE)
#include <arm_neon.h>
#define CVT_NATIVE_F16 1
#else
#define CVT_NATIVE_F16 0
#endif

#define CVT_ISA neon
#define CVT_END() ((void)0)

#define U32(v) simde_vdupq_n_u32((uint32_t)(v))

/* ---- f16 (integer path), shared with e5m2 ----------------------------------------- */

/* x = h << 16 per lane: the float32 bits (see convert_sse42.c, f16hi_to_f32). */
AI simde_uint32x4_t f16hi_to_f32(simde_uint32x4_t x) {
  const simde_uint32x4_t sign = simde_vandq_u32(x, U32(0x80000000u));
  const simde_uint32x4_t a = simde_vshrq_n_u32(simde_vandq_u32(x, U32(0x7fff0000u)), 3);
  simde_uint32x4_t r = simde_vaddq_u32(a, U32(0x38000000u));
  const simde_float32x4_t den =
      simde_vsubq_f32(simde_vreinterpretq_f32_u32(simde_vaddq_u32(a, U32(0x38800000u))),
                      simde_vreinterpretq_f32_u32(U32(0x38800000u)));
  r = simde_vbslq_u32(simde_vcltq_u32(a, U32(0x00800000u)), simde_vreinterpretq_u32_f32(den), r);
  r = simde_vaddq_u32(r, simde_vandq_u32(simde_vcgtq_u32(a, U32(0x0f7fffffu)), U32(0x38000000u)));
  r = simde_vorrq_u32(r, simde_vandq_u32(simde_vcgtq_u32(a, U32(0x0f800000u)), U32(0x00400000u)));
  return simde_vorrq_u32(r, sign);
}

/* 4 binary16s -> 4 floats. */
AI simde_float32x4_t f16x4_to_f32(simde_uint16x4_t h) {
#if CVT_NATIVE_F16
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
#else
  return simde_vreinterpretq_f32_u32(f16hi_to_f32(simde_vshlq_n_u32(simde_vmovl_u16(h), 16)));
#endif
}

AI void f16_block(float *d, const uint8_t *s, int be) {
  simde_uint8x16_t v = simde_vld1q_u8(s);
  if (be) v = simde_vrev16q_u8(v);
  const simde_uint16x8_t h = simde_vreinterpretq_u16_u8(v);
  simde_vst1q_f32(d, f16x4_to_f32(simde_vget_low_u16(h)));
  simde_vst1q_f32(d + 4, f16x4_to_f32(simde_vget_high_u16(h)));
}

CVT_DECODE(f16, 8, 2, CVT_BY_ORDER, f16_block, (), ())

/* ---- bf16 ------------------------------------------------------------------------ */

AI void bf16_block(float *d, const uint8_t *s, int be) {
  simde_uint8x16_t v = simde_vld1q_u8(s);
  if (be) v = simde_vrev16q_u8(v);
  const simde_uint16x8_t h = simde_vreinterpretq_u16_u8(v);
  simde_vst1q_u32((uint32_t *)(void *)d, simde_vshlq_n_u32(simde_vmovl_u16(simde_vget_low_u16(h)), 16));
  simde_vst1q_u32((uint32_t *)(void *)(d + 4),
                  simde_vshlq_n_u32(simde_vmovl_u16(simde_vget_high_u16(h)), 16));
}

CVT_DECODE(bf16, 8, 2, CVT_BY_ORDER, bf16_block, (), ())

/* ---- fp8 ------------------------------------------------------------------------- */

/* 16 e5m2 bytes: byte << 8 is the binary16. */
AI void e5m2_block(float *d, const uint8_t *s) {
  const simde_uint8x16_t v = simde_vld1q_u8(s);
  const simde_uint16x8_t lo = simde_vshlq_n_u16(simde_vmovl_u8(simde_vget_low_u8(v)), 8);
  const simde_uint16x8_t hi = simde_vshlq_n_u16(simde_vmovl_u8(simde_vget_high_u8(v)), 8);
  simde_vst1q_f32(d, f16x4_to_f32(simde_vget_low_u16(lo)));
  simde_vst1q_f32(d + 4, f16x4_to_f32(simde_vget_high_u16(lo)));
  simde_vst1q_f32(d + 8, f16x4_to_f32(simde_vget_low_u16(hi)));
  simde_vst1q_f32(d + 12, f16x4_to_f32(simde_vget_high_u16(hi)));
}

CVT_DECODE(e5m2, 16, 1, CVT_ONE, e5m2_block, (), ())

/* b: 4 e4m3fn bytes zero-extended (see convert_sse42.c, e4m3hi_to_f32). */
AI simde_uint32x4_t e4m3_to_f32(simde_uint32x4_t b) {
  const simde_uint32x4_t sign = simde_vshlq_n_u32(simde_vandq_u32(b, U32(0x80)), 24);
  const simde_uint32x4_t a = simde_vshlq_n_u32(simde_vandq_u32(b, U32(0x7f)), 20);
  simde_uint32x4_t r = simde_vaddq_u32(a, U32(0x3c000000u));
  const simde_float32x4_t den =
      simde_vsubq_f32(simde_vreinterpretq_f32_u32(simde_vaddq_u32(a, U32(0x3c800000u))),
                      simde_vreinterpretq_f32_u32(U32(0x3c800000u)));
  r = simde_vbslq_u32(simde_vcltq_u32(a, U32(0x00800000u)), simde_vreinterpretq_u32_f32(den), r);
  r = simde_vbslq_u32(simde_vceqq_u32(a, U32(0x07f00000u)), U32(0x7fc00000u), r);
  return simde_vorrq_u32(r, sign);
}

AI void e4m3_block(float *d, const uint8_t *s) {
  const simde_uint8x16_t v = simde_vld1q_u8(s);
  const simde_uint16x8_t lo = simde_vmovl_u8(simde_vget_low_u8(v));
  const simde_uint16x8_t hi = simde_vmovl_u8(simde_vget_high_u8(v));
  simde_vst1q_u32((uint32_t *)(void *)d, e4m3_to_f32(simde_vmovl_u16(simde_vget_low_u16(lo))));
  simde_vst1q_u32((uint32_t *)(void *)(d + 4), e4m3_to_f32(simde_vmovl_u16(simde_vget_high_u16(lo))));
  simde_vst1q_u32((uint32_t *)(void *)(d + 8), e4m3_to_f32(simde_vmovl_u16(simde_vget_low_u16(hi))));
  simde_vst1q_u32((uint32_t *)(void *)(d + 12), e4m3_to_f32(simde_vmovl_u16(simde_vget_high_u16(hi))));
}

CVT_DECODE(e4m3, 16, 1, CVT_ONE, e4m3_block, (), ())

/* ---- int8, uint8 ----------------------------------------------------------------- */

AI void i8_block(float *d, const uint8_t *s) {
  const simde_int8x16_t v = simde_vld1q_s8((const int8_t *)s);
  const simde_int16x8_t lo = simde_vmovl_s8(simde_vget_low_s8(v));
  const simde_int16x8_t hi = simde_vmovl_s8(simde_vget_high_s8(v));
  simde_vst1q_f32(d, simde_vcvtq_f32_s32(simde_vmovl_s16(simde_vget_low_s16(lo))));
  simde_vst1q_f32(d + 4, simde_vcvtq_f32_s32(simde_vmovl_s16(simde_vget_high_s16(lo))));
  simde_vst1q_f32(d + 8, simde_vcvtq_f32_s32(simde_vmovl_s16(simde_vget_low_s16(hi))));
  simde_vst1q_f32(d + 12, simde_vcvtq_f32_s32(simde_vmovl_s16(simde_vget_high_s16(hi))));
}

AI void u8_block(float *d, const uint8_t *s) {
  const simde_uint8x16_t v = simde_vld1q_u8(s);
  const simde_uint16x8_t lo = simde_vmovl_u8(simde_vget_low_u8(v));
  const simde_uint16x8_t hi = simde_vmovl_u8(simde_vget_high_u8(v));
  simde_vst1q_f32(d, simde_vcvtq_f32_u32(simde_vmovl_u16(simde_vget_low_u16(lo))));
  simde_vst1q_f32(d + 4, simde_vcvtq_f32_u32(simde_vmovl_u16(simde_vget_high_u16(lo))));
  simde_vst1q_f32(d + 8, simde_vcvtq_f32_u32(simde_vmovl_u16(simde_vget_low_u16(hi))));
  simde_vst1q_f32(d + 12, simde_vcvtq_f32_u32(simde_vmovl_u16(simde_vget_high_u16(hi))));
}

CVT_DECODE(i8, 16, 1, CVT_ONE, i8_block, (), ())

CVT_DECODE(u8, 16, 1, CVT_ONE, u8_block, (), ())

/* ---- packed bits ----------------------------------------------------------------- */

/* One byte -> 8 floats: the byte in every lane, vtst against bit 7 - j (MSB first),
 * set lanes take `one`, clear ones `zero`. Every byte is a whole block: no tail. */
AI void bits_byte(float *d, uint8_t byte, simde_uint32x4_t mlo, simde_uint32x4_t mhi,
                  simde_uint32x4_t one, simde_uint32x4_t zero) {
  const simde_uint32x4_t b = simde_vdupq_n_u32(byte);
  simde_vst1q_u32((uint32_t *)(void *)d, simde_vbslq_u32(simde_vtstq_u32(b, mlo), one, zero));
  simde_vst1q_u32((uint32_t *)(void *)(d + 4), simde_vbslq_u32(simde_vtstq_u32(b, mhi), one, zero));
}

AI void bits_neon(float *dst, const uint8_t *s, size_t n, uint8_t flip, uint32_t one,
                  uint32_t zero) {
  static const uint32_t lo[4] = {0x80, 0x40, 0x20, 0x10}, hi[4] = {0x08, 0x04, 0x02, 0x01};
  const simde_uint32x4_t mlo = simde_vld1q_u32(lo), mhi = simde_vld1q_u32(hi);
  const simde_uint32x4_t o = U32(one), z = U32(zero);
  const size_t nb = n / 8;
  size_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    bits_byte(dst + 8 * i, (uint8_t)(s[i] ^ flip), mlo, mhi, o, z);
    bits_byte(dst + 8 * i + 8, (uint8_t)(s[i + 1] ^ flip), mlo, mhi, o, z);
    bits_byte(dst + 8 * i + 16, (uint8_t)(s[i + 2] ^ flip), mlo, mhi, o, z);
    bits_byte(dst + 8 * i + 24, (uint8_t)(s[i + 3] ^ flip), mlo, mhi, o, z);
  }
  for (; i < nb; i++) bits_byte(dst + 8 * i, (uint8_t)(s[i] ^ flip), mlo, mhi, o, z);
}

CVT_BITS(binary, 0, bits_neon, (, 0x80, 0x3f800000u, 0xbf800000u))

CVT_BITS(ubinary, 0, bits_neon, (, 0, 0x3f800000u, 0))

/* ---- encode: float32 -> f16, bf16 ------------------------------------------------- */

#if !CVT_NATIVE_F16
/* See convert_sse42.c (f32_to_f16_lanes): integer round to nearest even for normal
 * results, frintn (explicit nearest-even) of |x| * 2^24 for subnormal ones. */
AI simde_uint32x4_t f32_to_f16_lanes(simde_uint32x4_t x) {
  const simde_uint32x4_t s = simde_vandq_u32(simde_vshrq_n_u32(x, 16), U32(0x8000));
  const simde_uint32x4_t a = simde_vandq_u32(x, U32(0x7fffffff));
  simde_uint32x4_t r = simde_vsubq_u32(a, U32(0x38000000));
  r = simde_vaddq_u32(r, simde_vaddq_u32(U32(0xfff), simde_vandq_u32(simde_vshrq_n_u32(r, 13), U32(1))));
  r = simde_vshrq_n_u32(r, 13);
  /* The subnormal candidate only where it applies (below 2^-14), so that the float
   * conversion never sees a value out of uint32 range. */
  const simde_uint32x4_t small = simde_vcltq_u32(a, U32(0x38800000));
  const simde_float32x4_t v = simde_vmulq_f32(
      simde_vreinterpretq_f32_u32(simde_vandq_u32(a, small)), simde_vdupq_n_f32(0x1p24f));
  const simde_uint32x4_t q = simde_vcvtq_u32_f32(simde_vrndnq_f32(v));
  r = simde_vbslq_u32(small, q, r);
  r = simde_vbslq_u32(simde_vcgtq_u32(a, U32(0x477fefff)), U32(0x7c00), r);
  const simde_uint32x4_t nan =
      simde_vorrq_u32(U32(0x7e00), simde_vandq_u32(simde_vshrq_n_u32(a, 13), U32(0x3ff)));
  r = simde_vbslq_u32(simde_vcgtq_u32(a, U32(0x7f800000)), nan, r);
  return simde_vorrq_u32(r, s);
}
#endif

AI simde_uint16x4_t f32x4_to_f16(const float *s) {
#if CVT_NATIVE_F16
  return vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(s)));
#else
  return simde_vmovn_u32(f32_to_f16_lanes(simde_vld1q_u32((const uint32_t *)(const void *)s)));
#endif
}

AI void enc_f16_block(uint8_t *d, const float *s, int be) {
  simde_uint8x16_t v =
      simde_vreinterpretq_u8_u16(simde_vcombine_u16(f32x4_to_f16(s), f32x4_to_f16(s + 4)));
  if (be) v = simde_vrev16q_u8(v);
  simde_vst1q_u8(d, v);
}

CVT_ENCODE(f16, 8, CVT_BY_ORDER, enc_f16_block, (), ())

AI simde_uint16x4_t f32x4_to_bf16(const float *s) {
  const simde_uint32x4_t x = simde_vld1q_u32((const uint32_t *)(const void *)s);
  const simde_uint32x4_t lsb = simde_vandq_u32(simde_vshrq_n_u32(x, 16), U32(1));
  const simde_uint32x4_t r =
      simde_vshrq_n_u32(simde_vaddq_u32(x, simde_vaddq_u32(U32(0x7fff), lsb)), 16);
  const simde_uint32x4_t nan = simde_vorrq_u32(simde_vshrq_n_u32(x, 16), U32(0x40));
  const simde_uint32x4_t isnan = simde_vcgtq_u32(simde_vandq_u32(x, U32(0x7fffffff)), U32(0x7f800000));
  return simde_vmovn_u32(simde_vbslq_u32(isnan, nan, r));
}

AI void enc_bf16_block(uint8_t *d, const float *s, int be) {
  simde_uint8x16_t v =
      simde_vreinterpretq_u8_u16(simde_vcombine_u16(f32x4_to_bf16(s), f32x4_to_bf16(s + 4)));
  if (be) v = simde_vrev16q_u8(v);
  simde_vst1q_u8(d, v);
}

CVT_ENCODE(bf16, 8, CVT_BY_ORDER, enc_bf16_block, (), ())
