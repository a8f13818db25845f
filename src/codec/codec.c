/* Codec session frames: encoder, one-shot decoder, forwarding, and the stream reader.
 * See include/embd/codec.h and docs/CODEC.md. */
#include "embd/codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framer.h"

#define CH EMBD_CODEC_HEADER_SIZE

static const char *const type_names[7] = {"HELLO", "READY",         "TOKENS", "EOS",
                                          "ERROR", "LATENT_HEADER", "LATENTS"};

const char *embd_codec_type_name(unsigned type) {
  return type < 7 ? type_names[type] : "unknown";
}

static int known(unsigned t) { return t <= EMBD_CODEC_LATENTS; }
/* A type's name for messages: "TOKENS", or "type 0x07" for the opaque newer types (the
 * spec lets a minor version add them; embd hands them over unread). */
#define TNAME(t, buf) \
  (known(t) ? type_names[t] : (snprintf(buf, sizeof buf, "type 0x%02x", (unsigned)(t)), buf))
static int is_text(unsigned t) {
  return t == EMBD_CODEC_HELLO || t == EMBD_CODEC_READY || t == EMBD_CODEC_ERROR;
}


/* ---- UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF) ---------- */

/* 0 if valid; else 1 + the offset of the first bad sequence, *why naming the problem. */
static size_t utf8_bad(const uint8_t *s, size_t n, const char **why) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      k = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      k = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      k = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      *why = c >= 0x80 && c <= 0xBF ? "unexpected continuation byte"
             : c == 0xC0 || c == 0xC1 ? "overlong encoding"
                                      : "byte above U+10FFFF's lead";
      return i + 1;
    }
    if (n - i - 1 < k) {
      /* Truncated at the end, unless a byte before the end is already wrong. */
      for (size_t j = 1; i + j < n; j++) {
        const uint8_t b = s[i + j];
        if (b < (j == 1 ? lo : 0x80) || b > (j == 1 ? hi : 0xBF)) goto bad;
      }
      *why = "truncated sequence";
      return i + 1;
    }
    if (s[i + 1] < lo || s[i + 1] > hi) goto bad;
    for (size_t j = 2; j <= k; j++)
      if ((s[i + j] & 0xC0) != 0x80) goto bad;
    i += k + 1;
    continue;
  bad:
    if (n - i > 1 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 1] < lo || s[i + 1] > hi))
      *why = c == 0xED ? "surrogate (U+D800-U+DFFF)" : c == 0xF4 ? "above U+10FFFF" : "overlong encoding";
    else
      *why = "truncated sequence";
    return i + 1;
  }
  return 0;
}

size_t embd_codec_utf8_check(const void *p, size_t len) {
  const char *why;
  if (!p) return 0;
  return utf8_bad((const uint8_t *)p, len, &why);
}

/* ---- frame checks shared by the one-shot decoder and the reader ---------------------- */

static size_t max_of(size_t m) {
  if (!m) return EMBD_CODEC_DEFAULT_MAX_PAYLOAD;
  return embd_above_u32(m) ? (size_t)UINT32_MAX : m;
}

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static embd_result ffail(embd_error *err, embd_result r, uint64_t off, uint32_t index,
                         uint64_t start, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  embd_vfail_frame(err, r, off, index, start, fmt, ap);
  va_end(ap);
  return r;
}

/* A type byte from 0x07 up is an error only with EMBD_CODEC_STRICT_TYPES. */
static embd_result check_type(uint8_t t, uint64_t flags, uint32_t index, uint64_t start,
                              embd_error *err) {
  if (known(t) || !(flags & EMBD_CODEC_STRICT_TYPES)) return EMBD_OK;
  return ffail(err, EMBD_ERR_CODEC_UNKNOWN_TYPE, start, index, start,
               "unknown frame type 0x%02x (known: 0x00-0x06)", t);
}

