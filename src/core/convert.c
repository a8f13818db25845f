/* dtype conversions (embd/convert.h): the dtype table, the scalar reference kernels, and
 * the public entry points. The SIMD kernels (src/arch) are checked bit for bit against
 * these functions; the scalar functions in turn against numpy and exact definitions
 * (tests/test_convert.c). */
#include "embd/convert.h"
#include "internal.h"

/* ---- the dtype table ------------------------------------------------------------- */

static const struct {
  const char *name;
  unsigned bits;
} dtypes[] = {
    [EMBD_DTYPE_F32] = {"f32", 32},           [EMBD_DTYPE_F16] = {"f16", 16},
    [EMBD_DTYPE_BF16] = {"bf16", 16},         [EMBD_DTYPE_FP8_E4M3] = {"fp8-e4m3", 8},
    [EMBD_DTYPE_FP8_E5M2] = {"fp8-e5m2", 8},  [EMBD_DTYPE_INT8] = {"int8", 8},
    [EMBD_DTYPE_UINT8] = {"uint8", 8},        [EMBD_DTYPE_BINARY] = {"binary", 1},
    [EMBD_DTYPE_UBINARY] = {"ubinary", 1},
};
_Static_assert(sizeof dtypes / sizeof dtypes[0] == EMBD_DTYPE_COUNT_, "one row per dtype");

/* The servers' spellings (vLLM embed_dtype, torch dtype names, numpy-ish short names). */
static const struct {
  const char *name;
  embd_dtype dtype;
} aliases[] = {
    {"float32", EMBD_DTYPE_F32},        {"float", EMBD_DTYPE_F32},
    {"float16", EMBD_DTYPE_F16},        {"half", EMBD_DTYPE_F16},
    {"bfloat16", EMBD_DTYPE_BF16},      {"fp8_e4m3", EMBD_DTYPE_FP8_E4M3},
    {"float8_e4m3fn", EMBD_DTYPE_FP8_E4M3}, {"e4m3", EMBD_DTYPE_FP8_E4M3},
    {"fp8_e5m2", EMBD_DTYPE_FP8_E5M2},  {"float8_e5m2", EMBD_DTYPE_FP8_E5M2},
    {"e5m2", EMBD_DTYPE_FP8_E5M2},
};

static int valid_dtype(embd_dtype d) { return (unsigned)d < EMBD_DTYPE_COUNT_; }

const char *embd_dtype_name(embd_dtype dtype) {
  return valid_dtype(dtype) ? dtypes[dtype].name : NULL;
}

unsigned embd_dtype_bits(embd_dtype dtype) { return valid_dtype(dtype) ? dtypes[dtype].bits : 0; }

static int name_is(const char *want, const char *name, size_t len) {
  return strlen(want) == len && memcmp(want, name, len) == 0;
}

embd_result embd_dtype_parse(const char *name, size_t len, embd_dtype *out) {
  if (!name || !out) return EMBD_ERR_INVALID_ARGUMENT;
  for (int d = 0; d < EMBD_DTYPE_COUNT_; d++)
    if (name_is(dtypes[d].name, name, len)) {
      *out = (embd_dtype)d;
      return EMBD_OK;
    }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (name_is(aliases[i].name, name, len)) {
      *out = aliases[i].dtype;
      return EMBD_OK;
    }
  return EMBD_ERR_INVALID_ARGUMENT;
}

embd_result embd_dtype_bytes(embd_dtype dtype, size_t n, size_t *bytes) {
  if (!valid_dtype(dtype) || !bytes) return EMBD_ERR_INVALID_ARGUMENT;
  const unsigned bits = dtypes[dtype].bits;
  if (bits == 1) {
    if (n % 8) return EMBD_ERR_DTYPE_LENGTH;
    *bytes = n / 8;
    return EMBD_OK;
  }
  if (n > SIZE_MAX / (bits / 8)) return EMBD_ERR_INVALID_ARGUMENT;
  *bytes = n * (bits / 8);
  return EMBD_OK;
}

embd_result embd_dtype_count(embd_dtype dtype, size_t bytes, size_t *n) {
  if (!valid_dtype(dtype) || !n) return EMBD_ERR_INVALID_ARGUMENT;
  const unsigned bits = dtypes[dtype].bits;
  if (bits == 1) {
    if (bytes > SIZE_MAX / 8) return EMBD_ERR_INVALID_ARGUMENT;
    *n = bytes * 8;
    return EMBD_OK;
  }
  if (bytes % (bits / 8)) return EMBD_ERR_DTYPE_LENGTH;
  *n = bytes / (bits / 8);
  return EMBD_OK;
}

/* ---- scalar reference: to float32 -------------------------------------------------- */

