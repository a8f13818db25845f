/* The engines' stream modes (embd/codec_stream.h): msgpack and protobuf readers and
 * encoders, against msgpack-c's packer/unpacker and protobuf-c's pack/unpack as oracles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <msgpack.h>
#include <signal.h>

#include "codec.pb-c.h"
#include "embd/codec_stream.h"
#include "testutil.h"

/* ---- recording what a reader delivers ---------------------------------------------------- */

typedef struct rec_frame {
  uint32_t *ids;
  size_t n_ids;
  int done;
  int has_fr;
  char fr[64];
  size_t fr_len;
  uint8_t *tc;
  size_t tc_len;
  int has_tc;
  uint64_t offset, index;
  size_t size;
} rec_frame;

typedef struct rec {
  rec_frame *f;
  size_t n, cap;
  embd_result result;
  embd_error err;
  int stop_at; /* callback returns EMBD_ERR_INVALID_ARGUMENT at this frame (-1: never) */
} rec;

static embd_result on_frame(void *user, const embd_codec_stream_frame *fr) {
  rec *r = (rec *)user;
  if (r->stop_at >= 0 && (size_t)r->stop_at == r->n) return EMBD_ERR_INVALID_ARGUMENT;
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 16;
    r->f = realloc(r->f, r->cap * sizeof *r->f);
    assert_non_null(r->f);
  }
  rec_frame *x = &r->f[r->n++];
  memset(x, 0, sizeof *x);
  x->ids = malloc(fr->n_ids * 4 + 4);
  if (fr->n_ids) memcpy(x->ids, fr->ids, fr->n_ids * 4);
  x->n_ids = fr->n_ids;
  x->done = fr->done;
  x->has_fr = fr->finish_reason != NULL;
  x->fr_len = fr->finish_reason_len;
  if (x->has_fr) memcpy(x->fr, fr->finish_reason, fr->finish_reason_len < 63 ? fr->finish_reason_len : 63);
  x->has_tc = fr->tool_calls != NULL;
  x->tc_len = fr->tool_calls_len;
  x->tc = malloc(fr->tool_calls_len + 1);
  if (fr->tool_calls_len) memcpy(x->tc, fr->tool_calls, fr->tool_calls_len);
  x->offset = fr->offset;
  x->index = fr->index;
  x->size = fr->size;
  return EMBD_OK;
}

static void rec_free(rec *r) {
  for (size_t i = 0; i < r->n; i++) {
    free(r->f[i].ids);
    free(r->f[i].tc);
  }
  free(r->f);
  memset(r, 0, sizeof *r);
}

static int rec_eq(const rec *a, const rec *b) {
  if (a->n != b->n || a->result != b->result) return 0;
  if (a->result != EMBD_OK && (a->err.offset != b->err.offset || strcmp(a->err.message, b->err.message))) return 0;
  for (size_t i = 0; i < a->n; i++) {
    const rec_frame *x = &a->f[i], *y = &b->f[i];
    if (x->n_ids != y->n_ids || x->done != y->done || x->has_fr != y->has_fr || x->fr_len != y->fr_len ||
        memcmp(x->fr, y->fr, sizeof x->fr) || x->has_tc != y->has_tc || x->tc_len != y->tc_len ||
        x->offset != y->offset || x->index != y->index || x->size != y->size)
      return 0;
    if (x->n_ids && memcmp(x->ids, y->ids, x->n_ids * 4)) return 0;
    if (x->tc_len && memcmp(x->tc, y->tc, x->tc_len)) return 0;
  }
  return 1;
}

enum { MODE_MSGPACK, MODE_PROTO };

/* EMBD_CODEC_STREAM_* flags for the readers run() makes (0: the plain modes). */
static uint64_t g_flags;

/* Feeds b[0..len) cut at cuts[0..ncuts) (increasing), then finish. */
static void run(int mode, const uint8_t *b, size_t len, const size_t *cuts, size_t ncuts,
                size_t max_frame, size_t max_ids, int do_finish, rec *r) {
  memset(r, 0, sizeof *r);
  r->stop_at = -1;
  embd_codec_stream_options o = {
      .max_frame_bytes = max_frame, .max_ids = max_ids, .on_frame = on_frame, .user = r, .flags = g_flags};
  embd_codec_msgpack_reader *m = NULL;
  embd_codec_proto_reader *p = NULL;
  if (mode == MODE_MSGPACK) assert_int_equal(embd_codec_msgpack_create(&o, &m), EMBD_OK);
  else assert_int_equal(embd_codec_proto_create(&o, &p), EMBD_OK);
  size_t at = 0;
  embd_result res = EMBD_OK;
  for (size_t i = 0; i <= ncuts && res == EMBD_OK; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    res = mode == MODE_MSGPACK ? embd_codec_msgpack_feed(m, b + at, end - at, &r->err)
                               : embd_codec_proto_feed(p, b + at, end - at, &r->err);
    at = end;
  }
  if (res == EMBD_OK && do_finish)
    res = mode == MODE_MSGPACK ? embd_codec_msgpack_finish(m, &r->err) : embd_codec_proto_finish(p, &r->err);
  r->result = res;
  if (res != EMBD_OK) { /* sticky */
    embd_error e2;
    embd_result again = mode == MODE_MSGPACK ? embd_codec_msgpack_feed(m, "\x80", 1, &e2)
                                             : embd_codec_proto_feed(p, "\0\0\0\1\x10", 5, &e2);
    assert_int_equal(again, res);
    assert_int_equal(e2.offset, r->err.offset);
    assert_string_equal(e2.message, r->err.message);
    again = mode == MODE_MSGPACK ? embd_codec_msgpack_finish(m, &e2) : embd_codec_proto_finish(p, &e2);
    assert_int_equal(again, res);
  }
  embd_codec_msgpack_destroy(m);
  embd_codec_proto_destroy(p);
}

static void run1(int mode, const uint8_t *b, size_t len, rec *r) { run(mode, b, len, NULL, 0, 1 << 20, 0, 1, r); }

/* ---- building streams with the oracles -------------------------------------------------------- */

typedef struct want {
  const uint32_t *ids;
  size_t n;
  int done;
  const char *fr; /* NULL: absent */
  int tool_calls;  /* number of tool calls */
} want;

static const uint32_t ids_a[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 151643, UINT32_MAX};
static const uint32_t ids_b[] = {9707};
static const uint32_t ids_c[] = {42, 16383, 16384, 2097151, 2097152, 268435455, 268435456};
static const want wants[] = {
    {ids_a, 10, 0, NULL, 0},  {ids_b, 1, 0, NULL, 0},     {NULL, 0, 0, NULL, 0},
    {ids_c, 7, 0, NULL, 2},   {ids_b, 1, 0, "", 0},       {ids_a, 3, 1, "eos_token", 1},
};
#define NWANTS (sizeof wants / sizeof wants[0])

/* The encoder's frame for a want, with the tool_calls value's bytes tc (NULL: none). */
static embd_codec_stream_frame want_frame(const want *w, const uint8_t *tc, size_t tc_len) {
  embd_codec_stream_frame f = {.ids = w->ids, .n_ids = w->n, .done = w->done, .finish_reason = w->fr,
                               .finish_reason_len = w->fr ? strlen(w->fr) : 0,
                               .tool_calls = tc, .tool_calls_len = tc ? tc_len : 0};
  return f;
}

/* The tool_calls value msgpack-c writes for the test's `k` tool calls: an array of maps
 * {name: get_weather, arguments_json: {"city":"Oslo"}} (the protobuf ones: pb_tool_calls). */
static void mp_pack_tool_calls(msgpack_packer *pk, int k) {
  msgpack_pack_array(pk, (size_t)k);
  for (int i = 0; i < k; i++) {
    msgpack_pack_map(pk, 2);
    msgpack_pack_str_with_body(pk, "name", 4);
    msgpack_pack_str_with_body(pk, "get_weather", 11);
    msgpack_pack_str_with_body(pk, "arguments_json", 14);
    msgpack_pack_str_with_body(pk, "{\"city\":\"Oslo\"}", 15);
  }
}

static void mp_pack_frame(msgpack_packer *pk, const want *w, int extra) {
  size_t n = 2 + (w->fr != NULL) + (w->tool_calls > 0) + (extra ? 1 : 0);
  msgpack_pack_map(pk, n);
  if (extra) { /* an unknown key first */
    msgpack_pack_str_with_body(pk, "model", 5);
    msgpack_pack_array(pk, 2);
    msgpack_pack_double(pk, 1.5);
    msgpack_pack_nil(pk);
  }
  msgpack_pack_str_with_body(pk, "ids", 3);
  msgpack_pack_array(pk, w->n);
  for (size_t i = 0; i < w->n; i++) msgpack_pack_uint32(pk, w->ids[i]);
  msgpack_pack_str_with_body(pk, "done", 4);
  if (w->done) msgpack_pack_true(pk);
  else msgpack_pack_false(pk);
  if (w->fr) {
    msgpack_pack_str_with_body(pk, "finish_reason", 13);
    msgpack_pack_str_with_body(pk, w->fr, strlen(w->fr));
  }
  if (w->tool_calls) {
    msgpack_pack_str_with_body(pk, "tool_calls", 10);
    mp_pack_tool_calls(pk, w->tool_calls);
  }
}

