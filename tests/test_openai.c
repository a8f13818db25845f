/* OpenAI-compatible /v1/embeddings responses (embd/openai.h): the proposal's fixtures
 * (base64 round trip of exactly representable float32 vectors equal to the float form;
 * malformed base64 / byte length not a multiple of 4 / non-conforming shapes are errors
 * with no vectors), every shape, index order, the error classes, usage and model rules,
 * large responses, truncation at every byte, garbage, the input left untouched, append.
 * Expected values are float32 bit patterns written as hex, so a big-endian run (s390x)
 * checks the host byte order handling too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "testutil.h"

static tu_rng g_rng;

/* ---- helpers ------------------------------------------------------------------------ */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    assert_true(w >= 0);
    if (b->p && (size_t)w < b->cap - b->n) {
      b->n += (size_t)w;
      return;
    }
    size_t nc = (b->cap ? b->cap * 2 : 256) + (size_t)w + 1;
    b->p = realloc(b->p, nc);
    assert_non_null(b->p);
    b->cap = nc;
  }
}

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Exactly representable test values (k/64 in [-2, 2)), different per row and column. */
static float val(size_t i, size_t j) {
  return (float)((int)((i * 31 + j * 7 + 3) % 257) - 128) / 64.0f;
}

enum { FORM_FLOAT = 0, FORM_B64 = 1, FORM_MIXED = 2 };

/* Appends one embedding of row i (values v) in the form. */
static void put_embedding(sbuf *b, const float *v, size_t dims, int b64) {
  if (b64) {
    size_t cap = 0, w = 0;
    assert_int_equal(embd_base64_encoded_size(dims * 4, 0, &cap), EMBD_OK);
    char *t = malloc(cap + 1);
    assert_non_null(t);
    assert_int_equal(embd_base64_encode_f32(v, dims, 0, t, cap, &w), EMBD_OK);
    t[w] = 0;
    sb_printf(b, "\"%s\"", t);
    free(t);
  } else {
    sb_printf(b, "[");
    for (size_t j = 0; j < dims; j++) sb_printf(b, "%s%.9g", j ? "," : "", (double)v[j]);
    sb_printf(b, "]");
  }
}

/* A whole response: n rows of val(), items in the order perm (NULL: identity), the form,
 * index before or after the embedding. */
static char *make_doc(size_t n, size_t dims, int form, const size_t *perm, int index_last,
                      size_t *len) {
  sbuf b = {0};
  float *v = malloc((dims ? dims : 1) * sizeof *v);
  assert_non_null(v);
  sb_printf(&b, "{\"object\":\"list\",\"data\":[");
  for (size_t k = 0; k < n; k++) {
    size_t i = perm ? perm[k] : k;
    for (size_t j = 0; j < dims; j++) v[j] = val(i, j);
    int b64 = form == FORM_B64 || (form == FORM_MIXED && (i & 1));
    sb_printf(&b, "%s{\"object\":\"embedding\",", k ? "," : "");
    if (!index_last) sb_printf(&b, "\"index\":%zu,", i);
    sb_printf(&b, "\"embedding\":");
    put_embedding(&b, v, dims, b64);
    if (index_last) sb_printf(&b, ",\"index\":%zu", i);
    sb_printf(&b, "}");
  }
  sb_printf(&b, "],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":%zu,"
                "\"total_tokens\":%zu}}",
            n * 5, n * 5);
  free(v);
  *len = b.n;
  return b.p;
}

static void check_rows(const embd_openai_embeddings *e, size_t n, size_t dims) {
  assert_int_equal(e->count, n);
  assert_int_equal(e->dims, dims);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < dims; j++)
      if (f_bits(e->values[i * dims + j]) != f_bits(val(i, j))) {
        fprintf(stderr, "row %zu col %zu: %08x want %08x\n", i, j,
                (unsigned)f_bits(e->values[i * dims + j]), (unsigned)f_bits(val(i, j)));
        fail();
      }
}

