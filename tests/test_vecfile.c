/* Elasticsearch / OpenSearch _bulk lines and FAISS .fvecs / .bvecs (embd/vecfile.h): the
 * ES documentation's example ([1.0, 2.0]: little-endian base64 "AACAPwAAAEA=", big-endian
 * "P4AAAEAAAAA="), whole lines written by hand, long vectors against a base64 encoder and
 * byte swap written here, JSON escaping, int8 and bit hex, every error with its row and
 * element, the row-or-nothing rule (canary), exact sizes; .fvecs/.bvecs layout bytes
 * (int32 d little-endian, then the elements) as numpy.fromfile reads them.
 *
 * Environment: EMBD_TEST_SEED, EMBD_ISA (exits 77 if this CPU cannot run the forced tier).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <math.h>

#include "testutil.h"

#define OK(x) assert_int_equal((x), EMBD_OK)
#define CANARY 0x5A

static tu_rng g_rng;

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* RFC 4648 base64 of n bytes, the plain way. */
static size_t ref_b64(char *o, const uint8_t *s, size_t n) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t x = (uint32_t)s[i] << 16;
    if (i + 1 < n) x |= (uint32_t)s[i + 1] << 8;
    if (i + 2 < n) x |= s[i + 2];
    o[k++] = a[x >> 18];
    o[k++] = a[(x >> 12) & 63];
    o[k++] = i + 1 < n ? a[(x >> 6) & 63] : '=';
    o[k++] = i + 2 < n ? a[x & 63] : '=';
  }
  return k;
}

/* Writes and compares with the expected text; checks the size function and the canary. */
static void expect_bulk(const embd_bulk_options *o, const float *v, size_t count, size_t dims,
                        const int64_t *ids, const char *want) {
  char buf[1024];
  memset(buf, CANARY, sizeof buf);
  size_t size, n;
  embd_error err;
  OK(embd_bulk_size(o, count, dims, ids, &size));
  assert_int_equal(size, strlen(want));
  OK(embd_bulk_write_f32(o, v, count, dims, ids, buf, sizeof buf, &n, &err));
  assert_int_equal(n, strlen(want));
  if (memcmp(buf, want, n)) fail_msg("got \"%.*s\", want \"%s\"", (int)n, buf, want);
  assert_int_equal((uint8_t)buf[n], CANARY);
  /* One byte short: too small, nothing written, the size. */
  memset(buf, CANARY, sizeof buf);
  assert_int_equal(embd_bulk_write_f32(o, v, count, dims, ids, buf, size - 1, &n, &err),
                   size ? EMBD_ERR_OUTPUT_TOO_SMALL : EMBD_ERR_INVALID_ARGUMENT);
  if (size) assert_int_equal(n, size);
  assert_int_equal((uint8_t)buf[0], CANARY);
}

static void test_es_example(void **state) {
  (void)state;
  const float v[2] = {1.0f, 2.0f};
  embd_bulk_options o = {0};
  o.index = "docs", o.field = "emb";
  o.encoding = EMBD_BULK_F32_BASE64_LE;
  const int64_t id = 7;
  expect_bulk(&o, v, 1, 2, &id,
              "{\"index\":{\"_index\":\"docs\",\"_id\":\"7\"}}\n{\"emb\":\"AACAPwAAAEA=\"}\n");
  o.encoding = EMBD_BULK_F32_BASE64_BE;
  expect_bulk(&o, v, 1, 2, &id,
              "{\"index\":{\"_index\":\"docs\",\"_id\":\"7\"}}\n{\"emb\":\"P4AAAEAAAAA=\"}\n");
  /* No ids: no "_id"; two rows. */
  const float v2[4] = {1.0f, 2.0f, -2.0f, 0.5f};
  expect_bulk(&o, v2, 2, 2, NULL,
              "{\"index\":{\"_index\":\"docs\"}}\n{\"emb\":\"P4AAAEAAAAA=\"}\n"
              "{\"index\":{\"_index\":\"docs\"}}\n{\"emb\":\"wAAAAD8AAAA=\"}\n");
  const int64_t ids[2] = {INT64_MIN, -1};
  expect_bulk(&o, v2, 2, 2, ids,
              "{\"index\":{\"_index\":\"docs\",\"_id\":\"-9223372036854775808\"}}\n{\"emb\":\"P4AAAEAAAAA=\"}\n"
              "{\"index\":{\"_index\":\"docs\",\"_id\":\"-1\"}}\n{\"emb\":\"wAAAAD8AAAA=\"}\n");
  /* Explicit lengths: names need no NUL. */
  o.index = "docsXX", o.index_len = 4;
  o.field = "embYY", o.field_len = 3;
  expect_bulk(&o, v, 1, 2, &id,
              "{\"index\":{\"_index\":\"docs\",\"_id\":\"7\"}}\n{\"emb\":\"P4AAAEAAAAA=\"}\n");
}

