/* Fuzz target for EMBD frame decoding: arbitrary bytes through embd_frame_header,
 * embd_frame_decode (copy) and embd_frame_view, with and without a dims maximum, an
 * expected dims value and trailing bytes allowed. None may crash or read outside the
 * input; all must agree on the result (the view may only add VIEW_UNAVAILABLE); a
 * successful decode of an uncompressed frame re-encodes to the same bytes, and a
 * compressed one re-encodes to a frame that decodes to the same bits.
 *
 * Input: the frame itself (no prefix), so the seed corpus is plain frames.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

static void die(const char *what, int got, int want) {
  fprintf(stderr, "fuzz_frame: %s: got %d (%s), want %d (%s)\n", what, got,
          embd_strerror((embd_result)got), want, embd_strerror((embd_result)want));
  abort();
}

static void check(const uint8_t *data, size_t size, const embd_frame_decode_options *opt) {
  embd_frame_info hi, di, vi;
  embd_error herr, derr, verr;
  embd_result hr = embd_frame_header(data, size, opt, &hi, &herr);
  if (hr != EMBD_OK && herr.result != hr) die("header err.result", herr.result, hr);
  if (hr != EMBD_OK && !herr.message[0]) die("header: empty message", hr, hr);

  /* Copy: capacity from the header (bounded so the fuzzer cannot make us allocate much). */
  size_t cap = hr == EMBD_OK ? hi.dims : 0;
  if (cap > (size_t)1 << 22) return;
  float *out = malloc(cap ? cap * sizeof *out : 1);
  if (!out) abort();
  embd_result dr = embd_frame_decode(data, size, opt, out, cap, &di, &derr);
  if (dr != EMBD_OK && derr.result != dr) die("decode err.result", derr.result, dr);
  /* Header errors come first; once the header passed, only payload errors. */
  if (hr != EMBD_OK && dr != hr) die("decode vs header", dr, hr);
  if (hr == EMBD_OK && dr != EMBD_OK && dr != EMBD_ERR_FRAME_PAYLOAD_CRC &&
      dr != EMBD_ERR_FRAME_INFLATE && dr != EMBD_ERR_FRAME_COMPRESSED_LENGTH)
    die("decode after a valid header", dr, EMBD_OK);

  const float *view = NULL;
  embd_result vr = embd_frame_view(data, size, opt, &view, &vi, &verr);
  if (vr == EMBD_OK) {
    if (dr != EMBD_OK) die("view ok, decode failed", dr, EMBD_OK);
    if (vi.dims && memcmp(view, out, (size_t)vi.dims * 4) != 0) die("view != copy", 1, 0);
  } else if (vr == EMBD_ERR_FRAME_VIEW_UNAVAILABLE) {
    /* Compressed frames: the view does not inflate, so the decode may still fail. */
    if (dr != EMBD_OK && !(hi.flags & EMBD_FRAME_ZLIB)) die("view unavailable, decode", dr, EMBD_OK);
  } else if (vr != dr) {
    die("view vs decode", vr, dr);
  }

  if (dr == EMBD_OK) {
    if (di.dims != hi.dims || di.frame_size != hi.frame_size || di.frame_size > size)
      die("info mismatch", (int)di.frame_size, (int)hi.frame_size);
    /* Re-encode with the same flags. */
    size_t bound, w;
    if (embd_frame_size(di.dims, di.flags, &bound) != EMBD_OK) die("size", 1, 0);
    uint8_t *re = malloc(bound);
    if (!re) abort();
    embd_frame_encode_options eo = {.flags = di.flags, .level = 0};
    embd_result er = embd_frame_encode_f32(out, di.dims, &eo, re, bound, &w);
    if (er != EMBD_OK) die("re-encode", er, EMBD_OK);
    if (!(di.flags & EMBD_FRAME_ZLIB)) {
      if (w != di.frame_size || memcmp(re, data, w) != 0) die("re-encoded bytes differ", 1, 0);
    } else {
      float *again = malloc(di.dims ? di.dims * sizeof *again : 1);
      if (!again) abort();
      er = embd_frame_decode(re, w, NULL, again, di.dims, NULL, NULL);
      if (er != EMBD_OK) die("decode of re-encoded", er, EMBD_OK);
      if (di.dims && memcmp(again, out, (size_t)di.dims * 4) != 0) die("re-encoded values", 1, 0);
      free(again);
    }
    free(re);
  }
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size, NULL);
  embd_frame_decode_options o = {.max_dims = 0, .expected_dims = 0, .allow_trailing = 1};
  check(data, size, &o);
  o.max_dims = 64;
  check(data, size, &o);
  o.allow_trailing = 0;
  o.expected_dims = 3;
  check(data, size, &o);
  /* Unaligned: the same bytes at an odd address. */
  uint8_t *odd = malloc(size + 1);
  if (!odd) abort();
  if (size) memcpy(odd + 1, data, size);
  check(odd + 1, size, NULL);
  free(odd);
  return 0;
}