/* The protobuf writers' shared parts: `k` (at most 4) tool calls, each get_weather for Oslo,
 * into tc with tcp pointing at them; and the 4-byte big-endian length prefix before the n
 * bytes packed at out + 4 (returns the whole frame's size). */
static void pb_tool_calls(int k, ToolCall tc[4], ToolCall *tcp[4]) {
  for (int i = 0; i < k; i++) {
    tool_call__init(&tc[i]);
    tc[i].name = (char *)"get_weather";
    tc[i].arguments_json = (char *)"{\"city\":\"Oslo\"}";
    tc[i].id = (char *)"tc_1";
    tcp[i] = &tc[i];
  }
}

static size_t pb_length_prefix(uint8_t *out, size_t n) {
  out[0] = (uint8_t)(n >> 24);
  out[1] = (uint8_t)(n >> 16);
  out[2] = (uint8_t)(n >> 8);
  out[3] = (uint8_t)n;
  return n + 4;
}

/* always_done: has_done set on every frame, which makes protobuf-c write 10 00 for false:
 * the bytes vLLM's encoder and libcodec write. Else canonical proto3: done only when true
 * (and ids = [], done = false is a zero-length frame). */
static size_t pb_pack_frame(const want *w, int always_done, uint8_t *out) {
  CodecFrame f = CODEC_FRAME__INIT;
  ToolCall tc[4], *tcp[4];
  f.n_ids = w->n;
  f.ids = (uint32_t *)(uintptr_t)w->ids;
  f.has_done = always_done || w->done;
  f.done = w->done;
  f.finish_reason = (char *)(uintptr_t)w->fr;
  pb_tool_calls(w->tool_calls, tc, tcp);
  f.n_tool_calls = (size_t)w->tool_calls;
  f.tool_calls = tcp;
  size_t n = codec_frame__pack(&f, out + 4);
  return pb_length_prefix(out, n);
}

static void check_wants(const rec *r, int mode) {
  assert_int_equal(r->result, EMBD_OK);
  assert_int_equal(r->n, NWANTS);
  for (size_t i = 0; i < NWANTS; i++) {
    const rec_frame *x = &r->f[i];
    assert_int_equal(x->n_ids, wants[i].n);
    if (wants[i].n) assert_memory_equal(x->ids, wants[i].ids, wants[i].n * 4);
    assert_int_equal(x->done, wants[i].done);
    assert_int_equal(x->has_fr, wants[i].fr != NULL);
    if (wants[i].fr) {
      assert_int_equal(x->fr_len, strlen(wants[i].fr));
      assert_memory_equal(x->fr, wants[i].fr, x->fr_len);
    }
    assert_int_equal(x->has_tc, wants[i].tool_calls > 0);
    if (wants[i].tool_calls && mode == MODE_PROTO) {
      CodecFrame *t = codec_frame__unpack(NULL, x->tc_len, x->tc);
      assert_non_null(t);
      assert_int_equal(t->n_tool_calls, (size_t)wants[i].tool_calls);
      assert_string_equal(t->tool_calls[0]->name, "get_weather");
      assert_int_equal(t->n_ids, 0);
      codec_frame__free_unpacked(t, NULL);
    } else if (wants[i].tool_calls) {
      msgpack_zone z;
      msgpack_object o;
      size_t off = 0;
      msgpack_zone_init(&z, 2048);
      assert_int_equal(msgpack_unpack((const char *)x->tc, x->tc_len, &off, &z, &o), MSGPACK_UNPACK_SUCCESS);
      assert_int_equal(off, x->tc_len);
      assert_int_equal(o.type, MSGPACK_OBJECT_ARRAY);
      assert_int_equal(o.via.array.size, (uint32_t)wants[i].tool_calls);
      msgpack_zone_destroy(&z);
    }
  }
}

static void test_msgpack_oracle(void **state) {
  (void)state;
  /* msgpack-c's packer -> our reader */
  for (int extra = 0; extra < 2; extra++) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    for (size_t i = 0; i < NWANTS; i++) mp_pack_frame(&pk, &wants[i], extra);
    rec r;
    run1(MODE_MSGPACK, (const uint8_t *)sb.data, sb.size, &r);
    check_wants(&r, MODE_MSGPACK);
    rec_free(&r);
    /* our encoder == msgpack-c's packer byte for byte (no unknown key), and decodes */
    if (!extra) {
      uint8_t out[4096];
      size_t at = 0;
      for (size_t i = 0; i < NWANTS; i++) {
        msgpack_sbuffer one;
        msgpack_packer p1;
        msgpack_sbuffer_init(&one);
        msgpack_packer_init(&p1, &one, msgpack_sbuffer_write);
        mp_pack_frame(&p1, &wants[i], 0);
        embd_codec_stream_frame f = want_frame(&wants[i], NULL, 0);
        if (wants[i].tool_calls) { /* the tool_calls value as msgpack-c wrote it */
          size_t vo = one.size;
          msgpack_zone z;
          msgpack_object o;
          size_t off = 0;
          msgpack_zone_init(&z, 2048);
          assert_int_equal(msgpack_unpack(one.data, one.size, &off, &z, &o), MSGPACK_UNPACK_SUCCESS);
          /* the value follows the key "tool_calls" at the end */
          const char *k = NULL;
          for (size_t q = 0; q + 11 <= one.size && !k; q++)
            if (!memcmp(one.data + q, "\xaatool_calls", 11)) k = one.data + q;
          assert_non_null(k);
          vo = (size_t)(k - one.data) + 11;
          f.tool_calls = (const uint8_t *)one.data + vo;
          f.tool_calls_len = one.size - vo;
          msgpack_zone_destroy(&z);
        }
        size_t sz = 0, w = 0;
        assert_int_equal(embd_codec_msgpack_encoded_size(&f, &sz), EMBD_OK);
        assert_int_equal(sz, one.size);
        assert_int_equal(embd_codec_msgpack_encode(&f, out + at, sz - 1, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
        assert_int_equal(w, sz);
        assert_int_equal(embd_codec_msgpack_encode(&f, out + at, sizeof out - at, &w), EMBD_OK);
        assert_int_equal(w, sz);
        assert_memory_equal(out + at, one.data, sz);
        /* and msgpack-c unpacks it to the same values */
        msgpack_zone z;
        msgpack_object o;
        size_t off = 0;
        msgpack_zone_init(&z, 2048);
        assert_int_equal(msgpack_unpack((const char *)out + at, sz, &off, &z, &o), MSGPACK_UNPACK_SUCCESS);
        /* msgpack-c's zone may hand out elements aligned to 4 only (32-bit ARM): copy them */
        msgpack_object_kv kv0;
        memcpy(&kv0, o.via.map.ptr, sizeof kv0);
        assert_int_equal(kv0.val.via.array.size, wants[i].n);
        for (size_t j = 0; j < wants[i].n; j++) {
          msgpack_object e;
          memcpy(&e, (const char *)kv0.val.via.array.ptr + j * sizeof e, sizeof e);
          assert_int_equal(e.via.u64, wants[i].ids[j]);
        }
        msgpack_zone_destroy(&z);
        at += sz;
        msgpack_sbuffer_destroy(&one);
      }
      assert_int_equal(at, sb.size);
      assert_memory_equal(out, sb.data, at);
    }
    msgpack_sbuffer_destroy(&sb);
  }
  /* signed encodings of non-negative values, str8 keys, nil finish_reason, no done */
  static const uint8_t odd[] = {0x83, 0xd9, 3, 'i', 'd', 's', 0x93, 0xd0, 5, 0xd1, 0x01, 0x00, 0xd3, 0, 0, 0, 0, 0xff,
                                0xff, 0xff, 0xff, 0xad, 'f', 'i', 'n', 'i', 's', 'h', '_', 'r', 'e', 'a', 's', 'o', 'n',
                                0xc0, 0x01, 0x02};
  rec r;
  run1(MODE_MSGPACK, odd, sizeof odd, &r);
  assert_int_equal(r.result, EMBD_OK);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.f[0].n_ids, 3);
  assert_int_equal(r.f[0].ids[0], 5);
  assert_int_equal(r.f[0].ids[1], 256);
  assert_int_equal(r.f[0].ids[2], UINT32_MAX);
  assert_int_equal(r.f[0].done, 0);
  assert_int_equal(r.f[0].has_fr, 0);
  rec_free(&r);
}