/* The 5 header bytes at h (type already checked): the length rules; *need = frame size. */
static embd_result check_header(const uint8_t *h, size_t max, uint32_t index, uint64_t start,
                                uint64_t *need, embd_error *err) {
  const uint32_t plen = embd_rd32be(h + 1);
  if (h[0] == EMBD_CODEC_TOKENS && plen % 4)
    return ffail(err, EMBD_ERR_CODEC_TOKENS_LENGTH, start + 1, index, start,
                 "TOKENS payload of %lu bytes is not a multiple of 4", (unsigned long)plen);
  if (h[0] == EMBD_CODEC_EOS && plen)
    return ffail(err, EMBD_ERR_CODEC_EOS_PAYLOAD, start + 1, index, start,
                 "EOS with a payload of %lu bytes (must be empty)", (unsigned long)plen);
  char nb[16];
  if (plen > max)
    return ffail(err, EMBD_ERR_CODEC_FRAME_TOO_LARGE, start + 1, index, start,
                 "%s payload of %lu bytes is above the maximum of %zu", TNAME(h[0], nb),
                 (unsigned long)plen, max);
  *need = (uint64_t)CH + plen;
  return EMBD_OK;
}

/* A complete frame's payload rules (UTF-8). */
static embd_result check_payload(const uint8_t *p, size_t n, uint32_t index, uint64_t start,
                                 embd_error *err) {
  if (!is_text(p[0])) return EMBD_OK;
  const char *why = "";
  const size_t bad = utf8_bad(p + CH, n - CH, &why);
  if (!bad) return EMBD_OK;
  return ffail(err, EMBD_ERR_CODEC_UTF8, start + CH + bad - 1, index, start,
               "%s payload: invalid UTF-8 at payload byte %zu (0x%02x: %s)", type_names[p[0]],
               bad - 1, p[CH + bad - 1], why);
}

/* The input ends `got` bytes into the frame starting at `start` (whose header, when got >= 5,
 * is at h). */
static embd_result truncated(const uint8_t *h, uint64_t got, uint32_t index, uint64_t start,
                             embd_error *err) {
  if (got < CH)
    return ffail(err, EMBD_ERR_CODEC_TRUNCATED, start + got, index, start,
                 "truncated: the input ends after %llu of the 5 header bytes",
                 (unsigned long long)got);
  char nb[16];
  return ffail(err, EMBD_ERR_CODEC_TRUNCATED, start + got, index, start,
               "truncated: %s frame of %llu bytes, the input ends after %llu", TNAME(h[0], nb),
               (unsigned long long)(CH + (uint64_t)embd_rd32be(h + 1)), (unsigned long long)got);
}


/* ---- one-shot ----------------------------------------------------------------------- */

static embd_result decode_at(const uint8_t *b, size_t len, size_t pos, uint32_t index,
                             size_t max, uint64_t flags, embd_codec_frame *f, size_t *consumed,
                             embd_error *err) {
  const uint8_t *p = b + pos;
  const size_t avail = len - pos;
  embd_result r = check_type(p[0], flags, index, pos, err);
  if (r != EMBD_OK) return r;
  if (avail < CH) return truncated(p, avail, index, pos, err);
  uint64_t need = 0; /* set by check_header on EMBD_OK (gcc -O3 cannot always see it) */
  if ((r = check_header(p, max, index, pos, &need, err)) != EMBD_OK) return r;
  if (need > avail) return truncated(p, avail, index, pos, err);
  if ((r = check_payload(p, (size_t)need, index, pos, err)) != EMBD_OK) return r;
  f->type = p[0];
  f->index = index;
  f->offset = pos;
  f->payload = p + CH;
  f->payload_len = (size_t)need - CH;
  f->ids = NULL;
  *consumed = (size_t)need;
  embd_no_error(err);
  return EMBD_OK;
}

/* NULL or options with zero reserved_ room and known flags only (a flag of a newer release
 * is refused rather than ignored: "Growing the ABI"). */
