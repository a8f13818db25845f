/* The OpenAI-compatible decoder told what the request asked for (embd/openai.h, options
 * dtype / byte_order / EMBD_OPENAI_KEEP_DTYPE / expected_dims): a response of each server
 * shape (vLLM base64, bytes with metadata, bytes_only and float; Cohere by type and v1;
 * Voyage, Mistral, Jina; llama.cpp; Infinity) in every dtype and byte order, decoded to
 * the values numpy gives (tests/gen_openai_dtype_oracle.py, run at build time: the
 * fixtures and expected float32 bits are in openai_dtype_oracle.inc), as float32 and kept
 * in the wire dtype; then every error a mismatch between asked and received can give,
 * with its code, offset and message; truncations and corruptions of the bytes metadata.
 * Expected values are bit patterns and byte strings, so the big-endian run (s390x) checks
 * the byte order handling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "testutil.h"

enum { DC_JSON, DC_BYTES, DC_BYTES_ONLY };
typedef struct dcase {
  const char *name;
  int kind;
  const unsigned char *body;
  size_t body_len;
  const char *meta;
  size_t meta_len;
  embd_dtype dtype;
  embd_byte_order order;
  size_t count, dims;
  const uint32_t *f32;       /* count x dims expected float32 bits */
  const unsigned char *wire; /* the kept rows */
  size_t wire_len;
} dcase;

#include "openai_dtype_oracle.inc"

#ifndef DC_NO_NUMPY
static embd_result run_case(const dcase *c, embd_openai_embeddings *e, int keep, embd_error *err) {
  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = c->dtype;
  o.byte_order = c->order;
  o.flags = keep ? EMBD_OPENAI_KEEP_DTYPE : 0;
  switch (c->kind) {
    case DC_BYTES:
      return embd_openai_decode_bytes(e, c->body, c->body_len, c->meta, c->meta_len, &o, err);
    case DC_BYTES_ONLY: return embd_openai_decode_bytes_only(e, c->body, c->body_len, c->dims, &o, err);
    default: return embd_openai_decode(e, (const char *)c->body, c->body_len, &o, err);
  }
}
#endif

/* Every fixture, as float32 and kept, against numpy's values. */
static void test_servers_oracle(void **state) {
  (void)state;
#ifdef DC_NO_NUMPY
  printf("test_openai_dtype: SKIP: ***** the build's python3 has no numpy: the server/dtype oracle "
         "was NOT checked *****\n");
  skip();
#else
  size_t n = sizeof dcases / sizeof dcases[0];
  assert_true(n > 50);
  for (size_t i = 0; i < n; i++) {
    const dcase *c = &dcases[i];
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    embd_result r = run_case(c, &e, 0, &err);
    if (r != EMBD_OK) {
      fprintf(stderr, "%s: %d %s\n", c->name, (int)r, err.message);
      fail();
    }
    assert_int_equal(e.count, c->count);
    assert_int_equal(e.dims, c->dims);
    assert_null(e.data);
    assert_int_equal(e.dtype, EMBD_DTYPE_F32);
    for (size_t k = 0; k < c->count * c->dims; k++) {
      uint32_t u;
      memcpy(&u, &e.values[k], 4);
      if (u != c->f32[k]) {
        fprintf(stderr, "%s: value %zu: %08x, numpy says %08x\n", c->name, k, (unsigned)u, (unsigned)c->f32[k]);
        fail();
      }
    }
    r = run_case(c, &e, 1, &err);
    if (r != EMBD_OK) {
      fprintf(stderr, "%s (keep): %d %s\n", c->name, (int)r, err.message);
      fail();
    }
    assert_null(e.values);
    assert_non_null(e.data);
    assert_int_equal(e.dtype, c->dtype);
    assert_int_equal(e.byte_order, c->order);
    assert_int_equal(e.count * e.row_bytes, c->wire_len);
    if (memcmp(e.data, c->wire, c->wire_len) != 0) {
      fprintf(stderr, "%s: kept bytes differ\n", c->name);
      fail();
    }
    /* The kept rows convert to the same floats (the two outputs agree). */
    float *v = malloc(c->dims * sizeof *v);
    assert_non_null(v);
    for (size_t k = 0; k < c->count; k++) {
      assert_int_equal(embd_to_f32(v, (const uint8_t *)e.data + k * e.row_bytes, c->dims, c->dtype, c->order),
                       EMBD_OK);
      assert_memory_equal(v, c->f32 + k * c->dims, c->dims * 4);
    }
    free(v);
    embd_openai_free(&e);
  }
#endif
}

