/* The framer (src/wire/framer.h) under all four readers: one chunking test for all of them
 * (every input fed whole, byte by byte and in random chunks says exactly the same), the
 * validate-once count (each header and each payload CRC is checked once per frame on
 * every path), and the public "bytes this frame needs" calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embd/batch.h"
#include "embd/codec.h"
#include "embd/frame.h"
#include "embd/stream.h"
#include "framer_drive.h"
#include "testutil.h"

/* The library's test hook (src/core/internal.h): hidden, reachable from the static library. */
extern void (*embd_check_hook_)(int what);
enum { EMBD_CHECK_HEADER = 0, EMBD_CHECK_PAYLOAD_CRC = 1 }; /* its argument */
static unsigned long g_checks[2];
static void count_check(int what) { g_checks[what]++; }

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
} buf;
static void put(buf *b, const void *p, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  if (n) memcpy(b->p + b->n, p, n);
  b->n += n;
}

/* EMBD frames of every flag combination and a range of dims; every third frame a
 * version-2 frame of a dtype (cycling through them), so that each path also sizes,
 * checks once and decodes dtype frames. */
static size_t n_crc_frames;
static buf embd_frames(int batch, uint32_t count) {
  buf b = {0};
  if (batch) {
    uint8_t c[4] = {(uint8_t)count, (uint8_t)(count >> 8), (uint8_t)(count >> 16), (uint8_t)(count >> 24)};
    put(&b, c, 4);
  }
  n_crc_frames = 0;
  float v[700];
  uint8_t out[4096];
  for (uint32_t i = 0; i < count; i++) {
    const size_t dims = (i * 37) % 700;
    for (size_t k = 0; k < dims; k++) v[k] = (float)(i * 1000 + k) * 0.25f;
    embd_frame_encode_options o = {.flags = i % 4, .level = 1};
    if (i % 3 == 1) {
      o.dtype = 1 + (i / 3) % (EMBD_DTYPE_COUNT_ - 1);
      if (embd_dtype_bits((embd_dtype)o.dtype) == 1 && dims % 8) o.dtype = EMBD_DTYPE_FP8_E5M2;
      if (o.dtype == EMBD_DTYPE_INT8 || o.dtype == EMBD_DTYPE_UINT8) o.dtype = EMBD_DTYPE_BF16;
    }
    size_t w;
    assert_int_equal(embd_frame_encode_f32(v, dims, &o, out, sizeof out, &w), EMBD_OK);
    n_crc_frames += (o.flags & EMBD_FRAME_PAYLOAD_CRC) != 0;
    put(&b, out, w);
  }
  return b;
}

static buf codec_frames(void) {
  buf b = {0};
  uint8_t out[2048];
  size_t w;
  const char *hello = "{\"codec_version\":\"0.5\"}";
  embd_codec_encode_frame(EMBD_CODEC_HELLO, hello, strlen(hello), out, sizeof out, &w);
  put(&b, out, w);
  uint32_t ids[300];
  for (uint32_t i = 0; i < 40; i++) {
    const size_t k = (i * 7) % 300;
    for (size_t j = 0; j < k; j++) ids[j] = i * 100000 + (uint32_t)j;
    assert_int_equal(embd_codec_encode_tokens(ids, k, out, sizeof out, &w), EMBD_OK);
    put(&b, out, w);
  }
  embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, out, sizeof out, &w);
  put(&b, out, w);
  return b;
}

#ifdef EMBD_HAVE_CODEC_MODES
static buf mode_frames(int proto) {
  buf b = {0};
  uint8_t out[4096];
  uint32_t ids[300];
  for (uint32_t i = 0; i < 30; i++) {
    embd_codec_stream_frame f = {0};
    f.n_ids = 1 + (i * 11) % 299; /* protobuf refuses an empty frame */
    for (size_t j = 0; j < f.n_ids; j++) ids[j] = (uint32_t)(j * 977u * i);
    f.ids = ids;
    f.done = i == 29;
    if (i % 5 == 4) f.finish_reason = "stop", f.finish_reason_len = 4;
    size_t w;
    assert_int_equal(proto ? embd_codec_proto_encode(&f, out, sizeof out, &w)
                           : embd_codec_msgpack_encode(&f, out, sizeof out, &w),
                     EMBD_OK);
    put(&b, out, w);
  }
  return b;
}
#endif

