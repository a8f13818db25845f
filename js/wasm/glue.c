/* The module's exports for js/src/embd.js: the library's own functions where their
 * arguments are plain numbers and pointers (embd_crc32, embd_to_f32, embd_isa_set, ...),
 * and a few wrappers here where the C API takes structs: each fills one static result
 * block that the JavaScript side reads at fixed offsets (the layout is wasm32's and is
 * written down once, in js/src/embd.js, LAYOUT). One thread per module instance, so
 * static state is safe. Built by scripts/build-wasm.sh only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/base64.h"
#include "embd/batch.h"
#include "embd/convert.h"
#include "embd/cpu.h"
#include "embd/crc32.h"
#include "embd/frame.h"
#include "embd/openai.h"

#define EXPORT(name) __attribute__((export_name(#name)))

static embd_error g_err;
/* The result block: [0] code, [1] offset (low 32 bits), then call-specific words. */
static uint32_t g_out[16];

EXPORT(embd_js_err) embd_error *embd_js_err(void) { return &g_err; }
EXPORT(embd_js_out) uint32_t *embd_js_out(void) { return g_out; }
EXPORT(embd_js_malloc) void *embd_js_malloc(size_t n) { return malloc(n ? n : 1); }
EXPORT(embd_js_free) void embd_js_free(void *p) { free(p); }

/* The C objects JavaScript holds by pointer and must release (each kind is made and
 * released only here): live counts by kind, so that a test can see that a dropped owner was
 * released (js/src/embd.js frees them from a FinalizationRegistry) without reaching into
 * the allocator. */
enum { LIVE_TOKMAP, LIVE_DETOK, LIVE_READER, LIVE_BATCH, LIVE_KINDS };
static uint32_t g_live[LIVE_KINDS];
EXPORT(embd_js_live) uint32_t embd_js_live(uint32_t kind) { return kind < LIVE_KINDS ? g_live[kind] : 0; }

static int done(embd_result r) {
  if (r == EMBD_OK || r == EMBD_BATCH_END) memset(&g_err, 0, sizeof g_err);
  return (int)r;
}

/* Header only: out = dims, version, flags, dtype, frame_size, payload_offset,
 * value_bytes. */
EXPORT(embd_js_frame_header)
int embd_js_frame_header(const void *buf, size_t len, int allow_trailing) {
  embd_frame_decode_options o;
  memset(&o, 0, sizeof o);
  o.allow_trailing = allow_trailing;
  embd_frame_info info;
  embd_result r = embd_frame_header(buf, len, &o, &info, &g_err);
  if (r != EMBD_OK) return done(r);
  g_out[0] = info.dims;
  g_out[1] = info.version;
  g_out[2] = info.flags;
  g_out[3] = info.dtype;
  g_out[4] = (uint32_t)info.frame_size;
  g_out[5] = (uint32_t)info.payload_offset;
  g_out[6] = (uint32_t)info.value_bytes;
  return done(r);
}

/* Any frame (v1/v2, any dtype, CRC trailer) -> floats at out (cap floats). */
EXPORT(embd_js_frame_decode)
int embd_js_frame_decode(const void *buf, size_t len, int allow_trailing, float *out, size_t cap) {
  embd_frame_decode_options o;
  memset(&o, 0, sizeof o);
  o.allow_trailing = allow_trailing;
  embd_frame_info info;
  embd_result r = embd_frame_decode(buf, len, &o, out, cap, &info, &g_err);
  if (r == EMBD_OK) {
    g_out[0] = info.dims;
    g_out[4] = (uint32_t)info.frame_size;
  }
  return done(r);
}

/* floats -> a frame of dtype with flags; out/cap bytes; g_out[0] = bytes written. */
EXPORT(embd_js_frame_encode)
int embd_js_frame_encode(const float *v, size_t dims, unsigned flags, int dtype, void *out,
                         size_t cap) {
  embd_frame_encode_options o;
  memset(&o, 0, sizeof o);
  o.flags = flags;
  o.dtype = (uint64_t)dtype;
  size_t n = 0;
  embd_result r = embd_frame_encode_f32(v, dims, &o, out, cap, &n);
  g_out[0] = (uint32_t)n;
  if (r != EMBD_OK) {
    g_err.result = r;
    g_err.offset = 0;
    snprintf(g_err.message, sizeof g_err.message, "%s", embd_strerror(r));
  }
  return done(r);
}

