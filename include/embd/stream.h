/* embd: streaming decoder for EMBD frames arriving in chunks of any size.
 *
 *   embd_stream_options o = {0};
 *   o.max_dims = 4096;          // required: bounds the one buffer (one frame)
 *   o.batch = 1;                // the input starts with a batch count (docs/FORMAT.md)
 *   o.on_frame = cb;            // called once per frame, as soon as its bytes are in
 *   embd_stream *s;
 *   embd_stream_create(&o, &s);
 *   while (more) if (embd_stream_feed(s, chunk, n, &err) != EMBD_OK) break;
 *   embd_stream_finish(s, &err);   // truncated tail / count check
 *   embd_stream_destroy(s);
 *
 * Memory: one buffer of the largest frame max_dims allows (compressed: zlib's bound), made
 * by embd_stream_create; nothing else is allocated. A frame wholly inside the chunk being
 * fed is passed to the callback in place (no copy); others are assembled in the buffer.
 * The callback's frame (embd_batch_frame, embd/batch.h) is valid during the call only;
 * decode its values with embd_batch_frame_decode.
 *
 * Every dtype (docs/FORMAT.md, version-2 frames) is delivered: the callback's frame has
 * info.dtype; embd_batch_frame_decode converts it to floats, embd_batch_frame_decode_raw
 * keeps the dtype.
 *
 * Decoding straight into caller memory (`dest`): the fast path for bytes that arrive in
 * pieces. Once a frame's header has validated, dest(user, index, &info) names where its
 * info.dims floats go (or returns NULL: that frame takes the path above). An uncompressed
 * float32 frame's values are then written there as host floats while its bytes arrive, so
 * each byte is copied once, never assembled; the payload CRC (flag bit 1) is computed on
 * the way. Compressed frames, frames of other dtypes (converted to floats) and frames
 * wholly inside one chunk are decoded there when they complete. `dest_raw` instead of
 * `dest`: the same, but the memory receives the frame's values in its own dtype
 * (info.value_bytes bytes, multi-byte elements in host order), written as the bytes
 * arrive for uncompressed frames whose elements need no conversion on the way (single
 * bytes always, f32, and f16/bf16 on little-endian hosts); on_frame then gets
 * `raw_values` instead of `values`. Either way on_frame (optional with dest) then gets the frame with `values`
 * pointing at the destination, and `data`/`payload` NULL for frames that were never
 * assembled. If the stream fails inside a frame, that frame's destination holds an
 * unspecified part of its values and no callback reports it.
 *
 * Frames are validated like
 * embd_batch_next does (header, dims, lengths, payload CRC): the same error codes and
 * offsets as the one-shot batch decoder, with two exceptions: a batch count too large
 * for the input is only found at finish (after the frames that were there), and a
 * compressed frame larger than the buffer is EMBD_ERR_STREAM_FRAME_TOO_LARGE.
 * Errors are sticky: every later feed/finish returns the same error. Offsets are
 * absolute byte offsets in the whole stream (uint64_t, in err->offset and frame->offset).
 *
 * Thread safety: an embd_stream is used by one thread at a time (its callbacks run on the
 * feeding thread, inside embd_stream_feed); distinct streams are independent.
 */
#ifndef EMBD_STREAM_H
#define EMBD_STREAM_H

#include "batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-frame callback; anything but EMBD_OK stops the stream with that result (sticky,
 * at the frame's offset): EMBD_STOPPED to stop without an error (feed then returns
 * EMBD_STOPPED), an error code to fail the stream with it. */
typedef embd_result (*embd_stream_frame_fn)(void *user, const embd_batch_frame *frame);

/* Where frame `index`'s info->dims values go (room for info->dims floats, 4-byte aligned,
 * not inside any chunk fed), or NULL for the callback-only path (without on_frame: the
 * frame is validated and skipped). Called once per frame. */
typedef float *(*embd_stream_dest_fn)(void *user, uint32_t index, const embd_frame_info *info);
/* Where frame `index`'s values go in their dtype: room for info->value_bytes bytes, 4-byte
 * aligned, not inside any chunk fed; or NULL (as dest). */
typedef void *(*embd_stream_raw_dest_fn)(void *user, uint32_t index, const embd_frame_info *info);

typedef struct embd_stream_options {
  uint32_t max_dims;      /* required (non-zero): frames above it are DIMS_TOO_LARGE */
  uint32_t expected_dims; /* 0 = any */
  int batch;              /* non-zero: the first 4 bytes are the frame count */
  embd_stream_frame_fn on_frame; /* required unless dest is set */
  void *user;
  embd_stream_dest_fn dest; /* optional: decode into caller memory as floats (above) */
  uint64_t reserved_[4];    /* must be zero (embd/common.h, "Growing the ABI") */
  /* optional, not with dest: decode into caller memory keeping the dtype (above). Took
   * reserved_ptr_[0]'s slot in 0.3 (same size and offsets). */
  embd_stream_raw_dest_fn dest_raw;
  void *reserved_ptr_[1];   /* must be zero */
} embd_stream_options;

typedef struct embd_stream embd_stream;

/* EMBD_ERR_INVALID_ARGUMENT without max_dims, with none of on_frame, dest and dest_raw,
 * with both dest and dest_raw, or if the
 * buffer's size does not fit size_t; EMBD_ERR_OUT_OF_MEMORY if malloc fails. */
EMBD_API embd_result embd_stream_create(const embd_stream_options *opt, embd_stream **out);
EMBD_API void embd_stream_destroy(embd_stream *s);
/* The size of the one buffer embd_stream_create allocates for max_dims. */
EMBD_API embd_result embd_stream_buffer_size(uint32_t max_dims, size_t *size);

/* Feeds len bytes (any length, 0 included). `err` may be NULL. */
EMBD_API embd_result embd_stream_feed(embd_stream *s, const void *data, size_t len,
                                      embd_error *err);
/* End of input: EMBD_ERR_FRAME_TRUNCATED if a frame is incomplete (at the end offset),
 * EMBD_ERR_BATCH_TOO_SMALL / EMBD_ERR_BATCH_COUNT in batch mode if the count is
 * incomplete / more frames were announced than arrived. */
EMBD_API embd_result embd_stream_finish(embd_stream *s, embd_error *err);
/* Frames delivered so far and bytes consumed so far. */
EMBD_API uint32_t embd_stream_frames(const embd_stream *s);
EMBD_API uint64_t embd_stream_offset(const embd_stream *s);

#ifdef __cplusplus
}
#endif

#endif