static void test_escaping(void **state) {
  (void)state;
  const float v[1] = {1.0f};
  embd_bulk_options o = {0};
  o.index = "a\"b\\c\n\x01\t\xc3\xa9";
  o.field = "f\x1f";
  o.encoding = EMBD_BULK_F32_BASE64_LE;
  expect_bulk(&o, v, 1, 1, NULL,
              "{\"index\":{\"_index\":\"a\\\"b\\\\c\\n\\u0001\\t\xc3\xa9\"}}\n{\"f\\u001f\":\"AACAPw==\"}\n");
  /* Ill-formed UTF-8: overlong, surrogate, truncated, above U+10FFFF, stray continuation. */
  static const char *const bad[] = {"\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\x80"};
  char b[256];
  size_t n, size;
  embd_error err;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.index = bad[i];
    assert_int_equal(embd_bulk_write_f32(&o, v, 1, 1, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "index name is not UTF-8"));
    assert_int_equal(embd_bulk_size(&o, 1, 1, NULL, &size), EMBD_ERR_INVALID_ARGUMENT);
  }
  o.index = "\xf0\x9f\x98\x80"; /* U+1F600: fine */
  OK(embd_bulk_size(&o, 1, 1, NULL, &size));
}

static void test_hex(void **state) {
  (void)state;
  embd_bulk_options o = {0};
  o.index = "i", o.field = "v";
  o.encoding = EMBD_BULK_INT8_HEX;
  const float v[4] = {-128, 127, 0, 1};
  expect_bulk(&o, v, 1, 4, NULL, "{\"index\":{\"_index\":\"i\"}}\n{\"v\":\"807f0001\"}\n");
  o.encoding = EMBD_BULK_BIT_HEX;
  float bits[16];
  for (int j = 0; j < 16; j++) bits[j] = (0xA53Cu >> (15 - j)) & 1 ? 0.5f : -0.5f;
  expect_bulk(&o, bits, 1, 16, NULL, "{\"index\":{\"_index\":\"i\"}}\n{\"v\":\"a53c\"}\n");
  char b[256];
  size_t n;
  embd_error err;
  assert_int_equal(embd_bulk_write_f32(&o, bits, 1, 10, NULL, b, sizeof b, &n, &err), EMBD_ERR_DTYPE_LENGTH);
  /* int8 values that are not: row 1 element 2 (rows before it written). */
  o.encoding = EMBD_BULK_INT8_HEX;
  const float bad[3][3] = {{1, 2, 3}, {4, 5, 0.5f}, {7, 8, 9}};
  const float outs[] = {0.5f, 128.0f, -129.0f, NAN, INFINITY};
  for (size_t c = 0; c < sizeof outs / sizeof outs[0]; c++) {
    float m[9];
    memcpy(m, bad, sizeof m);
    m[5] = outs[c];
    memset(b, CANARY, sizeof b);
    assert_int_equal(embd_bulk_write_f32(&o, m, 3, 3, NULL, b, sizeof b, &n, &err), EMBD_ERR_DTYPE_RANGE);
    assert_int_equal(err.offset, 2);
    assert_non_null(strstr(err.message, "row 1 element 2"));
    const char *row0 = "{\"index\":{\"_index\":\"i\"}}\n{\"v\":\"010203\"}\n";
    assert_int_equal(n, strlen(row0));
    assert_memory_equal(b, row0, n);
    for (size_t i = n; i < sizeof b; i++) assert_int_equal((uint8_t)b[i], CANARY);
  }
}

