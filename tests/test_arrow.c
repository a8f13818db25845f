/* Arrow C Data Interface export (embd/arrow.h), checked against the specification's layout
 * (format strings, n_buffers per type, null counts, offsets, lengths, child names and flags),
 * the values against what the test itself put in (base64 written here from the float bits,
 * not by embd), the ownership rules (the value buffer is the decoder's own storage, moved;
 * release sets release to NULL; a child moved out outlives its parent's release; every
 * allocation freed: run under ASan in the asan build, whose leak checker fails the test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/arrow.h"
#include "embd/openai.h"
#include "testutil.h"

#define OK(x) assert_int_equal((x), EMBD_OK)

/* RFC 4648 base64 of n bytes, written here (an oracle independent of embd's codec). */
static void b64(const uint8_t *p, size_t n, char *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    out[o++] = t[v >> 18], out[o++] = t[v >> 12 & 63], out[o++] = t[v >> 6 & 63], out[o++] = t[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)p[i] << 16;
    out[o++] = t[v >> 18], out[o++] = t[v >> 12 & 63], out[o++] = '=', out[o++] = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
    out[o++] = t[v >> 18], out[o++] = t[v >> 12 & 63], out[o++] = t[v >> 6 & 63], out[o++] = '=';
  }
  out[o] = 0;
}

static float val(size_t row, size_t j) { return (float)row * 1000.0f + (float)j * 0.25f - 3.0f; }

/* A response body of `count` base64 vectors of `dims` (data[] in reverse index order). */
static char *body(size_t count, size_t dims) {
  size_t cap = 64 + count * (64 + dims * 6);
  char *s = malloc(cap), *q = s;
  uint8_t *raw = malloc(dims * 4 + 1);
  char *enc = malloc(dims * 6 + 8);
  q += sprintf(q, "{\"object\":\"list\",\"data\":[");
  for (size_t k = 0; k < count; k++) {
    size_t row = count - 1 - k;
    for (size_t j = 0; j < dims; j++) {
      float f = val(row, j);
      uint32_t u;
      memcpy(&u, &f, 4);
      for (int b = 0; b < 4; b++) raw[j * 4 + b] = (uint8_t)(u >> (8 * b));  // little-endian
    }
    b64(raw, dims * 4, enc);
    q += sprintf(q, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":\"%s\"}", k ? "," : "", row, enc);
  }
  sprintf(q, "],\"model\":\"m\"}");
  free(raw);
  free(enc);
  return s;
}

static void check_vec_schema(const struct ArrowSchema *s, size_t dims, const char *name) {
  char fmt[32];
  snprintf(fmt, sizeof fmt, "+w:%zu", dims);
  assert_non_null(s->release);
  assert_string_equal(s->format, fmt);
  assert_string_equal(s->name, name);
  assert_null(s->metadata);
  assert_int_equal(s->flags, ARROW_FLAG_NULLABLE);
  assert_int_equal(s->n_children, 1);
  assert_null(s->dictionary);
  const struct ArrowSchema *c = s->children[0];
  assert_string_equal(c->format, "f");
  assert_string_equal(c->name, "item");
  assert_int_equal(c->n_children, 0);
  assert_null(c->children);
  assert_non_null(c->release);
}

/* fixed_size_list: 1 buffer (validity, NULL with null_count 0), 1 child float: 2 buffers
 * (validity NULL, values). */
static const float *check_vec_array(const struct ArrowArray *a, size_t rows, size_t dims) {
  assert_non_null(a->release);
  assert_int_equal(a->length, (int64_t)rows);
  assert_int_equal(a->null_count, 0);
  assert_int_equal(a->offset, 0);
  assert_int_equal(a->n_buffers, 1);
  assert_null(a->buffers[0]);
  assert_int_equal(a->n_children, 1);
  assert_null(a->dictionary);
  const struct ArrowArray *c = a->children[0];
  assert_non_null(c->release);
  assert_int_equal(c->length, (int64_t)(rows * dims));
  assert_int_equal(c->null_count, 0);
  assert_int_equal(c->offset, 0);
  assert_int_equal(c->n_buffers, 2);
  assert_null(c->buffers[0]);
  assert_int_equal(c->n_children, 0);
  assert_int_equal((uintptr_t)c->buffers[1] % 8, 0);  // the spec asks 8-byte alignment at least
  return c->buffers[1];
}

