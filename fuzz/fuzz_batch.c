/* Fuzz target for the one-shot batch decoder: arbitrary bytes through embd_batch_iter_init
 * and embd_batch_next with a few option sets (none; a dims maximum; an expected dims
 * value; the same bytes at an odd address), every frame's floats decoded with
 * embd_batch_frame_decode and its wire elements with embd_batch_frame_decode_raw. None may
 * crash or read outside the input; errors are sticky and carry their result and a
 * message; frames are contiguous; an uncompressed frame that embd_batch_next accepted
 * always decodes, to the same bits as embd_frame_decode of its bytes, and its floats are
 * embd_to_f32 of its elements (any dtype); a batch that decodes completely with no
 * compressed frame re-encodes from the elements to the same bytes (per frame with
 * embd_frame_encode_raw, and with embd_batch_begin/append_raw/finish when all flags
 * agree; version-2 frames saying f32 re-encode as version 1, so such batches are not
 * compared).
 *
 * Input: the batch itself (uint32 LE count + frames, no prefix), so the seed corpus
 * fuzz/corpus/batch/ is plain batches (python3 fuzz/gen_batch_corpus.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_odd.h"

/* Frames above this many values are not decoded (compressed ones can claim any dims in a
 * few bytes): the fuzzer must not make us allocate much. */
#define MAX_DECODE_DIMS ((size_t)1 << 20)

static void die(const char *what, int got, int want) {
  fprintf(stderr, "fuzz_batch: %s: got %d (%s), want %d (%s)\n", what, got,
          embd_strerror((embd_result)got), want, embd_strerror((embd_result)want));
  abort();
}

typedef struct {
  uint32_t dims;
  unsigned flags;
  embd_dtype dtype;
  float *v;     /* NULL when not decoded */
  uint8_t *raw; /* the elements, LE; with v */
} rec;

