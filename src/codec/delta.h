/* The delta variants' arithmetic (embd/codec_stream.h, "delta variants"), shared by the
 * msgpack and protobuf readers and encoders so both modes rebuild and write ids the same
 * way: zigzag maps a signed step to an unsigned value (0, -1, 1, -2, ... -> 0, 1, 2, 3,
 * ...), the scheme of protobuf's sint types and of the Codec reference encoder. */
#ifndef EMBD_CODEC_DELTA_H
#define EMBD_CODEC_DELTA_H

#include <stdint.h>

/* The step zigzag value z stands for: exact for every uint64 z. */
static inline int64_t embd_codec_step(uint64_t z) {
  return (z & 1) ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
}

/* The id after prev by zigzag value z: 1 with *id set when it lies in 0..UINT32_MAX, 0 when
 * the step leaves that range (then the caller names the step, embd_codec_step). */
static inline int embd_codec_unzigzag(uint32_t prev, uint64_t z, uint32_t *id) {
  const int64_t step = embd_codec_step(z);
  /* |step| above 2^32 leaves the range from any prev; checked first so no sum overflows. */
  if (step > (int64_t)UINT32_MAX || step < -(int64_t)UINT32_MAX) return 0;
  const int64_t v = (int64_t)prev + step;
  if (v < 0 || v > (int64_t)UINT32_MAX) return 0;
  *id = (uint32_t)v;
  return 1;
}

/* zigzag(next - prev): at most 2^33 - 1. */
static inline uint64_t embd_codec_zigzag(uint32_t prev, uint32_t next) {
  const int64_t d = (int64_t)next - (int64_t)prev;
  return d >= 0 ? (uint64_t)d << 1 : (((uint64_t)(-(d + 1))) << 1) | 1;
}

#endif