static void test_from_openai(void **state) {
  (void)state;
  const size_t n = 5, d = 7;
  char *js = body(n, d);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  OK(embd_openai_decode(&e, js, strlen(js), NULL, &err));
  const float *storage = e.values;
  struct ArrowSchema s;
  struct ArrowArray a;
  OK(embd_arrow_from_openai(&e, &s, &a, &err));
  // e is left empty: its storage moved
  assert_null(e.values);
  assert_int_equal(e.count, 0);
  assert_null(e.impl_);
  check_vec_schema(&s, d, "");
  const float *v = check_vec_array(&a, n, d);
  assert_ptr_equal(v, storage);  // no copy: the decoder's row storage is the value buffer
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) assert_true(v[i * d + j] == val(i, j));
  // e is reusable after the move
  OK(embd_openai_decode(&e, js, strlen(js), NULL, &err));
  assert_int_equal(e.count, n);
  embd_openai_free(&e);
  // release: sets release to NULL, and a second release through the struct is a no-op
  void (*rel)(struct ArrowArray *) = a.release;
  a.release(&a);
  assert_null(a.release);
  rel(&a);
  void (*srel)(struct ArrowSchema *) = s.release;
  s.release(&s);
  assert_null(s.release);
  srel(&s);
  free(js);
}

/* The specification's "moving child arrays": a consumer moves the child out, releases the
 * parent, and the child stays valid until its own release. */
static void test_move_child(void **state) {
  (void)state;
  char *js = body(3, 4);
  embd_openai_embeddings e;
  embd_openai_init(&e);
  OK(embd_openai_decode(&e, js, strlen(js), NULL, NULL));
  struct ArrowSchema s, sc;
  struct ArrowArray a, ac;
  OK(embd_arrow_from_openai(&e, &s, &a, NULL));
  ac = *a.children[0];
  a.children[0]->release = NULL;
  sc = *s.children[0];
  s.children[0]->release = NULL;
  a.release(&a);
  s.release(&s);
  const float *v = ac.buffers[1];
  assert_true(v[2 * 4 + 3] == val(2, 3));  // ASan: a use after free here if the parent freed it
  assert_string_equal(sc.format, "f");
  ac.release(&ac);
  sc.release(&sc);
  assert_null(ac.release);
  free(js);
}

