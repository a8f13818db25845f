/* protobuf mode of the engines' Codec streams (embd/codec_stream.h): a 4-byte big-endian
 * length, then a CodecFrame message (proto/codec.proto). Decoded by hand: one message with
 * four known fields, bounded varints and lengths, unknown fields skipped by wire type.
 * protobuf-c is the tests' and the benchmark's oracle (tests/test_codec_modes.c,
 * bench/bench_codec_modes.cc); this decoder is faster than its unpack and never
 * allocates per frame. The encoder writes what protobuf-c's pack writes (canonical
 * proto3), checked byte for byte by the tests.
 *
 * Every loop below consumes at least one byte per step or stops: there is no input on
 * which a reader spins.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec_stream.h"
#include "delta.h"
#include "framer.h"

#define PB_ERR EMBD_ERR_PROTOBUF

struct embd_codec_proto_reader {
  embd_framer f; /* first: the ops get the reader back from their embd_framer * */
  embd_codec_stream_options opt;
  uint32_t *ids;
  size_t ids_cap;
  uint8_t *tc; /* tool_calls records gathered when not back to back */
  size_t tc_cap;
};

static const char *const wt_name[8] = {"0 (varint)",      "1 (fixed64)",  "2 (length-delimited)",
                                       "3 (start group)", "4 (end group)", "5 (fixed32)",
                                       "6 (undefined)",   "7 (undefined)"};

/* ---- varints ---------------------------------------------------------------------- */

/* 0: ok; 1: runs past end; 2: longer than 10 bytes or above 2^64-1. *pp advances on 0. */
static int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  const uint8_t *p = *pp;
  if (p < end && *p < 0x80) {
    *v = *p;
    *pp = p + 1;
    return 0;
  }
  uint64_t x = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (p + i >= end) return 1;
    uint64_t b = p[i];
    if (i == 9 && b > 1) return 2;
    x |= (b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *v = x;
      *pp = p + i + 1;
      return 0;
    }
  }
  return 2;
}