/* ---- errors: code, offset, message ------------------------------------------------- */

static embd_openai_options opts(embd_dtype t, embd_byte_order o, uint32_t flags) {
  embd_openai_options x;
  memset(&x, 0, sizeof x);
  x.dtype = t;
  x.byte_order = o;
  x.flags = flags;
  return x;
}

static size_t at(const char *s, const char *needle) {
  const char *p = strstr(s, needle);
  assert_non_null(p);
  return (size_t)(p - s);
}

/* Decodes the JSON s with o; expects r at `off` with exactly the message `fmt` (its %zu,
 * if any, is off), and no vectors. */
static void json_err(const char *s, embd_openai_options o, embd_result r, size_t off, const char *fmt) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, off);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result got = embd_openai_decode(&e, s, strlen(s), &o, &err);
  if (got != r || err.offset != off || strcmp(err.message, msg) != 0) {
    fprintf(stderr, "body %s\n  got %d at %llu \"%s\"\n want %d at %zu \"%s\"\n", s, (int)got,
            (unsigned long long)err.offset, err.message, (int)r, off, msg);
    fail();
  }
  assert_int_equal(e.count, 0);
  assert_null(e.values);
  assert_null(e.data);
  embd_openai_free(&e);
}

static void meta_err(const void *body, size_t len, const char *m, embd_openai_options o, embd_result r, size_t off,
                     const char *fmt) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, off);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result got = embd_openai_decode_bytes(&e, body, len, m, strlen(m), &o, &err);
  if (got != r || err.offset != off || strcmp(err.message, msg) != 0) {
    fprintf(stderr, "metadata %s\n  got %d at %llu \"%s\"\n want %d at %zu \"%s\"\n", m, (int)got,
            (unsigned long long)err.offset, err.message, (int)r, off, msg);
    fail();
  }
  assert_int_equal(e.count, 0);
  assert_null(e.values);
  embd_openai_free(&e);
}

