/* Lazy detokenization: token ids -> UTF-8 through a tokenizer map (embd/tokmap.h).
 *
 * Text tokens are valid UTF-8 (the loader checks) and are copied as they are. Byte-fallback
 * ids and the raw bytes of v2 byte_level / "<0xHH>" tokens go through an incremental UTF-8 assembler (the WHATWG/Unicode "maximal subpart"
 * decoder): a complete well-formed sequence is emitted, an ill-formed one becomes one
 * U+FFFD per maximal subpart, an incomplete one is held back (at most 3 bytes) until the
 * next byte-fallback id completes or breaks it, a non-byte token interrupts it (U+FFFD),
 * or the end of the feed (non-partial mode) or embd_detok_finish flushes it (U+FFFD).
 * An id the map does not know is EMBD_ERR_UNKNOWN_TOKEN, or with EMBD_DETOK_REPLACE_UNKNOWN
 * a non-byte token whose text is U+FFFD (the reference client's rendering).
 *
 * Every feed runs twice over its ids: once counting (and checking the ids), once writing,
 * each on a copy of the assembler state, so a feed that fails changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd/tokmap.h"
#include "internal.h"
#include "tokmap_internal.h"

typedef struct u8_state {
  unsigned char b[4];
  unsigned n;    /* bytes held (0..3) */
  unsigned need; /* length of the sequence they start */
} u8_state;

struct embd_detok {
  const embd_tokmap *map;
  unsigned flags;
  u8_state st;
};

/* Output: counts only when out is NULL. */
typedef struct sink {
  char *out;
  size_t pos;
} sink;

static void put(sink *s, const void *p, size_t n) {
  if (s->pos > SIZE_MAX - n) {
    s->pos = SIZE_MAX; /* saturates: never fits */
    return;
  }
  if (s->out && n) memcpy(s->out + s->pos, p, n);
  s->pos += n;
}

static void put_fffd(sink *s) { put(s, "\xEF\xBF\xBD", 3); }

static void flush(u8_state *st, sink *s) {
  if (st->n) put_fffd(s);
  st->n = 0;
}

static void feed_byte(u8_state *st, unsigned char c, sink *s) {
  for (;;) {
    if (st->n == 0) {
      unsigned need;
      if (c < 0x80) {
        put(s, &c, 1);
        return;
      }
      if (c >= 0xC2 && c <= 0xDF) need = 2;
      else if (c >= 0xE0 && c <= 0xEF) need = 3;
      else if (c >= 0xF0 && c <= 0xF4) need = 4;
      else { /* 80..C1 (a continuation or an overlong lead), F5..FF: never valid */
        put_fffd(s);
        return;
      }
      st->b[0] = c;
      st->n = 1;
      st->need = need;
      return;
    }
    unsigned char lo = 0x80, hi = 0xBF;
    if (st->n == 1) {
      switch (st->b[0]) {
        case 0xE0: lo = 0xA0; break; /* no overlongs */
        case 0xED: hi = 0x9F; break; /* no surrogates */
        case 0xF0: lo = 0x90; break; /* no overlongs */
        case 0xF4: hi = 0x8F; break; /* nothing above U+10FFFF */
        default: break;
      }
    }
    if (c >= lo && c <= hi) {
      st->b[st->n++] = c;
      if (st->n == st->need) {
        put(s, st->b, st->n);
        st->n = 0;
      }
      return;
    }
    /* The held bytes are a maximal subpart: one U+FFFD; c starts afresh. */
    put_fffd(s);
    st->n = 0;
  }
}

static embd_result run(const embd_detok *d, u8_state *st, const uint32_t *ids, size_t n, sink *s,
                       embd_error *err) {
  const embd_tokmap *m = d->map;
  const int skip_special = (d->flags & EMBD_DETOK_SKIP_SPECIAL) != 0;
  const int replace_unknown = (d->flags & EMBD_DETOK_REPLACE_UNKNOWN) != 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t id = ids[i];
    if (m->has_fallback && id >= m->fb_start && id <= m->fb_end) {
      feed_byte(st, (unsigned char)(id - m->fb_start), s);
      continue;
    }
    const embd_tokmap_tok *t = embd_tokmap_find(m, id);
    if (!t && replace_unknown) {
      /* Like any non-byte token: it ends a pending sequence (U+FFFD for that), then its own
       * U+FFFD. So the output is what the reference client's TextDecoder gives for the
       * bytes before it followed by "\uFFFD". */
      flush(st, s);
      put_fffd(s);
      continue;
    }
    if (!t) {
      if (id >= m->vocab_size)
        return embd_fail(err, EMBD_ERR_UNKNOWN_TOKEN, i,
                         "ids[%zu]: token id %u >= vocab_size %llu of map \"%.40s\"", i, id,
                         (unsigned long long)m->vocab_size, m->arena + m->id_off);
      return embd_fail(err, EMBD_ERR_UNKNOWN_TOKEN, i,
                       "ids[%zu]: token id %u is not in map \"%.40s\" (no token, special or "
                       "byte-fallback id)",
                       i, id, m->arena + m->id_off);
    }
    if (t->flags & EMBD_TOK_RAW) { /* v2 byte_level / <0xHH>: bytes, like byte-fallback ids */
      for (uint32_t k = 0; k < t->len; k++) feed_byte(st, (unsigned char)m->arena[t->off + k], s);
      continue;
    }
    /* A non-byte token ends any sequence the byte-fallback ids had started, rendered or
     * not (the output then never depends on SKIP_SPECIAL beyond the special's text). */
    flush(st, s);
    if (skip_special && (t->flags & EMBD_TOK_SPECIAL)) continue;
    put(s, m->arena + t->off, t->len);
  }
  return EMBD_OK;
}