static embd_result check_opts(const embd_codec_decode_options *opt, uint64_t at, embd_error *err) {
  if (opt && !EMBD_RESERVED_OK(opt))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, at, "options: reserved_ fields not zero");
  if (opt && (opt->flags & ~(uint64_t)EMBD_CODEC_KNOWN_FLAGS))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, at, "options: unknown flags 0x%llx",
                     (unsigned long long)(opt->flags & ~(uint64_t)EMBD_CODEC_KNOWN_FLAGS));
  return EMBD_OK;
}

embd_result embd_codec_decode_frame(const void *buf, size_t len,
                                    const embd_codec_decode_options *opt, embd_codec_frame *frame,
                                    size_t *consumed, embd_error *err) {
  if ((!buf && len) || !frame || !consumed)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer, frame or consumed");
  embd_result r = check_opts(opt, 0, err);
  if (r != EMBD_OK) return r;
  if (!len) return truncated(NULL, 0, 0, 0, err);
  return decode_at((const uint8_t *)buf, len, 0, 0, max_of(opt ? opt->max_payload : 0),
                   opt ? opt->flags : 0, frame, consumed, err);
}

embd_result embd_codec_next(const void *buf, size_t len, size_t *pos, uint32_t *index,
                            const embd_codec_decode_options *opt, embd_codec_frame *frame,
                            embd_error *err) {
  if (!buf || !pos || !index || !frame || *pos >= len)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, pos ? *pos : 0,
                     "NULL argument, or no bytes left at *pos");
  embd_result r = check_opts(opt, *pos, err);
  if (r != EMBD_OK) return r;
  size_t used = 0;
  r = decode_at((const uint8_t *)buf, len, *pos, *index, max_of(opt ? opt->max_payload : 0),
                opt ? opt->flags : 0, frame, &used, err);
  if (r != EMBD_OK) return r;
  *pos += used;
  ++*index;
  return EMBD_OK;
}

embd_result embd_codec_tokens(const embd_codec_frame *f, uint32_t *ids, size_t cap, size_t *n) {
  if (!f || !n || f->type != EMBD_CODEC_TOKENS || f->payload_len % 4) return EMBD_ERR_INVALID_ARGUMENT;
  const size_t k = f->payload_len / 4;
  *n = k;
  if (!k) return EMBD_OK;
  if (!ids) return EMBD_ERR_INVALID_ARGUMENT;
  if (cap < k) return EMBD_ERR_OUTPUT_TOO_SMALL;
  if (f->payload) {
    embd_u32_from_be(ids, f->payload, k);
  } else if (f->ids) {
    if (ids != f->ids) memmove(ids, f->ids, k * 4);
  } else {
    return EMBD_ERR_INVALID_ARGUMENT;
  }
  return EMBD_OK;
}

/* ---- encoding ----------------------------------------------------------------------- */

embd_result embd_codec_frame_size(unsigned type, size_t payload_len, size_t *size) {
  if (!size || !known(type) || embd_above_u32(payload_len) || payload_len > SIZE_MAX - CH)
    return EMBD_ERR_INVALID_ARGUMENT;
  *size = CH + payload_len;
  return EMBD_OK;
}

embd_result embd_codec_encode_frame(unsigned type, const void *payload, size_t len, void *out,
                                    size_t cap, size_t *written) {
  size_t size;
  if (!written || (!payload && len)) return EMBD_ERR_INVALID_ARGUMENT;
  if (type == EMBD_CODEC_TOKENS && len % 4) return EMBD_ERR_CODEC_TOKENS_LENGTH;
  if (type == EMBD_CODEC_EOS && len) return EMBD_ERR_CODEC_EOS_PAYLOAD;
  embd_result r = embd_codec_frame_size(type, len, &size);
  if (r != EMBD_OK) return known(type) ? r : EMBD_ERR_CODEC_UNKNOWN_TYPE;
  if (is_text(type) && embd_codec_utf8_check(payload, len)) return EMBD_ERR_CODEC_UTF8;
  *written = size;
  if (cap < size) return EMBD_ERR_OUTPUT_TOO_SMALL;
  if (!out) return EMBD_ERR_INVALID_ARGUMENT;
  uint8_t *o = (uint8_t *)out;
  o[0] = (uint8_t)type;
  embd_wr32be(o + 1, (uint32_t)len);
  embd_copy(o + CH, payload, len); /* not memcpy for long payloads: copy_kernel.h */
  return EMBD_OK;
}