static void test_integer_errors(void **state) {
  (void)state;
  const embd_openai_options i8 = opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0);
  /* floats arriving when int8 was asked */
  const char *s = "{\"data\":[{\"index\":0,\"embedding\":[1,0.5,3]}]}";
  json_err(s, i8, EMBD_ERR_OPENAI_DTYPE, at(s, "0.5"),
           "data[0].embedding[1]: 0.5 is not an integer (the response is not int8) (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[1,2]},{\"index\":1,\"embedding\":[1,1e2]}]}";
  json_err(s, i8, EMBD_ERR_OPENAI_DTYPE, at(s, "1e2"),
           "data[1].embedding[1]: 1e2 is not an integer (the response is not int8) (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[127,-128,128]}]}";
  json_err(s, i8, EMBD_ERR_DTYPE_RANGE, at(s, "128]"),
           "data[0].embedding[2]: 128 is out of the int8 range -128..127 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[-129]}]}";
  json_err(s, i8, EMBD_ERR_DTYPE_RANGE, at(s, "-129"),
           "data[0].embedding[0]: -129 is out of the int8 range -128..127 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[99999999999999999999999]}]}";
  json_err(s, opts(EMBD_DTYPE_UINT8, EMBD_ORDER_LE, 0), EMBD_ERR_DTYPE_RANGE, at(s, "9999"),
           "data[0].embedding[0]: 99999999999999999999999 is out of the uint8 range 0..255 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[0,-1]}]}";
  json_err(s, opts(EMBD_DTYPE_UBINARY, EMBD_ORDER_LE, 0), EMBD_ERR_DTYPE_RANGE, at(s, "-1"),
           "data[0].embedding[1]: -1 is out of the ubinary range 0..255 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[200]}]}";
  json_err(s, opts(EMBD_DTYPE_BINARY, EMBD_ORDER_LE, 0), EMBD_ERR_DTYPE_RANGE, at(s, "200"),
           "data[0].embedding[0]: 200 is out of the binary range -128..127 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[1,\"2\"]}]}";
  json_err(s, i8, EMBD_ERR_OPENAI_SHAPE, at(s, "\"2\""),
           "data[0].embedding[1]: not a number (it is a string) (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[1,01]}]}";
  json_err(s, i8, EMBD_ERR_OPENAI_JSON, at(s, "01"),
           "JSON: data[0].embedding[1]: a number with a leading zero (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[]}]}";
  json_err(s, i8, EMBD_ERR_OPENAI_SHAPE, at(s, "[]"), "data[0].embedding: empty (body byte %zu)");
  /* packed bits: dims = 8 x the list's length; max_dims and expected_dims count dims */
  embd_openai_options ub = opts(EMBD_DTYPE_UBINARY, EMBD_ORDER_LE, 0);
  ub.max_dims = 16;
  s = "{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}";
  json_err(s, ub, EMBD_ERR_OPENAI_DIMS, at(s, "[1"),
           "data[0].embedding: more than 16 dims, above max_dims 16 (body byte %zu)");
  ub.max_dims = 0;
  ub.expected_dims = 16;
  json_err(s, ub, EMBD_ERR_OPENAI_DIMS, at(s, "[1"), "data[0].embedding: 24 dims, expected_dims is 16 (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[1,2]},{\"index\":1,\"embedding\":[1,2,3]}]}";
  json_err(s, opts(EMBD_DTYPE_UBINARY, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DIMS, at(s, "[1,2,3"),
           "data[1].embedding: more than 16 dims, the others have 16 (body byte %zu)");
  /* an int8 list decodes, value and bytes */
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  s = "{\"data\":[{\"index\":0,\"embedding\":[-128,0,127,-1]}]}";
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &i8, &err), EMBD_OK);
  assert_int_equal(e.dims, 4);
  assert_true(e.values[0] == -128.0f && e.values[1] == 0.0f && e.values[2] == 127.0f && e.values[3] == -1.0f);
  embd_openai_options k8 = opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE);
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &k8, &err), EMBD_OK);
  assert_memory_equal(e.data, "\x80\x00\x7f\xff", 4);
  assert_int_equal(e.row_bytes, 4);
  embd_openai_free(&e);
}

static void test_base64_errors(void **state) {
  (void)state;
  /* "AAAA" is 3 bytes: not a whole number of float16 elements; "AAA=" 2 bytes is fine */
  const char *s = "{\"data\":[{\"index\":0,\"embedding\":\"AAAA\"}]}";
  json_err(s, opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, 0), EMBD_ERR_DTYPE_LENGTH, at(s, "\"AAAA"),
           "data[0].embedding: base64: 3 bytes, not a whole number of f16 elements (2 bytes each) (body byte %zu)");
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_BE, 0), EMBD_ERR_BASE64_F32_LENGTH, at(s, "\"AAAA"),
           "data[0].embedding: base64: 3 bytes, not a multiple of 4 (float32) (body byte %zu)");
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE), EMBD_ERR_BASE64_F32_LENGTH, at(s, "\"AAAA"),
           "data[0].embedding: base64: 3 bytes, not a multiple of 4 (float32) (body byte %zu)");
  /* a 1536-dim f16 vector is 3,072 bytes; 3,071 is an error */
  {
    uint8_t raw[3072];
    for (size_t i = 0; i < sizeof raw; i++) raw[i] = (uint8_t)(i * 7);
    char b64[4200];
    size_t w = 0;
    assert_int_equal(embd_base64_encode(raw, 3071, 0, b64, sizeof b64, &w), EMBD_OK);
    b64[w] = 0;
    char *body = malloc(w + 64);
    assert_non_null(body);
    snprintf(body, w + 64, "{\"data\":[{\"index\":0,\"embedding\":\"%s\"}]}", b64);
    json_err(body, opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, 0), EMBD_ERR_DTYPE_LENGTH, at(body, ":\"") + 1,
             "data[0].embedding: base64: 3071 bytes, not a whole number of f16 elements (2 bytes each) (body "
             "byte %zu)");
    assert_int_equal(embd_base64_encode(raw, 3072, 0, b64, sizeof b64, &w), EMBD_OK);
    b64[w] = 0;
    snprintf(body, w + 64, "{\"data\":[{\"index\":0,\"embedding\":\"%s\"}]}", b64);
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    embd_openai_options o = opts(EMBD_DTYPE_F16, EMBD_ORDER_BE, 0);
    assert_int_equal(embd_openai_decode(&e, body, strlen(body), &o, &err), EMBD_OK);
    assert_int_equal(e.dims, 1536);
    float want[1536];
    assert_int_equal(embd_to_f32(want, raw, 1536, EMBD_DTYPE_F16, EMBD_ORDER_BE), EMBD_OK);
    assert_memory_equal(e.values, want, sizeof want);
    embd_openai_free(&e);
    free(body);
  }
  /* invalid base64 keeps its code, placed in the body */
  s = "{\"data\":[{\"index\":0,\"embedding\":\"AA*A\"}]}";
  json_err(s, opts(EMBD_DTYPE_BF16, EMBD_ORDER_LE, 0), EMBD_ERR_BASE64_CHAR, at(s, "*"),
           "data[0].embedding: base64: invalid character '*' at 2 (not in the base64 alphabet) (body byte %zu)");
  /* float16 asked, numbers arrive: fine as float32; kept, each must be a float16 value */
  s = "{\"data\":[{\"index\":0,\"embedding\":[0.5,0.1]}]}";
  json_err(s, opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE), EMBD_ERR_OPENAI_DTYPE, at(s, "[0.5"),
           "data[0].embedding[1]: 0.100000001 is not a f16 value (the response is not f16) (body byte %zu)");
  json_err(s, opts(EMBD_DTYPE_FP8_E4M3, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE), EMBD_ERR_OPENAI_DTYPE, at(s, "[0.5"),
           "data[0].embedding[1]: 0.100000001 is not a fp8-e4m3 value (the response is not fp8-e4m3) (body byte %zu)");
  s = "{\"data\":[{\"index\":0,\"embedding\":[0.5,1000]}]}";
  json_err(s, opts(EMBD_DTYPE_FP8_E4M3, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE), EMBD_ERR_OPENAI_DTYPE, at(s, "[0.5"),
           "data[0].embedding[1]: 1000 is not a fp8-e4m3 value (the response is not fp8-e4m3) (body byte %zu)");
}