EXPORT(embd_js_frame_size)
int embd_js_frame_size(size_t dims, int dtype, unsigned flags) {
  size_t n = 0;
  embd_result r = embd_frame_size_dtype(dims, (embd_dtype)dtype, flags, &n);
  g_out[0] = (uint32_t)n;
  return (int)r;
}

/* OpenAI-compatible bodies. One decoder state reused across calls (its storage grows once). */
static embd_openai_embeddings g_oa;
static int g_oa_init;
/* out: values ptr, count, dims, model ptr, model len, has_usage, prompt lo/hi, total lo/hi */
EXPORT(embd_js_openai_decode)
int embd_js_openai_decode(const char *json, size_t len, int dtype, int order, uint32_t dims) {
  if (!g_oa_init) embd_openai_init(&g_oa), g_oa_init = 1;
  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = (uint64_t)dtype;
  o.byte_order = (uint32_t)order;
  o.expected_dims = dims;
  embd_result r = embd_openai_decode(&g_oa, json, len, &o, &g_err);
  if (r != EMBD_OK) return done(r);
  g_out[0] = (uint32_t)(uintptr_t)g_oa.values;
  g_out[1] = (uint32_t)g_oa.count;
  g_out[2] = (uint32_t)g_oa.dims;
  g_out[3] = (uint32_t)(uintptr_t)g_oa.model;
  g_out[4] = (uint32_t)strlen(g_oa.model);
  g_out[5] = (uint32_t)g_oa.has_usage;
  g_out[6] = (uint32_t)g_oa.prompt_tokens;
  g_out[7] = (uint32_t)(g_oa.prompt_tokens >> 32);
  g_out[8] = (uint32_t)g_oa.total_tokens;
  g_out[9] = (uint32_t)(g_oa.total_tokens >> 32);
  return done(r);
}

/* One base64 embedding string of dtype/order -> floats at out (cap floats); g_out[0] = n.
 * Decodes into scratch then converts (f32 LE: straight into out). */
static uint8_t *g_scratch;
static size_t g_scratch_cap;
EXPORT(embd_js_b64_embedding)
int embd_js_b64_embedding(const char *s, size_t len, int dtype, int order, float *out, size_t cap) {
  size_t n = 0;
  embd_result r;
  if (dtype == EMBD_DTYPE_F32 && order == EMBD_ORDER_LE) {
    r = embd_base64_decode_f32(s, len, 0, out, cap, &n, &g_err);
    g_out[0] = (uint32_t)n;
    return done(r);
  }
  const size_t max = embd_base64_decoded_max(len);
  if (max > g_scratch_cap) {
    free(g_scratch);
    g_scratch = (uint8_t *)malloc(max ? max : 1);
    g_scratch_cap = g_scratch ? max : 0;
    if (!g_scratch) {
      g_err.result = EMBD_ERR_OUT_OF_MEMORY;
      g_err.offset = 0;
      snprintf(g_err.message, sizeof g_err.message, "out of memory");
      return EMBD_ERR_OUT_OF_MEMORY;
    }
  }
  size_t bytes = 0;
  r = embd_base64_decode(s, len, 0, g_scratch, g_scratch_cap, &bytes, &g_err);
  if (r != EMBD_OK) return done(r);
  r = embd_dtype_count((embd_dtype)dtype, bytes, &n);
  if (r != EMBD_OK) {
    g_err.result = r;
    g_err.offset = 0;
    snprintf(g_err.message, sizeof g_err.message,
             "base64: %zu bytes, not a whole number of %s elements", bytes,
             embd_dtype_name((embd_dtype)dtype));
    return (int)r;
  }
  g_out[0] = (uint32_t)n;
  if (n > cap) return done(EMBD_ERR_OUTPUT_TOO_SMALL);
  r = embd_to_f32(out, g_scratch, n, (embd_dtype)dtype, (embd_byte_order)order);
  return done(r);
}

/* Batch envelopes: a state per generator (an iterator and its current frame), so that
 * generators can interleave. out after next: index, frame offset, dims, version, flags,
 * dtype, frame_size, payload_offset, value_bytes. The state owns buf (an embd_js_malloc
 * copy) once begin returns it: embd_js_batch_end frees both, so one call releases it. */
