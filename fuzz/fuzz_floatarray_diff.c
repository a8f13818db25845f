/* Differential fuzz target for the float-array kernel family (src/core/floatarray_kernel.h):
 * every SIMD implementation against the scalar reference, on arbitrary bytes.
 *
 * Input: the text of a JSON array's elements (what follows its '['). Two checks:
 *   1. Each implementation the CPU runs, called directly on an exact-size copy of the text
 *      (ASan sees any read past it or more than EMBD_FLOATARRAY_BEHIND bytes before it)
 *      with an output of exactly n floats (n from the first byte): the k numbers it takes
 *      must be a prefix of the text that this file's own RFC 8259 grammar check accepts,
 *      number by number (each a maximal run of number characters), each followed by ','
 *      JSON whitespace and another number's first byte; each float must have glibc
 *      strtof's bits (correctly rounded, no code shared with embd); k <= n; *past that
 *      next number's first byte (the text's start when k is 0).
 *   2. The whole decoder, {"data":[{"index":0,"embedding":[<input>]}]}, with each tier
 *      forced through embd_isa_set: the result code, the error's offset and message, the
 *      dims and every float's bits must be the scalar tier's (today's exact path), byte for
 *      byte.
 * tests/test_floatarray.c runs this function on generated texts; fuzz/corpus/floatarray_diff
 * (fuzz/gen_floatarray_diff_corpus.py) seeds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

/* The family's internal entry points (floatarray_kernel.h; the static library has them). */
typedef size_t (*fa_fn)(const uint8_t *base, const uint8_t *p, const uint8_t *end, float *out,
                        size_t n, const uint8_t **past);
fa_fn embd_floatarray_impl_(size_t index);
size_t embd_floatarray_count_(void);
const char *embd_floatarray_name_(size_t index);
const char *embd_floatarray_active_(void);
#define FA_BEHIND 16 /* EMBD_FLOATARRAY_BEHIND */

static void fa_die(const char *what, const char *impl, const uint8_t *t, size_t n) {
  fprintf(stderr, "fuzz_floatarray_diff: %s (%s): '%.*s'\n", what, impl, (int)(n > 300 ? 300 : n),
          (const char *)t);
  abort();
}

static int fa_digit(const uint8_t *p, const uint8_t *e) { return p < e && *p >= '0' && *p <= '9'; }
static int fa_numchar(uint8_t c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}
static int fa_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int fa_is_number(const uint8_t *p, const uint8_t *e) {
  if (p < e && *p == '-') p++;
  if (!fa_digit(p, e)) return 0;
  if (*p == '0') p++;
  else
    while (fa_digit(p, e)) p++;
  if (p < e && *p == '.') {
    p++;
    if (!fa_digit(p, e)) return 0;
    while (fa_digit(p, e)) p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (!fa_digit(p, e)) return 0;
    while (fa_digit(p, e)) p++;
  }
  return p == e;
}

static void fa_check_kernels(const uint8_t *data, size_t size) {
  const size_t cap = size ? (size_t)(data[0] % 64) + 1 : 1;
  uint8_t *buf = (uint8_t *)malloc(FA_BEHIND + size + 1);
  float *out = (float *)malloc(cap * sizeof(float));
  if (!buf || !out) abort();
  memset(buf, ' ', FA_BEHIND);
  if (size) memcpy(buf + FA_BEHIND, data, size);
  const uint8_t *p = buf + FA_BEHIND, *end = p + size;
  for (size_t i = 0; i < embd_floatarray_count_(); i++) {
    fa_fn fn = embd_floatarray_impl_(i);
    const char *name = embd_floatarray_name_(i);
    if (!fn) continue;
    const uint8_t *past = NULL;
    const size_t k = fn(buf, p, end, out, cap, &past);
    if (k > cap) fa_die("more floats than asked", name, p, size);
    const uint8_t *q = p;
    for (size_t t = 0; t < k; t++) {
      const uint8_t *r = q;
      while (r < end && fa_numchar(*r)) r++;
      if (!fa_is_number(q, r)) fa_die("took a text that is not a JSON number", name, q, (size_t)(end - q));
      char tmp[512];
      if ((size_t)(r - q) >= sizeof tmp) fa_die("took a very long number", name, q, (size_t)(r - q));
      memcpy(tmp, q, (size_t)(r - q));
      tmp[r - q] = 0;
      const float want = strtof(tmp, NULL);
      if (memcmp(&want, &out[t], 4) != 0) {
        fprintf(stderr, "number %zu: %s -> %.9g, strtof %.9g\n", t, tmp, (double)out[t], (double)want);
        fa_die("a float that is not strtof's", name, p, size);
      }
      /* each number taken with ',' and whitespace after it, and another number's start */
      if (r >= end || *r != ',') fa_die("took a number without a ',' after it", name, p, size);
      r++;
      while (r < end && fa_ws(*r)) r++;
      if (r >= end || (*r != '-' && !fa_digit(r, end)))
        fa_die("took a number without another number after it", name, p, size);
      q = r;
    }
    if (past != q) fa_die("*past is not the start of the number after the last one taken", name, p, size);
  }
  free(out);
  free(buf);
}

static void fa_check_decoder(const uint8_t *data, size_t size) {
  static const char head[] = "{\"data\":[{\"index\":0,\"embedding\":[", tail[] = "]}]}";
  const size_t hn = sizeof head - 1, tn = sizeof tail - 1, n = hn + size + tn;
  char *body = (char *)malloc(n);
  if (!body) abort();
  memcpy(body, head, hn);
  if (size) memcpy(body + hn, data, size);
  memcpy(body + hn + size, tail, tn);
  static const char *const tiers[] = {"scalar", "sse42", "avx2", "avx512", "neon"};
  embd_result r0 = EMBD_OK;
  embd_error e0;
  embd_openai_embeddings v0;
  embd_openai_init(&v0);
  memset(&e0, 0, sizeof e0);
  int have0 = 0;
  for (size_t t = 0; t < sizeof tiers / sizeof tiers[0]; t++) {
    if (embd_isa_set(tiers[t]) != EMBD_OK) continue;
    embd_openai_embeddings v;
    embd_openai_init(&v);
    embd_error e;
    memset(&e, 0, sizeof e);
    const embd_result r = embd_openai_decode(&v, body, n, NULL, &e);
    if (!have0) {
      r0 = r, e0 = e, v0 = v, have0 = 1;
      continue;
    }
    if (r != r0 || e.result != e0.result || e.offset != e0.offset || strcmp(e.message, e0.message) != 0) {
      fprintf(stderr, "scalar: %d at %llu: %s\n%s: %d at %llu: %s\n", (int)r0, (unsigned long long)e0.offset,
              e0.message, tiers[t], (int)r, (unsigned long long)e.offset, e.message);
      fa_die("the decoder's error differs from the scalar tier's", tiers[t], data, size);
    }
    if (r == EMBD_OK && (v.count != v0.count || v.dims != v0.dims ||
                         (v.count != 0 && v.dims != 0 && memcmp(v.values, v0.values, v.count * v.dims * sizeof(float)))))
      fa_die("the decoder's floats differ from the scalar tier's", tiers[t], data, size);
    embd_openai_free(&v);
  }
  embd_openai_free(&v0);
  if (embd_isa_set(NULL) != EMBD_OK) abort();
  free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fa_check_kernels(data, size);
  fa_check_decoder(data, size);
  return 0;
}
