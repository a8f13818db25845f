/* Streaming decoder: EMBD frames out of chunks of any size, on the framer (framer.h).
 * See include/embd/stream.h. What is the EMBD format's own is here: the batch count, a
 * frame's size from its header, what a frame means, and which frames go direct. */
#include "embd/stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framer.h"

#define HDR EMBD_FRAME_HEADER_SIZE

struct embd_stream {
  embd_framer f; /* first: the ops get the stream back from their embd_framer * */
  embd_stream_options o;
  embd_frame_decode_options fo;
  uint8_t cnt[4]; /* the batch count as it arrives */
  unsigned cntn;
  uint32_t count;
  embd_frame_info info; /* the direct frame's */
};


static uint64_t zbound(uint64_t n) { return n + (n >> 12) + (n >> 14) + (n >> 25) + 13; }

embd_result embd_stream_buffer_size(uint32_t max_dims, size_t *size) {
  if (!size || !max_dims) return EMBD_ERR_INVALID_ARGUMENT;
  const uint64_t raw = HDR + (uint64_t)max_dims * 4 + 4;
  const uint64_t z = HDR + 4 + zbound((uint64_t)max_dims * 4) + 4;
  const uint64_t n = raw > z ? raw : z;
  if (n > SIZE_MAX) return EMBD_ERR_INVALID_ARGUMENT;
  *size = (size_t)n;
  return EMBD_OK;
}

embd_result embd_stream_create(const embd_stream_options *opt, embd_stream **out) {
  if (!out) return EMBD_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!opt || (!opt->on_frame && !opt->dest && !opt->dest_raw) || (opt->dest && opt->dest_raw) ||
      !EMBD_RESERVED_OK(opt))
    return EMBD_ERR_INVALID_ARGUMENT;
  size_t cap;
  embd_result r = embd_stream_buffer_size(opt->max_dims, &cap);
  if (r != EMBD_OK) return r;
  embd_stream *s = (embd_stream *)calloc(1, sizeof *s);
  if (!s) return EMBD_ERR_OUT_OF_MEMORY;
  /* The whole buffer now: a feed never allocates (stream.h). */
  if (embd_framer_init(&s->f, cap, cap) != EMBD_OK) {
    free(s);
    return EMBD_ERR_OUT_OF_MEMORY;
  }
  s->o = *opt;
  s->fo.max_dims = opt->max_dims;
  s->fo.expected_dims = opt->expected_dims;
  s->fo.allow_trailing = 1;
  *out = s;
  return EMBD_OK;
}

void embd_stream_destroy(embd_stream *s) {
  if (!s) return;
  embd_framer_free(&s->f);
  free(s);
}

uint32_t embd_stream_frames(const embd_stream *s) { return s ? (uint32_t)s->f.index : 0; }
uint64_t embd_stream_offset(const embd_stream *s) { return s ? s->f.pos : 0; }

/* The frame's size. The header is checked once, when its 16 bytes are first seen. */
static int st_size(embd_framer *f, const uint8_t *p, size_t n, uint64_t *need) {
  embd_stream *s = (embd_stream *)f;
  if (!f->seen && s->o.batch && f->index == s->count) {
    embd_framer_fail_stream(f, EMBD_ERR_BATCH_TRAILING, f->pos,
                            "bytes after the last of the %lu frames (at byte %llu)",
                            (unsigned long)s->count, (unsigned long long)f->pos);
    return EMBD_FRAMER_FAIL;
  }
  if (n < HDR) {
    *need = HDR;
    return EMBD_FRAMER_MORE;
  }
  embd_error fe;
  if (embd_frame_need_(p, n, &s->fo, f->seen >= HDR, need, &fe) != EMBD_OK) {
    embd_framer_rebase(f, &fe);
    return EMBD_FRAMER_FAIL;
  }
  if (*need > f->max) {
    embd_framer_fail(f, EMBD_ERR_STREAM_FRAME_TOO_LARGE, f->start,
                     "%llu bytes, the stream's buffer holds %llu (max_dims %lu)",
                     (unsigned long long)*need, (unsigned long long)f->max,
                     (unsigned long)s->o.max_dims);
    return EMBD_FRAMER_FAIL;
  }
  /* A compressed frame's size is in its bytes 16-19. */
  return (p[5] & EMBD_FRAME_ZLIB) && n < HDR + 4 ? EMBD_FRAMER_MORE : EMBD_FRAMER_SIZE;
}

