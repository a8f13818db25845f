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
#include <math.h>
#include <stdlib.h>
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
        embd_openai_options o = {.expected_count = n, .max_dims = 0, .padding = 0};
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
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 1e400]}]}", EMBD_ERR_OPENAI_SHAPE,
             "data[0].embedding[1]: 1e400 is out of the float32 range");
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 01]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, 1.]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, NaN]}]}", EMBD_ERR_OPENAI_JSON, NULL);
  expect_err("{\"data\":[{\"index\":0,\"embedding\":[1, true]}]}", EMBD_ERR_OPENAI_SHAPE,
             "data[0].embedding[1]: not a number (it is a boolean)");
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
  embd_openai_options o = {.expected_count = 0, .max_dims = 2, .padding = 0};
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


/* ---- exactness: every number the float32 nearest its text ------------------------------ */

static const struct oracle_case {
  const char *text;
  uint32_t bits;
  int inf;
} g_oracle[] = {
#define ORACLE(t, b, i) {t, b, i},
#include "f32_oracle.inc"
#undef ORACLE
};

/* Each text of the rational-arithmetic oracle (tests/gen_f32_oracle.py) alone, then all
 * the finite ones in one array, compact and pretty-printed. */
static void test_oracle(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  size_t n = sizeof g_oracle / sizeof *g_oracle, bad = 0, fin = 0;
  sbuf b = {0};
  for (size_t i = 0; i < n; i++) {
    b.n = 0;
    sb_printf(&b, "{\"data\":[{\"index\":0,\"embedding\":[%s]}]}", g_oracle[i].text);
    embd_result r = embd_openai_decode(&e, b.p, b.n, NULL, &err);
    if (g_oracle[i].inf) {
      if (r != EMBD_ERR_OPENAI_SHAPE || !strstr(err.message, "out of the float32 range")) {
        fprintf(stderr, "%s: want out of range, got %d %s\n", g_oracle[i].text, (int)r, err.message);
        bad++;
      }
      continue;
    }
    fin++;
    if (r != EMBD_OK || f_bits(e.values[0]) != g_oracle[i].bits) {
      fprintf(stderr, "%s: want %08x, got %d %08x %s\n", g_oracle[i].text, (unsigned)g_oracle[i].bits,
              (int)r, r == EMBD_OK ? (unsigned)f_bits(e.values[0]) : 0u, r ? err.message : "");
      bad++;
    }
  }
  assert_int_equal(bad, 0);
  for (int pretty = 0; pretty < 2; pretty++) {
    b.n = 0;
    sb_printf(&b, pretty ? "{\n  \"data\": [\n    {\n      \"embedding\": [\n"
                         : "{\"data\":[{\"embedding\":[");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (!g_oracle[i].inf)
        sb_printf(&b, pretty ? "%s        %s" : "%s%s", k++ ? (pretty ? ",\n" : ",") : "", g_oracle[i].text);
    sb_printf(&b, pretty ? "\n      ],\n      \"index\": 0\n    }\n  ]\n}\n" : "],\"index\":0}]}");
    assert_int_equal(embd_openai_decode(&e, b.p, b.n, NULL, &err), EMBD_OK);
    assert_int_equal(e.dims, fin);
    k = 0;
    for (size_t i = 0; i < n; i++)
      if (!g_oracle[i].inf) assert_int_equal(f_bits(e.values[k++]), g_oracle[i].bits);
  }
  free(b.p);
  embd_openai_free(&e);
}

/* A random JSON number of one of the shapes servers and scripts print. */
static void random_number(char *t, size_t cap) {
  char dig[48];
  size_t nd = (size_t[]){1, 3, 7, 8, 9, 12, 17, 19, 20, 24, 40}[tu_range(&g_rng, 0, 10)];
  for (size_t i = 0; i < nd; i++) dig[i] = (char)('0' + tu_range(&g_rng, 0, 9));
  dig[nd] = 0;
  const char *d = dig;
  while (d[0] == '0' && d[1]) d++; /* no leading zeros in the integer part */
  size_t len = strlen(d), cut = tu_range(&g_rng, 0, len);
  int neg = (int)tu_range(&g_rng, 0, 1);
  int w;
  if (cut == 0) w = snprintf(t, cap, "%s0.%s", neg ? "-" : "", d);
  else if (cut == len) w = snprintf(t, cap, "%s%s", neg ? "-" : "", d);
  else w = snprintf(t, cap, "%s%.*s.%s", neg ? "-" : "", (int)cut, d, d + cut);
  if (tu_range(&g_rng, 0, 2) == 0)
    snprintf(t + w, cap - (size_t)w, "%c%s%d", "eE"[tu_range(&g_rng, 0, 1)],
             (const char *[]){"", "+", "-"}[tu_range(&g_rng, 0, 2)], (int)tu_range(&g_rng, 0, 50));
}