embd_result embd_codec_encode_tokens(const uint32_t *ids, size_t n, void *out, size_t cap,
                                     size_t *written) {
  if (!written || (!ids && n) || n > 0x3FFFFFFFu) return EMBD_ERR_INVALID_ARGUMENT;
  const size_t size = CH + 4 * n;
  *written = size;
  if (cap < size) return EMBD_ERR_OUTPUT_TOO_SMALL;
  if (!out) return EMBD_ERR_INVALID_ARGUMENT;
  uint8_t *o = (uint8_t *)out;
  o[0] = EMBD_CODEC_TOKENS;
  embd_wr32be(o + 1, (uint32_t)(4 * n));
  embd_u32_to_be(o + CH, ids, n);
  return EMBD_OK;
}

embd_result embd_codec_tokens_frames_size(size_t n, size_t per_frame, size_t *size) {
  if (!size || !per_frame || per_frame > 0x3FFFFFFFu) return EMBD_ERR_INVALID_ARGUMENT;
  const size_t frames = n / per_frame + (n % per_frame != 0);
  if (n > (SIZE_MAX - CH * frames) / 4) return EMBD_ERR_INVALID_ARGUMENT;
  *size = 4 * n + CH * frames;
  return EMBD_OK;
}

embd_result embd_codec_encode_tokens_frames(const uint32_t *ids, size_t n, size_t per_frame,
                                            void *out, size_t cap, size_t *written) {
  size_t size;
  if (!written || (!ids && n)) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = embd_codec_tokens_frames_size(n, per_frame, &size);
  if (r != EMBD_OK) return r;
  *written = size;
  if (cap < size) return EMBD_ERR_OUTPUT_TOO_SMALL;
  if (!out && size) return EMBD_ERR_INVALID_ARGUMENT;
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i += per_frame) {
    const size_t k = n - i < per_frame ? n - i : per_frame;
    size_t w;
    embd_codec_encode_tokens(ids + i, k, o, CH + 4 * k, &w);
    o += w;
  }
  return EMBD_OK;
}

embd_result embd_codec_forward(const void *in, size_t len, const embd_codec_decode_options *opt,
                               unsigned types, void *out, size_t cap, size_t *written,
                               size_t *frames, embd_error *err) {
  if (!written || (!in && len) || (!out && cap))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL input, output or written");
  if (!types) types = 1u << EMBD_CODEC_TOKENS | 1u << EMBD_CODEC_EOS;
  const uint8_t *b = (const uint8_t *)in;
  uint8_t *o = (uint8_t *)out;
  size_t pos = 0, w = 0, nf = 0;
  uint32_t index = 0;
  embd_result r = EMBD_OK, short_out = EMBD_OK;
  *written = 0;
  if (frames) *frames = 0;
  while (pos < len) {
    embd_codec_frame f;
    const size_t at = pos;
    if ((r = embd_codec_next(b, len, &pos, &index, opt, &f, err)) != EMBD_OK) break;
    /* Only 32 type bits: newer types from 0x20 up cannot be selected. */
    if (f.type >= 32 || !(types >> f.type & 1u)) continue;
    const size_t n = pos - at;
    if (short_out == EMBD_OK && cap - w >= n) {
      embd_copy(o + w, b + at, n);
      nf++;
    } else {
      short_out = EMBD_ERR_OUTPUT_TOO_SMALL;
    }
    w += n;
  }
  if (r == EMBD_OK && short_out != EMBD_OK) {
    *written = w;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0,
                     "forwarding needs %zu bytes of output, the capacity is %zu", w, cap);
  }
  if (r == EMBD_OK) embd_no_error(err);
  *written = short_out == EMBD_OK ? w : 0;
  if (frames) *frames = nf;
  return r;
}

