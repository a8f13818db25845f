/* Tokenizer maps of schema v2 / v2.1 (embd/tokmap.h, docs/TOKMAP.md § Schema v2): maps built
 * here from the rules (the GPT-2 byte alphabet is rebuilt the way its definition states it,
 * independently of the loader's closed form), every schema rule named, byte_level /
 * metaspace / plain decoding, byte_level streams checked against a v0.1 byte-fallback map
 * carrying the same bytes, a sha256 pin (constant from python's hashlib), truncations,
 * capacities and the bound. v0.1 stays covered by test_tokmap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* ---- a small JSON writer ------------------------------------------------------------- */

typedef struct jbuf {
  char *p;
  size_t n, cap;
} jbuf;

static void jput(jbuf *b, const void *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void jstr(jbuf *b, const char *s) { jput(b, s, strlen(s)); }
/* s (UTF-8, n bytes) as a JSON string: '"', '\\' and control bytes escaped */
static void jquote(jbuf *b, const char *s, size_t n) {
  jput(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char e[8];
    if (c == '"' || c == '\\') {
      e[0] = '\\', e[1] = (char)c;
      jput(b, e, 2);
    } else if (c < 0x20) {
      snprintf(e, sizeof e, "\\u%04x", c);
      jput(b, e, 6);
    } else {
      jput(b, &c, 1);
    }
  }
  jput(b, "\"", 1);
}

static size_t utf8_put(uint32_t cp, char *o) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
  o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 63)), o[2] = (char)(0x80 | (cp & 63));
  return 3;
}

/* GPT-2's bytes_to_unicode as defined: the printable bytes 33..126, 161..172, 174..255 are
 * themselves; every other byte, in increasing order, takes the next code point from 256. */
static uint32_t g_g2[256];
static void g2_build(void) {
  uint32_t next = 256;
  for (unsigned b = 0; b < 256; b++) {
    int self = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    g_g2[b] = self ? b : next++;
  }
  assert_int_equal(next, 256 + 68);
}
/* bytes -> the byte_level vocab string (UTF-8) */
static size_t g2_encode(const unsigned char *in, size_t n, char *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += utf8_put(g_g2[in[i]], out + k);
  return k;
}

static embd_tokmap *load_ok(const char *json, size_t len) {
  embd_tokmap *m = NULL;
  embd_error err;
  embd_result r = embd_tokmap_load(json, len, NULL, &m, &err);
  if (r != EMBD_OK) fprintf(stderr, "load: %d %s\n  %.300s\n", r, err.message, json);
  assert_int_equal(r, EMBD_OK);
  return m;
}

/* One feed + finish through a fresh detokenizer; the text in buf (NUL-terminated). */
static size_t detok(const embd_tokmap *m, unsigned flags, const uint32_t *ids, size_t n, char *buf,
                    size_t cap) {
  embd_detok *d;
  assert_int_equal(embd_detok_create(m, flags, &d), EMBD_OK);
  size_t w = 0, w2 = 0;
  embd_error err;
  embd_result r = embd_detok_feed(d, ids, n, buf, cap - 1, &w, &err);
  if (r) fprintf(stderr, "feed: %s\n", err.message);
  assert_int_equal(r, EMBD_OK);
  assert_int_equal(embd_detok_finish(d, buf + w, cap - 1 - w, &w2, &err), EMBD_OK);
  embd_detok_destroy(d);
  buf[w + w2] = 0;
  return w + w2;
}

/* ---- the byte_level map ------------------------------------------------------------- */
/* ids 0..255: the single byte b; 256..: the multi-byte pieces below; 300 a special in the
 * vocab, 301 a special outside it, 302 a token outside the GPT-2 alphabet (kept as UTF-8). */
static const char *const k_pieces[] = {" world", "Hello", "\xC3\xA9", "\xF0\x9F\x98", "\x80\x80\x80",
                                       "a\"b\\c", "\n\t\r ", "\xE6\x97\xA5\xE6"};
#define NPIECES (sizeof k_pieces / sizeof k_pieces[0])
static char *g_bl;
static size_t g_bl_len;
static embd_tokmap *g_blm;
static embd_tokmap *g_fb; /* v0.1: the 256 bytes as byte-fallback ids 0..255 */

static void build_byte_level(void) {
  jbuf b = {0};
  char key[64];
  jstr(&b, "{\"id\":\"bl\",\"version\":\"2\",\"vocab_size\":303,\"encoder\":\"byte_level\",\"vocab\":{");
  for (unsigned i = 0; i < 256; i++) {
    unsigned char c = (unsigned char)i;
    size_t k = g2_encode(&c, 1, key);
    char num[24];
    if (i) jstr(&b, ",");
    jquote(&b, key, k);
    snprintf(num, sizeof num, ":%u", i);
    jstr(&b, num);
  }
  for (unsigned i = 0; i < NPIECES; i++) {
    size_t k = g2_encode((const unsigned char *)k_pieces[i], strlen(k_pieces[i]), key);
    char num[24];
    jstr(&b, ",");
    jquote(&b, key, k);
    snprintf(num, sizeof num, ":%u", 256 + i);
    jstr(&b, num);
  }
  /* U+FF5C FULLWIDTH VERTICAL LINE is no GPT-2 code point: stays its UTF-8 */
  jstr(&b, ",\"<|eot|>\":300,\"<\xEF\xBD\x9C" "end\xEF\xBD\x9C>\":302},");
  jstr(&b, "\"merges\":[\"\xC3\x83 \xC2\xA9\"],"); /* "Ã ©": the two bytes of U+00E9 */
  jstr(&b, "\"special_tokens\":{\"<|eot|>\":300,\"<|pad|>\":301}}");
  g_bl = b.p;
  g_bl_len = b.n;
}

