/* Streaming decoder: frames out of chunks of any size, one frame of buffer. See
 * include/embd/stream.h. */
#include "embd/stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define HDR EMBD_FRAME_HEADER_SIZE

struct embd_stream {
  embd_stream_options o;
  embd_frame_decode_options fo;
  uint8_t *buf;
  size_t cap, blen;
  uint64_t need; /* size of the frame being assembled, 0 while unknown */
  uint64_t pos;  /* bytes consumed */
  int have_count;
  uint32_t count, index;
  embd_result status;
  embd_error err;
  /* The frame being decoded straight into the caller's memory (options.dest). */
  int direct;
  int asked;          /* dest was called for the current frame and returned NULL */
  uint8_t *dst;       /* its floats, as bytes */
  embd_frame_info info;
  uint64_t start;     /* its first byte's offset */
  size_t done;        /* payload bytes written to dst */
  uint32_t crc;       /* running payload CRC (EMBD_FRAME_PAYLOAD_CRC) */
  uint8_t tr[4];      /* the trailer as it arrives */
  size_t trn;
};

static uint32_t rd32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static embd_result sfail(embd_stream *s, embd_result r, uint64_t off, const char *fmt, ...) {
  s->status = r;
  s->err.result = r;
  s->err.offset = off;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err.message, sizeof s->err.message, fmt, ap);
  va_end(ap);
  return r;
}

static embd_result frame_fail(embd_stream *s, const embd_error *fe, uint64_t base) {
  return sfail(s, fe->result, base + fe->offset, "frame %lu at byte %llu: %.120s",
               (unsigned long)s->index, (unsigned long long)base, fe->message);
}

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
  if (!opt || (!opt->on_frame && !opt->dest) || !EMBD_RESERVED_OK(opt)) return EMBD_ERR_INVALID_ARGUMENT;
  size_t cap;
  embd_result r = embd_stream_buffer_size(opt->max_dims, &cap);
  if (r != EMBD_OK) return r;
  embd_stream *s = (embd_stream *)calloc(1, sizeof *s);
  if (!s) return EMBD_ERR_OUT_OF_MEMORY;
  s->buf = (uint8_t *)malloc(cap);
  if (!s->buf) {
    free(s);
    return EMBD_ERR_OUT_OF_MEMORY;
  }
  s->cap = cap;
  s->o = *opt;
  s->fo.max_dims = opt->max_dims;
  s->fo.expected_dims = opt->expected_dims;
  s->fo.allow_trailing = 1;
  *out = s;
  return EMBD_OK;
}

void embd_stream_destroy(embd_stream *s) {
  if (!s) return;
  free(s->buf);
  free(s);
}

uint32_t embd_stream_frames(const embd_stream *s) { return s ? s->index : 0; }
uint64_t embd_stream_offset(const embd_stream *s) { return s ? s->pos : 0; }

static embd_result report(const embd_stream *s, embd_error *err) {
  if (err) *err = s->err;
  return s->status;
}

/* Hands a finished frame to on_frame and moves on to the next one. */
static embd_result complete(embd_stream *s, embd_batch_frame *f, uint64_t off) {
  f->index = s->index;
  f->offset = off;
  if (s->o.on_frame) {
    embd_result r = s->o.on_frame(s->o.user, f);
    if (r != EMBD_OK)
      return sfail(s, r, off, "frame %lu at byte %llu: the callback returned %d (%s)",
                   (unsigned long)s->index, (unsigned long long)off, (int)r, embd_strerror(r));
  }
  s->index++;
  s->direct = s->asked = 0;
  s->blen = 0;
  s->need = 0;
  return EMBD_OK;
}

/* A complete frame of n bytes at p, starting at absolute offset off. */
static embd_result deliver(embd_stream *s, const uint8_t *p, size_t n, uint64_t off) {
  embd_error fe;
  embd_frame_info info;
  if (embd_frame_check_(p, n, &s->fo, &info, &fe) != EMBD_OK) return frame_fail(s, &fe, off);
  embd_batch_frame f;
  f.info = info;
  f.data = p;
  f.payload = p + HDR;
  f.payload_len = info.payload_size;
  f.values = NULL;
  if (s->o.dest && !s->asked) {
    float *d = s->o.dest(s->o.user, s->index, &info);
    if (d) {
      if (info.flags & EMBD_FRAME_ZLIB) {
        if (embd_frame_decode(p, n, NULL, d, info.dims, NULL, &fe) != EMBD_OK)
          return frame_fail(s, &fe, off);
      } else {
        embd_f32_from_le(d, p + HDR, info.dims);
      }
      f.values = d;
    }
  }
  return complete(s, &f, off);
}