static unsigned pb_vlen(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static uint8_t *pb_put_varint(uint8_t *q, uint64_t v) {
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q++ = (uint8_t)v;
  return q;
}

/* ---- the reader --------------------------------------------------------------------- */

/* Every error names the byte at fault (at) and, in the prefix, the frame's first byte. */
#define pb_stick(r, res, at, ...) embd_framer_fail(&(r)->f, res, at, __VA_ARGS__)

static int pb_ids_reserve(embd_codec_proto_reader *r, size_t want) {
  if (want <= r->ids_cap) return 1;
  size_t cap = r->ids_cap ? r->ids_cap : 64;
  while (cap < want) cap = cap > SIZE_MAX / 2 ? want : cap * 2;
  if (cap > r->opt.max_ids) cap = r->opt.max_ids;
  if (cap < want) cap = want;
  if (cap > SIZE_MAX / sizeof(uint32_t)) return 0;
  uint32_t *n = realloc(r->ids, cap * sizeof(uint32_t));
  if (!n) return 0;
  r->ids = n;
  r->ids_cap = cap;
  return 1;
}

/* Where field-1 element k starts in a valid frame (p, len): only on the delta error path,
 * which finds the element's index first and its byte afterwards. */
static const uint8_t *pb_id_at(const uint8_t *p, size_t len, size_t k) {
  const uint8_t *q = p, *end = p + len;
  while (q < end) {
    uint64_t tag = 0, v = 0;
    pb_varint(&q, end, &tag);
    switch (tag & 7) {
      case 0:
        if ((tag >> 3) == 1 && k-- == 0) return q;
        pb_varint(&q, end, &v);
        break;
      case 1: q += 8; break;
      case 5: q += 4; break;
      default: {
        pb_varint(&q, end, &v);
        const uint8_t *e = q + v;
        if ((tag >> 3) == 1) {
          while (q < e) {
            if (k-- == 0) return q;
            pb_varint(&q, e, &v);
          }
        }
        q = e;
      }
    }
  }
  return p;
}

/* Parses one CodecFrame (p, len: the payload; base: its absolute offset) and calls on_frame. */
static embd_result pb_frame(embd_codec_proto_reader *r, const uint8_t *p, size_t len,
                            uint64_t base) {
  const uint8_t *q = p, *end = p + len;
  size_t n = 0;
  int done = 0;
  const uint8_t *fr = NULL;
  size_t fr_len = 0;
  const uint8_t *tc0 = NULL, *tc1 = NULL; /* first record's start, last record's end */
  size_t tc_sum = 0;
  int tc_split = 0;
  /* protobuf-delta (embd/codec_stream.h): field 1 holds zigzag deltas, base_id a varint in
   * field bf; the ids are rebuilt after the walk (base_id may follow them). */
  const int delta = (r->opt.flags & EMBD_CODEC_STREAM_DELTA) != 0;
  const uint32_t bf = (r->opt.flags & EMBD_CODEC_STREAM_BASE_ID_4) ? 4 : 5;
  int has_base = 0;
  uint32_t base_id = 0;
  const char *idn = delta ? "ids_delta" : "ids"; /* field 1's name in messages */
#define AT(x) (base + (uint64_t)((x) - p))
  while (q < end) {
    const uint8_t *tag_at = q;
    uint64_t tag;
    int vr = pb_varint(&q, end, &tag);
    if (vr == 1) return pb_stick(r, PB_ERR, AT(tag_at), "field tag runs past the end of the frame");
    if (vr == 2 || tag > UINT32_MAX)
      return pb_stick(r, PB_ERR, AT(tag_at), "field tag longer than 5 bytes (above 2^32-1)");
    uint32_t field = (uint32_t)(tag >> 3), wt = (uint32_t)(tag & 7);
    if (field == 0) return pb_stick(r, PB_ERR, AT(tag_at), "field number 0");
    switch (wt) {
      case 0: {
        const uint8_t *v_at = q;
        uint64_t v;
        vr = pb_varint(&q, end, &v);
        if (vr == 1)
          return pb_stick(r, PB_ERR, AT(v_at), "field %" PRIu32 ": varint runs past the end of the frame", field);
        if (vr == 2)
          return pb_stick(r, PB_ERR, AT(v_at), "field %" PRIu32 ": varint longer than 10 bytes", field);
        if (delta && field == bf) {
          /* draft: uint32 (field 5); spec v0.5: int32 (field 4), so no id above INT32_MAX */
          const uint64_t mx = bf == 4 ? INT32_MAX : UINT32_MAX;
          if (v > mx)
            return pb_stick(r, PB_ERR, AT(v_at), "base_id (field %" PRIu32 ") = %" PRIu64 " is above %s", bf, v,
                            bf == 4 ? "INT32_MAX (an int32 token id)" : "UINT32_MAX");
          base_id = (uint32_t)v;
          has_base = 1;
        } else if (field == 1) { /* an unpacked id */
          if (v > UINT32_MAX)
            return pb_stick(r, PB_ERR, AT(v_at), "%s[%zu] = %" PRIu64 " is above UINT32_MAX", idn, n, v);
          if (n >= r->opt.max_ids)
            return pb_stick(r, PB_ERR, AT(v_at), "more than max_ids (%zu) ids", r->opt.max_ids);
          if (!pb_ids_reserve(r, n + 1)) return pb_stick(r, EMBD_ERR_OUT_OF_MEMORY, AT(v_at), "out of memory for ids");
          r->ids[n++] = (uint32_t)v;
        } else if (field == 2) {
          done = v != 0;
        } else if (field == 3 || field == 4) {
          return pb_stick(r, PB_ERR, AT(tag_at), "%s (field %" PRIu32 ") has wire type %s, expected 2 (length-delimited)",
                          field == 3 ? "finish_reason" : "tool_calls", field, wt_name[wt]);
        }
        break;
      }
      case 1:
      case 5: {
        size_t w = wt == 1 ? 8 : 4;
        if (delta && field == bf)
          return pb_stick(r, PB_ERR, AT(tag_at), "base_id (field %" PRIu32 ") has wire type %s, expected 0 (varint)",
                          field, wt_name[wt]);
        if (field <= 4)
          return pb_stick(r, PB_ERR, AT(tag_at), "%s (field %" PRIu32 ") has wire type %s",
                          field == 1 ? "ids" : field == 2 ? "done" : field == 3 ? "finish_reason" : "tool_calls",
                          field, wt_name[wt]);
        if ((size_t)(end - q) < w)
          return pb_stick(r, PB_ERR, AT(q), "field %" PRIu32 ": %zu-byte value runs past the end of the frame", field, w);
        q += w;
        break;
      }
      case 2: {
        const uint8_t *l_at = q;
        uint64_t l;
        vr = pb_varint(&q, end, &l);
        if (vr == 1)
          return pb_stick(r, PB_ERR, AT(l_at), "field %" PRIu32 ": length runs past the end of the frame", field);
        if (vr == 2)
          return pb_stick(r, PB_ERR, AT(l_at), "field %" PRIu32 ": length varint longer than 10 bytes", field);
        if (l > (uint64_t)(end - q))
          return pb_stick(r, PB_ERR, AT(l_at), "field %" PRIu32 ": length %" PRIu64 " runs past the end of the frame (%zu bytes left)",
                          field, l, (size_t)(end - q));
        const uint8_t *s = q, *e = q + l;
        q = e;
        if (delta && bf == 5 && field == 5) { /* field 4 keeps its tool_calls records */
          return pb_stick(r, PB_ERR, AT(tag_at), "base_id (field 5) has wire type %s, expected 0 (varint)", wt_name[wt]);
        } else if (field == 1) { /* packed ids: at most one id per byte */
          size_t room = r->opt.max_ids - n;
          if (!pb_ids_reserve(r, n + ((uint64_t)l < room ? (size_t)l : room)))
            return pb_stick(r, EMBD_ERR_OUT_OF_MEMORY, AT(s), "out of memory for ids");
          uint32_t *ids = r->ids;
          const size_t cap = r->opt.max_ids;
          while (s < e) {
            if (n >= cap)
              return pb_stick(r, PB_ERR, AT(s), "more than max_ids (%zu) ids", cap);
            uint32_t b = *s;
            if (b < 0x80) {
              ids[n++] = b;
              s++;
              continue;
            }
            if (s + 1 < e && s[1] < 0x80) {
              ids[n++] = (b & 0x7f) | (uint32_t)s[1] << 7;
              s += 2;
              continue;
            }
            const uint8_t *v_at = s;
            uint64_t v;
            vr = pb_varint(&s, e, &v);
            if (vr == 1)
              return pb_stick(r, PB_ERR, AT(v_at), "%s[%zu]: varint runs past the end of the packed ids (unterminated)", idn, n);
            if (vr == 2) return pb_stick(r, PB_ERR, AT(v_at), "%s[%zu]: varint longer than 10 bytes", idn, n);
            if (v > UINT32_MAX)
              return pb_stick(r, PB_ERR, AT(v_at), "%s[%zu] = %" PRIu64 " is above UINT32_MAX", idn, n, v);
            ids[n++] = (uint32_t)v;
          }
        } else if (field == 2) {
          return pb_stick(r, PB_ERR, AT(tag_at), "done (field 2) has wire type %s, expected 0 (varint)", wt_name[wt]);
        } else if (field == 3) {
          fr = s;
          fr_len = (size_t)l;
        } else if (field == 4) {
          if (!tc0) tc0 = tag_at;
          else if (tc1 != tag_at) tc_split = 1;
          tc1 = e;
          tc_sum += (size_t)(e - tag_at);
        }
        break;
      }
      default:
        return pb_stick(r, PB_ERR, AT(tag_at), "field %" PRIu32 " has wire type %s%s", field, wt_name[wt],
                        wt == 3 || wt == 4 ? ": groups are not supported" : ": not a protobuf wire type");
    }
  }
  if (delta) {
    if (!has_base)
      return pb_stick(r, PB_ERR, r->f.start, "no base_id (field %" PRIu32 "): every protobuf-delta frame has one", bf);
    uint32_t prev = base_id;
    for (size_t i = 0; i < n; i++) {
      const uint64_t z = r->ids[i];
      if (!embd_codec_unzigzag(prev, z, &r->ids[i]))
        return pb_stick(r, PB_ERR, AT(pb_id_at(p, len, i)),
                        "ids_delta[%zu] = %" PRIu64 " (a step of %" PRId64 " from %" PRIu32
                        ") takes the id out of 0..UINT32_MAX", i, z, embd_codec_step(z), prev);
      prev = r->ids[i];
    }
  }
  embd_codec_stream_frame f;
  f.ids = r->ids;
  f.n_ids = n;
  f.done = done;
  f.finish_reason = (const char *)fr;
  f.finish_reason_len = fr_len;
  f.tool_calls = tc0;
  f.tool_calls_len = tc0 ? (size_t)(tc1 - tc0) : 0;
  if (tc_split) { /* gather the field-4 records (walk again: the frame is valid now) */
    if (r->tc_cap < tc_sum) {
      uint8_t *nb = realloc(r->tc, tc_sum);
      if (!nb) return pb_stick(r, EMBD_ERR_OUT_OF_MEMORY, r->f.start, "out of memory for tool_calls");
      r->tc = nb;
      r->tc_cap = tc_sum;
    }
    size_t k = 0;
    q = p;
    while (q < end) {
      const uint8_t *t = q;
      uint64_t tag = 0, v = 0;
      pb_varint(&q, end, &tag);
      switch (tag & 7) {
        case 0: pb_varint(&q, end, &v); break;
        case 1: q += 8; break;
        case 5: q += 4; break;
        default:
          pb_varint(&q, end, &v);
          q += v;
          if ((tag >> 3) == 4) {
            memcpy(r->tc + k, t, (size_t)(q - t));
            k += (size_t)(q - t);
          }
      }
    }
    f.tool_calls = r->tc;
    f.tool_calls_len = k;
  }
  f.index = r->f.index;
  f.offset = r->f.start;
  f.size = len + 4;
#undef AT
  return r->opt.on_frame(r->opt.user, &f);
}

/* The 4-byte big-endian length prefix: the frame is 4 + its value. */
static int pb_size(embd_framer *f, const uint8_t *p, size_t n, uint64_t *need) {
  const embd_codec_proto_reader *r = (const embd_codec_proto_reader *)f;
  if (n < 4) {
    *need = 4;
    return EMBD_FRAMER_MORE;
  }
  const uint32_t len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
  /* len == 0 is a frame too: a proto3 encoder writes no byte for ids = [], done = false. It
   * still consumes its 4 prefix bytes, so a stream of zeros ends (in empty frames). */
  if (len > r->opt.max_frame_bytes)
    return embd_framer_fail(f, PB_ERR, f->start, "length prefix %" PRIu32 " above max_frame_bytes (%zu)",
                            len, r->opt.max_frame_bytes),
           EMBD_FRAMER_FAIL;
  *need = 4 + (uint64_t)len;
  return EMBD_FRAMER_SIZE;
}

static embd_result pb_whole(embd_framer *f, const uint8_t *p, size_t n) {
  return pb_frame((embd_codec_proto_reader *)f, p + 4, n - 4, f->start + 4);
}

static const embd_framer_ops pb_ops = {pb_size, pb_whole, NULL, NULL, 0};

embd_result embd_codec_proto_create(const embd_codec_stream_options *opt,
                                    embd_codec_proto_reader **out) {
  if (out) *out = NULL;
  if (!opt || !out || !opt->max_frame_bytes || !opt->on_frame || !EMBD_RESERVED_OK(opt) ||
      embd_above_u32((uint64_t)opt->max_frame_bytes) || (opt->flags & ~(uint64_t)EMBD_CODEC_STREAM_KNOWN_FLAGS) ||
      ((opt->flags & EMBD_CODEC_STREAM_DELTA) == 0 && (opt->flags & EMBD_CODEC_STREAM_BASE_ID_4)))
    return EMBD_ERR_INVALID_ARGUMENT;
  embd_codec_proto_reader *r = calloc(1, sizeof *r);
  if (!r) return EMBD_ERR_OUT_OF_MEMORY;
  embd_framer_init(&r->f, 0, 4 + (uint64_t)opt->max_frame_bytes); /* allocates nothing yet */
  r->opt = *opt;
  if (!r->opt.max_ids) r->opt.max_ids = r->opt.max_frame_bytes;
  *out = r;
  return EMBD_OK;
}

void embd_codec_proto_destroy(embd_codec_proto_reader *r) {
  if (!r) return;
  free(r->ids);
  embd_framer_free(&r->f);
  free(r->tc);
  free(r);
}

uint64_t embd_codec_proto_frames(const embd_codec_proto_reader *r) { return r ? r->f.index : 0; }
uint64_t embd_codec_proto_offset(const embd_codec_proto_reader *r) { return r ? r->f.pos : 0; }

embd_result embd_codec_proto_feed(embd_codec_proto_reader *r, const void *data, size_t len,
                                  embd_error *err) {
  if (!r || (!data && len)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader or data");
  embd_framer_feed(&r->f, &pb_ops, (const uint8_t *)data, len);
  return embd_framer_report(&r->f, err);
}

embd_result embd_codec_proto_finish(embd_codec_proto_reader *r, embd_error *err) {
  if (!r) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL reader");
  embd_framer *f = &r->f;
  const uint64_t got = embd_framer_pending(f);
  if (f->status == EMBD_OK && got && got < 4)
    embd_framer_fail(f, PB_ERR, f->pos, "the stream ends inside the length prefix (%u of 4 bytes)",
                     (unsigned)got);
  else if (f->status == EMBD_OK && got)
    embd_framer_fail(f, PB_ERR, f->pos, "the stream ends inside the frame (%llu of %llu bytes)",
                     (unsigned long long)(got - 4), (unsigned long long)(f->need - 4));
  return embd_framer_report(f, err);
}

/* ---- the encoder ------------------------------------------------------------------------ */

/* tool_calls must be a run of field-4 length-delimited records. */
static int pb_tool_calls_ok(const uint8_t *p, size_t n) {
  const uint8_t *q = p, *end = p + n;
  while (q < end) {
    uint64_t tag, l;
    if (pb_varint(&q, end, &tag) || tag != ((4u << 3) | 2)) return 0;
    if (pb_varint(&q, end, &l) || l > (uint64_t)(end - q)) return 0;
    q += l;
  }
  return 1;
}

/* One encoder for protobuf and protobuf-delta (delta: field 1 the zigzag deltas, base_id
 * in field bf, 4 or 5; 0 for the plain mode). */
static uint64_t pb_elem_value(const embd_codec_stream_frame *f, unsigned bf, uint32_t base_id, size_t i) {
  if (!bf) return f->ids[i];
  return embd_codec_zigzag(i ? f->ids[i - 1] : base_id, f->ids[i]);
}

static embd_result pb_sizes(const embd_codec_stream_frame *f, unsigned bf, uint32_t base_id, uint64_t *packed,
                            uint64_t *payload) {
  if (!f || (!f->ids && f->n_ids) || (!f->tool_calls && f->tool_calls_len))
    return EMBD_ERR_INVALID_ARGUMENT;
  if (f->tool_calls && !pb_tool_calls_ok(f->tool_calls, f->tool_calls_len)) return EMBD_ERR_INVALID_ARGUMENT;
  if (bf == 4 && base_id > INT32_MAX) return EMBD_ERR_INVALID_ARGUMENT; /* spec v0.5: int32 base_id */
  uint64_t pk = 0;
  for (size_t i = 0; i < f->n_ids; i++) {
    const uint64_t v = pb_elem_value(f, bf, base_id, i);
    if (v > UINT32_MAX) return EMBD_ERR_INVALID_ARGUMENT; /* field 1 is uint32 */
    pk += pb_vlen(v);
  }
  uint64_t s = 0;
  if (f->n_ids) s += 1 + pb_vlen(pk) + pk;
  s += 2; /* done, always (10 00 / 10 01): what vLLM and libcodec write, so captures match */
  if (f->finish_reason) s += 1 + pb_vlen(f->finish_reason_len) + f->finish_reason_len;
  if (bf) s += 1 + pb_vlen(base_id);
  if (f->tool_calls) s += f->tool_calls_len;
  if (s > UINT32_MAX) return EMBD_ERR_INVALID_ARGUMENT;
  if ((uint64_t)(size_t)(s + 4) != s + 4) return EMBD_ERR_INVALID_ARGUMENT;
  *packed = pk;
  *payload = s;
  return EMBD_OK;
}

static unsigned pb_delta_field(uint64_t flags) {
  if (flags & ~(uint64_t)EMBD_CODEC_STREAM_BASE_ID_4) return 0;
  return flags ? 4 : 5;
}

static embd_result pb_size_of(const embd_codec_stream_frame *f, unsigned bf, uint32_t base_id, size_t *size) {
  uint64_t pk, s;
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = pb_sizes(f, bf, base_id, &pk, &s);
  if (r != EMBD_OK) return r;
  *size = (size_t)(s + 4);
  return EMBD_OK;
}

static embd_result pb_encode(const embd_codec_stream_frame *f, unsigned bf, uint32_t base_id, void *out, size_t cap,
                             size_t *written) {
  uint64_t pk, s;
  if (written) *written = 0;
  embd_result r = pb_sizes(f, bf, base_id, &pk, &s);
  if (r != EMBD_OK) return r;
  if (cap < s + 4 || !out) {
    if (written) *written = (size_t)(s + 4);
    return out || !cap ? EMBD_ERR_OUTPUT_TOO_SMALL : EMBD_ERR_INVALID_ARGUMENT;
  }
  uint8_t *q = (uint8_t *)out;
  q[0] = (uint8_t)(s >> 24);
  q[1] = (uint8_t)(s >> 16);
  q[2] = (uint8_t)(s >> 8);
  q[3] = (uint8_t)s;
  q += 4;
  if (f->n_ids) {
    *q++ = 0x0a;
    q = pb_put_varint(q, pk);
    for (size_t i = 0; i < f->n_ids; i++) {
      uint64_t v = pb_elem_value(f, bf, base_id, i);
      if (v < 0x80) {
        *q++ = (uint8_t)v;
      } else {
        q = pb_put_varint(q, v);
      }
    }
  }
  *q++ = 0x10;
  *q++ = f->done ? 0x01 : 0x00;
  if (f->finish_reason) {
    *q++ = 0x1a;
    q = pb_put_varint(q, f->finish_reason_len);
    if (f->finish_reason_len) memcpy(q, f->finish_reason, f->finish_reason_len);
    q += f->finish_reason_len;
  }
  if (bf == 4) { /* field-number order, as protobuf-c packs: 4 before the tool_calls, 5 after */
    *q++ = 0x20;
    q = pb_put_varint(q, base_id);
  }
  if (f->tool_calls_len) {
    memcpy(q, f->tool_calls, f->tool_calls_len);
    q += f->tool_calls_len;
  }
  if (bf == 5) {
    *q++ = 0x28;
    q = pb_put_varint(q, base_id);
  }
  if (written) *written = (size_t)(s + 4);
  return EMBD_OK;
}

embd_result embd_codec_proto_encoded_size(const embd_codec_stream_frame *f, size_t *size) {
  return pb_size_of(f, 0, 0, size);
}

embd_result embd_codec_proto_encode(const embd_codec_stream_frame *f, void *out, size_t cap, size_t *written) {
  return pb_encode(f, 0, 0, out, cap, written);
}

embd_result embd_codec_proto_delta_encoded_size(const embd_codec_stream_frame *f, uint32_t base_id, uint64_t flags,
                                                size_t *size) {
  const unsigned bf = pb_delta_field(flags);
  if (!bf) return EMBD_ERR_INVALID_ARGUMENT;
  return pb_size_of(f, bf, base_id, size);
}

embd_result embd_codec_proto_delta_encode(const embd_codec_stream_frame *f, uint32_t base_id, uint64_t flags,
                                          void *out, size_t cap, size_t *written) {
  const unsigned bf = pb_delta_field(flags);
  if (written) *written = 0;
  if (!bf) return EMBD_ERR_INVALID_ARGUMENT;
  return pb_encode(f, bf, base_id, out, cap, written);
}
