/* EMBD frames: a known-answer frame built byte by byte from the seed's TypeScript layout
 * (holds on big-endian hosts too), round trips of random bit patterns (NaN payloads,
 * -0.0, infinities, subnormals) compared as bits over every flag combination and both
 * encoders, every error path with its specific code, view vs copy, unaligned inputs, and
 * frames ending at a guard page.
 *
 * Environment: EMBD_TEST_SCALE, EMBD_TEST_SEED, EMBD_ISA (exits 77 if this CPU cannot run
 * the forced tier).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <pthread.h>
#include <zlib.h>

#include "testutil.h"

static tu_rng g_rng;

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static void put32le(uint8_t *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}
static uint32_t get32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static int host_le(void) {
  uint32_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* A header as the seed's encodeEmbedding writes it, with a chosen flags byte and dims. */
static void seed_header(uint8_t *h, uint8_t flags, uint32_t dims) {
  h[0] = 0x45, h[1] = 0x4D, h[2] = 0x42, h[3] = 0x44;
  h[4] = 1, h[5] = flags, h[6] = 0, h[7] = 0;
  put32le(h + 8, dims);
  put32le(h + 12, tu_crc32_naive(0, h, 12));
}

/* Random float bits, with the special classes overrepresented. */
static uint32_t rand_bits(tu_rng *r) {
  static const uint32_t special[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
                                     0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF,
                                     0x00000001, 0x807FFFFF, 0x00400000, 0x3F800000};
  uint32_t x = tu_u32(r);
  switch (x & 7) {
    case 0: return special[tu_u32(r) % (sizeof special / sizeof special[0])];
    case 1: return (tu_u32(r) & 0x807FFFFF) | 0x7F800000; /* inf or NaN with payload */
    case 2: return tu_u32(r) & 0x807FFFFF;                 /* subnormal or zero */
    default: return tu_u32(r);
  }
}

static const embd_result k_all[] = {EMBD_ERR_FRAME_TOO_SMALL, EMBD_ERR_FRAME_BAD_MAGIC,
                                    EMBD_ERR_FRAME_BAD_VERSION, EMBD_ERR_FRAME_BAD_PADDING,
                                    EMBD_ERR_FRAME_UNKNOWN_FLAGS, EMBD_ERR_FRAME_HEADER_CRC,
                                    EMBD_ERR_FRAME_TRUNCATED, EMBD_ERR_FRAME_DIMS_TOO_LARGE,
                                    EMBD_ERR_FRAME_DIMS_MISMATCH, EMBD_ERR_FRAME_PAYLOAD_CRC,
                                    EMBD_ERR_FRAME_COMPRESSED_LENGTH, EMBD_ERR_FRAME_INFLATE,
                                    EMBD_ERR_FRAME_TRAILING, EMBD_ERR_FRAME_VIEW_UNAVAILABLE,
                                    EMBD_ERR_FRAME_DEFLATE};

static void test_strerror(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_all / sizeof k_all[0]; i++) {
    assert_int_equal((int)k_all[i], (int)(5 + i)); /* appended in order */
    assert_string_not_equal(embd_strerror(k_all[i]), "unknown result");
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(embd_strerror(k_all[i]), embd_strerror(k_all[j]));
  }
}

/* Encodes with f32 into a malloc'ed exact-size-bound buffer; returns it and its length. */
static uint8_t *enc(const float *v, size_t dims, unsigned flags, int level, size_t *len) {
  size_t cap;
  assert_int_equal(embd_frame_size(dims, flags, &cap), EMBD_OK);
  uint8_t *b = malloc(cap ? cap : 1);
  assert_non_null(b);
  embd_frame_encode_options o = {.flags = flags, .level = level};
  assert_int_equal(embd_frame_encode_f32(v, dims, &o, b, cap, len), EMBD_OK);
  assert_true(*len <= cap);
  if (!(flags & EMBD_FRAME_ZLIB)) assert_int_equal(*len, cap);
  return b;
}

/* ---- known answer ---------------------------------------------------------------------- */

static void test_known_answer(void **state) {
  (void)state;
  const float v[3] = {1.0f, -2.5f, 0.0f};
  uint8_t want[28];
  seed_header(want, 0, 3);
  const uint32_t bits[3] = {0x3F800000, 0xC0200000, 0x00000000};
  for (int i = 0; i < 3; i++) put32le(want + 16 + 4 * i, bits[i]);
  /* The header CRC, independently: zlib's crc32. */
  assert_int_equal(get32le(want + 12), (uint32_t)crc32(0, want, 12));

  size_t n = 0;
  uint8_t got[28];
  assert_int_equal(embd_frame_encode_f32(v, 3, NULL, got, sizeof got, &n), EMBD_OK);
  assert_int_equal(n, 28);
  assert_memory_equal(got, want, 28);
  const double d[3] = {1.0, -2.5, 0.0};
  assert_int_equal(embd_frame_encode_f64(d, 3, NULL, got, sizeof got, &n), EMBD_OK);
  assert_memory_equal(got, want, 28);
  printf("[ frame    ] {1.0, -2.5, 0.0}:");
  for (int i = 0; i < 28; i++) printf(" %02x", want[i]);
  printf("\n");

  float out[3];
  embd_frame_info info;
  embd_error err;
  assert_int_equal(embd_frame_decode(want, 28, NULL, out, 3, &info, &err), EMBD_OK);
  for (int i = 0; i < 3; i++) assert_int_equal(f2u(out[i]), bits[i]);
  assert_int_equal(info.dims, 3);
  assert_int_equal(info.flags, 0);
  assert_int_equal(info.version, 1);
  assert_int_equal(info.frame_size, 28);
  assert_int_equal(err.result, EMBD_OK);

  /* The empty vector. */
  uint8_t e[16];
  seed_header(e, 0, 0);
  assert_int_equal(embd_frame_encode_f32(NULL, 0, NULL, got, 16, &n), EMBD_OK);
  assert_int_equal(n, 16);
  assert_memory_equal(got, e, 16);
  assert_int_equal(embd_frame_decode(e, 16, NULL, NULL, 0, &info, NULL), EMBD_OK);
  assert_int_equal(info.dims, 0);
}

/* f64 narrowing: round to nearest even, like DataView.setFloat32. */
static void test_f64_rounding(void **state) {
  (void)state;
  const double d[6] = {0.1, 1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-40, 1.0 + 3 * 0x1p-24, 1e300,
                       0x1p-150 * 1.5};
  const uint32_t want[6] = {0x3DCCCCCD, 0x3F800000, 0x3F800001, 0x3F800002, 0x7F800000,
                            0x00000001};
  uint8_t b[16 + 24];
  size_t n;
  assert_int_equal(embd_frame_encode_f64(d, 6, NULL, b, sizeof b, &n), EMBD_OK);
  for (int i = 0; i < 6; i++) assert_int_equal(get32le(b + 16 + 4 * i), want[i]);
}

/* ---- round trips ----------------------------------------------------------------------- */

