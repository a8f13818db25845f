/* Stream decoder: must equal the one-shot batch decoder (same frames, same value bits,
 * same error code and offset) for every split of small batches into 2 and 3 chunks,
 * 1-byte chunks, random chunkings of a large batch, and every single-byte corruption and
 * truncation of a small batch. Plus: zero-copy delivery, sticky errors, the frame-size
 * limit, the callback's result, the non-batch mode and the buffer bound.
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

/* A batch of `count` frames of dims[i] random elements of dtypes[i], flags cycling 0..3
 * (the incremental encoder's raw appends: frames of their own dims and dtype); dt NULL:
 * float32 frames through embd_batch_append_f32. */
static uint8_t *make_dtype_batch(size_t count, const size_t *dims, const embd_dtype *dt, size_t *len) {
  size_t cap = 4;
  for (size_t i = 0; i < count; i++) {
    size_t one;
    assert_int_equal(embd_frame_size_dtype(dims[i], dt ? dt[i] : EMBD_DTYPE_F32, 3, &one), EMBD_OK);
    cap += one;
  }
  uint8_t *b = malloc(cap);
  assert_non_null(b);
  embd_batch_encoder e;
  assert_int_equal(embd_batch_begin(&e, (uint32_t)count, NULL, b, cap), EMBD_OK);
  for (size_t i = 0; i < count; i++) {
    float *v = malloc(dims[i] * 4 + 4);
    tu_fill(&g_rng, v, dims[i] * 4);
    e.opt.flags = (unsigned)(i % 4);
    e.opt.level = (int)(i % 10);
    if (dt) assert_int_equal(embd_batch_append_raw(&e, v, dims[i], dt[i], EMBD_ORDER_LE), EMBD_OK);
    else assert_int_equal(embd_batch_append_f32(&e, v, dims[i]), EMBD_OK);
    free(v);
  }
  assert_int_equal(embd_batch_finish(&e, len), EMBD_OK);
  return b;
}

/* A batch of `count` float32 frames with dims from dims[] and flags cycling 0..3. */
static uint8_t *make_batch(size_t count, const size_t *dims, size_t *len) {
  return make_dtype_batch(count, dims, NULL, len);
}

static void same_mode(const uint8_t *b, size_t len, uint32_t max_dims, const size_t *cuts,
                      size_t ncuts, int mode) {
  bu_rec a, s;
  embd_frame_decode_options o = {.max_dims = max_dims, .expected_dims = 0, .allow_trailing = 0};
  bu_batch(b, len, &o, &a);
  bu_stream_mode(b, len, max_dims, cuts, ncuts, mode, &s);
  int c = bu_cmp(&a, &s);
  /* A compressed frame whose length field exceeds the stream's one-frame buffer: the
   * stream stops there (the batch decoder reads on and fails later or differently). */
  if (c && s.result == EMBD_ERR_STREAM_FRAME_TOO_LARGE && s.nframes <= a.nframes &&
      !(a.result == EMBD_OK && s.nframes == a.nframes))
    c = 0;
  /* A count too large for the input: the batch decoder knows before any frame, the stream
   * at finish (or at a broken frame before): it must fail too. */
  if (c && a.result == EMBD_ERR_BATCH_COUNT && s.result != EMBD_OK) c = 0;
  if (c) {
    fprintf(stderr, "mode %d len %zu, %zu cuts:", mode, len, ncuts);
    for (size_t i = 0; i < ncuts && i < 16; i++) fprintf(stderr, " %zu", cuts[i]);
    fprintf(stderr, "\nbatch: %zu frames, %d at %zu: %s\nstream: %zu frames, %d at %zu: %s\n",
            a.nframes, a.result, a.err_offset, a.message, s.nframes, s.result, s.err_offset,
            s.message);
    fail_msg("stream != batch (%d)", c);
  }
  bu_free(&a);
  bu_free(&s);
}

/* Each of the five ways out: on_frame only, dest for every frame, dest for every other,
 * dest_raw for every frame, dest_raw for every other. */
