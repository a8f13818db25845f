/* PostgreSQL binary COPY writer (embd/pgcopy.h): golden bytes for every column type written
 * by hand in this file from the layouts (COPY BINARY header/rows/trailer, pgvector's
 * vector/halfvec/sparsevec send format, bit_send, array_send, bytea), never produced by
 * the library; every error path with its code, offset and a message naming row and
 * element; the row-or-nothing rule with a canary (a refused row leaves not a byte in the
 * output); size functions equal to what the writers write; random rows parsed back by a
 * big-endian reader written here.
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

#include <math.h>

#include "testutil.h"

#define OK(x) assert_int_equal((x), EMBD_OK)
#define CANARY 0xA5

static tu_rng g_rng;

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static void init(embd_pgcopy *w, embd_pg_type t, unsigned columns, uint32_t typmod) {
  embd_pgcopy_options o = {0};
  o.type = t, o.columns = columns, o.typmod = typmod;
  OK(embd_pgcopy_init(w, &o));
}

/* Writes count x dims through embd_pgcopy_write_f32 into a canary-filled buffer and checks
 * the bytes against `want` (wlen), the size functions and the counts. */
static void expect_f32(embd_pgcopy *w, const float *v, size_t count, size_t dims,
                       const embd_pgcopy_keys *keys, const uint8_t *want, size_t wlen) {
  uint8_t buf[512];
  memset(buf, CANARY, sizeof buf);
  size_t size, n;
  embd_error err;
  OK(embd_pgcopy_rows_size(w, v, count, dims, &size));
  assert_int_equal(size, wlen);
  const uint64_t rows = w->rows;
  OK(embd_pgcopy_write_f32(w, v, count, dims, keys, buf, sizeof buf, &n, &err));
  assert_int_equal(err.result, EMBD_OK);
  assert_int_equal(n, wlen);
  assert_memory_equal(buf, want, wlen);
  assert_int_equal(buf[wlen], CANARY);
  assert_int_equal(w->rows, rows + count);
}

static void test_header_trailer(void **state) {
  (void)state;
  static const uint8_t hdr[19] = {0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00,
                                  0, 0, 0, 0, 0, 0, 0, 0};
  embd_pgcopy w;
  OK(embd_pgcopy_init(&w, NULL));
  uint8_t b[32];
  size_t n;
  memset(b, CANARY, sizeof b);
  assert_int_equal(embd_pgcopy_header(&w, b, 18, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 19);
  assert_int_equal(b[0], CANARY);
  assert_int_equal(embd_pgcopy_header(&w, NULL, 0, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, EMBD_PGCOPY_HEADER_SIZE);
  OK(embd_pgcopy_header(&w, b, sizeof b, &n));
  assert_int_equal(n, 19);
  assert_memory_equal(b, hdr, 19);
  assert_int_equal(b[19], CANARY);
  assert_int_equal(embd_pgcopy_trailer(&w, b, 1, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 2);
  OK(embd_pgcopy_trailer(&w, b, 2, &n));
  assert_int_equal(n, EMBD_PGCOPY_TRAILER_SIZE);
  assert_int_equal(b[0], 0xff);
  assert_int_equal(b[1], 0xff);
  assert_int_equal(w.bytes, 21);
  assert_int_equal(w.rows, 0);
}

static void test_vector_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_VECTOR, EMBD_PGCOPY_ID, 3);
  const float v[3] = {1.0f, -2.0f, 0.5f};
  const int64_t id = 7;
  embd_pgcopy_keys k = {0};
  k.ids = &id;
  static const uint8_t want[] = {
      0x00, 0x02,                                     /* 2 fields */
      0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 7, /* bigint 7 */
      0x00, 0x00, 0x00, 0x10,                         /* vector: 16 bytes */
      0x00, 0x03, 0x00, 0x00,                         /* dim 3, unused 0 */
      0x3f, 0x80, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00};
  expect_f32(&w, v, 1, 3, &k, want, sizeof want);
  size_t rs;
  OK(embd_pgcopy_row_size(&w, 3, 0, &rs));
  assert_int_equal(rs, sizeof want);
  /* Without the id column: 1 field. */
  init(&w, EMBD_PG_VECTOR, 0, 0);
  expect_f32(&w, v, 1, 3, NULL, (const uint8_t[]){0, 1, 0, 0, 0, 0x10, 0, 3, 0, 0, 0x3f, 0x80, 0, 0, 0xc0,
                                                  0, 0, 0, 0x3f, 0, 0, 0},
             22);
}

static void test_halfvec_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_HALFVEC, 0, 0);
  /* 1, -2, 65504 (max), 2^-24 (smallest subnormal), 1 + 2^-11 (tie: even, 1.0),
   * 1 + 3 * 2^-11 (tie: even, 1 + 2^-9), 65519.996 (the largest float rounding to 65504),
   * -0.0 */
  const float v[8] = {1.0f, -2.0f, 65504.0f, u2f(0x33800000), u2f(0x3f801000), u2f(0x3f803000),
                      u2f(0x477fefff), -0.0f};
  static const uint8_t want[] = {0x00, 0x01, 0x00, 0x00, 0x00, 0x14,           /* 20 bytes */
                                 0x00, 0x08, 0x00, 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7b, 0xff,
                                 0x00, 0x01, 0x3c, 0x00, 0x3c, 0x02, 0x7b, 0xff, 0x80, 0x00};
  expect_f32(&w, v, 1, 8, NULL, want, sizeof want);
}

