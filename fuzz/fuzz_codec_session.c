/* Fuzz target for the Codec session stream reader against the one-shot decoder.
 *
 * Input: byte 0 picks max_payload (0 = the default 16 MiB when b0 % 16 == 0, else
 * 1 << (b0 % 16)) and, bit 4, the type policy (set: EMBD_CODEC_STRICT_TYPES; clear: types
 * from 0x07 up are opaque frames); bytes 1-2 (LE) seed the chunk boundaries (bits 0-8) and the way out
 * (bits 9-15 % 3: on_frame only, TOKENS ids into caller memory for every frame, for every
 * other frame); the rest is the session stream. The stream is fed to the reader in chunks
 * of fuzzer-chosen sizes and must give exactly what embd_codec_next gives over the whole
 * buffer: the same frames (type, index, offset, payload bytes; dest-mode ids turned back
 * into big-endian bytes), the same result, error offset and message. Also: every frame
 * the one-shot decoder accepts re-encodes to the same bytes (a newer, opaque type: its
 * header and payload are the bytes given, as the encoder writes known types only), and
 * forwarding every type of the 32 selectable reproduces the valid prefix minus the
 * frames of types from 0x20 up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/codecutil.h"
#include "fuzz_cuts.h"

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
  const uint64_t flags = data[0] & 0x10 ? EMBD_CODEC_STRICT_TYPES : 0;
  const uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8;
  const uint8_t *b = data + 3;
  const size_t len = size - 3;

  size_t n;
  size_t *cuts = fz_cuts(seed, len, &n);

  cu_rec a, s;
  cu_oneshot(b, len, max_payload, flags, &a);
  cu_reader(b, len, max_payload, flags, cuts, n, (int)(seed >> 9) % 3, &s);
  free(cuts);
  const int c = cu_cmp(&a, &s);
  if (c) {
    char m[40];
    snprintf(m, sizeof m, "reader != one-shot (%d)", c);
    die(m, &a, &s);
  }
  if (a.result != EMBD_OK && !a.message[0]) die("empty message", &a, &s);

  /* Re-encoding and forwarding the valid prefix. */
  embd_codec_decode_options o = {.max_payload = max_payload, .flags = flags};
  size_t pos = 0, valid = 0, selectable = 0, sel_bytes = 0;
  uint32_t index = 0;
  embd_codec_frame f;
  embd_error err;
  uint8_t *out = malloc(len + 1);
  if (!out) abort();
  while (pos < len && embd_codec_next(b, len, &pos, &index, &o, &f, &err) == EMBD_OK) {
    size_t w;
    if (f.type <= EMBD_CODEC_LATENTS) {
      if (embd_codec_encode_frame(f.type, f.payload, f.payload_len, out, len, &w) != EMBD_OK ||
          w != pos - f.offset || memcmp(out, b + f.offset, w) != 0)
        die("re-encoding differs", &a, &s);
    } else {
      if ((flags & EMBD_CODEC_STRICT_TYPES) || f.payload != b + f.offset + 5 ||
          f.payload_len + 5 != pos - f.offset || f.ids)
        die("opaque frame differs", &a, &s);
      if (embd_codec_encode_frame(f.type, f.payload, f.payload_len, out, len, &w) !=
          EMBD_ERR_CODEC_UNKNOWN_TYPE)
        die("the encoder wrote a newer type", &a, &s);
    }
    if (f.type < 32) selectable++;
    valid = pos;
  }
  /* The frames of types 0x00-0x1F, back to back, are what forwarding all 32 bits gives. */
  uint8_t *want = malloc(valid + 1);
  if (!want) abort();
  pos = 0, index = 0;
  while (pos < valid && embd_codec_next(b, valid, &pos, &index, &o, &f, &err) == EMBD_OK)
    if (f.type < 32) memcpy(want + sel_bytes, b + f.offset, pos - f.offset), sel_bytes += pos - f.offset;
  size_t w, nf;
  if (embd_codec_forward(b, valid, &o, ~0u, out, len, &w, &nf, &err) != EMBD_OK || w != sel_bytes ||
      (w && memcmp(out, want, w) != 0) || nf != selectable)
    die("forwarding the valid prefix differs", &a, &s);
  /* 0x7F (the known types) forwards exactly those when the policy is strict. */
  if ((flags & EMBD_CODEC_STRICT_TYPES) &&
      (embd_codec_forward(b, valid, &o, 0x7F, out, len, &w, &nf, &err) != EMBD_OK || w != valid ||
       nf != a.nframes))
    die("strict forwarding differs", &a, &s);
  free(want);
  free(out);
  cu_free(&a);
  cu_free(&s);
  return 0;
}