static void same(const uint8_t *b, size_t len, uint32_t max_dims, const size_t *cuts, size_t ncuts) {
  for (int mode = 0; mode < 5; mode++) same_mode(b, len, max_dims, cuts, ncuts, mode);
}

static void every_chunking(const uint8_t *b, size_t len, uint32_t max_dims) {
  size_t cuts[2];
  same(b, len, max_dims, NULL, 0);
  for (size_t i = 0; i <= len; i++) {
    cuts[0] = i;
    same(b, len, max_dims, cuts, 1);
    for (size_t j = i; j <= len; j += 1 + (len > 200 ? 3 : 0)) {
      cuts[1] = j;
      same(b, len, max_dims, cuts, 2);
    }
  }
  size_t *ones = malloc(len * sizeof *ones + 1);
  for (size_t i = 0; i < len; i++) ones[i] = i + 1;
  same(b, len, max_dims, ones, len);
  free(ones);
}

static void test_small_chunkings(void **state) {
  (void)state;
  const size_t d1[3] = {3, 0, 5}, d2[3] = {2, 2, 2};
  size_t len;
  uint8_t *b = make_batch(3, d1, &len);
  every_chunking(b, len, 8);
  free(b);
  /* Four frames, one of each flag combination. */
  const size_t d4[4] = {4, 1, 3, 2};
  b = make_batch(4, d4, &len);
  every_chunking(b, len, 4);
  free(b);
  b = make_batch(3, d2, &len);
  every_chunking(b, len, 2);
  /* An empty batch; one with only a count. */
  uint8_t z[4] = {0, 0, 0, 0};
  every_chunking(z, 4, 1);
  free(b);
}

static void test_corruptions(void **state) {
  (void)state;
  const size_t d[3] = {3, 2, 4};
  size_t len;
  uint8_t *b = make_batch(3, d, &len);
  uint8_t *c = malloc(len);
  size_t cuts[3];
  for (size_t at = 0; at < len; at++) {
    for (int bit = 0; bit < 8; bit += 3) {
      memcpy(c, b, len);
      c[at] ^= (uint8_t)(1u << bit);
      bu_rec a;
      embd_frame_decode_options o = {.max_dims = 4, .expected_dims = 0, .allow_trailing = 0};
      bu_batch(c, len, &o, &a);
      for (int k = 0; k < 4; k++) {
        cuts[0] = tu_range(&g_rng, 0, len);
        cuts[1] = tu_range(&g_rng, cuts[0], len);
        cuts[2] = tu_range(&g_rng, cuts[1], len);
        if (a.result == EMBD_ERR_BATCH_COUNT) {
          /* The stream only learns the input's length at finish: any error will do. */
          bu_rec s;
          bu_stream(c, len, 4, cuts, 3, &s);
          assert_int_not_equal(s.result, EMBD_OK);
          bu_free(&s);
        } else {
          same(c, len, 4, cuts, (size_t)k);
        }
      }
      bu_free(&a);
    }
  }
  /* Every truncation, and every truncation fed byte by byte. */
  size_t *ones = malloc(len * sizeof *ones);
  for (size_t i = 0; i < len; i++) ones[i] = i + 1;
  for (size_t n = 0; n <= len; n++) {
    same(b, n, 4, NULL, 0);
    same(b, n, 4, ones, n ? n - 1 : 0);
  }
  /* Extra bytes after the last frame. */
  uint8_t *x = malloc(len + 3);
  memcpy(x, b, len);
  memset(x + len, 0xAB, 3);
  same(x, len + 3, 4, NULL, 0);
  cuts[0] = len + 1;
  same(x, len + 3, 4, cuts, 1);
  free(x);
  free(ones);
  free(c);
  free(b);
}