static void test_proto_oracle(void **state) {
  (void)state;
  uint8_t s[4096], out[4096];
  /* Both shapes protobuf-c writes decode to every want, the empty frame included (in the
   * canonical shape it is a zero-length frame: 00 00 00 00); embd's encoder writes the
   * always-done shape byte for byte. */
  for (int always_done = 0; always_done < 2; always_done++) {
    size_t len = 0, zero_length = 0;
    for (size_t i = 0; i < NWANTS; i++) {
      const size_t n = pb_pack_frame(&wants[i], always_done, s + len);
      zero_length += n == 4;
      len += n;
    }
    /* the wants hold one empty frame: zero-length in the canonical shape only */
    assert_int_equal(zero_length, always_done ? 0 : 1);
    rec r;
    run1(MODE_PROTO, s, len, &r);
    check_wants(&r, MODE_PROTO);
    for (size_t i = 0; i < NWANTS; i++) {
      const rec_frame *x = &r.f[i];
      assert_int_equal(x->has_tc, wants[i].tool_calls > 0);
      if (wants[i].tool_calls) {
        CodecFrame *t = codec_frame__unpack(NULL, x->tc_len, x->tc);
        assert_non_null(t);
        assert_int_equal(t->n_tool_calls, (size_t)wants[i].tool_calls);
        assert_string_equal(t->tool_calls[0]->arguments_json, "{\"city\":\"Oslo\"}");
        codec_frame__free_unpacked(t, NULL);
      }
      if (!always_done) continue;
      /* our encoder == protobuf-c's pack with has_done, and protobuf-c unpacks ours */
      embd_codec_stream_frame f = want_frame(&wants[i], x->has_tc ? x->tc : NULL, x->tc_len);
      size_t sz = 0, w = 0;
      assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_OK);
      assert_int_equal(sz, x->size);
      assert_int_equal(embd_codec_proto_encode(&f, out, sizeof out, &w), EMBD_OK);
      assert_int_equal(w, sz);
      assert_memory_equal(out, s + x->offset, sz);
      CodecFrame *u = codec_frame__unpack(NULL, sz - 4, out + 4);
      assert_non_null(u);
      assert_int_equal(u->n_ids, wants[i].n);
      for (size_t j = 0; j < u->n_ids; j++) assert_int_equal(u->ids[j], wants[i].ids[j]);
      assert_true(u->has_done); /* present on every frame */
      assert_int_equal(u->done, wants[i].done);
      codec_frame__free_unpacked(u, NULL);
    }
    rec_free(&r);
  }
  /* The bytes pinned: ids [] / done false is 00 00 00 02 10 00 (vLLM's encode_protobuf for
   * a keep-alive frame), one id 7 not done 00 00 00 05 0a 01 07 10 00. */
  embd_codec_stream_frame e = {0};
  size_t w;
  assert_int_equal(embd_codec_proto_encode(&e, out, sizeof out, &w), EMBD_OK);
  assert_int_equal(w, 6);
  assert_memory_equal(out, "\0\0\0\x02\x10\x00", 6);
  const uint32_t seven = 7;
  e.ids = &seven;
  e.n_ids = 1;
  assert_int_equal(embd_codec_proto_encode(&e, out, sizeof out, &w), EMBD_OK);
  assert_int_equal(w, 9);
  assert_memory_equal(out, "\0\0\0\x05\x0a\x01\x07\x10\x00", 9);
  /* A zero-length frame after a done one: an empty, not-done frame of 4 bytes at byte 6. */
  rec r;
  run1(MODE_PROTO, (const uint8_t *)"\0\0\0\2\x10\x01\0\0\0\0", 10, &r);
  assert_int_equal(r.result, EMBD_OK);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.f[0].done, 1);
  assert_int_equal(r.f[1].done, 0);
  assert_int_equal(r.f[1].n_ids, 0);
  assert_int_equal(r.f[1].has_fr, 0);
  assert_int_equal(r.f[1].has_tc, 0);
  assert_int_equal(r.f[1].offset, 6);
  assert_int_equal(r.f[1].size, 4);
  rec_free(&r);

  /* the engine forks' shape: done=false written explicitly, unpacked ids, interleaved
   * tool_calls (gathered), finish_reason twice (last wins), unknown fields of each wire type */
  static const uint8_t forks[] = {
      0, 0, 0, 0,                               /* length, patched below */
      0x10, 0x00,                               /* done = false */
      0x08, 0xeb, 0x4b,                         /* ids: 9707 unpacked */
      0x22, 0x02, 0x0a, 0x00,                   /* tool_calls[0] = {name: ""} */
      0x28, 0x96, 0x01,                         /* field 5 varint 150 (unknown) */
      0x31, 1, 2, 3, 4, 5, 6, 7, 8,              /* field 6 fixed64 */
      0x3a, 0x03, 'a', 'b', 'c',                /* field 7 bytes */
      0x45, 1, 2, 3, 4,                         /* field 8 fixed32 */
      0x22, 0x00,                               /* tool_calls[1] = {} */
      0x0a, 0x02, 0x01, 0x02,                   /* ids: 1, 2 packed */
      0x1a, 0x01, 'x', 0x1a, 0x03, 'e', 'o', 's', /* finish_reason twice */
      0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00,       /* field 2^29-1 varint 0 */
  };
  uint8_t fk[sizeof forks];
  memcpy(fk, forks, sizeof fk);
  fk[3] = (uint8_t)(sizeof fk - 4);
  run1(MODE_PROTO, fk, sizeof fk, &r);
  assert_int_equal(r.result, EMBD_OK);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.f[0].n_ids, 3);
  assert_int_equal(r.f[0].ids[0], 9707);
  assert_int_equal(r.f[0].ids[2], 2);
  assert_int_equal(r.f[0].fr_len, 3);
  assert_memory_equal(r.f[0].fr, "eos", 3);
  assert_int_equal(r.f[0].tc_len, 6);
  assert_memory_equal(r.f[0].tc, "\x22\x02\x0a\x00\x22\x00", 6);
  CodecFrame *u = codec_frame__unpack(NULL, sizeof fk - 4, fk + 4); /* protobuf-c agrees */
  assert_non_null(u);
  assert_int_equal(u->n_ids, 3);
  assert_string_equal(u->finish_reason, "eos");
  assert_int_equal(u->n_tool_calls, 2);
  codec_frame__free_unpacked(u, NULL);
  rec_free(&r);
}

static void test_bytes_per_token(void **state) {
  (void)state;
  static const uint32_t samples[] = {0, 9707, 151643, 2097151, 2097152, UINT32_MAX};
  for (size_t i = 0; i < sizeof samples / 4; i++) {
    embd_codec_stream_frame f = {0};
    f.ids = &samples[i];
    f.n_ids = 1;
    size_t sz = 0;
    assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_OK);
    assert_true(sz <= 13); /* 4 prefix + ids tag, length, 1..5 + done 2 */
    if (samples[i] < 2097152) assert_true(sz <= 11); /* a 21-bit vocabulary: 11 bytes */
  }
}

/* ---- chunkings ------------------------------------------------------------------------------ */

static size_t small_stream(int mode, uint8_t *s) {
  static const uint32_t a[] = {1, 300, 70000}, b[] = {UINT32_MAX};
  embd_codec_stream_frame fs[3] = {{a, 3, 0, NULL, 0, NULL, 0, 0, 0, 0},
                            {b, 1, 0, NULL, 0, NULL, 0, 0, 0, 0},
                            {NULL, 0, 1, "length", 6, NULL, 0, 0, 0, 0}};
  static const uint8_t mtc[] = {0x91, 0x81, 0xa1, 'n', 0xa1, 'f'}, ptc[] = {0x22, 0x03, 0x0a, 0x01, 'f'};
  fs[1].tool_calls = mode == MODE_MSGPACK ? mtc : ptc;
  fs[1].tool_calls_len = mode == MODE_MSGPACK ? sizeof mtc : sizeof ptc;
  size_t at = 0, w;
  for (int i = 0; i < 3; i++) {
    embd_result r = mode == MODE_MSGPACK ? embd_codec_msgpack_encode(&fs[i], s + at, 256, &w)
                                         : embd_codec_proto_encode(&fs[i], s + at, 256, &w);
    assert_int_equal(r, EMBD_OK);
    at += w;
  }
  return at;
}

static void test_small_chunkings(void **state) {
  (void)state;
  for (int mode = 0; mode < 2; mode++) {
    uint8_t s[512];
    size_t len = small_stream(mode, s);
    rec one, r;
    run1(mode, s, len, &one);
    assert_int_equal(one.result, EMBD_OK);
    assert_int_equal(one.n, 3);
    size_t cuts[1024];
    for (size_t i = 0; i <= len; i++) { /* every 2-chunk split */
      cuts[0] = i;
      run(mode, s, len, cuts, 1, 1 << 20, 0, 1, &r);
      assert_true(rec_eq(&one, &r));
      rec_free(&r);
      for (size_t j = i; j <= len; j++) { /* every 3-chunk split */
        cuts[1] = j;
        run(mode, s, len, cuts, 2, 1 << 20, 0, 1, &r);
        assert_true(rec_eq(&one, &r));
        rec_free(&r);
      }
    }
    for (size_t i = 0; i < len; i++) cuts[i] = i + 1; /* 1-byte chunks */
    run(mode, s, len, cuts, len - 1, 1 << 20, 0, 1, &r);
    assert_true(rec_eq(&one, &r));
    rec_free(&r);
    /* truncation at every byte: an error at finish, at the end offset, unless at a frame end */
    for (size_t k = 1; k < len; k++) {
      run(mode, s, k, NULL, 0, 1 << 20, 0, 1, &r);
      int boundary = 0;
      for (size_t f = 0; f < one.n; f++) boundary |= one.f[f].offset + one.f[f].size == k;
      if (boundary) {
        assert_int_equal(r.result, EMBD_OK);
      } else {
        assert_int_equal(r.result, mode == MODE_MSGPACK ? EMBD_ERR_MSGPACK : EMBD_ERR_PROTOBUF);
        assert_int_equal(r.err.offset, k);
        assert_non_null(strstr(r.err.message, "ends inside"));
      }
      rec_free(&r);
    }
    rec_free(&one);
  }
}

