/* Fuzz target for the framer (src/wire/framer.h) under all four readers: one input, fed whole
 * and in fuzzer-chosen chunks, must make each reader say exactly the same (every frame's
 * index, offset and content, the result, err.offset and message: tests/framer_drive.h).
 *
 * Input: byte 0 picks the reader (b0 % 7: EMBD stream, EMBD batch stream, EMBD stream
 * with dest, Codec reader, Codec reader with tokens_dest, msgpack, protobuf) and the limit
 * (b0 / 7 % 16 picks max_dims / max_payload / max_frame_bytes: 0 (the default) or
 * 1 << (that - 1)); byte 1 the largest chunk (1 + b1); bytes 2-3 (LE) the chunking seed
 * and, in bits 14-15, a frame the callback stops at (3: never); the rest is the stream.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/framer_drive.h"

static fd_run whole, chunked;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  const int kind = data[0] % FD_KINDS;
  const unsigned lim = data[0] / FD_KINDS % 16;
  const uint32_t max = lim ? 1u << (lim - 1) : (kind <= FD_EMBD_DEST || kind >= FD_MSGPACK ? 4096 : 0);
  const uint32_t most = 1u + data[1];
  const uint32_t seed = (uint32_t)data[2] | (uint32_t)(data[3] & 0x3f) << 8;
  const unsigned stop = data[3] >> 6;
  whole.max = chunked.max = max;
  whole.stop_at = chunked.stop_at = stop == 3 ? UINT64_MAX : stop;
  if (!fd_run_one(kind, data + 4, size - 4, 0, 0, &whole)) return 0;
  if (!fd_run_one(kind, data + 4, size - 4, most, seed * 2654435761u + 1, &chunked)) abort();
  if (whole.h != chunked.h || whole.result != chunked.result || whole.frames != chunked.frames) {
    fprintf(stderr, "fuzz_framer: reader %d: whole says %d after %llu frames, chunks of 1..%u say %d after %llu\n",
            kind, whole.result, (unsigned long long)whole.frames, most, chunked.result,
            (unsigned long long)chunked.frames);
    abort();
  }
  return 0;
}
