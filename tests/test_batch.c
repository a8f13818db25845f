/* Batch envelope: round trips through every encoder entry point and flag combination,
 * the iterator's frames (offsets, info, payload pointers) and every error with its code,
 * offset and frame index in the message.
 *
 * Environment: EMBD_TEST_SCALE, EMBD_TEST_SEED, EMBD_ISA.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <stdio.h>

#include "batchutil.h"
#include "testutil.h"

static tu_rng g_rng;

static void put32le(uint8_t *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* count vectors of dims random bit patterns (NaN payloads included). */
static float *rand_vecs(size_t count, size_t dims) {
  float *v = malloc(count * dims * sizeof *v + 4);
  assert_non_null(v);
  tu_fill(&g_rng, v, count * dims * sizeof *v);
  return v;
}

static uint8_t *enc_batch(const float *v, size_t count, size_t dims, unsigned flags, size_t *len) {
  size_t cap;
  assert_int_equal(embd_batch_size(count, dims, flags, &cap), EMBD_OK);
  uint8_t *b = malloc(cap);
  assert_non_null(b);
  embd_frame_encode_options o = {.flags = flags, .level = 0};
  assert_int_equal(embd_batch_encode_f32(v, count, dims, &o, b, cap, len), EMBD_OK);
  if (!(flags & EMBD_FRAME_ZLIB)) assert_int_equal(*len, cap);
  return b;
}

static void test_strerror(void **state) {
  (void)state;
  const embd_result k[] = {EMBD_ERR_BATCH_TOO_SMALL, EMBD_ERR_BATCH_COUNT,
                           EMBD_ERR_BATCH_TRAILING, EMBD_ERR_STREAM_FRAME_TOO_LARGE};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal((int)k[i], 20 + (int)i);
    assert_string_not_equal(embd_strerror(k[i]), "unknown result");
  }
}

static void test_roundtrip(void **state) {
  (void)state;
  const size_t dims_list[] = {0, 1, 3, 17, 384};
  for (unsigned flags = 0; flags < 4; flags++) {
    for (size_t di = 0; di < sizeof dims_list / sizeof dims_list[0]; di++) {
      for (size_t count = 0; count < 5; count++) {
        const size_t dims = dims_list[di];
        float *v = rand_vecs(count, dims);
        size_t len;
        uint8_t *b = enc_batch(v, count, dims, flags, &len);
        /* Same bytes from the pointer form and the incremental encoder. */
        const float *ptrs[5];
        size_t dv[5];
        for (size_t i = 0; i < count; i++) ptrs[i] = v + i * dims, dv[i] = dims;
        uint8_t *b2 = malloc(len + 64);
        size_t len2;
        embd_frame_encode_options o = {.flags = flags, .level = 0};
        assert_int_equal(embd_batch_encode_ptrs(ptrs, dv, count, &o, b2, len + 64, &len2), EMBD_OK);
        assert_int_equal(len2, len);
        assert_memory_equal(b2, b, len);
        embd_batch_encoder e;
        assert_int_equal(embd_batch_begin(&e, (uint32_t)count, &o, b2, len), EMBD_OK);
        for (size_t i = 0; i < count; i++)
          assert_int_equal(embd_batch_append_f32(&e, v + i * dims, dims), EMBD_OK);
        assert_int_equal(embd_batch_finish(&e, &len2), EMBD_OK);
        assert_int_equal(len2, len);
        assert_memory_equal(b2, b, len);
        free(b2);

        /* Decode. */
        embd_batch_iter it;
        embd_batch_frame f;
        embd_error err;
        assert_int_equal(embd_batch_iter_init(&it, b, len, NULL, &err), EMBD_OK);
        float *out = malloc(dims * sizeof *out + 4);
        size_t at = 4;
        for (size_t i = 0; i < count; i++) {
          assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_OK);
          assert_int_equal(f.index, i);
          assert_int_equal(f.offset, at);
          assert_int_equal(f.info.dims, dims);
          assert_int_equal(f.info.flags, flags);
          assert_ptr_equal(f.data, b + at);
          assert_ptr_equal(f.payload, b + at + 16);
          assert_int_equal(f.payload_len, f.info.payload_size);
          assert_int_equal(embd_batch_frame_decode(&f, out, dims, &err), EMBD_OK);
          if (dims) assert_memory_equal(out, v + i * dims, dims * 4);
          at += f.info.frame_size;
        }
        assert_int_equal(at, len);
        assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);
        assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);
        free(out);
        free(b);
        free(v);
      }
    }
  }
  /* Doubles through the incremental encoder, mixed dims and flags via two encoders. */
  const double d[3] = {1.0, -2.5, 0.0};
  uint8_t buf[64];
  embd_batch_encoder e;
  size_t n;
  assert_int_equal(embd_batch_begin(&e, 1, NULL, buf, sizeof buf), EMBD_OK);
  assert_int_equal(embd_batch_append_f64(&e, d, 3), EMBD_OK);
  assert_int_equal(embd_batch_finish(&e, &n), EMBD_OK);
  assert_int_equal(n, 4 + 28);
  const uint8_t want_hdr[] = {1, 0, 0, 0, 0x45, 0x4d, 0x42, 0x44, 1, 0, 0, 0, 3, 0, 0, 0, 0x81, 0x78, 0xe7, 0x09};
  assert_memory_equal(buf, want_hdr, sizeof want_hdr);
}