static void f32_words(uint8_t *d, const uint8_t *p, size_t n) {
  embd_f32_from_le((float *)(void *)d, p, n);
}

/* Writes payload bytes [q, q + n) (little-endian float32s) to the destination's floats. */
static void put_bytes(uint8_t *d, size_t q, const uint8_t *p, size_t n) {
  embd_put_wire_words_(d, q, p, n, !embd_host_le_(), f32_words);
}

/* The header of an uncompressed frame larger than what is at hand is in (16 bytes at h,
 * validated): asks dest where it goes. Sets s->direct when it got a place. */
static void begin_direct(embd_stream *s, const uint8_t *h, uint64_t need, uint64_t start) {
  embd_frame_info info;
  info.dims = rd32le(h + 8);
  info.version = h[4];
  info.flags = h[5];
  info.frame_size = (size_t)need; /* <= the buffer's size: fits */
  info.payload_offset = HDR;
  info.payload_size = (size_t)info.dims * 4;
  float *d = s->o.dest(s->o.user, s->index, &info);
  if (!d) {
    s->asked = 1;
    return;
  }
  s->direct = 1;
  s->dst = (uint8_t *)d;
  s->info = info;
  s->start = start;
  s->done = 0;
  s->crc = 0;
  s->trn = 0;
}

/* Direct mode: consumes up to len bytes of the current frame; returns how many. */
static size_t feed_direct(embd_stream *s, const uint8_t *p, size_t len) {
  const size_t pay = s->info.payload_size, len0 = len;
  const int has_crc = (s->info.flags & EMBD_FRAME_PAYLOAD_CRC) != 0;
  if (s->done < pay) {
    const size_t take = pay - s->done < len ? pay - s->done : len;
    if (has_crc) s->crc = embd_crc32(s->crc, p, take);
    put_bytes(s->dst, s->done, p, take);
    s->done += take, p += take, len -= take;
    if (s->done < pay) return len0 - len;
  }
  if (has_crc) {
    const size_t take = 4 - s->trn < len ? 4 - s->trn : len;
    memcpy(s->tr + s->trn, p, take);
    s->trn += take, len -= take;
    if (s->trn < 4) return len0 - len;
    const uint32_t stored = rd32le(s->tr);
    if (stored != s->crc) {
      embd_error fe;
      embd_fail(&fe, EMBD_ERR_FRAME_PAYLOAD_CRC, HDR + pay,
                "payload CRC mismatch: stored 0x%08lx, computed 0x%08lx (bytes 16-%zu)",
                (unsigned long)stored, (unsigned long)s->crc, HDR + pay - 1);
      frame_fail(s, &fe, s->start);
      return len0 - len;
    }
  }
  embd_batch_frame f;
  f.info = s->info;
  f.data = NULL;
  f.payload = NULL;
  f.payload_len = pay;
  f.values = (const float *)(const void *)s->dst;
  complete(s, &f, s->start);
  return len0 - len;
}

