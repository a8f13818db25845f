/* CRC-32 (zlib): the portable scalar kernel, crc32_combine and the public entry point. */
#define EMBD_CRC32_TABLES_DEFINE
#include "crc32_scalar.h"
#include "internal.h"

/* Below this length the inline table path beats loading the dispatch pointer and the
 * SIMD kernels' setup; the 12-byte frame header CRC must never pay for dispatch. At 16
 * bytes one slice-by-16 step (independent loads, an XOR tree) is still shorter than a
 * Barrett reduction's three dependent multiplies: chained 12.5 against 18.2 TSC ticks,
 * and no slower in throughput (Zen 3, x86-64 only). From 17 bytes one fold and Barrett
 * beat two dependent table steps. */
#if defined(__x86_64__) || defined(_M_X64)
#define EMBD_CRC32_DISPATCH_MIN 17
#else
/* Elsewhere 16 as before (not measured: on ARMv8 16 bytes are two crc32x instructions). */
#define EMBD_CRC32_DISPATCH_MIN 16
#endif

uint32_t embd_crc32_scalar(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t c = ~crc;
  /* Two independent slice-by-16 streams would need a combine step; the single stream
   * already keeps three load ports busy, so the loop stays simple. */
  while (len >= 16) {
    c = embd_crc32_raw_16(c, p);
    p += 16;
    len -= 16;
  }
  if (len >= 4)
    c = embd_crc32_raw_upto16(c, p, len);
  else
    c = embd_crc32_raw_bytes(c, p, len);
  return ~c;
}

/* A length known at compile time lets the compiler unroll the table step completely:
 * the 12-byte frame header CRC becomes 12 independent loads and an XOR tree. */
#define SMALL_CASE(n) \
  case n: return ~embd_crc32_raw_upto16(c, p, n)

static uint32_t crc32_small(uint32_t crc, const uint8_t *p, size_t len) {
  uint32_t c = ~crc;
  if (len >= 16) {
    c = embd_crc32_raw_16(c, p);
    p += 16;
    len -= 16;
  }
  switch (len) {
    SMALL_CASE(4); SMALL_CASE(5); SMALL_CASE(6); SMALL_CASE(7); SMALL_CASE(8);
    SMALL_CASE(9); SMALL_CASE(10); SMALL_CASE(11); SMALL_CASE(12); SMALL_CASE(13);
    SMALL_CASE(14); SMALL_CASE(15);
    default: return ~embd_crc32_raw_bytes(c, p, len);
  }
}

uint32_t embd_crc32(uint32_t crc, const void *buf, size_t len) {
  if (buf == NULL) return 0; /* zlib: crc32(x, Z_NULL, n) returns the initial value 0 */
  if (len < EMBD_CRC32_DISPATCH_MIN) return crc32_small(crc, (const uint8_t *)buf, len);
  return EMBD_CALL(EMBD_KERNEL_CRC32, 0, embd_crc32_fn)(crc, buf, len);
}

/* The slot's value until the first call resolves every family. */
uint32_t embd_crc32_stub_(uint32_t crc, const void *buf, size_t len) {
  embd_dispatch_init_();
  return EMBD_CALL(EMBD_KERNEL_CRC32, 0, embd_crc32_fn)(crc, buf, len);
}

embd_crc32_fn embd_crc32_impl(size_t index) {
  return (embd_crc32_fn)embd_impl_fn_(EMBD_KERNEL_CRC32, index, 0);
}

/* a * b mod G in the 32-bit reflected domain (bit 31 = x^0). */
static uint32_t crc32_multmodp(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = UINT32_C(1) << 31; m; m >>= 1) {
    if (a & m) p ^= b;
    b = (b & 1) ? (b >> 1) ^ UINT32_C(0xEDB88320) : b >> 1;
  }
  return p;
}

/* x^(8 * len) mod G. */
static uint32_t crc32_x8nmodp(uint64_t len) {
  uint32_t p = UINT32_C(1) << 31; /* x^0 */
  unsigned k = 3;                   /* 8 * len: start at x^(2^3) */
  while (len) {
    if (len & 1) p = crc32_multmodp(embd_crc32_x2n[k & 63], p);
    len >>= 1;
    k++;
  }
  return p;
}

uint32_t embd_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2) {
  return crc32_multmodp(crc32_x8nmodp(len2), crc1) ^ crc2;
}