static void test_sparsevec_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_SPARSEVEC, 0, 5);
  const float v[5] = {0.0f, 1.5f, 0.0f, -0.0f, -2.0f};
  static const uint8_t want[] = {0x00, 0x01, 0x00, 0x00, 0x00, 0x1c,             /* 28 bytes */
                                 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0,             /* dim, nnz, 0 */
                                 0, 0, 0, 1, 0, 0, 0, 4,                         /* indices */
                                 0x3f, 0xc0, 0, 0, 0xc0, 0x00, 0, 0};            /* values */
  expect_f32(&w, v, 1, 5, NULL, want, sizeof want);
  /* From indices and values: the same bytes. */
  const uint32_t idx[2] = {1, 4};
  const float val[2] = {1.5f, -2.0f};
  uint8_t b[64];
  size_t n, rs;
  embd_error err;
  OK(embd_pgcopy_row_size(&w, 5, 2, &rs));
  assert_int_equal(rs, sizeof want);
  OK(embd_pgcopy_write_sparse(&w, 5, idx, val, 2, NULL, b, sizeof b, &n, &err));
  assert_int_equal(n, sizeof want);
  assert_memory_equal(b, want, sizeof want);
  /* All zeros: nnz 0 is a valid sparsevec. */
  const float z[5] = {0};
  expect_f32(&w, z, 1, 5, NULL,
             (const uint8_t[]){0, 1, 0, 0, 0, 12, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}, 18);
  OK(embd_pgcopy_write_sparse(&w, 5, NULL, NULL, 0, NULL, b, sizeof b, &n, &err));
  assert_int_equal(n, 18);
}

static void test_bit_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_BIT, EMBD_PGCOPY_ID, 10);
  /* bit j = v[j] > 0: 1 0 0 1 0 1 1 0 | 1 0 -> 0x96, 0x80 */
  const float v[10] = {1, -1, 0, 2, NAN, 3, 0.1f, -0.1f, 5, 0};
  static const uint8_t want[] = {0, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, /* id 0 (row 0) */
                                 0, 0, 0, 6, 0, 0, 0, 10, 0x96, 0x80};
  expect_f32(&w, v, 1, 10, NULL, want, sizeof want);
  /* Packed bits: the last byte's unused bits cleared. Row 1: id 1. */
  const uint8_t bits[4] = {0x96, 0xff, 0x01, 0x7f};
  uint8_t b[64];
  size_t n;
  embd_error err;
  OK(embd_pgcopy_write_bits(&w, bits, 2, 10, NULL, b, sizeof b, &n, &err));
  static const uint8_t want2[] = {0, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0, 10, 0x96, 0xc0,
                                  0, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 6, 0, 0, 0, 10, 0x01, 0x40};
  assert_int_equal(n, sizeof want2);
  assert_memory_equal(b, want2, sizeof want2);
  /* 16 dims through the packed-bit kernel (whole bytes). */
  init(&w, EMBD_PG_BIT, 0, 0);
  float v16[16];
  for (int j = 0; j < 16; j++) v16[j] = (0xA53Cu >> (15 - j)) & 1 ? 1.0f : -1.0f;
  expect_f32(&w, v16, 1, 16, NULL, (const uint8_t[]){0, 1, 0, 0, 0, 6, 0, 0, 0, 16, 0xa5, 0x3c}, 12);
}

static void test_float4_array_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_FLOAT4_ARRAY, 0, 0);
  /* NaN (with a payload) and infinities are fine in float4[]: kept bit for bit. */
  const float v[2] = {1.0f, u2f(0x7fc00001)};
  static const uint8_t want[] = {0, 1, 0, 0, 0, 36,                       /* 36 bytes */
                                 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x02, 0xbc, /* ndim 1, flags 0, oid 700 */
                                 0, 0, 0, 2, 0, 0, 0, 1,                   /* size 2, lower bound 1 */
                                 0, 0, 0, 4, 0x3f, 0x80, 0, 0, 0, 0, 0, 4, 0x7f, 0xc0, 0x00, 0x01};
  expect_f32(&w, v, 1, 2, NULL, want, sizeof want);
  /* dims 0: the empty array (ndim 0, no dimension words). */
  expect_f32(&w, v, 1, 0, NULL, (const uint8_t[]){0, 1, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0xbc},
             18);
  /* 300 elements cross the 256-float staging step. */
  float big[300];
  for (int j = 0; j < 300; j++) big[j] = (float)j - 150.5f;
  uint8_t b[2600];
  size_t n;
  embd_error err;
  OK(embd_pgcopy_write_f32(&w, big, 1, 300, NULL, b, sizeof b, &n, &err));
  assert_int_equal(n, 6 + 20 + 8 * 300);
  assert_int_equal(rd32(b + 2), 20 + 8 * 300);
  assert_int_equal(rd32(b + 18), 300);
  for (int j = 0; j < 300; j++) {
    assert_int_equal(rd32(b + 26 + 8 * j), 4);
    assert_int_equal(rd32(b + 30 + 8 * j), f2u(big[j]));
  }
}

