/* Batch envelope: encoder and a non-allocating iterator. See include/embd/batch.h. */
#include "embd/batch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

#define HDR EMBD_FRAME_HEADER_SIZE



/* Rebases a frame-relative error to the frame at `base` (index idx). */
static embd_result rebase(embd_error *err, const embd_error *in, uint32_t idx, uint64_t base) {
  return embd_fail(err, in->result, base + in->offset, "frame %lu at byte %llu: %.120s", (unsigned long)idx,
               (unsigned long long)base, in->message);
}

/* ---- encode ---------------------------------------------------------------------------- */

embd_result embd_batch_size_dtype(size_t count, size_t dims, embd_dtype dtype, unsigned flags,
                                  size_t *size) {
  size_t one;
  if (!size || embd_above_u32(count)) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = embd_frame_size_dtype(dims, dtype, flags, &one);
  if (r != EMBD_OK) return r;
  if (count && one > (SIZE_MAX - 4) / count) return EMBD_ERR_INVALID_ARGUMENT;
  *size = 4 + one * count;
  return EMBD_OK;
}

embd_result embd_batch_size(size_t count, size_t dims, unsigned flags, size_t *size) {
  return embd_batch_size_dtype(count, dims, EMBD_DTYPE_F32, flags, size);
}

/* The float encoders' dtype (validated by embd_batch_begin / the frame encoder). */
static embd_dtype opt_dtype(const embd_frame_encode_options *opt) {
  return opt && opt->dtype < EMBD_DTYPE_COUNT_ ? (embd_dtype)opt->dtype : EMBD_DTYPE_F32;
}

embd_result embd_batch_begin(embd_batch_encoder *enc, uint32_t count,
                             const embd_frame_encode_options *opt, void *out, size_t cap) {
  if (!enc || (!out && cap)) return EMBD_ERR_INVALID_ARGUMENT;
  memset(enc, 0, sizeof *enc);
  if (opt) enc->opt = *opt;
  if ((enc->opt.flags & ~EMBD_FRAME_KNOWN_FLAGS) || !EMBD_RESERVED_OK(&enc->opt) ||
      enc->opt.dtype >= EMBD_DTYPE_COUNT_)
    return enc->status = EMBD_ERR_INVALID_ARGUMENT;
  enc->out = (uint8_t *)out;
  enc->cap = cap;
  enc->count = count;
  if (cap < 4) return enc->status = EMBD_ERR_OUTPUT_TOO_SMALL;
  enc->out[0] = (uint8_t)count;
  enc->out[1] = (uint8_t)(count >> 8);
  enc->out[2] = (uint8_t)(count >> 16);
  enc->out[3] = (uint8_t)(count >> 24);
  enc->len = 4;
  return EMBD_OK;
}

/* What a frame is appended from. */
enum { FROM_F32, FROM_F64, FROM_RAW };

/* One frame of dims values at v: floats or doubles (converted to the encoder's
 * opt.dtype), or elements of `dtype` in `order` (raw). */
static embd_result append(embd_batch_encoder *enc, int from, const void *v, size_t dims,
                          embd_dtype dtype, embd_byte_order order) {
  if (!enc) return EMBD_ERR_INVALID_ARGUMENT;
  if (!v && dims) return EMBD_ERR_INVALID_ARGUMENT; /* not sticky: nothing was written */
  if (enc->status != EMBD_OK) return enc->status;
  if (enc->appended >= enc->count) return enc->status = EMBD_ERR_BATCH_COUNT;
  uint8_t *o = enc->out + enc->len;
  const size_t room = enc->cap - enc->len;
  size_t w = 0;
  embd_result r;
  if (from == FROM_RAW) {
    embd_frame_encode_options ro = enc->opt;
    ro.dtype = 0; /* this frame's dtype is the argument's */
    r = embd_frame_encode_raw(v, dims, dtype, order, &ro, o, room, &w);
  } else if (from == FROM_F32) {
    r = embd_frame_encode_f32((const float *)v, dims, &enc->opt, o, room, &w);
  } else {
    r = embd_frame_encode_f64((const double *)v, dims, &enc->opt, o, room, &w);
  }
  if (r != EMBD_OK) return enc->status = r;
  enc->len += w;
  enc->appended++;
  return EMBD_OK;
}

embd_result embd_batch_append_f32(embd_batch_encoder *enc, const float *v, size_t dims) {
  return append(enc, FROM_F32, v, dims, EMBD_DTYPE_F32, EMBD_ORDER_LE);
}

embd_result embd_batch_append_f64(embd_batch_encoder *enc, const double *v, size_t dims) {
  return append(enc, FROM_F64, v, dims, EMBD_DTYPE_F32, EMBD_ORDER_LE);
}

