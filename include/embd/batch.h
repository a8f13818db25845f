/* embd: the batch envelope (docs/FORMAT.md): a uint32 LE frame count, then that many EMBD
 * frames back to back.
 *
 *   // encode count vectors of dims floats each
 *   size_t cap, n;
 *   embd_batch_size(count, dims, 0, &cap);
 *   embd_batch_encode_f32(vecs, count, dims, NULL, buf, cap, &n);
 *
 *   // decode: an iterator over the caller's buffer, never allocates
 *   embd_batch_iter it;
 *   embd_batch_frame f;
 *   embd_error err;
 *   embd_result r = embd_batch_iter_init(&it, buf, n, NULL, &err);
 *   while (r == EMBD_OK && (r = embd_batch_next(&it, &f, &err)) == EMBD_OK)
 *     embd_batch_frame_decode(&f, out, out_cap, &err);   // the floats, when wanted
 *   // r == EMBD_BATCH_END: every frame was valid and the batch ends exactly after them
 *
 * Frames are independent: each has its own dims and dtype (version 1 float32 or version 2
 * of any dtype, docs/FORMAT.md). The float encoders write opt->dtype for every frame;
 * embd_batch_append_raw / embd_batch_encode_raw take each frame's dims and dtype.
 * embd_batch_frame_decode converts any frame to floats, embd_batch_frame_decode_raw keeps
 * its dtype (frame.info.dtype says which).
 *
 * Every frame is validated by embd_batch_next (header, dims limits, lengths, payload CRC);
 * a compressed frame's zlib stream is inflated (and so checked) by
 * embd_batch_frame_decode. Errors carry the absolute byte offset in err.offset and the
 * frame index and offset in the message: "frame 2 at byte 60: bad magic: ...".
 *
 * Thread safety: the one-shot functions are reentrant. An embd_batch_iter or
 * embd_batch_encoder is one object: one thread at a time (distinct ones are independent);
 * the buffer an iterator reads may be shared read-only by many iterators.
 */
#ifndef EMBD_BATCH_H
#define EMBD_BATCH_H

#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_BATCH_PREFIX_SIZE 4

/* One frame of a batch (or of a stream). `data` points at the frame's bytes inside the
 * caller's buffer (batch) or the chunk / the stream's buffer (stream: valid during the
 * callback only). */
typedef struct embd_batch_frame {
  uint32_t index;        /* 0-based */
  uint64_t offset;       /* absolute byte offset of the frame's first byte (64-bit: the
                            stream decoder's offsets pass 4 GiB on 32-bit hosts too) */
  embd_frame_info info;  /* dims, dtype, flags, frame_size, payload_offset, payload_size */
  const uint8_t *data;   /* info.frame_size bytes */
  const uint8_t *payload; /* data + 16: the LE values or the compressed length */
  size_t payload_len;    /* info.payload_size */
  /* The values as host floats when they are already decoded (the stream decoder's `dest`
   * mode, embd/stream.h), else NULL. */
  const float *values;
  /* The values in the frame's dtype (info.value_bytes bytes, multi-byte elements in host
   * order) when they are already decoded so (the stream decoder's `dest_raw` mode), else
   * NULL. */
  const void *raw_values;
  /* Room for later fields, set to zero by the library (it may grow: 0.x ABI). */
  uint64_t reserved_[2];
} embd_batch_frame;

/* Size of a batch of `count` frames of `dims` values with `flags`: exact without
 * EMBD_FRAME_ZLIB, an upper bound with it. EMBD_ERR_INVALID_ARGUMENT on overflow.
 * The encoders' EMBD_ERR_OUTPUT_TOO_SMALL sets *written to this size (for
 * embd_batch_encode_ptrs the sum over its frames): enough for a second call. */
EMBD_API embd_result embd_batch_size(size_t count, size_t dims, unsigned flags, size_t *size);
/* The same for frames of `dtype` (embd_frame_size_dtype's errors). */
EMBD_API embd_result embd_batch_size_dtype(size_t count, size_t dims, embd_dtype dtype,
                                           unsigned flags, size_t *size);

/* Encodes count vectors of dims floats each, v[i * dims .. (i + 1) * dims). */
EMBD_API embd_result embd_batch_encode_f32(const float *v, size_t count, size_t dims,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);
/* Encodes count vectors vecs[i] of dims[i] floats each (frames of their own dims). */
EMBD_API embd_result embd_batch_encode_ptrs(const float *const *vecs, const size_t *dims,
                                            size_t count, const embd_frame_encode_options *opt,
                                            void *out, size_t cap, size_t *written);