static void test_large_random(void **state) {
  (void)state;
  tu_rng g = {tu_seed()};
  const size_t nframes = tu_scaled(3000, 300);
  for (int mode = 0; mode < 2; mode++) {
    size_t cap = nframes * 700 + 64, len = 0;
    uint8_t *s = malloc(cap);
    uint32_t ids[150];
    for (size_t i = 0; i < nframes; i++) {
      embd_codec_stream_frame f = {0};
      f.n_ids = tu_range(&g, 1, 150);
      for (size_t j = 0; j < f.n_ids; j++) ids[j] = tu_u32(&g) >> tu_range(&g, 0, 31);
      f.ids = ids;
      f.done = i + 1 == nframes;
      if (f.done) f.finish_reason = "eos_token", f.finish_reason_len = 9;
      size_t w;
      embd_result r = mode == MODE_MSGPACK ? embd_codec_msgpack_encode(&f, s + len, cap - len, &w)
                                           : embd_codec_proto_encode(&f, s + len, cap - len, &w);
      assert_int_equal(r, EMBD_OK);
      len += w;
    }
    rec one, r;
    run1(mode, s, len, &one);
    assert_int_equal(one.result, EMBD_OK);
    assert_int_equal(one.n, nframes);
    size_t *cuts = malloc(len * sizeof *cuts);
    for (int t = 0; t < 8; t++) {
      size_t n = 0, at = 0, span = (size_t)1 << tu_range(&g, 0, 12);
      for (;;) {
        at += tu_range(&g, 1, span);
        if (at >= len) break;
        cuts[n++] = at;
      }
      run(mode, s, len, cuts, n, 1 << 20, 0, 1, &r);
      assert_true(rec_eq(&one, &r));
      rec_free(&r);
    }
    free(cuts);
    rec_free(&one);
    free(s);
  }
}

/* ---- errors ----------------------------------------------------------------------------------- */

typedef struct bad {
  int mode;
  const char *bytes;
  size_t len;
  size_t max_frame, max_ids;
  size_t frames_before; /* frames delivered before the error */
  size_t offset;
  const char *msg; /* a substring of the message */
  uint64_t flags;  /* EMBD_CODEC_STREAM_* of the reader */
} bad;

#define B(s) s, sizeof(s) - 1
static const bad bads[] = {
    /* msgpack */
    {MODE_MSGPACK, B("\x92\x01\x02"), 100, 0, 0, 0, "a frame is a map, this is an array", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\x01\x05"), 100, 0, 1, 7, "a frame is a map, this is an integer", 0},
    {MODE_MSGPACK, B("\x81\xa3idx\x90"), 100, 0, 0, 0, "no \"ids\" key", 0},
    {MODE_MSGPACK, B("\x80"), 100, 0, 0, 0, "no \"ids\" key", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x01"), 100, 0, 0, 5, "ids is an unsigned integer, expected an array", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x94\x01\x02\x03\xa1x"), 100, 0, 0, 9, "ids[3] is a string, expected an unsigned integer", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x92\x01\xff"), 100, 0, 0, 7, "ids[1] is a negative integer", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x92\x01\xca\x3f\x80\x00\x00"), 100, 0, 0, 7, "ids[1] is a float", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\xcf\x00\x00\x00\x01\x00\x00\x00\x00"), 100, 0, 0, 6, "ids[0] = 4294967296 is above UINT32_MAX", 0},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xa4" "done\x01"), 100, 0, 0, 11, "done is an unsigned integer, expected a bool", 0},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xad" "finish_reason\x01"), 100, 0, 0, 20, "finish_reason is an unsigned integer", 0},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xa3ids\x90"), 100, 0, 0, 6, "duplicate key \"ids\"", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x93\x01\x02\x03"), 100, 2, 0, 5, "3 ids, above max_ids (2)", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\xdd\xff\xff\xff\xff"), 100, 0, 0, 5, "an array of 4294967295 elements does not fit", 0},
    {MODE_MSGPACK, B("\xdf\xff\xff\xff\xff"), 100, 0, 0, 0, "a map of 4294967295 entries does not fit", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\xc6\xff\xff\xff\xff"), 100, 0, 0, 5, "a binary of 4294967295 bytes does not fit", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\xc1"), 100, 0, 0, 6, "0xc1", 0},
    {MODE_MSGPACK, B("\x81\xa3ids\x90\x81\xa3ids\x91\x01"), 6, 0, 1, 11, "an array of 1 elements does not fit in max_frame_bytes (6)", 0},
    /* the prefix names the frame's first byte, err.offset the byte at fault */
    {MODE_MSGPACK, B("\x81\xa3ids\x90"), 5, 0, 0, 5, "frame 0 at byte 0: frame larger than max_frame_bytes (5)", 0},
    /* protobuf */
    {MODE_PROTO, B("\0\0\1\0"), 100, 0, 0, 0, "length prefix 256 above max_frame_bytes (100)", 0},
    {MODE_PROTO, B("\xff\xff\xff\xff"), 100, 0, 0, 0, "length prefix 4294967295 above", 0},
    {MODE_PROTO, B("\0\0\0\3\x0a\x01\x80"), 100, 0, 0, 6, "ids[0]: varint runs past the end of the packed ids", 0},
    {MODE_PROTO, B("\0\0\0\2\x08\x80"), 100, 0, 0, 5, "field 1: varint runs past the end of the frame", 0},
    {MODE_PROTO, B("\0\0\0\x0c\x0a\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80"), 100, 0, 0, 6, "ids[0]: varint longer than 10 bytes", 0},
    {MODE_PROTO, B("\0\0\0\x0b\x28\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02"), 100, 0, 0, 5, "field 5: varint longer than 10 bytes", 0},
    {MODE_PROTO, B("\0\0\0\x07\x0a\x05\x80\x80\x80\x80\x10"), 100, 0, 0, 6, "ids[0] = 4294967296 is above UINT32_MAX", 0},
    {MODE_PROTO, B("\0\0\0\x02\x0a\x05"), 100, 0, 0, 5, "field 1: length 5 runs past the end of the frame (0 bytes left)", 0},
    {MODE_PROTO, B("\0\0\0\x02\x0b\x00"), 100, 0, 0, 4, "field 1 has wire type 3 (start group): groups are not supported", 0},
    {MODE_PROTO, B("\0\0\0\x02\x2c\x00"), 100, 0, 0, 4, "field 5 has wire type 4 (end group)", 0},
    {MODE_PROTO, B("\0\0\0\x02\x2e\x00"), 100, 0, 0, 4, "wire type 6 (undefined): not a protobuf wire type", 0},
    {MODE_PROTO, B("\0\0\0\x02\x2f\x00"), 100, 0, 0, 4, "wire type 7", 0},
    {MODE_PROTO, B("\0\0\0\x02\x00\x00"), 100, 0, 0, 4, "field number 0", 0},
    {MODE_PROTO, B("\0\0\0\x02\x12\x00"), 100, 0, 0, 4, "done (field 2) has wire type 2", 0},
    {MODE_PROTO, B("\0\0\0\x02\x18\x00"), 100, 0, 0, 4, "finish_reason (field 3) has wire type 0", 0},
    {MODE_PROTO, B("\0\0\0\x05\x25\x00\x00\x00\x00"), 100, 0, 0, 4, "tool_calls (field 4) has wire type 5", 0},
    {MODE_PROTO, B("\0\0\0\x03\x31\x00\x00"), 100, 0, 0, 5, "field 6: 8-byte value runs past", 0},
    {MODE_PROTO, B("\0\0\0\x06\x80\x80\x80\x80\x80\x01"), 100, 0, 0, 4, "field tag longer than 5 bytes", 0},
    {MODE_PROTO, B("\0\0\0\x01\x80"), 100, 0, 0, 4, "field tag runs past the end", 0},
    {MODE_PROTO, B("\0\0\0\x05\x0a\x03\x01\x02\x03"), 100, 2, 0, 8, "more than max_ids (2) ids", 0},
    /* msgpack-delta */
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x00\xa3ids\x90"), 100, 0, 0, 10, "an \"ids\" key in a msgpack-delta frame", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x81\xa7" "base_id\x00"), 100, 0, 0, 0, "no \"ids_delta\" key", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x81\xa9ids_delta\x90"), 100, 0, 0, 0, "no \"base_id\" key", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x81\xa3ids\x90"), 100, 0, 0, 1, "an \"ids\" key in a msgpack-delta frame", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\xa1x\xa9ids_delta\x90"), 100, 0, 0, 9, "base_id is a string, expected an unsigned integer", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\xff\xa9ids_delta\x90"), 100, 0, 0, 9, "base_id is a negative integer", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\xcf\x00\x00\x00\x01\x00\x00\x00\x00\xa9ids_delta\x90"), 100, 0, 0, 9, "base_id = 4294967296 is above UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x00\xa9ids_delta\x01"), 100, 0, 0, 20, "ids_delta is an unsigned integer, expected an array", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x00\xa9ids_delta\x91\xff"), 100, 0, 0, 21, "ids_delta[0] is a negative integer, expected an unsigned integer", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x03\xa9ids_delta\x92\x01\x09"), 100, 0, 0, 22, "ids_delta[1] = 9 (a step of -5 from 2) takes the id out of 0..UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\xce\xff\xff\xff\xff\xa9ids_delta\x91\x02"), 100, 0, 0, 25, "ids_delta[0] = 2 (a step of 1 from 4294967295) takes the id out", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x00\xa9ids_delta\x91\xcf\xff\xff\xff\xff\xff\xff\xff\xff"), 100, 0, 0, 21, "(a step of -9223372036854775808 from 0)", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x83\xa7" "base_id\x00\xa7" "base_id\x00\xa9ids_delta\x90"), 100, 0, 0, 10, "duplicate key \"base_id\"", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x82\xa7" "base_id\x00\xa9ids_delta\x93\x01\x02\x03"), 100, 2, 0, 20, "3 ids, above max_ids (2)", EMBD_CODEC_STREAM_DELTA},
    {MODE_MSGPACK, B("\x83\xa7" "base_id\x00\xa9ids_delta\x90\xa4" "done\x01"), 100, 0, 0, 26, "done is an unsigned integer, expected a bool", EMBD_CODEC_STREAM_DELTA},
    /* protobuf-delta, base_id in field 5 (the draft) */
    {MODE_PROTO, B("\0\0\0\2\x10\x00"), 100, 0, 0, 0, "no base_id (field 5): every protobuf-delta frame has one", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\0"), 100, 0, 0, 0, "no base_id (field 5)", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\2\x2a\x00"), 100, 0, 0, 4, "base_id (field 5) has wire type 2 (length-delimited), expected 0 (varint)", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\5\x2d\0\0\0\0"), 100, 0, 0, 4, "base_id (field 5) has wire type 5", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\6\x28\x80\x80\x80\x80\x10"), 100, 0, 0, 5, "base_id (field 5) = 4294967296 is above UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\5\x0a\x01\x03\x28\x01"), 100, 0, 0, 6, "ids_delta[0] = 3 (a step of -2 from 1) takes the id out of 0..UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\6\x08\x00\x08\x07\x28\x02"), 100, 0, 0, 7, "ids_delta[1] = 7 (a step of -4 from 2)", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\x09\x28\xff\xff\xff\xff\x0f\x0a\x01\x02"), 100, 0, 0, 12, "ids_delta[0] = 2 (a step of 1 from 4294967295)", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\2\x20\x01"), 100, 0, 0, 4, "tool_calls (field 4) has wire type 0", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\x09\x0a\x05\x80\x80\x80\x80\x10\x28\x00"), 100, 0, 0, 6, "ids_delta[0] = 4294967296 is above UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\x08\x08\x80\x80\x80\x80\x10\x28\x00"), 100, 0, 0, 5, "ids_delta[0] = 4294967296 is above UINT32_MAX", EMBD_CODEC_STREAM_DELTA},
    {MODE_PROTO, B("\0\0\0\x03\x0a\x01\x80"), 100, 0, 0, 6, "ids_delta[0]: varint runs past the end of the packed ids", EMBD_CODEC_STREAM_DELTA},
    /* protobuf-delta, base_id in field 4 (spec v0.5, the option) */
    {MODE_PROTO, B("\0\0\0\2\x10\x00"), 100, 0, 0, 0, "no base_id (field 4)", EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4},
    {MODE_PROTO, B("\0\0\0\2\x28\x01"), 100, 0, 0, 0, "no base_id (field 4)", EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4},
    {MODE_PROTO, B("\0\0\0\6\x20\x80\x80\x80\x80\x08"), 100, 0, 0, 5, "base_id (field 4) = 2147483648 is above INT32_MAX", EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4},
    {MODE_PROTO, B("\0\0\0\x0b\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), 100, 0, 0, 5, "base_id (field 4) = 18446744073709551615 is above INT32_MAX", EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4},
    {MODE_PROTO, B("\0\0\0\5\x25\0\0\0\0"), 100, 0, 0, 4, "base_id (field 4) has wire type 5", EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4},
};

static void test_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
    const bad *b = &bads[i];
    rec one, r;
    g_flags = b->flags;
    run(b->mode, (const uint8_t *)b->bytes, b->len, NULL, 0, b->max_frame, b->max_ids, 1, &one);
    if (one.result != (b->mode == MODE_MSGPACK ? EMBD_ERR_MSGPACK : EMBD_ERR_PROTOBUF) ||
        one.err.offset != b->offset || one.n != b->frames_before || !strstr(one.err.message, b->msg))
      fail_msg("bad[%zu]: result %d frames %zu offset %zu message \"%s\"; want offset %zu, \"%s\"", i,
               (int)one.result, one.n, one.err.offset, one.err.message, b->offset, b->msg);
    size_t cuts[64];
    for (size_t k = 0; k + 1 < b->len; k++) cuts[k] = k + 1;
    run(b->mode, (const uint8_t *)b->bytes, b->len, cuts, b->len - 1, b->max_frame, b->max_ids, 1, &r);
    if (!rec_eq(&one, &r)) fail_msg("bad[%zu]: 1-byte chunks differ: %s", i, r.err.message);
    rec_free(&r);
    rec_free(&one);
  }
  g_flags = 0;
}