static void test_encode_errors(void **state) {
  (void)state;
  const float v[4] = {1, 2, 3, 4};
  uint8_t buf[256];
  size_t n;
  embd_batch_encoder e;
  /* finish with fewer frames than the count; appending more than the count */
  assert_int_equal(embd_batch_begin(&e, 2, NULL, buf, sizeof buf), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, v, 4), EMBD_OK);
  assert_int_equal(embd_batch_finish(&e, &n), EMBD_ERR_BATCH_COUNT);
  assert_int_equal(embd_batch_begin(&e, 1, NULL, buf, sizeof buf), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, v, 4), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, v, 4), EMBD_ERR_BATCH_COUNT);
  assert_int_equal(embd_batch_finish(&e, &n), EMBD_ERR_BATCH_COUNT); /* sticky */
  /* output too small, at the count and at a frame */
  assert_int_equal(embd_batch_begin(&e, 1, NULL, buf, 3), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(embd_batch_encode_f32(v, 2, 2, NULL, buf, 4 + 24 + 23, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(embd_batch_encode_f32(v, 2, 2, NULL, buf, 4 + 24 + 24, &n), EMBD_OK);
  assert_int_equal(n, 52);
  embd_frame_encode_options bad = {.flags = 0x04, .level = 0};
  assert_int_equal(embd_batch_begin(&e, 1, &bad, buf, sizeof buf), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_encode_f32(NULL, 2, 2, NULL, buf, sizeof buf, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_encode_ptrs(NULL, NULL, 1, NULL, buf, sizeof buf, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_size(SIZE_MAX / 8, 1000, 0, &n), EMBD_ERR_INVALID_ARGUMENT);
}

/* One decode, expecting result r at offset off, the message containing `sub`. */
static void expect(const uint8_t *b, size_t len, const embd_frame_decode_options *o,
                   embd_result r, size_t off, const char *sub) {
  bu_rec rec;
  bu_batch(b, len, o, &rec);
  if (rec.result != r || (off != SIZE_MAX && rec.err_offset != off) || (sub && !strstr(rec.message, sub)))
    fail_msg("got %d (%s) at %zu \"%s\", want %d at %zu \"%s\"", rec.result,
             embd_strerror(rec.result), rec.err_offset, rec.message, r, off, sub ? sub : "");
  bu_free(&rec);
}

static void test_decode_errors(void **state) {
  (void)state;
  const float v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  size_t len;
  uint8_t *b = enc_batch(v, 3, 3, 0, &len); /* frames at 4, 32, 60; len 88 */
  assert_int_equal(len, 88);
  uint8_t *c = malloc(1024); /* the compressed batches below are longer */
  expect(b, len, NULL, EMBD_OK, 0, NULL);
  expect(b, 0, NULL, EMBD_ERR_BATCH_TOO_SMALL, 0, "batch too small");
  expect(b, 3, NULL, EMBD_ERR_BATCH_TOO_SMALL, 3, NULL);
  /* count cannot fit: error before any frame */
  memcpy(c, b, len);
  put32le(c, 6); /* 6 * 16 = 96 > 84 */
  expect(c, len, NULL, EMBD_ERR_BATCH_COUNT, 0, "count 6");
  put32le(c, 0xFFFFFFFFu);
  expect(c, len, NULL, EMBD_ERR_BATCH_COUNT, 0, NULL);
  /* count 5 fits by the 16-byte rule but the frames end: truncated header of frame 3 */
  put32le(c, 5);
  expect(c, len, NULL, EMBD_ERR_FRAME_TRUNCATED, 88, "frame 3 at byte 88");
  /* count 2: trailing bytes after frame 1 */
  put32le(c, 2);
  expect(c, len, NULL, EMBD_ERR_BATCH_TRAILING, 60, "28 bytes after");
  /* trailing bytes after the full batch */
  memcpy(c, b, len);
  c[len] = 0;
  expect(c, len + 1, NULL, EMBD_ERR_BATCH_TRAILING, 88, NULL);
  /* last frame runs past the end */
  expect(b, len - 1, NULL, EMBD_ERR_FRAME_TRUNCATED, 87, "frame 2 at byte 60");
  expect(b, 60 + 10, NULL, EMBD_ERR_FRAME_TRUNCATED, 70, "frame 2 at byte 60");
  /* every header field of frame 1 */
  struct { size_t at; uint8_t x; embd_result r; size_t off; } k[] = {
      {32 + 0, 0x01, EMBD_ERR_FRAME_BAD_MAGIC, 32},    {32 + 4, 0x02, EMBD_ERR_FRAME_BAD_VERSION, 36},
      {32 + 5, 0x80, EMBD_ERR_FRAME_UNKNOWN_FLAGS, 37}, {32 + 7, 0x01, EMBD_ERR_FRAME_BAD_PADDING, 39},
      {32 + 9, 0x01, EMBD_ERR_FRAME_HEADER_CRC, 44},   {32 + 13, 0x01, EMBD_ERR_FRAME_HEADER_CRC, 44}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    memcpy(c, b, len);
    c[k[i].at] ^= k[i].x;
    expect(c, len, NULL, k[i].r, k[i].off, "frame 1 at byte 32: ");
  }
  /* dims limits */
  embd_frame_decode_options o = {.max_dims = 2, .expected_dims = 0, .allow_trailing = 0};
  expect(b, len, &o, EMBD_ERR_FRAME_DIMS_TOO_LARGE, 12, "frame 0 at byte 4: dims 3 above");
  o.max_dims = 0, o.expected_dims = 4;
  expect(b, len, &o, EMBD_ERR_FRAME_DIMS_MISMATCH, 12, NULL);
  free(b);
  /* payload CRC and inflate errors in compressed frames */
  b = enc_batch(v, 3, 3, EMBD_FRAME_ZLIB | EMBD_FRAME_PAYLOAD_CRC, &len);
  memcpy(c, b, len);
  size_t f1 = 4 + (16 + 4 + (b[4 + 16] | b[4 + 17] << 8) + 4);
  c[f1 + 22] ^= 0x10; /* inside frame 1's zlib stream */
  expect(c, len, NULL, EMBD_ERR_FRAME_PAYLOAD_CRC, SIZE_MAX, "frame 1 at byte");
  free(b);
  b = enc_batch(v, 3, 3, EMBD_FRAME_ZLIB, &len);
  memcpy(c, b, len);
  c[f1 - 4 + 20 + 1] ^= 0xFF; /* frame 1's zlib header FLG byte */
  bu_rec rec;
  bu_batch(c, len, NULL, &rec);
  assert_int_equal(rec.result, EMBD_ERR_FRAME_INFLATE);
  assert_true(rec.decode_failed);
  assert_int_equal(rec.nframes, 1);
  assert_true(rec.err_offset >= f1 - 4);
  assert_non_null(strstr(rec.message, "frame 1 at byte"));
  bu_free(&rec);
  /* sticky */
  embd_batch_iter it;
  embd_batch_frame f;
  embd_error err;
  assert_int_equal(embd_batch_iter_init(&it, b, 3, NULL, &err), EMBD_ERR_BATCH_TOO_SMALL);
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_ERR_BATCH_TOO_SMALL);
  assert_int_equal(err.offset, 3);
  free(b);
  free(c);
}

/* ---- dtypes: frames of their own dims and dtype ------------------------------------------- */

static void test_dtype_batches(void **state) {
  (void)state;
  /* The float encoders write opt.dtype: f16 frames, per-frame dims via ptrs */
  const float a[3] = {1, -2, 0.5f}, b5[5] = {3, 4, 5, 6, 7};
  const float *ptrs[2] = {a, b5};
  const size_t dims[2] = {3, 5};
  embd_frame_encode_options o = {0};
  o.dtype = EMBD_DTYPE_F16;
  uint8_t buf[512];
  size_t n = 0, sz = 0;
  assert_int_equal(embd_batch_encode_ptrs(ptrs, dims, 2, &o, buf, sizeof buf, &n), EMBD_OK);
  assert_int_equal(n, 4 + 16 + 6 + 16 + 10);
  assert_int_equal(embd_batch_size_dtype(1, 3, EMBD_DTYPE_F16, 0, &sz), EMBD_OK);
  assert_int_equal(sz, 4 + 22);
  embd_batch_iter it;
  embd_batch_frame f;
  embd_error err;
  float out[8];
  uint8_t raw[16];
  assert_int_equal(embd_batch_iter_init(&it, buf, n, NULL, &err), EMBD_OK);
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_OK);
  assert_int_equal(f.info.dtype, EMBD_DTYPE_F16);
  assert_int_equal(f.info.dims, 3);
  assert_null(f.raw_values);
  assert_int_equal(embd_batch_frame_decode(&f, out, 8, &err), EMBD_OK);
  assert_true(out[0] == 1 && out[1] == -2 && out[2] == 0.5f);
  assert_int_equal(embd_batch_frame_decode_raw(&f, raw, sizeof raw, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_int_equal(raw[0], 0x00);
  assert_int_equal(raw[1], 0x3c);
  /* too small, in bytes: the frame's index and offset in the message */
  assert_int_equal(embd_batch_frame_decode_raw(&f, raw, 5, EMBD_ORDER_LE, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(err.offset, 4 + 8);
  assert_non_null(strstr(err.message, "frame 0 at byte 4: output holds 5 bytes, frame has 6 (3 dims of f16)"));
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_OK);
  assert_int_equal(f.info.dims, 5);
  assert_int_equal(f.offset, 4 + 22);
  assert_int_equal(embd_batch_frame_decode(&f, out, 8, &err), EMBD_OK);
  assert_memory_equal(out, b5, sizeof b5);
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);

  /* The same from embd_batch_encode_f32 (uniform dims) and the incremental encoder */
  const float u[6] = {1, 2, 3, 4, 5, 6};
  o.dtype = EMBD_DTYPE_INT8;
  assert_int_equal(embd_batch_encode_f32(u, 2, 3, &o, buf, sizeof buf, &n), EMBD_OK);
  assert_int_equal(n, 4 + 2 * 19);
  assert_int_equal(buf[4 + 4], 2);
  assert_int_equal(buf[4 + 6], EMBD_DTYPE_INT8);
  assert_int_equal(buf[4 + 16], 1);
  assert_int_equal(buf[4 + 19 + 18], 6);
  /* too small: the size of the int8 batch */
  assert_int_equal(embd_batch_encode_f32(u, 2, 3, &o, buf, 20, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 4 + 2 * 19);
  /* out of range for int8: the encoder's error, sticky */
  const float big[3] = {1, 2, 300};
  embd_batch_encoder e;
  assert_int_equal(embd_batch_begin(&e, 2, &o, buf, sizeof buf), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, u, 3), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, big, 3), EMBD_ERR_DTYPE_RANGE);
  assert_int_equal(embd_batch_finish(&e, &n), EMBD_ERR_DTYPE_RANGE);

  /* Mixed dtypes and dims: raw appends next to float appends */
  o.dtype = 0;
  o.flags = EMBD_FRAME_PAYLOAD_CRC;
  const uint8_t bits[2] = {0xa5, 0x0f};
  const uint8_t bf[4] = {0x3f, 0x80, 0xc0, 0x00}; /* bf16 1.0, -2.0 big-endian */
  assert_int_equal(embd_batch_begin(&e, 4, &o, buf, sizeof buf), EMBD_OK);
  assert_int_equal(embd_batch_append_raw(&e, bits, 16, EMBD_DTYPE_UBINARY, EMBD_ORDER_LE), EMBD_OK);
  assert_int_equal(embd_batch_append_f32(&e, a, 3), EMBD_OK);
  assert_int_equal(embd_batch_append_raw(&e, bf, 2, EMBD_DTYPE_BF16, EMBD_ORDER_BE), EMBD_OK);
  assert_int_equal(embd_batch_append_raw(&e, NULL, 0, EMBD_DTYPE_INT8, EMBD_ORDER_LE), EMBD_OK);
  assert_int_equal(embd_batch_finish(&e, &n), EMBD_OK);
  const embd_dtype want_dt[4] = {EMBD_DTYPE_UBINARY, EMBD_DTYPE_F32, EMBD_DTYPE_BF16, EMBD_DTYPE_INT8};
  const uint32_t want_dims[4] = {16, 3, 2, 0};
  assert_int_equal(embd_batch_iter_init(&it, buf, n, NULL, &err), EMBD_OK);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_OK);
    assert_int_equal(f.info.dtype, want_dt[i]);
    assert_int_equal(f.info.dims, want_dims[i]);
    assert_int_equal(f.info.flags, EMBD_FRAME_PAYLOAD_CRC);
    float v[16];
    assert_int_equal(embd_batch_frame_decode(&f, v, 16, &err), EMBD_OK);
    if (i == 0) {
      static const float w[16] = {1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1};
      assert_memory_equal(v, w, sizeof w);
    } else if (i == 2) {
      assert_true(v[0] == 1.0f && v[1] == -2.0f);
      uint8_t r2[4];
      assert_int_equal(embd_batch_frame_decode_raw(&f, r2, 4, EMBD_ORDER_BE, &err), EMBD_OK);
      assert_memory_equal(r2, bf, 4);
    }
  }
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);

  /* One-shot raw with per-frame dtypes; its size on too small; argument rules */
  const void *data[3] = {bits, bf, u};
  const size_t rd[3] = {16, 2, 6};
  const embd_dtype rdt[3] = {EMBD_DTYPE_BINARY, EMBD_DTYPE_F16, EMBD_DTYPE_F32};
  size_t need = 0;
  assert_int_equal(embd_batch_encode_raw(data, rd, rdt, 3, bu_host_order(), NULL, buf, 10, &need),
                   EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(need, 4 + (16 + 2) + (16 + 4) + (16 + 24));
  assert_int_equal(embd_batch_encode_raw(data, rd, rdt, 3, bu_host_order(), NULL, buf, need, &n), EMBD_OK);
  assert_int_equal(n, need);
  assert_int_equal(buf[4 + 4], 2);                /* binary: version 2 */
  assert_int_equal(buf[4 + 18 + 20 + 4], 1);      /* f32: version 1, the seed's frame */
  float back[6];
  assert_int_equal(embd_frame_decode(buf + 4 + 18 + 20, 40, NULL, back, 6, NULL, &err), EMBD_OK);
  assert_memory_equal(back, u, sizeof u); /* host-order floats went in as such */
  o.flags = 0;
  o.dtype = EMBD_DTYPE_F16; /* with dtypes given, opt.dtype must be 0 */
  assert_int_equal(embd_batch_encode_raw(data, rd, rdt, 3, EMBD_ORDER_LE, &o, buf, sizeof buf, &n),
                   EMBD_ERR_INVALID_ARGUMENT);
  /* without dtypes, every frame is opt.dtype */
  const void *d2[2] = {bf, bits}; /* 2 and 1 f16 elements: 4 and 2 bytes */
  const size_t dd2[2] = {2, 1};
  assert_int_equal(embd_batch_encode_raw(d2, dd2, NULL, 2, EMBD_ORDER_LE, &o, buf, sizeof buf, &n), EMBD_OK);
  assert_int_equal(n, 4 + 20 + 18);
  /* packed bits, dims not a multiple of 8 */
  const size_t bad_dims[1] = {12};
  const embd_dtype ub[1] = {EMBD_DTYPE_UBINARY};
  assert_int_equal(embd_batch_encode_raw(data, bad_dims, ub, 1, EMBD_ORDER_LE, NULL, buf, sizeof buf, &n),
                   EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_batch_append_raw(NULL, bits, 8, EMBD_DTYPE_INT8, EMBD_ORDER_LE), EMBD_ERR_INVALID_ARGUMENT);
  embd_frame_encode_options bad = {0};
  bad.dtype = 42;
  assert_int_equal(embd_batch_begin(&e, 1, &bad, buf, sizeof buf), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_batch_size_dtype(1, 9, EMBD_DTYPE_BINARY, 0, &sz), EMBD_ERR_DTYPE_LENGTH);

  /* a frame with an unknown dtype code inside a batch: its offset and index */
  assert_int_equal(embd_batch_encode_raw(data, rd, rdt, 3, bu_host_order(), NULL, buf, sizeof buf, &n), EMBD_OK);
  buf[4 + 18 + 6] = 77; /* frame 1's dtype byte; re-CRC so the field is what fails */
  const uint32_t crc = embd_crc32(0, buf + 4 + 18, 12);
  put32le(buf + 4 + 18 + 12, crc);
  expect(buf, n, NULL, EMBD_ERR_FRAME_BAD_DTYPE, 4 + 18 + 6,
         "frame 1 at byte 22: unknown dtype code 77 (byte 6; known: 0-8)");
}

int main(void) {
  int s = tu_isa_preflight("test_batch");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strerror),
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_encode_errors),
      cmocka_unit_test(test_decode_errors),
      cmocka_unit_test(test_dtype_batches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