static inline float f32_of_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline uint32_t bits_of_f32(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
/* Element i of a float array at any alignment (embd/convert.h: "Any alignment"): through
 * memcpy, since a float access at a misaligned address is undefined behaviour (UBSan
 * flags it; strict-alignment targets fault). */
static inline void st_f32(float *dst, size_t i, uint32_t b) {
  memcpy((unsigned char *)dst + 4 * i, &b, 4);
}
static inline uint32_t ld_f32(const float *src, size_t i) {
  uint32_t b;
  memcpy(&b, (const unsigned char *)src + 4 * i, 4);
  return b;
}
static inline uint16_t ld16(const uint8_t *p, int be) {
  return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}
static inline void st16(uint8_t *p, uint16_t v, int be) {
  p[be ? 0 : 1] = (uint8_t)(v >> 8);
  p[be ? 1 : 0] = (uint8_t)v;
}

uint32_t embd_f16_to_f32_bits(uint16_t h) {
  const uint32_t s = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  /* NaNs come out quiet (bit 22 set), payload and sign kept: what F16C's vcvtph2ps and
   * AArch64's fcvtl do, so that every tier agrees with this reference. */
  if (e == 0x1f) return s | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0);
  if (e == 0) {
    if (m == 0) return s;
    unsigned sh = 0; /* normalise the subnormal: value = m * 2^-24 */
    while (!(m & 0x400u)) {
      m <<= 1;
      sh++;
    }
    return s | ((113u - sh) << 23) | ((m & 0x3ffu) << 13);
  }
  return s | ((e + 112u) << 23) | (m << 13);
}

/* fp8 e4m3fn: bias 7, no infinities; S.1111.111 is NaN (returned as a quiet NaN of the
 * same sign). Subnormals: m * 2^-9. */
uint32_t embd_e4m3_to_f32_bits(uint8_t b) {
  const uint32_t s = (uint32_t)(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
  if (e == 15 && m == 7) return s | 0x7fc00000u;
  if (e == 0) return s | bits_of_f32((float)m * 0x1p-9f);
  return s | ((e + 120u) << 23) | (m << 20);
}

void embd_cvt_f16_scalar(float *dst, const void *src, size_t n, int be) {
  const uint8_t *p = (const uint8_t *)src;
  for (size_t i = 0; i < n; i++) st_f32(dst, i, embd_f16_to_f32_bits(ld16(p + 2 * i, be)));
}

void embd_cvt_bf16_scalar(float *dst, const void *src, size_t n, int be) {
  const uint8_t *p = (const uint8_t *)src;
  for (size_t i = 0; i < n; i++) st_f32(dst, i, (uint32_t)ld16(p + 2 * i, be) << 16);
}

void embd_cvt_e4m3_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  const uint8_t *p = (const uint8_t *)src;
  for (size_t i = 0; i < n; i++) st_f32(dst, i, embd_e4m3_to_f32_bits(p[i]));
}

/* e5m2 is the upper byte of a binary16: the same NaN rule as f16. */
void embd_cvt_e5m2_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  const uint8_t *p = (const uint8_t *)src;
  for (size_t i = 0; i < n; i++)
    st_f32(dst, i, embd_f16_to_f32_bits((uint16_t)(p[i] << 8)));
}

void embd_cvt_i8_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  const int8_t *p = (const int8_t *)src;
  for (size_t i = 0; i < n; i++) st_f32(dst, i, bits_of_f32((float)p[i]));
}

void embd_cvt_u8_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  const uint8_t *p = (const uint8_t *)src;
  for (size_t i = 0; i < n; i++) st_f32(dst, i, bits_of_f32((float)p[i]));
}

/* Packed bits, MSB first: n bits = n / 8 bytes. */
static void unpack_bits(float *dst, const uint8_t *p, size_t n, uint8_t flip, float zero,
                        float one) {
  for (size_t i = 0; i < n / 8; i++) {
    const unsigned b = p[i] ^ flip;
    for (int j = 0; j < 8; j++)
      st_f32(dst, 8 * i + (size_t)j, bits_of_f32((b >> (7 - j)) & 1 ? one : zero));
  }
}

void embd_cvt_binary_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  unpack_bits(dst, (const uint8_t *)src, n, 0x80, -1.0f, 1.0f);
}

void embd_cvt_ubinary_scalar(float *dst, const void *src, size_t n, int be) {
  (void)be;
  unpack_bits(dst, (const uint8_t *)src, n, 0, 0.0f, 1.0f);
}

/* ---- scalar reference: from float32 ------------------------------------------------ */