/* Decodes s (NUL-terminated) and expects result r; on error, no vectors. */
static embd_result dec(embd_openai_embeddings *e, const char *s, const embd_openai_options *o,
                       embd_error *err) {
  embd_result r = embd_openai_decode(e, s, strlen(s), o, err);
  if (r != EMBD_OK) {
    assert_int_equal(e->count, 0);
    assert_int_equal(e->dims, 0);
    assert_int_equal(err->result, r);
    assert_true(err->message[0] != 0);
  }
  return r;
}

static void expect_err(const char *s, embd_result want, const char *msg_part) {
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result r = dec(&e, s, NULL, &err);
  if (r != want || (msg_part && !strstr(err.message, msg_part))) {
    fprintf(stderr, "doc %s\n  got %d (%s) want %d, message part \"%s\"\n", s, (int)r,
            err.message, (int)want, msg_part ? msg_part : "");
    fail();
  }
  embd_openai_free(&e);
}

/* ---- the proposal's fixtures ---------------------------------------------------------- */

/* 1, -2.5, 0.15625, FLT_MAX, the smallest subnormal, -0 */
static const uint32_t k_seed_bits[6] = {0x3f800000u, 0xc0200000u, 0x3e200000u,
                                        0x7f7fffffu, 0x00000001u, 0x80000000u};

static void test_seed_roundtrip(void **state) {
  (void)state;
  const char *b64 =
      "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":"
      "\"AACAPwAAIMAAACA+//9/fwEAAAAAAACA\"}],\"model\":\"m\",\"usage\":{\"prompt_tokens\":3,"
      "\"total_tokens\":3}}";
  const char *flt =
      "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":"
      "[1, -2.5, 0.15625, 3.40282347e+38, 1.40129846e-45, -0]}],\"model\":\"m\","
      "\"usage\":{\"prompt_tokens\":3,\"total_tokens\":3}}";
  embd_openai_embeddings a, b;
  embd_openai_init(&a);
  embd_openai_init(&b);
  embd_error err;
  assert_int_equal(dec(&a, b64, NULL, &err), EMBD_OK);
  assert_int_equal(dec(&b, flt, NULL, &err), EMBD_OK);
  assert_int_equal(a.count, 1);
  assert_int_equal(a.dims, 6);
  assert_int_equal(b.dims, 6);
  for (int j = 0; j < 6; j++) {
    assert_int_equal(f_bits(a.values[j]), k_seed_bits[j]);
    assert_int_equal(f_bits(b.values[j]), k_seed_bits[j]);
  }
  assert_string_equal(a.model, "m");
  assert_int_equal(a.has_usage, 1);
  assert_int_equal(a.prompt_tokens, 3);
  assert_int_equal(a.total_tokens, 3);
  embd_openai_free(&a);
  embd_openai_free(&b);
}

static void test_seed_malformed(void **state) {
  (void)state;
  /* decoded length 5: not a multiple of 4 */
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AAAAAAA=\"}]}", EMBD_ERR_BASE64_F32_LENGTH,
             "data[0].embedding: base64:");
  /* 3 bytes */
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AAAA\"}]}", EMBD_ERR_BASE64_F32_LENGTH,
             "data[0].embedding");
  /* non-conforming shapes */
  expect_err("{\"data\":[{\"index\":0,\"embedding\":null}]}", EMBD_ERR_OPENAI_SHAPE, "null");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":{\"a\":1}}]}", EMBD_ERR_OPENAI_SHAPE, "object");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":1.5}]}", EMBD_ERR_OPENAI_SHAPE, "number");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":true}]}", EMBD_ERR_OPENAI_SHAPE, "boolean");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,\"2\",3]}]}", EMBD_ERR_OPENAI_SHAPE,
             "data[0].embedding[1]: not a number");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,[2],3]}]}", EMBD_ERR_OPENAI_SHAPE,
             "embedding[1]");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,null]}]}", EMBD_ERR_OPENAI_SHAPE,
             "embedding[1]");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[]}]}", EMBD_ERR_OPENAI_SHAPE, "empty");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"\"}]}", EMBD_ERR_OPENAI_SHAPE, "empty");
  /* invalid base64 */
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AAAAAAA*AAAAAAAA\"}]}", EMBD_ERR_BASE64_CHAR,
             "data[0].embedding: base64: ");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AAAA AAAAAA=\"}]}", EMBD_ERR_BASE64_CHAR, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AAAAAAA\"}]}", EMBD_ERR_BASE64_LENGTH, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AA==AAAAAAAAAAAA\"}]}", EMBD_ERR_BASE64_PADDING, NULL);
  /* second item, with the body offset of the bad character */
  const char *d2 = "{\"data\":[{\"index\":0,\"embedding\":\"AACAPw==\"},"
                   "{\"index\":1,\"embedding\":\"AAC*Pw==\"}]}";
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  assert_int_equal(dec(&e, d2, NULL, &err), EMBD_ERR_BASE64_CHAR);
  assert_int_equal(err.offset, (size_t)(strchr(d2, '*') - d2));
  char want[64];
  snprintf(want, sizeof want, "(body byte %zu)", (size_t)(strchr(d2, '*') - d2));
  assert_non_null(strstr(err.message, "data[1].embedding: base64:"));
  assert_non_null(strstr(err.message, want));
  embd_openai_free(&e);
}

