/* Fuzz target for the OpenAI-compatible decoder told the asked dtype (embd/openai.h:
 * options dtype, byte_order, EMBD_OPENAI_KEEP_DTYPE, max_dims, expected_dims; Cohere's
 * embeddings by type, integer lists, base64 of any dtype).
 *
 * Input: two option bytes, then the response body. Byte 0: dtype (low 4 bits, mod 9), byte
 * order (bit 4), KEEP_DTYPE (bit 5), max_dims 16 (bit 6). Byte 1: expected_count (bits
 * 0-1), expected_dims 8 (bit 2). Never crash or read outside the body (an exact-size heap
 * copy); on error no vectors (count 0, values and data NULL), err filled with an offset
 * within the body; on success the options are obeyed (dims, count, packed dims a multiple
 * of 8), every row is readable, and the two outputs agree: when the kept decode succeeds
 * the float32 decode does too, and its values are the kept rows through embd_to_f32, bit
 * for bit. The body bytes are unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_openai_check.h"

static void die(const char *what, int got) {
  fprintf(stderr, "fuzz_openai_dtype: %s (%d: %s)\n", what, got, embd_strerror((embd_result)got));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const uint8_t s0 = data[0], s1 = data[1];
  const size_t len = size - 2;
  char *body = malloc(len ? len : 1);
  char *keep = malloc(len ? len : 1);
  if (!body || !keep) abort();
  memcpy(body, data + 2, len);
  memcpy(keep, body, len);

  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = (embd_dtype)((s0 & 15) % EMBD_DTYPE_COUNT_);
  o.byte_order = (s0 & 16) ? EMBD_ORDER_BE : EMBD_ORDER_LE;
  o.max_dims = (s0 & 64) ? 16u : 0u;
  o.expected_count = s1 & 3;
  o.expected_dims = (s1 & 4) ? 8u : 0u;
  const int kept = (s0 & 32) != 0;

  embd_openai_embeddings e, f;
  embd_openai_init(&e);
  embd_openai_init(&f);
  embd_error err;
  o.flags = kept ? EMBD_OPENAI_KEEP_DTYPE : 0;
  embd_result r = embd_openai_decode(&e, body, len, &o, &err);
  if (memcmp(body, keep, len) != 0) die("input modified", r);
  if (r != EMBD_OK) {
    const char *why = fo_error_wrong(&e, r, &err, len);
    if (why) die(why, r);
  } else {
    if (o.expected_count && e.count != o.expected_count) die("count != expected_count", r);
    if (e.count && o.max_dims && e.dims > o.max_dims) die("dims above max_dims", r);
    if (e.count && o.expected_dims && e.dims != o.expected_dims) die("dims != expected_dims", r);
    if (e.count && !e.dims) die("vectors of 0 dims", r);
    if (e.count && embd_dtype_bits(o.dtype) == 1 && e.dims % 8) die("packed dims not a multiple of 8", r);
    if (kept && e.count) {
      size_t rb = 0;
      if (e.values || !e.data || e.dtype != o.dtype || embd_dtype_bytes(o.dtype, e.dims, &rb) || rb != e.row_bytes)
        die("kept rows misdescribed", r);
      /* the float32 decode of the same body: succeeds, and equals the kept rows converted */
      o.flags = 0;
      embd_result r2 = embd_openai_decode(&f, body, len, &o, &err);
      if (r2 != EMBD_OK) die("kept decode succeeded, float32 decode failed", r2);
      const char *why = fo_kept_vs_f32(&e, &f);
      if (why) die(why, r2);
    } else if (e.count) {
      if (!e.values || e.data || e.row_bytes) die("float32 rows misdescribed", r);
      fo_touch_rows(&e);
    }
  }
  embd_openai_free(&e);
  embd_openai_free(&f);
  free(body);
  free(keep);
  return 0;
}