/* {"ids": [], "x": `arrays` one-element arrays around the byte `last`}: decodes when ok,
 * else the depth error at the 32nd level's byte (8 + 31). */
static void depth_case(int arrays, uint8_t last, int ok) {
  uint8_t s[128];
  size_t n = 0;
  s[n++] = 0x82;
  memcpy(s + n, "\xa3ids\x90\xa1x", 7);
  n += 7;
  for (int d = 0; d < arrays; d++) s[n++] = 0x91;
  s[n++] = last;
  rec r;
  run1(MODE_MSGPACK, s, n, &r);
  if (ok) {
    assert_int_equal(r.result, EMBD_OK);
  } else {
    assert_int_equal(r.result, EMBD_ERR_MSGPACK);
    assert_non_null(strstr(r.err.message, "nested deeper than 32"));
    assert_int_equal(r.err.offset, 8 + 31);
  }
  rec_free(&r);
}

static void test_depth(void **state) {
  (void)state;
  /* the map plus depth-1 arrays around the ids' value */
  for (int depth = 31; depth <= 33; depth++) depth_case(depth - 1, 0x01, depth <= 32);
  /* An empty container counts as a level too (msgpack-c, the decoder before embd's own,
   * refused one opened with 32 levels open): the map, 30 or 31 arrays, then []. */
  for (int arrays = 30; arrays <= 31; arrays++) depth_case(arrays, 0x90, arrays == 30);
}

/* A naive reader loops on these: vLLM's first CodecRequest decoder consumed nothing for wire
 * types 1, 3, 4 (an endless loop), and a reader that accepts zero-length frames without
 * consuming their prefix spins on a stream of zeros. They must end, with an error or
 * frames, and quickly. */
static void test_no_endless_loop(void **state) {
  (void)state;
  static const char *const inputs[] = {"\0\0\0\x02\x09\x00", "\0\0\0\x01\x0b", "\0\0\0\x01\x0c",
                                       "\0\0\0\x02\x0a\x00", "\0\0\0\0\0\0\0\0\0\0\0\0"};
  static const size_t lens[] = {6, 5, 5, 6, 12};
  alarm(20);
  for (size_t i = 0; i < 5; i++) {
    rec r;
    run1(MODE_PROTO, (const uint8_t *)inputs[i], lens[i], &r);
    /* 12 zero bytes are 3 empty frames (4 bytes each); the others one frame or an error */
    if (i == 4) {
      assert_int_equal(r.result, EMBD_OK);
      assert_int_equal(r.n, 3);
      for (size_t k = 0; k < 3; k++) {
        assert_int_equal(r.f[k].n_ids, 0);
        assert_int_equal(r.f[k].done, 0);
        assert_int_equal(r.f[k].size, 4);
        assert_int_equal(r.f[k].offset, 4 * k);
      }
    } else {
      assert_true(r.result != EMBD_OK || r.n == 1);
    }
    rec_free(&r);
  }
  /* msgpack: many empty maps / unknown keys with empty values */
  uint8_t z[4096];
  memset(z, 0x80, sizeof z);
  rec r;
  run1(MODE_MSGPACK, z, sizeof z, &r);
  assert_int_equal(r.result, EMBD_ERR_MSGPACK);
  rec_free(&r);
  alarm(0);
}

/* ---- the delta variants ------------------------------------------------------------------- */

/* zigzag(next - prev), written here from the rule (draft-dunn-codec-00 "Delta-varint axis":
 * d[0] = zigzag(ids[0] - base_id), d[k] = zigzag(ids[k] - ids[k-1])), not the library's. */
static uint64_t zz(uint32_t prev, uint32_t next) {
  int64_t d = (int64_t)next - (int64_t)prev;
  return d >= 0 ? (uint64_t)(2 * d) : (uint64_t)(-2 * d - 1);
}