static void test_large_random(void **state) {
  (void)state;
  const size_t count = tu_scaled(200, 40);
  size_t *d = malloc(count * sizeof *d);
  for (size_t i = 0; i < count; i++) d[i] = tu_range(&g_rng, 0, 1024);
  size_t len;
  uint8_t *b = make_batch(count, d, &len);
  size_t *cuts = malloc((len + 1) * sizeof *cuts);
  const size_t rounds = tu_scaled(20, 6);
  for (size_t r = 0; r < rounds; r++) {
    size_t n = 0, at = 0;
    const size_t maxchunk = r % 3 == 0 ? 7 : r % 3 == 1 ? 5000 : len;
    for (;;) {
      at += tu_range(&g_rng, 0, maxchunk);
      if (at >= len) break;
      cuts[n++] = at;
    }
    same(b, len, 1024, cuts, n);
  }
  free(cuts);
  free(b);
  free(d);
}

/* ---- behaviour beyond equality --------------------------------------------------------- */

typedef struct ctx {
  const uint8_t *lo, *hi; /* the chunk being fed */
  int inplace, copied, n;
  embd_result ret;
} ctx;

static embd_result cb_where(void *user, const embd_batch_frame *f) {
  ctx *c = user;
  if (f->data >= c->lo && f->data < c->hi) c->inplace++;
  else c->copied++;
  c->n++;
  return c->ret;
}

static void test_behaviour(void **state) {
  (void)state;
  const size_t d[3] = {3, 0, 5};
  size_t len;
  uint8_t *b = make_batch(3, d, &len);
  ctx c = {b, b + len, 0, 0, 0, EMBD_OK};
  embd_stream_options so = {.max_dims = 8, .expected_dims = 0, .batch = 1, .on_frame = cb_where, .user = &c, .dest = NULL};
  embd_stream *s;
  embd_error err;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  /* One chunk: every frame in place. */
  assert_int_equal(embd_stream_feed(s, b, len, &err), EMBD_OK);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_OK);
  assert_int_equal(c.inplace, 3);
  assert_int_equal(c.copied, 0);
  assert_int_equal(embd_stream_frames(s), 3);
  assert_int_equal(embd_stream_offset(s), len);
  embd_stream_destroy(s);
  /* Byte by byte: every frame copied. */
  memset(&c, 0, sizeof c);
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  for (size_t i = 0; i < len; i++) assert_int_equal(embd_stream_feed(s, b + i, 1, &err), EMBD_OK);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_OK);
  assert_int_equal(c.copied, 3);
  embd_stream_destroy(s);
  /* Sticky errors, and the callback's result stops the stream. */
  memset(&c, 0, sizeof c);
  c.ret = EMBD_ERR_OUTPUT_TOO_SMALL;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b, len, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(err.offset, 4);
  assert_int_equal(c.n, 1);
  assert_int_equal(embd_stream_feed(s, b, 0, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(err.offset, 4);
  assert_non_null(strstr(err.message, "frame 0 at byte 4"));
  embd_stream_destroy(s);
  /* Non-batch mode: frames back to back without a count; a truncated tail at finish. */
  memset(&c, 0, sizeof c);
  so.batch = 0;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b + 4, len - 4 - 1, &err), EMBD_OK);
  assert_int_equal(c.n, 2);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_ERR_FRAME_TRUNCATED);
  assert_int_equal(err.offset, len - 5);
  embd_stream_destroy(s);
  /* Dims above max_dims; a compressed frame larger than the buffer. */
  memset(&c, 0, sizeof c);
  so.max_dims = 4;
  so.batch = 1;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b, len, &err), EMBD_ERR_FRAME_DIMS_TOO_LARGE);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_ERR_FRAME_DIMS_TOO_LARGE);
  assert_int_equal(c.n, 2);
  embd_stream_destroy(s);
  uint8_t big[64] = {1, 0, 0, 0, 0x45, 0x4d, 0x42, 0x44, 1, 1, 0, 0, 1, 0, 0, 0};
  uint32_t crc = embd_crc32(0, big + 4, 12);
  for (int k = 0; k < 4; k++) big[16 + k] = (uint8_t)(crc >> (8 * k));
  big[20] = 0xFF, big[21] = 0xFF, big[22] = 0, big[23] = 0; /* clen 65535 */
  so.max_dims = 1;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, big, sizeof big, &err), EMBD_ERR_STREAM_FRAME_TOO_LARGE);
  assert_int_equal(err.offset, 4);
  embd_stream_destroy(s);
  /* Bad arguments; the buffer bound. */
  so.max_dims = 0;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_ERR_INVALID_ARGUMENT);
  so.max_dims = 1;
  so.on_frame = NULL;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_ERR_INVALID_ARGUMENT);
  size_t cap;
  assert_int_equal(embd_stream_buffer_size(1024, &cap), EMBD_OK);
  assert_true(cap >= 16 + 4096 + 4 && cap < 16 + 4096 + 64);
  free(b);
}