struct batch_state {
  embd_batch_iter it;
  embd_batch_frame fr;
  void *buf;
};
EXPORT(embd_js_batch_begin)
void *embd_js_batch_begin(void *buf, size_t len) {
  struct batch_state *s = (struct batch_state *)calloc(1, sizeof *s);
  if (!s) return NULL;
  s->buf = buf;
  g_live[LIVE_BATCH]++;
  g_out[0] = 0;
  embd_result r = embd_batch_iter_init(&s->it, buf, len, NULL, &g_err);
  g_out[1] = (uint32_t)done(r);
  if (r == EMBD_OK) g_out[0] = s->it.count;
  return s;
}
EXPORT(embd_js_batch_next)
int embd_js_batch_next(struct batch_state *s) {
  embd_result r = embd_batch_next(&s->it, &s->fr, &g_err);
  if (r != EMBD_OK) return done(r);
  g_out[0] = s->fr.index;
  g_out[1] = (uint32_t)s->fr.offset;
  g_out[2] = s->fr.info.dims;
  g_out[3] = s->fr.info.version;
  g_out[4] = s->fr.info.flags;
  g_out[5] = s->fr.info.dtype;
  g_out[6] = (uint32_t)s->fr.info.frame_size;
  g_out[7] = (uint32_t)s->fr.info.payload_offset;
  g_out[8] = (uint32_t)s->fr.info.value_bytes;
  return done(r);
}
EXPORT(embd_js_batch_frame_decode)
int embd_js_batch_frame_decode(struct batch_state *s, float *out, size_t cap) {
  return done(embd_batch_frame_decode(&s->fr, out, cap, &g_err));
}
EXPORT(embd_js_batch_end)
void embd_js_batch_end(struct batch_state *s) {
  if (!s) return;
  g_live[LIVE_BATCH]--;
  free(s->buf);
  free(s);
}

/* Codec session frames (embd/codec.h). out after next: type, payload offset in buf,
 * payload length, the next position, the next index. */
#include "embd/codec.h"
EXPORT(embd_js_codec_next)
int embd_js_codec_next(const void *buf, size_t len, uint32_t pos, uint32_t index) {
  size_t p = pos;
  uint32_t i = index;
  embd_codec_frame f;
  embd_result r = embd_codec_next(buf, len, &p, &i, NULL, &f, &g_err);
  if (r != EMBD_OK) return done(r);
  g_out[0] = f.type;
  g_out[1] = (uint32_t)(f.payload ? (size_t)(f.payload - (const uint8_t *)buf) : 0);
  g_out[2] = (uint32_t)f.payload_len;
  g_out[3] = (uint32_t)p;
  g_out[4] = i;
  return done(r);
}
/* The ids of the TOKENS frame at buf (host order) into out[cap]; g_out[0] = n. */
EXPORT(embd_js_codec_tokens)
int embd_js_codec_tokens(const void *buf, size_t len, uint32_t *out, size_t cap) {
  embd_codec_frame f;
  size_t used = 0, n = 0;
  embd_result r = embd_codec_decode_frame(buf, len, NULL, &f, &used, &g_err);
  if (r != EMBD_OK) return done(r);
  if (f.type != EMBD_CODEC_TOKENS) {
    g_err.result = EMBD_ERR_INVALID_ARGUMENT;
    g_err.offset = 0;
    snprintf(g_err.message, sizeof g_err.message, "a %s frame, not TOKENS", embd_codec_type_name(f.type));
    return EMBD_ERR_INVALID_ARGUMENT;
  }
  if (used != len) {
    g_err.result = EMBD_ERR_INVALID_ARGUMENT;
    g_err.offset = used;
    snprintf(g_err.message, sizeof g_err.message, "%zu bytes after the TOKENS frame", len - used);
    return EMBD_ERR_INVALID_ARGUMENT;
  }
  r = embd_codec_tokens(&f, out, cap, &n);
  g_out[0] = (uint32_t)n;
  return done(r);
}

/* protobuf and msgpack stream modes (embd/codec_stream.h): a reader whose callback appends
 * each frame to a queue the JavaScript side reads after every feed and then empties. A record:
 * u32 n_ids, done, finish_reason_len (0xFFFFFFFF: absent), tool_calls_len (same), index,
 * offset, size; then the ids, the finish_reason bytes, the tool_calls bytes, each padded
 * to 4 bytes. */
