/* Internals of the wire layer (src/wire, and the Codec reader that shares its word
 * helpers): wire words arriving in pieces, the frame checks the batch iterator and the
 * stream decoder share, and the validate-once test hook. Not for the kernel layer. */
#ifndef EMBD_WIRE_H
#define EMBD_WIRE_H

#include "embd/bswap.h"
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

/* ---- elements of a dtype (frame.c, batch.c, stream.c) ---- */
/* Bytes n elements of dtype take: n * bits / 8 (packed bits: n a multiple of 8, checked
 * by the caller). dtype < EMBD_DTYPE_COUNT_. */
static inline uint64_t embd_value_bytes_(embd_dtype dtype, uint64_t n) {
  return n * embd_dtype_bits(dtype) / 8;
}
/* `bytes` bytes of elements of `size` bytes (0 or 1: single bytes, no order) from src
 * to dst, each element's bytes reversed when `swap` (LE <-> BE); dst == src is allowed
 * (in place), other overlaps are not. */
static inline void embd_copy_elems_(void *dst, const void *src, size_t bytes, unsigned size,
                                    int swap) {
  if (!swap || size < 2) {
    if (dst != src) memcpy(dst, src, bytes);
  } else if (size == 4) {
    embd_bswap32(dst, src, bytes / 4);
  } else {
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    for (size_t i = 0; i + 1 < bytes; i += 2) {
      const uint8_t a = s[i];
      d[i] = s[i + 1];
      d[i + 1] = a;
    }
  }
}
/* The dtype a checked header at p says: byte 6 in version 2, f32 in version 1. */
static inline embd_dtype embd_hdr_dtype_(const uint8_t *p) {
  return p[4] == EMBD_FRAME_VERSION_DTYPE ? (embd_dtype)p[6] : EMBD_DTYPE_F32;
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
/* The same keeping the dtype (embd_frame_decode_raw's output; out_cap in bytes). */
EMBD_INTERNAL embd_result embd_frame_decode_raw_checked_(const uint8_t *p,
                                                         const embd_frame_info *info, void *out,
                                                         size_t out_cap, embd_byte_order want,
                                                         embd_error *err);

/* Test hook: when set, called once for every header check (EMBD_CHECK_HEADER: the header
 * CRC) and every payload CRC check, so that tests/test_framer.c can show each happens
 * once per frame. NULL in normal use: one predictable branch. Not thread-safe to set. */
enum { EMBD_CHECK_HEADER = 0, EMBD_CHECK_PAYLOAD_CRC = 1 };
EMBD_INTERNAL extern void (*embd_check_hook_)(int what);
/* Test hook: non-zero makes every compressed payload go through zlib's inflate alone (the
 * decoder before libdeflate), so that tests/test_frame.c can compare the two paths' results,
 * errors, offsets and messages. 0 in normal use. Not thread-safe to set. */
EMBD_INTERNAL extern int embd_inflate_zlib_only_;
#define EMBD_CHECKED_(what)                              \
  do {                                                   \
    if (__builtin_expect(embd_check_hook_ != NULL, 0)) \
      embd_check_hook_(what);                            \
  } while (0)

#endif
