/* Fuzz target for the exactness of JSON numbers in OpenAI responses (embd/openai.h).
 *
 * Input: number texts separated by ','. They become one embedding,
 *   {"data":[{"index":0,"embedding":[<input>]}]}
 * and the decode is held against two things the library does not share: this file's own
 * RFC 8259 number grammar check and glibc's strtof (correctly rounded; C locale).
 *   - every text a JSON number, every strtof finite: the decode succeeds and each float
 *     has strtof's bits;
 *   - every text a JSON number, one beyond the float32 range: EMBD_ERR_OPENAI_SHAPE,
 *     "out of the float32 range";
 *   - any text not a JSON number ('+', a leading zero, "1.", NaN, ...): the decode
 *     fails, with no vectors and the error offset inside the body.
 * JSON whitespace around a text is allowed (it is around an array element). An input with
 * a byte of []{}": can close the array and write other JSON; then only the error
 * contract is checked. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

static void die(const char *what, const char *tok, size_t n) {
  fprintf(stderr, "fuzz_openai_numbers: %s: '%.*s'\n", what, (int)(n > 200 ? 200 : n), tok);
  abort();
}

static int digit(const char *p, const char *e) { return p < e && *p >= '0' && *p <= '9'; }

/* RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int is_json_number(const char *p, size_t n) {
  const char *e = p + n;
  if (p < e && *p == '-') p++;
  if (!digit(p, e)) return 0;
  if (*p == '0') p++;
  else while (digit(p, e)) p++;
  if (p < e && *p == '.') {
    p++;
    if (!digit(p, e)) return 0;
    while (digit(p, e)) p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (!digit(p, e)) return 0;
    while (digit(p, e)) p++;
  }
  return p == e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char head[] = "{\"data\":[{\"index\":0,\"embedding\":[", tail[] = "]}]}";
  const size_t hl = sizeof head - 1, tl = sizeof tail - 1;
  char *body = malloc(hl + size + tl);
  float *want = malloc((size + 1) * sizeof *want);
  char *tmp = malloc(size + 1);
  if (!body || !want || !tmp) abort();
  memcpy(body, head, hl);
  memcpy(body + hl, data, size);
  memcpy(body + hl + size, tail, tl);
  const size_t len = hl + size + tl;

  /* The texts, their validity and strtof's floats. */
  size_t count = 0;
  int all_numbers = 1, overflow = 0;
  const char *s = (const char *)data, *end = s + size;
  for (;;) {
    const char *c = memchr(s, ',', (size_t)(end - s));
    const char *q = c ? c : end;
    while (s < q && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
    while (q > s && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n' || q[-1] == '\r')) q--;
    size_t n = (size_t)(q - s);
    if (!is_json_number(s, n)) {
      all_numbers = 0;
    } else {
      memcpy(tmp, s, n);
      tmp[n] = 0;
      float f = strtof(tmp, NULL);
      if (isinf(f)) overflow = 1;
      want[count] = f;
    }
    count++;
    if (!c) break;
    s = c + 1;
  }

  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result r = embd_openai_decode(&e, body, len, NULL, &err);
  if (r != EMBD_OK) {
    if (e.count || e.dims) die("vectors after an error", (const char *)data, size);
    if (err.offset > len) die("error offset past the body", (const char *)data, size);
  }
  int structural = 0;
  for (size_t i = 0; i < size; i++)
    if (strchr("[]{}\":", data[i]) && data[i]) structural = 1;
  if (structural) {
    /* the error contract only (checked above) */
  } else if (!all_numbers) {
    if (r == EMBD_OK) die("a text that is not a JSON number decoded", (const char *)data, size);
  } else if (overflow) {
    if (r != EMBD_ERR_OPENAI_SHAPE || !strstr(err.message, "out of the float32 range"))
      die("a number beyond float32 not reported as out of range", (const char *)data, size);
  } else {
    if (r != EMBD_OK) {
      fprintf(stderr, "%s\n", err.message);
      die("valid numbers failed", (const char *)data, size);
    }
    if (e.count != 1 || e.dims != count) die("wrong dims", (const char *)data, size);
    for (size_t i = 0; i < count; i++)
      if (memcmp(&e.values[i], &want[i], 4) != 0) {
        fprintf(stderr, "number %zu: embd %a, strtof %a\n", i, (double)e.values[i], (double)want[i]);
        die("not the float nearest the text", (const char *)data, size);
      }
  }
  embd_openai_free(&e);
  free(body);
  free(want);
  free(tmp);
  return 0;
}
