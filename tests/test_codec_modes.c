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

/* Feeds b[0..len) cut at cuts[0..ncuts) (increasing), then finish. */
static void run(int mode, const uint8_t *b, size_t len, const size_t *cuts, size_t ncuts,
                size_t max_frame, size_t max_ids, int do_finish, rec *r) {
  memset(r, 0, sizeof *r);
  r->stop_at = -1;
  embd_codec_stream_options o = {.max_frame_bytes = max_frame, .max_ids = max_ids, .on_frame = on_frame, .user = r};
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
    msgpack_pack_array(pk, (size_t)w->tool_calls);
    for (int i = 0; i < w->tool_calls; i++) {
      msgpack_pack_map(pk, 2);
      msgpack_pack_str_with_body(pk, "name", 4);
      msgpack_pack_str_with_body(pk, "get_weather", 11);
      msgpack_pack_str_with_body(pk, "arguments_json", 14);
      msgpack_pack_str_with_body(pk, "{\"city\":\"Oslo\"}", 15);
    }
  }
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
  for (int i = 0; i < w->tool_calls; i++) {
    tool_call__init(&tc[i]);
    tc[i].name = (char *)"get_weather";
    tc[i].arguments_json = (char *)"{\"city\":\"Oslo\"}";
    tc[i].id = (char *)"tc_1";
    tcp[i] = &tc[i];
  }
  f.n_tool_calls = (size_t)w->tool_calls;
  f.tool_calls = tcp;
  size_t n = codec_frame__pack(&f, out + 4);
  out[0] = (uint8_t)(n >> 24);
  out[1] = (uint8_t)(n >> 16);
  out[2] = (uint8_t)(n >> 8);
  out[3] = (uint8_t)n;
  return n + 4;
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
        embd_codec_stream_frame f = {0};
        f.ids = wants[i].ids;
        f.n_ids = wants[i].n;
        f.done = wants[i].done;
        f.finish_reason = wants[i].fr;
        f.finish_reason_len = wants[i].fr ? strlen(wants[i].fr) : 0;
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
      embd_codec_stream_frame f = {0};
      f.ids = wants[i].ids;
      f.n_ids = wants[i].n;
      f.done = wants[i].done;
      f.finish_reason = wants[i].fr;
      f.finish_reason_len = wants[i].fr ? strlen(wants[i].fr) : 0;
      f.tool_calls = x->has_tc ? x->tc : NULL;
      f.tool_calls_len = x->tc_len;
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
} bad;