/* ---- shapes, order, indexes, dims, count ------------------------------------------------ */

static void test_forms_and_permutations(void **state) {
  (void)state;
  const size_t n = 7, dims = 13;
  size_t perm[7];
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  for (int round = 0; round < 40; round++) {
    for (size_t i = 0; i < n; i++) perm[i] = i;
    if (round)
      for (size_t i = n - 1; i > 0; i--) {
        size_t j = tu_range(&g_rng, 0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
    for (int form = 0; form < 3; form++)
      for (int last = 0; last < 2; last++) {
        size_t len;
        char *d = make_doc(n, dims, form, perm, last, &len);
        embd_openai_options o = {n, 0, 0};
        assert_int_equal(embd_openai_decode(&e, d, len, &o, &err), EMBD_OK);
        check_rows(&e, n, dims);
        assert_string_equal(e.model, "text-embedding-3-small");
        assert_int_equal(e.has_usage, 1);
        assert_int_equal(e.prompt_tokens, n * 5);
        free(d);
      }
  }
  /* empty data */
  assert_int_equal(dec(&e, "{\"data\":[]}", NULL, &err), EMBD_OK);
  assert_int_equal(e.count, 0);
  /* JSON escapes in a base64 string ("\/" as PHP writes '/') and "\u0041" */
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":\"\\/\\/9\\/fw==\"}]}", NULL, &err),
                   EMBD_OK);
  assert_int_equal(e.dims, 1);
  assert_int_equal(f_bits(e.values[0]), 0x7f7fffffu);
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":\"\\u0041ACAPw==\"}]}", NULL, &err),
                   EMBD_OK);
  assert_int_equal(f_bits(e.values[0]), 0x3f800000u);
  embd_openai_free(&e);
}

static void test_rounding(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  /* "7.038531e-26": as a double it lands on a float midpoint; rounded once it is
   * 0x1.5c87fap-84 (0x15ae43fd), rounded twice one ulp off. */
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":[7.038531e-26, 0.1, 1e-50, "
                           "-1E+2, 16777217, 3.4028235677973366e38 ]}]}",
                       NULL, &err),
                   EMBD_OK);
  assert_int_equal(f_bits(e.values[0]), 0x15ae43fdu);
  assert_int_equal(f_bits(e.values[1]), f_bits(0.1f));
  assert_int_equal(f_bits(e.values[2]), 0u);
  assert_int_equal(f_bits(e.values[3]), f_bits(-100.0f));
  assert_int_equal(f_bits(e.values[4]), f_bits(16777216.0f)); /* ties to even */
  assert_int_equal(f_bits(e.values[5]), 0x7f7fffffu);
  /* beyond the float range */
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 3.5e38]}]}", EMBD_ERR_OPENAI_SHAPE,
             "out of the float32 range");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 1e400]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 01]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 1.]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, NaN]}]}", EMBD_ERR_OPENAI_SHAPE, NULL);
  embd_openai_free(&e);
}

