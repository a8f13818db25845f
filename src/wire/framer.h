/* The one chunked-frame machine under every stream reader: the EMBD stream decoder
 * (stream.c), the Codec session reader (codec.c) and the msgpack and protobuf readers
 * (codec_msgpack.c, codec_proto.c). Internal.
 *
 * The framer owns what every reader of frames-in-chunks needs and nothing of any format:
 * assembling a frame that spans chunks in one buffer (grown on demand, never beyond the
 * caller's maximum), handing a frame that lies wholly inside the chunk over in place (no
 * copy), uint64_t offsets and frame indices, the sticky error with the one
 * "frame N at byte M:" prefix (M: the frame's first byte), the callback's stop, what is
 * pending at finish, and the direct mode in which a frame's payload words go straight to
 * caller memory (converted, and with a running CRC when asked) as the bytes arrive.
 *
 * A format supplies embd_framer_ops: how big the frame is from its first bytes (`size`),
 * what a whole frame means (`frame`) and, optionally, whether a frame goes direct
 * (`direct`, `direct_end`). The feed loop is a static inline function so that each reader
 * gets it with its own ops folded in (no indirect call per frame: the Codec reader's
 * frames are often 9 bytes); everything cold is in framer.c.
 */
#ifndef EMBD_FRAMER_H
#define EMBD_FRAMER_H

#include "wire.h"

/* What ops->size returns. */
enum {
  EMBD_FRAMER_FAIL = -1, /* it called embd_framer_fail */
  EMBD_FRAMER_MORE = 0,  /* *need (> n): the bytes it must see before it can say more; the
                            frame is at least that long */
  EMBD_FRAMER_SIZE = 1   /* *need: the whole frame's size */
};

typedef struct embd_framer embd_framer;

typedef struct embd_framer_ops {
  /* The current frame's first n bytes (n >= 1, contiguous; n is at least the *need of the
   * previous MORE for this frame, and may run past the frame's end when they are the
   * chunk's). f->seen is the n of the previous call for this frame (0 on the first), so
   * that a format checks each header once: bytes below f->seen were shown before. */
  int (*size)(embd_framer *f, const uint8_t *p, size_t n, uint64_t *need);
  /* A whole frame of n bytes at p (in the chunk or the buffer: valid during the call).
   * EMBD_OK goes on; anything else stops the stream: when the format did not call
   * embd_framer_fail itself, it is the user callback's result, reported as such. */
  embd_result (*frame)(embd_framer *f, const uint8_t *p, size_t n);
  /* Optional. The frame's size is known (f->need) and only its first n bytes are at hand
   * (p, n < f->need): may call embd_framer_direct to receive the rest into caller memory,
   * returning the header bytes (<= n) that are not payload. */
  size_t (*direct)(embd_framer *f, const uint8_t *p, size_t n);
  /* The direct frame's last byte is in (f->dst filled, f->crc and f->tr final): like
   * `frame`. */
  embd_result (*direct_end)(embd_framer *f);
  /* Non-zero for a format with no length field, whose end a scanner finds byte by byte
   * (msgpack): `size` is then shown each byte of the frame once, where it lies (p, n: the
   * bytes after those shown before), and returns SIZE with *need = how many of them end
   * the frame, or MORE when all n belong to it. The framer copies exactly those. */
  int scans;
} embd_framer_ops;

struct embd_framer {
  uint8_t *buf; /* the frame being assembled */
  size_t cap, blen;
  uint64_t max;  /* the buffer never grows beyond this */
  uint64_t need; /* the current frame's size (known) or the bytes size() wants next */
  int known;
  size_t seen;   /* see ops->size */
  uint64_t pos;  /* bytes consumed */
  uint64_t index; /* frames delivered */
  uint64_t start; /* the current frame's first byte */
  int asked;     /* the format's per-frame flag (cleared for each frame): e.g. "the
                    destination callback was asked and said NULL" */
  embd_result status;
  embd_error err;
  /* direct mode */
  int direct;
  uint8_t *dst;
  size_t dlen, done; /* payload bytes in all, written so far */
  int swap;          /* the wire words' order is not the host's */
  void (*words)(uint8_t *d, const uint8_t *p, size_t n); /* n whole words, wire to host */
  int crc_on;
  uint32_t crc;      /* running CRC-32 of the payload when crc_on */
  uint8_t tr[4];     /* the trailer (trlen bytes) as it arrives */
  unsigned trlen, trn;
};

/* initial: what to allocate now (0: nothing until a frame spans chunks); max: the bound.
 * EMBD_ERR_OUT_OF_MEMORY when the initial buffer cannot be had. */
EMBD_INTERNAL embd_result embd_framer_init(embd_framer *f, size_t initial, uint64_t max);
EMBD_INTERNAL void embd_framer_free(embd_framer *f);
/* Sticky error at byte `at` of the stream, the message prefixed with the current frame's
 * index and first byte. Returns r. */