/* ---- dest: decoding straight into caller memory ---------------------------------------- */

typedef struct dctx {
  float *out;     /* frame i at out + i * 8 */
  int direct, assembled, calls;
  uint32_t last_index;
} dctx;

static float *dest8(void *user, uint32_t index, const embd_frame_info *info) {
  dctx *c = user;
  assert_true(info->dims <= 8);
  c->last_index = index;
  return c->out + (size_t)index * 8;
}

static embd_result cb_dest(void *user, const embd_batch_frame *f) {
  dctx *c = user;
  assert_ptr_equal(f->values, c->out + (size_t)f->index * 8);
  if (f->data) c->assembled++;
  else c->direct++;
  c->calls++;
  return EMBD_OK;
}

static void test_dest(void **state) {
  (void)state;
  const size_t d[4] = {3, 0, 5, 8};
  size_t len;
  uint8_t *b = make_batch(4, d, &len); /* flags 0, 1, 2, 3 */
  float want[32], got[32];
  bu_rec a;
  embd_frame_decode_options o = {.max_dims = 8, .expected_dims = 0, .allow_trailing = 0};
  bu_batch(b, len, &o, &a);
  assert_int_equal(a.result, EMBD_OK);
  for (size_t i = 0, v = 0; i < 4; v += d[i], i++) memcpy(want + 8 * i, a.vals + v, d[i] * 4);
  bu_free(&a);

  /* Byte by byte with on_frame: the uncompressed frames with a payload never touch the
   * buffer (data NULL); the compressed one (frame 1, dims 0) and frame 3 (compressed) are
   * decoded into dest when complete. */
  dctx c = {got, 0, 0, 0, 0};
  embd_stream_options so = {.max_dims = 8, .expected_dims = 0, .batch = 1, .on_frame = cb_dest, .user = &c, .dest = dest8};
  embd_stream *s;
  embd_error err;
  memset(got, 0, sizeof got);
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  for (size_t i = 0; i < len; i++) assert_int_equal(embd_stream_feed(s, b + i, 1, &err), EMBD_OK);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_OK);
  embd_stream_destroy(s);
  assert_int_equal(c.calls, 4);
  assert_int_equal(c.direct, 2);
  assert_int_equal(c.assembled, 2);
  for (size_t i = 0; i < 4; i++) assert_memory_equal(got + 8 * i, want + 8 * i, d[i] * 4);

  /* dest alone (no on_frame), one chunk. */
  so.on_frame = NULL;
  memset(got, 0, sizeof got);
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b, len, &err), EMBD_OK);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_OK);
  assert_int_equal(embd_stream_frames(s), 4);
  embd_stream_destroy(s);
  for (size_t i = 0; i < 4; i++) assert_memory_equal(got + 8 * i, want + 8 * i, d[i] * 4);

  /* Frames without the count, cut inside frame 0's payload (a direct frame; 16 + 12
   * bytes): truncated at finish, with how many of its bytes came. */
  so.batch = 0;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b + 4, 16 + 5, &err), EMBD_OK);
  assert_int_equal(embd_stream_finish(s, &err), EMBD_ERR_FRAME_TRUNCATED);
  assert_int_equal(err.offset, 21);
  assert_non_null(strstr(err.message, "frame 0 at byte 0: truncated: the input ends after 21 of"));
  embd_stream_destroy(s);
  so.batch = 1;

  /* Frame 2 (flags 2: payload CRC) with a flipped payload bit, fed in two pieces: the CRC
   * computed on the way catches it at the trailer. */
  embd_frame_info info;
  embd_frame_decode_options ot = {.max_dims = 8, .expected_dims = 0, .allow_trailing = 1};
  assert_int_equal(embd_frame_header(b + 32, len - 32, &ot, &info, NULL), EMBD_OK);
  const size_t f2 = 32 + info.frame_size; /* after the count, frame 0 and frame 1 */
  assert_int_equal(embd_frame_header(b + f2, len - f2, &ot, &info, NULL), EMBD_OK);
  assert_int_equal(info.flags, 2);
  b[f2 + 16 + 7] ^= 0x10;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b, f2 + 20, &err), EMBD_OK);
  assert_int_equal(embd_stream_feed(s, b + f2 + 20, len - f2 - 20, &err),
                   EMBD_ERR_FRAME_PAYLOAD_CRC);
  assert_int_equal(err.offset, f2 + 16 + 20);
  assert_int_equal(embd_stream_frames(s), 2);
  embd_stream_destroy(s);
  free(b);
}