/* msgpack-c writes what the Codec Python reference (msgspec) writes for a delta frame: a
 * map base_id, ids_delta, done, finish_reason (nil when None), here plus tool_calls. */
static void mp_pack_delta(msgpack_packer *pk, const want *w, uint32_t base) {
  msgpack_pack_map(pk, 4 + (w->tool_calls > 0));
  msgpack_pack_str_with_body(pk, "base_id", 7);
  msgpack_pack_uint32(pk, base);
  msgpack_pack_str_with_body(pk, "ids_delta", 9);
  msgpack_pack_array(pk, w->n);
  for (size_t i = 0; i < w->n; i++) msgpack_pack_uint64(pk, zz(i ? w->ids[i - 1] : base, w->ids[i]));
  msgpack_pack_str_with_body(pk, "done", 4);
  if (w->done) msgpack_pack_true(pk);
  else msgpack_pack_false(pk);
  msgpack_pack_str_with_body(pk, "finish_reason", 13);
  if (w->fr) msgpack_pack_str_with_body(pk, w->fr, strlen(w->fr));
  else msgpack_pack_nil(pk);
  if (w->tool_calls) {
    msgpack_pack_str_with_body(pk, "tool_calls", 10);
    mp_pack_tool_calls(pk, w->tool_calls);
  }
}

/* Checks what a delta reader delivered for wants[first..] (absolute ids back). */
static void check_delta(const rec *r, size_t first, const char *what) {
  if (r->result != EMBD_OK) fail_msg("%s: %s", what, r->err.message);
  assert_int_equal(r->n, NWANTS - first);
  for (size_t i = first; i < NWANTS; i++) {
    const rec_frame *x = &r->f[i - first];
    const want *w = &wants[i];
    assert_int_equal(x->n_ids, w->n);
    if (w->n) assert_memory_equal(x->ids, w->ids, w->n * 4);
    assert_int_equal(x->done, w->done);
    assert_int_equal(x->has_fr, w->fr != NULL);
    if (w->fr) assert_int_equal(x->fr_len, strlen(w->fr));
    assert_int_equal(x->has_tc, w->tool_calls > 0);
  }
}