/* glibc's strtof (correctly rounded) as a second, independent oracle over random texts:
 * arrays of 1000 numbers, so the in-array fast path is what runs. */
static void test_strtof_oracle(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  sbuf b = {0};
  char (*texts)[80] = malloc(1000 * sizeof *texts);
  assert_non_null(texts);
  size_t rounds = tu_scaled(300, 20), checked = 0;
  for (size_t r = 0; r < rounds; r++) {
    b.n = 0;
    sb_printf(&b, "{\"data\":[{\"index\":0,\"embedding\":[");
    for (size_t i = 0; i < 1000; i++) {
      float f;
      do {
        random_number(texts[i], sizeof texts[i]);
        f = strtof(texts[i], NULL);
      } while (isinf(f));
      sb_printf(&b, "%s%s", i ? (r & 1 ? ", " : ",") : "", texts[i]);
    }
    sb_printf(&b, "]}]}");
    assert_int_equal(embd_openai_decode(&e, b.p, b.n, NULL, &err), EMBD_OK);
    for (size_t i = 0; i < 1000; i++) {
      float f = strtof(texts[i], NULL);
      if (f_bits(e.values[i]) != f_bits(f)) {
        fprintf(stderr, "%s: strtof %08x, embd %08x\n", texts[i], (unsigned)f_bits(f),
                (unsigned)f_bits(e.values[i]));
        fail();
      }
      checked++;
    }
  }
  printf("test_strtof_oracle: %zu numbers agree with strtof\n", checked);
  free(texts);
  free(b.p);
  embd_openai_free(&e);
}

/* ---- strict JSON: every fault is an error at its byte ------------------------------------ */

/* doc must fail with EMBD_ERR_OPENAI_JSON at the first byte of `at` (a substring of doc)
 * plus delta, with msg_part in the message. */
static void expect_json_at(const char *doc, size_t len, const char *at, size_t delta,
                           const char *msg_part) {
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result r = embd_openai_decode(&e, doc, len, NULL, &err);
  const char *hit = at ? strstr(doc, at) : doc + len;
  assert_non_null(hit);
  size_t want = (size_t)(hit - doc) + delta;
  char body[48];
  snprintf(body, sizeof body, "(body byte %zu)", want);
  if (r != EMBD_ERR_OPENAI_JSON || err.offset != want || !strstr(err.message, body) ||
      (msg_part && !strstr(err.message, msg_part))) {
    fprintf(stderr, "doc %.200s\n  got %d at %zu (%s), want JSON at %zu with \"%s\"\n", doc, (int)r,
            err.offset, err.message, want, msg_part ? msg_part : "");
    fail();
  }
  assert_int_equal(e.count, 0);
  embd_openai_free(&e);
}

#define ITEM "{\"index\":0,\"embedding\":[1,2]}"
#define DOC(before, inside) "{" before "\"data\":[{" inside "\"index\":0,\"embedding\":[1,2]}]}"