static void test_bulk_refused(void **state) {
  (void)state;
  embd_bulk_options o = {0};
  o.index = "i", o.field = "v";
  float m[6] = {1, 2, 3, 4, 5, 6};
  char b[512];
  size_t n;
  embd_error err;
  for (int enc = 0; enc < 2; enc++) {
    o.encoding = (embd_bulk_encoding)enc;
    for (int k = 0; k < 3; k++) {
      m[4] = k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY;
      memset(b, CANARY, sizeof b);
      assert_int_equal(embd_bulk_write_f32(&o, m, 3, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_VECTOR_VALUE);
      assert_int_equal(err.offset, 0);
      assert_non_null(strstr(err.message, "row 2 element 0"));
      size_t two;
      OK(embd_bulk_size(&o, 2, 2, NULL, &two));
      assert_int_equal(n, two);
      for (size_t i = n; i < sizeof b; i++) assert_int_equal((uint8_t)b[i], CANARY);
    }
  }
  m[4] = 5;
  /* Options and arguments. */
  assert_int_equal(embd_bulk_write_f32(NULL, m, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  o.encoding = EMBD_BULK_ENCODING_COUNT_;
  assert_int_equal(embd_bulk_write_f32(&o, m, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  o.encoding = EMBD_BULK_F32_BASE64_BE;
  o.reserved_[3] = 1;
  assert_int_equal(embd_bulk_write_f32(&o, m, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  o.reserved_[3] = 0;
  assert_int_equal(embd_bulk_write_f32(&o, m, 1, 0, NULL, b, sizeof b, &n, &err), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_bulk_write_f32(&o, NULL, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_bulk_write_f32(&o, m, 0, 2, NULL, b, 0, &n, &err));
  assert_int_equal(n, 0);
}

/* Long vectors cross the encoder's 768-float steps: against this file's byte swap and
 * base64, both orders, random bits (NaN-free). */
static void test_bulk_long(void **state) {
  (void)state;
  static const size_t dims_list[] = {1, 2, 3, 767, 768, 769, 1536, 2305, 4096};
  for (size_t d = 0; d < sizeof dims_list / sizeof dims_list[0]; d++) {
    const size_t dims = dims_list[d];
    float *v = malloc(dims * sizeof *v);
    uint8_t *bytes = malloc(4 * dims);
    char *want = malloc(8 * dims + 256), *got = malloc(8 * dims + 256);
    assert_true(v && bytes && want && got);
    for (size_t j = 0; j < dims; j++) {
      uint32_t u;
      do u = tu_u32(&g_rng);
      while ((u & 0x7f800000) == 0x7f800000);
      memcpy(&v[j], &u, 4);
    }
    for (int be = 0; be < 2; be++) {
      for (size_t j = 0; j < dims; j++)
        for (int k = 0; k < 4; k++)
          bytes[4 * j + k] = (uint8_t)(f2u(v[j]) >> (be ? 24 - 8 * k : 8 * k));
      size_t k = (size_t)sprintf(want, "{\"index\":{\"_index\":\"x\",\"_id\":\"12345\"}}\n{\"e\":\"");
      k += ref_b64(want + k, bytes, 4 * dims);
      k += (size_t)sprintf(want + k, "\"}\n");
      embd_bulk_options o = {0};
      o.index = "x", o.field = "e";
      o.encoding = be ? EMBD_BULK_F32_BASE64_BE : EMBD_BULK_F32_BASE64_LE;
      const int64_t id = 12345;
      size_t n, size;
      OK(embd_bulk_size(&o, 1, dims, &id, &size));
      assert_int_equal(size, k);
      OK(embd_bulk_write_f32(&o, v, 1, dims, &id, got, 8 * dims + 256, &n, NULL));
      assert_int_equal(n, k);
      assert_memory_equal(got, want, k);
    }
    free(v), free(bytes), free(want), free(got);
  }
}

static void test_vecs(void **state) {
  (void)state;
  const float v[6] = {1.0f, -2.0f, 0.5f, NAN, INFINITY, 0.0f};
  uint8_t b[64];
  memset(b, CANARY, sizeof b);
  size_t n, size;
  OK(embd_fvecs_size(2, 3, &size));
  assert_int_equal(size, 32);
  OK(embd_fvecs_write(v, 2, 3, b, sizeof b, &n));
  assert_int_equal(n, 32);
  static const uint8_t want[32] = {3, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f,
                                   3, 0, 0, 0, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f, 0, 0, 0, 0};
  assert_memory_equal(b, want, 32);
  assert_int_equal(b[32], CANARY);
  assert_int_equal(embd_fvecs_write(v, 2, 3, b, 31, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 32);
  const uint8_t u[4] = {0, 1, 254, 255};
  OK(embd_bvecs_size(2, 2, &size));
  assert_int_equal(size, 12);
  OK(embd_bvecs_write(u, 2, 2, b, sizeof b, &n));
  static const uint8_t wantb[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 254, 255};
  assert_int_equal(n, 12);
  assert_memory_equal(b, wantb, 12);
  assert_int_equal(embd_fvecs_size(1, 0, &size), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_bvecs_write(u, 1, 0, b, sizeof b, &n), EMBD_ERR_VECTOR_DIMS);
  if (SIZE_MAX > 0xFFFFFFFFu) {
    assert_int_equal(embd_bvecs_size(1, (size_t)INT32_MAX + 1, &size), EMBD_ERR_VECTOR_DIMS);
    OK(embd_bvecs_size(1, (size_t)INT32_MAX, &size));
  }
  assert_int_equal(embd_fvecs_write(NULL, 1, 3, b, sizeof b, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_fvecs_size(SIZE_MAX / 8, 4, &size), EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_fvecs_write(v, 0, 3, NULL, 0, &n));
  assert_int_equal(n, 0);
}

int main(void) {
  int s = tu_isa_preflight("test_vecfile");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_es_example), cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_hex),        cmocka_unit_test(test_bulk_refused),
      cmocka_unit_test(test_bulk_long),  cmocka_unit_test(test_vecs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