/* The input whole, byte by byte, in small and in larger random chunks: one digest. */
static void same_every_chunking(int kind, const uint8_t *p, size_t n, uint32_t max,
                                uint64_t stop_at, const char *what) {
  static fd_run ref, got;
  ref.max = got.max = max;
  ref.stop_at = got.stop_at = stop_at;
  if (!fd_run_one(kind, p, n, 0, 0, &ref)) return;
  static const uint32_t most[] = {1, 2, 3, 5, 7, 16, 17, 64, 300, 5000};
  for (size_t i = 0; i < sizeof most / sizeof most[0]; i++) {
    for (uint32_t seed = 1; seed <= 3; seed++) {
      assert_true(fd_run_one(kind, p, n, most[i], seed * 2654435761u, &got));
      if (got.h != ref.h || got.result != ref.result || got.frames != ref.frames) {
        print_error("%s (kind %d, %zu bytes): chunks of 1..%u (seed %u) say %d after %llu frames, "
                    "whole says %d after %llu\n",
                    what, kind, n, most[i], seed, got.result, (unsigned long long)got.frames,
                    ref.result, (unsigned long long)ref.frames);
        fail();
      }
    }
  }
}

/* Valid streams, each cut short at a few places, with a byte flipped, and with the
 * callback stopping in the middle. */
static void variants(int kind, buf b, uint32_t max, int valid_result) {
  fd_run r;
  r.max = max;
  r.stop_at = UINT64_MAX;
  assert_true(fd_run_one(kind, b.p, b.n, 0, 0, &r));
  assert_int_equal(r.result, valid_result);
  same_every_chunking(kind, b.p, b.n, max, UINT64_MAX, "valid");
  same_every_chunking(kind, b.p, b.n, max, 3, "stopped");
  for (size_t cut = 1; cut < b.n; cut += b.n / 7 + 1)
    same_every_chunking(kind, b.p, cut, max, UINT64_MAX, "truncated");
  for (size_t at = 0; at < b.n; at += b.n / 13 + 1) {
    b.p[at] ^= 0x41;
    same_every_chunking(kind, b.p, b.n, max, UINT64_MAX, "corrupted");
    b.p[at] ^= 0x41;
  }
  free(b.p);
}

static void test_chunkings(void **state) {
  (void)state;
  variants(FD_EMBD, embd_frames(0, 24), 700, EMBD_OK);
  variants(FD_EMBD_BATCH, embd_frames(1, 24), 700, EMBD_OK);
  variants(FD_EMBD_DEST, embd_frames(0, 24), 700, EMBD_OK);
  variants(FD_EMBD, embd_frames(0, 24), 300, EMBD_ERR_FRAME_DIMS_TOO_LARGE); /* a limit hit */
  variants(FD_CODEC, codec_frames(), 0, EMBD_OK);
  variants(FD_CODEC_DEST, codec_frames(), 0, EMBD_OK);
  variants(FD_CODEC, codec_frames(), 600, EMBD_ERR_CODEC_FRAME_TOO_LARGE);
#ifdef EMBD_HAVE_CODEC_MODES
  variants(FD_MSGPACK, mode_frames(0), 4096, EMBD_OK);
  variants(FD_PROTO, mode_frames(1), 4096, EMBD_OK);
  variants(FD_MSGPACK, mode_frames(0), 200, EMBD_ERR_MSGPACK);
  variants(FD_PROTO, mode_frames(1), 200, EMBD_ERR_PROTOBUF);
#endif
}

/* ---- validate once ------------------------------------------------------------------- */

static embd_result decode_each(void *u, const embd_batch_frame *f) {
  static float v[700];
  (void)u;
  if (f->data) assert_int_equal(embd_batch_frame_decode(f, v, 700, NULL), EMBD_OK);
  return EMBD_OK;
}
static float g_dest[700];
static float *dest_all(void *u, uint32_t index, const embd_frame_info *info) {
  (void)u, (void)index, (void)info;
  return g_dest;
}

static void expect_once(size_t frames, size_t crcs, const char *path) {
  if (g_checks[EMBD_CHECK_HEADER] != frames || g_checks[EMBD_CHECK_PAYLOAD_CRC] != crcs) {
    print_error("%s: %lu header checks for %zu frames, %lu payload CRC checks for %zu flagged\n",
                path, g_checks[0], frames, g_checks[1], crcs);
    fail();
  }
  g_checks[0] = g_checks[1] = 0;
}