static void test_from_openai_errors(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  embd_error err;
  assert_int_equal(embd_arrow_from_openai(NULL, &s, &a, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(s.release);
  assert_null(a.release);
  // kept in the wire dtype: refused, e untouched
  const char *js = "{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}";
  embd_openai_options o = {0};
  o.dtype = EMBD_DTYPE_INT8;
  o.flags = EMBD_OPENAI_KEEP_DTYPE;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  OK(embd_openai_decode(&e, js, strlen(js), &o, &err));
  assert_int_equal(embd_arrow_from_openai(&e, &s, &a, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "wire dtype"));
  assert_null(s.release);
  assert_null(a.release);
  assert_int_equal(e.count, 1);
  assert_non_null(e.data);
  embd_openai_free(&e);
  // nothing decoded: a valid empty array
  embd_openai_init(&e);
  OK(embd_arrow_from_openai(&e, &s, &a, &err));
  check_vec_schema(&s, 0, "");
  check_vec_array(&a, 0, 0);
  a.release(&a);
  s.release(&s);
  // an empty data[]
  js = "{\"data\":[]}";
  OK(embd_openai_decode(&e, js, strlen(js), NULL, &err));
  OK(embd_arrow_from_openai(&e, &s, &a, &err));
  assert_int_equal(a.length, 0);
  a.release(&a);
  s.release(&s);
  embd_openai_free(&e);
}

/* The record batch: struct {custom_id utf8 (3 buffers), index int32 (2), embedding}. */
static void test_batch(void **state) {
  (void)state;
  embd_arrow_batch b;
  embd_arrow_batch_init(&b);
  embd_error err;
  const size_t d = 3;
  float rows[4 * 3];
  for (size_t i = 0; i < 4 * d; i++) rows[i] = (float)i + 0.5f;
  // ids with a tab, a backslash, a NUL and non-ASCII (UTF-8), as the decoder may give them
  static const char id0[] = "doc-17", id1[] = "t\tb\\\0x", id2[] = "\xc3\xa9t\xc3\xa9";
  OK(embd_arrow_batch_reserve(&b, 2, 4, d, &err));
  OK(embd_arrow_batch_add(&b, id0, 6, rows, 2, d, 0, &err));
  OK(embd_arrow_batch_add(&b, id1, 6, rows + 2 * d, 1, d, 0, &err));
  OK(embd_arrow_batch_add(&b, "", 0, rows + 3 * d, 1, d, 5, &err));  // an empty id, index 5
  OK(embd_arrow_batch_add(&b, id2, 6, NULL, 0, d, 0, &err));          // no rows: nothing added
  assert_int_equal(embd_arrow_batch_add(&b, id2, 6, rows, 1, 2, 0, &err), EMBD_ERR_OPENAI_DIMS);
  assert_int_equal(b.rows, 4);
  assert_int_equal(b.dims, d);
  assert_int_equal(b.id_bytes, 18);

  struct ArrowSchema s;
  struct ArrowArray a;
  OK(embd_arrow_batch_export(&b, &s, &a, &err));
  assert_int_equal(b.rows, 0);
  assert_null(b.impl_);
  assert_string_equal(s.format, "+s");
  assert_int_equal(s.n_children, 3);
  assert_string_equal(s.children[0]->format, "u");
  assert_string_equal(s.children[0]->name, "custom_id");
  assert_string_equal(s.children[1]->format, "i");
  assert_string_equal(s.children[1]->name, "index");
  check_vec_schema(s.children[2], d, "embedding");
  for (int i = 0; i < 3; i++) assert_int_equal(s.children[i]->flags, ARROW_FLAG_NULLABLE);

  assert_int_equal(a.length, 4);
  assert_int_equal(a.null_count, 0);
  assert_int_equal(a.n_buffers, 1);
  assert_null(a.buffers[0]);
  assert_int_equal(a.n_children, 3);
  const struct ArrowArray *ids = a.children[0], *idx = a.children[1];
  assert_int_equal(ids->length, 4);
  assert_int_equal(ids->n_buffers, 3);
  assert_int_equal(ids->null_count, 0);
  assert_null(ids->buffers[0]);
  const int32_t *off = ids->buffers[1];
  const char *chars = ids->buffers[2];
  static const int32_t want_off[5] = {0, 6, 12, 18, 18};
  assert_memory_equal(off, want_off, sizeof want_off);
  assert_memory_equal(chars, "doc-17doc-17", 12);
  assert_memory_equal(chars + 12, id1, 6);
  assert_int_equal(idx->length, 4);
  assert_int_equal(idx->n_buffers, 2);
  assert_null(idx->buffers[0]);
  static const int32_t want_idx[4] = {0, 1, 0, 5};
  assert_memory_equal(idx->buffers[1], want_idx, sizeof want_idx);
  const float *v = check_vec_array(a.children[2], 4, d);
  assert_memory_equal(v, rows, sizeof rows);
  a.release(&a);
  assert_null(a.release);
  s.release(&s);

  // the builder collects the next batch; an empty export has 0 rows and one offset
  OK(embd_arrow_batch_export(&b, &s, &a, &err));
  assert_int_equal(a.length, 0);
  assert_int_equal(a.children[0]->length, 0);
  assert_non_null(a.children[0]->buffers[1]);
  assert_int_equal(((const int32_t *)a.children[0]->buffers[1])[0], 0);
  check_vec_schema(s.children[2], 0, "embedding");
  a.release(&a);
  s.release(&s);

  // errors add nothing
  assert_int_equal(embd_arrow_batch_add(&b, "x", 1, rows, 1, 0, 0, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_arrow_batch_add(&b, "x", 1, rows, 2, d, INT32_MAX, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_arrow_batch_add(&b, NULL, 1, rows, 1, d, 0, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_arrow_batch_add(&b, "x", 1, rows, 1, (size_t)INT32_MAX + 1, 0, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(b.rows, 0);
  OK(embd_arrow_batch_add(&b, "x", 1, rows, 1, d, INT32_MAX, &err));
  embd_arrow_batch_free(&b);  // rows never exported: freed here (ASan's leak check)
  embd_arrow_batch_free(&b);
  assert_int_equal(embd_arrow_batch_export(NULL, &s, &a, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(a.release);
}

/* Many batch lines through embd_openai_batch_line into the builder: rows, ids and index as
 * the test wrote them; the builder's growth keeps earlier rows. */
static void test_batch_lines(void **state) {
  (void)state;
  const size_t n = 300, d = 16;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_arrow_batch b;
  embd_arrow_batch_init(&b);
  embd_error err;
  char *js = body(2, d);
  size_t cap = strlen(js) + 256;
  char *line = malloc(cap);
  for (size_t k = 0; k < n; k++) {
    int len = snprintf(line, cap, "{\"custom_id\":\"req-%zu\",\"response\":{\"status_code\":200,\"body\":%s},\"error\":null}\n", k, js);
    embd_openai_batch_info info;
    OK(embd_openai_batch_line(&e, line, (size_t)len, NULL, &info, &err));
    OK(embd_arrow_batch_add(&b, info.custom_id, info.custom_id_len, e.values, e.count, e.dims, 0, &err));
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  OK(embd_arrow_batch_export(&b, &s, &a, &err));
  assert_int_equal(a.length, 2 * n);
  const int32_t *off = a.children[0]->buffers[1];
  const char *chars = a.children[0]->buffers[2];
  const int32_t *idx = a.children[1]->buffers[1];
  const float *v = a.children[2]->children[0]->buffers[1];
  for (size_t r = 0; r < 2 * n; r++) {
    char want[32];
    int wl = snprintf(want, sizeof want, "req-%zu", r / 2);
    assert_int_equal(off[r + 1] - off[r], wl);
    assert_memory_equal(chars + off[r], want, (size_t)wl);
    assert_int_equal(idx[r], (int32_t)(r % 2));
    for (size_t j = 0; j < d; j++) assert_true(v[r * d + j] == val(r % 2, j));
  }
  a.release(&a);
  s.release(&s);
  embd_arrow_batch_free(&b);
  embd_openai_free(&e);
  free(line);
  free(js);
}

int main(void) {
  /* a forced tier this CPU lacks: skip (77), as every test does (isa.every_program_every_tier) */
  const int pre = tu_isa_preflight("test_arrow");
  if (pre) return pre;
  embd_openai_embeddings probe;
  embd_openai_init(&probe);
  if (embd_openai_decode(&probe, "{\"data\":[]}", 11, NULL, NULL) == EMBD_ERR_UNAVAILABLE) {
    fprintf(stderr, "test_arrow: SKIPPED: built without EMBD_WITH_OPENAI\n");
    return 77;
  }
  embd_openai_free(&probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_from_openai), cmocka_unit_test(test_move_child),
      cmocka_unit_test(test_from_openai_errors), cmocka_unit_test(test_batch),
      cmocka_unit_test(test_batch_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