static void check(const uint8_t *data, size_t size, const embd_frame_decode_options *opt) {
  embd_batch_iter it;
  embd_error err;
  embd_result r = embd_batch_iter_init(&it, data, size, opt, &err);
  if (r != EMBD_OK) {
    if (err.result != r) die("init err.result", err.result, r);
    if (!err.message[0]) die("init: empty message", r, r);
    return;
  }
  /* iter_init guarantees count * 16 <= size - 4, so this is bounded by the input. */
  rec *recs = calloc(it.count ? it.count : 1, sizeof *recs);
  if (!recs) abort();
  size_t n = 0, expect_off = EMBD_BATCH_PREFIX_SIZE;
  int all_plain = 1, uniform = 1;
  embd_batch_frame f;
  while ((r = embd_batch_next(&it, &f, &err)) == EMBD_OK) {
    if (n >= it.count || f.index != n) die("frame index", (int)f.index, (int)n);
    if (f.offset != expect_off) die("frame offset", (int)f.offset, (int)expect_off);
    if (f.data != data + f.offset || f.payload != f.data + EMBD_FRAME_HEADER_SIZE ||
        f.payload_len != f.info.payload_size || f.info.frame_size > size - f.offset)
      die("frame pointers", 1, 0);
    expect_off += f.info.frame_size;
    rec *c = &recs[n++];
    c->dims = f.info.dims;
    c->flags = f.info.flags;
    c->dtype = (embd_dtype)f.info.dtype;
    if (f.info.dtype >= EMBD_DTYPE_COUNT_) die("dtype", f.info.dtype, 0);
    if (f.info.flags & EMBD_FRAME_ZLIB) all_plain = 0;
    if (f.info.version == 2 && f.info.dtype == EMBD_DTYPE_F32) all_plain = 0;
    if (c->flags != recs[0].flags) uniform = 0;
    if (f.info.dims > MAX_DECODE_DIMS) {
      all_plain = 0; /* not decoded, so not re-encodable */
      continue;
    }
    float *v = malloc(f.info.dims ? f.info.dims * sizeof *v : 1);
    float *w = malloc(f.info.dims ? f.info.dims * sizeof *w : 1);
    if (!v || !w) abort();
    embd_error derr;
    embd_result dr = embd_batch_frame_decode(&f, v, f.info.dims, &derr);
    if (dr != EMBD_OK) {
      if (derr.result != dr) die("frame_decode err.result", derr.result, dr);
      if (!derr.message[0]) die("frame_decode: empty message", dr, dr);
      if (!(f.info.flags & EMBD_FRAME_ZLIB)) die("uncompressed frame_decode", dr, EMBD_OK);
      if (dr != EMBD_ERR_FRAME_INFLATE && dr != EMBD_ERR_FRAME_COMPRESSED_LENGTH)
        die("compressed frame_decode", dr, EMBD_ERR_FRAME_INFLATE);
      free(v);
      free(w);
      continue;
    }
    /* The same bytes as a lone frame decode to the same bits. */
    embd_result fr = embd_frame_decode(f.data, f.info.frame_size, NULL, w, f.info.dims, NULL, NULL);
    if (fr != EMBD_OK) die("embd_frame_decode of a batch frame", fr, EMBD_OK);
    if (f.info.dims && memcmp(v, w, (size_t)f.info.dims * 4) != 0) die("batch vs frame bits", 1, 0);
    /* The elements kept: the floats are their conversion. */
    uint8_t *raw = malloc(f.info.value_bytes + 1);
    if (!raw) abort();
    dr = embd_batch_frame_decode_raw(&f, raw, f.info.value_bytes, EMBD_ORDER_LE, &derr);
    if (dr != EMBD_OK) die("frame_decode_raw after frame_decode", dr, EMBD_OK);
    if (embd_to_f32(w, raw, f.info.dims, c->dtype, EMBD_ORDER_LE) != EMBD_OK) die("to_f32", 1, 0);
    if (f.info.dims && memcmp(v, w, (size_t)f.info.dims * 4) != 0) die("floats vs to_f32(raw)", 1, 0);
    free(w);
    c->v = v;
    c->raw = raw;
  }
  if (r == EMBD_OK) die("next returned OK after the loop", r, EMBD_BATCH_END);
  if (r != EMBD_BATCH_END) {
    if (err.result != r) die("next err.result", err.result, r);
    if (!err.message[0]) die("next: empty message", r, r);
  }
  /* Sticky: asking again gives the same answer. */
  embd_result again = embd_batch_next(&it, &f, NULL);
  if (again != r) die("not sticky", again, r);

  if (r == EMBD_BATCH_END) {
    if (n != it.count) die("frames vs count", (int)n, (int)it.count);
    if (expect_off != size) die("batch end vs input size", (int)expect_off, (int)size);
  }

  if (r == EMBD_BATCH_END && all_plain) {
    /* Per frame: count prefix + each frame re-encoded with its flags. */
    uint8_t *re = malloc(size ? size : 1);
    if (!re) abort();
    size_t pos = EMBD_BATCH_PREFIX_SIZE;
    memcpy(re, data, EMBD_BATCH_PREFIX_SIZE);
    for (size_t i = 0; i < n; i++) {
      embd_frame_encode_options eo = {.flags = recs[i].flags, .level = 0};
      size_t w;
      embd_result er = embd_frame_encode_raw(recs[i].raw, recs[i].dims, recs[i].dtype, EMBD_ORDER_LE,
                                             &eo, re + pos, size - pos, &w);
      if (er != EMBD_OK) die("frame re-encode", er, EMBD_OK);
      pos += w;
    }
    if (pos != size || memcmp(re, data, size) != 0) die("per-frame re-encode differs", 1, 0);
    if (uniform) {
      embd_batch_encoder enc;
      embd_frame_encode_options eo = {.flags = n ? recs[0].flags : 0, .level = 0};
      memset(re, 0, size);
      embd_result er = embd_batch_begin(&enc, (uint32_t)n, &eo, re, size);
      for (size_t i = 0; er == EMBD_OK && i < n; i++)
        er = embd_batch_append_raw(&enc, recs[i].raw, recs[i].dims, recs[i].dtype, EMBD_ORDER_LE);
      size_t w = 0;
      if (er == EMBD_OK) er = embd_batch_finish(&enc, &w);
      if (er != EMBD_OK) die("batch re-encode", er, EMBD_OK);
      if (w != size || memcmp(re, data, size) != 0) die("batch re-encode differs", 1, 0);
    }
    free(re);
  }
  for (size_t i = 0; i < n; i++) free(recs[i].v), free(recs[i].raw);
  free(recs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size, NULL);
  embd_frame_decode_options o = {.max_dims = 64, .expected_dims = 0, .allow_trailing = 0};
  check(data, size, &o);
  o.max_dims = 0;
  o.expected_dims = 3;
  o.allow_trailing = 1; /* ignored by the batch decoder */
  check(data, size, &o);
  uint8_t *block; /* unaligned: the same bytes at an odd address */
  check(fz_odd_copy(data, size, &block), size, NULL);
  free(block);
  return 0;
}