static int setup(void **state) {
  (void)state;
  g2_build();
  build_byte_level();
  g_blm = load_ok(g_bl, g_bl_len);
  const char *fb = "{\"id\":\"fb\",\"version\":\"1\",\"vocab_size\":256,\"tokens\":{},"
                   "\"byte_fallback_start\":0,\"byte_fallback_end\":255}";
  g_fb = load_ok(fb, strlen(fb));
  return 0;
}
static int teardown(void **state) {
  (void)state;
  embd_tokmap_free(g_blm);
  embd_tokmap_free(g_fb);
  free(g_bl);
  return 0;
}

static void test_byte_level_load(void **state) {
  (void)state;
  assert_string_equal(embd_tokmap_schema(g_blm), "2");
  assert_int_equal(embd_tokmap_encoder_of(g_blm), EMBD_TOKMAP_ENCODER_BYTE_LEVEL);
  assert_string_equal(embd_tokmap_version(g_blm), "2");
  assert_int_equal(embd_tokmap_token_count(g_blm), 256 + NPIECES + 2);
  assert_int_equal(embd_tokmap_special_count(g_blm), 2);
  assert_string_equal(embd_tokmap_schema(g_fb), "0.1");
  assert_int_equal(embd_tokmap_encoder_of(g_fb), EMBD_TOKMAP_ENCODER_NONE);
  const char *p;
  size_t n;
  embd_token_kind k;
  /* every single byte decodes to itself */
  for (unsigned i = 0; i < 256; i++) {
    assert_int_equal(embd_tokmap_lookup(g_blm, i, &p, &n, &k), EMBD_OK);
    assert_int_equal(k, EMBD_TOKEN_BYTES);
    assert_int_equal(n, 1);
    assert_int_equal((unsigned char)p[0], i);
  }
  for (unsigned i = 0; i < NPIECES; i++) {
    assert_int_equal(embd_tokmap_lookup(g_blm, 256 + i, &p, &n, &k), EMBD_OK);
    assert_int_equal(k, EMBD_TOKEN_BYTES);
    assert_int_equal(n, strlen(k_pieces[i]));
    assert_memory_equal(p, k_pieces[i], n);
  }
  assert_int_equal(embd_tokmap_lookup(g_blm, 300, &p, &n, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_SPECIAL);
  assert_memory_equal(p, "<|eot|>", n);
  assert_int_equal(embd_tokmap_lookup(g_blm, 301, &p, &n, &k), EMBD_OK); /* name as text */
  assert_memory_equal(p, "<|pad|>", n);
  assert_int_equal(embd_tokmap_lookup(g_blm, 302, &p, &n, &k), EMBD_OK);
  assert_int_equal(n, 11);
  assert_memory_equal(p, "<\xEF\xBD\x9C" "end\xEF\xBD\x9C>", n);
  assert_int_equal(embd_tokmap_lookup(g_blm, 264, &p, &n, &k), EMBD_ERR_UNKNOWN_TOKEN);
}

/* Hand-written keys straight from the rule: U+0120 is the space, U+010A the newline,
 * "\u00c3\u00a9" the two bytes of U+00E9. */
static void test_byte_level_literal(void **state) {
  (void)state;
  const char *j = "{\"id\":\"h\",\"version\":\"2\",\"vocab_size\":10,\"encoder\":\"byte_level\","
                  "\"vocab\":{\"\\u0120hello\":0,\"\\u00c3\\u00a9\":1,\"\\u010a\":2,\"\\u00c3\":3,"
                  "\"\\u00a9\":4,\"\\u0100\":5,\"\\u0143\":6,\"\\u00ad\":7,\"\\u0142\":8}}";
  embd_tokmap *m = load_ok(j, strlen(j));
  char buf[256];
  uint32_t a[] = {0, 1, 2, 3, 4, 5, 6, 8};
  size_t n = detok(m, 0, a, 8, buf, sizeof buf);
  /* U+0100 = 0x00 (the first remapped byte), U+0143 = 0xAD (the last), U+0142 = 0xA0;
   * 0xAD and 0xA0 alone are ill-formed: one U+FFFD each. U+00AD (id 7) is no GPT-2 code
   * point (byte 0xAD is U+0143): kept as its UTF-8, C2 AD. */
  assert_int_equal(n, 6 + 2 + 1 + 2 + 1 + 3 + 3);
  assert_memory_equal(buf, " hello\xC3\xA9\n\xC3\xA9\x00\xEF\xBF\xBD\xEF\xBF\xBD", n);
  const char *p;
  size_t len;
  assert_int_equal(embd_tokmap_lookup(m, 7, &p, &len, NULL), EMBD_OK);
  assert_int_equal(len, 2);
  assert_memory_equal(p, "\xC2\xAD", 2);
  embd_tokmap_free(m);
}

/* The byte_level map over random token streams gives exactly what the v0.1 byte-fallback
 * map gives for the same bytes: the same assembler, one U+FFFD per maximal subpart. Split
 * at random into feeds in partial mode it gives the same again. */
static void test_byte_level_vs_fallback(void **state) {
  (void)state;
  tu_rng r = {tu_seed()};
  size_t rounds = tu_scaled(400, 50);
  for (size_t it = 0; it < rounds; it++) {
    uint32_t ids[48], bytes[48 * 8];
    size_t n = tu_range(&r, 0, 48), nb = 0;
    for (size_t i = 0; i < n; i++) {
      size_t pick = tu_range(&r, 0, 3);
      ids[i] = pick ? (uint32_t)tu_range(&r, 0x7E, 0xF5) : 256 + (uint32_t)tu_range(&r, 0, NPIECES - 1);
      const char *p;
      size_t len;
      assert_int_equal(embd_tokmap_lookup(g_blm, ids[i], &p, &len, NULL), EMBD_OK);
      for (size_t k = 0; k < len; k++) bytes[nb++] = (unsigned char)p[k];
    }
    char want[4096], got[4096], part[4096];
    size_t nw = detok(g_fb, 0, bytes, nb, want, sizeof want);
    size_t ng = detok(g_blm, 0, ids, n, got, sizeof got);
    assert_int_equal(ng, nw);
    assert_memory_equal(got, want, nw);
    assert_true(ng <= embd_detok_bound(g_blm, n));
    embd_detok *d;
    assert_int_equal(embd_detok_create(g_blm, EMBD_DETOK_PARTIAL, &d), EMBD_OK);
    size_t pos = 0, w;
    embd_error err;
    for (size_t i = 0; i < n;) {
      size_t k = tu_range(&r, 0, n - i);
      assert_int_equal(embd_detok_feed(d, ids + i, k, part + pos, sizeof part - pos, &w, &err), EMBD_OK);
      assert_true(embd_detok_pending(d) <= 3);
      pos += w;
      i += k;
    }
    assert_int_equal(embd_detok_finish(d, part + pos, sizeof part - pos, &w, &err), EMBD_OK);
    pos += w;
    embd_detok_destroy(d);
    assert_int_equal(pos, nw);
    assert_memory_equal(part, want, nw);
  }
}

static void test_byte_level_stream(void **state) {
  (void)state;
  char buf[256];
  /* U+1F600 = F0 9F 98 + 80: the 3-byte piece then the single byte, across two feeds */
  embd_detok *d;
  assert_int_equal(embd_detok_create(g_blm, EMBD_DETOK_PARTIAL, &d), EMBD_OK);
  uint32_t a[] = {257, 259}, b[] = {0x80, 256};
  size_t w;
  embd_error err;
  assert_int_equal(embd_detok_feed(d, a, 2, buf, sizeof buf, &w, &err), EMBD_OK);
  assert_int_equal(w, 5);
  assert_memory_equal(buf, "Hello", 5);
  assert_int_equal(embd_detok_pending(d), 3);
  assert_int_equal(embd_detok_feed(d, b, 2, buf, sizeof buf, &w, &err), EMBD_OK);
  assert_int_equal(w, 4 + 6);
  assert_memory_equal(buf, "\xF0\x9F\x98\x80 world", w);
  embd_detok_destroy(d);
  /* a special interrupts a pending sequence (U+FFFD), rendered as written or skipped */
  uint32_t c[] = {259, 300, 258, 301};
  size_t n = detok(g_blm, 0, c, 4, buf, sizeof buf);
  assert_int_equal(n, 3 + 7 + 2 + 7);
  assert_memory_equal(buf, "\xEF\xBF\xBD<|eot|>\xC3\xA9<|pad|>", n);
  n = detok(g_blm, EMBD_DETOK_SKIP_SPECIAL, c, 4, buf, sizeof buf);
  assert_int_equal(n, 3 + 2);
  assert_memory_equal(buf, "\xEF\xBF\xBD\xC3\xA9", n);
  /* the piece of three lone continuation bytes: three U+FFFD (the bound's worst case) */
  uint32_t e[] = {260, 260};
  n = detok(g_blm, 0, e, 2, buf, sizeof buf);
  assert_int_equal(n, 18);
  assert_true(n <= embd_detok_bound(g_blm, 2));
  /* unknown ids: the strict error names the index; REPLACE_UNKNOWN gives U+FFFD */
  uint32_t u[] = {65, 264};
  assert_int_equal(embd_detok_create(g_blm, 0, &d), EMBD_OK);
  assert_int_equal(embd_detok_feed(d, u, 2, buf, sizeof buf, &w, &err), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(err.offset, 1);
  embd_detok_destroy(d);
  n = detok(g_blm, EMBD_DETOK_REPLACE_UNKNOWN, u, 2, buf, sizeof buf);
  assert_int_equal(n, 4);
  assert_memory_equal(buf, "A\xEF\xBF\xBD", 4);
}

/* Every capacity below the need: EMBD_ERR_OUTPUT_TOO_SMALL, exact need, nothing consumed. */
static void test_byte_level_capacity(void **state) {
  (void)state;
  uint32_t ids[] = {0xE6, 257, 256, 263, 260, 300};
  char full[256], buf[256];
  size_t need = detok(g_blm, 0, ids, 6, full, sizeof full);
  for (size_t cap = 0; cap < need; cap++) {
    embd_detok *d;
    assert_int_equal(embd_detok_create(g_blm, 0, &d), EMBD_OK);
    size_t w = 0;
    embd_error err;
    assert_int_equal(embd_detok_feed(d, ids, 6, cap ? buf : NULL, cap, &w, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(w, need);
    assert_int_equal(embd_detok_feed(d, ids, 6, buf, need, &w, &err), EMBD_OK);
    assert_int_equal(w, need);
    assert_memory_equal(buf, full, need);
    embd_detok_destroy(d);
  }
}

/* metaspace: U+2581 is a space; "<0xHH>" tokens are the byte HH (in the byte-fallback
 * range they must name their own byte; outside it their spelling decides); specials as
 * written. */
static void test_metaspace(void **state) {
  (void)state;
  const char *j =
      "{\"id\":\"sp\",\"version\":\"2\",\"vocab_size\":12,\"encoder\":\"metaspace\","
      "\"byte_fallback_start\":3,\"byte_fallback_end\":6,"
      "\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,\"<0x00>\":3,\"<0x01>\":4,\"\\u2581Hello\":7,"
      "\"\\u2581w\\u2581\\u2581x\":8,\"<0xC3>\":9,\"<0xa9>\":10,\"\\u2581\":11},"
      "\"special_tokens\":{\"<s>\":1,\"</s>\":2}}";
  embd_tokmap *m = load_ok(j, strlen(j));
  assert_int_equal(embd_tokmap_encoder_of(m), EMBD_TOKMAP_ENCODER_METASPACE);
  char buf[128];
  uint32_t a[] = {1, 7, 8, 9, 10, 11, 3, 2, 6};
  size_t n = detok(m, 0, a, 9, buf, sizeof buf);
  /* <s> verbatim, " Hello", " w  x", bytes C3 A9 (two <0xHH> tokens), " ", id 3 = fallback
   * byte 0x00 (its <0x00> agrees), </s>, id 6 = fallback byte 0x03 (not in the vocab) */
  assert_int_equal(n, 3 + 6 + 5 + 2 + 1 + 1 + 4 + 1);
  assert_memory_equal(buf, "<s> Hello w  x\xC3\xA9 \0</s>\x03", n);
  const char *p;
  size_t len;
  embd_token_kind k;
  assert_int_equal(embd_tokmap_lookup(m, 9, &p, &len, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_BYTE);
  assert_int_equal(len, 1);
  assert_int_equal((unsigned char)p[0], 0xC3);
  assert_int_equal(embd_tokmap_lookup(m, 8, &p, &len, &k), EMBD_OK);
  assert_int_equal(k, EMBD_TOKEN_TEXT);
  assert_memory_equal(p, " w  x", 5);
  embd_tokmap_free(m);
}

/* encoder omitted: vocab strings are the text; "<0xHH>" still a byte. */
static void test_plain_v2(void **state) {
  (void)state;
  const char *j = "{\"id\":\"p\",\"version\":\"2.1\",\"vocab_size\":5,\"vocab\":{\" the\":0,\"\\u00e9\":1,"
                  "\"<0xE2>\":2,\"<0x82>\":3,\"<0xAC>\":4},\"published_at\":\"2026-05-06T00:00:00Z\"}";
  embd_tokmap *m = load_ok(j, strlen(j));
  assert_string_equal(embd_tokmap_schema(m), "2.1");
  assert_int_equal(embd_tokmap_encoder_of(m), EMBD_TOKMAP_ENCODER_NONE);
  assert_string_equal(embd_tokmap_published_at(m), "2026-05-06T00:00:00Z");
  char buf[64];
  uint32_t a[] = {0, 2, 3, 4, 1, 2, 0};
  size_t n = detok(m, 0, a, 7, buf, sizeof buf);
  assert_int_equal(n, 4 + 3 + 2 + 3 + 4);
  assert_memory_equal(buf, " the\xE2\x82\xAC\xC3\xA9\xEF\xBF\xBD the", n);
  embd_tokmap_free(m);
}

/* A full v2.1 map: every optional field, valid. */
#define FULL_V21                                                                                  \
  "{\"id\":\"meta/llama-3\",\"version\":\"2\",\"vocab_size\":16,\"encoder\":\"byte_level\","      \
  "\"vocab\":{\"H\":0,\"e\":1,\"He\":2,\"\\u0120\":3,\"\\u0120t\":4,\"t\":5,\"<tool_call>\":6,"     \
  "\"</tool_call>\":7},\"merges\":[\"H e\",\"\\u0120 t\"],"                                         \
  "\"pre_tokenizer_pattern\":\"(?i:'s|'t)| ?\\\\p{L}+|\\\\s+\","                                  \
  "\"pre_tokenizer_program\":{\"version\":1,\"ops\":[{\"op\":\"literals_ci\",\"patterns\":[\"'s\","  \
  "\"'t\"]},{\"op\":\"letters\",\"lead_other\":true},{\"op\":\"numbers\",\"max_run\":3},"           \
  "{\"op\":\"punct_run\",\"lead_space\":true,\"trailing_newlines\":false},{\"op\":\"newline_block\"}," \
  "{\"op\":\"trailing_ws\"},{\"op\":\"ws_run\"}]},"                                          \
  "\"tool_calling\":{\"convention\":\"qwen25\",\"markers\":{\"start\":\"<tool_call>\",\"end\":"     \
  "\"</tool_call>\"},\"args_format\":\"json\",\"result_format\":\"text\"},"                        \
  "\"zstd_dictionaries\":[{\"format\":\"msgpack\",\"url\":\"https://x/d.dict\",\"hash\":\"sha256:"  \
  "79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04\",\"size_bytes\":16384},"     \
  "{\"format\":\"protobuf\",\"url\":\"https://x/p.dict\",\"hash\":\"SHA256:"                       \
  "79B707AEA8C2B41C2883EC7913B0C4A0C880044AC844D89A9A03E779EB92DB04\"}],"                         \
  "\"byte_fallback_start\":8,\"byte_fallback_end\":9,"                                            \
  "\"special_tokens\":{\"<tool_call>\":6,\"</tool_call>\":7,\"<|eot|>\":15},"                     \
  "\"published_at\":\"2026-05-06T00:00:00Z\"}"
/* python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'
 * over the bytes of FULL_V21 */
#define FULL_V21_SHA256 "sha256:84679f180b604f53f55cdbc6bdb31ff4e56b3a42f5e13d549950a35a3ccbb8e6"

static void test_full_v21_and_pin(void **state) {
  (void)state;
  const char *j = FULL_V21;
  embd_tokmap *m = NULL;
  embd_error err;
  assert_int_equal(embd_tokmap_load(j, strlen(j), FULL_V21_SHA256, &m, &err), EMBD_OK);
  assert_string_equal(embd_tokmap_schema(m), "2.1");
  assert_string_equal(embd_tokmap_hash(m), FULL_V21_SHA256);
  assert_string_equal(embd_tokmap_id(m), "meta/llama-3");
  char buf[64];
  uint32_t a[] = {2, 4, 6, 8, 15}; /* He, " t", a special, fallback byte 0x00, a special */
  size_t n = detok(m, EMBD_DETOK_SKIP_SPECIAL, a, 5, buf, sizeof buf);
  assert_int_equal(n, 2 + 2 + 1);
  assert_memory_equal(buf, "He t\0", n);
  n = detok(m, 0, a, 5, buf, sizeof buf);
  assert_int_equal(n, 2 + 2 + 11 + 1 + 7);
  assert_memory_equal(buf, "He t<tool_call>\0<|eot|>", n);
  embd_tokmap_free(m);
  /* the pin in upper case is read too; a wrong pin is EMBD_ERR_MAP_HASH naming both */
  char up[80] = "SHA256:";
  for (size_t i = 7; FULL_V21_SHA256[i]; i++) up[i] = (char)(FULL_V21_SHA256[i] >= 'a' ? FULL_V21_SHA256[i] - 32 : FULL_V21_SHA256[i]);
  up[71] = 0;
  assert_int_equal(embd_tokmap_load(j, strlen(j), up, &m, &err), EMBD_OK);
  embd_tokmap_free(m);
  char bad[80];
  memcpy(bad, FULL_V21_SHA256, 72);
  bad[70] = bad[70] == '0' ? '1' : '0';
  m = (embd_tokmap *)&err;
  assert_int_equal(embd_tokmap_load(j, strlen(j), bad, &m, &err), EMBD_ERR_MAP_HASH);
  assert_null(m);
  assert_non_null(strstr(err.message, FULL_V21_SHA256));
  /* one byte changed in the map: the pin no longer holds */
  char *c = strdup(j);
  c[strlen(c) - 3] = '1';
  assert_int_equal(embd_tokmap_load(c, strlen(c), FULL_V21_SHA256, &m, &err), EMBD_ERR_MAP_HASH);
  free(c);
  /* pre_tokenizer_program null (the converter's "no program"): loads, schema 2.1 */
  const char *nul = "{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":1,\"vocab\":{\"a\":0},\"pre_tokenizer_program\":null}";
  m = load_ok(nul, strlen(nul));
  assert_string_equal(embd_tokmap_schema(m), "2.1");
  embd_tokmap_free(m);
}

/* Every prefix of the full map is an error, never a crash or an over-read. */
static void test_truncation_v2(void **state) {
  (void)state;
  const char *j = FULL_V21;
  size_t len = strlen(j);
  for (size_t k = 0; k < len; k++) {
    char *p = malloc(k ? k : 1);
    memcpy(p, j, k);
    embd_tokmap *m = (embd_tokmap *)p;
    embd_error err;
    assert_int_equal(embd_tokmap_load(p, k, NULL, &m, &err), EMBD_ERR_MAP_SCHEMA);
    assert_null(m);
    assert_true(err.offset <= k);
    free(p);
  }
}

/* ---- every schema rule, by name ------------------------------------------------------ */

#define V2 "{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0,\"b\":1,\"ab\":2}"
#define PROG(ops) V2 ",\"pre_tokenizer_program\":{\"version\":1,\"ops\":[" ops "]}}"
#define STAGES(st) V2 ",\"pre_tokenizer_program\":{\"version\":2,\"stages\":[" st "]}}"
#define TC(body) V2 ",\"special_tokens\":{\"<s>\":5,\"</s>\":6},\"tool_calling\":{" body "}}"
#define TC_OK_REST "\"args_format\":\"json\",\"result_format\":\"text\""
#define ZD(entry) V2 ",\"zstd_dictionaries\":[" entry "]}"
#define HASH "\"sha256:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04\""

static const struct {
  const char *json;
  const char *named;
} g_bad[] = {
    /* which schema */
    {V2 ",\"tokens\":{\"0\":\"a\"}}", "\"tokens\": not a field of tokenizer map schema v2"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{},\"encoder\":\"byte_level\"}", "\"encoder\": not a field of tokenizer map schema v0.1"},
    {"{\"id\":\"x\",\"version\":\"1\",\"vocab_size\":4,\"tokens\":{},\"pre_tokenizer_program\":null}", "\"pre_tokenizer_program\": not a field of tokenizer map schema v0.1"},
    {V2 ",\"foo\":1}", "\"foo\": not a field of tokenizer map schema v0.1 or v2.1"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"encoder\":\"byte_level\"}", "tokens: required field missing"},
    {V2 ",\"encoder\":\"byte_level\",\"encoder\":\"metaspace\"}", "encoder: field appears twice"},
    /* required fields and their types */
    {"{\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "id: required field missing"},
    {"{\"id\":\"x\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "version: required field missing"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab\":{\"a\":0}}", "vocab_size: required field missing"},
    {"{\"id\":\"\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "id: empty"},
    {"{\"id\":3,\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "id: not a string"},
    {"{\"id\":\"x\",\"version\":2,\"vocab_size\":8,\"vocab\":{\"a\":0}}", "version: not a string"},
    {"{\"id\":\"x\",\"version\":\"1.0.0\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "version: \"1.0.0\" is not a schema v2 version"},
    {"{\"id\":\"x\",\"version\":\"3\",\"vocab_size\":8,\"vocab\":{\"a\":0}}", "version: \"3\" is not a schema v2 version"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":0,\"vocab\":{\"a\":0}}", "vocab_size: 0 outside"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8.5,\"vocab\":{\"a\":0}}", "vocab_size: not an integer"},
    /* vocab */
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":[\"a\"]}", "vocab: not an object"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{}}", "vocab: empty"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":\"0\"}}", "vocab[\"a\"]: not an integer"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":1.5}}", "vocab[\"a\"]: not an integer"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":-1}}", "vocab[\"a\"]: -1 is negative"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":8}}", "vocab[\"a\"]: id 8 >= vocab_size 8"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":4294967296}}", "vocab[\"a\"]: id 4294967296 above 4294967295"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"\":0}}", "vocab[\"\"]: empty token string"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0,\"b\":1,\"a\":2}}", "vocab[\"a\"]: token string appears twice"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0,\"\\u0061\":2}}", "vocab[\"a\"]: token string appears twice"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\":0,\"b\":0}}", "vocab[\"b\"]: id appears twice"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"\\ud800\":0}}", "unpaired surrogate"},
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"a\\\"b\\u0001\":9}}", "vocab[\"a?b?\"]: id 9 >= vocab_size 8"},
    /* encoder */
    {V2 ",\"encoder\":\"bpe\"}", "encoder: \"bpe\" is not \"byte_level\" or \"metaspace\""},
    {V2 ",\"encoder\":null}", "encoder: not a string"},
    /* merges */
    {V2 ",\"merges\":{}}", "merges: not an array"},
    {V2 ",\"merges\":[\"a b\",3]}", "merges[1]: not a string"},
    {V2 ",\"merges\":[\"ab\"]}", "merges[0]: \"ab\" is not two tokens separated by one space"},
    {V2 ",\"merges\":[\"a  b\"]}", "merges[0]: \"a  b\" is not two tokens"},
    {V2 ",\"merges\":[\" ab\"]}", "merges[0]: \" ab\" is not two tokens"},
    {V2 ",\"merges\":[\"a \"]}", "merges[0]: \"a \" is not two tokens"},
    {V2 ",\"merges\":[\"c b\"]}", "merges[0]: left token \"c\" is not in vocab"},
    {V2 ",\"merges\":[\"a c\"]}", "merges[0]: right token \"c\" is not in vocab"},
    {V2 ",\"merges\":[\"b a\"]}", "merges[0]: merged token \"ba\" is not in vocab"},
    {V2 ",\"merges\":[\"a b\",\"a b\"]}", "merges[1]: \"a b\" is merges[0] again"},
    /* pre_tokenizer_pattern */
    {V2 ",\"pre_tokenizer_pattern\":[]}", "pre_tokenizer_pattern: not a string"},
    {V2 ",\"pre_tokenizer_pattern\":\"\"}", "pre_tokenizer_pattern: empty"},
    /* pre_tokenizer_program (spec/PRETOKENIZER_PROGRAM.md, op set v1) */
    {V2 ",\"pre_tokenizer_program\":5}", "pre_tokenizer_program: not an object or null"},
    {V2 ",\"pre_tokenizer_program\":{\"ops\":[{\"op\":\"ws_run\"}]}}", "pre_tokenizer_program.version: required field missing"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":3,\"ops\":[{\"op\":\"ws_run\"}]}}", "pre_tokenizer_program.version: 3 is not 1 or 2"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":2,\"ops\":[{\"op\":\"ws_run\"}]}}", "pre_tokenizer_program.ops: not a field of a version-2 program"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":2}}", "pre_tokenizer_program.stages: required field missing"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1,\"ops\":[{\"op\":\"ws_run\"}],\"stages\":[{\"stage\":\"cjk_isolate\"}]}}", "pre_tokenizer_program.stages: not a field of a version-1 program"},
    {STAGES("{\"stage\":\"cjk_isolate\"},3"), "pre_tokenizer_program.stages[1]: not an object"},
    {STAGES("{\"mode\":\"grouped\"}"), "pre_tokenizer_program.stages[0].stage: required field missing"},
    {STAGES("{\"stage\":\"split\"}"), "pre_tokenizer_program.stages[0].stage: \"split\" is not a pre-tokenizer stage"},
    {STAGES("{\"stage\":\"digits_isolate\",\"mode\":\"each\"}"), "pre_tokenizer_program.stages[0].mode: \"each\" is not one of its values"},
    {STAGES("{\"stage\":\"digits_isolate\",\"max_run\":-1}"), "pre_tokenizer_program.stages[0].max_run: not a non-negative integer"},
    {STAGES("{\"stage\":\"cjk_isolate\",\"max_run\":3}"), "pre_tokenizer_program.stages[0].max_run: not a parameter of \"cjk_isolate\""},
    {STAGES("{\"stage\":\"alternation\"}"), "pre_tokenizer_program.stages[0].ops: required field missing"},
    {STAGES("{\"stage\":\"cjk_isolate\",\"ops\":[{\"op\":\"ws_run\"}]}"), "pre_tokenizer_program.stages[0].ops: not a parameter of \"cjk_isolate\""},
    {STAGES("{\"stage\":\"alternation\",\"ops\":[]}"), "pre_tokenizer_program.stages[0].ops: empty"},
    {STAGES("{\"stage\":\"alternation\",\"ops\":[{\"op\":\"letters\",\"body\":\"L\"}]}"), "pre_tokenizer_program.stages[0].ops[0].body: \"L\" is not one of its values"},
    {STAGES("{\"stage\":\"alternation\",\"ops\":[{\"op\":\"metaspace_split\"}]}"), "pre_tokenizer_program.stages[0].ops: metaspace_split is a version-1 program's only op"},
    {STAGES("{\"stage\":\"alternation\",\"ops\":[{\"op\":\"ws_run\"}],\"ops\":[]}"), "pre_tokenizer_program.stages[0].ops: field appears twice"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":2,\"stages\":[]}}", "pre_tokenizer_program.stages: empty"},
    {PROG("{\"op\":\"metaspace_split\"},{\"op\":\"ws_run\"}"), "pre_tokenizer_program.ops: metaspace_split is a version-1 program's only op"},
    {PROG("{\"op\":\"letters\",\"lead_other\":true,\"lead_space\":true}"), "pre_tokenizer_program.ops[0]: lead_other and lead_space both true"},
    {PROG("{\"op\":\"letters_cased\",\"kind\":\"lower\"}"), "pre_tokenizer_program.ops[0].kind: \"lower\" is not one of its values"},
    {PROG("{\"op\":\"letters_cased\",\"trailing_ci\":[\"'s\",\"\"]}"), "pre_tokenizer_program.ops[0].trailing_ci[1]: empty"},
    {PROG("{\"op\":\"punct_run\",\"charset\":\"all\"}"), "pre_tokenizer_program.ops[0].charset: \"all\" is not one of its values"},
    {PROG("{\"op\":\"punct_run\",\"trailing_chars\":[\"\\n\"]}"), "pre_tokenizer_program.ops[0].trailing_chars: not a string"},
    {PROG("{\"op\":\"literals\"}"), "pre_tokenizer_program.ops[0].patterns: required field missing"},
    {PROG("{\"op\":\"punct_ascii_letters\",\"lead_space\":true}"), "pre_tokenizer_program.ops[0].lead_space: not a parameter of \"punct_ascii_letters\""},
    {V2 ",\"pre_tokenizer_program\":{\"version\":\"1\",\"ops\":[{\"op\":\"ws_run\"}]}}", "pre_tokenizer_program.version: not an integer"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1}}", "pre_tokenizer_program.ops: required field missing"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1,\"ops\":{}}}", "pre_tokenizer_program.ops: not an array"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1,\"ops\":[]}}", "pre_tokenizer_program.ops: empty"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1,\"ops\":[{\"op\":\"ws_run\"}],\"regex\":\"x\"}}", "pre_tokenizer_program.\"regex\": not a field of a pre-tokenizer program"},
    {V2 ",\"pre_tokenizer_program\":{\"version\":1,\"version\":1,\"ops\":[{\"op\":\"ws_run\"}]}}", "pre_tokenizer_program.version: field appears twice"},
    {PROG("\"ws_run\""), "pre_tokenizer_program.ops[0]: not an object"},
    {PROG("{\"op\":\"ws_run\"},{\"max_run\":3}"), "pre_tokenizer_program.ops[1].op: required field missing"},
    {PROG("{\"op\":5}"), "pre_tokenizer_program.ops[0].op: not a string"},
    {PROG("{\"op\":\"regex\"}"), "pre_tokenizer_program.ops[0].op: \"regex\" is not a pre-tokenizer op"},
    {PROG("{\"op\":\"ws_run\",\"op\":\"ws_run\"}"), "pre_tokenizer_program.ops[0].op: field appears twice"},
    {PROG("{\"op\":\"letters\",\"max_run\":3}"), "pre_tokenizer_program.ops[0].max_run: not a parameter of \"letters\""},
    {PROG("{\"op\":\"ws_run\",\"lead_other\":true}"), "pre_tokenizer_program.ops[0].lead_other: not a parameter of \"ws_run\""},
    {PROG("{\"op\":\"letters\",\"lead_other\":1}"), "pre_tokenizer_program.ops[0].lead_other: not a boolean"},
    {PROG("{\"op\":\"letters\",\"lead_other\":true,\"lead_other\":false}"), "pre_tokenizer_program.ops[0].lead_other: field appears twice"},
        {PROG("{\"op\":\"numbers\",\"max_run\":-3}"), "pre_tokenizer_program.ops[0].max_run: not a non-negative integer"},
    {PROG("{\"op\":\"numbers\",\"max_run\":true}"), "pre_tokenizer_program.ops[0].max_run: not a non-negative integer"},
    {PROG("{\"op\":\"punct_run\",\"trailing_newlines\":\"yes\"}"), "pre_tokenizer_program.ops[0].trailing_newlines: not a boolean"},
    {PROG("{\"op\":\"metaspace_split\",\"prefix_first\":null}"), "pre_tokenizer_program.ops[0].prefix_first: not a boolean"},
    {PROG("{\"op\":\"literals_ci\"}"), "pre_tokenizer_program.ops[0].patterns: required field missing"},
    {PROG("{\"op\":\"literals_ci\",\"patterns\":[]}"), "pre_tokenizer_program.ops[0].patterns: empty"},
    {PROG("{\"op\":\"literals_ci\",\"patterns\":[\"'s\",1]}"), "pre_tokenizer_program.ops[0].patterns[1]: not a string"},
    {PROG("{\"op\":\"literals_ci\",\"patterns\":[\"\"]}"), "pre_tokenizer_program.ops[0].patterns[0]: empty"},
    {PROG("{\"op\":\"literals_ci\",\"patterns\":\"'s\"}"), "pre_tokenizer_program.ops[0].patterns: not an array of strings"},
    /* tool_calling */
    {V2 ",\"tool_calling\":[]}", "tool_calling: not an object"},
    {TC("\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.convention: required field missing"},
    {TC("\"convention\":\"qwen25\"," TC_OK_REST), "tool_calling.markers: required field missing"},
    {TC("\"convention\":\"qwen25\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"},\"args_format\":\"json\""), "tool_calling.result_format: required field missing"},
    {TC("\"convention\":\"gpt\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.convention: \"gpt\" is not one of \"llama3\", \"qwen25\""},
    {TC("\"convention\":\"custom\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"},\"args_format\":\"xml\",\"result_format\":\"text\""), "tool_calling.args_format: \"xml\" is not one of \"json\", \"python_args\""},
    {TC("\"convention\":\"custom\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"},\"args_format\":\"json\",\"result_format\":\"xml\""), "tool_calling.result_format: \"xml\" is not one of \"text\", \"json\""},
    {TC("\"convention\":7,\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.convention: not a string"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\"}," TC_OK_REST), "tool_calling.markers.end: required field missing"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.markers.start: empty"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\",\"mid\":\"x\"}," TC_OK_REST), "tool_calling.markers.\"mid\": not start or end"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<a>\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.markers.start: \"<a>\" is not a key of special_tokens"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\",\"end\":\"<b>\"}," TC_OK_REST), "tool_calling.markers.end: \"<b>\" is not a key of special_tokens"},
    {TC("\"convention\":\"llama3\",\"markers\":[]," TC_OK_REST), "tool_calling.markers: not an object"},
    {TC("\"convention\":\"llama3\",\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"}," TC_OK_REST), "tool_calling.convention: field appears twice"},
    {TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"},\"style\":1," TC_OK_REST), "tool_calling.\"style\": not a field of tool_calling"},
    /* zstd_dictionaries */
    {V2 ",\"zstd_dictionaries\":{}}", "zstd_dictionaries: not an array"},
    {ZD("3"), "zstd_dictionaries[0]: not an object"},
    {ZD("{\"url\":\"u\",\"hash\":" HASH "}"), "zstd_dictionaries[0].format: required field missing"},
    {ZD("{\"format\":\"msgpack\",\"hash\":" HASH "}"), "zstd_dictionaries[0].url: required field missing"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\"}"), "zstd_dictionaries[0].hash: required field missing"},
    {ZD("{\"format\":\"json\",\"url\":\"u\",\"hash\":" HASH "}"), "zstd_dictionaries[0].format: \"json\" is not one of \"msgpack\", \"protobuf\""},
    {ZD("{\"format\":\"msgpack\",\"url\":\"\",\"hash\":" HASH "}"), "zstd_dictionaries[0].url: empty"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":\"md5:00\"}"), "zstd_dictionaries[0].hash: not \"sha256:\" and 64 hex digits"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH ",\"size_bytes\":0}"), "zstd_dictionaries[0].size_bytes: 0"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH ",\"size_bytes\":\"1\"}"), "zstd_dictionaries[0].size_bytes: not an integer"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH ",\"level\":3}"), "zstd_dictionaries[0].\"level\": not a field of a dictionary entry"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH ",\"url\":\"v\"}"), "zstd_dictionaries[0].url: field appears twice"},
    {ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH "},{\"format\":\"msgpack\",\"url\":\"v\",\"hash\":" HASH "}"), "zstd_dictionaries[1].format: a second dictionary for format \"msgpack\""},
    /* byte fallback and special tokens, the v0.1 rules on a v2 map */
    {"{\"id\":\"x\",\"version\":\"2\",\"vocab_size\":8,\"vocab\":{\"<0x05>\":3},\"byte_fallback_start\":3,\"byte_fallback_end\":4}", "vocab[\"<0x05>\"]: byte-fallback id 3 is byte 0x00, not <0x05>"},
    {V2 ",\"byte_fallback_start\":3}", "byte_fallback_end: required"},
    {V2 ",\"byte_fallback_start\":3,\"byte_fallback_end\":8}", "byte_fallback_end: id 8 >= vocab_size 8"},
    {V2 ",\"special_tokens\":{\"<s>\":8}}", "special_tokens[\"<s>\"]: id 8 >= vocab_size 8"},
    {V2 ",\"special_tokens\":{\"<s>\":3},\"byte_fallback_start\":3,\"byte_fallback_end\":4}", "special_tokens[\"<s>\"]: id 3 lies in the byte-fallback range"},
    {V2 "} []", "content after"},
};

