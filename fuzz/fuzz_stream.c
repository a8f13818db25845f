/* Fuzz target for the stream decoder against the one-shot batch decoder.
 *
 * Input: byte 0 picks max_dims (1 << (b0 % 12)) ; bytes 1-2 (LE) seed the chunk
 * boundaries (bits 0-8) and the way out (bits 9-15 % 5: on_frame only, dest for every
 * frame, dest for every other frame, dest_raw for every frame or every other: frames of
 * every dtype, converted to floats or kept); the rest is the batch (count + frames). The batch is fed to the stream
 * decoder in chunks of fuzzer-chosen sizes (from the seed) and must give the same frames
 * (offsets, dims, flags, dtypes, value bits) and the same result and error offset as
 * embd_batch_iter over the whole buffer, except where the stream cannot know better:
 * a batch count too large for the input (the batch decoder's EMBD_ERR_BATCH_COUNT; the
 * stream must still fail) and a compressed frame larger than the stream's buffer
 * (EMBD_ERR_STREAM_FRAME_TOO_LARGE; the frames before it must agree).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/batchutil.h"
#include "fuzz_cuts.h"

static void die(const char *what, const bu_rec *a, const bu_rec *s) {
  fprintf(stderr,
          "fuzz_stream: %s\nbatch: %zu frames, %d at %zu: %s\nstream: %zu frames, %d at %zu: %s\n",
          what, a->nframes, a->result, a->err_offset, a->message, s->nframes, s->result,
          s->err_offset, s->message);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  const uint32_t max_dims = 1u << (data[0] % 12);
  uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8;
  const uint8_t *b = data + 3;
  const size_t len = size - 3;

  size_t n;
  size_t *cuts = fz_cuts(seed, len, &n);

  bu_rec a, s;
  embd_frame_decode_options o = {.max_dims = max_dims, .expected_dims = 0, .allow_trailing = 0};
  bu_batch(b, len, &o, &a);
  bu_stream_mode(b, len, max_dims, cuts, n, (int)(seed >> 9) % 5, &s);
  free(cuts);

  if (a.result == EMBD_ERR_BATCH_COUNT) {
    if (s.result == EMBD_OK) die("batch count error, stream ok", &a, &s);
  } else if (s.result == EMBD_ERR_STREAM_FRAME_TOO_LARGE) {
    if (s.nframes > a.nframes) die("frame too large: more frames than the batch", &a, &s);
    if (a.result == EMBD_OK && s.nframes == a.nframes) die("frame too large after all frames", &a, &s);
  } else {
    int c = bu_cmp(&a, &s);
    if (c) {
      char m[32];
      snprintf(m, sizeof m, "stream != batch (%d)", c);
      die(m, &a, &s);
    }
  }
  if (a.result != EMBD_OK && !a.message[0]) die("batch: empty message", &a, &s);
  if (s.result != EMBD_OK && !s.message[0]) die("stream: empty message", &a, &s);
  bu_free(&a);
  bu_free(&s);
  return 0;
}