embd_result embd_batch_append_raw(embd_batch_encoder *enc, const void *data, size_t dims,
                                  embd_dtype dtype, embd_byte_order order_of_data) {
  return append(enc, FROM_RAW, data, dims, dtype, order_of_data);
}

embd_result embd_batch_finish(embd_batch_encoder *enc, size_t *written) {
  if (!enc || !written) return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  if (enc->status != EMBD_OK) return enc->status;
  if (enc->appended != enc->count) return enc->status = EMBD_ERR_BATCH_COUNT;
  *written = enc->len;
  return EMBD_OK;
}

embd_result embd_batch_encode_f32(const float *v, size_t count, size_t dims,
                                  const embd_frame_encode_options *opt, void *out, size_t cap,
                                  size_t *written) {
  if (!written || (!v && count && dims) || embd_above_u32(count))
    return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  embd_batch_encoder e;
  embd_result r = embd_batch_begin(&e, (uint32_t)count, opt, out, cap);
  for (size_t i = 0; r == EMBD_OK && i < count; i++)
    r = embd_batch_append_f32(&e, dims ? v + i * dims : NULL, dims);
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL) /* the size needed (an upper bound with zlib) */
    embd_batch_size_dtype(count, dims, opt_dtype(opt), opt ? opt->flags : 0, written);
  return r == EMBD_OK ? embd_batch_finish(&e, written) : r;
}

/* The size a batch of these frames needs, for EMBD_ERR_OUTPUT_TOO_SMALL: 0 when a frame
 * cannot be encoded at all (no size to report). */
static size_t sum_sizes(const size_t *dims, const embd_dtype *dtypes, embd_dtype all,
                        size_t count, unsigned flags) {
  size_t need = 4, one;
  for (size_t i = 0; i < count; i++) {
    if (embd_frame_size_dtype(dims[i], dtypes ? dtypes[i] : all, flags, &one) != EMBD_OK ||
        one > SIZE_MAX - need)
      return 0;
    need += one;
  }
  return need;
}

/* The per-frame encoders: frame i from vecs[i] (floats) or data[i] (raw, dtypes[i]). */
static embd_result encode_frames(const float *const *vecs, const void *const *data,
                                 const size_t *dims, const embd_dtype *dtypes, size_t count,
                                 embd_byte_order order, const embd_frame_encode_options *opt,
                                 void *out, size_t cap, size_t *written) {
  if (!written) return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  if ((count && (!(vecs || data) || !dims)) || embd_above_u32(count))
    return EMBD_ERR_INVALID_ARGUMENT;
  if (dtypes && opt && opt->dtype) return EMBD_ERR_INVALID_ARGUMENT; /* which one? */
  embd_batch_encoder e;
  embd_result r = embd_batch_begin(&e, (uint32_t)count, opt, out, cap);
  const embd_dtype all = opt_dtype(opt);
  for (size_t i = 0; r == EMBD_OK && i < count; i++)
    r = vecs ? embd_batch_append_f32(&e, vecs[i], dims[i])
             : embd_batch_append_raw(&e, data[i], dims[i], dtypes ? dtypes[i] : all, order);
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL) { /* the size needed (an upper bound with zlib) */
    *written = sum_sizes(dims, vecs ? NULL : dtypes, all, count, opt ? opt->flags : 0);
    return r;
  }
  return r == EMBD_OK ? embd_batch_finish(&e, written) : r;
}

embd_result embd_batch_encode_ptrs(const float *const *vecs, const size_t *dims, size_t count,
                                   const embd_frame_encode_options *opt, void *out, size_t cap,
                                   size_t *written) {
  if (count && !vecs) return written ? (*written = 0, EMBD_ERR_INVALID_ARGUMENT) : EMBD_ERR_INVALID_ARGUMENT;
  static const float *const none[1] = {NULL};
  return encode_frames(count ? vecs : none, NULL, dims, NULL, count, EMBD_ORDER_LE, opt, out,
                       cap, written);
}

embd_result embd_batch_encode_raw(const void *const *data, const size_t *dims,
                                  const embd_dtype *dtypes, size_t count,
                                  embd_byte_order order_of_data,
                                  const embd_frame_encode_options *opt, void *out, size_t cap,
                                  size_t *written) {
  if (count && !data) return written ? (*written = 0, EMBD_ERR_INVALID_ARGUMENT) : EMBD_ERR_INVALID_ARGUMENT;
  static const void *const none[1] = {NULL};
  return encode_frames(NULL, count ? data : none, dims, dtypes, count, order_of_data, opt, out,
                       cap, written);
}