static void test_index_errors(void **state) {
  (void)state;
  expect_err("{\"data\":[{\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, "data[0]: no \"index\"");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[2]}]}",
             EMBD_ERR_OPENAI_INDEX, "data[1].index: 0 already taken by data[0]");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":2,\"embedding\":[2]}]}",
             EMBD_ERR_OPENAI_INDEX, "data[1].index: 2 out of range (2 items)");
  expect_err("{\"data\":[{\"index\":-1,\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, "data[0].index");
  expect_err("{\"data\":[{\"index\":0.0,\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, NULL);
  expect_err("{\"data\":[{\"index\":\"0\",\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, NULL);
  expect_err("{\"data\":[{\"index\":null,\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, NULL);
  expect_err("{\"data\":[{\"index\":0,\"index\":0,\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX, NULL);
  expect_err("{\"data\":[{\"index\":18446744073709551616,\"embedding\":[1]}]}", EMBD_ERR_OPENAI_INDEX,
             NULL);
  expect_err("{\"data\":[{\"index\":0}]}", EMBD_ERR_OPENAI_SHAPE, "no \"embedding\"");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1],\"embedding\":[1]}]}", EMBD_ERR_OPENAI_SHAPE,
             NULL);
  expect_err("{\"data\":[1]}", EMBD_ERR_OPENAI_SHAPE, "data[0]: not an object");
  expect_err("{\"data\":{}}", EMBD_ERR_OPENAI_SHAPE, "not an array");
  expect_err("{\"model\":\"x\"}", EMBD_ERR_OPENAI_SHAPE, "no \"data\"");
  expect_err("[]", EMBD_ERR_OPENAI_SHAPE, "not a JSON object");
  expect_err("{\"data\":[],\"data\":[]}", EMBD_ERR_OPENAI_SHAPE, NULL);
}

static void test_dims_and_count(void **state) {
  (void)state;
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,2]},{\"index\":1,\"embedding\":[1,2,3]}]}",
             EMBD_ERR_OPENAI_DIMS, "data[1].embedding: more than 2 numbers");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,2]},{\"index\":1,\"embedding\":[1]}]}",
             EMBD_ERR_OPENAI_DIMS, "data[1].embedding: 1 numbers, the others have 2");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":\"AACAPw==\"},{\"index\":1,\"embedding\":"
             "\"AACAPwAAgD8=\"}]}",
             EMBD_ERR_OPENAI_DIMS, "data[1].embedding: 2 dims, the others have 1");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1,2]},{\"index\":1,\"embedding\":\"AACAPw==\"}]}",
             EMBD_ERR_OPENAI_DIMS, NULL);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_openai_options o = {0, 2, 0};
  const char *three = "{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}";
  assert_int_equal(dec(&e, three, &o, &err), EMBD_ERR_OPENAI_DIMS);
  assert_non_null(strstr(err.message, "above max_dims 2"));
  o.max_dims = 3;
  assert_int_equal(dec(&e, three, &o, &err), EMBD_OK);
  o.expected_count = 2;
  assert_int_equal(dec(&e, three, &o, &err), EMBD_ERR_OPENAI_COUNT);
  assert_non_null(strstr(err.message, "1 items, expected 2"));
  o.expected_count = 1;
  assert_int_equal(dec(&e, three, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  embd_openai_free(&e);
}

static void test_usage_and_model(void **state) {
  (void)state;
  static const char *bad_usage[] = {
      "",
      ",\"usage\":null",
      ",\"usage\":[1,2]",
      ",\"usage\":{\"prompt_tokens\":-1,\"total_tokens\":3}",
      ",\"usage\":{\"prompt_tokens\":1.5,\"total_tokens\":3}",
      ",\"usage\":{\"prompt_tokens\":\"3\",\"total_tokens\":3}",
      ",\"usage\":{\"prompt_tokens\":3}",
      ",\"usage\":{\"total_tokens\":3}",
      ",\"usage\":{\"prompt_tokens\":3,\"total_tokens\":{}}",
      ",\"usage\":{\"prompt_tokens\":3,\"total_tokens\":99999999999999999999999}",
  };
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  char doc[512];
  for (size_t i = 0; i < sizeof bad_usage / sizeof *bad_usage; i++) {
    snprintf(doc, sizeof doc, "{\"data\":[{\"index\":0,\"embedding\":[1]}]%s}", bad_usage[i]);
    assert_int_equal(dec(&e, doc, NULL, &err), EMBD_OK);
    assert_int_equal(e.count, 1);
    assert_int_equal(e.has_usage, 0);
    assert_int_equal(e.prompt_tokens, 0);
  }
  assert_int_equal(dec(&e, "{\"usage\":{\"completion_tokens\":0,\"total_tokens\":7,\"prompt_tokens\":"
                           "6},\"data\":[{\"index\":0,\"embedding\":[1]}]}",
                       NULL, &err),
                   EMBD_OK);
  assert_int_equal(e.has_usage, 1);
  assert_int_equal(e.prompt_tokens, 6);
  assert_int_equal(e.total_tokens, 7);
  /* model */
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":[1]}],\"model\":3}", NULL, &err),
                   EMBD_OK);
  assert_string_equal(e.model, "");
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":[1]}]}", NULL, &err), EMBD_OK);
  assert_string_equal(e.model, "");
  assert_int_equal(dec(&e, "{\"model\":\"a\\\"b\",\"data\":[{\"index\":0,\"embedding\":[1]}]}", NULL,
                       &err),
                   EMBD_OK);
  assert_string_equal(e.model, "a\"b");
  sbuf b = {0};
  sb_printf(&b, "{\"model\":\"");
  for (int i = 0; i < 200; i++) sb_printf(&b, "x");
  sb_printf(&b, "\",\"data\":[{\"index\":0,\"embedding\":[1]}]}");
  assert_int_equal(dec(&e, b.p, NULL, &err), EMBD_OK);
  assert_int_equal(strlen(e.model), 127);
  assert_int_equal(e.model_truncated, 1);
  free(b.p);
  embd_openai_free(&e);
}