static void test_cohere_errors(void **state) {
  (void)state;
  const char *s = "{\"id\":\"x\",\"embeddings\":{\"float\":[[1,2]],\"ubinary\":[[3]]},\"texts\":[\"a\"]}";
  json_err(s, opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DTYPE, at(s, "{\"float"),
           "embeddings: no \"int8\" list for int8 (the keys are: float, ubinary) (body byte %zu)");
  json_err(s, opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DTYPE, at(s, "{\"float"),
           "embeddings: no \"f16\" list for f16 (the keys are: float, ubinary) (body byte %zu)");
  s = "{\"embeddings\":{}}";
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DTYPE, 14,
           "embeddings: no \"float\" list for f32 (the keys are: none) (body byte %zu)");
  s = "{\"embeddings\":{\"int8\":[[1,2],[3,2.5]]}}";
  json_err(s, opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DTYPE, at(s, "2.5"),
           "embeddings.int8[1][1]: 2.5 is not an integer (the response is not int8) (body byte %zu)");
  s = "{\"embeddings\":{\"int8\":[[1,2],[3]]}}";
  json_err(s, opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DIMS, at(s, "[3]"),
           "embeddings.int8[1]: 1 dims, the others have 2 (body byte %zu)");
  s = "{\"embeddings\":{\"int8\":[[1]],\"int8\":[[2]]}}";
  json_err(s, opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_SHAPE, at(s, "[[2"),
           "embeddings: two \"int8\" keys (body byte %zu)");
  s = "{\"data\":[],\"embeddings\":[[1]]}";
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_SHAPE, at(s, "[[1"),
           "both \"data\" and \"embeddings\" (body byte %zu)");
  s = "{\"embeddings\":7}";
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_SHAPE, 14,
           "embeddings: not an array or an object (it is a number) (body byte %zu)");
  s = "{\"embeddings\":[[1,2],[1,2,3]]}";
  json_err(s, opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DIMS, at(s, "[1,2,3"),
           "embeddings[1]: more than 2 numbers, the others have 2 (body byte %zu)");
  embd_openai_options c2 = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0);
  c2.expected_count = 3;
  json_err("{\"embeddings\":[[1],[2]]}", c2, EMBD_ERR_OPENAI_COUNT, 14,
           "embeddings: 2 items, expected 3 (body byte %zu)");
  /* the other types' lists are checked as strictly as the one read */
  s = "{\"embeddings\":{\"int8\":[[1]],\"float\":[[1,]]}}";
  json_err(s, opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_JSON, at(s, ",]") + 1,
           "JSON: body: expected a value, found ']' (body byte %zu)");
}

