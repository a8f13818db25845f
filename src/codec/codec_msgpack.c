/* msgpack mode of the engines' Codec streams (embd/codec_stream.h): msgpack maps back to
 * back, decoded by embd itself (no msgpack-c: the same code builds natively and for
 * WebAssembly, where there is no msgpack-c to link).
 *
 * Two passes per frame. A byte-driven scanner (below) runs over the bytes as they arrive:
 * it finds where the frame ends, checks that the frame is a map, that it is well formed
 * (no byte 0xc1), that no container count exceeds the bytes that could still follow within
 * max_frame_bytes (every element takes at least one byte), that strings, binaries and exts
 * fit there too, and that nesting stays within 32 levels (its stack); it keeps no data, only
 * counts. When the frame's last byte is in, mp_frame walks exactly those bytes, now known
 * to be one valid map (mp_len skips a value without any check), and checks the frame's
 * shape. Nothing is allocated per container: a 5-byte "array of 2^32-1" costs nothing
 * before the scanner has bounded it.
 *
 * Before both, a frame whose bytes are all at hand and which has the common shape (the
 * keys our encoder and the engines write, of the right types) is read in one direct pass
 * (mp_fast), which also finds its end. It accepts only frames the two passes accept, with
 * the same values; any other frame, and every error, goes through them (the fuzz target
 * compares the two, embd_msgpack_fast_off_).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec_stream.h"
#include "delta.h"
#include "framer.h"

#define MP_ERR EMBD_ERR_MSGPACK
/* The scanner's stack. 32 is what msgpack-c allowed (MSGPACK_EMBED_STACK_SIZE) when it
 * decoded these frames; kept so that the same frames are accepted. */
#define MP_MAX_DEPTH 32

/* ---- the scanner ------------------------------------------------------------------------ */

typedef struct mp_scan {
  uint64_t left[MP_MAX_DEPTH]; /* elements still to come in each open container */
  unsigned depth;
  uint8_t hdr[9]; /* type byte + up to 8 bytes */
  unsigned hdr_have, hdr_need;
  uint64_t skip;  /* payload bytes still to skip */
  uint64_t bytes; /* bytes of this object so far */
  uint64_t limit;
  int need_map; /* the object must be a map */
  unsigned back; /* on an error: how far before *used (possibly in earlier chunks) it is */
  char why[112];
} mp_scan;

static void mp_scan_init(mp_scan *s, uint64_t limit, int need_map) {
  s->depth = 0;
  s->hdr_have = s->hdr_need = 0;
  s->skip = 0;
  s->bytes = 0;
  s->limit = limit;
  s->need_map = need_map;
  s->back = 0;
  s->why[0] = 0;
}

static const char *mp_byte_type(uint8_t b) {
  if (b <= 0x7f || b >= 0xe0) return "an integer";
  if (b <= 0x8f || b == 0xde || b == 0xdf) return "a map";
  if (b <= 0x9f || b == 0xdc || b == 0xdd) return "an array";
  if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) return "a string";
  switch (b) {
    case 0xc0: return "nil";
    case 0xc1: return "the never-used byte 0xc1";
    case 0xc2:
    case 0xc3: return "a bool";
    case 0xc4:
    case 0xc5:
    case 0xc6: return "a binary";
    case 0xca:
    case 0xcb: return "a float";
    default: break;
  }
  if (b >= 0xcc && b <= 0xd3) return "an integer";
  return "an ext";
}

/* Bytes after the type byte that belong to the header (lengths, counts, scalar values). */
static unsigned mp_extra(uint8_t b) {
  static const uint8_t t[32] = {
      /* c0 */ 0, 0, 0, 0, 1, 2, 4, 2, 3, 5, 4, 8, 1, 2, 4, 8,
      /* d0 */ 1, 2, 4, 8, 1, 1, 1, 1, 1, 1, 2, 4, 2, 4, 2, 4};
  if (b < 0xc0 || b >= 0xe0) return 0;
  return t[b - 0xc0];
}

