/* The chunk boundaries of the fuzz targets that feed one input whole and in chunks
 * (fuzz_stream, fuzz_codec_session, the msgpack / protobuf targets of
 * codec_modes_fuzz.h): one generator, so that the same seed cuts every format's input
 * alike and a corpus replays the same way in each. */
#ifndef EMBD_FUZZ_CUTS_H
#define EMBD_FUZZ_CUTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Cut offsets in (0, len), ascending: chunk sizes 1..(1 << (seed % 9)), advanced by an
 * LCG seeded from `seed`. Returns a malloc'd array (free it) of *n offsets; aborts when out
 * of memory. */
static inline size_t *fz_cuts(uint32_t seed, size_t len, size_t *n) {
  size_t *cuts = malloc((len + 1) * sizeof *cuts);
  if (!cuts) abort();
  size_t k = 0, at = 0;
  uint32_t x = seed * 2654435761u + 1;
  const uint32_t span = 1u << (seed % 9);
  for (;;) {
    x = x * 1664525u + 1013904223u;
    at += 1 + (x >> 8) % span;
    if (at >= len) break;
    cuts[k++] = at;
  }
  *n = k;
  return cuts;
}

#endif