static void test_bytes_errors(void **state) {
  (void)state;
  uint8_t body[32];
  for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(0x3c ^ i);
  const embd_openai_options f16 = opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, 0);
#define ITEM(i, dt, en, s, e, d)                                                                 \
  "{\"index\":" #i ",\"embed_dtype\":\"" dt "\",\"endianness\":\"" en "\",\"start\":" #s ",\"end\":" #e \
  ",\"shape\":[" #d "]}"
  const char *m = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 16, 32, 8) "]}";
  {
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    assert_int_equal(embd_openai_decode_bytes(&e, body, 32, m, strlen(m), &f16, &err), EMBD_OK);
    assert_int_equal(e.count, 2);
    assert_int_equal(e.dims, 8);
    float want[16];
    assert_int_equal(embd_to_f32(want, body, 16, EMBD_DTYPE_F16, EMBD_ORDER_LE), EMBD_OK);
    assert_memory_equal(e.values, want, sizeof want);
    embd_openai_free(&e);
  }
  meta_err(body, 32, m, opts(EMBD_DTYPE_BF16, EMBD_ORDER_LE, 0), EMBD_ERR_OPENAI_DTYPE, at(m, "\"float16"),
           "data[0].embed_dtype: f16, but bf16 was asked (metadata byte %zu)");
  meta_err(body, 32, m, opts(EMBD_DTYPE_F16, EMBD_ORDER_BE, 0), EMBD_ERR_OPENAI_DTYPE, at(m, "\"little"),
           "data[0].endianness: little, but big was asked (metadata byte %zu)");
  meta_err(body, 31, m, f16, EMBD_ERR_OPENAI_METADATA, at(m, "32,") + 0,
           "data[1]: bytes 16..32 are not inside the 31-byte body (metadata byte %zu)");
  meta_err(body, 32, "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 16, 32, 8) "]}x",
           f16, EMBD_ERR_OPENAI_JSON, strlen(m) /* the x */, "JSON: metadata: content after the metadata's closing '}' (metadata byte %zu)");
  const char *m2 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 16, 30, 8) "]}";
  meta_err(body, 30, m2, f16, EMBD_ERR_OPENAI_METADATA, at(m2, "[8]}]"),
           "data[1]: shape of 8 f16 elements is not its 14 bytes 16..30 (metadata byte %zu)");
  const char *m3 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 8, 24, 8) "]}";
  meta_err(body, 24, m3, f16, EMBD_ERR_OPENAI_METADATA, at(m3, "8,\"end\":24"),
           "data[1]: bytes 8..24 overlap data[0]'s (metadata byte %zu)");
  const char *m4 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 18, 34, 8) "]}";
  meta_err(body, 34 > 32 ? 32 : 34, m4, f16, EMBD_ERR_OPENAI_METADATA, at(m4, "34"),
           "data[1]: bytes 18..34 are not inside the 32-byte body (metadata byte %zu)");
  uint8_t big[40] = {0};
  meta_err(big, 40, m4, f16, EMBD_ERR_OPENAI_METADATA, at(m4, "18,"),
           "body bytes 16..18 are in no item (data[1] starts after them) (metadata byte %zu)");
  meta_err(body, 32, "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "]}", f16, EMBD_ERR_OPENAI_METADATA, 0,
           "body bytes 16..32 are in no item (metadata byte %zu)");
  const char *m5 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(0, "float16", "little", 16, 32, 8) "]}";
  meta_err(body, 32, m5, f16, EMBD_ERR_OPENAI_INDEX, at(m5 + 20, "\"index\":0") + 20 + 8,
           "data[1].index: 0 already taken by data[0] (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[{\"index\":0,\"embed_dtype\":\"float16\",\"endianness\":\"little\",\"start\":0,\"end\":16}]}",
           f16, EMBD_ERR_OPENAI_METADATA, 9, "data[0]: no \"shape\" (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[{\"embed_dtype\":\"float16\",\"endianness\":\"little\",\"start\":0,\"end\":16,\"shape\":[8]}]}",
           f16, EMBD_ERR_OPENAI_METADATA, 9, "data[0]: no \"index\" (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[" ITEM(0, "float17", "little", 0, 16, 8) "]}", f16, EMBD_ERR_OPENAI_METADATA, 34,
           "data[0].embed_dtype: \"float17\" is not a dtype (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[" ITEM(0, "float16", "middle", 0, 16, 8) "]}", f16, EMBD_ERR_OPENAI_METADATA, 57,
           "data[0].endianness: \"middle\" is not little, big or native (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[{\"index\":0,\"embed_dtype\":\"float16\",\"endianness\":\"little\",\"start\":-1,\"end\":16,\"shape\":[8]}]}",
           f16, EMBD_ERR_OPENAI_METADATA, 74, "data[0].start: not a non-negative integer (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[{\"index\":0,\"embed_dtype\":\"float16\",\"endianness\":\"little\",\"start\":0,\"end\":16,\"shape\":[0]}]}",
           f16, EMBD_ERR_OPENAI_METADATA, 94, "data[0].shape[0]: not a positive integer (metadata byte %zu)");
  meta_err(body, 16, "{\"data\":[{\"index\":0,\"embed_dtype\":\"float16\",\"endianness\":\"little\",\"start\":0,\"end\":16,\"shape\":8}]}",
           f16, EMBD_ERR_OPENAI_METADATA, 93, "data[0]: not an array (it is a number) (metadata byte %zu)");
  meta_err(body, 16, "[]", f16, EMBD_ERR_OPENAI_METADATA, 0, "the metadata is not a JSON object but an array (metadata byte %zu)");
  meta_err(body, 16, "{\"id\":1}", f16, EMBD_ERR_OPENAI_METADATA, 0, "no \"data\" array in the metadata");
  const char *m6 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "]"; /* no closing '}' */
  meta_err(body, 16, m6, f16, EMBD_ERR_OPENAI_JSON, strlen(m6),
           "JSON: metadata: the metadata ends inside an object (metadata byte %zu)");
  /* dims: all alike, and within max_dims, checked once the ranges tile the body */
  const char *m7 = "{\"data\":[" ITEM(0, "float16", "little", 0, 16, 8) "," ITEM(1, "float16", "little", 16, 24, 4) "]}";
  meta_err(body, 24, m7, f16, EMBD_ERR_OPENAI_DIMS, at(m7, "[4]"), "data[1]: 4 dims, data[0] has 8 (metadata byte %zu)");
  embd_openai_options f16max = f16;
  f16max.max_dims = 4;
  meta_err(body, 32, m, f16max, EMBD_ERR_OPENAI_DIMS, at(m, "[8]"),
           "data[0]: 8 dims, above max_dims 4 (metadata byte %zu)");
  /* multi-dim shape: dims = the product; single-byte dtypes ignore endianness */
  {
    const char *mm = "{\"data\":[{\"index\":0,\"embed_dtype\":\"fp8_e5m2\",\"endianness\":\"big\",\"start\":0,"
                     "\"end\":16,\"shape\":[2,8]}]}";
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    embd_openai_options o = opts(EMBD_DTYPE_FP8_E5M2, EMBD_ORDER_LE, 0);
    assert_int_equal(embd_openai_decode_bytes(&e, body, 16, mm, strlen(mm), &o, &err), EMBD_OK);
    assert_int_equal(e.dims, 16);
    embd_openai_free(&e);
  }