#define B(s) s, sizeof(s) - 1
static const bad bads[] = {
    /* msgpack */
    {MODE_MSGPACK, B("\x92\x01\x02"), 100, 0, 0, 0, "a frame is a map, this is an array"},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\x01\x05"), 100, 0, 1, 7, "a frame is a map, this is an integer"},
    {MODE_MSGPACK, B("\x81\xa3idx\x90"), 100, 0, 0, 0, "no \"ids\" key"},
    {MODE_MSGPACK, B("\x80"), 100, 0, 0, 0, "no \"ids\" key"},
    {MODE_MSGPACK, B("\x81\xa3ids\x01"), 100, 0, 0, 5, "ids is an unsigned integer, expected an array"},
    {MODE_MSGPACK, B("\x81\xa3ids\x94\x01\x02\x03\xa1x"), 100, 0, 0, 9, "ids[3] is a string, expected an unsigned integer"},
    {MODE_MSGPACK, B("\x81\xa3ids\x92\x01\xff"), 100, 0, 0, 7, "ids[1] is a negative integer"},
    {MODE_MSGPACK, B("\x81\xa3ids\x92\x01\xca\x3f\x80\x00\x00"), 100, 0, 0, 7, "ids[1] is a float"},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\xcf\x00\x00\x00\x01\x00\x00\x00\x00"), 100, 0, 0, 6, "ids[0] = 4294967296 is above UINT32_MAX"},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xa4" "done\x01"), 100, 0, 0, 11, "done is an unsigned integer, expected a bool"},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xad" "finish_reason\x01"), 100, 0, 0, 20, "finish_reason is an unsigned integer"},
    {MODE_MSGPACK, B("\x82\xa3ids\x90\xa3ids\x90"), 100, 0, 0, 6, "duplicate key \"ids\""},
    {MODE_MSGPACK, B("\x81\xa3ids\x93\x01\x02\x03"), 100, 2, 0, 5, "3 ids, above max_ids (2)"},
    {MODE_MSGPACK, B("\x81\xa3ids\xdd\xff\xff\xff\xff"), 100, 0, 0, 5, "an array of 4294967295 elements does not fit"},
    {MODE_MSGPACK, B("\xdf\xff\xff\xff\xff"), 100, 0, 0, 0, "a map of 4294967295 entries does not fit"},
    {MODE_MSGPACK, B("\x81\xa3ids\xc6\xff\xff\xff\xff"), 100, 0, 0, 5, "a binary of 4294967295 bytes does not fit"},
    {MODE_MSGPACK, B("\x81\xa3ids\x91\xc1"), 100, 0, 0, 6, "0xc1"},
    {MODE_MSGPACK, B("\x81\xa3ids\x90\x81\xa3ids\x91\x01"), 6, 0, 1, 11, "an array of 1 elements does not fit in max_frame_bytes (6)"},
    /* the prefix names the frame's first byte, err.offset the byte at fault */
    {MODE_MSGPACK, B("\x81\xa3ids\x90"), 5, 0, 0, 5, "frame 0 at byte 0: frame larger than max_frame_bytes (5)"},
    /* protobuf */
    {MODE_PROTO, B("\0\0\1\0"), 100, 0, 0, 0, "length prefix 256 above max_frame_bytes (100)"},
    {MODE_PROTO, B("\xff\xff\xff\xff"), 100, 0, 0, 0, "length prefix 4294967295 above"},
    {MODE_PROTO, B("\0\0\0\3\x0a\x01\x80"), 100, 0, 0, 6, "ids[0]: varint runs past the end of the packed ids"},
    {MODE_PROTO, B("\0\0\0\2\x08\x80"), 100, 0, 0, 5, "field 1: varint runs past the end of the frame"},
    {MODE_PROTO, B("\0\0\0\x0c\x0a\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80"), 100, 0, 0, 6, "ids[0]: varint longer than 10 bytes"},
    {MODE_PROTO, B("\0\0\0\x0b\x28\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02"), 100, 0, 0, 5, "field 5: varint longer than 10 bytes"},
    {MODE_PROTO, B("\0\0\0\x07\x0a\x05\x80\x80\x80\x80\x10"), 100, 0, 0, 6, "ids[0] = 4294967296 is above UINT32_MAX"},
    {MODE_PROTO, B("\0\0\0\x02\x0a\x05"), 100, 0, 0, 5, "field 1: length 5 runs past the end of the frame (0 bytes left)"},
    {MODE_PROTO, B("\0\0\0\x02\x0b\x00"), 100, 0, 0, 4, "field 1 has wire type 3 (start group): groups are not supported"},
    {MODE_PROTO, B("\0\0\0\x02\x2c\x00"), 100, 0, 0, 4, "field 5 has wire type 4 (end group)"},
    {MODE_PROTO, B("\0\0\0\x02\x2e\x00"), 100, 0, 0, 4, "wire type 6 (undefined): not a protobuf wire type"},
    {MODE_PROTO, B("\0\0\0\x02\x2f\x00"), 100, 0, 0, 4, "wire type 7"},
    {MODE_PROTO, B("\0\0\0\x02\x00\x00"), 100, 0, 0, 4, "field number 0"},
    {MODE_PROTO, B("\0\0\0\x02\x12\x00"), 100, 0, 0, 4, "done (field 2) has wire type 2"},
    {MODE_PROTO, B("\0\0\0\x02\x18\x00"), 100, 0, 0, 4, "finish_reason (field 3) has wire type 0"},
    {MODE_PROTO, B("\0\0\0\x05\x25\x00\x00\x00\x00"), 100, 0, 0, 4, "tool_calls (field 4) has wire type 5"},
    {MODE_PROTO, B("\0\0\0\x03\x31\x00\x00"), 100, 0, 0, 5, "field 6: 8-byte value runs past"},
    {MODE_PROTO, B("\0\0\0\x06\x80\x80\x80\x80\x80\x01"), 100, 0, 0, 4, "field tag longer than 5 bytes"},
    {MODE_PROTO, B("\0\0\0\x01\x80"), 100, 0, 0, 4, "field tag runs past the end"},
    {MODE_PROTO, B("\0\0\0\x05\x0a\x03\x01\x02\x03"), 100, 2, 0, 8, "more than max_ids (2) ids"},
};

static void test_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
    const bad *b = &bads[i];
    rec one, r;
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
}

static void test_depth(void **state) {
  (void)state;
  uint8_t s[128];
  for (int depth = 31; depth <= 33; depth++) { /* the map plus depth-1 arrays around the ids' value */
    size_t n = 0;
    s[n++] = 0x82;
    memcpy(s + n, "\xa3ids\x90\xa1x", 7);
    n += 7;
    for (int d = 1; d < depth; d++) s[n++] = 0x91;
    s[n++] = 0x01;
    rec r;
    run1(MODE_MSGPACK, s, n, &r);
    if (depth <= 32) {
      assert_int_equal(r.result, EMBD_OK);
    } else {
      assert_int_equal(r.result, EMBD_ERR_MSGPACK);
      assert_non_null(strstr(r.err.message, "nested deeper than 32"));
      assert_int_equal(r.err.offset, 8 + 31);
    }
    rec_free(&r);
  }
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
      cmocka_unit_test(test_behaviour),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