static void test_bytea_golden(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_BYTEA, EMBD_PGCOPY_ID, 0);
  const float v[4] = {1.0f, -2.0f, INFINITY, 0.0f};
  const int64_t id = -1;
  embd_pgcopy_keys k = {0};
  k.ids = &id;
  static const uint8_t want[] = {0, 2, 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0, 0, 0, 16, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0x80, 0x7f, 0, 0, 0, 0};
  expect_f32(&w, v, 1, 4, &k, want, sizeof want);
}

static void test_null_and_ids(void **state) {
  (void)state;
  embd_pgcopy w;
  embd_pgcopy_options o = {0};
  o.type = EMBD_PG_VECTOR, o.columns = EMBD_PGCOPY_ID, o.first_id = 100;
  OK(embd_pgcopy_init(&w, &o));
  uint8_t b[256];
  size_t n, ns;
  embd_error err;
  OK(embd_pgcopy_null_row_size(&w, &ns));
  assert_int_equal(ns, 18);
  OK(embd_pgcopy_write_null(&w, NULL, b, sizeof b, &n, &err));
  static const uint8_t want[] = {0, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 100, 0xff, 0xff, 0xff, 0xff};
  assert_int_equal(n, sizeof want);
  assert_memory_equal(b, want, sizeof want);
  assert_int_equal(embd_pgcopy_write_null(&w, NULL, b, 17, &n, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 18);
  /* Three rows: ids 101, 102, 103 from first_id + the stream row; then given ones. */
  const float v[3] = {1, 2, 3};
  OK(embd_pgcopy_write_f32(&w, v, 3, 1, NULL, b, sizeof b, &n, &err));
  assert_int_equal(n, 3 * 26);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rd16(b + 26 * i), 2);
    assert_int_equal(rd32(b + 26 * i + 10), 101 + i);
    assert_int_equal(rd32(b + 26 * i + 22), f2u(v[i]));
  }
  const int64_t ids[3] = {INT64_MIN, 0, INT64_MAX};
  embd_pgcopy_keys k = {0};
  k.ids = ids;
  OK(embd_pgcopy_write_f32(&w, v, 3, 1, &k, b, sizeof b, &n, &err));
  assert_int_equal(rd32(b + 6), 0x80000000u);
  assert_int_equal(rd32(b + 10), 0);
  assert_int_equal(rd32(b + 26 + 10), 0);
  assert_int_equal(rd32(b + 52 + 6), 0x7fffffffu);
  assert_int_equal(rd32(b + 52 + 10), 0xffffffffu);
  assert_int_equal(w.rows, 7);
  /* keys with reserved room set: refused. */
  k.reserved_[1] = 1;
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 1, &k, b, sizeof b, &n, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
}

/* EMBD_PGCOPY_KEY: a text key and an int4 index before the vector (after the id), the
 * bytes spelled out here from PostgreSQL's binary COPY format (int16 field count; each
 * field an int32 length then the data, big-endian). */