/* ---- size, truncation, garbage, the input untouched ------------------------------------ */

static void test_huge(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  for (int form = 0; form < 3; form++) {
    size_t len;
    char *d = make_doc(100, 1536, form, NULL, 0, &len);
    embd_openai_options o = {100, 1536, 0};
    assert_int_equal(embd_openai_decode(&e, d, len, &o, &err), EMBD_OK);
    check_rows(&e, 100, 1536);
    free(d);
  }
  embd_openai_free(&e);
}

static void test_truncation(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  for (int form = 0; form < 3; form++) {
    size_t len, perm[3] = {2, 0, 1};
    char *d = make_doc(3, 5, form, perm, form == 1, &len);
    for (size_t cut = 0; cut < len; cut++) {
      /* exact-size heap copy: ASan sees any read past `cut` when padding is 0 */
      char *c = malloc(cut ? cut : 1);
      memcpy(c, d, cut);
      embd_result r = embd_openai_decode(&e, c, cut, NULL, &err);
      if (r == EMBD_OK) {
        fprintf(stderr, "form %d: truncated at %zu of %zu decoded\n", form, cut, len);
        fail();
      }
      assert_int_equal(e.count, 0);
      assert_true(err.offset <= cut);
      free(c);
    }
    assert_int_equal(embd_openai_decode(&e, d, len, NULL, &err), EMBD_OK);
    check_rows(&e, 3, 5);
    free(d);
  }
  embd_openai_free(&e);
}

static void test_garbage(void **state) {
  (void)state;
  static const char *docs[] = {
      "", " ", "null", "0", "\"x\"", "{", "}", "{]", "{\"data\":[}", "{\"data\":[{]}",
      "{\"data\":[{\"index\":0,\"embedding\":[1,]}]}", "{\"data\":[{\"index\":0,\"embedding\":[1]}]}x",
      "{\"data\":[{\"index\":0,\"embedding\":[1]}]} {}", "{\"data\":[{\"index\":0,\"embedding\":\"AACAPw==}]}",
      "{\"data\":[{\"index\":0,\"embedding\":[1]}],}", "{\"data\" [{\"index\":0}]}",
      "\xff\xfe{\"data\":[]}",
  };
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
    embd_result r = dec(&e, docs[i], NULL, &err);
    if (r == EMBD_OK) {
      fprintf(stderr, "garbage %zu decoded: %s\n", i, docs[i]);
      fail();
    }
  }
  /* random bytes and random mutations of a valid document */
  size_t len;
  char *d = make_doc(4, 6, FORM_MIXED, NULL, 0, &len);
  char *c = malloc(len);
  for (size_t it = 0; it < tu_scaled(4000, 500); it++) {
    size_t n = len;
    memcpy(c, d, len);
    if (it & 1) {
      tu_fill(&g_rng, c, n = tu_range(&g_rng, 0, len));
    } else {
      for (int k = 0; k < 3; k++) c[tu_range(&g_rng, 0, len - 1)] = (char)tu_u32(&g_rng);
    }
    embd_result r = embd_openai_decode(&e, c, n, NULL, &err);
    if (r != EMBD_OK) {
      assert_int_equal(e.count, 0);
      assert_true(err.offset <= n);
    } else {
      assert_true(e.count <= 4);
    }
  }
  free(c);
  free(d);
  embd_openai_free(&e);
}

