/* embd CLI: the line reader (lines.h). */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

int cli_lines_init(cli_lines *r, cli_in *in, uint64_t max, char first, size_t chunk) {
  memset(r, 0, sizeof *r);
  r->in = in;
  r->max = max;
  r->first = first;
  /* a small regular file needs no chunk-sized buffer (it grows if the file does) */
  r->cap = chunk;
  if (in->regular && in->size >= in->pos && in->size - in->pos < chunk)
    r->cap = (size_t)(in->size - in->pos) + 64;
  r->buf = malloc(r->cap + 1);
  if (!r->buf) {
    cli_msg("out of memory");
    return CLI_EINTERNAL;
  }
  r->buf[0] = 0;
  return CLI_OK;
}

void cli_lines_free(cli_lines *r) {
  free(r->buf);
  r->buf = NULL;
}

/* The first byte of [q, e) that is not white space or part of a byte order mark. */
static const char *skip_lead(const char *q, const char *e) {
  for (;;) {
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (e - q >= 3 && !memcmp(q, "\xef\xbb\xbf", 3)) {
      q += 3;
      continue;
    }
    /* a mark cut by the end of what is in: not judged yet */
    if (q < e && (unsigned char)*q == 0xef && (e - q < 2 || (unsigned char)q[1] == 0xbb) && e - q < 3)
      return e;
    return q;
  }
}

int cli_lines_next(cli_lines *r, const char **ls, const char **le, int *rc) {
  for (;;) {
    const char *nl = memchr(r->buf + r->scan, '\n', r->end - r->scan);
    if (nl) {
      *ls = r->buf + r->beg;
      *le = nl;
      r->beg = r->scan = (size_t)(nl - r->buf) + 1;
      if ((uint64_t)(*le - *ls) > r->max) {
        *rc = CLI_EDATA;
        return -1;
      }
      return 1;
    }
    r->scan = r->end;
    if (r->eof) {
      if (r->beg == r->end) return 0;
      *ls = r->buf + r->beg;
      *le = r->buf + r->end;
      r->beg = r->scan = r->end;
      if ((uint64_t)(*le - *ls) > r->max) {
        *rc = CLI_EDATA;
        return -1;
      }
      return 1;
    }
    if (r->first) {
      /* a partial line: judge its first byte now (a 5 GB file of zeros is one "line") */
      const char *q = skip_lead(r->buf + r->beg, r->buf + r->end);
      if (q < r->buf + r->end && *q != r->first) {
        *ls = r->buf + r->beg;
        *le = r->buf + r->end;
        r->beg = r->scan = r->end;
        return 1;
      }
    }
    if ((uint64_t)(r->end - r->beg) > r->max) {
      *ls = r->buf + r->beg;
      *le = r->buf + r->end;
      *rc = CLI_EDATA;
      return -1;
    }
    if (r->beg) {
      memmove(r->buf, r->buf + r->beg, r->end - r->beg);
      r->end -= r->beg;
      r->scan -= r->beg;
      r->beg = 0;
    }
    if (r->end == r->cap) {
      char *nb = r->cap < SIZE_MAX / 4 ? realloc(r->buf, r->cap * 2 + 1) : NULL;
      if (!nb) {
        cli_msg("%s: out of memory (a line longer than %zu bytes)", cli_in_label(r->in), r->cap);
        *rc = CLI_EINTERNAL;
        return -1;
      }
      r->buf = nb;
      r->cap *= 2;
    }
    /* read no further than one byte past the bound: that byte proves it exceeded */
    size_t want = r->cap - r->end;
    if (r->max < SIZE_MAX && want > r->max + 1 - r->end) want = (size_t)(r->max + 1 - r->end);
    size_t got;
    if ((*rc = cli_in_read(r->in, r->buf + r->end, want, &got))) return -1;
    if (got < want) r->eof = 1; /* reads come short only at the end */
    r->end += got;
    r->buf[r->end] = 0;
  }
}