static void test_key_columns(void **state) {
  (void)state;
  embd_pgcopy w;
  embd_pgcopy_options o = {0};
  o.type = EMBD_PG_VECTOR, o.columns = EMBD_PGCOPY_KEY;
  OK(embd_pgcopy_init(&w, &o));
  const float v[4] = {1, 2, 3, 4};
  embd_pgcopy_keys k = {0};
  k.key = "d\t\xc3\xa9";
  k.key_len = 4;
  k.first_index = 7;
  static const uint8_t want[] = {
      0, 3,                                    /* three fields */
      0, 0, 0, 4, 'd', '\t', 0xc3, 0xa9,       /* text "d\té" */
      0, 0, 0, 4, 0, 0, 0, 7,                  /* int4 7 */
      0, 0, 0, 12, 0, 2, 0, 0, 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, /* vector [1, 2] */
      0, 3,
      0, 0, 0, 4, 'd', '\t', 0xc3, 0xa9,
      0, 0, 0, 4, 0, 0, 0, 8,                  /* int4 8 */
      0, 0, 0, 12, 0, 2, 0, 0, 0x40, 0x40, 0, 0, 0x40, 0x80, 0, 0};
  uint8_t b[256];
  size_t n, size;
  embd_error err;
  /* the size functions leave the key's text out: + key_len a row */
  OK(embd_pgcopy_rows_size(&w, v, 2, 2, &size));
  assert_int_equal(size + 2 * 4, sizeof want);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 2, 2, &k, b, sizeof want - 1, &n, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, sizeof want);
  OK(embd_pgcopy_write_f32(&w, v, 2, 2, &k, b, sizeof b, &n, &err));
  assert_int_equal(n, sizeof want);
  assert_memory_equal(b, want, sizeof want);
  /* with the id too: id first; NULL row; an empty key */
  o.columns = EMBD_PGCOPY_ID | EMBD_PGCOPY_KEY, o.first_id = 5;
  OK(embd_pgcopy_init(&w, &o));
  k.key_len = 0;
  k.first_index = -1;
  OK(embd_pgcopy_write_null(&w, &k, b, sizeof b, &n, &err));
  static const uint8_t wnull[] = {0, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0,
                                  0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  assert_int_equal(n, sizeof wnull);
  assert_memory_equal(b, wnull, sizeof wnull);
  /* refused: no keys, a NUL in the key, an index past int4; nothing written */
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  k.key = "a\0b";
  k.key_len = 3;
  k.first_index = 0;
  memset(b, CANARY, sizeof b);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 2, &k, b, sizeof b, &n, &err), EMBD_ERR_VECTOR_VALUE);
  assert_int_equal(err.offset, 1);
  assert_non_null(strstr(err.message, "NUL"));
  assert_int_equal(n, 0);
  assert_int_equal(b[0], CANARY);
  k.key = "ab";
  k.key_len = 2;
  k.first_index = INT32_MAX;
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 2, 1, &k, b, sizeof b, &n, &err), EMBD_ERR_VECTOR_VALUE);
  assert_non_null(strstr(err.message, "int4"));
  OK(embd_pgcopy_write_f32(&w, v, 1, 1, &k, b, sizeof b, &n, &err));
  assert_int_equal(rd32(b + 2 + 12 + 4 + 2 + 4), 0x7fffffffu);
  k.first_index = (int64_t)INT32_MIN - 1;
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 1, &k, b, sizeof b, &n, &err), EMBD_ERR_VECTOR_VALUE);
  k.first_index = 0;
  k.key = NULL; /* a length without its bytes */
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 1, &k, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
}

/* One refused row: code, offset, message parts; the rows before it complete, nothing of it
 * in the buffer (canary), w->rows counts the rows before. */
static void expect_refused(embd_pg_type t, unsigned flags, const float *v, size_t count, size_t dims,
                           size_t bad_row, embd_result code, uint64_t off, const char *m1,
                           const char *m2) {
  embd_pgcopy w;
  embd_pgcopy_options o = {0};
  o.type = t, o.flags = flags, o.columns = EMBD_PGCOPY_ID;
  OK(embd_pgcopy_init(&w, &o));
  w.rows = 40; /* a stream already under way: messages name its row numbers */
  size_t before = 0, rs;
  if (bad_row) {
    OK(embd_pgcopy_rows_size(&w, v, bad_row, dims, &before));
  }
  OK(embd_pgcopy_rows_size(&w, v, count, dims, &rs)); /* sizes do not check values */
  uint8_t *b = malloc(rs + 64);
  assert_non_null(b);
  memset(b, CANARY, rs + 64);
  size_t n;
  embd_error err;
  assert_int_equal(embd_pgcopy_write_f32(&w, v, count, dims, NULL, b, rs + 64, &n, &err), code);
  assert_int_equal(err.result, code);
  assert_int_equal(err.offset, off);
  assert_int_equal(n, before);
  assert_int_equal(w.rows, 40 + bad_row);
  for (size_t i = before; i < rs + 64; i++)
    if (b[i] != CANARY) fail_msg("byte %zu of the refused row written (%s)", i, err.message);
  if (!strstr(err.message, m1) || (m2 && !strstr(err.message, m2)))
    fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", err.message, m1, m2 ? m2 : "");
  free(b);
}