/* The buffered header (blen >= 16): validate, learn the frame's size. */
static embd_result learn(embd_stream *s) {
  embd_error fe;
  uint64_t need;
  const uint64_t start = s->pos - s->blen;
  if (embd_frame_need_(s->buf, s->blen, &s->fo, &need, &fe) != EMBD_OK)
    return frame_fail(s, &fe, start);
  if (need > s->cap)
    return sfail(s, EMBD_ERR_STREAM_FRAME_TOO_LARGE, start,
                 "frame %lu at byte %llu: %llu bytes, the stream's buffer holds %zu (max_dims %lu)",
                 (unsigned long)s->index, (unsigned long long)start, (unsigned long long)need,
                 s->cap, (unsigned long)s->o.max_dims);
  s->need = need;
  return EMBD_OK;
}

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
  while (s->status == EMBD_OK && len) {
    if (s->direct) {
      const size_t used = feed_direct(s, p, len);
      p += used, len -= used, s->pos += used;
      continue;
    }
    if (s->o.batch && !s->have_count) {
      size_t take = 4 - s->blen < len ? 4 - s->blen : len;
      memcpy(s->buf + s->blen, p, take);
      s->blen += take, p += take, len -= take, s->pos += take;
      if (s->blen == 4) {
        s->count = (uint32_t)s->buf[0] | (uint32_t)s->buf[1] << 8 | (uint32_t)s->buf[2] << 16 |
                   (uint32_t)s->buf[3] << 24;
        s->have_count = 1;
        s->blen = 0;
      }
      continue;
    }
    if (s->o.batch && s->index == s->count) {
      sfail(s, EMBD_ERR_BATCH_TRAILING, s->pos, "bytes after the last of the %lu frames (at byte %llu)",
            (unsigned long)s->count, (unsigned long long)s->pos);
      break;
    }
    if (s->blen == 0 && len >= HDR) {
      /* Zero-copy when the whole frame is in this chunk. */
      embd_error fe;
      uint64_t need;
      if (embd_frame_need_(p, len, &s->fo, &need, &fe) != EMBD_OK) {
        frame_fail(s, &fe, s->pos);
        break;
      }
      if (need <= len) {
        if (deliver(s, p, (size_t)need, s->pos) != EMBD_OK) break;
        p += need, len -= (size_t)need, s->pos += need;
        continue;
      }
      if (s->o.dest && !(p[5] & EMBD_FRAME_ZLIB) && need <= s->cap) {
        begin_direct(s, p, need, s->pos);
        if (s->direct) {
          p += HDR, len -= HDR, s->pos += HDR;
          continue;
        }
      }
    }
    const uint64_t target = s->blen < HDR ? HDR : s->need;
    const size_t take = target - s->blen < len ? (size_t)(target - s->blen) : len;
    embd_copy(s->buf + s->blen, p, take); /* up to a whole frame: not memcpy (copy_kernel.h) */
    s->blen += take, p += take, len -= take, s->pos += take;
    if (s->blen < target) continue;
    if (learn(s) != EMBD_OK) break;
    if (s->blen == HDR && s->need > HDR && s->o.dest && !s->asked &&
        !(s->buf[5] & EMBD_FRAME_ZLIB)) {
      begin_direct(s, s->buf, s->need, s->pos - HDR);
      if (s->direct) continue;
    }
    if (s->blen == s->need && deliver(s, s->buf, s->blen, s->pos - s->blen) != EMBD_OK) break;
  }
  if (s->status == EMBD_OK && err) {
    err->result = EMBD_OK;
    err->offset = 0;
    err->message[0] = 0;
  }
  return report(s, err);
}

embd_result embd_stream_finish(embd_stream *s, embd_error *err) {
  if (!s) return EMBD_ERR_INVALID_ARGUMENT;
  if (s->status == EMBD_OK) {
    if (s->o.batch && !s->have_count) {
      sfail(s, EMBD_ERR_BATCH_TOO_SMALL, s->pos,
            "batch too small: %llu bytes, the frame count alone is 4", (unsigned long long)s->pos);
    } else if (s->o.batch && (uint64_t)s->count * HDR > s->pos - 4) {
      sfail(s, EMBD_ERR_BATCH_COUNT, 0,
            "batch count %lu needs at least %llu bytes of frames, %llu followed the count",
            (unsigned long)s->count, (unsigned long long)s->count * HDR,
            (unsigned long long)(s->pos - 4));
    } else if (s->blen || s->direct || (s->o.batch && s->index < s->count)) {
      const uint64_t got = s->direct ? s->pos - s->start : s->blen;
      sfail(s, EMBD_ERR_FRAME_TRUNCATED, s->pos,
            "frame %lu at byte %llu: truncated: the input ends after %llu of its bytes",
            (unsigned long)s->index, (unsigned long long)(s->pos - got), (unsigned long long)got);
    }
  }
  if (s->status == EMBD_OK && err) {
    err->result = EMBD_OK;
    err->offset = 0;
    err->message[0] = 0;
  }
  return report(s, err);
}