/* ---- the stream reader: the Codec format on the framer (framer.h) --------------------- */

struct embd_codec_reader {
  embd_framer f; /* first: the ops get the reader back from their embd_framer * */
  embd_codec_reader_options o;
  size_t max;         /* max payload */
  uint8_t hdr[CH];    /* the direct frame's header, for a truncation message */
};

embd_result embd_codec_reader_create(const embd_codec_reader_options *opt, embd_codec_reader **out) {
  if (!out) return EMBD_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!opt || (!opt->on_frame && !opt->tokens_dest) || embd_above_u32(opt->max_payload) ||
      !EMBD_RESERVED_OK(opt) || (opt->flags & ~(uint64_t)EMBD_CODEC_KNOWN_FLAGS))
    return EMBD_ERR_INVALID_ARGUMENT;
  embd_codec_reader *r = (embd_codec_reader *)calloc(1, sizeof *r);
  if (!r) return EMBD_ERR_OUT_OF_MEMORY;
  r->o = *opt;
  r->max = max_of(opt->max_payload);
  const uint64_t most = (uint64_t)r->max + CH;
  if (embd_framer_init(&r->f, most < 4096 ? (size_t)most : 4096, most) != EMBD_OK) {
    free(r);
    return EMBD_ERR_OUT_OF_MEMORY;
  }
  *out = r;
  return EMBD_OK;
}

void embd_codec_reader_destroy(embd_codec_reader *r) {
  if (!r) return;
  embd_framer_free(&r->f);
  free(r);
}

uint32_t embd_codec_reader_frames(const embd_codec_reader *r) { return r ? (uint32_t)r->f.index : 0; }
uint64_t embd_codec_reader_offset(const embd_codec_reader *r) { return r ? r->f.pos : 0; }

/* The type byte as soon as it is in, the length rules once the 5 header bytes are. */
static inline __attribute__((always_inline)) int cr_size(embd_framer *f, const uint8_t *p, size_t n, uint64_t *need) {
  embd_codec_reader *r = (embd_codec_reader *)f;
  if (!f->seen && check_type(p[0], r->o.flags, (uint32_t)f->index, f->start, &f->err) != EMBD_OK)
    return f->status = f->err.result, EMBD_FRAMER_FAIL;
  if (n < CH) {
    *need = CH;
    return EMBD_FRAMER_MORE;
  }
  const uint32_t plen = embd_rd32be(p + 1);
  if (p[0] == EMBD_CODEC_TOKENS && !(plen & 3) && plen <= r->max) {
    /* The common frame, inline (one id is a 9-byte frame); check_header says the rest. */
    *need = CH + (uint64_t)plen;
    return EMBD_FRAMER_SIZE;
  }
  if (check_header(p, r->max, (uint32_t)f->index, f->start, need, &f->err) != EMBD_OK)
    return f->status = f->err.result, EMBD_FRAMER_FAIL;
  return EMBD_FRAMER_SIZE;
}

static embd_result cr_callback(embd_codec_reader *r, embd_codec_frame *fr) {
  fr->index = (uint32_t)r->f.index;
  fr->offset = r->f.start;
  return r->o.on_frame ? r->o.on_frame(r->o.user, fr) : EMBD_OK;
}

/* Big-endian ids to host order: short frames inline (most TOKENS frames carry one id),
 * long ones through the dispatched kernel. */
static inline void ids_from_be(uint32_t *d, const uint8_t *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n < 16) {
    embd_bswap32_words((uint8_t *)d, p, n);
    return;
  }
#endif
  embd_u32_from_be(d, p, n);
}