static void check_roundtrip(const uint32_t *bits, size_t dims, unsigned flags, int level,
                            int use_f64) {
  float *v = malloc((dims ? dims : 1) * sizeof *v);
  double *dv = malloc((dims ? dims : 1) * sizeof *dv);
  float *expect = malloc((dims ? dims : 1) * sizeof *expect);
  float *out = malloc((dims ? dims : 1) * sizeof *out + 12);
  assert_true(v && dv && expect && out);
  for (size_t i = 0; i < dims; i++) {
    v[i] = u2f(bits[i]);
    /* volatile: the compiler would fold (float)(double)f to f, but the hardware quiets a
     * signalling NaN on the way, as the library's narrowing of the double does. */
    volatile double wide = (double)v[i];
    dv[i] = wide;
    volatile float narrow = (float)dv[i];
    expect[i] = use_f64 ? narrow : v[i];
  }
  size_t cap, n;
  assert_int_equal(embd_frame_size(dims, flags, &cap), EMBD_OK);
  /* One spare byte in front: the frame is also decoded at offsets 1..3. */
  uint8_t *raw = malloc(cap + 4);
  assert_non_null(raw);
  uint8_t *b = raw + 4;
  embd_frame_encode_options o = {.flags = flags, .level = level};
  embd_result r = use_f64 ? embd_frame_encode_f64(dv, dims, &o, b, cap, &n)
                          : embd_frame_encode_f32(v, dims, &o, b, cap, &n);
  assert_int_equal(r, EMBD_OK);
  assert_true(n <= cap);
  if (!(flags & EMBD_FRAME_ZLIB)) {
    assert_int_equal(n, cap);
    /* The payload is the values' bits, little-endian. */
    for (size_t i = 0; i < dims; i++)
      if (get32le(b + 16 + 4 * i) != f2u(expect[i]))
        fail_msg("flags %u dims %zu: payload word %zu = %08x, want %08x", flags, dims, i,
                 get32le(b + 16 + 4 * i), f2u(expect[i]));
  }
  if (flags & EMBD_FRAME_PAYLOAD_CRC)
    assert_int_equal(get32le(b + n - 4), tu_crc32_naive(0, b + 16, n - 20));

  for (size_t off = 0; off < 4; off++) {
    uint8_t *fb = raw + off;
    if (off != 4) memmove(fb, b, n), b = fb;
    embd_frame_info info;
    embd_error err;
    memset(out, 0xA5, dims * sizeof *out);
    r = embd_frame_decode(fb, n, NULL, out, dims, &info, &err);
    if (r != EMBD_OK) fail_msg("decode flags %u dims %zu off %zu: %s", flags, dims, off, err.message);
    assert_int_equal(info.dims, dims);
    assert_int_equal(info.flags, flags);
    assert_int_equal(info.frame_size, n);
    for (size_t i = 0; i < dims; i++)
      if (f2u(out[i]) != f2u(expect[i]))
        fail_msg("flags %u dims %zu off %zu: value %zu = %08x, want %08x", flags, dims, off, i,
                 f2u(out[i]), f2u(expect[i]));
    const float *view = NULL;
    r = embd_frame_view(fb, n, NULL, &view, &info, &err);
    const int viewable = host_le() && !(flags & EMBD_FRAME_ZLIB) &&
                         ((uintptr_t)(fb + 16) % _Alignof(float)) == 0;
    if (viewable) {
      assert_int_equal(r, EMBD_OK);
      assert_ptr_equal((const void *)view, (const void *)(fb + 16));
      for (size_t i = 0; i < dims; i++) assert_int_equal(f2u(view[i]), f2u(expect[i]));
    } else {
      assert_int_equal(r, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
      assert_int_equal(err.result, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
      assert_null(view);
    }
  }
  free(raw);
  free(v);
  free(dv);
  free(expect);
  free(out);
}

static void test_roundtrip(void **state) {
  (void)state;
  const size_t iters = tu_scaled(40, 8);
  uint32_t *bits = malloc(8192 * sizeof *bits);
  assert_non_null(bits);
  for (size_t it = 0; it < iters; it++) {
    size_t dims = it == 0 ? 0 : it == 1 ? 1 : it == 2 ? 8192 : tu_range(&g_rng, 0, 8192);
    if (it % 3 == 0 && it > 2) dims = tu_range(&g_rng, 0, 17);
    for (size_t i = 0; i < dims; i++) bits[i] = rand_bits(&g_rng);
    /* Some compressible vectors too. */
    if (it % 4 == 3)
      for (size_t i = 0; i < dims; i++) bits[i] = (i % 7) ? 0 : bits[i];
    for (unsigned flags = 0; flags < 4; flags++)
      for (int f64 = 0; f64 < 2; f64++)
        check_roundtrip(bits, dims, flags, (flags & 1) ? (int)(it % 10) : 0, f64);
  }
  free(bits);
}

/* ---- header errors ---------------------------------------------------------------------- */

static embd_result expected_for_byte(int i, uint8_t x) {
  if (i < 4) return EMBD_ERR_FRAME_BAD_MAGIC;
  if (i == 4) return EMBD_ERR_FRAME_BAD_VERSION;
  if (i == 5) return (x & ~EMBD_FRAME_KNOWN_FLAGS) ? EMBD_ERR_FRAME_UNKNOWN_FLAGS
                                                   : EMBD_ERR_FRAME_HEADER_CRC;
  if (i < 8) return EMBD_ERR_FRAME_BAD_PADDING;
  return EMBD_ERR_FRAME_HEADER_CRC; /* dims and the CRC itself */
}

static void test_header_corruption(void **state) {
  (void)state;
  const float v[3] = {1.0f, -2.5f, 0.0f};
  static const uint8_t xors[] = {0x01, 0x02, 0x80, 0xFF, 0x10};
  for (unsigned flags = 0; flags < 4; flags++) {
    size_t n;
    uint8_t *b = enc(v, 3, flags, 0, &n);
    for (int i = 0; i < 16; i++) {
      for (size_t k = 0; k < sizeof xors; k++) {
        b[i] ^= xors[k];
        const embd_result want = expected_for_byte(i, (uint8_t)(b[5]));
        embd_error err;
        float out[3];
        const float *view;
        embd_result r = embd_frame_decode(b, n, NULL, out, 3, NULL, &err);
        if (r != want)
          fail_msg("flags %u byte %d ^ %02x: %d (%s), want %d", flags, i, xors[k], r, err.message,
                   want);
        assert_int_equal(err.result, want);
        assert_true(err.message[0] != 0);
        assert_int_equal(embd_frame_view(b, n, NULL, &view, NULL, NULL), want);
        assert_int_equal(embd_frame_header(b, n, NULL, NULL, NULL), want);
        if (want == EMBD_ERR_FRAME_HEADER_CRC) {
          assert_int_equal(err.offset, 12);
          assert_non_null(strstr(err.message, "stored 0x"));
          assert_non_null(strstr(err.message, "computed 0x"));
        }
        b[i] ^= xors[k];
      }
    }
    /* Unchanged again: decodes. */
    float out[3];
    assert_int_equal(embd_frame_decode(b, n, NULL, out, 3, NULL, NULL), EMBD_OK);
    free(b);
  }
  /* A version-3 or flags-4 header with a correct CRC still fails on the field (version 2
   * is the dtype frame: tests/test_frame.c's dtype tests). */
  uint8_t h[16];
  seed_header(h, 0x04, 0);
  assert_int_equal(embd_frame_header(h, 16, NULL, NULL, NULL), EMBD_ERR_FRAME_UNKNOWN_FLAGS);
  seed_header(h, 0, 0);
  h[4] = 3;
  put32le(h + 12, tu_crc32_naive(0, h, 12));
  embd_error herr;
  assert_int_equal(embd_frame_header(h, 16, NULL, NULL, &herr), EMBD_ERR_FRAME_BAD_VERSION);
  assert_int_equal(herr.offset, 4);
  assert_non_null(strstr(herr.message, "unsupported version 3 (byte 4), expected 1 or 2"));
}

/* ---- truncation, trailing bytes, guard pages ---------------------------------------------- */

static void test_truncation(void **state) {
  (void)state;
  const float v[5] = {1.0f, -2.5f, 0.0f, 3.25f, -0.0f};
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, 4096), 0);
  for (unsigned flags = 0; flags < 4; flags++) {
    size_t n;
    uint8_t *b = enc(v, 5, flags, 0, &n);
    for (size_t len = 0; len <= n; len++) {
      uint8_t *p = g.hi - len; /* ends at the guard page */
      memcpy(p, b, len);
      const embd_result want = len == n ? EMBD_OK
                               : len < 16 ? EMBD_ERR_FRAME_TOO_SMALL
                                          : EMBD_ERR_FRAME_TRUNCATED;
      float out[5];
      const float *view;
      embd_error err;
      embd_result r = embd_frame_decode(p, len, NULL, out, 5, NULL, &err);
      if (r != want) fail_msg("flags %u len %zu/%zu: %d (%s), want %d", flags, len, n, r,
                              err.message, want);
      r = embd_frame_view(p, len, NULL, &view, NULL, NULL);
      assert_true(r == want || (want == EMBD_OK && r == EMBD_ERR_FRAME_VIEW_UNAVAILABLE));
      assert_int_equal(embd_frame_header(p, len, NULL, NULL, NULL), want);
    }
    /* One byte more: trailing, unless allowed. */
    uint8_t *p = g.hi - (n + 1);
    memcpy(p, b, n);
    p[n] = 0;
    float out[5];
    embd_frame_info info;
    embd_error err;
    assert_int_equal(embd_frame_decode(p, n + 1, NULL, out, 5, NULL, &err), EMBD_ERR_FRAME_TRAILING);
    assert_int_equal(err.offset, n);
    embd_frame_decode_options o = {.max_dims = 0, .expected_dims = 0, .allow_trailing = 1};
    assert_int_equal(embd_frame_decode(p, n + 1, &o, out, 5, &info, &err), EMBD_OK);
    assert_int_equal(info.frame_size, n);
    for (int i = 0; i < 5; i++) assert_int_equal(f2u(out[i]), f2u(v[i]));
    /* Output capacity. */
    assert_int_equal(embd_frame_decode(p, n, NULL, out, 4, NULL, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
    free(b);
  }
  assert_int_equal(embd_frame_decode(NULL, 0, NULL, NULL, 0, NULL, NULL), EMBD_ERR_FRAME_TOO_SMALL);
  tu_guard_free(&g);
}

static int dims_fit(uint64_t d) { return d <= (SIZE_MAX - 24) / 4; }

/* ---- dims limits -------------------------------------------------------------------------- */

static void test_dims(void **state) {
  (void)state;
  const float v[3] = {1.0f, 2.0f, 3.0f};
  size_t n;
  uint8_t *b = enc(v, 3, 0, 0, &n);
  float out[3];
  embd_error err;
  embd_frame_decode_options o = {.max_dims = 2, .expected_dims = 0, .allow_trailing = 0};
  assert_int_equal(embd_frame_decode(b, n, &o, out, 3, NULL, &err), EMBD_ERR_FRAME_DIMS_TOO_LARGE);
  assert_non_null(strstr(err.message, "dims 3"));
  o.max_dims = 3;
  assert_int_equal(embd_frame_decode(b, n, &o, out, 3, NULL, &err), EMBD_OK);
  o.expected_dims = 4;
  assert_int_equal(embd_frame_decode(b, n, &o, out, 3, NULL, &err), EMBD_ERR_FRAME_DIMS_MISMATCH);
  assert_int_equal(err.offset, 8);
  o.expected_dims = 3;
  assert_int_equal(embd_frame_decode(b, n, &o, out, 3, NULL, &err), EMBD_OK);
  free(b);

  /* Huge dims in a header-only buffer: no overflow, no read past 16 bytes. */
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, 4096), 0);
  static const uint32_t huge[] = {0xFFFFFFFFu, 0x40000000u, 0x3FFFFFFCu, 0x3FFFFFFBu, 0x80000000u};
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    for (uint8_t flags = 0; flags < 4; flags++) {
      uint8_t *h = g.hi - 16;
      seed_header(h, flags, huge[i]);
      const embd_result want = !dims_fit(huge[i])
                                   ? EMBD_ERR_FRAME_DIMS_TOO_LARGE
                                   : EMBD_ERR_FRAME_TRUNCATED;
      assert_int_equal(embd_frame_decode(h, 16, NULL, out, 3, NULL, &err), want);
      o.max_dims = 1000;
      o.expected_dims = 0;
      assert_int_equal(embd_frame_decode(h, 16, &o, out, 3, NULL, &err),
                       EMBD_ERR_FRAME_DIMS_TOO_LARGE);
      o.max_dims = 0;
      o.expected_dims = 7;
      assert_int_equal(embd_frame_decode(h, 16, &o, out, 3, NULL, &err),
                       want == EMBD_ERR_FRAME_DIMS_TOO_LARGE ? want : EMBD_ERR_FRAME_DIMS_MISMATCH);
    }
  }
  tu_guard_free(&g);

  /* Size reporting. */
  size_t s;
  assert_int_equal(embd_frame_size(3, 0, &s), EMBD_OK);
  assert_int_equal(s, 28);
  assert_int_equal(embd_frame_size(3, EMBD_FRAME_PAYLOAD_CRC, &s), EMBD_OK);
  assert_int_equal(s, 32);
  assert_int_equal(embd_frame_size(3, 4, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(3, 0, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(SIZE_MAX, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(SIZE_MAX / 4, EMBD_FRAME_ZLIB, &s), EMBD_ERR_INVALID_ARGUMENT);
  if (SIZE_MAX > UINT32_MAX) {
    assert_int_equal(embd_frame_size((size_t)UINT32_MAX, 3, &s), EMBD_OK);
    assert_int_equal(embd_frame_size((size_t)UINT32_MAX + 1, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  }
}

/* ---- dims against a 32-bit size_t ----------------------------------------------------------- */

/* The largest dims whose frame (header 16, compressed length 4, trailer 4, 4 bytes a value)
 * fits in size_t: 0x3FFFFFF9 with a 32-bit size_t; every uint32_t dims with a 64-bit one. */
#if SIZE_MAX <= UINT32_MAX
#define DIMS_LIMIT ((uint64_t)0x3FFFFFF9u)
#else
#define DIMS_LIMIT ((uint64_t)UINT32_MAX)
#endif

/* Headers with dims at and past the 32-bit limit: with a 32-bit size_t dims*4 wraps, so
 * these must be EMBD_ERR_FRAME_DIMS_TOO_LARGE there (and EMBD_ERR_FRAME_TRUNCATED, the
 * payload being missing, with a 64-bit size_t), from the header alone: the frame ends at
 * a guard page, so a read past it faults. embd_frame_size and embd_batch_size report
 * EMBD_ERR_INVALID_ARGUMENT rather than a wrapped size. */
static void test_dims_size_t_limit(void **state) {
  (void)state;
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, 4096), 0);
  static const uint32_t dims[] = {0x3FFFFFF9u, 0x3FFFFFFAu, 0x3FFFFFFFu, 0x40000000u,
                                  0x40000001u, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  float out[4];
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    const uint32_t d = dims[i];
    const int too_large = !dims_fit(d);
#if SIZE_MAX <= UINT32_MAX
    assert_int_equal(too_large, d >= 0x3FFFFFFAu);
#else
    assert_false(too_large);
#endif
    for (uint8_t flags = 0; flags < 4; flags++) {
      /* Header only; for compressed frames also with a length field (the largest, and 1). */
      for (int withlen = 0; withlen < ((flags & EMBD_FRAME_ZLIB) ? 3 : 1); withlen++) {
        const size_t len = withlen ? 20 : 16;
        uint8_t *h = g.hi - len;
        seed_header(h, flags, d);
        if (withlen) put32le(h + 16, withlen == 1 ? 0xFFFFFFFFu : 1);
        const embd_result want =
            too_large ? EMBD_ERR_FRAME_DIMS_TOO_LARGE : EMBD_ERR_FRAME_TRUNCATED;
        const size_t want_off = too_large ? 8 : len;
        embd_error err;
        embd_frame_info info;
        memset(&err, 0, sizeof err);
        assert_int_equal(embd_frame_header(h, len, NULL, &info, &err), want);
        assert_int_equal(err.result, want);
        assert_int_equal(err.offset, want_off);
        if (too_large) assert_non_null(strstr(err.message, "does not fit in this host's size_t"));
        assert_int_equal(embd_frame_decode(h, len, NULL, out, 4, &info, &err), want);
        assert_int_equal(err.offset, want_off);
        const float *view = out;
        assert_int_equal(embd_frame_view(h, len, NULL, &view, &info, &err), want);
        assert_null(view);
        /* A dims limit or an expected dims does not change which check fires first. */
        embd_frame_decode_options o = {.max_dims = 0, .expected_dims = 0, .allow_trailing = 1};
        o.expected_dims = 4;
        assert_int_equal(embd_frame_header(h, len, &o, &info, &err),
                         too_large ? want : EMBD_ERR_FRAME_DIMS_MISMATCH);
        o.expected_dims = 0;
        o.max_dims = UINT32_MAX;
        assert_int_equal(embd_frame_header(h, len, &o, &info, &err), want);
      }
    }
  }
  tu_guard_free(&g);

  /* embd_frame_size: OK with the exact (uncompressed) size or a bound that did not wrap,
   * or EMBD_ERR_INVALID_ARGUMENT when the size does not fit in size_t. */
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    for (unsigned flags = 0; flags < 4; flags++) {
      const uint64_t d = dims[i];
      const uint64_t exact = 16 + 4 * d + ((flags & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0);
      size_t s = 0;
      const embd_result r = embd_frame_size((size_t)d, flags, &s);
      if (d > DIMS_LIMIT || exact > SIZE_MAX) {
        assert_int_equal(r, EMBD_ERR_INVALID_ARGUMENT);
        continue;
      }
      if (flags & EMBD_FRAME_ZLIB) {
        if (r == EMBD_OK) assert_true((uint64_t)s >= exact + 4);
        else assert_int_equal(r, EMBD_ERR_INVALID_ARGUMENT); /* the bound does not fit */
      } else {
        assert_int_equal(r, EMBD_OK);
        assert_true((uint64_t)s == exact);
      }
    }
  }
  size_t s;
#if SIZE_MAX <= UINT32_MAX
  assert_int_equal(embd_frame_size(0x3FFFFFF9u, 0, &s), EMBD_OK);
  assert_true(s == 0xFFFFFFF4u);
  assert_int_equal(embd_frame_size(0x3FFFFFF9u, EMBD_FRAME_PAYLOAD_CRC, &s), EMBD_OK);
  assert_true(s == 0xFFFFFFF8u);
  assert_int_equal(embd_frame_size(0x3FFFFFF9u, EMBD_FRAME_ZLIB, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(0x3FFFFFFAu, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(0x40000000u, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size(0xFFFFFFFFu, 3, &s), EMBD_ERR_INVALID_ARGUMENT);
#else
  assert_int_equal(embd_frame_size(0xFFFFFFFFu, 0, &s), EMBD_OK);
  assert_true((uint64_t)s == 16 + 4 * (uint64_t)0xFFFFFFFFu);
  assert_int_equal(embd_frame_size((size_t)UINT32_MAX + 1, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
#endif

  /* embd_batch_size: 4 + count * frame size, never wrapped. */
  static const struct {
    size_t count, dims;
  } bc[] = {{1, 0x3FFFFFF9u}, {2, 0x1FFFFFFCu}, {2, 0x20000000u}, {3, 0x15555555u},
            {0x10000000u, 1}, {UINT32_MAX, 1}, {UINT32_MAX, 0}, {0, 0x3FFFFFF9u}};
  for (size_t i = 0; i < sizeof bc / sizeof bc[0]; i++) {
    for (unsigned flags = 0; flags < 4; flags += 2) { /* exact sizes: no zlib bound */
      const uint64_t one = 16 + 4 * (uint64_t)bc[i].dims + ((flags & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0);
      const uint64_t want = 4 + (uint64_t)bc[i].count * one; /* < 2^64: count, dims < 2^32 */
      size_t bs = 0;
      const embd_result r = embd_batch_size(bc[i].count, bc[i].dims, flags, &bs);
      if (want > SIZE_MAX || bc[i].dims > DIMS_LIMIT) {
        assert_int_equal(r, EMBD_ERR_INVALID_ARGUMENT);
      } else {
        assert_int_equal(r, EMBD_OK);
        assert_true((uint64_t)bs == want);
      }
    }
  }
#if SIZE_MAX <= UINT32_MAX
  assert_int_equal(embd_batch_size(1, 0x3FFFFFF9u, EMBD_FRAME_PAYLOAD_CRC, &s), EMBD_OK);
  assert_true(s == 0xFFFFFFFCu);
  assert_int_equal(embd_batch_size(2, 0x20000000u, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_size(UINT32_MAX, 1, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_size(1, 0x40000000u, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
#else
  assert_int_equal(embd_batch_size(UINT32_MAX, 1, 0, &s), EMBD_OK);
  assert_true((uint64_t)s == 4 + 20 * (uint64_t)UINT32_MAX);
  assert_int_equal(embd_batch_size((size_t)UINT32_MAX + 1, 1, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
#endif
}

/* ---- encoder errors -------------------------------------------------------------------- */

static void test_encode_errors(void **state) {
  (void)state;
  float v[64];
  for (int i = 0; i < 64; i++) v[i] = (float)i * 0.37f;
  for (unsigned flags = 0; flags < 4; flags++) {
    size_t n, cap;
    uint8_t *b = enc(v, 64, flags, 0, &n);
    assert_int_equal(embd_frame_size(64, flags, &cap), EMBD_OK);
    uint8_t *o = malloc(cap);
    assert_non_null(o);
    embd_frame_encode_options opt = {.flags = flags, .level = 0};
    size_t w;
    /* Exactly the written size fits; one less does not. */
    assert_int_equal(embd_frame_encode_f32(v, 64, &opt, o, n, &w), EMBD_OK);
    assert_int_equal(w, n);
    assert_memory_equal(o, b, n);
    for (size_t c = 0; c < n; c += (c < 40 ? 1 : 13))
      assert_int_equal(embd_frame_encode_f32(v, 64, &opt, o, c, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(embd_frame_encode_f32(v, 64, &opt, o, n - 1, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
    free(o);
    free(b);
  }
  size_t w;
  uint8_t o[64];
  embd_frame_encode_options bad = {.flags = 8, .level = 0};
  assert_int_equal(embd_frame_encode_f32(v, 1, &bad, o, 64, &w), EMBD_ERR_INVALID_ARGUMENT);
  embd_frame_encode_options badlvl = {.flags = 1, .level = 10};
  assert_int_equal(embd_frame_encode_f32(v, 1, &badlvl, o, 64, &w), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_encode_f32(NULL, 1, NULL, o, 64, &w), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_encode_f32(v, 1, NULL, o, 64, NULL), EMBD_ERR_INVALID_ARGUMENT);
}

/* ---- compressed payload errors -------------------------------------------------------------- */

/* A compressed frame around arbitrary zlib bytes: header(dims, flags 1|crc), length field
 * `clen`, the `zn` bytes, then `extra` filler bytes, then the trailer if crc. */
static uint8_t *zframe(uint32_t dims, const uint8_t *z, size_t zn, uint32_t clen, size_t extra,
                       int crc, size_t *len) {
  size_t n = 20 + zn + extra + (crc ? 4 : 0);
  uint8_t *b = malloc(n);
  assert_non_null(b);
  seed_header(b, (uint8_t)(EMBD_FRAME_ZLIB | (crc ? EMBD_FRAME_PAYLOAD_CRC : 0)), dims);
  put32le(b + 16, clen);
  memcpy(b + 20, z, zn);
  memset(b + 20 + zn, 0x5A, extra);
  if (crc) put32le(b + n - 4, tu_crc32_naive(0, b + 16, n - 20));
  *len = n;
  return b;
}

static uint8_t *zcompress(const void *src, size_t n, size_t *zn) {
  uLongf cap = compressBound((uLong)n);
  uint8_t *z = malloc(cap);
  assert_non_null(z);
  assert_int_equal(compress2(z, &cap, src, (uLong)n, 9), Z_OK);
  *zn = cap;
  return z;
}

/* The library's test hook (src/wire/wire.h): non-zero, compressed payloads are decoded by
 * zlib's inflate alone, as before libdeflate. */
extern int embd_inflate_zlib_only_;

/* embd_frame_decode of b into an output that ends at a guard page; the floats (or bytes)
 * copied to keep (dims of them) when keep is not NULL. */
static embd_result zdecode_once(const uint8_t *b, size_t n, uint32_t dims, embd_error *err,
                                float *keep) {
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, 4096 + n), 0);
  uint8_t *p = g.hi - n;
  memcpy(p, b, n);
  /* The output ends at a guard page too (dims*4 bytes, no more). */
  tu_guard go = {0};
  assert_int_equal(tu_guard_alloc(&go, (size_t)dims * 4 + 4096), 0);
  float *out = (float *)(void *)(go.hi - (size_t)dims * 4);
  embd_result r = embd_frame_decode(p, n, NULL, out, dims, NULL, err);
  if (keep && r == EMBD_OK) memcpy(keep, out, (size_t)dims * 4);
  tu_guard_free(&go);
  tu_guard_free(&g);
  return r;
}

/* zdecode_once with the library's decoder, then with zlib's inflate alone (the decoder
 * before libdeflate): the result, the error's offset and message and the values must be
 * the same. Returns the result. */
static embd_result zdecode(const uint8_t *b, size_t n, uint32_t dims, embd_error *err) {
  float *a = malloc((size_t)dims * 4 + 4), *z = malloc((size_t)dims * 4 + 4);
  assert_non_null(a);
  assert_non_null(z);
  embd_error ez;
  memset(err, 0, sizeof *err);
  memset(&ez, 0, sizeof ez);
  const embd_result r = zdecode_once(b, n, dims, err, a);
  embd_inflate_zlib_only_ = 1;
  const embd_result rz = zdecode_once(b, n, dims, &ez, z);
  embd_inflate_zlib_only_ = 0;
  if (r != rz || err->offset != ez.offset || strcmp(err->message, ez.message) != 0)
    fail_msg("decoders disagree: %d at %llu \"%s\" / zlib alone %d at %llu \"%s\"", (int)r,
             (unsigned long long)err->offset, err->message, (int)rz,
             (unsigned long long)ez.offset, ez.message);
  if (r == EMBD_OK) assert_memory_equal(a, z, (size_t)dims * 4);
  free(a);
  free(z);
  return r;
}

/* Every one-bit flip and every truncation of a compressed frame's zlib stream (and every
 * byte of it set to 0x00 and 0xFF): both decoders agree on each (zdecode). The inputs: a
 * few value patterns at zlib levels 0 (stored blocks), 1, 6 and 9, and the fixed-Huffman
 * strategy. */
static void test_zlib_differential(void **state) {
  (void)state;
  enum { DIMS = 64 };
  uint8_t payload[DIMS * 4];
  embd_error err;
  const int pats = (int)tu_scaled(3, 1); /* the emulators' runs: the first pattern */
  for (int pat = 0; pat < pats; pat++) {
    for (int i = 0; i < DIMS; i++) {
      const float f = pat == 0 ? (float)i * 0.37f - 9.0f : pat == 1 ? (i % 7 == 0 ? 1.5f : 0.0f)
                                                                    : (float)(i & 3);
      put32le(payload + 4 * i, f2u(f));
    }
    const int levels[] = {0, 1, 6, 9, -1}; /* -1: Z_FIXED at level 6 */
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
      uint8_t z[DIMS * 4 + 64];
      z_stream zs;
      memset(&zs, 0, sizeof zs);
      assert_int_equal(deflateInit2(&zs, levels[li] < 0 ? 6 : levels[li], Z_DEFLATED, 15, 8,
                                    levels[li] < 0 ? Z_FIXED : Z_DEFAULT_STRATEGY),
                       Z_OK);
      zs.next_in = payload;
      zs.avail_in = sizeof payload;
      zs.next_out = z;
      zs.avail_out = sizeof z;
      assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
      const size_t zn = sizeof z - zs.avail_out;
      deflateEnd(&zs);
      size_t n;
      uint8_t *b = zframe(DIMS, z, zn, (uint32_t)zn, 0, 0, &n);
      assert_int_equal(zdecode(b, n, DIMS, &err), EMBD_OK);
      for (size_t at = 20; at < n; at++) {
        const uint8_t keep = b[at];
        for (int bit = 0; bit < 8; bit++) {
          b[at] = (uint8_t)(keep ^ (1u << bit));
          (void)zdecode(b, n, DIMS, &err);
        }
        b[at] = 0x00;
        (void)zdecode(b, n, DIMS, &err);
        b[at] = 0xFF;
        (void)zdecode(b, n, DIMS, &err);
        b[at] = keep;
      }
      free(b);
      for (size_t cut = 0; cut < zn; cut++) { /* the stream cut short, length field to match */
        b = zframe(DIMS, z, cut, (uint32_t)cut, 0, 0, &n);
        assert_int_not_equal(zdecode(b, n, DIMS, &err), EMBD_OK);
        free(b);
      }
      for (uint32_t d = DIMS - 2; d <= DIMS + 2; d++) { /* shorter and longer than the frame */
        b = zframe(d, z, zn, (uint32_t)zn, 0, 0, &n);
        assert_int_equal(zdecode(b, n, d, &err), d == DIMS ? EMBD_OK : EMBD_ERR_FRAME_INFLATE);
        free(b);
      }
      uint8_t zt[sizeof z + 2]; /* garbage after the stream, inside the length */
      memcpy(zt, z, zn);
      zt[zn] = 0x03;
      zt[zn + 1] = 0x00;
      for (size_t extra = 1; extra <= 2; extra++) {
        b = zframe(DIMS, zt, zn + extra, (uint32_t)(zn + extra), 0, 0, &n);
        assert_int_equal(zdecode(b, n, DIMS, &err), EMBD_ERR_FRAME_COMPRESSED_LENGTH);
        free(b);
      }
    }
  }
}

static void test_zlib_errors(void **state) {
  (void)state;
  uint8_t payload[4 * 9];
  for (int i = 0; i < 9; i++) put32le(payload + 4 * i, f2u((float)i - 4.5f));
  size_t zn, n;
  uint8_t *z = zcompress(payload, 32, &zn); /* 8 dims */
  embd_error err;
  for (int crc = 0; crc < 2; crc++) {
    uint8_t *b = zframe(8, z, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_OK);
    free(b);
    /* Length one short: the stream is cut. */
    b = zframe(8, z, zn - 1, (uint32_t)zn - 1, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_COMPRESSED_LENGTH);
    free(b);
    /* Trailing garbage after the stream, inside the length. */
    b = zframe(8, z, zn, (uint32_t)zn + 3, 3, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_COMPRESSED_LENGTH);
    assert_non_null(strstr(err.message, "trailing"));
    free(b);
    /* Length beyond the buffer. */
    b = zframe(8, z, zn, (uint32_t)zn + 100, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_TRUNCATED);
    free(b);
    b = zframe(8, z, zn, 0xFFFFFFFFu, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_TRUNCATED);
    free(b);
    /* Bytes after the frame, outside the length. */
    b = zframe(8, z, zn, (uint32_t)zn, 2, 0, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_TRAILING);
    free(b);
    /* Fewer and more dims than the stream holds. */
    b = zframe(7, z, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 7, &err), EMBD_ERR_FRAME_INFLATE);
    assert_non_null(strstr(err.message, "more than"));
    free(b);
    b = zframe(9, z, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 9, &err), EMBD_ERR_FRAME_INFLATE);
    free(b);
    b = zframe(0, z, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 0, &err), EMBD_ERR_FRAME_INFLATE);
    free(b);
    /* Corrupt zlib header and corrupt adler32. */
    uint8_t *zc = malloc(zn);
    memcpy(zc, z, zn);
    zc[0] ^= 0x0F;
    b = zframe(8, zc, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_INFLATE);
    free(b);
    memcpy(zc, z, zn);
    zc[zn - 1] ^= 0x01;
    b = zframe(8, zc, zn, (uint32_t)zn, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_INFLATE);
    free(b);
    free(zc);
    /* Not zlib at all; an empty stream. */
    uint8_t junk[7] = {1, 2, 3, 4, 5, 6, 7};
    b = zframe(8, junk, 7, 7, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_INFLATE);
    free(b);
    b = zframe(8, junk, 0, 0, 0, crc, &n);
    assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_COMPRESSED_LENGTH);
    free(b);
  }
  /* Payload CRC errors, checked before inflating. */
  uint8_t *b = zframe(8, z, zn, (uint32_t)zn, 0, 1, &n);
  b[25] ^= 0x40;
  assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_PAYLOAD_CRC);
  b[25] ^= 0x40;
  b[n - 1] ^= 0x01;
  assert_int_equal(zdecode(b, n, 8, &err), EMBD_ERR_FRAME_PAYLOAD_CRC);
  assert_int_equal(err.offset, n - 4);
  free(b);
  free(z);

  /* A compression bomb: 16 MiB of zeros in ~16 KiB, claiming 4 dims. */
  const size_t big = (size_t)16 << 20;
  uint8_t *zeros = calloc(big, 1);
  assert_non_null(zeros);
  z = zcompress(zeros, big, &zn);
  free(zeros);
  b = zframe(4, z, zn, (uint32_t)zn, 0, 0, &n);
  assert_int_equal(zdecode(b, n, 4, &err), EMBD_ERR_FRAME_INFLATE);
  free(b);
  b = zframe(0, z, zn, (uint32_t)zn, 0, 0, &n);
  assert_int_equal(zdecode(b, n, 0, &err), EMBD_ERR_FRAME_INFLATE);
  free(b);
  free(z);
}

/* Compressed frames decoded from several threads at once, each thread with its own
 * decompressor (src/wire/frame.c keeps one per thread, freed when the thread ends: the
 * ASan build's leak check sees any left): every decode right, good and bad frames mixed. */
typedef struct zthread {
  const uint8_t *good, *bad;
  size_t good_n, bad_n;
  const float *want;
  int fails;
} zthread;

static void *zthread_run(void *arg) {
  zthread *t = (zthread *)arg;
  float out[256];
  for (int i = 0; i < 200; i++) {
    if (embd_frame_decode(t->good, t->good_n, NULL, out, 256, NULL, NULL) != EMBD_OK ||
        memcmp(out, t->want, sizeof out) != 0)
      t->fails++;
    if (embd_frame_decode(t->bad, t->bad_n, NULL, out, 256, NULL, NULL) != EMBD_ERR_FRAME_INFLATE)
      t->fails++;
  }
  return NULL;
}

static void test_zlib_threads(void **state) {
  (void)state;
  float v[256];
  for (int i = 0; i < 256; i++) v[i] = i % 5 ? 0.0f : (float)i * 0.5f;
  size_t cap, n;
  assert_int_equal(embd_frame_size(256, EMBD_FRAME_ZLIB, &cap), EMBD_OK);
  uint8_t *good = malloc(cap), *bad = malloc(cap);
  assert_non_null(good);
  assert_non_null(bad);
  embd_frame_encode_options eo = {.flags = EMBD_FRAME_ZLIB};
  assert_int_equal(embd_frame_encode_f32(v, 256, &eo, good, cap, &n), EMBD_OK);
  memcpy(bad, good, n);
  bad[n - 1] ^= 0x01; /* the Adler-32 */
  enum { T = 4 };
  pthread_t th[T];
  zthread z[T];
  for (int i = 0; i < T; i++) {
    z[i] = (zthread){good, bad, n, n, v, 0};
    assert_int_equal(pthread_create(&th[i], NULL, zthread_run, &z[i]), 0);
  }
  for (int i = 0; i < T; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(z[i].fails, 0);
  }
  free(good);
  free(bad);
}

static void test_payload_crc(void **state) {
  (void)state;
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = (float)i;
  size_t n;
  uint8_t *b = enc(v, 16, EMBD_FRAME_PAYLOAD_CRC, 0, &n);
  for (size_t i = 16; i < n; i++) {
    b[i] ^= 0x08;
    float out[16];
    const float *view;
    embd_error err;
    assert_int_equal(embd_frame_decode(b, n, NULL, out, 16, NULL, &err), EMBD_ERR_FRAME_PAYLOAD_CRC);
    assert_non_null(strstr(err.message, "payload CRC mismatch"));
    assert_int_equal(embd_frame_view(b, n, NULL, &view, NULL, NULL), EMBD_ERR_FRAME_PAYLOAD_CRC);
    b[i] ^= 0x08;
  }
  free(b);
}

/* ---- dtype frames (version 2) ------------------------------------------------------------ */

/* A version-2 header built byte by byte from docs/FORMAT.md (independent of the encoder). */
static void v2_header(uint8_t *h, uint8_t flags, uint8_t dtype, uint32_t dims) {
  h[0] = 0x45, h[1] = 0x4D, h[2] = 0x42, h[3] = 0x44;
  h[4] = 2, h[5] = flags, h[6] = dtype, h[7] = 0;
  put32le(h + 8, dims);
  put32le(h + 12, tu_crc32_naive(0, h, 12));
}

static void test_dtype_known_answer(void **state) {
  (void)state;
  /* f16 {1, -2, 0.5, 65504}: 0x3c00 0xc000 0x3800 0x7bff, little-endian */
  uint8_t want[16 + 8];
  v2_header(want, 0, EMBD_DTYPE_F16, 4);
  static const uint8_t pay[8] = {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0xff, 0x7b};
  memcpy(want + 16, pay, 8);
  assert_int_equal(want[4], 2);
  assert_int_equal(want[6], 1);

  const float v[4] = {1.0f, -2.0f, 0.5f, 65504.0f};
  uint8_t b[64];
  size_t n = 0, sz = 0;
  embd_frame_encode_options o = {0};
  o.dtype = EMBD_DTYPE_F16;
  assert_int_equal(embd_frame_size_dtype(4, EMBD_DTYPE_F16, 0, &sz), EMBD_OK);
  assert_int_equal(sz, 24);
  assert_int_equal(embd_frame_encode_f32(v, 4, &o, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(n, 24);
  assert_memory_equal(b, want, 24);
  /* from doubles too */
  const double dv[4] = {1.0, -2.0, 0.5, 65504.0};
  assert_int_equal(embd_frame_encode_f64(dv, 4, &o, b, sizeof b, &n), EMBD_OK);
  assert_memory_equal(b, want, 24);
  /* raw, from LE bytes and from BE bytes: the same frame */
  assert_int_equal(embd_frame_encode_raw(pay, 4, EMBD_DTYPE_F16, EMBD_ORDER_LE, NULL, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(n, 24);
  assert_memory_equal(b, want, 24);
  static const uint8_t pay_be[8] = {0x3c, 0x00, 0xc0, 0x00, 0x38, 0x00, 0x7b, 0xff};
  assert_int_equal(embd_frame_encode_raw(pay_be, 4, EMBD_DTYPE_F16, EMBD_ORDER_BE, &o, b, sizeof b, &n), EMBD_OK);
  assert_memory_equal(b, want, 24);

  /* decode to floats: the values; info says f16, version 2 */
  float out[4];
  embd_frame_info info;
  embd_error err;
  assert_int_equal(embd_frame_decode(want, 24, NULL, out, 4, &info, &err), EMBD_OK);
  for (int i = 0; i < 4; i++) assert_true(out[i] == v[i]);
  assert_int_equal(info.dtype, EMBD_DTYPE_F16);
  assert_int_equal(info.version, 2);
  assert_int_equal(info.dims, 4);
  assert_int_equal(info.value_bytes, 8);
  assert_int_equal(info.payload_size, 8);
  assert_int_equal(info.frame_size, 24);
  assert_int_equal(info.reserved_[0] | info.reserved_[1], 0);
  /* raw in both orders */
  uint8_t raw[8];
  assert_int_equal(embd_frame_decode_raw(want, 24, NULL, raw, 8, EMBD_ORDER_LE, &info, &err), EMBD_OK);
  assert_memory_equal(raw, pay, 8);
  assert_int_equal(embd_frame_decode_raw(want, 24, NULL, raw, 8, EMBD_ORDER_BE, &info, &err), EMBD_OK);
  assert_memory_equal(raw, pay_be, 8);
  /* the float view refuses, naming the dtype; the raw view works where the host allows */
  const float *fv = (const float *)1;
  assert_int_equal(embd_frame_view(want, 24, NULL, &fv, &info, &err), EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
  assert_null(fv);
  assert_int_equal(err.offset, 6);
  assert_non_null(strstr(err.message, "the frame carries f16"));
  assert_int_equal(info.dtype, EMBD_DTYPE_F16);
  const void *rv = NULL;
  embd_result r = embd_frame_view_raw(want, 24, NULL, &rv, &info, &err);
  if (host_le()) {
    assert_int_equal(r, EMBD_OK); /* want is a stack array: 16 + its 4-aligned start */
    assert_ptr_equal(rv, want + 16);
  } else {
    assert_int_equal(r, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
    assert_non_null(strstr(err.message, "big-endian"));
  }
  /* the seed-layout worked example of docs/FORMAT.md for int8 {-1, 2, 127, -128} */
  uint8_t i8[20];
  v2_header(i8, 0, EMBD_DTYPE_INT8, 4);
  i8[16] = 0xff, i8[17] = 2, i8[18] = 127, i8[19] = 0x80;
  const float iv[4] = {-1, 2, 127, -128};
  o.dtype = EMBD_DTYPE_INT8;
  assert_int_equal(embd_frame_encode_f32(iv, 4, &o, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(n, 20);
  assert_memory_equal(b, i8, 20);
  const uint8_t ex[20] = {0x45, 0x4d, 0x42, 0x44, 0x02, 0x00, 0x05, 0x00, 0x04, 0x00,
                          0x00, 0x00, 0x68, 0xd6, 0x72, 0x4a, 0xff, 0x02, 0x7f, 0x80};
  assert_memory_equal(b, ex, 20); /* the bytes docs/FORMAT.md shows */
}

/* Random elements of a dtype (any bytes are elements). */
static void rand_elems(uint8_t *p, size_t bytes) { tu_fill(&g_rng, p, bytes); }

static void swap_elems(uint8_t *p, size_t bytes, unsigned size) {
  for (size_t i = 0; size > 1 && i + size <= bytes; i += size)
    for (unsigned a = 0, z = size - 1; a < z; a++, z--) {
      const uint8_t t = p[i + a];
      p[i + a] = p[i + z];
      p[i + z] = t;
    }
}

static void dtype_roundtrip(embd_dtype dt, size_t dims, unsigned flags) {
  size_t vb = 0, cap = 0, n = 0;
  assert_int_equal(embd_dtype_bytes(dt, dims, &vb), EMBD_OK);
  assert_int_equal(embd_frame_size_dtype(dims, dt, flags, &cap), EMBD_OK);
  const unsigned size = embd_dtype_bits(dt) / 8;
  uint8_t *data = malloc(vb + 1), *be = malloc(vb + 1), *frame = malloc(cap + 1),
          *raw = malloc(vb + 1);
  float *f = malloc((dims + 1) * sizeof *f), *g = malloc((dims + 1) * sizeof *g);
  assert_true(data && be && frame && raw && f && g);
  rand_elems(data, vb);
  memcpy(be, data, vb);
  swap_elems(be, vb, size);
  embd_frame_encode_options o = {.flags = flags, .level = (flags & 1) ? 1 : 0};
  assert_int_equal(embd_frame_encode_raw(data, dims, dt, EMBD_ORDER_LE, &o, frame, cap, &n), EMBD_OK);
  assert_true(n <= cap);
  if (!(flags & EMBD_FRAME_ZLIB)) assert_int_equal(n, cap);
  assert_int_equal(frame[4], dt == EMBD_DTYPE_F32 ? 1 : 2);
  assert_int_equal(frame[6], dt == EMBD_DTYPE_F32 ? 0 : (uint8_t)dt);
  assert_int_equal(frame[7], 0);
  /* the same frame from big-endian data */
  uint8_t *frame2 = malloc(cap + 1);
  size_t n2 = 0;
  assert_int_equal(embd_frame_encode_raw(be, dims, dt, EMBD_ORDER_BE, &o, frame2, cap, &n2), EMBD_OK);
  assert_int_equal(n2, n);
  assert_memory_equal(frame2, frame, n);
  /* need: the whole frame */
  uint64_t need = 0;
  assert_int_equal(embd_frame_need(frame, n, NULL, &need, NULL), EMBD_OK);
  assert_int_equal(need, n);
  /* raw decode in both orders */
  embd_frame_info info;
  embd_error err;
  assert_int_equal(embd_frame_decode_raw(frame, n, NULL, raw, vb, EMBD_ORDER_LE, &info, &err), EMBD_OK);
  if (vb) assert_memory_equal(raw, data, vb);
  assert_int_equal(info.dtype, dt);
  assert_int_equal(info.value_bytes, vb);
  assert_int_equal(embd_frame_decode_raw(frame, n, NULL, raw, vb, EMBD_ORDER_BE, &info, &err), EMBD_OK);
  if (vb) assert_memory_equal(raw, be, vb);
  /* float decode: embd_to_f32 of the elements, bit for bit (the inflate-into-the-tail
   * path for compressed narrow dtypes) */
  assert_int_equal(embd_to_f32(g, data, dims, dt, EMBD_ORDER_LE), EMBD_OK);
  assert_int_equal(embd_frame_decode(frame, n, NULL, f, dims, &info, &err), EMBD_OK);
  if (dims) assert_memory_equal(f, g, dims * sizeof *f);
  /* re-encoding the floats gives the same frame when no element is a NaN (the other
   * conversions are exact both ways; a NaN may be quieted) */
  int nan = 0;
  for (size_t i = 0; i < dims; i++) nan |= f[i] != f[i];
  if (!nan) {
    o.dtype = (uint64_t)dt;
    assert_int_equal(embd_frame_encode_f32(f, dims, &o, frame2, cap, &n2), EMBD_OK);
    assert_int_equal(n2, n);
    assert_memory_equal(frame2, frame, n);
    o.dtype = 0;
  }
  /* views: the float one only for f32, the raw one for what needs no conversion */
  const void *rv = NULL;
  embd_result r = embd_frame_view_raw(frame, n, NULL, &rv, &info, &err);
  const int viewable = !(flags & EMBD_FRAME_ZLIB) && (size <= 1 || host_le());
  if (viewable) {
    assert_int_equal(r, EMBD_OK); /* malloc'ed: + 16 is aligned */
    if (vb) assert_memory_equal(rv, data, vb);
  } else {
    assert_int_equal(r, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
  }
  const float *fv = NULL;
  r = embd_frame_view(frame, n, NULL, &fv, &info, &err);
  if (dt == EMBD_DTYPE_F32 && viewable) assert_int_equal(r, EMBD_OK);
  else assert_int_equal(r, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
  /* unaligned: the frame at an odd address; single-byte dtypes still view */
  memmove(frame2 + 1, frame, n);
  r = embd_frame_view_raw(frame2 + 1, n, NULL, &rv, &info, &err);
  if (!(flags & EMBD_FRAME_ZLIB) && size <= 1) {
    assert_int_equal(r, EMBD_OK);
    assert_ptr_equal(rv, frame2 + 17);
  } else {
    assert_int_equal(r, EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
    if (!(flags & EMBD_FRAME_ZLIB) && host_le()) assert_non_null(strstr(err.message, "aligned"));
  }
  assert_int_equal(embd_frame_decode_raw(frame2 + 1, n, NULL, raw, vb, EMBD_ORDER_LE, &info, &err), EMBD_OK);
  if (vb) assert_memory_equal(raw, data, vb);
  /* output too small: the size needed, in bytes (raw) or floats */
  if (vb) {
    memset(&info, 0, sizeof info);
    assert_int_equal(embd_frame_decode_raw(frame, n, NULL, raw, vb - 1, EMBD_ORDER_LE, &info, &err),
                     EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(info.value_bytes, vb);
    assert_int_equal(err.offset, 8);
    assert_non_null(strstr(err.message, embd_dtype_name(dt)));
    assert_int_equal(embd_frame_decode(frame, n, NULL, f, dims - 1, &info, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(info.dims, dims);
  }
  free(frame2);
  free(data), free(be), free(frame), free(raw), free(f), free(g);
}

static void test_dtype_roundtrip(void **state) {
  (void)state;
  static const size_t dims[] = {0, 8, 16, 24, 256, 264, 1000, 2056};
  for (int dt = 0; dt < EMBD_DTYPE_COUNT_; dt++)
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++)
      for (unsigned flags = 0; flags < 4; flags++) dtype_roundtrip((embd_dtype)dt, dims[k], flags);
  /* odd dims for the byte-or-wider dtypes */
  for (int dt = 0; dt < EMBD_DTYPE_BINARY; dt++)
    for (size_t d = 1; d < 12; d += 3)
      for (unsigned flags = 0; flags < 4; flags++) dtype_roundtrip((embd_dtype)dt, d, flags);
}

/* One header check on a v2 header (re-CRC'd) expecting r at off with `sub`. */
static void expect_hdr(const uint8_t *h, size_t len, embd_result r, size_t off, const char *sub) {
  embd_error err;
  float out[64];
  assert_int_equal(embd_frame_header(h, len, NULL, NULL, &err), r);
  assert_int_equal(err.offset, off);
  if (!strstr(err.message, sub)) fail_msg("message \"%s\" lacks \"%s\"", err.message, sub);
  assert_int_equal(embd_frame_decode(h, len, NULL, out, 64, NULL, &err), r);
  const void *rv;
  assert_int_equal(embd_frame_view_raw(h, len, NULL, &rv, NULL, &err), r);
  /* need validates the header only: its errors, or the frame's size (16 + value bytes) */
  uint64_t need = 0;
  const int hdr_error = r != EMBD_ERR_FRAME_TRUNCATED && r != EMBD_ERR_FRAME_TRAILING;
  assert_int_equal(embd_frame_need(h, len, NULL, &need, &err), hdr_error ? r : EMBD_OK);
  if (!hdr_error) {
    size_t vb;
    assert_int_equal(embd_dtype_bytes((embd_dtype)h[6], get32le(h + 8), &vb), EMBD_OK);
    assert_int_equal(need, 16 + vb);
  }
}

static void test_dtype_errors(void **state) {
  (void)state;
  uint8_t h[16 + 64];
  memset(h, 0, sizeof h);
  /* unknown dtype codes */
  v2_header(h, 0, 9, 4);
  expect_hdr(h, 16 + 4, EMBD_ERR_FRAME_BAD_DTYPE, 6, "unknown dtype code 9 (byte 6; known: 0-8)");
  v2_header(h, 0, 0xff, 4);
  expect_hdr(h, 16 + 4, EMBD_ERR_FRAME_BAD_DTYPE, 6, "unknown dtype code 255");
  /* version 2, byte 7 non-zero */
  v2_header(h, 0, EMBD_DTYPE_INT8, 4);
  h[7] = 0x01;
  put32le(h + 12, tu_crc32_naive(0, h, 12));
  expect_hdr(h, 16 + 4, EMBD_ERR_FRAME_BAD_PADDING, 7, "byte 7 is 0x01 (version 2)");
  /* version 1 keeps both bytes as padding */
  seed_header(h, 0, 1);
  h[6] = EMBD_DTYPE_INT8;
  put32le(h + 12, tu_crc32_naive(0, h, 12));
  expect_hdr(h, 16 + 4, EMBD_ERR_FRAME_BAD_PADDING, 6, "bytes 6-7 are 0x05 0x00 (version 1)");
  /* packed bits: dims not a multiple of 8 */
  v2_header(h, 0, EMBD_DTYPE_UBINARY, 12);
  expect_hdr(h, 16 + 2, EMBD_ERR_DTYPE_LENGTH, 8, "dims 12 of dtype ubinary: packed bits need a multiple of 8");
  v2_header(h, 0, EMBD_DTYPE_BINARY, 1);
  expect_hdr(h, 16 + 1, EMBD_ERR_DTYPE_LENGTH, 8, "dims 1 of dtype binary");
  /* truncated: the dtype's size, not dims*4 */
  v2_header(h, 0, EMBD_DTYPE_BF16, 4);
  expect_hdr(h, 16 + 7, EMBD_ERR_FRAME_TRUNCATED, 23, "4 dims of bf16 need 24 bytes, got 23");
  /* trailing: a 24-byte bf16 frame in 25 bytes */
  expect_hdr(h, 16 + 9, EMBD_ERR_FRAME_TRAILING, 24, "1 bytes after the 24-byte frame");
  /* ubinary 16 dims = 2 bytes of payload, exactly */
  v2_header(h, 0, EMBD_DTYPE_UBINARY, 16);
  h[16] = 0x80, h[17] = 0x01;
  float out[16];
  embd_frame_info info;
  assert_int_equal(embd_frame_decode(h, 18, NULL, out, 16, &info, NULL), EMBD_OK);
  assert_int_equal(info.frame_size, 18);
  for (int i = 0; i < 16; i++) assert_true(out[i] == ((i == 0 || i == 15) ? 1.0f : 0.0f));
  /* a version-2 frame saying f32 is accepted and reads as float32 (documented) */
  uint8_t f2[16 + 8];
  v2_header(f2, 0, EMBD_DTYPE_F32, 2);
  put32le(f2 + 16, 0x3f800000u);
  put32le(f2 + 20, 0xc0200000u);
  assert_int_equal(embd_frame_decode(f2, 24, NULL, out, 2, &info, NULL), EMBD_OK);
  assert_true(out[0] == 1.0f && out[1] == -2.5f);
  assert_int_equal(info.version, 2);
  assert_int_equal(info.dtype, EMBD_DTYPE_F32);
  const float *fv = NULL;
  embd_result r = embd_frame_view(f2, 24, NULL, &fv, NULL, NULL);
  assert_int_equal(r, host_le() ? EMBD_OK : EMBD_ERR_FRAME_VIEW_UNAVAILABLE);
  /* a compressed f16 frame whose stream inflates to dims*4 (a float32 payload) fails */
  uint8_t z[16 + 4 + 64];
  const uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uLongf zn = 64;
  assert_int_equal(compress(z + 20, &zn, src, 8), Z_OK);
  v2_header(z, EMBD_FRAME_ZLIB, EMBD_DTYPE_F16, 2); /* 2 dims of f16: 4 bytes, not 8 */
  put32le(z + 16, (uint32_t)zn);
  embd_error err;
  assert_int_equal(embd_frame_decode(z, 20 + zn, NULL, out, 2, NULL, &err), EMBD_ERR_FRAME_INFLATE);
  assert_non_null(strstr(err.message, "more than the 4 bytes of 2 dims of f16"));
  v2_header(z, EMBD_FRAME_ZLIB, EMBD_DTYPE_F16, 4); /* exactly 8 bytes: fine */
  assert_int_equal(embd_frame_decode(z, 20 + zn, NULL, out, 4, NULL, &err), EMBD_OK);
  uint8_t rb[8];
  assert_int_equal(embd_frame_decode_raw(z, 20 + zn, NULL, rb, 8, EMBD_ORDER_LE, NULL, &err), EMBD_OK);
  assert_memory_equal(rb, src, 8);
  v2_header(z, EMBD_FRAME_ZLIB, EMBD_DTYPE_INT8, 16); /* 16 bytes wanted, 8 there */
  assert_int_equal(embd_frame_decode(z, 20 + zn, NULL, out, 16, NULL, &err), EMBD_ERR_FRAME_INFLATE);
  assert_non_null(strstr(err.message, "inflates to 8 bytes, dims 16 of int8 need 16"));
  /* decode_raw: a bad order */
  assert_int_equal(embd_frame_decode_raw(f2, 24, NULL, rb, 8, (embd_byte_order)7, NULL, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
}

static void test_dtype_encode_errors(void **state) {
  (void)state;
  uint8_t b[128];
  size_t n = 99, sz;
  embd_frame_encode_options o = {0};
  const float v[8] = {1, 2, 3, 1.5f, 0, 0, 0, 0};
  /* int8/uint8: exact integers in range only */
  o.dtype = EMBD_DTYPE_INT8;
  assert_int_equal(embd_frame_encode_f32(v, 8, &o, b, sizeof b, &n), EMBD_ERR_DTYPE_RANGE);
  assert_int_equal(n, 0);
  const float big[2] = {127, 128};
  n = 99;
  assert_int_equal(embd_frame_encode_f32(big, 2, &o, b, sizeof b, &n), EMBD_ERR_DTYPE_RANGE);
  assert_int_equal(n, 0);
  o.flags = EMBD_FRAME_ZLIB; /* the compressed path stages and fails the same way */
  assert_int_equal(embd_frame_encode_f32(big, 2, &o, b, sizeof b, &n), EMBD_ERR_DTYPE_RANGE);
  assert_int_equal(n, 0);
  o.flags = 0;
  assert_int_equal(embd_frame_encode_f32(big, 1, &o, b, sizeof b, &n), EMBD_OK);
  const double neg[1] = {-1};
  o.dtype = EMBD_DTYPE_UINT8;
  assert_int_equal(embd_frame_encode_f64(neg, 1, &o, b, sizeof b, &n), EMBD_ERR_DTYPE_RANGE);
  /* unknown dtypes */
  o.dtype = 9;
  n = 99;
  assert_int_equal(embd_frame_encode_f32(v, 8, &o, b, sizeof b, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
  assert_int_equal(embd_frame_encode_raw(v, 2, (embd_dtype)9, EMBD_ORDER_LE, NULL, b, sizeof b, &n),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_size_dtype(8, (embd_dtype)9, 0, &sz), EMBD_ERR_INVALID_ARGUMENT);
  /* raw: opt->dtype 0 or the same dtype only; a known order only */
  o.dtype = EMBD_DTYPE_F16;
  assert_int_equal(embd_frame_encode_raw(v, 2, EMBD_DTYPE_BF16, EMBD_ORDER_LE, &o, b, sizeof b, &n),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_frame_encode_raw(v, 2, EMBD_DTYPE_F16, EMBD_ORDER_LE, &o, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(embd_frame_encode_raw(v, 2, EMBD_DTYPE_F16, (embd_byte_order)2, NULL, b, sizeof b, &n),
                   EMBD_ERR_INVALID_ARGUMENT);
  /* packed bits: dims a multiple of 8 */
  o.dtype = EMBD_DTYPE_UBINARY;
  assert_int_equal(embd_frame_encode_f32(v, 7, &o, b, sizeof b, &n), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_frame_size_dtype(7, EMBD_DTYPE_BINARY, 0, &sz), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_frame_encode_f32(v, 8, &o, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(n, 17);
  assert_int_equal(b[16], 0xf0); /* 1 2 3 1.5 > 0, then four zeros: MSB first */
  /* too small: the size needed */
  o.dtype = EMBD_DTYPE_BF16;
  assert_int_equal(embd_frame_encode_f32(v, 8, &o, b, 31, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 32);
  o.flags = EMBD_FRAME_PAYLOAD_CRC;
  assert_int_equal(embd_frame_size_dtype(8, EMBD_DTYPE_BF16, o.flags, &sz), EMBD_OK);
  assert_int_equal(sz, 36);
  assert_int_equal(embd_frame_encode_f32(v, 8, &o, b, sizeof b, &n), EMBD_OK);
  assert_int_equal(n, 36);
  assert_int_equal(get32le(b + 32), tu_crc32_naive(0, b + 16, 16));
  /* the float32 size is the f32 dtype's */
  size_t a, c;
  assert_int_equal(embd_frame_size(100, 3, &a), EMBD_OK);
  assert_int_equal(embd_frame_size_dtype(100, EMBD_DTYPE_F32, 3, &c), EMBD_OK);
  assert_int_equal(a, c);
}

int main(void) {
  int s = tu_isa_preflight("test_frame");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strerror),       cmocka_unit_test(test_known_answer),
      cmocka_unit_test(test_f64_rounding),   cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_header_corruption), cmocka_unit_test(test_truncation),
      cmocka_unit_test(test_dims),           cmocka_unit_test(test_dims_size_t_limit),
      cmocka_unit_test(test_encode_errors),
      cmocka_unit_test(test_zlib_errors),    cmocka_unit_test(test_zlib_differential), cmocka_unit_test(test_zlib_threads),    cmocka_unit_test(test_payload_crc),
      cmocka_unit_test(test_dtype_known_answer), cmocka_unit_test(test_dtype_roundtrip),
      cmocka_unit_test(test_dtype_errors),   cmocka_unit_test(test_dtype_encode_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
