/* Fuzz target for the OpenAI-compatible embeddings response decoder (embd/openai.h).
 *
 * Input: one option byte, then the response body. The option byte picks padding (0: the
 * decoder copies; 64: parsed in place from a padded copy), an expected_count (0 or 1..3)
 * and a max_dims (0 or 4). Never crash or read outside the body; on error no vectors
 * (count = dims = 0), err filled (result, message, offset within the body); on success
 * every one of count*dims floats is readable, count/dims obey the options, the same body
 * decodes again with expected_count = count and fails with count + 1 (so count is the data
 * array's length), appending the body to itself doubles the rows, and the body bytes are
 * unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_openai_check.h"

static void die(const char *what, int got) {
  fprintf(stderr, "fuzz_openai: %s (%d: %s)\n", what, got, embd_strerror((embd_result)got));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t sel = data[0];
  const size_t len = size - 1;
  /* exact-size heap copy (ASan sees over-reads) or one with 64 readable bytes after it */
  const size_t pad = (sel & 1) ? 64 : 0;
  char *body = malloc(len + pad + 1);
  char *keep = malloc(len + pad + 1);
  if (!body || !keep) abort();
  memcpy(body, data + 1, len);
  memset(body + len, 'x', pad);
  memcpy(keep, body, len + pad);

  embd_openai_options o = {.expected_count = (sel >> 1) & 3, .max_dims = (sel & 8) ? 4u : 0u, .padding = pad};
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result r = embd_openai_decode(&e, body, len, &o, &err);
  if (memcmp(body, keep, len + pad) != 0) die("input modified", r);
  if (r != EMBD_OK) {
    const char *why = fo_error_wrong(&e, r, &err, len);
    if (why) die(why, r);
  } else {
    fo_touch_rows(&e);
    if (o.expected_count && e.count != o.expected_count) die("count != expected_count", r);
    if (o.max_dims && e.dims > o.max_dims) die("dims above max_dims", r);
    if (e.count && !e.dims) die("vectors of 0 dims", r);
    const size_t n = e.count, dims = e.dims;
    float *first = malloc(n * dims * sizeof(float) + 1);
    if (!first) abort();
    if (n) memcpy(first, e.values, n * dims * sizeof(float));
    if (n) {
      embd_openai_options o2 = {.expected_count = n, .max_dims = 0, .padding = pad};
      embd_result r2 = embd_openai_decode(&e, body, len, &o2, &err);
      if (r2 != EMBD_OK || e.count != n) die("redecode with expected_count = count", r2);
      o2.expected_count = n + 1;
      r2 = embd_openai_decode(&e, body, len, &o2, &err);
      if (r2 != EMBD_ERR_OPENAI_COUNT) die("expected_count = count + 1 not a count error", r2);
    }
    /* append: decode, then the same body again */
    r = embd_openai_decode(&e, body, len, &o, &err);
    if (r != EMBD_OK) die("second decode", r);
    r = embd_openai_append(&e, body, len, &o, &err);
    if (n == 0) {
      if (r != EMBD_OK || e.count != 0) die("append of an empty response", r);
    } else {
      if (r != EMBD_OK || e.count != 2 * n || e.dims != dims) die("append to itself", r);
      if (memcmp(e.values, first, n * dims * sizeof(float)) != 0 ||
          memcmp(e.values + n * dims, first, n * dims * sizeof(float)) != 0)
        die("appended rows differ", r);
    }
    free(first);
    if (memcmp(body, keep, len + pad) != 0) die("input modified", r);
  }
  embd_openai_free(&e);
  free(body);
  free(keep);
  return 0;
}
