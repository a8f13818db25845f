/* Tokenizer maps and detokenization (embd/tokmap.h) against tests/data/tokmap-small.json
 * (scripts/gen_tokmap_small.py): loading, sha256 (constant from python's hashlib), every
 * schema rule named, truncations, detokenization (plain, byte fallback, split UTF-8 at
 * every split point in partial mode, special tokens on/off, unknown ids, capacities). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* python3 scripts/gen_tokmap_small.py prints it (hashlib.sha256 of the file's bytes) */
#define SMALL_SHA256 "sha256:6ac2c5c4e4cc2e813b37c5e4fc1889863050ce4378ffda362c9f8faa32e39ef8"
#define FB 3u /* byte_fallback_start: byte b is id FB + b */
#define EOT 299u

static char *g_json;
static size_t g_len;
static embd_tokmap *g_map;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Runs ids through a fresh detokenizer in one feed + finish; returns the text (static). */
static const char *detok_all(unsigned flags, const uint32_t *ids, size_t n, size_t *outlen) {
  static char buf[4096];
  embd_detok *d;
  assert_int_equal(embd_detok_create(g_map, flags, &d), EMBD_OK);
  size_t w = 0, w2 = 0;
  embd_error err;
  assert_int_equal(embd_detok_feed(d, ids, n, buf, sizeof buf, &w, &err), EMBD_OK);
  assert_int_equal(embd_detok_finish(d, buf + w, sizeof buf - w, &w2, &err), EMBD_OK);
  embd_detok_destroy(d);
  buf[w + w2] = 0;
  if (outlen) *outlen = w + w2;
  return buf;
}

