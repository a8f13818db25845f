/* examples/frames.c: EMBD frames end to end.
 *
 * Encodes a few 1536-dim float32 vectors into one EMBD batch (a uint32 frame count, then
 * one frame per vector: 16-byte header + little-endian float32s + a CRC-32 trailer), then
 * decodes the batch twice:
 *   1. with the batch iterator, over the whole buffer (what a reader of a file does);
 *   2. with the streaming decoder in dest mode, fed 1500-byte chunks as they would come
 *      off a socket: each vector is written straight into its row of a matrix while the
 *      bytes arrive (one copy, nothing assembled).
 * Both results must be bit-identical to the input. Finally one flipped byte is caught.
 * Exits 0 on success, 1 on any failure. Public API only: #include <embd.h>.
 */
#include <embd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 4
#define DIMS 1536
#define CHUNK 1500

/* Any check that fails ends the program with a message and exit status 1. */
#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "frames: FAILED: " __VA_ARGS__);   \
      fprintf(stderr, "\n");                             \
      exit(1);                                           \
    }                                                    \
  } while (0)

/* Stream dest mode: where frame `index`'s floats go. expected_dims guarantees dims == DIMS,
 * and a batch count above COUNT never gets this far (checked below by the frame count). */
static float *row_of(void *user, uint32_t index, const embd_frame_info *info) {
  (void)info;
  if (index >= COUNT) return NULL; /* NULL: validated, not stored */
  return (float *)user + (size_t)index * DIMS;
}

int main(void) {
  /* Some deterministic "embeddings": unit-ish values, plus a negative zero and a NaN with
   * a payload, which a bit-exact format must keep as they are. */
  static float vecs[COUNT * DIMS];
  uint32_t x = 12345;
  for (size_t i = 0; i < COUNT * DIMS; i++) {
    x = x * 1664525u + 1013904223u; /* LCG */
    vecs[i] = (float)(x >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
  }
  vecs[7] = -0.0f;
  uint32_t nan_bits = 0x7fc01234u;
  memcpy(&vecs[8], &nan_bits, sizeof nan_bits);

  /* ---- encode: size first (exact without zlib), then the batch ---- */
  embd_frame_encode_options eo = {.flags = EMBD_FRAME_PAYLOAD_CRC};
  size_t cap, len;
  CHECK(embd_batch_size(COUNT, DIMS, eo.flags, &cap) == EMBD_OK, "embd_batch_size");
  uint8_t *wire = malloc(cap);
  CHECK(wire != NULL, "out of memory");
  embd_result r = embd_batch_encode_f32(vecs, COUNT, DIMS, &eo, wire, cap, &len);
  CHECK(r == EMBD_OK, "encode: %s", embd_strerror(r));

  /* ---- decode 1: the batch iterator (validates every frame, allocates nothing) ---- */
  static float out_iter[COUNT * DIMS];
  embd_frame_decode_options dopt = {.expected_dims = DIMS};
  embd_batch_iter it;
  embd_batch_frame f;
  embd_error err;
  size_t frames = 0;
  r = embd_batch_iter_init(&it, wire, len, &dopt, &err);
  while (r == EMBD_OK && (r = embd_batch_next(&it, &f, &err)) == EMBD_OK) {
    CHECK(f.index < COUNT, "more frames than encoded");
    r = embd_batch_frame_decode(&f, out_iter + (size_t)f.index * DIMS, DIMS, &err);
    frames++;
  }
  CHECK(r == EMBD_BATCH_END, "iterator: %s", err.message); /* END: valid to the last byte */
  CHECK(frames == COUNT, "iterator: %zu frames", frames);

  /* ---- decode 2: the stream decoder, dest mode, 1500-byte chunks ---- */
  static float out_stream[COUNT * DIMS];
  embd_stream_options so = {0};
  so.max_dims = so.expected_dims = DIMS; /* bounds the decoder's one buffer */
  so.batch = 1;                          /* the input starts with the frame count */
  so.dest = row_of;                      /* on_frame is optional with dest */
  so.user = out_stream;
  embd_stream *s;
  CHECK(embd_stream_create(&so, &s) == EMBD_OK, "embd_stream_create");
  for (size_t off = 0; off < len; off += CHUNK) {
    size_t n = len - off < CHUNK ? len - off : CHUNK;
    r = embd_stream_feed(s, wire + off, n, &err);
    CHECK(r == EMBD_OK, "stream feed at byte %zu: %s", err.offset, err.message);
  }
  r = embd_stream_finish(s, &err); /* a truncated tail or a short count is an error here */
  CHECK(r == EMBD_OK, "stream finish: %s", err.message);
  CHECK(embd_stream_frames(s) == COUNT, "stream: %u frames", (unsigned)embd_stream_frames(s));
  embd_stream_destroy(s);

  /* ---- bit-identical? (memcmp, not ==: -0.0 and NaN compare by bits) ---- */
  CHECK(memcmp(out_iter, vecs, sizeof vecs) == 0, "iterator output differs from the input");
  CHECK(memcmp(out_stream, vecs, sizeof vecs) == 0, "stream output differs from the input");

  /* ---- a damaged byte is an error with its offset, never wrong numbers ---- */
  size_t victim = 4 + 3 * 16; /* inside frame 0's payload */
  wire[victim] ^= 0x01;
  r = embd_batch_iter_init(&it, wire, len, &dopt, &err);
  while (r == EMBD_OK && (r = embd_batch_next(&it, &f, &err)) == EMBD_OK) {
  }
  CHECK(r == EMBD_ERR_FRAME_PAYLOAD_CRC, "flipped byte: got %s", embd_strerror(r));
  printf("frames: damaged copy rejected: %s\n", err.message);

  printf("frames: %d x %d floats -> %zu-byte batch; iterator and stream (%d-byte chunks, "
         "dest mode) decode bit-identical\n", COUNT, DIMS, len, CHUNK);
  free(wire);
  return 0;
}