static void test_schema_v2_named(void **state) {
  (void)state;
  /* the documents the table breaks load as they are */
  const char *ok[] = {V2 "}", PROG("{\"op\":\"ws_run\"}"),
                      TC("\"convention\":\"llama3\",\"markers\":{\"start\":\"<s>\",\"end\":\"</s>\"}," TC_OK_REST),
                      ZD("{\"format\":\"msgpack\",\"url\":\"u\",\"hash\":" HASH "}"),
                      V2 ",\"merges\":[\"a b\"]}",
                      PROG("{\"op\":\"numbers\",\"max_run\":0,\"lead_space\":true}"),
                      PROG("{\"op\":\"metaspace_split\",\"prefix_first\":true}"),
                      /* the DeepSeek-V3 / Falcon / SmolLM2 shapes (HF Sequence pre-tokenizers) */
                      STAGES("{\"stage\":\"digits_isolate\",\"mode\":\"grouped\",\"max_run\":3},"
                             "{\"stage\":\"cjk_isolate\"},{\"stage\":\"punctuation_contiguous\"},"
                             "{\"stage\":\"digit_triples_isolate\"},{\"stage\":\"digits_isolate\",\"mode\":\"individual\"},"
                             "{\"stage\":\"alternation\",\"ops\":[{\"op\":\"punct_ascii_letters\"},"
                             "{\"op\":\"letters\",\"lead_other\":true,\"lead_other_class\":\"l_p_s\",\"body\":\"L_M\"},"
                             "{\"op\":\"letters\",\"lead_space\":true},{\"op\":\"literals\",\"patterns\":[\"'s\"]},"
                             "{\"op\":\"letters_cased\",\"kind\":\"title\",\"lead_other\":true,\"trailing_ci\":[\"'s\"]},"
                             "{\"op\":\"punct_run\",\"charset\":\"p_s\",\"trailing_chars\":\"\\r\\n/\"},"
                             "{\"op\":\"newline_block\"},{\"op\":\"trailing_ws\"},{\"op\":\"ws_run\"}]}")};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) embd_tokmap_free(load_ok(ok[i], strlen(ok[i])));
  for (size_t i = 0; i < sizeof g_bad / sizeof g_bad[0]; i++) {
    embd_error err;
    memset(&err, 0, sizeof err);
    embd_tokmap *m = (embd_tokmap *)&err;
    size_t len = strlen(g_bad[i].json);
    embd_result r = embd_tokmap_load(g_bad[i].json, len, NULL, &m, &err);
    if (r != EMBD_ERR_MAP_SCHEMA || !strstr(err.message, g_bad[i].named) || m != NULL || err.result != r ||
        err.offset > len) {
      fprintf(stderr, "case %zu: %s\n  got %d \"%s\" (offset %zu), want naming \"%s\"\n", i, g_bad[i].json, r,
              err.message, err.offset, g_bad[i].named);
      fail();
    }
  }
}

int main(void) {
  int s = tu_isa_preflight("test_tokmap_v2");
  if (s) return s;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_byte_level_load),     cmocka_unit_test(test_byte_level_literal),
      cmocka_unit_test(test_byte_level_vs_fallback), cmocka_unit_test(test_byte_level_stream),
      cmocka_unit_test(test_byte_level_capacity), cmocka_unit_test(test_metaspace),
      cmocka_unit_test(test_plain_v2),            cmocka_unit_test(test_full_v21_and_pin),
      cmocka_unit_test(test_truncation_v2),       cmocka_unit_test(test_schema_v2_named),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
