/* embd: the EMBD single-embedding frame (docs/FORMAT.md).
 *
 *   size_t cap;
 *   embd_frame_size(dims, 0, &cap);                 // exact for uncompressed frames
 *   uint8_t *buf = malloc(cap);
 *   size_t n;
 *   embd_frame_encode_f32(vec, dims, NULL, buf, cap, &n);
 *
 *   embd_frame_info info;
 *   embd_error err;
 *   if (embd_frame_header(buf, n, NULL, &info, &err) != EMBD_OK) puts(err.message);
 *   float *v = malloc(info.dims * sizeof *v);
 *   embd_frame_decode(buf, n, NULL, v, info.dims, &info, &err);
 *
 * Frame: a 16-byte header (magic "EMBD" big-endian, version 1, flags, two zero bytes,
 * dims uint32 LE, CRC-32 of bytes 0-11 uint32 LE), then the payload. Flags:
 *   bit 0 EMBD_FRAME_ZLIB         payload = uint32 LE compressed length + that many bytes
 *                                 of zlib (RFC 1950) stream inflating to exactly dims*4
 *                                 bytes of little-endian float32
 *   bit 1 EMBD_FRAME_PAYLOAD_CRC  a uint32 LE CRC-32 trailer over every byte between the
 *                                 header and the trailer
 *   other bits                    rejected (EMBD_ERR_FRAME_UNKNOWN_FLAGS)
 * Flags 0: payload = dims float32 LE, byte for byte the seed TypeScript encoder's output.
 *
 * Nothing is read outside [buf, buf + len); no size arithmetic overflows, also with a
 * 32-bit size_t. The decoder allocates nothing but zlib's own inflate state (about 40 KiB)
 * for compressed frames: it inflates straight into the caller's output.
 *
 * Thread safety: every function here is reentrant (no shared state but the kernel
 * dispatcher's, which is atomic): any thread, any time, on distinct or shared read-only
 * input.
 */
#ifndef EMBD_FRAME_H
#define EMBD_FRAME_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_FRAME_MAGIC 0x454D4244u /* "EMBD" */
#define EMBD_FRAME_VERSION 1
#define EMBD_FRAME_HEADER_SIZE 16
#define EMBD_FRAME_ZLIB 0x01u
#define EMBD_FRAME_PAYLOAD_CRC 0x02u
#define EMBD_FRAME_KNOWN_FLAGS 0x03u


/* Encoder options. NULL means all zero: flags 0 (uncompressed, no trailer). Zero the
 * whole struct before setting fields (reserved_: embd/common.h). */
typedef struct embd_frame_encode_options {
  unsigned flags; /* EMBD_FRAME_ZLIB | EMBD_FRAME_PAYLOAD_CRC; other bits are rejected */
  int level;      /* zlib level 1..9, 0 = zlib's default (6); only with EMBD_FRAME_ZLIB */
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[4];
  void *reserved_ptr_[2];
} embd_frame_encode_options;

/* Decoder options. NULL means all zero; zero the whole struct before setting fields. */
typedef struct embd_frame_decode_options {
  uint32_t max_dims;      /* dims above this: EMBD_ERR_FRAME_DIMS_TOO_LARGE; 0 = no limit */
  uint32_t expected_dims; /* dims other than this: EMBD_ERR_FRAME_DIMS_MISMATCH; 0 = any */
  int allow_trailing;     /* non-zero: bytes after the frame are allowed (see frame_size);
                             zero: they are EMBD_ERR_FRAME_TRAILING */
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[4];
  void *reserved_ptr_[2];
} embd_frame_decode_options;

/* What the decoder found. */
typedef struct embd_frame_info {
  uint32_t dims;
  uint8_t version;
  uint8_t flags;
  size_t frame_size;     /* bytes the whole frame takes (header, payload, trailer) */
  size_t payload_offset; /* where the float32 data (or the compressed length) starts: 16 */
  size_t payload_size;   /* bytes of payload between header and trailer */
} embd_frame_info;

/* The frame size for `dims` values and `flags`: exact without EMBD_FRAME_ZLIB, an upper
 * bound with it (the encoder reports the exact size written). EMBD_ERR_INVALID_ARGUMENT
 * for unknown flags, dims above UINT32_MAX or a size that does not fit in size_t. */
EMBD_API embd_result embd_frame_size(size_t dims, unsigned flags, size_t *size);

/* Encodes `dims` floats (bit patterns kept as they are, NaN payloads included) into
 * out[0 .. cap), the frame's length in *written. EMBD_ERR_OUTPUT_TOO_SMALL when it does
 * not fit (nothing useful is in `out` then), with *written = embd_frame_size's size: exact
 * without EMBD_FRAME_ZLIB, the bound with it (enough for a second call).
 * EMBD_ERR_OUT_OF_MEMORY if zlib cannot allocate its state. `v` may be NULL when dims
 * is 0. */
EMBD_API embd_result embd_frame_encode_f32(const float *v, size_t dims,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);
/* The same from doubles, each narrowed to float32 with round-to-nearest-even (C's
 * conversion in the default rounding mode, as DataView.setFloat32 does). */
EMBD_API embd_result embd_frame_encode_f64(const double *v, size_t dims,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);

/* Validates the header (and for compressed frames that the length field is there and the
 * lengths fit in `len`) without touching the payload: learn dims before allocating.
 * `info` and `err` may be NULL. */
EMBD_API embd_result embd_frame_header(const void *buf, size_t len,
                                       const embd_frame_decode_options *opt,
                                       embd_frame_info *info, embd_error *err);

/* How many bytes the frame starting at buf needs, from its first len bytes: for a loop
 * that reads a socket itself. Below 16 bytes *need is 16; from the header on it is the
 * whole frame's size (header, payload, trailer), except for a compressed frame with fewer
 * than 20 bytes at hand, where it is 20 (its length field ends there). So: read until
 * len >= *need, call again, and once *need <= len the frame is buf[0 .. *need). The header
 * (and the dims limits in opt) is validated whenever 16 bytes are there: errors as
 * embd_frame_header's. `err` may be NULL. */
EMBD_API embd_result embd_frame_need(const void *buf, size_t len,
                                     const embd_frame_decode_options *opt, uint64_t *need,
                                     embd_error *err);

/* Decodes and validates the whole frame; the values go to out[0 .. dims) as host floats.
 * `out_cap` is in floats (EMBD_ERR_OUTPUT_TOO_SMALL below dims, with *info filled: its
 * dims is the count needed). Any input alignment, any host byte order. `out` must not
 * overlap the input. */
EMBD_API embd_result embd_frame_decode(const void *buf, size_t len,
                                       const embd_frame_decode_options *opt, float *out,
                                       size_t out_cap, embd_frame_info *info, embd_error *err);

/* Validates the whole frame and sets *values to point at the payload inside `buf`
 * (zero-copy; valid as long as `buf` is). Only possible on a little-endian host, for an
 * uncompressed frame whose payload (buf + 16) is 4-byte aligned; otherwise, once the
 * frame has validated, returns EMBD_ERR_FRAME_VIEW_UNAVAILABLE: use embd_frame_decode.
 * (A compressed frame's payload is not inflated to find out whether it is valid.) */
EMBD_API embd_result embd_frame_view(const void *buf, size_t len,
                                     const embd_frame_decode_options *opt,
                                     const float **values, embd_frame_info *info,
                                     embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