/* Encodes count frames of elements already in their dtypes: frame i is dims[i] elements
 * of dtypes[i] at data[i] (multi-byte elements in `order_of_data`), as
 * embd_frame_encode_raw. dtypes NULL: every frame is opt->dtype (0: f32). opt->dtype must
 * be 0 when dtypes is given. Too small: *written = the sum of the frames' sizes. */
EMBD_API embd_result embd_batch_encode_raw(const void *const *data, const size_t *dims,
                                           const embd_dtype *dtypes, size_t count,
                                           embd_byte_order order_of_data,
                                           const embd_frame_encode_options *opt, void *out,
                                           size_t cap, size_t *written);

/* Incremental encoder: begin with the count, append frames, finish checks the count
 * (EMBD_ERR_BATCH_COUNT when fewer were appended; appending more is also BATCH_COUNT). */
typedef struct embd_batch_encoder {
  uint8_t *out;
  size_t cap, len;
  uint32_t count, appended;
  embd_frame_encode_options opt;
  embd_result status; /* the first error, sticky */
} embd_batch_encoder;

EMBD_API embd_result embd_batch_begin(embd_batch_encoder *enc, uint32_t count,
                                      const embd_frame_encode_options *opt, void *out,
                                      size_t cap);
EMBD_API embd_result embd_batch_append_f32(embd_batch_encoder *enc, const float *v, size_t dims);
EMBD_API embd_result embd_batch_append_f64(embd_batch_encoder *enc, const double *v,
                                           size_t dims);
/* One frame of `dims` elements already in `dtype` (embd_frame_encode_raw; the encoder's
 * flags and level apply, its opt.dtype does not: this frame is `dtype`). */
EMBD_API embd_result embd_batch_append_raw(embd_batch_encoder *enc, const void *data,
                                           size_t dims, embd_dtype dtype,
                                           embd_byte_order order_of_data);
EMBD_API embd_result embd_batch_finish(embd_batch_encoder *enc, size_t *written);

/* Decoder: an iterator over buf[0 .. len). opt applies to every frame (allow_trailing is
 * ignored: bytes after the last frame are EMBD_ERR_BATCH_TRAILING). */
typedef struct embd_batch_iter {
  const uint8_t *buf;
  size_t len, pos;
  uint32_t count, index;
  embd_frame_decode_options opt;
  embd_result status; /* EMBD_OK while iterating, then EMBD_BATCH_END or the error */
  embd_error err;     /* the sticky error */
} embd_batch_iter;

/* Reads the count: EMBD_ERR_BATCH_TOO_SMALL under 4 bytes, EMBD_ERR_BATCH_COUNT (offset
 * 0) when count * 16 is more than the bytes after it. */
EMBD_API embd_result embd_batch_iter_init(embd_batch_iter *it, const void *buf, size_t len,
                                          const embd_frame_decode_options *opt, embd_error *err);
/* The next frame in *frame: EMBD_OK, EMBD_BATCH_END (an embd_result status, not an
 * error) after the last (with any bytes after
 * it an EMBD_ERR_BATCH_TRAILING error instead), or the frame's error (sticky). A frame
 * running past the end, its header included, is EMBD_ERR_FRAME_TRUNCATED at the end of
 * the buffer. `err` may be NULL. */
EMBD_API embd_result embd_batch_next(embd_batch_iter *it, embd_batch_frame *frame,
                                     embd_error *err);
/* The frame's values into out[0 .. dims) as host floats, converted from its dtype
 * (inflates compressed ones), errors at absolute offsets with the frame index in the
 * message. `frame` is one embd_batch_next or a stream callback handed out: its header and
 * payload CRC were checked there and are not checked again (each is checked once per
 * frame). */
EMBD_API embd_result embd_batch_frame_decode(const embd_batch_frame *frame, float *out,
                                             size_t out_cap, embd_error *err);
/* The same keeping the dtype: info.value_bytes bytes into out (out_cap_bytes in bytes),
 * multi-byte elements in order `want` (embd_frame_decode_raw). */
EMBD_API embd_result embd_batch_frame_decode_raw(const embd_batch_frame *frame, void *out,
                                                 size_t out_cap_bytes, embd_byte_order want,
                                                 embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