static void test_validate_once(void **state) {
  (void)state;
  const uint32_t count = 40;
  buf b = embd_frames(1, count);
  embd_check_hook_ = count_check;
  g_checks[0] = g_checks[1] = 0;
  /* The batch iterator, every frame decoded. */
  embd_batch_iter it;
  embd_batch_frame f;
  assert_int_equal(embd_batch_iter_init(&it, b.p, b.n, NULL, NULL), EMBD_OK);
  float v[700];
  while (embd_batch_next(&it, &f, NULL) == EMBD_OK)
    assert_int_equal(embd_batch_frame_decode(&f, v, 700, NULL), EMBD_OK);
  expect_once(count, n_crc_frames, "batch iterator + embd_batch_frame_decode");
  /* The stream: callback path (decoding each frame), dest path (direct and in place, zlib
   * frames included), whole and in chunks. */
  static const size_t chunks[] = {0, 1, 3, 16, 17, 19, 20, 100, 1000};
  for (int dest = 0; dest < 2; dest++) {
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
      embd_stream_options o = {0};
      o.max_dims = 700;
      o.batch = 1;
      o.on_frame = decode_each;
      o.dest = dest ? dest_all : NULL;
      embd_stream *s;
      assert_int_equal(embd_stream_create(&o, &s), EMBD_OK);
      const size_t step = chunks[c] ? chunks[c] : b.n;
      for (size_t at = 0; at < b.n; at += step)
        assert_int_equal(embd_stream_feed(s, b.p + at, b.n - at < step ? b.n - at : step, NULL), EMBD_OK);
      assert_int_equal(embd_stream_finish(s, NULL), EMBD_OK);
      assert_int_equal(embd_stream_frames(s), count);
      embd_stream_destroy(s);
      char what[64];
      snprintf(what, sizeof what, "stream, %s, chunks of %zu", dest ? "dest" : "on_frame", step);
      expect_once(count, n_crc_frames, what);
    }
  }
  embd_check_hook_ = NULL;
  free(b.p);
}

/* ---- bytes a frame needs --------------------------------------------------------------- */

static void test_need(void **state) {
  (void)state;
  buf b = embd_frames(0, 12);
  /* A reader of its own: grow what it holds to *need until *need <= held. */
  size_t at = 0, frames = 0;
  while (at < b.n) {
    size_t held = 1;
    uint64_t need;
    for (;;) {
      assert_int_equal(embd_frame_need(b.p + at, held, NULL, &need, NULL), EMBD_OK);
      if (need <= held) break;
      assert_true(need > held);
      held = (size_t)need;
      assert_true(at + held <= b.n);
    }
    embd_frame_info info;
    assert_int_equal(embd_frame_header(b.p + at, held, NULL, &info, NULL), EMBD_OK);
    assert_int_equal(info.frame_size, need);
    at += (size_t)need, frames++;
  }
  assert_int_equal(frames, 12);
  embd_error e;
  uint64_t need;
  b.p[0] ^= 1;
  assert_int_equal(embd_frame_need(b.p, 16, NULL, &need, &e), EMBD_ERR_FRAME_BAD_MAGIC);
  free(b.p);

  buf c = codec_frames();
  at = 0, frames = 0;
  while (at < c.n) {
    size_t held = 0;
    for (;;) {
      assert_int_equal(embd_codec_frame_need(c.p + at, held, NULL, &need, NULL), EMBD_OK);
      if (need <= held) break;
      held = (size_t)need;
    }
    embd_codec_frame fr;
    size_t used;
    assert_int_equal(embd_codec_decode_frame(c.p + at, held, NULL, &fr, &used, NULL), EMBD_OK);
    assert_int_equal(used, need);
    at += used, frames++;
  }
  assert_int_equal(frames, 42);
  const embd_codec_decode_options strict = {.flags = EMBD_CODEC_STRICT_TYPES};
  assert_int_equal(embd_codec_frame_need("\x09", 1, &strict, &need, &e), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  /* By default a newer type is a frame like any other: its header says its size. */
  assert_int_equal(embd_codec_frame_need("\x09\0\0\0\x02", 5, NULL, &need, &e), EMBD_OK);
  assert_int_equal(need, 7);
  assert_int_equal(embd_codec_frame_need("\x02\0\0\0\x07", 5, NULL, &need, &e), EMBD_ERR_CODEC_TOKENS_LENGTH);
  free(c.p);
}

int main(void) {
  int s = tu_isa_preflight("test_framer");
  if (s) return s;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunkings),
      cmocka_unit_test(test_validate_once),
      cmocka_unit_test(test_need),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