/* Every dtype in one batch, through every chunking and every way out (dest converts,
 * dest_raw keeps the dtype): the same frames, dtypes and values as the one-shot iterator. */
static void test_dtypes(void **state) {
  (void)state;
  const embd_dtype dt[9] = {EMBD_DTYPE_F16, EMBD_DTYPE_BF16, EMBD_DTYPE_INT8, EMBD_DTYPE_UBINARY,
                            EMBD_DTYPE_F32, EMBD_DTYPE_FP8_E4M3, EMBD_DTYPE_FP8_E5M2,
                            EMBD_DTYPE_UINT8, EMBD_DTYPE_BINARY};
  const size_t d[9] = {3, 5, 7, 16, 2, 1, 6, 4, 8};
  size_t len;
  uint8_t *b = make_dtype_batch(9, d, dt, &len);
  /* the dtypes are on the wire as written */
  embd_batch_iter it;
  embd_batch_frame f;
  assert_int_equal(embd_batch_iter_init(&it, b, len, NULL, NULL), EMBD_OK);
  for (int i = 0; i < 9; i++) {
    assert_int_equal(embd_batch_next(&it, &f, NULL), EMBD_OK);
    assert_int_equal(f.info.dtype, dt[i]);
    assert_int_equal(f.info.version, dt[i] == EMBD_DTYPE_F32 ? 1 : 2);
    assert_int_equal(f.info.dims, d[i]);
  }
  assert_int_equal(embd_batch_next(&it, &f, NULL), EMBD_BATCH_END);
  size_t cuts[2];
  same(b, len, 16, NULL, 0);
  for (size_t i = 0; i <= len; i += 3) {
    cuts[0] = i;
    same(b, len, 16, cuts, 1);
    for (size_t j = i; j <= len; j += 7) {
      cuts[1] = j;
      same(b, len, 16, cuts, 2);
    }
  }
  size_t *ones = malloc(len * sizeof *ones + 1);
  for (size_t i = 0; i < len; i++) ones[i] = i + 1;
  same(b, len, 16, ones, len);
  free(ones);
  free(b);
}

typedef struct rctx {
  uint8_t place[64];
  int direct, assembled;
} rctx;

static void *raw_place(void *user, uint32_t index, const embd_frame_info *info) {
  (void)index;
  assert_true(info->value_bytes <= 64);
  return ((rctx *)user)->place;
}
static float *float_place(void *user, uint32_t index, const embd_frame_info *info) {
  (void)index;
  assert_true(info->dims <= 16);
  return (float *)(void *)((rctx *)user)->place;
}
static embd_result count_paths(void *user, const embd_batch_frame *f) {
  rctx *c = user;
  if (f->data) c->assembled++;
  else c->direct++;
  return EMBD_OK;
}