/* ---- decode ---------------------------------------------------------------------------- */

static embd_result stop(embd_batch_iter *it, embd_error *err) {
  it->status = it->err.result;
  if (err) *err = it->err;
  return it->status;
}

embd_result embd_batch_iter_init(embd_batch_iter *it, const void *buf, size_t len,
                                 const embd_frame_decode_options *opt, embd_error *err) {
  if (!it) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL iterator");
  memset(it, 0, sizeof *it);
  it->buf = (const uint8_t *)buf;
  it->len = len;
  if (opt) it->opt = *opt;
  it->opt.allow_trailing = 1;
  if (!EMBD_RESERVED_OK(&it->opt)) {
    embd_fail(&it->err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: reserved_ fields not zero");
    return stop(it, err);
  }
  if (!buf && len) {
    embd_fail(&it->err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer with length %zu", len);
    return stop(it, err);
  }
  if (len < 4) {
    embd_fail(&it->err, EMBD_ERR_BATCH_TOO_SMALL, len,
          "batch too small: %zu bytes, the frame count alone is 4", len);
    return stop(it, err);
  }
  it->count = embd_rd32le(it->buf);
  it->pos = 4;
  if ((uint64_t)it->count * HDR > (uint64_t)(len - 4)) {
    embd_fail(&it->err, EMBD_ERR_BATCH_COUNT, 0,
          "batch count %lu needs at least %llu bytes of frames, %zu follow the count",
          (unsigned long)it->count, (unsigned long long)it->count * HDR, len - 4);
    return stop(it, err);
  }
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_batch_next(embd_batch_iter *it, embd_batch_frame *frame, embd_error *err) {
  if (!it || !frame) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL iterator or frame");
  if (it->status != EMBD_OK) {
    if (err) *err = it->err;
    return it->status;
  }
  const size_t at = it->pos, rest = it->len - at;
  if (it->index == it->count) {
    if (rest) {
      embd_fail(&it->err, EMBD_ERR_BATCH_TRAILING, at,
            "%zu bytes after the last of the %lu frames (at byte %zu)", rest,
            (unsigned long)it->count, at);
      return stop(it, err);
    }
    it->status = EMBD_BATCH_END;
    it->err.result = EMBD_OK;
    if (err) *err = it->err;
    return EMBD_BATCH_END;
  }
  if (rest < HDR) {
    embd_fail(&it->err, EMBD_ERR_FRAME_TRUNCATED, it->len,
          "frame %lu at byte %zu: truncated: %zu of the 16 header bytes", (unsigned long)it->index,
          at, rest);
    return stop(it, err);
  }
  embd_error fe;
  embd_frame_info info;
  if (embd_frame_check_(it->buf + at, rest, &it->opt, &info, &fe) != EMBD_OK) {
    rebase(&it->err, &fe, it->index, at);
    return stop(it, err);
  }
  frame->index = it->index;
  frame->offset = at;
  frame->info = info;
  frame->data = it->buf + at;
  frame->payload = frame->data + HDR;
  frame->payload_len = info.payload_size;
  frame->values = NULL;
  frame->raw_values = NULL;
  frame->reserved_[0] = frame->reserved_[1] = 0;
  it->pos += info.frame_size;
  it->index++;
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_batch_frame_decode(const embd_batch_frame *frame, float *out, size_t out_cap,
                                    embd_error *err) {
  if (!frame) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL frame");
  embd_error fe;
  /* Validate once: embd_batch_next and the stream checked this frame's header and payload
   * CRC when they handed it out; what is left is the conversion (or the inflate). */
  embd_result r =
      frame->data ? embd_frame_decode_checked_(frame->data, &frame->info, out, out_cap, &fe)
                  : embd_fail(&fe, EMBD_ERR_INVALID_ARGUMENT, 0,
                              "no frame bytes (a frame decoded straight into its destination)");
  if (r != EMBD_OK) return rebase(err, &fe, frame->index, frame->offset);
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_batch_frame_decode_raw(const embd_batch_frame *frame, void *out,
                                        size_t out_cap_bytes, embd_byte_order want,
                                        embd_error *err) {
  if (!frame) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL frame");
  embd_error fe;
  embd_result r = frame->data ? embd_frame_decode_raw_checked_(frame->data, &frame->info, out,
                                                               out_cap_bytes, want, &fe)
                              : embd_fail(&fe, EMBD_ERR_INVALID_ARGUMENT, 0,
                                          "no frame bytes (a frame decoded straight into its "
                                          "destination)");
  if (r != EMBD_OK) return rebase(err, &fe, frame->index, frame->offset);
  embd_no_error(err);
  return EMBD_OK;
}