static void test_strict_json(void **state) {
  (void)state;
  static const struct {
    const char *doc, *at;
    size_t delta;
    const char *msg;
  } cases[] = {
      /* the bodies the exactness issue found decoded as valid */
      {DOC("\"extra\":[1,,2],", ""), ",2]", 0, "expected a value, found ','"},
      {DOC("", "\"object\":[1,,2],"), ",2]", 0, "expected a value"},
      {DOC("\"x\":{\"a\":1,,\"b\":2},", ""), ",\"b\"", 0, "expected a string key"},
      {DOC("\"x\":{\"a\" 1},", ""), "1},", 0, "expected ':'"},
      {DOC("\"x\":tru,", ""), "tru", 0, "invalid literal"},
      {DOC("\"x\":nul,", ""), "nul", 0, "invalid literal"},
      {DOC("\"x\":-,", ""), "-,", 1, "'-' without digits"},
      {DOC("\"extra\":01,", ""), "01", 0, "leading zero"},
      {DOC("\"extra\":\"\\x41\",", ""), "\\x41", 0, "invalid escape \\x"},
      /* more of the grammar */
      {DOC("\"x\":[1,2,],", ""), "],", 0, "expected a value, found ']'"},
      {DOC("\"x\":{\"a\":1,},", ""), "},", 0, "expected a string key"},
      {DOC("\"x\":{'a':1},", ""), "'a'", 0, "expected a string key"},
      {DOC("\"x\":+1,", ""), "+1", 0, "expected a value, found '+'"},
      {DOC("\"x\":.5,", ""), ".5", 0, "expected a value"},
      {DOC("\"x\":1.,", ""), "1.,", 2, "no digit after a decimal point"},
      {DOC("\"x\":1e+,", ""), "1e+", 3, "no digit in a number's exponent"},
      {DOC("\"x\":NaN,", ""), "NaN", 0, "expected a value, found 'N'"},
      {DOC("\"x\":Infinity,", ""), "Infinity", 0, "expected a value"},
      {DOC("\"x\":truex,", ""), "x,", 0, "expected ',' or '}'"},
      {DOC("\"x\":[1 2],", ""), "2]", 0, "expected ',' or ']'"},
      {DOC("\"x\":\"a\\u12\",", ""), "\\u12", 0, "four hex digits"},
      {DOC("\"x\":\"\\ud800\",", ""), "\\ud800", 0, "unpaired surrogate"},
      {DOC("\"x\":\"\\udc00\",", ""), "\\udc00", 0, "unpaired low surrogate"},
      {DOC("\"x\":\"\\ud800\\u0041\",", ""), "\\ud800", 0, "unpaired surrogate"},
      {DOC("\"x\":\"a\tb\",", ""), "\tb", 0, "raw control byte 0x09"},
      {DOC("\"x\":\"\xc0\x80\",", ""), "\xc0", 0, "invalid UTF-8 (byte 0xc0)"},
      {DOC("\"x\":\"\xed\xa0\x80\",", ""), "\xed", 0, "invalid UTF-8 (byte 0xed)"},
      {DOC("\"x\":\"\xf5\x80\x80\x80\",", ""), "\xf5", 0, "invalid UTF-8"},
      {DOC("\"x\":\"\xe2\x82\",", ""), "\xe2", 0, "invalid UTF-8"},
      {DOC("\"x\":\"\x80\",", ""), "\x80", 0, "invalid UTF-8"},
      {DOC("\"model\":\"a\x01z\",", ""), "\x01", 0, "raw control byte 0x01"},
      {DOC("", "\"extra\":[1,,2],"), ",2]", 0, "data[0]: expected a value"},
      {"{\"data\":[" ITEM "], \"usage\":{\"prompt_tokens\":1,,\"total_tokens\":1}}", ",\"total", 0,
       "usage: expected a string key"},
      {"{\"data\":[" ITEM "]}x", "]}x", 2, "content after the body's closing '}'"},
      {"{\"data\":[" ITEM "]}}", "]}}", 2, "content after"},
      {"{\"data\":[" ITEM "]} {}", " {}", 1, "content after"},
      {"{\"data\":[" ITEM "],}", ",}", 1, "expected a string key"},
      {"{\"data\":[" ITEM ",]}", ",]}", 1, "expected a value, found ']'"},
      {"{\"data\":[{\"index\":0,\"embedding\":\"AAC\x01Pw==\"}]}", "\x01", 0, "raw control byte"},
      {"{\"data\":[{\"index\":0,\"embedding\":\"AACAP\xff==\"}]}", "\xff", 0, "invalid UTF-8"},
      {"{\"data\":[{\"index\":0,\"embedding\":[1,2,]}]}", "]}]", 0, "embedding[2]: expected a value"},
      {"{\"data\":[{\"index\":0,\"embedding\":[1;2]}]}", ";", 0, "expected ',' or ']'"},
      {"{\"data\":[{\"index\":01,\"embedding\":[1]}]}", "01", 0, "data[0].index: a number with a leading zero"},
      {"\xef\xbb\xbf\xef\xbb\xbf{\"data\":[]}", "\xef\xbb\xbf{", 0, "expected a value, found byte 0xef"},
      {"\xfe\xff{\"data\":[]}", NULL, 0, "expected a value, found byte 0xfe"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *at = cases[i].at;
    size_t delta = cases[i].delta;
    if (i + 1 == sizeof cases / sizeof *cases) at = cases[i].doc; /* UTF-16 BOM at byte 0 */
    expect_json_at(cases[i].doc, strlen(cases[i].doc), at, delta, cases[i].msg);
  }
  /* A truncated body: the error is at its end, and says the body ended. */
  const char *whole = "{\"data\":[{\"index\":0,\"embedding\":[1.5,2]}],\"model\":\"m\"}";
  for (size_t cut = 0; cut < strlen(whole); cut++) {
    char *c = malloc(cut + 1);
    memcpy(c, whole, cut);
    c[cut] = 0;
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    embd_result r = embd_openai_decode(&e, c, cut, NULL, &err);
    assert_int_not_equal(r, EMBD_OK);
    if (r == EMBD_ERR_OPENAI_JSON) {
      assert_int_equal(err.offset, cut);
      assert_true(strstr(err.message, "ends") != NULL);
    }
    embd_openai_free(&e);
    free(c);
  }
  /* Nesting: 1024 levels are JSON, 1025 are refused at the 1025th bracket. */
  for (size_t depth = 1023; depth <= 1025; depth++) {
    sbuf b = {0};
    sb_printf(&b, "{\"x\":");
    for (size_t i = 0; i < depth; i++) sb_printf(&b, "[");
    for (size_t i = 0; i < depth; i++) sb_printf(&b, "]");
    sb_printf(&b, ",\"data\":[]}");
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_error err;
    embd_result r = embd_openai_decode(&e, b.p, b.n, NULL, &err);
    if (depth <= 1024) {
      assert_int_equal(r, EMBD_OK);
    } else {
      assert_int_equal(r, EMBD_ERR_OPENAI_JSON);
      assert_int_equal(err.offset, 5 + 1024);
      assert_non_null(strstr(err.message, "nested deeper than 1024"));
    }
    embd_openai_free(&e);
    free(b.p);
  }
}

/* Invalid UTF-8 far into a big body is reported at its byte, not at byte 0. */
static void test_fault_far_away(void **state) {
  (void)state;
  size_t n = tu_scaled(50000000, 2000000);
  sbuf b = {0};
  sb_printf(&b, "{\"data\":[" ITEM "],\"note\":\"");
  size_t s0 = b.n;
  b.p = realloc(b.p, s0 + n + 64);
  assert_non_null(b.p);
  memset(b.p + s0, 'a', n);
  size_t bad = s0 + n - 7;
  b.p[bad] = (char)0xFF;
  memcpy(b.p + s0 + n, "\"}", 3);
  b.n = s0 + n + 2;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  assert_int_equal(embd_openai_decode(&e, b.p, b.n, NULL, &err), EMBD_ERR_OPENAI_JSON);
  assert_int_equal(err.offset, bad);
  assert_non_null(strstr(err.message, "invalid UTF-8 (byte 0xff)"));
  b.p[bad] = 'a';
  assert_int_equal(embd_openai_decode(&e, b.p, b.n, NULL, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  free(b.p);
  embd_openai_free(&e);
}

/* The BOM, escaped keys, and the model name rule (at most 127 bytes, cut at a character
 * boundary or at U+0000, model_truncated set when cut). */
static void test_bom_keys_model(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  assert_int_equal(dec(&e, "\xef\xbb\xbf{\"data\":[" ITEM "]}", NULL, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  assert_int_equal(dec(&e, " \xef\xbb\xbf{\"data\":[]}", NULL, &err), EMBD_ERR_OPENAI_JSON);
  assert_int_equal(err.offset, 1);
  assert_int_equal(dec(&e, "{\"d\\u0061ta\":[{\"ind\\u0065x\":0,\"\\u0065mbedding\":[3]}],"
                           "\"mod\\u0065l\":\"\\u00e9\"}",
                       NULL, &err),
                   EMBD_OK);
  assert_int_equal(e.count, 1);
  assert_string_equal(e.model, "\xc3\xa9");
  assert_int_equal(dec(&e, "{\"model\":\"ab\\u0000cd\",\"data\":[]}", NULL, &err), EMBD_OK);
  assert_string_equal(e.model, "ab");
  assert_int_equal(e.model_truncated, 1);
  static const struct {
    size_t ascii;
    const char *tail;
    size_t want;
    int cut;
  } m[] = {
      {127, "", 127, 0},        {128, "", 127, 1},           {126, "\xc3\xa9", 126, 1},
      {125, "\xc3\xa9", 127, 0}, {125, "\xe2\x82\xac", 125, 1}, {124, "\xe2\x82\xac", 127, 0},
      {124, "\xf0\x9f\x98\x80", 124, 1}, {123, "\xf0\x9f\x98\x80", 127, 0},
      {120, "\\u20ac\\u20ac\\u20ac", 126, 1},
  };
  for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
    sbuf b = {0};
    sb_printf(&b, "{\"model\":\"");
    for (size_t k = 0; k < m[i].ascii; k++) sb_printf(&b, "x");
    sb_printf(&b, "%s\",\"data\":[]}", m[i].tail);
    assert_int_equal(dec(&e, b.p, NULL, &err), EMBD_OK);
    if (strlen(e.model) != m[i].want || e.model_truncated != m[i].cut) {
      fprintf(stderr, "model case %zu: %zu bytes cut %d, want %zu cut %d\n", i, strlen(e.model),
              e.model_truncated, m[i].want, m[i].cut);
      fail();
    }
    free(b.p);
  }
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
    embd_openai_options o = {.expected_count = 100, .max_dims = 1536, .padding = 0};
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
      embd_openai_options o = {.expected_count = 0, .max_dims = 0, .padding = pad};
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
  embd_openai_options o = {.expected_count = 0, .max_dims = 0, .padding = 64};
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
  embd_openai_options o = {.expected_count = 2, .max_dims = 0, .padding = 0};
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
      cmocka_unit_test(test_oracle),           cmocka_unit_test(test_strtof_oracle),
      cmocka_unit_test(test_strict_json),      cmocka_unit_test(test_fault_far_away),
      cmocka_unit_test(test_bom_keys_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