/* Which frames go direct (written as their bytes arrive, never assembled): float32 in
 * both modes, single-byte dtypes with dest_raw, f16 with dest_raw on little-endian hosts
 * only; a converted dtype (f16 into floats) is decoded when complete. And the options'
 * rules: not both dests. */
static void test_dtype_dest_paths(void **state) {
  (void)state;
  const embd_dtype dts[4] = {EMBD_DTYPE_F32, EMBD_DTYPE_F16, EMBD_DTYPE_INT8, EMBD_DTYPE_UBINARY};
  for (int k = 0; k < 4; k++) {
    for (int raw = 0; raw < 2; raw++) {
      uint8_t b[4 + 16 + 64];
      size_t n = 0;
      embd_frame_encode_options o = {0};
      const size_t dims = 16;
      uint8_t data[64];
      for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 1);
      assert_int_equal(embd_batch_encode_raw((const void *const[]){data}, &dims, &dts[k], 1,
                                             EMBD_ORDER_LE, &o, b, sizeof b, &n), EMBD_OK);
      rctx c;
      memset(&c, 0, sizeof c);
      embd_stream_options so = {.max_dims = 16, .batch = 1, .on_frame = count_paths, .user = &c};
      if (raw) so.dest_raw = raw_place;
      else so.dest = float_place;
      embd_stream *s;
      embd_error err;
      assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
      for (size_t i = 0; i < n; i++) assert_int_equal(embd_stream_feed(s, b + i, 1, &err), EMBD_OK);
      assert_int_equal(embd_stream_finish(s, &err), EMBD_OK);
      embd_stream_destroy(s);
      const unsigned size = embd_dtype_bits(dts[k]) / 8;
      const int direct = dts[k] == EMBD_DTYPE_F32 || (raw && (size <= 1 || (bu_host_order() == EMBD_ORDER_LE)));
      assert_int_equal(c.direct, direct);
      assert_int_equal(c.assembled, !direct);
      /* either way the destination holds the values */
      size_t vb;
      assert_int_equal(embd_dtype_bytes(dts[k], dims, &vb), EMBD_OK);
      if (raw) {
        uint8_t want[64];
        assert_int_equal(embd_frame_decode_raw(b + 4, n - 4, NULL, want, sizeof want,
                                               bu_host_order(), NULL, NULL), EMBD_OK);
        assert_memory_equal(c.place, want, vb);
      } else {
        float want[16];
        assert_int_equal(embd_frame_decode(b + 4, n - 4, NULL, want, 16, NULL, NULL), EMBD_OK);
        assert_memory_equal(c.place, want, sizeof want);
      }
    }
  }
  embd_stream_options so = {.max_dims = 16, .dest = float_place, .dest_raw = raw_place};
  embd_stream *s = NULL;
  assert_int_equal(embd_stream_create(&so, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(s);
  so.dest = NULL; /* dest_raw alone is enough */
  assert_int_equal(embd_stream_create(&so, &s), EMBD_OK);
  /* a bad dtype code mid-stream: the frame's error at its byte 6 */
  uint8_t h[16] = {0x45, 0x4d, 0x42, 0x44, 2, 0, 12, 0, 1, 0, 0, 0};
  uint32_t crc = embd_crc32(0, h, 12);
  h[12] = (uint8_t)crc, h[13] = (uint8_t)(crc >> 8), h[14] = (uint8_t)(crc >> 16), h[15] = (uint8_t)(crc >> 24);
  embd_error err;
  assert_int_equal(embd_stream_feed(s, h, 16, &err), EMBD_ERR_FRAME_BAD_DTYPE);
  assert_int_equal(err.offset, 6);
  assert_non_null(strstr(err.message, "frame 0 at byte 0: unknown dtype code 12 (byte 6"));
  embd_stream_destroy(s);
}

int main(void) {
  int s = tu_isa_preflight("test_stream");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_chunkings),
      cmocka_unit_test(test_corruptions),
      cmocka_unit_test(test_large_random),
      cmocka_unit_test(test_behaviour),
      cmocka_unit_test(test_dest),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_dtype_dest_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