static embd_result st_callback(embd_stream *s, embd_batch_frame *fr) {
  fr->index = (uint32_t)s->f.index;
  fr->offset = s->f.start;
  fr->reserved_[0] = fr->reserved_[1] = 0;
  return s->o.on_frame ? s->o.on_frame(s->o.user, fr) : EMBD_OK;
}

/* The destination for a frame (dest or dest_raw: one of them at most is set), asked once. */
static void *st_dest(embd_stream *s, const embd_frame_info *info) {
  s->f.asked = 1;
  return s->o.dest ? (void *)s->o.dest(s->o.user, (uint32_t)s->f.index, info)
                   : s->o.dest_raw(s->o.user, (uint32_t)s->f.index, info);
}

/* A whole frame (header checked by st_size): its payload CRC, once, then dest and the
 * callback. */
static embd_result st_frame(embd_framer *f, const uint8_t *p, size_t n) {
  embd_stream *s = (embd_stream *)f;
  embd_error fe;
  embd_batch_frame fr;
  embd_frame_info_(p, n, &fr.info);
  if (embd_frame_payload_check_(p, &fr.info, &fe) != EMBD_OK) return embd_framer_rebase(f, &fe);
  fr.data = p;
  fr.payload = p + HDR;
  fr.payload_len = fr.info.payload_size;
  fr.values = NULL;
  fr.raw_values = NULL;
  if ((s->o.dest || s->o.dest_raw) && !f->asked) {
    void *d = st_dest(s, &fr.info);
    if (d && s->o.dest) {
      if (embd_frame_decode_checked_(p, &fr.info, (float *)d, fr.info.dims, &fe) != EMBD_OK)
        return embd_framer_rebase(f, &fe);
      fr.values = (const float *)d;
    } else if (d) {
      const embd_byte_order host = embd_host_le_() ? EMBD_ORDER_LE : EMBD_ORDER_BE;
      if (embd_frame_decode_raw_checked_(p, &fr.info, d, fr.info.value_bytes, host, &fe) != EMBD_OK)
        return embd_framer_rebase(f, &fe);
      fr.raw_values = d;
    }
  }
  return st_callback(s, &fr);
}

static void f32_words(uint8_t *d, const uint8_t *p, size_t n) {
  embd_f32_from_le((float *)(void *)d, p, n);
}
/* Elements that need no conversion on the way (single bytes, or 2-byte ones on a
 * little-endian host): the wire's bytes as they are. */
static void copy_words(uint8_t *d, const uint8_t *p, size_t n) { memcpy(d, p, 4 * n); }

/* An uncompressed frame larger than what is at hand: asks the destination where its
 * values go, and receives them there as they arrive when the bytes map straight onto
 * the destination's elements (the framer places 4-byte words, swapped or not): float32
 * into float or raw memory, and in raw mode single-byte elements anywhere and 2-byte ones
 * on little-endian hosts. Other frames are decoded into it when they complete. */
static size_t st_direct(embd_framer *f, const uint8_t *p, size_t n) {
  embd_stream *s = (embd_stream *)f;
  (void)n;
  if ((!s->o.dest && !s->o.dest_raw) || f->asked || (p[5] & EMBD_FRAME_ZLIB)) return 0;
  const embd_dtype dt = embd_hdr_dtype_(p);
  const unsigned size = embd_dtype_bits(dt) / 8;
  const int le = embd_host_le_();
  if (dt != EMBD_DTYPE_F32 && (s->o.dest || (size == 2 && !le))) return 0;
  embd_frame_info_(p, (size_t)f->need, &s->info); /* need <= the buffer: fits */
  void *d = st_dest(s, &s->info);
  if (!d) return 0;
  const int crc = (p[5] & EMBD_FRAME_PAYLOAD_CRC) != 0;
  if (dt == EMBD_DTYPE_F32)
    embd_framer_direct(f, d, s->info.payload_size, !le, f32_words, crc, crc ? 4 : 0);
  else
    embd_framer_direct(f, d, s->info.payload_size, 0, copy_words, crc, crc ? 4 : 0);
  return HDR;
}

