/* Fuzz target for EMBD frame decoding: arbitrary bytes through embd_frame_header,
 * embd_frame_decode (copy, floats), embd_frame_decode_raw (the wire dtype),
 * embd_frame_view and embd_frame_view_raw, with and without a dims maximum, an expected
 * dims value and trailing bytes allowed. None may crash or read outside the input; all
 * must agree on the result (the views may only add VIEW_UNAVAILABLE); the floats are
 * embd_to_f32 of the raw elements; a successful decode of an uncompressed frame
 * re-encodes (embd_frame_encode_raw) to the same bytes (a version-2 f32 frame to its
 * version-1 form), and a compressed one to a frame that decodes to the same bytes; a
 * compressed one decodes with zlib's inflate alone as with libdeflate (see below).
 *
 * Input: the frame itself (no prefix), so the seed corpus is plain frames.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_odd.h"

/* The library's test hook (src/wire/wire.h): non-zero, compressed payloads are decoded by
 * zlib's inflate alone. */
extern int embd_inflate_zlib_only_;

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

  /* The wire dtype: the same result; the floats are its conversion. */
  const size_t rcap = hr == EMBD_OK ? hi.value_bytes : 0;
  uint8_t *raw = malloc(rcap ? rcap : 1);
  if (!raw) abort();
  embd_frame_info ri;
  embd_error rerr;
  embd_result rr = embd_frame_decode_raw(data, size, opt, raw, rcap, EMBD_ORDER_LE, &ri, &rerr);
  if (rr != dr) die("decode_raw vs decode", rr, dr);
  if (rr == EMBD_OK) {
    if (ri.dtype != hi.dtype || ri.dtype >= EMBD_DTYPE_COUNT_) die("raw dtype", ri.dtype, hi.dtype);
    float *conv = malloc(cap ? cap * sizeof *conv : 1);
    if (!conv) abort();
    if (embd_to_f32(conv, raw, ri.dims, (embd_dtype)ri.dtype, EMBD_ORDER_LE) != EMBD_OK)
      die("to_f32", 1, 0);
    if (cap && memcmp(conv, out, cap * sizeof *conv) != 0) die("floats != to_f32(raw)", 1, 0);
    free(conv);
  }
  /* Compressed: zlib's inflate alone (embd_inflate_zlib_only_, the decoder before
   * libdeflate) gives the same values, or the same error, offset and message. The one
   * allowed difference: zlib alone rejects a frame the library decodes (libdeflate takes
   * a few Huffman-table descriptions RFC 1951 forbids, docs/FORMAT.md). */
  if (hr == EMBD_OK && (hi.flags & EMBD_FRAME_ZLIB)) {
    uint8_t *zraw = malloc(rcap ? rcap : 1);
    if (!zraw) abort();
    embd_error zerr;
    embd_inflate_zlib_only_ = 1;
    embd_result zr = embd_frame_decode_raw(data, size, opt, zraw, rcap, EMBD_ORDER_LE, NULL, &zerr);
    embd_inflate_zlib_only_ = 0;
    if (zr == EMBD_OK) {
      if (rr != EMBD_OK) die("zlib alone decodes, the library fails", rr, EMBD_OK);
      if (rcap && memcmp(zraw, raw, rcap) != 0) die("zlib alone: other values", 1, 0);
    } else if (rr != EMBD_OK) {
      if (rr != zr || rerr.offset != zerr.offset || strcmp(rerr.message, zerr.message) != 0)
        die("zlib alone: another error", zr, rr);
    }
    free(zraw);
  }

  const void *rview = NULL;
  embd_result rvr = embd_frame_view_raw(data, size, opt, &rview, &vi, &verr);
  if (rvr == EMBD_OK) {
    if (rr != EMBD_OK) die("raw view ok, decode failed", rr, EMBD_OK);
    if (rcap && memcmp(rview, raw, rcap) != 0) /* host order = LE where it views */
      die("raw view != raw copy", 1, 0);
  } else if (rvr != EMBD_ERR_FRAME_VIEW_UNAVAILABLE && rvr != dr) {
    die("raw view vs decode", rvr, dr);
  }

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
    /* Re-encode the wire elements with the same flags and dtype. */
    const embd_dtype dt = (embd_dtype)di.dtype;
    size_t bound, w;
    if (embd_frame_size_dtype(di.dims, dt, di.flags, &bound) != EMBD_OK) die("size", 1, 0);
    uint8_t *re = malloc(bound);
    if (!re) abort();
    embd_frame_encode_options eo = {.flags = di.flags, .level = 0};
    embd_result er = embd_frame_encode_raw(raw, di.dims, dt, EMBD_ORDER_LE, &eo, re, bound, &w);
    if (er != EMBD_OK) die("re-encode", er, EMBD_OK);
    if (!(di.flags & EMBD_FRAME_ZLIB)) {
      /* A version-2 f32 frame comes back as version 1: compare all but bytes 4 and 12-15. */
      const int v2f32 = di.version == 2 && dt == EMBD_DTYPE_F32;
      if (w != di.frame_size) die("re-encoded size differs", (int)w, (int)di.frame_size);
      for (size_t i = 0; i < w; i++)
        if (re[i] != data[i] && !(v2f32 && (i == 4 || (i >= 12 && i < 16))))
          die("re-encoded bytes differ", (int)i, 0);
    } else {
      uint8_t *again = malloc(rcap ? rcap : 1);
      if (!again) abort();
      er = embd_frame_decode_raw(re, w, NULL, again, rcap, EMBD_ORDER_LE, NULL, NULL);
      if (er != EMBD_OK) die("decode of re-encoded", er, EMBD_OK);
      if (rcap && memcmp(again, raw, rcap) != 0) die("re-encoded values", 1, 0);
      free(again);
    }
    free(re);
  }
  free(raw);
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
  uint8_t *block; /* unaligned: the same bytes at an odd address */
  check(fz_odd_copy(data, size, &block), size, NULL);
  free(block);
  return 0;
}
