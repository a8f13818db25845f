/* Internals of the wire layer (src/wire, and the Codec reader that shares its word
 * helpers): wire words arriving in pieces, the frame checks the batch iterator and the
 * stream decoder share, and the validate-once test hook. Not for the kernel layer. */
#ifndef EMBD_WIRE_H
#define EMBD_WIRE_H

#include "embd/frame.h"
#include "internal.h"

/* ---- byte order: the one set of 32-bit wire-word helpers and host-order test ---- */
static inline uint32_t embd_rd32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t embd_rd32be(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline void embd_wr32le(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}
static inline void embd_wr32be(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* ---- 32-bit wire words arriving in pieces (stream.c, codec.c) ---- */
/* Writes bytes [q, q + n) of a run of 32-bit wire words to the host-order words at d (the
 * words' bytes: byte q of the wire lands at host byte q, or q ^ 3 when `swap`, i.e. when
 * the wire order is not the host's). Whole words go through `words` (the host-order
 * converter: dst 4-byte aligned since d is and q % 4 == 0 there). */
static inline void embd_put_wire_words_(uint8_t *d, size_t q, const uint8_t *p, size_t n,
                                        int swap, void (*words)(uint8_t *, const uint8_t *, size_t)) {
  const size_t x = swap ? 3 : 0;
  for (; n && (q & 3); n--) d[q++ ^ x] = *p++;
  const size_t w = n / 4;
  if (w) {
    words(d + q, p, w);
    q += 4 * w, p += 4 * w, n -= 4 * w;
  }
  for (; n; n--) d[q++ ^ x] = *p++;
}
static inline int embd_host_le_(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b;
}

/* ---- frames (frame.c), for the batch and stream decoders ---- */
/* The 16 header bytes at p (avail >= 16 bytes present): validates them (and the dims
 * limits in opt) unless `checked` says that was done, and sets *need to the whole frame's
 * size, or to 20 for a compressed frame whose length field is not in the avail bytes yet. */
EMBD_INTERNAL embd_result embd_frame_need_(const uint8_t *p, size_t avail,
                                           const embd_frame_decode_options *opt, int checked,
                                           uint64_t *need, embd_error *err);
/* *info for the frame of `size` bytes (from embd_frame_need_) whose header at p is checked. */
EMBD_INTERNAL void embd_frame_info_(const uint8_t *p, size_t size, embd_frame_info *info);
/* Header, lengths, trailing rule and payload CRC (no inflate); fills *info (not NULL). */
EMBD_INTERNAL embd_result embd_frame_check_(const uint8_t *p, size_t len,
                                            const embd_frame_decode_options *opt,
                                            embd_frame_info *info, embd_error *err);
/* The payload CRC alone (when the flag is set) of a frame described by a checked *info. */
EMBD_INTERNAL embd_result embd_frame_payload_check_(const uint8_t *p, const embd_frame_info *info,
                                                    embd_error *err);
/* The values of a frame whose header and payload CRC were checked (*info from that check):
 * converted or inflated, nothing checked again. Validate once: the batch iterator and the
 * stream decoder check a frame when they hand it out, and this is their decode step. */
EMBD_INTERNAL embd_result embd_frame_decode_checked_(const uint8_t *p, const embd_frame_info *info,
                                                     float *out, size_t out_cap, embd_error *err);

/* Test hook: when set, called once for every header check (EMBD_CHECK_HEADER: the header
 * CRC) and every payload CRC check, so that tests/test_framer.c can show each happens
 * once per frame. NULL in normal use: one predictable branch. Not thread-safe to set. */
enum { EMBD_CHECK_HEADER = 0, EMBD_CHECK_PAYLOAD_CRC = 1 };
EMBD_INTERNAL extern void (*embd_check_hook_)(int what);
#define EMBD_CHECKED_(what)                              \
  do {                                                   \
    if (__builtin_expect(embd_check_hook_ != NULL, 0)) \
      embd_check_hook_(what);                            \
  } while (0)

#endif