static void test_input_untouched(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  for (int form = 0; form < 3; form++) {
    size_t len;
    char *d = make_doc(9, 33, form, NULL, 1, &len);
    char *buf = malloc(len + 64), *copy = malloc(len + 64);
    memcpy(buf, d, len);
    memset(buf + len, 0xA5, 64);
    memcpy(copy, buf, len + 64);
    for (size_t pad = 0; pad <= 64; pad += 64) {
      embd_openai_options o = {0, 0, pad};
      assert_int_equal(embd_openai_decode(&e, buf, len, &o, &err), EMBD_OK);
      check_rows(&e, 9, 33);
      assert_memory_equal(buf, copy, len + 64);
      /* an error too leaves it alone */
      assert_int_not_equal(embd_openai_decode(&e, buf, len - 1, &o, &err), EMBD_OK);
      assert_memory_equal(buf, copy, len + 64);
    }
    free(buf);
    free(copy);
    free(d);
  }
  /* padding >= 64 parses in place (no copy) at the very end of a guard page region */
  size_t len;
  char *d = make_doc(2, 4, FORM_B64, NULL, 0, &len);
  tu_guard g;
  assert_int_equal(tu_guard_alloc(&g, len + 64), 0);
  char *p = (char *)g.hi - len - 64;
  memcpy(p, d, len);
  memset(p + len, ' ', 64);
  embd_openai_options o = {0, 0, 64};
  assert_int_equal(embd_openai_decode(&e, p, len, &o, &err), EMBD_OK);
  check_rows(&e, 2, 4);
  /* padding 0 with the body ending at the guard page: the decoder copies it */
  p = (char *)g.hi - len;
  memmove(p, d, len);
  o.padding = 0;
  assert_int_equal(embd_openai_decode(&e, p, len, &o, &err), EMBD_OK);
  check_rows(&e, 2, 4);
  tu_guard_free(&g);
  free(d);
  embd_openai_free(&e);
}

