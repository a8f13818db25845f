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
 * Frame: a 16-byte header (magic "EMBD" big-endian, version, flags, dtype, a zero byte,
 * dims uint32 LE, CRC-32 of bytes 0-11 uint32 LE), then the payload: the values, dims
 * elements of the frame's dtype (embd/convert.h), little-endian. Versions:
 *   1  float32 (byte 6 is zero): the seed TypeScript codec's frame; with flags 0 byte for
 *      byte the seed encoder's output. The encoder writes it for every float32 frame.
 *   2  byte 6 is the dtype code (embd_dtype: 0 f32 .. 8 ubinary), byte 7 zero; the
 *      values take embd_dtype_bytes(dtype, dims) bytes (packed bits: dims / 8, so dims
 *      is a multiple of 8). The encoder writes it for every other dtype; the decoder
 *      also accepts a version-2 frame saying f32. The seed decoder refuses version 2
 *      ("Unsupported codec version"), so it never misreads one as float32.
 * Flags (both versions):
 *   bit 0 EMBD_FRAME_ZLIB         payload = uint32 LE compressed length + that many bytes
 *                                 of zlib (RFC 1950) stream inflating to exactly the
 *                                 values' size (dims*4 bytes for float32)
 *   bit 1 EMBD_FRAME_PAYLOAD_CRC  a uint32 LE CRC-32 trailer over every byte between the
 *                                 header and the trailer
 *   other bits                    rejected (EMBD_ERR_FRAME_UNKNOWN_FLAGS)
 *
 * Two ways in and out: as float32 (embd_frame_encode_f32/_f64 write opt->dtype, converting
 * with embd_from_f32; embd_frame_decode converts any dtype to floats with embd_to_f32) and
 * in the dtype itself (embd_frame_encode_raw, embd_frame_decode_raw, embd_frame_view_raw).
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
#include "convert.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_FRAME_MAGIC 0x454D4244u /* "EMBD" */
#define EMBD_FRAME_VERSION 1       /* float32 frames (the seed codec's) */
#define EMBD_FRAME_VERSION_DTYPE 2 /* frames with a dtype byte (every other dtype) */
#define EMBD_FRAME_HEADER_SIZE 16
#define EMBD_FRAME_ZLIB 0x01u
#define EMBD_FRAME_PAYLOAD_CRC 0x02u
#define EMBD_FRAME_KNOWN_FLAGS 0x03u


/* Encoder options. NULL means all zero: flags 0 (uncompressed, no trailer), float32.
 * Zero the whole struct before setting fields (reserved_: embd/common.h). */