#include "embd/codec_stream.h"
struct proto_js {
  embd_codec_proto_reader *r;      /* one of the two: */
  embd_codec_msgpack_reader *mr;   /* embd_js_msgpack_create's; feed/drain/destroy serve both */
  uint8_t *q;
  size_t len, cap;
};
static int q_put(struct proto_js *s, const void *p, size_t n) {
  const size_t pad = (n + 3) & ~(size_t)3;
  if (s->len + pad > s->cap) {
    size_t c = s->cap ? s->cap * 2 : 4096;
    while (c < s->len + pad) c *= 2;
    uint8_t *q = (uint8_t *)realloc(s->q, c);
    if (!q) return 0;
    s->q = q;
    s->cap = c;
  }
  if (n) memcpy(s->q + s->len, p, n);
  memset(s->q + s->len + n, 0, pad - n);
  s->len += pad;
  return 1;
}
static embd_result on_proto(void *user, const embd_codec_stream_frame *f) {
  struct proto_js *s = (struct proto_js *)user;
  const uint32_t hdr[7] = {(uint32_t)f->n_ids, (uint32_t)f->done,
                           f->finish_reason ? (uint32_t)f->finish_reason_len : 0xFFFFFFFFu,
                           f->tool_calls ? (uint32_t)f->tool_calls_len : 0xFFFFFFFFu,
                           (uint32_t)f->index, (uint32_t)f->offset, (uint32_t)f->size};
  if (!q_put(s, hdr, sizeof hdr) || !q_put(s, f->ids, f->n_ids * 4) ||
      !q_put(s, f->finish_reason, f->finish_reason ? f->finish_reason_len : 0) ||
      !q_put(s, f->tool_calls, f->tool_calls ? f->tool_calls_len : 0))
    return EMBD_ERR_OUT_OF_MEMORY;
  return EMBD_OK;
}
static struct proto_js *mode_create(int msgpack, uint32_t flags, uint32_t max_frame_bytes) {
  struct proto_js *s = (struct proto_js *)calloc(1, sizeof *s);
  if (!s) return NULL;
  embd_codec_stream_options o;
  memset(&o, 0, sizeof o);
  o.max_frame_bytes = max_frame_bytes;
  o.on_frame = on_proto;
  o.user = s;
  o.flags = flags;
  embd_result r = msgpack ? embd_codec_msgpack_create(&o, &s->mr) : embd_codec_proto_create(&o, &s->r);
  g_out[0] = (uint32_t)r;
  if (r != EMBD_OK) {
    free(s);
    return NULL;
  }
  g_live[LIVE_READER]++;
  return s;
}
EXPORT(embd_js_proto_create)
struct proto_js *embd_js_proto_create(uint32_t flags, uint32_t max_frame_bytes) {
  return mode_create(0, flags, max_frame_bytes);
}
EXPORT(embd_js_msgpack_create)
struct proto_js *embd_js_msgpack_create(uint32_t flags, uint32_t max_frame_bytes) {
  return mode_create(1, flags, max_frame_bytes);
}
/* out: queue pointer, queue bytes (read them, then embd_js_proto_drain). */
EXPORT(embd_js_proto_feed)
int embd_js_proto_feed(struct proto_js *s, const void *data, size_t len, int finish) {
  embd_result r = s->mr ? (finish ? embd_codec_msgpack_finish(s->mr, &g_err) : embd_codec_msgpack_feed(s->mr, data, len, &g_err))
                        : (finish ? embd_codec_proto_finish(s->r, &g_err) : embd_codec_proto_feed(s->r, data, len, &g_err));
  g_out[0] = (uint32_t)(uintptr_t)s->q;
  g_out[1] = (uint32_t)s->len;
  return done(r);
}
EXPORT(embd_js_proto_drain) void embd_js_proto_drain(struct proto_js *s) { s->len = 0; }
EXPORT(embd_js_proto_destroy)
void embd_js_proto_destroy(struct proto_js *s) {
  if (!s) return;
  g_live[LIVE_READER]--;
  embd_codec_proto_destroy(s->r);
  embd_codec_msgpack_destroy(s->mr);
  free(s->q);
  free(s);
}
/* One frame: ids, done, finish_reason (NULL when flen is 0xFFFFFFFF); delta: -1 plain,
 * else the flags of embd_codec_proto_delta_encode with base_id (msgpack: -1 plain, 0
 * msgpack-delta). out/cap; g_out[0] = bytes (the size needed when cap is short). */
