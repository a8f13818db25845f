/* Differential fuzz target for base64: every implementation the host can run (registry
 * order, index 0 = scalar is the reference) and the public embd_base64_decode /
 * embd_base64_encode must agree on everything. Any difference prints the case and aborts.
 *
 * Input layout:
 *   byte 0     bit 0: EMBD_BASE64_URL, bit 1: EMBD_BASE64_NOPAD (the other bits ignored);
 *              bits 2-7: start offset of the copies from a 64-byte boundary (0..63)
 *   the rest   the text to decode, and also the raw bytes to encode
 * An empty input is the empty text with flags 0.
 *
 * Decoding: the result, the error code (err.result), err.offset, *written and the output
 * bytes must be the same for all. When decoding succeeds, the scalar re-encoding of the
 * bytes must equal the text (strict base64 is canonical: the one encoding of its bytes;
 * under NOPAD the text may be padded or not, so it is compared with the padded or the
 * unpadded encoding accordingly). Encoding the raw text bytes: every implementation's
 * output must be byte-identical (and decode back to them).
 *
 * The text and the raw bytes are copied so that they end exactly at the end of their
 * allocation: ASan then catches a kernel reading past the end of its input; the outputs
 * are allocated at exactly the needed size, so over-stores are caught too.
 *
 * Built twice by fuzz/CMakeLists.txt: with libFuzzer (clang, fuzz_base64) and with a plain
 * main that replays a corpus directory (fuzz_replay_main.c, any compiler). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct impl {
  const char *name;
  embd_base64_decode_fn dec;
  embd_base64_encode_fn enc;
} impl;

static impl g_impls[16];
static size_t g_n;

static void collect(void) {
  if (g_n) return;
  const size_t count = embd_impl_count(EMBD_KERNEL_BASE64_DECODE);
  for (size_t i = 0; i < count && g_n < 15; i++) {
    embd_impl_info info;
    if (embd_impl_get(EMBD_KERNEL_BASE64_DECODE, i, &info) != EMBD_OK) continue;
    embd_base64_decode_fn d = embd_base64_decode_impl(i);
    embd_base64_encode_fn e = embd_base64_encode_impl(i);
    if (!d || !e) continue;
    g_impls[g_n++] = (impl){info.name, d, e};
  }
  g_impls[g_n++] = (impl){"public", embd_base64_decode, embd_base64_encode};
  if (g_n < 2 || strcmp(g_impls[0].name, "scalar") != 0) {
    fprintf(stderr, "fuzz_base64: registry index 0 is not a runnable scalar\n");
    abort();
  }
}

static unsigned g_flags;
static size_t g_len;

static void fail(const char *what, const char *name) {
  fprintf(stderr, "fuzz_base64: %s: %s (flags 0x%x, length %zu)\n", what, name, g_flags, g_len);
  abort();
}

/* malloc(n) for n == 0 may return NULL; keep a valid pointer. */
static uint8_t *xmalloc(size_t n) {
  uint8_t *p = (uint8_t *)malloc(n ? n : 1);
  if (!p) abort();
  return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  collect();
  const unsigned hdr = size ? data[0] : 0;
  const unsigned flags = hdr & 3u;
  const size_t off = hdr >> 2;
  const uint8_t *body = size ? data + 1 : data;
  const size_t len = size ? size - 1 : 0;
  g_flags = flags;
  g_len = len;

  /* The input ends at the end of its allocation, starting `off` bytes past 64-aligned
   * malloc memory (the allocator's alignment is at least 16; good enough). */
  uint8_t *inbuf = xmalloc(off + len);
  uint8_t *in = inbuf + off;
  memcpy(in, body, len);

  /* ---- decode ---- */
  const size_t cap = embd_base64_decoded_max(len);
  uint8_t *ref = xmalloc(cap);
  size_t ref_w = 0;
  embd_error ref_err;
  const embd_result ref_r =
      g_impls[0].dec((const char *)in, len, flags, ref, cap, &ref_w, &ref_err);
  if (ref_r != ref_err.result) fail("decode result differs from err.result", g_impls[0].name);
  if (ref_r != EMBD_OK && ref_w != 0) fail("*written not 0 after an error", g_impls[0].name);
  for (size_t i = 1; i < g_n; i++) {
    /* exactly the decoded size when it succeeds: over-stores hit the redzone */
    const size_t c = ref_r == EMBD_OK ? ref_w : cap;
    uint8_t *out = xmalloc(c);
    size_t w = 12345;
    embd_error err;
    const embd_result r = g_impls[i].dec((const char *)in, len, flags, out, c, &w, &err);
    if (r != ref_r) fail("decode result differs", g_impls[i].name);
    if (err.result != ref_err.result) fail("decode err.result differs", g_impls[i].name);
    if (err.offset != ref_err.offset) fail("decode err.offset differs", g_impls[i].name);
    if (strcmp(err.message, ref_err.message) != 0) fail("decode message differs", g_impls[i].name);
    if (w != ref_w) fail("decode *written differs", g_impls[i].name);
    if (r == EMBD_OK && w && memcmp(out, ref, w) != 0) fail("decoded bytes differ", g_impls[i].name);
    free(out);
  }
  if (ref_r == EMBD_OK) {
    /* canonical: re-encoding gives the text back (padded iff the text was) */
    unsigned ef = flags & 1u;
    if ((flags & 2u) && len % 4 != 0) ef |= 2u;
    size_t tn = 0;
    if (embd_base64_encoded_size(ref_w, ef, &tn) != EMBD_OK) fail("encoded_size", "scalar");
    if (tn != len) fail("re-encoding has another length", "scalar");
    char *t = (char *)xmalloc(tn);
    size_t w = 0;
    if (g_impls[0].enc(ref, ref_w, ef, t, tn, &w) != EMBD_OK || w != len ||
        memcmp(t, in, len) != 0)
      fail("re-encoding differs from the text", "scalar");
    free(t);
  }
  free(ref);

  /* ---- encode the raw bytes ---- */
  size_t en = 0;
  if (embd_base64_encoded_size(len, flags, &en) != EMBD_OK) fail("encoded_size", "raw");
  char *eref = (char *)xmalloc(en);
  size_t ew = 0;
  if (g_impls[0].enc(in, len, flags, eref, en, &ew) != EMBD_OK || ew != en)
    fail("encode failed", g_impls[0].name);
  for (size_t i = 1; i < g_n; i++) {
    char *t = (char *)xmalloc(en);
    size_t w = 0;
    if (g_impls[i].enc(in, len, flags, t, en, &w) != EMBD_OK || w != en)
      fail("encode failed", g_impls[i].name);
    if (en && memcmp(t, eref, en) != 0) fail("encoded text differs", g_impls[i].name);
    free(t);
  }
  /* and back */
  uint8_t *back = xmalloc(len);
  size_t bw = 0;
  for (size_t i = 0; i < g_n; i++) {
    if (g_impls[i].dec(eref, en, flags, back, len, &bw, NULL) != EMBD_OK || bw != len ||
        (len && memcmp(back, in, len) != 0))
      fail("decoding the encoding does not give the bytes back", g_impls[i].name);
  }
  free(back);
  free(eref);
  free(inbuf);
  return 0;
}
