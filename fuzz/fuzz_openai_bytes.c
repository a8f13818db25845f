/* Fuzz target for vLLM's bytes bodies (embd/openai.h: embd_openai_decode_bytes with the
 * metadata header's JSON, embd_openai_decode_bytes_only).
 *
 * Input: one option byte, a 2-byte little-endian metadata length m, the metadata (m bytes,
 * fewer if the input ends), then the body. Option byte: dtype (low 4 bits, mod 9), byte
 * order (bit 4), KEEP_DTYPE (bit 5), bytes_only (bit 6: then dims = (m & 63) + 1 and the
 * metadata is not read), expected_count 2 (bit 7). Both texts are exact-size heap copies.
 * Never crash or read outside them; on error no vectors, err filled, its offset within the
 * metadata (bytes) or the body (bytes_only); on success the vectors tile the body exactly
 * (count x row bytes = its length), the kept and float32 decodes agree bit for bit, and
 * neither input is modified.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_openai_check.h"

static void die(const char *what, int got) {
  fprintf(stderr, "fuzz_openai_bytes: %s (%d: %s)\n", what, got, embd_strerror((embd_result)got));
  abort();
}

static embd_result decode(embd_openai_embeddings *e, int only, const uint8_t *body, size_t len, const char *meta,
                          size_t mlen, size_t dims, const embd_openai_options *o, embd_error *err) {
  return only ? embd_openai_decode_bytes_only(e, body, len, dims, o, err)
              : embd_openai_decode_bytes(e, body, len, meta, mlen, o, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  const uint8_t sel = data[0];
  size_t mlen = (size_t)data[1] | (size_t)data[2] << 8;
  if (mlen > size - 3) mlen = size - 3;
  const size_t len = size - 3 - mlen;
  char *meta = malloc(mlen ? mlen : 1);
  uint8_t *body = malloc(len ? len : 1);
  uint8_t *copy = malloc(mlen + len + 1);
  if (!meta || !body || !copy) abort();
  memcpy(meta, data + 3, mlen);
  memcpy(body, data + 3 + mlen, len);
  memcpy(copy, data + 3, mlen + len);

  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = (embd_dtype)((sel & 15) % EMBD_DTYPE_COUNT_);
  o.byte_order = (sel & 16) ? EMBD_ORDER_BE : EMBD_ORDER_LE;
  const int kept = (sel & 32) != 0, only = (sel & 64) != 0;
  o.expected_count = (sel & 128) ? 2 : 0;
  o.flags = kept ? EMBD_OPENAI_KEEP_DTYPE : 0;
  const size_t dims = (mlen & 63) + 1;

  embd_openai_embeddings e, f;
  embd_openai_init(&e);
  embd_openai_init(&f);
  embd_error err;
  embd_result r = decode(&e, only, body, len, meta, mlen, dims, &o, &err);
  if (memcmp(copy, meta, mlen) != 0 || memcmp(copy + mlen, body, len) != 0) die("input modified", r);
  if (r != EMBD_OK) {
    const char *why = fo_error_wrong(&e, r, &err, only ? len : mlen);
    if (why) die(why, r);
  } else {
    size_t rb = 0;
    if (e.count && embd_dtype_bytes(o.dtype, e.dims, &rb)) die("dims not whole bytes", r);
    if (e.count * rb != len) die("the vectors do not tile the body", r);
    if (only && e.count && e.dims != dims) die("bytes_only dims", r);
    if (o.expected_count && e.count != o.expected_count) die("count != expected_count", r);
    if (kept && e.count) {
      if (e.values || !e.data || e.row_bytes != rb) die("kept rows misdescribed", r);
      o.flags = 0;
      embd_result r2 = decode(&f, only, body, len, meta, mlen, dims, &o, &err);
      if (r2 != EMBD_OK) die("kept decode succeeded, float32 decode failed", r2);
      const char *why = fo_kept_vs_f32(&e, &f);
      if (why) die(why, r2);
      if (only && memcmp(e.data, body, len) != 0) die("bytes_only kept rows are not the body", 0);
    } else if (e.count) {
      fo_touch_rows(&e);
    }
  }
  embd_openai_free(&e);
  embd_openai_free(&f);
  free(meta);
  free(body);
  free(copy);
  return 0;
}