static int mode_encode(int msgpack, const uint32_t *ids, size_t n, int done_, const char *fr, uint32_t flen,
                       int delta, uint32_t base_id, void *out, size_t cap) {
  embd_codec_stream_frame f;
  memset(&f, 0, sizeof f);
  f.ids = n ? ids : NULL;
  f.n_ids = n;
  f.done = done_;
  f.finish_reason = flen == 0xFFFFFFFFu ? NULL : (fr ? fr : "");
  f.finish_reason_len = flen == 0xFFFFFFFFu ? 0 : flen;
  size_t w = 0;
  embd_result r = msgpack ? (delta < 0 ? embd_codec_msgpack_encode(&f, out, cap, &w)
                                       : embd_codec_msgpack_delta_encode(&f, base_id, out, cap, &w))
                  : delta < 0 ? embd_codec_proto_encode(&f, out, cap, &w)
                              : embd_codec_proto_delta_encode(&f, base_id, (uint64_t)delta, out, cap, &w);
  g_out[0] = (uint32_t)w;
  return (int)r;
}
EXPORT(embd_js_msgpack_encode)
int embd_js_msgpack_encode(const uint32_t *ids, size_t n, int done_, const char *fr, uint32_t flen, int delta,
                           uint32_t base_id, void *out, size_t cap) {
  return mode_encode(1, ids, n, done_, fr, flen, delta, base_id, out, cap);
}
EXPORT(embd_js_proto_encode)
int embd_js_proto_encode(const uint32_t *ids, size_t n, int done_, const char *fr, uint32_t flen,
                         int delta, uint32_t base_id, void *out, size_t cap) {
  return mode_encode(0, ids, n, done_, fr, flen, delta, base_id, out, cap);
}

/* Tokenizer maps and detokenization (embd/tokmap.h). The functions with plain arguments
 * (embd_tokmap_hash, _id, _version, _schema, _vocab_size, _token_count, _special_count,
 * embd_tokmap_sha256, embd_detok_reset, _pending, _bound) are called as they are; these
 * wrap the ones with out-pointers, and the makers and releasers (for the live counts). */
#include "embd/tokmap.h"
/* out[2] = the map (expected_hash: NULL or a NUL-terminated pin). */
EXPORT(embd_js_tokmap_load)
int embd_js_tokmap_load(const char *json, size_t len, const char *expected_hash) {
  embd_tokmap *m = NULL;
  embd_result r = embd_tokmap_load(json, len, expected_hash, &m, &g_err);
  g_out[2] = (uint32_t)(uintptr_t)m;
  if (m) g_live[LIVE_TOKMAP]++;
  return done(r);
}
EXPORT(embd_js_tokmap_free)
void embd_js_tokmap_free(embd_tokmap *m) {
  if (m) g_live[LIVE_TOKMAP]--;
  embd_tokmap_free(m);
}
/* out[2] = bytes, out[3] = length, out[4] = kind (embd_token_kind). */
EXPORT(embd_js_tokmap_lookup)
int embd_js_tokmap_lookup(const embd_tokmap *m, uint32_t id) {
  const char *b = NULL;
  size_t n = 0;
  embd_token_kind k = 0;
  embd_result r = embd_tokmap_lookup(m, id, &b, &n, &k);
  g_out[2] = (uint32_t)(uintptr_t)b;
  g_out[3] = (uint32_t)n;
  g_out[4] = (uint32_t)k;
  return (int)r;
}
/* out[2] = the detokenizer. */
EXPORT(embd_js_detok_create)
int embd_js_detok_create(const embd_tokmap *m, unsigned flags) {
  embd_detok *d = NULL;
  embd_result r = embd_detok_create(m, flags, &d);
  g_out[2] = (uint32_t)(uintptr_t)d;
  if (d) g_live[LIVE_DETOK]++;
  return (int)r;
}
EXPORT(embd_js_detok_destroy)
void embd_js_detok_destroy(embd_detok *d) {
  if (d) g_live[LIVE_DETOK]--;
  embd_detok_destroy(d);
}
/* finish = 0: feed n ids; 1: finish. out[2] = bytes written (or needed). */
EXPORT(embd_js_detok_feed)
int embd_js_detok_feed(embd_detok *d, const uint32_t *ids, size_t n, char *out, size_t cap, int finish) {
  size_t w = 0;
  embd_result r = finish ? embd_detok_finish(d, out, cap, &w, &g_err)
                         : embd_detok_feed(d, ids, n, out, cap, &w, &g_err);
  g_out[2] = (uint32_t)w;
  return done(r);
}
/* HELLO (ready = 0) or READY (1) JSON through the C parser (embd/codec.h): its checks, error
 * code and byte offset; the JavaScript side then reads the validated text with JSON.parse. */
EXPORT(embd_js_codec_handshake)
int embd_js_codec_handshake(const char *json, size_t len, int ready) {
  embd_result r;
  if (ready) {
    embd_codec_ready rd;
    r = embd_codec_ready_parse(json, len, &rd, &g_err);
    if (r == EMBD_OK) embd_codec_ready_free(&rd);
  } else {
    embd_codec_hello h;
    r = embd_codec_hello_parse(json, len, &h, &g_err);
    if (r == EMBD_OK) embd_codec_hello_free(&h);
  }
  return done(r);
}