embd_result embd_detok_create(const embd_tokmap *map, unsigned flags, embd_detok **out) {
  if (out) *out = NULL;
  if (!map || !out ||
      (flags & ~(EMBD_DETOK_SKIP_SPECIAL | EMBD_DETOK_PARTIAL | EMBD_DETOK_REPLACE_UNKNOWN)))
    return EMBD_ERR_INVALID_ARGUMENT;
  embd_detok *d = calloc(1, sizeof *d);
  if (!d) return EMBD_ERR_OUT_OF_MEMORY;
  d->map = map;
  d->flags = flags;
  *out = d;
  return EMBD_OK;
}

void embd_detok_destroy(embd_detok *d) { free(d); }

void embd_detok_reset(embd_detok *d) {
  if (d) d->st.n = 0;
}

size_t embd_detok_pending(const embd_detok *d) { return d ? d->st.n : 0; }

embd_result embd_detok_feed(embd_detok *d, const uint32_t *ids, size_t n, char *out, size_t cap,
                            size_t *written, embd_error *err) {
  if (written) *written = 0;
  if (!d || !written || (!ids && n) || (!out && cap))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     "NULL detokenizer or written, NULL ids with n %zu, or NULL out with cap %zu",
                     n, cap);
  const int partial = (d->flags & EMBD_DETOK_PARTIAL) != 0;
  u8_state st = d->st;
  sink s = {NULL, 0};
  embd_result r = run(d, &st, ids, n, &s, err);
  if (r) return r;
  if (!partial) flush(&st, &s);
  if (s.pos > cap) {
    *written = s.pos;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0,
                     "%zu ids produce %zu bytes, output capacity %zu: nothing consumed", n, s.pos,
                     cap);
  }
  st = d->st;
  sink w = {out, 0};
  (void)run(d, &st, ids, n, &w, NULL);
  if (!partial) flush(&st, &w);
  d->st = st;
  *written = w.pos;
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_detok_finish(embd_detok *d, char *out, size_t cap, size_t *written,
                              embd_error *err) {
  if (written) *written = 0;
  if (!d || !written || (!out && cap))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     "NULL detokenizer or written, or NULL out with cap %zu", cap);
  size_t need = d->st.n ? 3 : 0;
  if (need > cap) {
    *written = need;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0,
                     "an incomplete UTF-8 sequence of %u bytes flushes as U+FFFD (3 bytes), "
                     "output capacity %zu",
                     d->st.n, cap);
  }
  sink w = {out, 0};
  flush(&d->st, &w);
  *written = w.pos;
  embd_no_error(err);
  return EMBD_OK;
}

size_t embd_detok_bound(const embd_tokmap *map, size_t n) {
  if (!map) return 0;
  /* Per id: U+FFFD for an interrupted sequence plus the text (or a byte's own U+FFFD, or
   * a replaced unknown id's);
   * a completed sequence is at most 4 bytes. Plus one final U+FFFD. */
  size_t per = map->max_len > SIZE_MAX - 3 ? SIZE_MAX : map->max_len + 3;
  /* a raw (v2 byte_level) token of k bytes: at most one U+FFFD per byte, plus one for a
   * sequence it interrupts */
  if (map->max_raw_len) {
    size_t raw = map->max_raw_len > (SIZE_MAX - 3) / 3 ? SIZE_MAX : 3 * map->max_raw_len + 3;
    if (raw > per) per = raw;
  }
  if (per < 6) per = 6;
  if (n && per > (SIZE_MAX - 3) / n) return SIZE_MAX;
  return n * per + 3;
}
