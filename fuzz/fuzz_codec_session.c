/* Fuzz target for the Codec session stream reader against the one-shot decoder.
 *
 * Input: byte 0 picks max_payload (0 = the default 16 MiB when b0 % 16 == 0, else
 * 1 << (b0 % 16)); bytes 1-2 (LE) seed the chunk boundaries (bits 0-8) and the way out
 * (bits 9-15 % 3: on_frame only, TOKENS ids into caller memory for every frame, for every
 * other frame); the rest is the session stream. The stream is fed to the reader in chunks
 * of fuzzer-chosen sizes and must give exactly what embd_codec_next gives over the whole
 * buffer: the same frames (type, index, offset, payload bytes; dest-mode ids turned back
 * into big-endian bytes), the same result, error offset and message. Also: every frame
 * the one-shot decoder accepts re-encodes to the same bytes, and forwarding everything
 * reproduces the valid prefix.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/codecutil.h"

static void die(const char *what, const cu_rec *a, const cu_rec *s) {
  fprintf(stderr,
          "fuzz_codec_session: %s\none-shot: %zu frames, %d at %zu: %s\nreader: %zu frames, %d at %zu: %s\n",
          what, a->nframes, a->result, a->err_offset, a->message, s->nframes, s->result,
          s->err_offset, s->message);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  const size_t max_payload = data[0] % 16 ? (size_t)1 << (data[0] % 16) : 0;
  const uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8;
  const uint8_t *b = data + 3;
  const size_t len = size - 3;

  size_t *cuts = malloc((len + 1) * sizeof *cuts);
  if (!cuts) abort();
  size_t n = 0, at = 0;
  uint32_t x = seed * 2654435761u + 1;
  const uint32_t span = 1u << (seed % 9);
  for (;;) {
    x = x * 1664525u + 1013904223u;
    at += 1 + (x >> 8) % span;
    if (at >= len) break;
    cuts[n++] = at;
  }

  cu_rec a, s;
  cu_oneshot(b, len, max_payload, &a);
  cu_reader(b, len, max_payload, cuts, n, (int)(seed >> 9) % 3, &s);
  free(cuts);
  const int c = cu_cmp(&a, &s);
  if (c) {
    char m[40];
    snprintf(m, sizeof m, "reader != one-shot (%d)", c);
    die(m, &a, &s);
  }
  if (a.result != EMBD_OK && !a.message[0]) die("empty message", &a, &s);

  /* Re-encoding and forwarding the valid prefix. */
  embd_codec_decode_options o = {.max_payload = max_payload};
  size_t pos = 0, valid = 0;
  uint32_t index = 0;
  embd_codec_frame f;
  embd_error err;
  uint8_t *out = malloc(len + 1);
  if (!out) abort();
  while (pos < len && embd_codec_next(b, len, &pos, &index, &o, &f, &err) == EMBD_OK) {
    size_t w;
    if (embd_codec_encode_frame(f.type, f.payload, f.payload_len, out, len, &w) != EMBD_OK ||
        w != pos - f.offset || memcmp(out, b + f.offset, w) != 0)
      die("re-encoding differs", &a, &s);
    valid = pos;
  }
  size_t w, nf;
  if (embd_codec_forward(b, valid, &o, 0x7F, out, len, &w, &nf, &err) != EMBD_OK || w != valid ||
      (valid && memcmp(out, b, valid) != 0) || nf != a.nframes)
    die("forwarding the valid prefix differs", &a, &s);
  free(out);
  cu_free(&a);
  cu_free(&s);
  return 0;
}