static void test_refused_values(void **state) {
  (void)state;
  float v[3 * 4] = {1, 2, 3, 4, 5, 6, NAN, 8, 9, 10, 11, 12};
  expect_refused(EMBD_PG_VECTOR, 0, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 2, "row 41 element 2: NaN",
                 "vector refuses NaN");
  expect_refused(EMBD_PG_HALFVEC, 0, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 2, "row 41 element 2", "halfvec");
  expect_refused(EMBD_PG_SPARSEVEC, 0, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 2, "row 41 element 2",
                 "sparsevec");
  expect_refused(EMBD_PG_FLOAT4_ARRAY, EMBD_PGCOPY_FINITE, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 2,
                 "row 41 element 2", NULL);
  expect_refused(EMBD_PG_BYTEA, EMBD_PGCOPY_FINITE, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 2, "row 41", NULL);
  v[6] = 7;
  v[11] = -INFINITY;
  expect_refused(EMBD_PG_VECTOR, 0, v, 3, 4, 2, EMBD_ERR_VECTOR_VALUE, 3, "row 42 element 3: -inf",
                 "infinities");
  v[11] = 12;
  v[0] = INFINITY;
  expect_refused(EMBD_PG_HALFVEC, 0, v, 3, 4, 0, EMBD_ERR_VECTOR_VALUE, 0, "row 40 element 0: inf", NULL);
  /* halfvec overflow: 65520 rounds to infinity in binary16 (65519.996 does not: golden). */
  v[0] = 1;
  v[5] = -65520.0f;
  expect_refused(EMBD_PG_HALFVEC, 0, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 1, "row 41 element 1: -65520",
                 "out of range for halfvec");
  v[5] = 3e38f;
  expect_refused(EMBD_PG_HALFVEC, 0, v, 3, 4, 1, EMBD_ERR_VECTOR_VALUE, 1, "row 41 element 1", "halfvec");
  /* ... which vector takes. */
  embd_pgcopy w;
  init(&w, EMBD_PG_VECTOR, 0, 0);
  uint8_t b[256];
  size_t n;
  OK(embd_pgcopy_write_f32(&w, v, 3, 4, NULL, b, sizeof b, &n, NULL));
  /* float4[] and bytea take NaN and infinities without the flag. */
  v[2] = NAN;
  v[3] = -INFINITY;
  init(&w, EMBD_PG_FLOAT4_ARRAY, 0, 0);
  OK(embd_pgcopy_write_f32(&w, v, 3, 4, NULL, b, sizeof b, &n, NULL));
  init(&w, EMBD_PG_BYTEA, 0, 0);
  OK(embd_pgcopy_write_f32(&w, v, 3, 4, NULL, b, sizeof b, &n, NULL));
  init(&w, EMBD_PG_BIT, 0, 0);
  OK(embd_pgcopy_write_f32(&w, v, 3, 4, NULL, b, sizeof b, &n, NULL));
}

static void test_dims_errors(void **state) {
  (void)state;
  static float v[EMBD_PGVECTOR_MAX_DIM + 1];
  embd_pgcopy w;
  uint8_t *b = malloc(140000);
  assert_non_null(b);
  size_t n, rs;
  embd_error err;
  const embd_pg_type dense[2] = {EMBD_PG_VECTOR, EMBD_PG_HALFVEC};
  for (int t = 0; t < 2; t++) {
    init(&w, dense[t], 0, 0);
    w.rows = 5;
    assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 0, NULL, b, 140000, &n, &err), EMBD_ERR_VECTOR_DIMS);
    assert_int_equal(err.offset, 5);
    assert_non_null(strstr(err.message, "row 5: 0 dims"));
    assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 16001, NULL, b, 140000, &n, &err), EMBD_ERR_VECTOR_DIMS);
    assert_non_null(strstr(err.message, "16001 dims, outside"));
    assert_int_equal(embd_pgcopy_row_size(&w, 16001, 0, &rs), EMBD_ERR_VECTOR_DIMS);
    OK(embd_pgcopy_write_f32(&w, v, 1, 16000, NULL, b, 140000, &n, &err));
    OK(embd_pgcopy_row_size(&w, 16000, 0, &rs));
    assert_int_equal(n, rs);
    assert_int_equal(rs, 2 + 4 + 4 + (t ? 2 : 4) * 16000);
    init(&w, dense[t], 0, 1536);
    assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 1535, NULL, b, 140000, &n, &err), EMBD_ERR_VECTOR_DIMS);
    assert_non_null(strstr(err.message, "1535 dims, but the column is"));
    assert_int_equal(n, 0);
  }
  /* sparsevec: dims 1..1e9, nnz <= 16,000 and <= dims */
  init(&w, EMBD_PG_SPARSEVEC, 0, 0);
  assert_int_equal(embd_pgcopy_row_size(&w, 0, 0, &rs), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_pgcopy_row_size(&w, 1000000001, 0, &rs), EMBD_ERR_VECTOR_DIMS);
  OK(embd_pgcopy_row_size(&w, 1000000000, 16000, &rs));
  assert_int_equal(rs, 6 + 12 + 8 * 16000);
  assert_int_equal(embd_pgcopy_row_size(&w, 1000000000, 16001, &rs), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_pgcopy_row_size(&w, 3, 4, &rs), EMBD_ERR_VECTOR_DIMS);
  for (int j = 0; j <= EMBD_PGVECTOR_MAX_DIM; j++) v[j] = 1.0f;
  w.rows = 9;
  memset(b, CANARY, 140000);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 16001, NULL, b, 140000, &n, &err), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(err.offset, 9);
  assert_non_null(strstr(err.message, "row 9: 16001 non-zero elements"));
  assert_int_equal(n, 0);
  assert_int_equal(b[0], CANARY);
  uint32_t *idx = malloc(16001 * sizeof *idx);
  assert_non_null(idx);
  for (uint32_t j = 0; j < 16001; j++) idx[j] = j;
  assert_int_equal(embd_pgcopy_write_sparse(&w, 20000, idx, v, 16001, NULL, b, 140000, &n, &err),
                   EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_pgcopy_write_sparse(&w, 3, idx, v, 4, NULL, b, 140000, &n, &err),
                   EMBD_ERR_VECTOR_DIMS);
  assert_non_null(strstr(err.message, "4 elements, more than its 3 dims"));
  OK(embd_pgcopy_write_sparse(&w, 16000, idx, v, 16000, NULL, b, 140000, &n, &err));
  free(idx);
  /* bit: dims 0 refused; a typmod. */
  init(&w, EMBD_PG_BIT, 0, 0);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 0, NULL, b, 140000, &n, &err), EMBD_ERR_VECTOR_DIMS);
  assert_int_equal(embd_pgcopy_write_bits(&w, b, 1, 0, NULL, b + 100, 100, &n, &err), EMBD_ERR_VECTOR_DIMS);
  init(&w, EMBD_PG_BIT, 0, 64);
  assert_int_equal(embd_pgcopy_write_bits(&w, b, 1, 63, NULL, b + 100, 100, &n, &err), EMBD_ERR_VECTOR_DIMS);
  /* count 0 writes nothing whatever the dims. */
  OK(embd_pgcopy_write_f32(&w, v, 0, 0, NULL, b, 0, &n, &err));
  assert_int_equal(n, 0);
  /* bytea and float4[]: the field must fit what PostgreSQL reads (1 GiB). */
  init(&w, EMBD_PG_BYTEA, 0, 0);
  OK(embd_pgcopy_row_size(&w, 0x3FFFFFFE / 4, 0, &rs));
  if (SIZE_MAX > 0xFFFFFFFFu) {
    assert_int_equal(embd_pgcopy_row_size(&w, 0x3FFFFFFE / 4 + 1, 0, &rs), EMBD_ERR_VECTOR_DIMS);
  }
  init(&w, EMBD_PG_FLOAT4_ARRAY, 0, 0);
  OK(embd_pgcopy_row_size(&w, (0x3FFFFFFE - 20) / 8, 0, &rs));
  assert_int_equal(embd_pgcopy_row_size(&w, (0x3FFFFFFE - 20) / 8 + 1, 0, &rs), EMBD_ERR_VECTOR_DIMS);
  free(b);
}