/* The direct frame is in: the running payload CRC against its trailer, then the callback. */
static embd_result st_direct_end(embd_framer *f) {
  embd_stream *s = (embd_stream *)f;
  const size_t pay = s->info.payload_size;
  if (f->crc_on) {
    EMBD_CHECKED_(EMBD_CHECK_PAYLOAD_CRC);
    const uint32_t stored = embd_rd32le(f->tr);
    if (stored != f->crc)
      return embd_framer_fail(f, EMBD_ERR_FRAME_PAYLOAD_CRC, f->start + HDR + pay,
                              "payload CRC mismatch: stored 0x%08lx, computed 0x%08lx (bytes 16-%zu)",
                              (unsigned long)stored, (unsigned long)f->crc, HDR + pay - 1);
  }
  embd_batch_frame fr;
  fr.info = s->info;
  fr.data = NULL;
  fr.payload = NULL;
  fr.payload_len = pay;
  fr.values = s->o.dest ? (const float *)(const void *)f->dst : NULL;
  fr.raw_values = s->o.dest ? NULL : f->dst;
  return st_callback(s, &fr);
}

static const embd_framer_ops st_ops = {st_size, st_frame, st_direct, st_direct_end, 0};

embd_result embd_stream_feed(embd_stream *s, const void *data, size_t len, embd_error *err) {
  if (!s || (!data && len)) {
    if (err) {
      err->result = EMBD_ERR_INVALID_ARGUMENT;
      err->offset = 0;
      snprintf(err->message, sizeof err->message, "NULL stream or data");
    }
    return EMBD_ERR_INVALID_ARGUMENT;
  }
  const uint8_t *p = (const uint8_t *)data;
  if (s->f.status == EMBD_OK && s->o.batch && s->cntn < 4) {
    while (s->cntn < 4 && len) s->cnt[s->cntn++] = *p++, len--, s->f.pos++;
    if (s->cntn == 4) s->count = embd_rd32le(s->cnt);
  }
  if (len && s->f.status == EMBD_OK) embd_framer_feed(&s->f, &st_ops, p, len);
  return embd_framer_report(&s->f, err);
}

embd_result embd_stream_finish(embd_stream *s, embd_error *err) {
  if (!s) return EMBD_ERR_INVALID_ARGUMENT;
  embd_framer *f = &s->f;
  if (f->status == EMBD_OK) {
    const uint64_t got = embd_framer_pending(f);
    if (s->o.batch && s->cntn < 4) {
      embd_framer_fail_stream(f, EMBD_ERR_BATCH_TOO_SMALL, f->pos,
                              "batch too small: %llu bytes, the frame count alone is 4",
                              (unsigned long long)f->pos);
    } else if (s->o.batch && (uint64_t)s->count * HDR > f->pos - 4) {
      embd_framer_fail_stream(f, EMBD_ERR_BATCH_COUNT, 0,
                              "batch count %lu needs at least %llu bytes of frames, %llu followed the count",
                              (unsigned long)s->count, (unsigned long long)s->count * HDR,
                              (unsigned long long)(f->pos - 4));
    } else if (got || (s->o.batch && f->index < s->count)) {
      f->start = f->pos - got;
      embd_framer_fail(f, EMBD_ERR_FRAME_TRUNCATED, f->pos,
                       "truncated: the input ends after %llu of its bytes", (unsigned long long)got);
    }
  }
  return embd_framer_report(f, err);
}