static uint64_t mp_be(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

/* An element is complete: close every container it completes. 1: the object is done. */
static int mp_complete(mp_scan *s) {
  while (s->depth) {
    if (--s->left[s->depth - 1]) return 0;
    s->depth--;
  }
  return 1;
}

/* A header's meaning (h: its type byte and the bytes mp_extra counts): 1 for a container
 * with *count elements (a map's keys and values both counted), 0 for anything else, whose
 * payload after the header is *skip bytes. */
static int mp_hdr_info(const uint8_t *h, uint64_t *count, uint64_t *skip) {
  const uint8_t b = h[0];
  *count = *skip = 0;
  if (b >= 0x80 && b <= 0x8f) return *count = 2u * (b & 15u), 1;
  if (b >= 0x90 && b <= 0x9f) return *count = b & 15u, 1;
  if (b == 0xdc) return *count = mp_be(h + 1, 2), 1;
  if (b == 0xdd) return *count = mp_be(h + 1, 4), 1;
  if (b == 0xde) return *count = 2 * mp_be(h + 1, 2), 1;
  if (b == 0xdf) return *count = 2 * mp_be(h + 1, 4), 1;
  if (b >= 0xa0 && b <= 0xbf) *skip = b & 31u;
  else if (b == 0xc4 || b == 0xd9 || b == 0xc7) *skip = h[1];
  else if (b == 0xc5 || b == 0xda || b == 0xc8) *skip = mp_be(h + 1, 2);
  else if (b == 0xc6 || b == 0xdb || b == 0xc9) *skip = mp_be(h + 1, 4);
  else if (b >= 0xd4 && b <= 0xd8) *skip = 1u << (b - 0xd4);
  return 0;
}

/* Header complete: what follows. -1 error (why set), 1 object done, 0 more. */
static int mp_header(mp_scan *s) {
  const uint8_t b = s->hdr[0];
  uint64_t count, skip;
  const int container = mp_hdr_info(s->hdr, &count, &skip);
  const uint64_t room = s->limit - s->bytes;
  if (skip > room || count > room) {
    const int map = (b >= 0x80 && b <= 0x8f) || b >= 0xde;
    snprintf(s->why, sizeof s->why, "%s of %" PRIu64 " %s does not fit in max_frame_bytes (%" PRIu64 ")",
             mp_byte_type(b), container ? (map ? count / 2 : count) : skip,
             container ? (map ? "entries" : "elements") : "bytes", s->limit);
    return -1;
  }
  if (container) {
    /* An empty container counts too (msgpack-c, which decoded these frames before, refused
     * one opened at this depth): the same frames pass as then. */
    if (s->depth == MP_MAX_DEPTH) {
      snprintf(s->why, sizeof s->why, "containers nested deeper than %d", MP_MAX_DEPTH);
      return -1;
    }
    if (count) {
      s->left[s->depth++] = count;
      return 0;
    }
  }
  s->skip = skip;
  if (skip) return 0;
  return mp_complete(s);
}

/* Runs over p[0..n): 1 when the object ends (*used: its last byte + 1), 0 when every byte
 * was taken and more are needed (*used = n), -1 on an error (*used: the bad byte). */
static int mp_scan_run(mp_scan *s, const uint8_t *p, size_t n, size_t *used) {
  size_t i = 0;
  while (i < n) {
    if (s->skip) {
      size_t take = s->skip < (uint64_t)(n - i) ? (size_t)s->skip : n - i;
      i += take;
      s->skip -= take;
      s->bytes += take;
      if (!s->skip && mp_complete(s)) {
        *used = i;
        return 1;
      }
      continue;
    }
    if (s->bytes >= s->limit) {
      snprintf(s->why, sizeof s->why, "frame larger than max_frame_bytes (%" PRIu64 ")", s->limit);
      *used = i;
      return -1;
    }
    const uint8_t b = p[i];
    if (s->hdr_need == 0) {
      if (s->need_map && s->bytes == 0 && !((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf)) {
        snprintf(s->why, sizeof s->why, "a frame is a map, this is %s (byte 0x%02x)", mp_byte_type(b), b);
        *used = i;
        return -1;
      }
      if (b == 0xc1) {
        snprintf(s->why, sizeof s->why, "byte 0xc1 is never used in msgpack");
        *used = i;
        return -1;
      }
      s->hdr[0] = b;
      s->hdr_have = 1;
      s->hdr_need = 1 + mp_extra(b);
      /* The rest of the header at once when it is here and within the limit: what the
       * byte-by-byte steps would do (ids are mostly 3- and 5-byte headers). */
      const unsigned rest = s->hdr_need - 1;
      if (rest && rest < n - i && s->bytes + 1 + rest <= s->limit) {
        memcpy(s->hdr + 1, p + i + 1, rest);
        s->hdr_have += rest;
        i += rest;
        s->bytes += rest;
      }
    } else {
      s->hdr[s->hdr_have++] = b;
    }
    i++;
    s->bytes++;
    if (s->hdr_have == s->hdr_need) {
      s->hdr_need = 0;
      int h = mp_header(s);
      if (h < 0) {
        /* The error is at the header's first byte, which may have come in an earlier chunk:
         * reported as *used - back (never a size_t going below 0, which on a 32-bit host
         * would not wrap back in the 64-bit offset). */
        *used = i;
        s->back = s->hdr_have;
        return -1;
      }
      if (h > 0) {
        *used = i;
        return 1;
      }
    }
  }
  *used = n;
  return 0;
}

/* The length of the one complete msgpack value at p (within n bytes), 0 if none. */
static size_t mp_skip(const uint8_t *p, size_t n) {
  mp_scan s;
  size_t used;
  mp_scan_init(&s, n, 0);
  return mp_scan_run(&s, p, n, &used) == 1 ? used : 0;
}

/* ---- the reader --------------------------------------------------------------------------- */

/* Test hook: non-zero turns mp_fast off (every frame through the scanner and mp_frame), so that tests/test_codec_modes.c can compare the two paths. 0 in
 * normal use. Not thread-safe to set. */
EMBD_INTERNAL extern int embd_msgpack_fast_off_;
int embd_msgpack_fast_off_ = 0;

struct embd_codec_msgpack_reader {
  embd_framer f; /* first: the ops get the reader back from their embd_framer * */
  embd_codec_stream_options opt;
  uint32_t *ids;
  size_t ids_cap;
  mp_scan scan; /* the current frame's, over its bytes as they arrive */
  /* mp_fast's result for the frame mp_need just sized (fast = its length), taken by
   * mp_whole: the ids are in ids, finish_reason an offset in the frame (fr_at) */
  size_t fast, n_ids, fr_at, fr_len;
  int done, has_fr;
};

/* Every error names the byte at fault (at) and, in the prefix, the frame's first byte. */
#define mp_stick(r, res, at, ...) embd_framer_fail(&(r)->f, res, at, __VA_ARGS__)

/* ---- a frame the scanner has checked (one valid map, every count bounded) ------------------ */

/* The length of the value at p, which the scanner has checked (so no bound is needed):
 * headers and payloads are stepped over, containers add their elements to those still due. */
static size_t mp_len(const uint8_t *p) {
  size_t o = 0;
  uint64_t due = 1;
  while (due) {
    uint64_t count, skip;
    const uint8_t b = p[o];
    due--;
    if (b < 0x80 || b >= 0xe0) { /* fixints first: most of an ids array */
      o++;
      continue;
    }
    mp_hdr_info(p + o, &count, &skip);
    o += 1 + mp_extra(p[o]) + (size_t)skip;
    due += count;
  }
  return o;
}

/* The value at q is an integer >= 0 (of any width, signed or not: msgpack-c, which decoded
 * these frames before, read a non-negative int8..int64 as an unsigned integer too): its
 * length and *v; 0 for anything else. */
static size_t mp_uint_at(const uint8_t *q, uint64_t *v) {
  const uint8_t b = q[0];
  if (b < 0x80) return *v = b, 1;
  if (b >= 0xcc && b <= 0xcf) {
    const unsigned w = 1u << (b - 0xcc);
    return *v = mp_be(q + 1, w), 1 + w;
  }
  if (b >= 0xd0 && b <= 0xd3) {
    const unsigned w = 1u << (b - 0xd0);
    const uint64_t u = mp_be(q + 1, w);
    if (u >> (8 * w - 1) & 1) return 0; /* the sign bit: negative */
    return *v = u, 1 + w;
  }
  return 0;
}

/* What the value at q is, for messages ("an unsigned integer", "a string", ...). */
static const char *mp_val_type(const uint8_t *q) {
  uint64_t v;
  if (mp_uint_at(q, &v)) return "an unsigned integer";
  if (q[0] >= 0xe0 || (q[0] >= 0xd0 && q[0] <= 0xd3)) return "a negative integer";
  return mp_byte_type(q[0]);
}

/* The string at q (a checked value): 1 and its bytes (*s, *len), 0 if it is not a string. */
static int mp_str_at(const uint8_t *q, const uint8_t **s, size_t *len) {
  const uint8_t b = q[0];
  unsigned w;
  if (b >= 0xa0 && b <= 0xbf) w = 0, *len = b & 31u;
  else if (b >= 0xd9 && b <= 0xdb) w = 1u << (b - 0xd9), *len = (size_t)mp_be(q + 1, w);
  else return 0;
  *s = q + 1 + w;
  return 1;
}

/* An array's header at q: 1 and its element count, the first element at q + *hdr. */
static int mp_array_at(const uint8_t *q, uint64_t *count, size_t *hdr) {
  const uint8_t b = q[0];
  if ((b >= 0x90 && b <= 0x9f) || b == 0xdc || b == 0xdd) {
    uint64_t skip;
    mp_hdr_info(q, count, &skip);
    *hdr = 1 + mp_extra(b);
    return 1;
  }
  return 0;
}

/* Room for nid ids in r->ids (nid <= max_ids). 0: out of memory. */
static int mp_ids_room(embd_codec_msgpack_reader *r, size_t nid) {
  if (nid <= r->ids_cap) return 1;
  size_t cap = r->ids_cap ? r->ids_cap : 64;
  while (cap < nid) cap *= 2;
  if (cap > r->opt.max_ids) cap = r->opt.max_ids;
  uint32_t *ni = realloc(r->ids, cap * sizeof(uint32_t));
  if (!ni) return 0;
  r->ids = ni;
  r->ids_cap = cap;
  return 1;
}

/* An unsigned integer at *q (< end): 1 and *v, *q past it; 0 for anything else. */
static inline int mp_fast_uint(const uint8_t **q, const uint8_t *end, uint64_t *v) {
  const uint8_t *c = *q;
  const uint8_t b = *c;
  if (b < 0x80) {
    *v = b;
    *q = c + 1;
    return 1;
  }
  if (b < 0xcc || b > 0xcf) return 0;
  const unsigned w = 1u << (b - 0xcc); /* 1, 2, 4, 8 */
  if ((size_t)(end - c) <= w) return 0;
  *v = mp_be(c + 1, w);
  *q = c + 1 + w;
  return 1;
}

/* The common frame, parsed directly from its bytes (p: the frame's first, n of them at
 * hand, possibly more than the frame): a map with string keys that are all known (ids,
 * done, finish_reason; msgpack-delta: base_id, ids_delta) and of the right types, every
 * id in range, the frame within max_frame_bytes. Returns its length, the values in r;
 * 0 for any other frame, which the scanner and mp_frame then decode (and whose errors
 * they report): this accepts no frame that they reject and decodes the same values,
 * skipping the byte-by-byte scan and the second walk. */
static size_t mp_fast(embd_codec_msgpack_reader *r, const uint8_t *p, size_t n) {
  if (embd_msgpack_fast_off_) return 0;
  const uint8_t *q = p, *const end = p + (n < r->opt.max_frame_bytes ? n : r->opt.max_frame_bytes);
  const int delta = (r->opt.flags & EMBD_CODEC_STREAM_DELTA) != 0;
  if (q == end) return 0;
  uint64_t nkv;
  const uint8_t b0 = *q;
  if (b0 >= 0x80 && b0 <= 0x8f) {
    nkv = b0 & 15u;
    q += 1;
  } else if (b0 == 0xde || b0 == 0xdf) {
    const unsigned w = b0 == 0xde ? 2 : 4;
    if ((size_t)(end - q) <= w) return 0;
    nkv = mp_be(q + 1, w);
    q += 1 + w;
  } else {
    return 0;
  }
  int seen_ids = 0, seen_done = 0, seen_fr = 0, seen_base = 0;
  uint32_t base_id = 0;
  r->done = r->has_fr = 0;
  r->n_ids = r->fr_at = r->fr_len = 0;
  for (uint64_t k = 0; k < nkv; k++) {
    if (q == end || *q < 0xa0 || *q > 0xbf) return 0; /* a fixstr key */
    const size_t kl = *q & 31u;
    if ((size_t)(end - q) <= kl + 1) return 0; /* the key and its value's first byte */
    const uint8_t *key = q + 1;
    q += 1 + kl;
    if (kl == (delta ? 9u : 3u) && !memcmp(key, delta ? "ids_delta" : "ids", kl)) {
      if (seen_ids++) return 0;
      const uint8_t b = *q;
      uint64_t nid;
      if (b >= 0x90 && b <= 0x9f) {
        nid = b & 15u;
        q += 1;
      } else if (b == 0xdc || b == 0xdd) {
        const unsigned w = b == 0xdc ? 2 : 4;
        if ((size_t)(end - q) <= w) return 0;
        nid = mp_be(q + 1, w);
        q += 1 + w;
      } else {
        return 0;
      }
      /* every id takes a byte: more than the bytes left is not this frame (nor whole) */
      if (nid > r->opt.max_ids || nid > (uint64_t)(end - q) || !mp_ids_room(r, (size_t)nid)) return 0;
      uint32_t *ids = r->ids, prev = base_id;
      for (size_t i = 0; i < (size_t)nid; i++) {
        uint64_t v;
        if (q == end || !mp_fast_uint(&q, end, &v)) return 0;
        if (delta) {
          if (!embd_codec_unzigzag(prev, v, &prev)) return 0;
          ids[i] = prev;
        } else {
          if (v > UINT32_MAX) return 0;
          ids[i] = (uint32_t)v;
        }
      }
      r->n_ids = (size_t)nid;
    } else if (kl == 4 && !memcmp(key, "done", 4)) {
      if (seen_done++ || (*q != 0xc2 && *q != 0xc3)) return 0;
      r->done = *q++ == 0xc3;
    } else if (kl == 13 && !memcmp(key, "finish_reason", 13)) {
      if (seen_fr++) return 0;
      const uint8_t b = *q;
      if (b == 0xc0) {
        q++;
        continue;
      }
      uint64_t sl;
      unsigned w;
      if (b >= 0xa0 && b <= 0xbf) sl = b & 31u, w = 0;
      else if (b >= 0xd9 && b <= 0xdb) w = 1u << (b - 0xd9), sl = 0;
      else return 0;
      if ((size_t)(end - q) <= w) return 0;
      if (w) sl = mp_be(q + 1, w);
      q += 1 + w;
      if (sl > (uint64_t)(end - q)) return 0;
      r->has_fr = 1;
      r->fr_at = (size_t)(q - p);
      r->fr_len = (size_t)sl;
      q += sl;
    } else if (delta && kl == 7 && !memcmp(key, "base_id", 7)) {
      /* before ids_delta (the reference's order), or the deltas were read from 0 */
      uint64_t v;
      if (seen_base++ || seen_ids || !mp_fast_uint(&q, end, &v) || v > UINT32_MAX) return 0;
      base_id = (uint32_t)v;
    } else {
      return 0; /* tool_calls, a plain "ids" in a delta frame, unknown keys: the full path */
    }
  }
  if (!seen_ids || (delta && !seen_base)) return 0;
  return (size_t)(q - p);
}

/* The frame mp_fast read (its bytes at p, which may be the chunk or the framer's buffer). */
static embd_result mp_fast_emit(embd_codec_msgpack_reader *r, const uint8_t *p, size_t n) {
  embd_codec_stream_frame f;
  memset(&f, 0, sizeof f);
  f.ids = r->ids;
  f.n_ids = r->n_ids;
  f.done = r->done;
  if (r->has_fr) {
    /* empty: still not NULL (where its bytes would start), as in mp_frame */
    f.finish_reason = (const char *)p + r->fr_at;
    f.finish_reason_len = r->fr_len;
  }
  f.index = r->f.index;
  f.offset = r->f.start;
  f.size = n;
  r->fast = 0;
  return r->opt.on_frame(r->opt.user, &f);
}

/* A frame the scanner found whole and valid (p, n: exactly its bytes): its keys found, then
 * checked in a fixed order (so one frame always reports the same first error), every error
 * at the byte at fault. */
static embd_result mp_frame(embd_codec_msgpack_reader *r, const uint8_t *p, size_t n) {
  const uint64_t base = r->f.start;
  uint64_t nkv, skip;
  mp_hdr_info(p, &nkv, &skip);
  nkv /= 2;
  size_t o = 1 + mp_extra(p[0]);
  /* msgpack-delta (embd/codec_stream.h): the same map with base_id + ids_delta in place
   * of ids; one pass over the same code, the ids array's name and meaning switched. */
  const int delta = (r->opt.flags & EMBD_CODEC_STREAM_DELTA) != 0;
  const char *ids_key = delta ? "ids_delta" : "ids";
  const size_t ids_key_len = delta ? 9 : 3;
  enum { K_IDS, K_DONE, K_FR, K_TC, K_BASE, K_PLAIN, K_N };
  size_t key_at[K_N], val_at[K_N];
  for (int k = 0; k < K_N; k++) key_at[k] = val_at[k] = SIZE_MAX;
  for (uint64_t i = 0; i < nkv; i++) {
    const size_t ko = o;
    const uint8_t *ks = NULL;
    size_t kl = 0;
    const int is_str = mp_str_at(p + o, &ks, &kl);
    o += mp_len(p + o);
    const size_t vo = o;
    o += mp_len(p + o);
#define MP_KEY_IS(name, len) (is_str && kl == (len) && !memcmp(ks, name, len))
    const int k = MP_KEY_IS(ids_key, ids_key_len)         ? K_IDS
                  : MP_KEY_IS("done", 4)                  ? K_DONE
                  : MP_KEY_IS("finish_reason", 13)        ? K_FR
                  : MP_KEY_IS("tool_calls", 10)           ? K_TC
                  : delta && MP_KEY_IS("base_id", 7)      ? K_BASE
                  : delta && MP_KEY_IS("ids", 3)          ? K_PLAIN
                                                          : -1;
#undef MP_KEY_IS
    if (k < 0) continue; /* unknown keys are ignored */
    if (key_at[k] != SIZE_MAX) return mp_stick(r, MP_ERR, base + ko, "duplicate key \"%.*s\"", (int)kl, (const char *)ks);
    key_at[k] = ko;
    val_at[k] = vo;
  }
  if (key_at[K_PLAIN] != SIZE_MAX) /* the draft: a server MUST NOT mix the two shapes */
    return mp_stick(r, MP_ERR, base + key_at[K_PLAIN],
                    "an \"ids\" key in a msgpack-delta frame (expected \"base_id\" and \"ids_delta\")");
  if (key_at[K_IDS] == SIZE_MAX)
    return delta ? mp_stick(r, MP_ERR, base, "no \"ids_delta\" key (every msgpack-delta frame has one, [] when empty)")
                 : mp_stick(r, MP_ERR, base, "no \"ids\" key (every frame has one, [] when empty)");
  uint32_t base_id = 0;
  uint64_t v;
  if (delta) {
    const size_t at = val_at[K_BASE];
    if (at == SIZE_MAX) return mp_stick(r, MP_ERR, base, "no \"base_id\" key (every msgpack-delta frame has one)");
    if (!mp_uint_at(p + at, &v))
      return mp_stick(r, MP_ERR, base + at, "base_id is %s, expected an unsigned integer", mp_val_type(p + at));
    if (v > UINT32_MAX) return mp_stick(r, MP_ERR, base + at, "base_id = %" PRIu64 " is above UINT32_MAX", v);
    base_id = (uint32_t)v;
  }
  const size_t at_ids = val_at[K_IDS];
  uint64_t nid64;
  size_t e;
  if (!mp_array_at(p + at_ids, &nid64, &e))
    return mp_stick(r, MP_ERR, base + at_ids, "%s is %s, expected an array", ids_key, mp_val_type(p + at_ids));
  const size_t nid = (size_t)nid64; /* the scanner bounded it by max_frame_bytes, a size_t */
  if (nid > r->opt.max_ids)
    return mp_stick(r, MP_ERR, base + at_ids, "%zu ids, above max_ids (%zu)", nid, r->opt.max_ids);
  if (!mp_ids_room(r, nid)) return mp_stick(r, EMBD_ERR_OUT_OF_MEMORY, base, "out of memory for %zu ids", nid);
  e += at_ids;
  uint32_t prev = base_id;
  for (size_t i = 0, len; i < nid; i++, e += len) {
    if (!(len = mp_uint_at(p + e, &v)))
      return mp_stick(r, MP_ERR, base + e, "%s[%zu] is %s, expected an unsigned integer", ids_key, i,
                      mp_val_type(p + e));
    if (delta) {
      uint32_t id;
      if (!embd_codec_unzigzag(prev, v, &id))
        return mp_stick(r, MP_ERR, base + e,
                        "ids_delta[%zu] = %" PRIu64 " (a step of %" PRId64 " from %" PRIu32
                        ") takes the id out of 0..UINT32_MAX", i, v, embd_codec_step(v), prev);
      prev = id;
      r->ids[i] = prev;
      continue;
    }
    if (v > UINT32_MAX) return mp_stick(r, MP_ERR, base + e, "ids[%zu] = %" PRIu64 " is above UINT32_MAX", i, v);
    r->ids[i] = (uint32_t)v;
  }
  embd_codec_stream_frame f;
  memset(&f, 0, sizeof f);
  f.ids = r->ids;
  f.n_ids = nid;
  if (val_at[K_DONE] != SIZE_MAX) {
    const uint8_t *q = p + val_at[K_DONE];
    if (*q != 0xc2 && *q != 0xc3)
      return mp_stick(r, MP_ERR, base + val_at[K_DONE], "done is %s, expected a bool", mp_val_type(q));
    f.done = *q == 0xc3;
  }
  if (val_at[K_FR] != SIZE_MAX) {
    const uint8_t *q = p + val_at[K_FR], *fs;
    size_t fl;
    if (mp_str_at(q, &fs, &fl)) {
      f.finish_reason = (const char *)fs; /* empty: still not NULL (where its bytes would start) */
      f.finish_reason_len = fl;
    } else if (*q != 0xc0) {
      return mp_stick(r, MP_ERR, base + val_at[K_FR], "finish_reason is %s, expected a string or nil",
                      mp_val_type(q));
    }
  }
  if (val_at[K_TC] != SIZE_MAX) {
    f.tool_calls = p + val_at[K_TC];
    f.tool_calls_len = mp_len(f.tool_calls);
  }
  f.index = r->f.index;
  f.offset = base;
  f.size = n;
  return r->opt.on_frame(r->opt.user, &f);
}

/* msgpack has no length field: the scanner runs over each byte once, where it lies (the
 * framer's `scans` mode: p, n are the bytes after those it saw). */
static int mp_need(embd_framer *f, const uint8_t *p, size_t n, uint64_t *need) {
  embd_codec_msgpack_reader *r = (embd_codec_msgpack_reader *)f;
  mp_scan *s = &r->scan;
  if (!f->seen) {
    /* A whole common frame at hand: its size and values at once (mp_whole emits them). */
    const size_t len = mp_fast(r, p, n);
    if (len) {
      r->fast = len;
      *need = len;
      return EMBD_FRAMER_SIZE;
    }
    mp_scan_init(s, r->opt.max_frame_bytes, 1);
  }
  const uint64_t from = s->bytes;
  size_t used;
  const int k = mp_scan_run(s, p, n, &used);
  if (k < 0) {
    mp_stick(r, MP_ERR, f->start + from + used - s->back, "%s", s->why);
    return EMBD_FRAMER_FAIL;
  }
  *need = used;
  return k > 0 ? EMBD_FRAMER_SIZE : EMBD_FRAMER_MORE;
}

static embd_result mp_whole(embd_framer *f, const uint8_t *p, size_t n) {
  embd_codec_msgpack_reader *r = (embd_codec_msgpack_reader *)f;
  /* The framer emits a frame sized SIZE with all its bytes at hand at once, in place. A
   * frame assembled from pieces is parsed again: the fast way when it is a common one. */
  if (r->fast == n || mp_fast(r, p, n) == n) return mp_fast_emit(r, p, n);
  r->fast = 0;
  return mp_frame(r, p, n);
}

static const embd_framer_ops mp_ops = {mp_need, mp_whole, NULL, NULL, 1};

embd_result embd_codec_msgpack_create(const embd_codec_stream_options *opt,
                                      embd_codec_msgpack_reader **out) {
  if (out) *out = NULL;
  if (!opt || !out || !opt->max_frame_bytes || !opt->on_frame || !EMBD_RESERVED_OK(opt) ||
      (opt->flags & ~(uint64_t)EMBD_CODEC_STREAM_DELTA)) /* BASE_ID_4 is protobuf's */
    return EMBD_ERR_INVALID_ARGUMENT;
  embd_codec_msgpack_reader *r = calloc(1, sizeof *r);
  if (!r) return EMBD_ERR_OUT_OF_MEMORY;
  embd_framer_init(&r->f, 0, opt->max_frame_bytes); /* allocates nothing yet */
  r->opt = *opt;
  if (!r->opt.max_ids) r->opt.max_ids = r->opt.max_frame_bytes;
  *out = r;
  return EMBD_OK;
}

void embd_codec_msgpack_destroy(embd_codec_msgpack_reader *r) {
  if (!r) return;
  free(r->ids);
  embd_framer_free(&r->f);
  free(r);
}

uint64_t embd_codec_msgpack_frames(const embd_codec_msgpack_reader *r) { return r ? r->f.index : 0; }
uint64_t embd_codec_msgpack_offset(const embd_codec_msgpack_reader *r) { return r ? r->f.pos : 0; }

embd_result embd_codec_msgpack_feed(embd_codec_msgpack_reader *r, const void *data, size_t len,
                                    embd_error *err) {
  if (!r || (!data && len)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader or data");
  embd_framer_feed(&r->f, &mp_ops, (const uint8_t *)data, len);
  return embd_framer_report(&r->f, err);
}

embd_result embd_codec_msgpack_finish(embd_codec_msgpack_reader *r, embd_error *err) {
  if (!r) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader");
  embd_framer *f = &r->f;
  const uint64_t got = embd_framer_pending(f);
  if (f->status == EMBD_OK && got)
    embd_framer_fail(f, MP_ERR, f->pos, "the stream ends inside the frame (after %llu bytes of it)",
                     (unsigned long long)got);
  return embd_framer_report(f, err);
}

/* ---- the encoder -------------------------------------------------------------------------- */

static size_t mp_uint_len(uint64_t v) {
  return v < 0x80 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= 0xffffffffu ? 5 : 9;
}
static size_t mp_str_hdr(uint64_t n) { return n < 32 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 5; }

/* The value written for element i: the id (plain) or its zigzag delta (delta mode). */
static uint64_t mp_elem_value(const embd_codec_stream_frame *f, int delta, uint32_t base_id, size_t i) {
  if (!delta) return f->ids[i];
  return embd_codec_zigzag(i ? f->ids[i - 1] : base_id, f->ids[i]);
}

/* One encoder for both shapes (delta: msgpack-delta with base_id, the Python reference's
 * key order; else the vLLM shape). */
static embd_result mp_size(const embd_codec_stream_frame *f, int delta, uint32_t base_id, uint64_t *size) {
  if (!f || (!f->ids && f->n_ids) || (!f->tool_calls && f->tool_calls_len) ||
      (!f->finish_reason && f->finish_reason_len))
    return EMBD_ERR_INVALID_ARGUMENT;
  if (embd_above_u32((uint64_t)f->n_ids) || embd_above_u32((uint64_t)f->finish_reason_len))
    return EMBD_ERR_INVALID_ARGUMENT;
  if (f->tool_calls && (!f->tool_calls_len || mp_skip(f->tool_calls, f->tool_calls_len) != f->tool_calls_len))
    return EMBD_ERR_INVALID_ARGUMENT;
  uint64_t s = 1 + (delta ? 8 + mp_uint_len(base_id) + 10 : 4) + (f->n_ids < 16 ? 1 : f->n_ids <= 0xffff ? 3 : 5);
  for (size_t i = 0; i < f->n_ids; i++) s += mp_uint_len(mp_elem_value(f, delta, base_id, i));
  s += 5 + 1;
  if (f->finish_reason) s += 14 + mp_str_hdr(f->finish_reason_len) + f->finish_reason_len;
  else if (delta) s += 14 + 1; /* msgspec writes finish_reason: nil */
  if (f->tool_calls) s += 11 + f->tool_calls_len;
  if ((uint64_t)(size_t)s != s) return EMBD_ERR_INVALID_ARGUMENT;
  *size = s;
  return EMBD_OK;
}

static uint8_t *mp_put_be(uint8_t *q, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) q[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
  return q + n;
}

static uint8_t *mp_put_uint(uint8_t *q, uint64_t v) {
  if (v < 0x80) {
    *q++ = (uint8_t)v;
  } else if (v <= 0xff) {
    *q++ = 0xcc;
    *q++ = (uint8_t)v;
  } else if (v <= 0xffff) {
    *q++ = 0xcd;
    q = mp_put_be(q, v, 2);
  } else if (v <= 0xffffffffu) {
    *q++ = 0xce;
    q = mp_put_be(q, v, 4);
  } else {
    *q++ = 0xcf;
    q = mp_put_be(q, v, 8);
  }
  return q;
}

static embd_result mp_encode(const embd_codec_stream_frame *f, int delta, uint32_t base_id, void *out, size_t cap,
                             size_t *written) {
  uint64_t s;
  if (written) *written = 0;
  embd_result r = mp_size(f, delta, base_id, &s);
  if (r != EMBD_OK) return r;
  if (cap < s || !out) {
    if (written) *written = (size_t)s;
    return out || !cap ? EMBD_ERR_OUTPUT_TOO_SMALL : EMBD_ERR_INVALID_ARGUMENT;
  }
  uint8_t *q = (uint8_t *)out;
  if (delta) {
    *q++ = (uint8_t)(0x80 | (4 + !!f->tool_calls));
    memcpy(q, "\xa7" "base_id", 8);
    q = mp_put_uint(q + 8, base_id);
    memcpy(q, "\xa9" "ids_delta", 10);
    q += 10;
  } else {
    *q++ = (uint8_t)(0x80 | (2 + !!f->finish_reason + !!f->tool_calls));
    memcpy(q, "\xa3ids", 4);
    q += 4;
  }
  if (f->n_ids < 16) {
    *q++ = (uint8_t)(0x90 | f->n_ids);
  } else if (f->n_ids <= 0xffff) {
    *q++ = 0xdc;
    q = mp_put_be(q, f->n_ids, 2);
  } else {
    *q++ = 0xdd;
    q = mp_put_be(q, f->n_ids, 4);
  }
  for (size_t i = 0; i < f->n_ids; i++) q = mp_put_uint(q, mp_elem_value(f, delta, base_id, i));
  memcpy(q, "\xa4" "done", 5);
  q += 5;
  *q++ = f->done ? 0xc3 : 0xc2;
  if (f->finish_reason) {
    memcpy(q, "\xad" "finish_reason", 14);
    q += 14;
    uint64_t n = f->finish_reason_len;
    if (n < 32) {
      *q++ = (uint8_t)(0xa0 | n);
    } else if (n <= 0xff) {
      *q++ = 0xd9;
      *q++ = (uint8_t)n;
    } else if (n <= 0xffff) {
      *q++ = 0xda;
      q = mp_put_be(q, n, 2);
    } else {
      *q++ = 0xdb;
      q = mp_put_be(q, n, 4);
    }
    if (n) memcpy(q, f->finish_reason, (size_t)n);
    q += n;
  } else if (delta) {
    memcpy(q, "\xad" "finish_reason\xc0", 15);
    q += 15;
  }
  if (f->tool_calls) {
    memcpy(q, "\xaa" "tool_calls", 11);
    q += 11;
    memcpy(q, f->tool_calls, f->tool_calls_len);
    q += f->tool_calls_len;
  }
  if (written) *written = (size_t)s;
  return EMBD_OK;
}

embd_result embd_codec_msgpack_encoded_size(const embd_codec_stream_frame *f, size_t *size) {
  uint64_t s;
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = mp_size(f, 0, 0, &s);
  if (r == EMBD_OK) *size = (size_t)s;
  return r;
}

embd_result embd_codec_msgpack_encode(const embd_codec_stream_frame *f, void *out, size_t cap, size_t *written) {
  return mp_encode(f, 0, 0, out, cap, written);
}

embd_result embd_codec_msgpack_delta_encoded_size(const embd_codec_stream_frame *f, uint32_t base_id,
                                                  size_t *size) {
  uint64_t s;
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = mp_size(f, 1, base_id, &s);
  if (r == EMBD_OK) *size = (size_t)s;
  return r;
}

embd_result embd_codec_msgpack_delta_encode(const embd_codec_stream_frame *f, uint32_t base_id, void *out,
                                            size_t cap, size_t *written) {
  return mp_encode(f, 1, base_id, out, cap, written);
}