#undef ITEM
}

static void test_bytes_only(void **state) {
  (void)state;
  uint8_t body[48];
  for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(i * 37 + 1);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_openai_options o = opts(EMBD_DTYPE_BF16, EMBD_ORDER_BE, 0);
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 8, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 3);
  float want[24];
  assert_int_equal(embd_to_f32(want, body, 24, EMBD_DTYPE_BF16, EMBD_ORDER_BE), EMBD_OK);
  assert_memory_equal(e.values, want, sizeof want);
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 47, 8, &o, &err), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(err.offset, 32);
  assert_string_equal(err.message, "bytes_only: the 47-byte body is not a whole number of 8-dim bf16 vectors (16 bytes "
                                   "each; 15 bytes left over at body byte 32)");
  assert_int_equal(e.count, 0);
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 0, &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  o = opts(EMBD_DTYPE_UBINARY, EMBD_ORDER_LE, 0);
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 12, &o, &err), EMBD_ERR_DTYPE_LENGTH);
  assert_string_equal(err.message, "bytes_only: 12 dims are not a whole number of ubinary bytes");
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 128, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 3);
  assert_int_equal(e.dims, 128);
  assert_true(e.values[0] == 0.0f && e.values[7] == 1.0f); /* 0x01: msb first */
  o.max_dims = 64;
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 128, &o, &err), EMBD_ERR_OPENAI_DIMS);
  assert_string_equal(err.message, "vector 0: 128 dims, above max_dims 64 (body byte 0)");
  o.max_dims = 0;
  o.expected_count = 2;
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 48, 128, &o, &err), EMBD_ERR_OPENAI_COUNT);
  assert_string_equal(err.message, "bytes_only: 3 vectors, expected 2");
  /* empty: no vectors */
  o.expected_count = 0;
  assert_int_equal(embd_openai_decode_bytes_only(&e, body, 0, 8, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 0);
  embd_openai_free(&e);
}