/* The magnitude `a` (a finite float32's bits without the sign, below the format's
 * overflow point) as a minifloat with `mbits` mantissa bits whose smallest normal has
 * float32 exponent field `emin` (f16: 113, e5m2: 113, e4m3: 121): round to nearest even,
 * subnormals included. Returns the minifloat's bits without the sign; a carry out of the
 * mantissa moves into the exponent, as the encoding's order allows. */
static uint32_t round_minifloat(uint32_t a, unsigned mbits, uint32_t emin) {
  const uint32_t e = a >> 23;
  if (e >= emin) {
    const unsigned drop = 23 - mbits;
    uint32_t r = a - ((emin - 1) << 23); /* rebias: the minifloat's exponent 1 is emin */
    r += ((1u << (drop - 1)) - 1) + ((r >> drop) & 1u);
    return r >> drop;
  }
  if (e == 0) return 0; /* float32 subnormals are far below every minifloat's */
  /* Subnormal result: q = value / 2^(emin - 127 - mbits) = mant >> shift. */
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 23 - mbits + (emin - e);
  if (shift > 25) return 0;
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return q;
}

uint16_t embd_f32_to_f16_bits(uint32_t x) {
  const uint16_t s = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu)); /* quiet NaN */
  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u); /* >= 65520 (and inf): inf */
  return (uint16_t)(s | round_minifloat(a, 10, 113));
}

uint16_t embd_f32_to_bf16_bits(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static uint8_t f32_to_e4m3(uint32_t x) {
  const uint8_t s = (uint8_t)((x >> 24) & 0x80u);
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return s | 0x7fu; /* no infinities: inf and NaN are NaN */
  const uint32_t q = round_minifloat(a, 3, 121);
  return (uint8_t)(s | (q > 0x7eu ? 0x7fu : q)); /* rounding past 448: NaN, as torch */
}

static uint8_t f32_to_e5m2(uint32_t x) {
  const uint8_t s = (uint8_t)((x >> 24) & 0x80u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7fu;
  if (a >= 0x7f800000u) return s | 0x7cu;
  const uint32_t q = round_minifloat(a, 2, 113);
  return (uint8_t)(s | (q >= 0x7cu ? 0x7cu : q)); /* overflow: infinity */
}

void embd_enc_f16_scalar(void *dst, const float *src, size_t n, int be) {
  uint8_t *p = (uint8_t *)dst;
  for (size_t i = 0; i < n; i++) st16(p + 2 * i, embd_f32_to_f16_bits(ld_f32(src, i)), be);
}

void embd_enc_bf16_scalar(void *dst, const float *src, size_t n, int be) {
  uint8_t *p = (uint8_t *)dst;
  for (size_t i = 0; i < n; i++) st16(p + 2 * i, embd_f32_to_bf16_bits(ld_f32(src, i)), be);
}

/* ---- dispatch stubs and public entry points ---------------------------------------- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_BE 0
#else
#define HOST_BE 1
#endif

/* Slot of a dtype in the two families: dtype - 1 (f32 belongs to bswap32). */
#define SLOT(d) ((int)(d) - 1)

/* The stubs: the slots' values until the first call resolves every family. One per slot
 * so that each forwards to its own dtype. */
#define CVT_STUB(name, dtype)                                                   \
  void embd_cvt_##name##_stub_(float *dst, const void *src, size_t n, int be) { \
    embd_dispatch_init_();                                                      \
    EMBD_CALL(EMBD_KERNEL_CONVERT, SLOT(dtype), embd_to_f32_fn)(dst, src, n, be); \
  }
CVT_STUB(f16, EMBD_DTYPE_F16)
CVT_STUB(bf16, EMBD_DTYPE_BF16)
CVT_STUB(e4m3, EMBD_DTYPE_FP8_E4M3)
CVT_STUB(e5m2, EMBD_DTYPE_FP8_E5M2)
CVT_STUB(i8, EMBD_DTYPE_INT8)
CVT_STUB(u8, EMBD_DTYPE_UINT8)
CVT_STUB(binary, EMBD_DTYPE_BINARY)
CVT_STUB(ubinary, EMBD_DTYPE_UBINARY)
#define ENC_STUB(name, dtype)                                                   \
  void embd_enc_##name##_stub_(void *dst, const float *src, size_t n, int be) { \
    embd_dispatch_init_();                                                      \
    EMBD_CALL(EMBD_KERNEL_CONVERT_ENCODE, SLOT(dtype), embd_from_f32_fn)(dst, src, n, be); \
  }
ENC_STUB(f16, EMBD_DTYPE_F16)
ENC_STUB(bf16, EMBD_DTYPE_BF16)

