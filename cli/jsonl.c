/* embd CLI: JSON lines input (see jsonl.h). */
#include "jsonl.h"
#include "lines.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)

static const char *skip_ws(const char *q, const char *le) {
  while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
  return q;
}

/* Validates a JSON number at q (< le); returns its end or NULL. */
static const char *json_number_end(const char *q, const char *le) {
  if (q < le && *q == '-') q++;
  if (q >= le) return NULL;
  if (*q == '0') q++;
  else if (*q >= '1' && *q <= '9') while (q < le && *q >= '0' && *q <= '9') q++;
  else return NULL;
  if (q < le && *q == '.') {
    q++;
    if (q >= le || *q < '0' || *q > '9') return NULL;
    while (q < le && *q >= '0' && *q <= '9') q++;
  }
  if (q < le && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < le && (*q == '+' || *q == '-')) q++;
    if (q >= le || *q < '0' || *q > '9') return NULL;
    while (q < le && *q >= '0' && *q <= '9') q++;
  }
  return q;
}

__attribute__((format(printf, 4, 5))) static int jerr(jsonl_error *e, const char *ls,
                                                      const char *q, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->col = (unsigned long)(q - ls + 1);
  return CLI_EDATA;
}

/* The float32 value of a valid JSON number [q, ne) cannot be infinite, nor can strtof read
 * past ne: no exponent, at most 38 integer digits (< 1e38 < FLT_MAX), and ne ends the
 * number for strtof too. The validating pass then skips strtof. */
static int number_is_plain(const char *q, const char *ne, const char *le) {
  if (ne < le && *ne != ',' && *ne != ']' && *ne != ' ' && *ne != '\t' && *ne != '\r') return 0;
  if (*q == '-') q++;
  const char *d = q;
  while (d < ne && *d >= '0' && *d <= '9') d++;
  if (d - q > 38) return 0;
  for (; d < ne; d++)
    if (*d == 'e' || *d == 'E') return 0;
  return 1;
}

int jsonl_line(const char *ls, const char *le, float **v, size_t *vcap, uint64_t *k_out,
               jsonl_error *e) {
  const char *q = skip_ws(ls, le);
  *k_out = UINT64_MAX;
  if (q >= le) return CLI_OK;
  if (*q != '[') return jerr(e, ls, q, "expected '[' (each line holds one JSON array of numbers)");
  q = skip_ws(q + 1, le);
  uint64_t k = 0;
  if (q < le && *q == ']') {
    q++;
  } else {
    for (;;) {
      q = skip_ws(q, le);
      const char *ne = json_number_end(q, le);
      if (!ne) {
        if (q >= le) return jerr(e, ls, q, "unexpected end of line inside the array");
        if (le - q >= 4 && !memcmp(q, "null", 4)) return jerr(e, ls, q, "null is not a number");
        char shown[8];
        cli_escape(shown, sizeof shown, q, 1);
        return jerr(e, ls, q, "expected a number, found '%s'", shown);
      }
      if (v || !number_is_plain(q, ne, le)) {
        /* strtof stops at ne: the byte there is not part of a number (the line reader's
         * buffer is NUL-terminated after the last line) */
        char *end;
        errno = 0;
        const float f = strtof(q, &end);
        if (end != ne) return jerr(e, ls, q, "malformed number");
        if (isinf(f))
          return jerr(e, ls, q, "%.*s is beyond the float32 range", (int)(ne - q > 40 ? 40 : ne - q), q);
        if (v) {
          if (k == *vcap) {
            const size_t nc = *vcap ? *vcap * 2 : 1024;
            float *nv = nc < SIZE_MAX / 8 ? realloc(*v, nc * sizeof **v) : NULL;
            if (!nv) {
              cli_msg("out of memory (line of %llu values)", (unsigned long long)k);
              return CLI_EINTERNAL;
            }
            *v = nv;
            *vcap = nc;
          }
          (*v)[k] = f;
        }
      }
      k++;
      q = skip_ws(ne, le);
      if (q < le && *q == ',') {
        q++;
        continue;
      }
      if (q < le && *q == ']') {
        q++;
        break;
      }
      return jerr(e, ls, q, q < le ? "expected ',' or ']'" : "unexpected end of line inside the array");
    }
  }
  q = skip_ws(q, le);
  if (q < le) return jerr(e, ls, q, "unexpected text after the array");
  if (k > UINT32_MAX) return jerr(e, ls, ls, "more than 4294967295 values");
  *k_out = k;
  return CLI_OK;
}

int jsonl_pass(cli_in *in, uint32_t want_dims, int ragged, uint64_t max_record,
               jsonl_row_fn emit, void *ctx, uint64_t *rows_out, uint32_t *dims_out,
               jsonl_error *e) {
  memset(e, 0, sizeof *e);
  cli_lines r;
  int rc = cli_lines_init(&r, in, max_record, '[', CHUNK);
  *rows_out = 0;
  *dims_out = 0;
  if (rc) return rc;
  float *v = NULL;
  size_t vcap = 0;
  unsigned long line = 1, first_line = 0;
  uint32_t dims = 0;
  uint64_t rows = 0;
  const char *ls, *le;
  cli_progress pr;
  cli_progress_start(&pr, emit && in->regular ? in->size : 0);
  int n;
  while ((n = cli_lines_next(&r, &ls, &le, &rc)) == 1) {
    uint64_t k;
    if ((rc = jsonl_line(ls, le, emit ? &v : NULL, &vcap, &k, e))) {
      e->line = line;
      break;
    }
    if (k != UINT64_MAX) {
      if (!rows) {
        dims = (uint32_t)k;
        first_line = line;
        if (want_dims && dims != want_dims) {
          e->line = line;
          e->col = 1;
          snprintf(e->msg, sizeof e->msg, "%lu values, --dims is %lu", (unsigned long)dims,
                   (unsigned long)want_dims);
          rc = CLI_EDATA;
          break;
        }
      } else if (k != dims && !ragged) {
        e->line = line;
        e->col = 1;
        snprintf(e->msg, sizeof e->msg,
                 "%llu values, line %lu had %lu (every vector needs the same dims; --ragged "
                 "allows vectors of their own dims)",
                 (unsigned long long)k, first_line, (unsigned long)dims);
        rc = CLI_EDATA;
        break;
      }
      if (emit && (rc = emit(ctx, v, (uint32_t)k, rows, line))) break;
      rows++;
      if (!(rows & 4095)) cli_progress_update(&pr, in->pos);
    }
    line++;
  }
  if (n < 0 && rc == CLI_EDATA) { /* cli_lines_next: a line over the bound */
    e->line = line;
    e->col = 1;
    snprintf(e->msg, sizeof e->msg,
             "the line is longer than %llu bytes (--max-record; raise it with --max-record BYTES)",
             (unsigned long long)max_record);
  }
  cli_progress_end(&pr);
  free(v);
  cli_lines_free(&r);
  *rows_out = rows;
  *dims_out = dims;
  return rc;
}