static void test_options(void **state) {
  (void)state;
  const char *s = "{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}";
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_openai_options o = opts((embd_dtype)EMBD_DTYPE_COUNT_, EMBD_ORDER_LE, 0);
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  o = opts(EMBD_DTYPE_F32, (embd_byte_order)2, 0);
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  o = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0x2);
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  /* the 32 bits of room beside expected_dims, and a dtype beyond 32 bits */
  o = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0);
  o.reserved32_ = 1;
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "options: reserved32_ not zero");
  o = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0);
  o.dtype = UINT64_C(1) << 32;
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "options: dtype 4294967296 is not a dtype");
  /* expected_dims */
  o = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0);
  o.expected_dims = 3;
  json_err(s, o, EMBD_ERR_OPENAI_DIMS, at(s, "[1"), "data[0].embedding: 2 dims, expected_dims is 3 (body byte %zu)");
  o.expected_dims = 2;
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_OK);
  /* f32 kept: the floats in the asked byte order */
  o = opts(EMBD_DTYPE_F32, EMBD_ORDER_BE, EMBD_OPENAI_KEEP_DTYPE);
  assert_int_equal(embd_openai_decode(&e, s, strlen(s), &o, &err), EMBD_OK);
  assert_memory_equal(e.data, "\x3f\x80\x00\x00\x40\x00\x00\x00", 8);
  /* append: kept and float rows do not mix; same kind stitches */
  embd_openai_options f = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, 0);
  assert_int_equal(embd_openai_append(&e, s, strlen(s), &f, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(e.count, 0);
  assert_int_equal(embd_openai_append(&e, s, strlen(s), &o, &err), EMBD_OK);
  assert_int_equal(embd_openai_append(&e, s, strlen(s), &o, &err), EMBD_OK);
  assert_int_equal(e.count, 2);
  assert_memory_equal((const uint8_t *)e.data + 8, "\x3f\x80\x00\x00\x40\x00\x00\x00", 8);
  embd_openai_options ol = opts(EMBD_DTYPE_F32, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE);
  assert_int_equal(embd_openai_append(&e, s, strlen(s), &ol, &err), EMBD_ERR_INVALID_ARGUMENT);
  /* keep with an index permutation: rows of row_bytes move */
  const char *p = "{\"data\":[{\"index\":1,\"embedding\":[1,2,3]},{\"index\":0,\"embedding\":[-1,-2,-3]}]}";
  embd_openai_options k8 = opts(EMBD_DTYPE_INT8, EMBD_ORDER_LE, EMBD_OPENAI_KEEP_DTYPE);
  assert_int_equal(embd_openai_decode(&e, p, strlen(p), &k8, &err), EMBD_OK);
  assert_memory_equal(e.data, "\xff\xfe\xfd\x01\x02\x03", 6);
  embd_openai_free(&e);
}

/* Every prefix and every one-byte corruption of a metadata: an error with no vectors or
 * a decode, never a crash (ASan), always an offset inside the metadata. */
static void test_metadata_truncation(void **state) {
  (void)state;
  uint8_t body[32] = {0};
  const char *m =
      "{\"id\":\"embd-1\",\"created\":1,\"model\":\"m\",\"data\":[{\"index\":1,\"embed_dtype\":\"float16\","
      "\"endianness\":\"little\",\"start\":16,\"end\":32,\"shape\":[8]},{\"index\":0,\"embed_dtype\":\"float16\","
      "\"endianness\":\"little\",\"start\":0,\"end\":16,\"shape\":[8]}],\"usage\":{\"prompt_tokens\":2,\"total_tokens\":2}}";
  size_t n = strlen(m);
  embd_openai_options o = opts(EMBD_DTYPE_F16, EMBD_ORDER_LE, 0);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  assert_int_equal(embd_openai_decode_bytes(&e, body, 32, m, n, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 2);
  assert_true(e.has_usage);
  assert_string_equal(e.model, "m");
  for (size_t k = 0; k < n; k++) {
    char *t = malloc(k ? k : 1);
    assert_non_null(t);
    memcpy(t, m, k);
    embd_result r = embd_openai_decode_bytes(&e, body, 32, t, k, &o, &err);
    assert_int_not_equal(r, EMBD_OK);
    assert_int_equal(e.count, 0);
    assert_true(err.offset <= k);
    free(t);
  }
  char *c = malloc(n);
  assert_non_null(c);
  for (size_t k = 0; k < n; k++) {
    memcpy(c, m, n);
    c[k] ^= (char)(1 + (k % 7));
    embd_result r = embd_openai_decode_bytes(&e, body, 32, c, n, &o, &err);
    if (r != EMBD_OK) {
      assert_int_equal(e.count, 0);
      assert_true(err.offset <= n);
    }
  }
  free(c);
  embd_openai_free(&e);
}

int main(void) {
  int s = tu_isa_preflight("test_openai_dtype");
  if (s) return s;
  {
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    if (embd_openai_decode(&e, "{}", 2, NULL, &err) == EMBD_ERR_UNAVAILABLE) {
      printf("test_openai_dtype: SKIP: built without EMBD_WITH_OPENAI\n");
      return TU_SKIP;
    }
    embd_openai_free(&e);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_servers_oracle), cmocka_unit_test(test_integer_errors),
      cmocka_unit_test(test_base64_errors),  cmocka_unit_test(test_cohere_errors),
      cmocka_unit_test(test_bytes_errors),   cmocka_unit_test(test_bytes_only),
      cmocka_unit_test(test_options),        cmocka_unit_test(test_metadata_truncation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