static void test_append(void **state) {
  (void)state;
  /* a 5-vector input split into chunks of 3 and 2, each chunk indexed 0..n-1 */
  const size_t dims = 8;
  sbuf c1 = {0}, c2 = {0};
  float v[8];
  sb_printf(&c1, "{\"data\":[");
  for (size_t k = 0; k < 3; k++) {
    size_t i = 2 - k; /* reversed */
    for (size_t j = 0; j < dims; j++) v[j] = val(i, j);
    sb_printf(&c1, "%s{\"index\":%zu,\"embedding\":", k ? "," : "", i);
    put_embedding(&c1, v, dims, 1);
    sb_printf(&c1, "}");
  }
  sb_printf(&c1, "],\"model\":\"m1\",\"usage\":{\"prompt_tokens\":3,\"total_tokens\":3}}");
  sb_printf(&c2, "{\"model\":\"m1\",\"usage\":{\"prompt_tokens\":2,\"total_tokens\":4},\"data\":[");
  for (size_t k = 0; k < 2; k++) {
    for (size_t j = 0; j < dims; j++) v[j] = val(3 + k, j);
    sb_printf(&c2, "%s{\"index\":%zu,\"embedding\":", k ? "," : "", k);
    put_embedding(&c2, v, dims, 0);
    sb_printf(&c2, "}");
  }
  sb_printf(&c2, "]}");
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  assert_int_equal(embd_openai_append(&e, c1.p, c1.n, NULL, &err), EMBD_OK);
  assert_int_equal(embd_openai_append(&e, c2.p, c2.n, NULL, &err), EMBD_OK);
  check_rows(&e, 5, dims);
  assert_string_equal(e.model, "m1");
  assert_int_equal(e.has_usage, 1);
  assert_int_equal(e.prompt_tokens, 5);
  assert_int_equal(e.total_tokens, 7);
  /* decode replaces */
  assert_int_equal(embd_openai_decode(&e, c2.p, c2.n, NULL, &err), EMBD_OK);
  assert_int_equal(e.count, 2);
  assert_int_equal(e.prompt_tokens, 2);
  /* dims mismatch: error, e emptied */
  assert_int_equal(dec(&e, "{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}", NULL, &err), EMBD_OK);
  assert_int_equal(embd_openai_append(&e, c1.p, c1.n, NULL, &err), EMBD_ERR_OPENAI_DIMS);
  assert_int_equal(e.count, 0);
  assert_int_equal(e.dims, 0);
  /* model mismatch */
  assert_int_equal(embd_openai_append(&e, c1.p, c1.n, NULL, &err), EMBD_OK);
  const char *m2 = "{\"model\":\"m2\",\"data\":[{\"index\":0,\"embedding\":[1,2,3,4,5,6,7,8]}]}";
  assert_int_equal(embd_openai_append(&e, m2, strlen(m2), NULL, &err), EMBD_ERR_OPENAI_MODEL);
  assert_int_equal(e.count, 0);
  /* a chunk without usage: usage no longer reported; without model: kept */
  assert_int_equal(embd_openai_append(&e, c1.p, c1.n, NULL, &err), EMBD_OK);
  const char *nu = "{\"data\":[{\"index\":0,\"embedding\":[1,2,3,4,5,6,7,8]}]}";
  assert_int_equal(embd_openai_append(&e, nu, strlen(nu), NULL, &err), EMBD_OK);
  assert_int_equal(e.count, 4);
  assert_int_equal(e.has_usage, 0);
  assert_int_equal(e.prompt_tokens, 0);
  assert_string_equal(e.model, "m1");
  assert_int_equal(f_bits(e.values[3 * dims + 7]), f_bits(8.0f));
  /* expected_count applies per response */
  embd_openai_options o = {2, 0, 0};
  assert_int_equal(embd_openai_append(&e, c2.p, c2.n, &o, &err), EMBD_OK);
  assert_int_equal(e.count, 6);
  assert_int_equal(embd_openai_append(&e, c1.p, c1.n, &o, &err), EMBD_ERR_OPENAI_COUNT);
  assert_int_equal(e.count, 0);
  free(c1.p);
  free(c2.p);
  embd_openai_free(&e);
  /* NULL arguments */
  assert_int_equal(embd_openai_decode(NULL, "{}", 2, NULL, &err), EMBD_ERR_INVALID_ARGUMENT);
  embd_openai_init(&e);
  assert_int_equal(embd_openai_decode(&e, NULL, 2, NULL, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_openai_decode(&e, NULL, 0, NULL, NULL), EMBD_ERR_OPENAI_JSON);
  embd_openai_free(&e);
  embd_openai_free(&e); /* twice is fine */
  assert_string_equal(embd_strerror(EMBD_ERR_OPENAI_INDEX),
                      "data[].index missing, duplicate or out of range");
}

int main(void) {
  int s = tu_isa_preflight("test_openai");
  if (s) return s;
  g_rng.s = tu_seed();
  {
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    if (embd_openai_decode(&e, "{}", 2, NULL, &err) == EMBD_ERR_OPENAI_UNAVAILABLE) {
      printf("test_openai: SKIP: built without EMBD_WITH_OPENAI\n");
      return TU_SKIP;
    }
    embd_openai_free(&e);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_roundtrip),   cmocka_unit_test(test_seed_malformed),
      cmocka_unit_test(test_forms_and_permutations), cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_index_errors),     cmocka_unit_test(test_dims_and_count),
      cmocka_unit_test(test_usage_and_model),  cmocka_unit_test(test_huge),
      cmocka_unit_test(test_truncation),       cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_input_untouched),  cmocka_unit_test(test_append),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