static void test_sparse_errors(void **state) {
  (void)state;
  embd_pgcopy w;
  init(&w, EMBD_PG_SPARSEVEC, EMBD_PGCOPY_ID, 0);
  w.rows = 3;
  uint8_t b[128];
  size_t n;
  embd_error err;
  const float val[4] = {1, 2, 3, 4};
  struct {
    uint32_t idx[4];
    float val2;
    embd_result code;
    uint64_t off;
    const char *msg;
  } cases[] = {
      {{0, 1, 2, 10}, 2, EMBD_ERR_SPARSE_INDEX, 3, "row 3 element 3: index 10 out of range (dims 10)"},
      {{0, 1, 1, 5}, 2, EMBD_ERR_SPARSE_INDEX, 2, "row 3 element 2: index 1 repeated"},
      {{0, 2, 1, 5}, 2, EMBD_ERR_SPARSE_INDEX, 2, "row 3 element 2: index 1 after 2"},
      {{0xFFFFFFFFu, 1, 2, 3}, 2, EMBD_ERR_SPARSE_INDEX, 0, "index 4294967295 out of range"},
      {{0, 1, 2, 3}, 0.0f, EMBD_ERR_VECTOR_VALUE, 1, "row 3 element 1 (index 1): zero"},
      {{0, 1, 2, 3}, -0.0f, EMBD_ERR_VECTOR_VALUE, 1, "zero"},
      {{0, 1, 2, 3}, NAN, EMBD_ERR_VECTOR_VALUE, 1, "row 3 element 1 (index 1): NaN"},
      {{0, 1, 2, 3}, INFINITY, EMBD_ERR_VECTOR_VALUE, 1, "inf (sparsevec refuses infinities)"},
      /* indices are checked before values, as sparsevec_recv reads them */
      {{0, 1, 1, 3}, NAN, EMBD_ERR_SPARSE_INDEX, 2, "repeated"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    float v[4] = {val[0], cases[c].val2, val[2], val[3]};
    memset(b, CANARY, sizeof b);
    assert_int_equal(embd_pgcopy_write_sparse(&w, 10, cases[c].idx, v, 4, NULL, b, sizeof b, &n, &err),
                     cases[c].code);
    assert_int_equal(err.offset, cases[c].off);
    if (!strstr(err.message, cases[c].msg)) fail_msg("case %zu: \"%s\"", c, err.message);
    assert_int_equal(n, 0);
    for (size_t i = 0; i < sizeof b; i++) assert_int_equal(b[i], CANARY);
    assert_int_equal(w.rows, 3);
  }
  /* Wrong writer types. */
  init(&w, EMBD_PG_VECTOR, 0, 0);
  const uint32_t idx[1] = {0};
  assert_int_equal(embd_pgcopy_write_sparse(&w, 10, idx, val, 1, NULL, b, sizeof b, &n, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_pgcopy_write_bits(&w, b, 1, 8, NULL, b, sizeof b, &n, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
}

static void test_arguments(void **state) {
  (void)state;
  embd_pgcopy w;
  embd_pgcopy_options o = {0};
  o.type = EMBD_PG_TYPE_COUNT_;
  assert_int_equal(embd_pgcopy_init(&w, &o), EMBD_ERR_INVALID_ARGUMENT);
  o.type = EMBD_PG_VECTOR;
  o.columns = 4; /* an unknown column bit */
  assert_int_equal(embd_pgcopy_init(&w, &o), EMBD_ERR_INVALID_ARGUMENT);
  o.columns = 0;
  o.flags = 2;
  assert_int_equal(embd_pgcopy_init(&w, &o), EMBD_ERR_INVALID_ARGUMENT);
  o.flags = 0;
  o.reserved_ptr_[1] = &o;
  assert_int_equal(embd_pgcopy_init(&w, &o), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_pgcopy_init(NULL, NULL), EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_pgcopy_init(&w, NULL));
  assert_int_equal(w.opt.type, EMBD_PG_VECTOR);
  const float v[2] = {1, 2};
  size_t n = 99;
  uint8_t b[64];
  embd_error err;
  assert_int_equal(embd_pgcopy_write_f32(&w, NULL, 1, 2, NULL, b, sizeof b, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 2, NULL, NULL, 5, &n, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 2, NULL, b, sizeof b, NULL, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, SIZE_MAX, 2, NULL, b, sizeof b, &n, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  /* Output too small: the call's exact size, nothing written, the writer unchanged. */
  memset(b, CANARY, sizeof b);
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 2, 1, NULL, b, 27, &n, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 28);
  assert_int_equal(b[0], CANARY);
  assert_int_equal(w.rows, 0);
  assert_int_equal(w.bytes, 0);
  OK(embd_pgcopy_write_f32(&w, v, 2, 1, NULL, b, n, &n, &err));
  assert_int_equal(embd_pgcopy_write_f32(&w, v, 1, 2, NULL, NULL, 0, &n, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 18);
  assert_string_equal(embd_pg_type_name(EMBD_PG_FLOAT4_ARRAY), "float4[]");
  assert_string_equal(embd_pg_type_name(EMBD_PG_SPARSEVEC), "sparsevec");
  assert_null(embd_pg_type_name(EMBD_PG_TYPE_COUNT_));
  assert_string_equal(embd_result_name(EMBD_ERR_VECTOR_VALUE), "EMBD_ERR_VECTOR_VALUE");
  assert_int_equal(EMBD_ERR_VECTOR_DIMS, 58);
  assert_int_equal(EMBD_ERR_VECTOR_VALUE, 59);
  assert_int_equal(EMBD_ERR_SPARSE_INDEX, 60);
}

/* Random streams of every type parsed back by this file's reader: each value where it
 * belongs (halfvec: the binary16 bits are checked against a reference rounding written
 * here), the sizes exact, the stream well formed end to end. */
static uint16_t ref_f16(float f) {
  const uint32_t u = f2u(f), sign = (u >> 16) & 0x8000;
  const uint32_t a = u & 0x7fffffff;
  if (a >= 0x47800000) return (uint16_t)(sign | 0x7c00); /* finite inputs only here */
  if (a < 0x38800000) {                                    /* subnormal half (or zero) */
    /* value = a's float; in units of 2^-24, rounded to nearest even */
    const uint32_t m = (a & 0x7fffff) | 0x800000;
    const int e = (int)(a >> 23);
    if (e < 102) return (uint16_t)sign; /* below 2^-25: rounds to 0 */
    const int shift = 126 - e;          /* m * 2^(e-150) / 2^-24 = m >> (126 - e) */
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t q = ((a - 0x38000000) >> 13), rem = a & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) q++;
  return (uint16_t)(sign | q);
}

static void test_random_parse_back(void **state) {
  (void)state;
  const size_t rounds = tu_scaled(200, 40);
  for (size_t round = 0; round < rounds; round++) {
    const embd_pg_type t = (embd_pg_type)(round % EMBD_PG_TYPE_COUNT_);
    const size_t count = tu_range(&g_rng, 0, 6), dims = tu_range(&g_rng, 1, 700);
    float *v = malloc(count * dims * sizeof *v + 4);
    assert_non_null(v);
    for (size_t i = 0; i < count * dims; i++) {
      const uint32_t r = tu_u32(&g_rng);
      v[i] = (r & 3) == 0 ? 0.0f : (float)((int32_t)r % 190000) / 3.0f; /* zeros for sparse */
    }
    embd_pgcopy w;
    init(&w, t, round & 8 ? EMBD_PGCOPY_ID : 0, round & 16 ? (uint32_t)dims : 0);
    size_t size, n, at = 0;
    OK(embd_pgcopy_rows_size(&w, v, count, dims, &size));
    const size_t cap = 19 + size + 2;
    uint8_t *b = malloc(cap + 1);
    assert_non_null(b);
    b[cap] = CANARY;
    OK(embd_pgcopy_header(&w, b, cap, &n));
    at += n;
    embd_error err;
    OK(embd_pgcopy_write_f32(&w, v, count, dims, NULL, b + at, cap - at, &n, &err));
    assert_int_equal(n, size);
    at += n;
    OK(embd_pgcopy_trailer(&w, b + at, cap - at, &n));
    at += n;
    assert_int_equal(at, cap);
    assert_int_equal(w.bytes, cap);
    assert_int_equal(b[cap], CANARY);
    /* parse */
    const uint8_t *p = b + 19;
    for (size_t i = 0; i < count; i++) {
      const float *row = v + i * dims;
      const int id = (round & 8) != 0;
      assert_int_equal(rd16(p), 1 + id);
      p += 2;
      if (id) {
        assert_int_equal(rd32(p), 8);
        assert_int_equal(rd32(p + 8), i);
        p += 12;
      }
      const uint32_t len = rd32(p);
      p += 4;
      const uint8_t *f = p;
      switch (t) {
        case EMBD_PG_VECTOR:
        case EMBD_PG_HALFVEC:
          assert_int_equal(rd16(f), dims);
          assert_int_equal(rd16(f + 2), 0);
          assert_int_equal(len, 4 + (t == EMBD_PG_VECTOR ? 4 : 2) * dims);
          for (size_t j = 0; j < dims; j++)
            if (t == EMBD_PG_VECTOR)
              assert_int_equal(rd32(f + 4 + 4 * j), f2u(row[j]));
            else
              assert_int_equal(rd16(f + 4 + 2 * j), ref_f16(row[j]));
          break;
        case EMBD_PG_SPARSEVEC: {
          size_t nnz = 0;
          for (size_t j = 0; j < dims; j++) nnz += row[j] != 0;
          assert_int_equal(rd32(f), dims);
          assert_int_equal(rd32(f + 4), nnz);
          assert_int_equal(rd32(f + 8), 0);
          assert_int_equal(len, 12 + 8 * nnz);
          size_t k = 0;
          for (size_t j = 0; j < dims; j++) {
            if (row[j] == 0) continue;
            assert_int_equal(rd32(f + 12 + 4 * k), j);
            assert_int_equal(rd32(f + 12 + 4 * nnz + 4 * k), f2u(row[j]));
            k++;
          }
          break;
        }
        case EMBD_PG_BIT:
          assert_int_equal(rd32(f), dims);
          assert_int_equal(len, 4 + (dims + 7) / 8);
          for (size_t j = 0; j < (dims + 7) / 8 * 8; j++) {
            const int bit = (f[4 + j / 8] >> (7 - j % 8)) & 1;
            assert_int_equal(bit, j < dims && row[j] > 0);
          }
          break;
        case EMBD_PG_FLOAT4_ARRAY:
          assert_int_equal(len, 20 + 8 * dims);
          assert_int_equal(rd32(f), 1);
          assert_int_equal(rd32(f + 4), 0);
          assert_int_equal(rd32(f + 8), 700);
          assert_int_equal(rd32(f + 12), dims);
          assert_int_equal(rd32(f + 16), 1);
          for (size_t j = 0; j < dims; j++) {
            assert_int_equal(rd32(f + 20 + 8 * j), 4);
            assert_int_equal(rd32(f + 24 + 8 * j), f2u(row[j]));
          }
          break;
        default:
          assert_int_equal(len, 4 * dims);
          for (size_t j = 0; j < dims; j++) {
            const uint32_t le = (uint32_t)f[4 * j] | (uint32_t)f[4 * j + 1] << 8 |
                                (uint32_t)f[4 * j + 2] << 16 | (uint32_t)f[4 * j + 3] << 24;
            assert_int_equal(le, f2u(row[j]));
          }
          break;
      }
      p += len;
    }
    assert_int_equal(rd16(p), 0xffff);
    assert_true(p + 2 == b + cap);
    free(b);
    free(v);
  }
}

int main(void) {
  int s = tu_isa_preflight("test_pgcopy");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_trailer),   cmocka_unit_test(test_vector_golden),
      cmocka_unit_test(test_halfvec_golden),   cmocka_unit_test(test_sparsevec_golden),
      cmocka_unit_test(test_bit_golden),       cmocka_unit_test(test_float4_array_golden),
      cmocka_unit_test(test_bytea_golden),     cmocka_unit_test(test_null_and_ids),
      cmocka_unit_test(test_refused_values),   cmocka_unit_test(test_dims_errors),
      cmocka_unit_test(test_sparse_errors),    cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_random_parse_back), cmocka_unit_test(test_key_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