/* A whole frame (header checked by cr_size): the UTF-8 rule, tokens_dest, the callback. */
static inline __attribute__((always_inline)) embd_result cr_frame(embd_framer *f, const uint8_t *p, size_t n) {
  embd_codec_reader *r = (embd_codec_reader *)f;
  if (is_text(p[0]) && check_payload(p, n, (uint32_t)f->index, f->start, &f->err) != EMBD_OK)
    return f->status = f->err.result;
  embd_codec_frame fr;
  fr.type = p[0];
  fr.payload = p + CH;
  fr.payload_len = n - CH;
  fr.ids = NULL;
  if (p[0] == EMBD_CODEC_TOKENS && r->o.tokens_dest && !f->asked) {
    uint32_t *d = r->o.tokens_dest(r->o.user, (uint32_t)f->index, fr.payload_len / 4);
    if (d) {
      ids_from_be(d, fr.payload, fr.payload_len / 4);
      fr.ids = d;
    }
  }
  return cr_callback(r, &fr);
}

static void u32_words(uint8_t *d, const uint8_t *p, size_t n) {
  embd_u32_from_be((uint32_t *)(void *)d, p, n);
}

/* A TOKENS frame with a payload, not all at hand: asks tokens_dest for its place. */
static size_t cr_direct(embd_framer *f, const uint8_t *p, size_t n) {
  embd_codec_reader *r = (embd_codec_reader *)f;
  (void)n;
  if (p[0] != EMBD_CODEC_TOKENS || !r->o.tokens_dest || f->asked) return 0;
  const size_t plen = embd_rd32be(p + 1);
  uint32_t *d = r->o.tokens_dest(r->o.user, (uint32_t)f->index, plen / 4);
  f->asked = 1;
  if (!d) return 0;
  memcpy(r->hdr, p, CH);
  embd_framer_direct(f, d, plen, embd_host_le_(), u32_words, 0, 0);
  return CH;
}

static embd_result cr_direct_end(embd_framer *f) {
  embd_codec_frame fr;
  fr.type = EMBD_CODEC_TOKENS;
  fr.payload = NULL;
  fr.payload_len = f->dlen;
  fr.ids = (const uint32_t *)(const void *)f->dst;
  return cr_callback((embd_codec_reader *)f, &fr);
}

static const embd_framer_ops cr_ops = {cr_size, cr_frame, cr_direct, cr_direct_end, 0};

embd_result embd_codec_reader_feed(embd_codec_reader *r, const void *data, size_t len,
                                   embd_error *err) {
  if (!r || (!data && len))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader or data");
  embd_framer_feed(&r->f, &cr_ops, (const uint8_t *)data, len);
  return embd_framer_report(&r->f, err);
}

embd_result embd_codec_reader_finish(embd_codec_reader *r, embd_error *err) {
  if (!r) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader");
  embd_framer *f = &r->f;
  const uint64_t got = embd_framer_pending(f);
  if (f->status == EMBD_OK && got) {
    truncated(f->direct ? r->hdr : f->buf, got, (uint32_t)f->index, f->start, &f->err);
    f->status = f->err.result;
  }
  return embd_framer_report(f, err);
}

/* ---- how many bytes a frame needs ------------------------------------------------------ */

embd_result embd_codec_frame_need(const void *buf, size_t len, const embd_codec_decode_options *opt,
                                  uint64_t *need, embd_error *err) {
  if (!need || (!buf && len))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer or need");
  const uint8_t *p = (const uint8_t *)buf;
  *need = CH;
  if (len) {
    embd_result r = check_opts(opt, 0, err);
    if (r == EMBD_OK) r = check_type(p[0], opt ? opt->flags : 0, 0, 0, err);
    if (r == EMBD_OK && len >= CH) r = check_header(p, max_of(opt ? opt->max_payload : 0), 0, 0, need, err);
    if (r != EMBD_OK) return r;
  }
  embd_no_error(err);
  return EMBD_OK;
}