static void test_load(void **state) {
  (void)state;
  assert_non_null(g_map);
  assert_string_equal(embd_tokmap_id(g_map), "embd-test-small-v1");
  assert_string_equal(embd_tokmap_version(g_map), "0.1.0");
  assert_string_equal(embd_tokmap_published_at(g_map), "2025-05-05T00:00:00Z");
  assert_int_equal(embd_tokmap_vocab_size(g_map), 300);
  assert_int_equal(embd_tokmap_token_count(g_map), 297);
  assert_int_equal(embd_tokmap_special_count(g_map), 4);
  uint32_t s = 0, e = 0, id = 0;
  assert_int_equal(embd_tokmap_byte_fallback(g_map, &s, &e), 1);
  assert_int_equal(s, 3);
  assert_int_equal(e, 258);
  const char *name;
  assert_int_equal(embd_tokmap_special(g_map, 3, &name, &id), EMBD_OK);
  assert_string_equal(name, "<|end_of_turn|>");
  assert_int_equal(id, EOT);
  assert_int_equal(embd_tokmap_special_id(g_map, "</s>", 4, &id), EMBD_OK);
  assert_int_equal(id, 2);
  assert_int_equal(embd_tokmap_special_id(g_map, "<x>", 3, &id), EMBD_ERR_UNKNOWN_TOKEN);
  const char *b;
  size_t n;
  embd_token_kind k;
  assert_int_equal(embd_tokmap_lookup(g_map, 259, &b, &n, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_TEXT);
  assert_memory_equal(b, "Hello", 5);
  assert_int_equal(n, 5);
  assert_int_equal(embd_tokmap_lookup(g_map, 277, &b, &n, &k), EMBD_OK); /* "a\0b" */
  assert_int_equal(n, 3);
  assert_memory_equal(b, "a\0b", 3);
  assert_int_equal(embd_tokmap_lookup(g_map, FB + 0xF0, &b, &n, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_BYTE);
  assert_int_equal(n, 1);
  assert_int_equal((unsigned char)b[0], 0xF0);
  assert_int_equal(embd_tokmap_lookup(g_map, 1, &b, &n, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_SPECIAL);
  assert_memory_equal(b, "<s>", 3);
  assert_int_equal(embd_tokmap_lookup(g_map, EOT, &b, &n, &k), EMBD_OK); /* name as text */
  assert_int_equal(k, EMBD_TOKEN_SPECIAL);
  assert_int_equal(n, 15);
  assert_int_equal(embd_tokmap_lookup(g_map, 297, &b, &n, &k), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(embd_tokmap_lookup(g_map, 300, &b, &n, &k), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(embd_tokmap_lookup(g_map, UINT32_MAX, &b, &n, &k), EMBD_ERR_UNKNOWN_TOKEN);
}

static void test_sha256(void **state) {
  (void)state;
  char h[EMBD_TOKMAP_SHA256_SIZE];
  assert_int_equal(embd_tokmap_sha256(g_json, g_len, h), EMBD_OK);
  assert_string_equal(h, SMALL_SHA256);
  assert_string_equal(embd_tokmap_hash(g_map), SMALL_SHA256);
  assert_int_equal(embd_tokmap_sha256(NULL, 0, h), EMBD_OK); /* FIPS 180-4 vector: "" */
  assert_string_equal(h, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert_int_equal(embd_tokmap_sha256("abc", 3, h), EMBD_OK);
  assert_string_equal(h, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* expected hash: matches (either case), mismatch names both, malformed is an argument error */
  embd_tokmap *m;
  embd_error err;
  char up[EMBD_TOKMAP_SHA256_SIZE];
  strcpy(up, SMALL_SHA256);
  for (char *p = up + 7; *p; p++)
    if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 32);
  assert_int_equal(embd_tokmap_load(g_json, g_len, up, &m, &err), EMBD_OK);
  embd_tokmap_free(m);
  char bad[EMBD_TOKMAP_SHA256_SIZE];
  strcpy(bad, SMALL_SHA256);
  bad[70] = bad[70] == '0' ? '1' : '0';
  assert_int_equal(embd_tokmap_load(g_json, g_len, bad, &m, &err), EMBD_ERR_MAP_HASH);
  assert_null(m);
  assert_non_null(strstr(err.message, bad));
  assert_non_null(strstr(err.message, SMALL_SHA256));
  /* one changed byte of the map: the hash catches it */
  char *copy = malloc(g_len);
  memcpy(copy, g_json, g_len);
  copy[g_len / 2] ^= 1;
  assert_int_equal(embd_tokmap_load(copy, g_len, SMALL_SHA256, &m, &err), EMBD_ERR_MAP_HASH);
  free(copy);
  assert_int_equal(embd_tokmap_load(g_json, g_len, "sha256:abc", &m, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(err.offset, 0);
  assert_string_equal(err.message, "expected_hash is not \"sha256:\" or \"SHA256:\" and 64 hex digits");
  assert_int_equal(embd_tokmap_load(g_json, g_len, "md5:" SMALL_SHA256, &m, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  /* The peers' spellings of a pin: SHA256: with either hex case, mixed case hex. The map's own
   * hash stays "sha256:" + lower case; a mismatch message shows the pin normalised so. */
  char pin[EMBD_TOKMAP_SHA256_SIZE];
  for (int v = 0; v < 3; v++) {
    strcpy(pin, v == 0 ? up : SMALL_SHA256);
    memcpy(pin, "SHA256:", 7);
    if (v == 2)
      for (char *p = pin + 7; *p; p += 2)
        if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 32);
    assert_int_equal(embd_tokmap_load(g_json, g_len, pin, &m, &err), EMBD_OK);
    assert_string_equal(embd_tokmap_hash(m), SMALL_SHA256);
    embd_tokmap_free(m);
  }
  memcpy(bad, "SHA256:", 7);
  for (char *p = bad + 7; *p; p++)
    if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 32);
  assert_int_equal(embd_tokmap_load(g_json, g_len, bad, &m, &err), EMBD_ERR_MAP_HASH);
  char badl[EMBD_TOKMAP_SHA256_SIZE]; /* bad as embd writes it: sha256: + lower case */
  strcpy(badl, bad);
  memcpy(badl, "sha256:", 7);
  for (char *p = badl + 7; *p; p++)
    if (*p >= 'A' && *p <= 'F') *p = (char)(*p + 32);
  assert_true(strcmp(badl, bad) != 0);
  assert_non_null(strstr(err.message, badl)); /* "expected sha256:<lower>, got ..." */
  /* Other prefixes' spellings are refused: only sha256: and SHA256:. */
  static const char *const refused[] = {"Sha256:", "sha-256:", "SHA-256:", "sha256=", " sha256:"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char pre[96];
    snprintf(pre, sizeof pre, "%s%s", refused[i], SMALL_SHA256 + 7);
    assert_int_equal(embd_tokmap_load(g_json, g_len, pre, &m, &err), EMBD_ERR_INVALID_ARGUMENT);
    assert_null(m);
  }
}

/* ---- schema violations: each one named ------------------------------------------------- */

#define BASE_TOKENS "\"tokens\":{\"0\":\"a\",\"1\":\"b\",\"3\":\"<0x00>\"}"
static const struct {
  const char *json;
  embd_result want;
  const char *named; /* substring of the message */
} g_bad[] = {
    {"[]", EMBD_ERR_MAP_SCHEMA, "not a JSON object"},
    {"{\"id\":\"x\"", EMBD_ERR_MAP_SCHEMA, "JSON"},
    {"{\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "id: required"},
    {"{\"id\":\"x\",\"vocab_size\":4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "version: required"},
    {"{\"id\":\"x\",\"version\":\"1\"," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: required"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4}", EMBD_ERR_MAP_SCHEMA, "tokens: required"},
    {"{\"id\":1,\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "id: not a string"},
    {"{\"id\":\"x\",\"version\":2,\"vocab_size\":4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "version: not a string"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":\"4\"," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: not an integer"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4.5," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: not an integer"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":0," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: 0 outside"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":-4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: -4 is negative"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4294967297," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "vocab_size: 4294967297 outside"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":[\"a\"]}", EMBD_ERR_MAP_SCHEMA, "tokens: not an object"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"0\":1}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"0\"]: value is not a string"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"a\":\"x\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"a\"]: key is not a token id"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"01\":\"x\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"01\"]: key"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"-1\":\"x\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"-1\"]: key"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"4294967296\":\"x\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"4294967296\"]: key"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":256,\"tokens\":{\"17\":\"x\",\"300\":\"y\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"300\"]: id 300 >= vocab_size 256"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"4\":\"x\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"4\"]: id 4 >= vocab_size 4"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"1\":\"x\",\"2\":\"y\",\"1\":\"z\"}}", EMBD_ERR_MAP_SCHEMA, "tokens[\"1\"]: id appears twice"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{\"1\":\"\\ud800\"}}", EMBD_ERR_MAP_SCHEMA, "unpaired surrogate \\uD800 (no low surrogate after it) (map byte 54)"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"special_tokens\":[]}", EMBD_ERR_MAP_SCHEMA, "special_tokens: not an object"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"special_tokens\":{\"eos\":\"1\"}}", EMBD_ERR_MAP_SCHEMA, "special_tokens[\"eos\"]: not an integer"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"special_tokens\":{\"eos\":-1}}", EMBD_ERR_MAP_SCHEMA, "special_tokens[\"eos\"]: -1 is negative"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"special_tokens\":{\"eos\":4}}", EMBD_ERR_MAP_SCHEMA, "special_tokens[\"eos\"]: id 4 >= vocab_size 4"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"special_tokens\":{\"eos\":1,\"eos\":2}}", EMBD_ERR_MAP_SCHEMA, "special_tokens[\"eos\"]: name appears twice"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":3,\"byte_fallback_end\":3,\"special_tokens\":{\"eos\":3}}", EMBD_ERR_MAP_SCHEMA, "special_tokens[\"eos\"]: id 3 lies in the byte-fallback range"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":3}", EMBD_ERR_MAP_SCHEMA, "byte_fallback_end: required"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_end\":3}", EMBD_ERR_MAP_SCHEMA, "byte_fallback_start: required"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":3,\"byte_fallback_end\":2}", EMBD_ERR_MAP_SCHEMA, "byte_fallback_end: 2 < byte_fallback_start 3"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":3,\"byte_fallback_end\":4}", EMBD_ERR_MAP_SCHEMA, "byte_fallback_end: id 4 >= vocab_size 4"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":400," BASE_TOKENS ",\"byte_fallback_start\":3,\"byte_fallback_end\":259}", EMBD_ERR_MAP_SCHEMA, "257 ids, more than the 256"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":2,\"byte_fallback_end\":3}", EMBD_ERR_MAP_SCHEMA, "tokens[\"3\"]: byte-fallback id 3 is byte 0x01, not <0x00>"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":\"3\",\"byte_fallback_end\":3}", EMBD_ERR_MAP_SCHEMA, "byte_fallback_start: not an integer"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"published_at\":5}", EMBD_ERR_MAP_SCHEMA, "published_at: not a string"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"merges\":[]}", EMBD_ERR_MAP_SCHEMA, "\"merges\": not a field of tokenizer map schema v0.1"},
    {"{\"id\":\"x\",\"id\":\"y\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS "}", EMBD_ERR_MAP_SCHEMA, "id: field appears twice"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS "} {}", EMBD_ERR_MAP_SCHEMA, "content after"},
};

static void test_schema_named(void **state) {
  (void)state;
  /* the base document itself loads */
  embd_tokmap *m = NULL;
  embd_error err;
  const char *ok = "{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4," BASE_TOKENS ",\"byte_fallback_start\":3,\"byte_fallback_end\":3,\"special_tokens\":{\"eos\":2}}";
  assert_int_equal(embd_tokmap_load(ok, strlen(ok), NULL, &m, &err), EMBD_OK);
  assert_int_equal(embd_tokmap_token_count(m), 3);
  embd_tokmap_free(m);
  for (size_t i = 0; i < sizeof g_bad / sizeof g_bad[0]; i++) {
    memset(&err, 0, sizeof err);
    m = (embd_tokmap *)&err; /* must come back NULL */
    embd_result r = embd_tokmap_load(g_bad[i].json, strlen(g_bad[i].json), NULL, &m, &err);
    if (r != g_bad[i].want || !strstr(err.message, g_bad[i].named) || m != NULL || err.result != r ||
        err.offset > strlen(g_bad[i].json)) {
      fprintf(stderr, "case %zu: %s\n  got %d \"%s\" (offset %zu), want %d naming \"%s\"\n", i,
              g_bad[i].json, r, err.message, err.offset, g_bad[i].want, g_bad[i].named);
      fail();
    }
  }
}

/* A sparse map with a huge vocabulary: binary-search lookup, no giant table. */
static void test_sparse(void **state) {
  (void)state;
  const char *j = "{\"id\":\"big\",\"version\":\"1\",\"vocab_size\":4294967296,\"tokens\":{\"4294967295\":\"top\",\"0\":\"zero\",\"100000\":\"mid\"},\"special_tokens\":{\"eos\":3000000000}}";
  embd_tokmap *m;
  embd_error err;
  assert_int_equal(embd_tokmap_load(j, strlen(j), NULL, &m, &err), EMBD_OK);
  const char *b;
  size_t n;
  assert_int_equal(embd_tokmap_lookup(m, 4294967295u, &b, &n, NULL), EMBD_OK);
  assert_memory_equal(b, "top", 3);
  assert_int_equal(embd_tokmap_lookup(m, 3000000000u, &b, &n, NULL), EMBD_OK);
  assert_memory_equal(b, "eos", 3);
  assert_int_equal(embd_tokmap_lookup(m, 99999, &b, &n, NULL), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(embd_tokmap_byte_fallback(m, NULL, NULL), 0);
  embd_tokmap_free(m);
}

/* Every prefix of the map is an error, never a crash (ASan build: exact-size copies). */
static void test_truncation(void **state) {
  (void)state;
  embd_error err;
  for (size_t k = 0; k < g_len; k++) {
    char *p = malloc(k ? k : 1);
    memcpy(p, g_json, k);
    embd_tokmap *m = (embd_tokmap *)&err;
    embd_result r = embd_tokmap_load(p, k, NULL, &m, &err);
    /* the file ends "}\n": only dropping the newline leaves a valid map */
    if (k == g_len - 1) {
      assert_int_equal(r, EMBD_OK);
      embd_tokmap_free(m);
    } else {
      if (r != EMBD_ERR_MAP_SCHEMA) fprintf(stderr, "prefix %zu: %d %s\n", k, r, err.message);
      assert_int_equal(r, EMBD_ERR_MAP_SCHEMA);
      assert_null(m);
    }
    free(p);
  }
}

/* ---- detokenization ------------------------------------------------------------------- */

static void test_detok_plain(void **state) {
  (void)state;
  uint32_t ids[] = {1, 259, 260, 261, 263, 270, 273, 274, 275, 276, 2};
  size_t n;
  const char *t = detok_all(0, ids, 11, &n);
  assert_string_equal(t, "<s>Hello world!\n caf\xC3\xA9\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"
                         "\xF0\x9F\x98\x80\xF0\x9F\x9A\x80 go</s>");
  t = detok_all(EMBD_DETOK_SKIP_SPECIAL, ids, 11, &n);
  assert_string_equal(t, "Hello world!\n caf\xC3\xA9\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"
                         "\xF0\x9F\x98\x80\xF0\x9F\x9A\x80 go");
  /* a special token without a "tokens" entry renders its name; embedded NUL kept */
  uint32_t ids2[] = {296, EOT, 277, 278, 279, 284};
  t = detok_all(0, ids2, 6, &n);
  assert_int_equal(n, 3 + 15 + 3 + 8 + 10 + 6);
  assert_memory_equal(t, "end<|end_of_turn|>a\0b\"quoted\"back\\slash<0x41>", n);
  t = detok_all(EMBD_DETOK_SKIP_SPECIAL, ids2, 6, &n);
  assert_memory_equal(t, "enda\0b\"quoted\"back\\slash<0x41>", n);
  /* empty feed */
  t = detok_all(0, NULL, 0, &n);
  assert_int_equal(n, 0);
}

static void test_detok_byte_fallback(void **state) {
  (void)state;
  size_t n;
  /* "Hi" as bytes, U+00E9 as two bytes, U+1F600 as four, then text */
  uint32_t ids[] = {FB + 'H', FB + 'i', FB + 0xC3, FB + 0xA9, FB + 0xF0, FB + 0x9F, FB + 0x98, FB + 0x80, 259};
  assert_string_equal(detok_all(0, ids, 9, &n), "Hi\xC3\xA9\xF0\x9F\x98\x80Hello");
  /* ill-formed: one U+FFFD per maximal subpart (WHATWG / Unicode 6.0 3.9) */
  struct {
    uint8_t in[8];
    size_t n;
    const char *want;
  } cases[] = {
      {{0x80}, 1, "\xEF\xBF\xBD"},                                  /* lone continuation */
      {{0xC0, 0x80}, 2, "\xEF\xBF\xBD\xEF\xBF\xBD"},                /* overlong lead */
      {{0xF0, 0x9F, 0x98}, 3, "\xEF\xBF\xBD"},                      /* truncated at the end */
      {{0xF0, 0x9F, 0x41}, 3, "\xEF\xBF\xBD" "A"},                  /* broken by ASCII */
      {{0xED, 0xA0, 0x80}, 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
      {{0xE0, 0x80, 0x80}, 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* overlong 3-byte */
      {{0xF4, 0x90, 0x80, 0x80}, 4, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {{0xFF, 0xE2, 0x82, 0xAC}, 4, "\xEF\xBF\xBD\xE2\x82\xAC"},
      {{0xE2, 0x82, 0xC3, 0xA9}, 4, "\xEF\xBF\xBD\xC3\xA9"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint32_t v[8];
    for (size_t i = 0; i < cases[c].n; i++) v[i] = FB + cases[c].in[i];
    assert_string_equal(detok_all(0, v, cases[c].n, &n), cases[c].want);
    assert_string_equal(detok_all(EMBD_DETOK_PARTIAL, v, cases[c].n, &n), cases[c].want);
  }
  /* The Unicode Standard's own example (ch. 3, "U+FFFD Substitution of Maximal Subparts"):
   * 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d: the
   * truncated F1 80 80, E1 80 and C2 are one maximal subpart each, every lone 80/BF one. */
  static const uint8_t u[] = {0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64};
  uint32_t uv[sizeof u];
  for (size_t i = 0; i < sizeof u; i++) uv[i] = FB + u[i];
#define R "\xEF\xBF\xBD"
  assert_string_equal(detok_all(0, uv, sizeof u, &n), "a" R R R "b" R "c" R R "d");
  assert_string_equal(detok_all(EMBD_DETOK_PARTIAL, uv, sizeof u, &n), "a" R R R "b" R "c" R R "d");
#undef R
  /* a text or special token interrupts a sequence (rendered or not) */
  uint32_t v2[] = {FB + 0xE2, FB + 0x82, 2, FB + 0xAC};
  assert_string_equal(detok_all(0, v2, 4, &n), "\xEF\xBF\xBD</s>\xEF\xBF\xBD");
  assert_string_equal(detok_all(EMBD_DETOK_SKIP_SPECIAL, v2, 4, &n), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

/* A 4-byte emoji (and 2/3-byte characters) in byte-fallback ids, split across 2 and 3
 * feeds at every split point: partial mode holds the bytes back and emits the character
 * once complete; without partial mode each feed is complete (U+FFFD at its end). */
static void test_detok_split(void **state) {
  (void)state;
  static const char *chars[] = {"\xF0\x9F\x98\x80", "\xE2\x82\xAC", "\xC3\xA9", "\xF0\x90\x8D\x88"};
  for (size_t c = 0; c < 4; c++) {
    const char *ch = chars[c];
    size_t cl = strlen(ch);
    uint32_t ids[8];
    size_t n = 0;
    ids[n++] = 259; /* Hello */
    for (size_t i = 0; i < cl; i++) ids[n++] = FB + (uint8_t)ch[i];
    ids[n++] = 261; /* ! */
    char want[32];
    snprintf(want, sizeof want, "Hello%s!", ch);
    for (size_t a = 0; a <= n; a++)
      for (size_t b = a; b <= n; b++) {
        embd_detok *d;
        assert_int_equal(embd_detok_create(g_map, EMBD_DETOK_PARTIAL, &d), EMBD_OK);
        char out[64];
        size_t pos = 0, w = 0;
        embd_error err;
        size_t cuts[4] = {0, a, b, n};
        for (int k = 0; k < 3; k++) {
          assert_int_equal(embd_detok_feed(d, ids + cuts[k], cuts[k + 1] - cuts[k], out + pos,
                                           sizeof out - pos, &w, &err), EMBD_OK);
          pos += w;
          /* what is held back is exactly the started, incomplete sequence */
          size_t done = cuts[k + 1];
          size_t held = (done > 1 && done < 1 + cl) ? done - 1 : 0;
          assert_int_equal(embd_detok_pending(d), held);
          /* the text so far is valid UTF-8: never a partial character */
          char tmp[64];
          memcpy(tmp, out, pos);
          tmp[pos] = 0;
          assert_true(pos <= strlen(want) && !memcmp(tmp, want, pos));
        }
        assert_int_equal(embd_detok_finish(d, out + pos, sizeof out - pos, &w, &err), EMBD_OK);
        assert_int_equal(w, 0);
        pos += w;
        out[pos] = 0;
        assert_string_equal(out, want);
        embd_detok_destroy(d);
      }
    /* incomplete at the end of the stream: held back, then flushed as one U+FFFD */
    for (size_t k = 1; k < cl; k++) {
      embd_detok *d;
      assert_int_equal(embd_detok_create(g_map, EMBD_DETOK_PARTIAL, &d), EMBD_OK);
      char out[16];
      size_t w = 1;
      embd_error err;
      assert_int_equal(embd_detok_feed(d, ids + 1, k, out, sizeof out, &w, &err), EMBD_OK);
      assert_int_equal(w, 0);
      assert_int_equal(embd_detok_pending(d), k);
      assert_int_equal(embd_detok_finish(d, out, 2, &w, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
      assert_int_equal(w, 3);
      assert_int_equal(embd_detok_pending(d), k); /* nothing lost */
      assert_int_equal(embd_detok_finish(d, out, 3, &w, &err), EMBD_OK);
      assert_int_equal(w, 3);
      assert_memory_equal(out, "\xEF\xBF\xBD", 3);
      assert_int_equal(embd_detok_pending(d), 0);
      embd_detok_destroy(d);
      /* without partial mode the feed itself ends with the flush */
      assert_string_equal(detok_all(0, ids + 1, k, &w), "\xEF\xBF\xBD");
    }
  }
}

static void test_detok_unknown(void **state) {
  (void)state;
  embd_detok *d;
  assert_int_equal(embd_detok_create(g_map, EMBD_DETOK_PARTIAL, &d), EMBD_OK);
  char out[64];
  size_t w = 0;
  embd_error err;
  uint32_t pre[] = {FB + 0xF0};
  assert_int_equal(embd_detok_feed(d, pre, 1, out, sizeof out, &w, &err), EMBD_OK);
  uint32_t ids[] = {FB + 0x9F, 259, 297, 260};
  assert_int_equal(embd_detok_feed(d, ids, 4, out, sizeof out, &w, &err), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(w, 0);
  assert_int_equal(err.offset, 2);
  assert_non_null(strstr(err.message, "ids[2]: token id 297"));
  assert_int_equal(embd_detok_pending(d), 1); /* state untouched */
  uint32_t ids2[] = {300};
  assert_int_equal(embd_detok_feed(d, ids2, 1, out, sizeof out, &w, &err), EMBD_ERR_UNKNOWN_TOKEN);
  assert_non_null(strstr(err.message, "ids[0]: token id 300 >= vocab_size 300"));
  uint32_t ids3[] = {UINT32_MAX};
  assert_int_equal(embd_detok_feed(d, ids3, 1, out, sizeof out, &w, &err), EMBD_ERR_UNKNOWN_TOKEN);
  /* drop the unknown id and go on: nothing was lost */
  uint32_t ok[] = {FB + 0x9F, FB + 0x98, FB + 0x80, 259};
  assert_int_equal(embd_detok_feed(d, ok, 4, out, sizeof out, &w, &err), EMBD_OK);
  assert_int_equal(w, 9);
  assert_memory_equal(out, "\xF0\x9F\x98\x80Hello", 9);
  embd_detok_destroy(d);
  /* arguments */
  assert_int_equal(embd_detok_create(NULL, 0, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_detok_create(g_map, 8, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(d);
}

/* EMBD_DETOK_REPLACE_UNKNOWN / EMBD_DETOK_REFERENCE: the reference client's rendering of ids
 * the map lacks (U+FFFD) beside the strict default (the error above). */
static void test_detok_replace_unknown(void **state) {
  (void)state;
#define R "\xEF\xBF\xBD"
  size_t n;
  /* 297 (in the vocabulary, not in the map), 300 (>= vocab_size), UINT32_MAX; special 2 */
  uint32_t ids[] = {259, 297, 260, 300, UINT32_MAX, 2, 261};
  assert_string_equal(detok_all(EMBD_DETOK_REPLACE_UNKNOWN, ids, 7, &n), "Hello" R " world" R R "</s>!");
  assert_string_equal(detok_all(EMBD_DETOK_REFERENCE, ids, 7, &n), "Hello" R " world" R R "!");
  assert_int_equal(EMBD_DETOK_REFERENCE, EMBD_DETOK_SKIP_SPECIAL | EMBD_DETOK_REPLACE_UNKNOWN);
  /* An unknown id ends a pending byte sequence like any non-byte token: U+FFFD for the
   * sequence, then U+FFFD for the id; the held-back bytes across feeds included. */
  embd_detok *d;
  assert_int_equal(embd_detok_create(g_map, EMBD_DETOK_PARTIAL | EMBD_DETOK_REFERENCE, &d), EMBD_OK);
  char out[64];
  size_t w = 0;
  embd_error err;
  uint32_t pre[] = {FB + 0xF0, FB + 0x9F};
  assert_int_equal(embd_detok_feed(d, pre, 2, out, sizeof out, &w, &err), EMBD_OK);
  assert_int_equal(w, 0);
  assert_int_equal(embd_detok_pending(d), 2);
  uint32_t unk[] = {297};
  /* a size query: 6 bytes, nothing consumed */
  assert_int_equal(embd_detok_feed(d, unk, 1, NULL, 0, &w, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 6);
  assert_int_equal(embd_detok_pending(d), 2);
  assert_int_equal(embd_detok_feed(d, unk, 1, out, sizeof out, &w, &err), EMBD_OK);
  assert_int_equal(w, 6);
  assert_memory_equal(out, R R, 6);
  assert_int_equal(embd_detok_pending(d), 0);
  /* the bound covers a feed of nothing but unknown ids */
  uint32_t all_unk[16];
  for (size_t i = 0; i < 16; i++) all_unk[i] = 297;
  assert_int_equal(embd_detok_feed(d, all_unk, 16, out, sizeof out, &w, &err), EMBD_OK);
  assert_int_equal(w, 48);
  assert_true(embd_detok_bound(g_map, 16) >= 48);
  embd_detok_destroy(d);
#undef R
}

/* Capacity: every cap below the need gives OUTPUT_TOO_SMALL with the exact need, writes
 * nothing (guard byte) and consumes nothing; the need itself works; bound() covers it. */
static void test_detok_capacity(void **state) {
  (void)state;
  uint32_t ids[] = {FB + 0xE2, 259, 275, FB + 0xF0, FB + 0x9F, 2, 270, FB + 0xC3};
  for (unsigned flags = 0; flags < 4; flags++) {
    embd_detok *d;
    assert_int_equal(embd_detok_create(g_map, flags, &d), EMBD_OK);
    size_t need = 0, w = 0;
    embd_error err;
    assert_int_equal(embd_detok_feed(d, ids, 8, NULL, 0, &need, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_true(need > 0 && need <= embd_detok_bound(g_map, 8));
    char *out = malloc(need + 1);
    for (size_t cap = 0; cap < need; cap++) {
      memset(out, 0x55, need + 1);
      assert_int_equal(embd_detok_feed(d, ids, 8, out, cap, &w, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
      assert_int_equal(w, need);
      assert_int_equal((unsigned char)out[0], 0x55);
      assert_int_equal(embd_detok_pending(d), 0);
    }
    assert_int_equal(embd_detok_feed(d, ids, 8, out, need, &w, &err), EMBD_OK);
    assert_int_equal(w, need);
    assert_int_equal(embd_detok_pending(d), (flags & EMBD_DETOK_PARTIAL) ? 1 : 0);
    size_t fin;
    assert_int_equal(embd_detok_finish(d, NULL, 0, &fin, &err),
                     (flags & EMBD_DETOK_PARTIAL) ? EMBD_ERR_OUTPUT_TOO_SMALL : EMBD_OK);
    free(out);
    embd_detok_destroy(d);
  }
  assert_true(embd_detok_bound(g_map, SIZE_MAX / 2) == SIZE_MAX);
  size_t w;
  embd_detok *d;
  assert_int_equal(embd_detok_create(g_map, 0, &d), EMBD_OK);
  assert_int_equal(embd_detok_feed(d, NULL, 1, NULL, 0, &w, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_detok_feed(d, NULL, 0, NULL, 5, &w, NULL), EMBD_ERR_INVALID_ARGUMENT);
  embd_detok_destroy(d);
}

/* Random id streams (known ids only) cut into random feeds: partial mode gives exactly
 * the one-feed result; every output is valid UTF-8 and fits bound(). */
static void test_detok_random(void **state) {
  (void)state;
  tu_rng r = {tu_seed()};
  size_t rounds = tu_scaled(300, 50);
  for (size_t it = 0; it < rounds; it++) {
    uint32_t ids[64];
    size_t n = tu_range(&r, 0, 64);
    for (size_t i = 0; i < n; i++) {
      size_t pick = tu_range(&r, 0, 9);
      if (pick < 5) ids[i] = FB + (uint32_t)tu_range(&r, 0x80, 0xF4); /* mostly multi-byte */
      else if (pick < 8) ids[i] = 259 + (uint32_t)tu_range(&r, 0, 37);
      else ids[i] = pick == 8 ? EOT : (uint32_t)tu_range(&r, 0, 2);
    }
    unsigned flags = (unsigned)tu_range(&r, 0, 1);
    size_t n1;
    char whole[4096];
    const char *t1 = detok_all(flags, ids, n, &n1);
    memcpy(whole, t1, n1);
    assert_true(n1 <= embd_detok_bound(g_map, n));
    embd_detok *d;
    assert_int_equal(embd_detok_create(g_map, flags | EMBD_DETOK_PARTIAL, &d), EMBD_OK);
    char out[4096];
    size_t pos = 0, w;
    embd_error err;
    for (size_t i = 0; i < n;) {
      size_t k = tu_range(&r, 0, n - i);
      assert_int_equal(embd_detok_feed(d, ids + i, k, out + pos, sizeof out - pos, &w, &err), EMBD_OK);
      pos += w;
      i += k;
    }
    assert_int_equal(embd_detok_finish(d, out + pos, sizeof out - pos, &w, &err), EMBD_OK);
    pos += w;
    embd_detok_destroy(d);
    assert_int_equal(pos, n1);
    assert_memory_equal(out, whole, n1);
  }
}

int main(void) {
  int s = tu_isa_preflight("test_tokmap");
  if (s) return s;
  g_json = slurp(EMBD_TOKMAP_SMALL, &g_len);
  if (!g_json) {
    fprintf(stderr, "test_tokmap: cannot read %s\n", EMBD_TOKMAP_SMALL);
    return 1;
  }
  embd_error err;
  if (embd_tokmap_load(g_json, g_len, SMALL_SHA256, &g_map, &err) != EMBD_OK) {
    fprintf(stderr, "test_tokmap: %s: %s\n", EMBD_TOKMAP_SMALL, err.message);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load),           cmocka_unit_test(test_sha256),
      cmocka_unit_test(test_detok_replace_unknown),
      cmocka_unit_test(test_schema_named),   cmocka_unit_test(test_sparse),
      cmocka_unit_test(test_truncation),     cmocka_unit_test(test_detok_plain),
      cmocka_unit_test(test_detok_byte_fallback), cmocka_unit_test(test_detok_split),
      cmocka_unit_test(test_detok_unknown),  cmocka_unit_test(test_detok_capacity),
      cmocka_unit_test(test_detok_random),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  embd_tokmap_free(g_map);
  free(g_json);
  return rc;
}
