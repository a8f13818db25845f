/* The framer's cold half: buffer, errors, direct mode. See framer.h. */
#include "framer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "embd/crc32.h"

embd_result embd_framer_init(embd_framer *f, size_t initial, uint64_t max) {
  memset(f, 0, sizeof *f);
  f->max = max;
  if (initial && !embd_framer_reserve_(f, initial)) return EMBD_ERR_OUT_OF_MEMORY;
  f->status = EMBD_OK;
  return EMBD_OK;
}

void embd_framer_free(embd_framer *f) {
  free(f->buf);
  f->buf = NULL;
  f->cap = 0;
}

/* Doubling from 256 bytes, capped at max: a stream of small frames keeps a small buffer,
 * a frame of max bytes costs log2(max/256) reallocations once. */
int embd_framer_reserve_(embd_framer *f, uint64_t n) {
  if (n <= f->cap) return 1;
  if (n <= f->max && n <= SIZE_MAX) {
    uint64_t c = f->cap ? f->cap : 256;
    while (c < n) c *= 2;
    if (c > f->max) c = f->max;
    if (c > SIZE_MAX) c = SIZE_MAX;
    uint8_t *b = (uint8_t *)realloc(f->buf, (size_t)c);
    if (b) {
      f->buf = b;
      f->cap = (size_t)c;
      return 1;
    }
  }
  /* Above max only by a format's mistake (each format bounds its frames first). */
  embd_framer_fail(f, EMBD_ERR_OUT_OF_MEMORY, f->start, "out of memory for a frame of %llu bytes",
                   (unsigned long long)n);
  return 0;
}

embd_result embd_framer_fail(embd_framer *f, embd_result r, uint64_t at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  embd_vfail_frame(&f->err, r, at, f->index, f->start, fmt, ap);
  va_end(ap);
  f->status = r;
  return r;
}

embd_result embd_framer_fail_stream(embd_framer *f, embd_result r, uint64_t at, const char *fmt,
                                    ...) {
  f->err.result = r;
  f->err.offset = at;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->err.message, sizeof f->err.message, fmt, ap);
  va_end(ap);
  f->status = r;
  return r;
}

embd_result embd_framer_rebase(embd_framer *f, const embd_error *fe) {
  return embd_framer_fail(f, fe->result, f->start + fe->offset, "%s", fe->message);
}

void embd_framer_stop_(embd_framer *f, embd_result r) {
  if (f->status == EMBD_OK) /* not the format's own error: the user callback's stop */
    embd_framer_fail(f, r, f->start, "the callback returned %d (%s)", (int)r, embd_strerror(r));
}

embd_result embd_framer_report(const embd_framer *f, embd_error *err) {
  if (f->status == EMBD_OK) return embd_no_error(err);
  if (err) *err = f->err;
  return f->status;
}

void embd_framer_direct(embd_framer *f, void *dst, size_t dlen, int swap,
                        void (*words)(uint8_t *, const uint8_t *, size_t), int crc_on,
                        unsigned trlen) {
  f->direct = 1;
  f->dst = (uint8_t *)dst;
  f->dlen = dlen;
  f->done = 0;
  f->swap = swap;
  f->words = words;
  f->crc_on = crc_on;
  f->crc = 0;
  f->trlen = trlen;
  f->trn = 0;
}

size_t embd_framer_feed_direct_(embd_framer *f, const embd_framer_ops *ops, const uint8_t *p,
                                size_t len) {
  const size_t len0 = len;
  if (f->done < f->dlen) {
    const size_t take = f->dlen - f->done < len ? f->dlen - f->done : len;
    if (f->crc_on) f->crc = embd_crc32(f->crc, p, take);
    embd_put_wire_words_(f->dst, f->done, p, take, f->swap, f->words);
    f->done += take, p += take, len -= take;
    if (f->done < f->dlen) return len0 - len;
  }
  const size_t take = f->trlen - f->trn < len ? f->trlen - f->trn : len;
  memcpy(f->tr + f->trn, p, take);
  f->trn += (unsigned)take, len -= take;
  if (f->trn < f->trlen) return len0 - len;
  /* The frame's last byte is in: the caller adds it to pos after we return, so that the
   * format sees the frame's own offsets. */
  const embd_result r = ops->direct_end(f);
  if (r != EMBD_OK) embd_framer_stop_(f, r);
  else embd_framer_next_(f);
  return len0 - len;
}