embd_result embd_to_f32(float *dst, const void *src, size_t n, embd_dtype dtype,
                        embd_byte_order order) {
  if (!valid_dtype(dtype) || (order != EMBD_ORDER_LE && order != EMBD_ORDER_BE))
    return EMBD_ERR_INVALID_ARGUMENT;
  if (dtypes[dtype].bits == 1 && n % 8) return EMBD_ERR_DTYPE_LENGTH;
  if (n == 0) return EMBD_OK;
  if (!dst || !src) return EMBD_ERR_INVALID_ARGUMENT;
  const int be = order == EMBD_ORDER_BE;
  if (dtype == EMBD_DTYPE_F32) {
    if (be == HOST_BE)
      embd_copy(dst, src, 4 * n);
    else
      embd_bswap32(dst, src, n);
    return EMBD_OK;
  }
  EMBD_CALL(EMBD_KERNEL_CONVERT, SLOT(dtype), embd_to_f32_fn)(dst, src, n, be);
  return EMBD_OK;
}

embd_result embd_from_f32(void *dst, const float *src, size_t n, embd_dtype dtype,
                          embd_byte_order order, embd_error *err) {
  if (!valid_dtype(dtype) || (order != EMBD_ORDER_LE && order != EMBD_ORDER_BE))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "unknown dtype or byte order");
  if (dtypes[dtype].bits == 1 && n % 8)
    return embd_fail(err, EMBD_ERR_DTYPE_LENGTH, 0,
                     "%s: %zu dims is not a multiple of 8 (packed bits)", dtypes[dtype].name, n);
  if (n && (!dst || !src)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer");
  const int be = order == EMBD_ORDER_BE;
  uint8_t *p = (uint8_t *)dst;
  switch (dtype) {
    case EMBD_DTYPE_F32:
      if (be == HOST_BE)
        embd_copy(dst, src, 4 * n);
      else
        embd_bswap32(dst, src, n);
      break;
    case EMBD_DTYPE_F16:
    case EMBD_DTYPE_BF16:
      if (n) EMBD_CALL(EMBD_KERNEL_CONVERT_ENCODE, SLOT(dtype), embd_from_f32_fn)(dst, src, n, be);
      break;
    case EMBD_DTYPE_FP8_E4M3:
      for (size_t i = 0; i < n; i++) p[i] = f32_to_e4m3(ld_f32(src, i));
      break;
    case EMBD_DTYPE_FP8_E5M2:
      for (size_t i = 0; i < n; i++) p[i] = f32_to_e5m2(ld_f32(src, i));
      break;
    case EMBD_DTYPE_INT8:
    case EMBD_DTYPE_UINT8: {
      const float lo = dtype == EMBD_DTYPE_INT8 ? -128.0f : 0.0f;
      const float hi = dtype == EMBD_DTYPE_INT8 ? 127.0f : 255.0f;
      for (size_t i = 0; i < n; i++) {
        const float v = f32_of_bits(ld_f32(src, i));
        /* !(in range) also catches NaN; the range check first keeps the cast defined. */
        if (!(v >= lo && v <= hi) || (float)(int)v != v)
          return embd_fail(err, EMBD_ERR_DTYPE_RANGE, i,
                           "value %zu (%.9g) is not an integer in %s's range %.0f..%.0f", i,
                           (double)v, dtypes[dtype].name, (double)lo, (double)hi);
        p[i] = (uint8_t)(int)v; /* int8: the two's complement byte */
      }
      break;
    }
    case EMBD_DTYPE_BINARY:
    case EMBD_DTYPE_UBINARY: {
      const uint8_t flip = dtype == EMBD_DTYPE_BINARY ? 0x80 : 0;
      for (size_t i = 0; i < n / 8; i++) {
        unsigned b = 0;
        for (int j = 0; j < 8; j++)
          b = b << 1 | (f32_of_bits(ld_f32(src, 8 * i + (size_t)j)) > 0.0f);
        p[i] = (uint8_t)(b ^ flip);
      }
      break;
    }
    default:
      return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "unknown dtype");
  }
  embd_no_error(err);
  return EMBD_OK;
}

embd_to_f32_fn embd_to_f32_impl(size_t index, embd_dtype dtype) {
  if (!valid_dtype(dtype) || dtype == EMBD_DTYPE_F32) return NULL;
  return (embd_to_f32_fn)embd_impl_fn_(EMBD_KERNEL_CONVERT, index, SLOT(dtype));
}

embd_from_f32_fn embd_from_f32_impl(size_t index, embd_dtype dtype) {
  if (dtype != EMBD_DTYPE_F16 && dtype != EMBD_DTYPE_BF16) return NULL;
  return (embd_from_f32_fn)embd_impl_fn_(EMBD_KERNEL_CONVERT_ENCODE, index, SLOT(dtype));
}