static void test_msgpack_delta(void **state) {
  (void)state;
  msgpack_sbuffer sb, tcb, one;
  msgpack_sbuffer_init(&sb);
  uint8_t *ours = malloc(1 << 16);
  size_t len = 0;
  uint32_t base = 0;
  for (size_t i = 0; i < NWANTS; i++) {
    const want *w = &wants[i];
    msgpack_sbuffer_init(&one);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &one, msgpack_sbuffer_write);
    mp_pack_delta(&pk, w, base);
    msgpack_sbuffer_write(&sb, one.data, one.size);
    /* the tool_calls value's bytes, as the encoder takes them */
    msgpack_sbuffer_init(&tcb);
    if (w->tool_calls) {
      msgpack_packer tp;
      msgpack_packer_init(&tp, &tcb, msgpack_sbuffer_write);
      mp_pack_tool_calls(&tp, w->tool_calls);
    }
    embd_codec_stream_frame f = want_frame(w, w->tool_calls ? (const uint8_t *)tcb.data : NULL, tcb.size);
    size_t sz = 0, wr = 0;
    assert_int_equal(embd_codec_msgpack_delta_encoded_size(&f, base, &sz), EMBD_OK);
    assert_int_equal(sz, one.size);
    assert_int_equal(embd_codec_msgpack_delta_encode(&f, base, ours + len, sz - 1, &wr), EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(wr, sz);
    assert_int_equal(embd_codec_msgpack_delta_encode(&f, base, ours + len, sz, &wr), EMBD_OK);
    assert_int_equal(wr, sz);
    if (memcmp(ours + len, one.data, sz)) fail_msg("msgpack-delta frame %zu differs from msgpack-c's", i);
    len += sz;
    if (w->n) base = w->ids[w->n - 1]; /* the reference encoder's running base */
    msgpack_sbuffer_destroy(&tcb);
    msgpack_sbuffer_destroy(&one);
  }
  assert_int_equal(len, sb.size);
  /* the peer's bytes for one frame, spelled out: ids [100, 101, 99] from base 0 */
  {
    static const uint32_t ids[] = {100, 101, 99};
    static const uint8_t want_b[] = "\x84\xa7" "base_id\x00\xa9ids_delta\x93\xcc\xc8\x02\x03\xa4" "done\xc2\xad"
                                    "finish_reason\xc0";
    embd_codec_stream_frame f = {.ids = ids, .n_ids = 3};
    uint8_t b[64];
    size_t wr = 0;
    assert_int_equal(embd_codec_msgpack_delta_encode(&f, 0, b, sizeof b, &wr), EMBD_OK);
    assert_int_equal(wr, sizeof want_b - 1);
    assert_memory_equal(b, want_b, wr);
  }
  g_flags = EMBD_CODEC_STREAM_DELTA;
  rec r, r1;
  run1(MODE_MSGPACK, (const uint8_t *)sb.data, sb.size, &r);
  check_delta(&r, 0, "msgpack-delta");
  size_t *cuts = malloc(sb.size * sizeof *cuts);
  for (size_t k = 0; k + 1 < sb.size; k++) cuts[k] = k + 1;
  run(MODE_MSGPACK, (const uint8_t *)sb.data, sb.size, cuts, sb.size - 1, 1 << 20, 0, 1, &r1);
  assert_true(rec_eq(&r, &r1));
  rec_free(&r1);
  rec_free(&r);
  /* the same bytes in plain msgpack mode: no "ids" key */
  g_flags = 0;
  run1(MODE_MSGPACK, (const uint8_t *)sb.data, sb.size, &r);
  assert_int_equal(r.result, EMBD_ERR_MSGPACK);
  assert_non_null(strstr(r.err.message, "no \"ids\" key"));
  rec_free(&r);
  /* a plain stream in delta mode: the shapes do not mix */
  g_flags = EMBD_CODEC_STREAM_DELTA;
  run1(MODE_MSGPACK, (const uint8_t *)"\x82\xa3ids\x91\x05\xa4" "done\xc3", 12, &r);
  assert_int_equal(r.result, EMBD_ERR_MSGPACK);
  rec_free(&r);
  g_flags = 0;
  /* an unknown "delta" key (spec v0.5's summary) is ignored like any other */
  {
    g_flags = EMBD_CODEC_STREAM_DELTA;
    static const uint8_t b[] = "\x83\xa5" "delta\xc3\xa7" "base_id\x0a\xa9ids_delta\x92\x03\x04";
    run1(MODE_MSGPACK, b, sizeof b - 1, &r);
    assert_int_equal(r.result, EMBD_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.f[0].n_ids, 2);
    assert_int_equal(r.f[0].ids[0], 8); /* 10 - 2 */
    assert_int_equal(r.f[0].ids[1], 10); /* 8 + 2 */
    rec_free(&r);
    g_flags = 0;
  }
  /* a big jump needs a 9-byte msgpack integer: still encodable and decodable */
  {
    static const uint32_t ids[] = {UINT32_MAX, 0};
    embd_codec_stream_frame f = {.ids = ids, .n_ids = 2};
    uint8_t b[64];
    size_t wr = 0;
    assert_int_equal(embd_codec_msgpack_delta_encode(&f, 0, b, sizeof b, &wr), EMBD_OK);
    g_flags = EMBD_CODEC_STREAM_DELTA;
    run1(MODE_MSGPACK, b, wr, &r);
    assert_int_equal(r.result, EMBD_OK);
    assert_int_equal(r.f[0].ids[0], UINT32_MAX);
    assert_int_equal(r.f[0].ids[1], 0);
    rec_free(&r);
    g_flags = 0;
  }
  /* options: BASE_ID_4 is protobuf's; unknown bits are refused */
  embd_codec_stream_options o = {.max_frame_bytes = 64, .on_frame = on_frame, .user = &r};
  embd_codec_msgpack_reader *m = NULL;
  o.flags = EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4;
  assert_int_equal(embd_codec_msgpack_create(&o, &m), EMBD_ERR_INVALID_ARGUMENT);
  o.flags = 4;
  assert_int_equal(embd_codec_msgpack_create(&o, &m), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(m);
  free(cuts);
  free(ours);
  msgpack_sbuffer_destroy(&sb);
}

/* protobuf-c's pack of the oracle messages (proto/codec.proto: CodecDeltaFrame for the
 * draft's field 5, CodecDeltaFrameSpec for spec v0.5's field 4), tool-call records after. */
static size_t pb_pack_delta(const want *w, uint32_t base, int spec, uint8_t *out) {
  uint32_t d[16];
  for (size_t i = 0; i < w->n; i++) {
    uint64_t z = zz(i ? w->ids[i - 1] : base, w->ids[i]);
    assert_true(z <= UINT32_MAX);
    d[i] = (uint32_t)z;
  }
  size_t n;
  if (!spec) {
    CodecDeltaFrame f = CODEC_DELTA_FRAME__INIT;
    ToolCall tc[4], *tcp[4];
    f.n_ids_delta = w->n;
    f.ids_delta = d;
    f.has_done = 1;
    f.done = w->done;
    f.finish_reason = (char *)(uintptr_t)w->fr;
    pb_tool_calls(w->tool_calls, tc, tcp);
    f.n_tool_calls = (size_t)w->tool_calls;
    f.tool_calls = tcp;
    f.has_base_id = 1;
    f.base_id = base;
    n = codec_delta_frame__pack(&f, out + 4);
  } else {
    CodecDeltaFrameSpec f = CODEC_DELTA_FRAME_SPEC__INIT;
    f.n_ids_delta = w->n;
    f.ids_delta = d;
    f.has_done = 1;
    f.done = w->done;
    f.finish_reason = (char *)(uintptr_t)w->fr;
    f.has_base_id = 1;
    f.base_id = (int32_t)base;
    n = codec_delta_frame_spec__pack(&f, out + 4);
    if (w->tool_calls) { /* field 4's records follow base_id (4) in field order */
      uint8_t tmp[1024];
      want t = {NULL, 0, 0, NULL, w->tool_calls};
      size_t tn = pb_pack_frame(&t, 0, tmp);
      memcpy(out + 4 + n, tmp + 4, tn - 4);
      n += tn - 4;
    }
  }
  return pb_length_prefix(out, n);
}

static void test_proto_delta(void **state) {
  (void)state;
  uint8_t *ref = malloc(1 << 16), *ours = malloc(1 << 16), tcb[1024];
  for (int spec = 0; spec <= 1; spec++) {
    const uint64_t eflags = spec ? EMBD_CODEC_STREAM_BASE_ID_4 : 0;
    size_t rl = 0, ol = 0;
    uint32_t base = 0;
    /* wants[0] jumps from 151643 to UINT32_MAX: zigzag 2^33-ish, no uint32 field holds it */
    {
      embd_codec_stream_frame f = {.ids = wants[0].ids, .n_ids = wants[0].n};
      size_t sz = 0;
      assert_int_equal(embd_codec_proto_delta_encoded_size(&f, 0, eflags, &sz), EMBD_ERR_INVALID_ARGUMENT);
    }
    for (size_t i = 1; i < NWANTS; i++) {
      const want *w = &wants[i];
      size_t n = pb_pack_delta(w, base, spec, ref + rl);
      size_t tcn = 0;
      if (w->tool_calls) {
        want t = {NULL, 0, 0, NULL, w->tool_calls};
        tcn = pb_pack_frame(&t, 0, tcb) - 4;
      }
      embd_codec_stream_frame f = want_frame(w, tcn ? tcb + 4 : NULL, tcn);
      size_t sz = 0, wr = 0;
      assert_int_equal(embd_codec_proto_delta_encoded_size(&f, base, eflags, &sz), EMBD_OK);
      assert_int_equal(sz, n);
      assert_int_equal(embd_codec_proto_delta_encode(&f, base, eflags, ours + ol, sz, &wr), EMBD_OK);
      if (memcmp(ours + ol, ref + rl, n)) fail_msg("protobuf-delta (%s) frame %zu differs from protobuf-c's",
                                                   spec ? "field 4" : "field 5", i);
      if (!spec) { /* and protobuf-c reads ours back */
        CodecDeltaFrame *u = codec_delta_frame__unpack(NULL, n - 4, ours + ol + 4);
        assert_non_null(u);
        assert_true(u->has_base_id);
        assert_int_equal(u->base_id, base);
        assert_int_equal(u->n_ids_delta, w->n);
        assert_int_equal(u->n_tool_calls, (size_t)w->tool_calls);
        codec_delta_frame__free_unpacked(u, NULL);
      }
      rl += n;
      ol += n;
      if (w->n) base = w->ids[w->n - 1];
    }
    g_flags = EMBD_CODEC_STREAM_DELTA | eflags;
    rec r, r1;
    run1(MODE_PROTO, ref, rl, &r);
    check_delta(&r, 1, spec ? "protobuf-delta field 4" : "protobuf-delta field 5");
    size_t *cuts = malloc(rl * sizeof *cuts);
    for (size_t k = 0; k + 1 < rl; k++) cuts[k] = k + 1;
    run(MODE_PROTO, ref, rl, cuts, rl - 1, 1 << 20, 0, 1, &r1);
    assert_true(rec_eq(&r, &r1));
    rec_free(&r1);
    rec_free(&r);
    /* the other numbering reads the stream wrongly, and says so */
    g_flags = EMBD_CODEC_STREAM_DELTA | (spec ? 0 : EMBD_CODEC_STREAM_BASE_ID_4);
    run1(MODE_PROTO, ref, rl, &r);
    assert_int_equal(r.result, EMBD_ERR_PROTOBUF);
    assert_non_null(strstr(r.err.message, spec ? "tool_calls (field 4) has wire type 0" : "no base_id (field 4)"));
    rec_free(&r);
    g_flags = 0;
    free(cuts);
  }
  /* base_id after the deltas (any field order is valid protobuf), and the last one wins */
  {
    static const uint8_t b[] = "\0\0\0\x08\x0a\x02\x02\x04\x28\x07\x28\x0a";
    g_flags = EMBD_CODEC_STREAM_DELTA;
    rec r;
    run1(MODE_PROTO, b, sizeof b - 1, &r);
    assert_int_equal(r.result, EMBD_OK);
    assert_int_equal(r.f[0].n_ids, 2);
    assert_int_equal(r.f[0].ids[0], 11);
    assert_int_equal(r.f[0].ids[1], 13);
    rec_free(&r);
    g_flags = 0;
  }
  /* encoder arguments: unknown flags, an int32 base_id above INT32_MAX in field 4 */
  {
    static const uint32_t ids[] = {5};
    embd_codec_stream_frame f = {.ids = ids, .n_ids = 1};
    size_t sz = 0;
    assert_int_equal(embd_codec_proto_delta_encoded_size(&f, 0, 4, &sz), EMBD_ERR_INVALID_ARGUMENT);
    assert_int_equal(embd_codec_proto_delta_encoded_size(&f, 0, EMBD_CODEC_STREAM_DELTA, &sz),
                     EMBD_ERR_INVALID_ARGUMENT);
    assert_int_equal(embd_codec_proto_delta_encoded_size(&f, 0x80000000u, EMBD_CODEC_STREAM_BASE_ID_4, &sz),
                     EMBD_ERR_INVALID_ARGUMENT);
    assert_int_equal(embd_codec_proto_delta_encoded_size(&f, 0x80000000u, 0, &sz), EMBD_OK);
    /* the smallest delta frame: no ids, done false, base_id 0: 00 00 00 04 10 00 28 00 */
    embd_codec_stream_frame e = {0};
    uint8_t b[16];
    size_t wr = 0;
    assert_int_equal(embd_codec_proto_delta_encode(&e, 0, 0, b, sizeof b, &wr), EMBD_OK);
    assert_int_equal(wr, 8);
    assert_memory_equal(b, "\0\0\0\x04\x10\x00\x28\x00", 8);
  }
  /* options */
  rec r;
  embd_codec_stream_options o = {.max_frame_bytes = 64, .on_frame = on_frame, .user = &r};
  embd_codec_proto_reader *p = NULL;
  o.flags = EMBD_CODEC_STREAM_BASE_ID_4; /* without DELTA it means nothing */
  assert_int_equal(embd_codec_proto_create(&o, &p), EMBD_ERR_INVALID_ARGUMENT);
  o.flags = 4;
  assert_int_equal(embd_codec_proto_create(&o, &p), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(p);
  free(ref);
  free(ours);
}

/* The library's test hook (src/codec/codec_msgpack.c): non-zero, the msgpack reader's fast
 * path is off (every frame through the scanner and mp_frame, as before it). */
extern int embd_msgpack_fast_off_;

/* run() with the fast path, then without: the same frames, result, offset and message. */
static void run_both(const uint8_t *b, size_t len, const size_t *cuts, size_t ncuts, size_t max_frame,
                     size_t max_ids) {
  rec a, z;
  run(MODE_MSGPACK, b, len, cuts, ncuts, max_frame, max_ids, 1, &a);
  embd_msgpack_fast_off_ = 1;
  run(MODE_MSGPACK, b, len, cuts, ncuts, max_frame, max_ids, 1, &z);
  embd_msgpack_fast_off_ = 0;
  if (!rec_eq(&a, &z))
    fail_msg("fast and full msgpack paths disagree: %d (%zu frames) \"%s\" / %d (%zu frames) \"%s\"",
             (int)a.result, a.n, a.err.message, (int)z.result, z.n, z.err.message);
  rec_free(&a);
  rec_free(&z);
}

/* Frames in the fast path's layouts and next to them (map16, str8 finish_reason, array16
 * ids, every integer width, 0xcf for small values, keys in other orders, base_id after
 * ids_delta, unknown keys), plain and delta; each whole, and each with every byte flipped
 * bit by bit and set to a few type bytes, whole and in two pieces, and under tight
 * max_frame_bytes and max_ids: the fast path and the full one agree on each. */
static void test_msgpack_fast_differential(void **state) {
  (void)state;
  for (int delta = 0; delta < 2; delta++) {
    g_flags = delta ? EMBD_CODEC_STREAM_DELTA : 0;
    const char *ids_key = delta ? "ids_delta" : "ids";
    for (int shape = 0; shape < 6; shape++) {
      msgpack_sbuffer sb;
      msgpack_sbuffer_init(&sb);
      msgpack_packer pk;
      msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
      const uint64_t vals[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 151645, 0xFFFFFFFFu};
      const size_t nv = shape == 1 ? 20 : shape == 5 ? 0 : sizeof vals / sizeof vals[0];
      const int nkeys = 2 + (shape != 3) + delta + (shape == 4);
      if (shape == 1) { /* map16 */
        const char h[3] = {(char)0xde, 0, (char)nkeys};
        msgpack_sbuffer_write(&sb, h, 3);
      } else {
        msgpack_pack_map(&pk, (size_t)nkeys);
      }
      if (delta && shape != 2) msgpack_pack_str_with_body(&pk, "base_id", 7), msgpack_pack_uint64(&pk, 1000);
      if (shape == 2) { /* done first */
        msgpack_pack_str_with_body(&pk, "done", 4);
        msgpack_pack_true(&pk);
      }
      msgpack_pack_str_with_body(&pk, ids_key, strlen(ids_key));
      if (shape == 1) { /* array16 of 20 */
        const char h[3] = {(char)0xdc, 0, 20};
        msgpack_sbuffer_write(&sb, h, 3);
      } else {
        msgpack_pack_array(&pk, nv);
      }
      for (size_t i = 0; i < nv; i++) {
        const uint64_t v = delta ? (i & 1 ? 2 * (i + 1) : 2 * i + 1) : shape == 1 ? vals[i % 10] : vals[i];
        if (shape == 3 && i % 3 == 0) msgpack_pack_fix_uint64(&pk, v); /* 0xcf, a small value */
        else msgpack_pack_uint64(&pk, v);
      }
      if (shape != 2) {
        msgpack_pack_str_with_body(&pk, "done", 4);
        msgpack_pack_false(&pk);
      }
      if (shape != 3) {
        msgpack_pack_str_with_body(&pk, "finish_reason", 13);
        if (shape == 1) {
          const char h[2] = {(char)0xd9, 40};
          msgpack_sbuffer_write(&sb, h, 2);
          msgpack_sbuffer_write(&sb, "0123456789012345678901234567890123456789", 40);
        } else if (shape == 5) {
          msgpack_pack_nil(&pk);
        } else {
          msgpack_pack_str_with_body(&pk, shape == 4 ? "" : "stop", shape == 4 ? 0 : 4);
        }
      }
      if (shape == 4) { /* an unknown key: the full path */
        msgpack_pack_str_with_body(&pk, "usage", 5);
        msgpack_pack_array(&pk, 1);
        msgpack_pack_int(&pk, -3);
      }
      if (delta && shape == 2) msgpack_pack_str_with_body(&pk, "base_id", 7), msgpack_pack_uint64(&pk, 7);
      /* two copies back to back: frame 1 in place, the error or the next frame after */
      const size_t one = sb.size;
      msgpack_sbuffer_write(&sb, sb.data, one);
      uint8_t *b = (uint8_t *)sb.data;
      const size_t len = sb.size;
      run_both(b, len, NULL, 0, 1 << 20, 0);
      const size_t cut = one / 2;
      for (size_t at = 0; at < one; at++) {
        const uint8_t keep = b[at];
        const uint8_t set[] = {0x00, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc2, 0xcc, 0xcf, 0xd9, 0xdc, 0xde, 0xff};
        for (int k = 0; k < 8 + (int)sizeof set; k++) {
          b[at] = k < 8 ? (uint8_t)(keep ^ (1u << k)) : set[k - 8];
          run_both(b, len, NULL, 0, 1 << 20, 0);
          run_both(b, len, &cut, 1, 1 << 20, 0);
        }
        b[at] = keep;
      }
      for (size_t mf = one - 2; mf <= one + 1; mf++) run_both(b, len, NULL, 0, mf, 0);
      for (size_t mi = nv > 2 ? nv - 2 : 1; mi <= nv + 1; mi++) run_both(b, len, NULL, 0, 1 << 20, mi);
      msgpack_sbuffer_destroy(&sb);
    }
    /* Each known key twice (the full path's "duplicate key" error), and ids missing. */
    const char *keys[] = {ids_key, "done", "finish_reason", "base_id", NULL};
    for (int dup = 0; dup < 5; dup++) {
      msgpack_sbuffer sb;
      msgpack_sbuffer_init(&sb);
      msgpack_packer pk;
      msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
      msgpack_pack_map(&pk, (size_t)(3 + delta + (dup < 4 && (dup < 3 || delta))));
      for (int rep = 0; rep < 2; rep++) {
        if (rep && !(dup < 4 && (dup < 3 || delta))) break;
        for (int k = 0; k < 4; k++) {
          if ((rep && k != dup) || (k == 3 && !delta) || (k == 0 && dup == 4)) continue;
          msgpack_pack_str_with_body(&pk, keys[k], strlen(keys[k]));
          if (k == 0) msgpack_pack_array(&pk, 1), msgpack_pack_uint32(&pk, 5);
          else if (k == 1) msgpack_pack_true(&pk);
          else if (k == 2) msgpack_pack_str_with_body(&pk, "length", 6);
          else msgpack_pack_uint32(&pk, 9);
        }
      }
      if (dup == 4) msgpack_pack_str_with_body(&pk, "x", 1), msgpack_pack_nil(&pk);
      run_both((const uint8_t *)sb.data, sb.size, NULL, 0, 1 << 20, 0);
      msgpack_sbuffer_destroy(&sb);
    }
  }
  g_flags = 0;
}

static void test_behaviour(void **state) {
  (void)state;
  embd_codec_stream_options o = {0};
  embd_codec_msgpack_reader *m;
  embd_codec_proto_reader *p;
  assert_int_equal(embd_codec_msgpack_create(&o, &m), EMBD_ERR_INVALID_ARGUMENT);
  o.max_frame_bytes = 64;
  assert_int_equal(embd_codec_proto_create(&o, &p), EMBD_ERR_INVALID_ARGUMENT); /* no on_frame */
  /* callback result passes through, sticky, at the frame's offset */
  for (int mode = 0; mode < 2; mode++) {
    uint8_t s[512];
    size_t len = small_stream(mode, s);
    rec r;
    memset(&r, 0, sizeof r);
    r.stop_at = 1;
    embd_codec_stream_options oo = {.max_frame_bytes = 1024, .max_ids = 0, .on_frame = on_frame, .user = &r};
    embd_error e;
    embd_result res;
    if (mode == MODE_MSGPACK) {
      assert_int_equal(embd_codec_msgpack_create(&oo, &m), EMBD_OK);
      res = embd_codec_msgpack_feed(m, s, len, &e);
      assert_int_equal(embd_codec_msgpack_frames(m), 1);
      embd_codec_msgpack_destroy(m);
    } else {
      assert_int_equal(embd_codec_proto_create(&oo, &p), EMBD_OK);
      res = embd_codec_proto_feed(p, s, len, &e);
      assert_int_equal(embd_codec_proto_frames(p), 1);
      embd_codec_proto_destroy(p);
    }
    assert_int_equal(res, EMBD_ERR_INVALID_ARGUMENT);
    assert_int_equal(e.offset, r.f[0].size);
    /* One wording for a callback's stop in all four readers (the framer's). */
    assert_non_null(strstr(e.message, "the callback returned"));
    rec_free(&r);
  }
  /* encoder argument checks */
  embd_codec_stream_frame f = {0};
  size_t sz;
  assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_OK); /* empty: done = false */
  assert_int_equal(sz, 6);
  assert_int_equal(embd_codec_msgpack_encoded_size(&f, &sz), EMBD_OK);
  assert_int_equal(sz, 12); /* {"ids": [], "done": false} */
  f.tool_calls = (const uint8_t *)"\x92\x01";
  f.tool_calls_len = 2;
  assert_int_equal(embd_codec_msgpack_encoded_size(&f, &sz), EMBD_ERR_INVALID_ARGUMENT);
  f.tool_calls = (const uint8_t *)"\x1a\x00";
  assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_ERR_INVALID_ARGUMENT);
  f.tool_calls = (const uint8_t *)"\x22\x00";
  assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_OK);
  assert_int_equal(sz, 8); /* prefix, done 10 00, the tool call 22 00 */
  f.n_ids = 1; /* NULL ids */
  assert_int_equal(embd_codec_proto_encoded_size(&f, &sz), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_codec_msgpack_encoded_size(&f, &sz), EMBD_ERR_INVALID_ARGUMENT);
}

int main(void) {
  int s = tu_isa_preflight("test_codec_modes");
  if (s) return s;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_msgpack_oracle), cmocka_unit_test(test_proto_oracle),
      cmocka_unit_test(test_bytes_per_token), cmocka_unit_test(test_small_chunkings),
      cmocka_unit_test(test_large_random),   cmocka_unit_test(test_errors),
      cmocka_unit_test(test_depth),          cmocka_unit_test(test_no_endless_loop),
      cmocka_unit_test(test_behaviour),     cmocka_unit_test(test_msgpack_delta),
      cmocka_unit_test(test_proto_delta),   cmocka_unit_test(test_msgpack_fast_differential),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