typedef struct embd_frame_encode_options {
  unsigned flags; /* EMBD_FRAME_ZLIB | EMBD_FRAME_PAYLOAD_CRC; other bits are rejected */
  int level;      /* zlib level 1..9, 0 = zlib's default (6); only with EMBD_FRAME_ZLIB */
  /* The dtype embd_frame_encode_f32/_f64 (and the batch encoders' float paths) write,
   * converting each float with embd_from_f32: 0 = EMBD_DTYPE_F32 (a version-1 frame, as
   * before 0.3), any other dtype a version-2 frame. int8/uint8 values must be exact
   * integers in range (else EMBD_ERR_DTYPE_RANGE: embd_from_f32 names the element).
   * embd_frame_encode_raw takes its dtype as an argument: this field must then be 0 or
   * that dtype. Unknown dtypes: EMBD_ERR_INVALID_ARGUMENT. (Took reserved_[0]'s slot in
   * 0.3: same size and offsets.) */
  uint64_t dtype;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[3];
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

/* What the decoder found (filled by the library). */
typedef struct embd_frame_info {
  uint32_t dims;         /* elements (of any dtype: a packed-bit frame's dims are bits) */
  uint8_t version;       /* 1 or 2 */
  uint8_t flags;
  uint8_t dtype;         /* embd_dtype on the wire: EMBD_DTYPE_F32 for version 1 */
  size_t frame_size;     /* bytes the whole frame takes (header, payload, trailer) */
  size_t payload_offset; /* where the values (or the compressed length) start: 16 */
  size_t payload_size;   /* bytes of payload between header and trailer */
  size_t value_bytes;    /* bytes of the values in the dtype: embd_dtype_bytes(dtype,
                            dims), what embd_frame_decode_raw writes (= payload_size for
                            an uncompressed frame) */
  /* Room for later fields, set to zero by the library (it may grow: 0.x ABI). */
  uint64_t reserved_[2];
} embd_frame_info;

/* The frame size for `dims` values and `flags`: exact without EMBD_FRAME_ZLIB, an upper
 * bound with it (the encoder reports the exact size written). EMBD_ERR_INVALID_ARGUMENT
 * for unknown flags, dims above UINT32_MAX or a size that does not fit in size_t.
 * float32 frames (embd_frame_size_dtype with EMBD_DTYPE_F32). */
EMBD_API embd_result embd_frame_size(size_t dims, unsigned flags, size_t *size);
/* The same for a frame of `dtype` (16 + embd_dtype_bytes(dtype, dims) + ...): also
 * EMBD_ERR_INVALID_ARGUMENT for an unknown dtype, EMBD_ERR_DTYPE_LENGTH for packed bits
 * with dims not a multiple of 8. */
EMBD_API embd_result embd_frame_size_dtype(size_t dims, embd_dtype dtype, unsigned flags,
                                           size_t *size);

/* Encodes `dims` floats (bit patterns kept as they are, NaN payloads included) into
 * out[0 .. cap), the frame's length in *written. EMBD_ERR_OUTPUT_TOO_SMALL when it does
 * not fit (nothing useful is in `out` then), with *written = embd_frame_size's size: exact
 * without EMBD_FRAME_ZLIB, the bound with it (enough for a second call).
 * EMBD_ERR_OUT_OF_MEMORY if zlib cannot allocate its state. `v` may be NULL when dims
 * is 0. With opt->dtype set the frame carries that dtype (version 2): each float is
 * converted by embd_from_f32's rules; EMBD_ERR_DTYPE_RANGE for an int8/uint8 value that
 * is not an integer in range, EMBD_ERR_DTYPE_LENGTH for packed bits with dims not a
 * multiple of 8 (*written 0 for both). */
EMBD_API embd_result embd_frame_encode_f32(const float *v, size_t dims,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);
/* The same from doubles, each narrowed to float32 with round-to-nearest-even (C's
 * conversion in the default rounding mode, as DataView.setFloat32 does). */
EMBD_API embd_result embd_frame_encode_f64(const double *v, size_t dims,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);

/* Encodes `dims` elements already in `dtype` (embd_dtype_bytes(dtype, dims) bytes at
 * data, multi-byte elements in `order_of_data`: they are written little-endian, bits
 * unchanged). f32 makes a version-1 frame, every other dtype version 2. Errors as above
 * (any bytes are valid elements: no EMBD_ERR_DTYPE_RANGE); EMBD_ERR_INVALID_ARGUMENT for
 * an unknown dtype or order, or opt->dtype neither 0 nor `dtype`. */
EMBD_API embd_result embd_frame_encode_raw(const void *data, size_t dims, embd_dtype dtype,
                                           embd_byte_order order_of_data,
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

/* Decodes and validates the whole frame; the values go to out[0 .. dims) as host floats,
 * converted from the frame's dtype (info->dtype says which it was) by embd_to_f32.
 * `out_cap` is in floats (EMBD_ERR_OUTPUT_TOO_SMALL below dims, with *info filled: its
 * dims is the count needed). Any input alignment, any host byte order. `out` must not
 * overlap the input. */
EMBD_API embd_result embd_frame_decode(const void *buf, size_t len,
                                       const embd_frame_decode_options *opt, float *out,
                                       size_t out_cap, embd_frame_info *info, embd_error *err);

/* Decodes and validates the whole frame keeping its dtype: the info->value_bytes bytes
 * of its values go to out[0 .. value_bytes), multi-byte elements (f32, f16, bf16) in
 * byte order `want` (EMBD_ORDER_LE: the wire's bytes as they are). `out_cap_bytes` is in
 * bytes (EMBD_ERR_OUTPUT_TOO_SMALL below value_bytes, *info filled). info->dtype says
 * what the bytes are. `out` must not overlap the input; any alignment. */
EMBD_API embd_result embd_frame_decode_raw(const void *buf, size_t len,
                                           const embd_frame_decode_options *opt, void *out,
                                           size_t out_cap_bytes, embd_byte_order want,
                                           embd_frame_info *info, embd_error *err);

/* Validates the whole frame and sets *values to point at the payload inside `buf`
 * (zero-copy; valid as long as `buf` is). Only possible for float32 frames (version 1, or
 * version 2 with dtype f32) on a little-endian host, uncompressed, whose payload
 * (buf + 16) is 4-byte aligned; otherwise, once the frame has validated, returns
 * EMBD_ERR_FRAME_VIEW_UNAVAILABLE (*info filled): use embd_frame_decode, or
 * embd_frame_view_raw for other dtypes. (A compressed frame's payload is not inflated to
 * find out whether it is valid.) */
EMBD_API embd_result embd_frame_view(const void *buf, size_t len,
                                     const embd_frame_decode_options *opt,
                                     const float **values, embd_frame_info *info,
                                     embd_error *err);
/* The zero-copy view of any dtype: *data points at the payload's info->value_bytes
 * bytes, elements of info->dtype in host order. Possible for an uncompressed frame whose
 * elements need no conversion: single-byte dtypes (fp8, int8, uint8, packed bits) always,
 * f16/bf16 on a little-endian host with the payload 2-byte aligned, f32 as
 * embd_frame_view; otherwise EMBD_ERR_FRAME_VIEW_UNAVAILABLE (once the frame validated). */
EMBD_API embd_result embd_frame_view_raw(const void *buf, size_t len,
                                         const embd_frame_decode_options *opt,
                                         const void **data, embd_frame_info *info,
                                         embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