EMBD_INTERNAL embd_result embd_framer_fail(embd_framer *f, embd_result r, uint64_t at,
                                           const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same without the frame prefix (errors about the stream, not a frame). */
EMBD_INTERNAL embd_result embd_framer_fail_stream(embd_framer *f, embd_result r, uint64_t at,
                                                  const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A frame-relative error *fe (offset inside the frame) moved to the current frame. */
EMBD_INTERNAL embd_result embd_framer_rebase(embd_framer *f, const embd_error *fe);
/* From ops->direct: the payload's dlen bytes go to dst (4-byte aligned) as host words
 * (swap/words as embd_put_wire_words_), then trlen (0..4) trailer bytes to f->tr. */
EMBD_INTERNAL void embd_framer_direct(embd_framer *f, void *dst, size_t dlen, int swap,
                                      void (*words)(uint8_t *, const uint8_t *, size_t),
                                      int crc_on, unsigned trlen);
/* The status (and, when err is not NULL, the sticky error or a cleared one). */
EMBD_INTERNAL embd_result embd_framer_report(const embd_framer *f, embd_error *err);
/* Bytes of an unfinished frame received so far (0 between frames): for finish. */
static inline uint64_t embd_framer_pending(const embd_framer *f) {
  return f->blen || f->direct ? f->pos - f->start : 0;
}

/* The out-of-line halves of the feed loop. */
EMBD_INTERNAL int embd_framer_reserve_(embd_framer *f, uint64_t n);
EMBD_INTERNAL void embd_framer_stop_(embd_framer *f, embd_result r);
EMBD_INTERNAL size_t embd_framer_feed_direct_(embd_framer *f, const embd_framer_ops *ops,
                                              const uint8_t *p, size_t len);

static inline void embd_framer_next_(embd_framer *f) {
  f->index++;
  f->blen = 0;
  f->need = 0;
  f->known = 0;
  f->seen = 0;
  f->asked = 0;
  f->direct = 0;
}

/* A whole frame at p: the format's meaning, then the next frame. 0 when the stream stops. */
static inline __attribute__((always_inline)) int embd_framer_emit_(embd_framer *f,
                                                                  const embd_framer_ops *ops,
                                                                  const uint8_t *p, size_t n) {
  const embd_result r = ops->frame(f, p, n);
  if (r != EMBD_OK) {
    embd_framer_stop_(f, r);
    return 0;
  }
  embd_framer_next_(f);
  return 1;
}

/* Consumes len bytes at p (stops early only on an error, which is then sticky). */
static inline __attribute__((always_inline)) embd_result embd_framer_feed(
    embd_framer *f, const embd_framer_ops *ops, const uint8_t *p, size_t len) {
  while (f->status == EMBD_OK && len) {
    if (f->direct) {
      const size_t used = embd_framer_feed_direct_(f, ops, p, len);
      p += used, len -= used, f->pos += used;
      continue;
    }
    if (f->blen == 0) {
      /* A new frame, its first bytes in the chunk: in place if it is all there. */
      uint64_t need;
      f->start = f->pos;
      const int k = ops->size(f, p, len, &need);
      if (k < 0) break;
      f->seen = len;
      if (k == EMBD_FRAMER_SIZE && need <= len) {
        f->pos += need;
        if (!embd_framer_emit_(f, ops, p, (size_t)need)) break;
        p += need, len -= (size_t)need;
        continue;
      }
      f->need = need;
      f->known = k;
      if (k == EMBD_FRAMER_SIZE && ops->direct) {
        const size_t h = ops->direct(f, p, len);
        if (f->direct) {
          p += h, len -= h, f->pos += h;
          continue;
        }
      }
    }
    if (ops->scans) {
      /* The scanner goes on in the chunk: copies what it found to be the frame's. */
      uint64_t need = len;
      if (f->blen) {
        const int k = ops->size(f, p, len, &need);
        if (k < 0) break;
        f->known = k;
      }
      const size_t take = f->known ? (size_t)need : len;
      if (!embd_framer_reserve_(f, (uint64_t)f->blen + take)) break;
      embd_copy(f->buf + f->blen, p, take);
      f->blen += take, p += take, len -= take, f->pos += take;
      if (f->known && !embd_framer_emit_(f, ops, f->buf, f->blen)) break;
      continue;
    }
    /* Assemble: exactly the bytes the format asked for, never past the frame. */
    if (!embd_framer_reserve_(f, f->need)) break;
    const size_t take = f->need - f->blen < len ? (size_t)(f->need - f->blen) : len;
    embd_copy(f->buf + f->blen, p, take); /* up to a frame: not memcpy (copy_kernel.h) */
    f->blen += take, p += take, len -= take, f->pos += take;
    if (f->blen < f->need) continue;
    if (!f->known) {
      uint64_t need;
      const int k = ops->size(f, f->buf, f->blen, &need);
      if (k < 0) break;
      f->seen = f->blen;
      f->need = need;
      f->known = k;
      if (f->blen < need) {
        if (k == EMBD_FRAMER_SIZE && ops->direct) {
          const size_t h = ops->direct(f, f->buf, f->blen);
          if (f->direct) {
            /* The buffered bytes past the header are the payload's first. */
            const size_t rest = f->blen - h;
            f->blen = 0;
            if (rest) embd_framer_feed_direct_(f, ops, f->buf + h, rest);
          }
        }
        continue;
      }
    }
    if (!embd_framer_emit_(f, ops, f->buf, f->blen)) break;
  }
  return f->status;
}

#endif
