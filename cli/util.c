/* embd CLI: messages, input/output, progress bar, float formatting, vector sinks. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "npy.h"

const char *cli_cmd = NULL;

static void vmsg(const char *fmt, va_list ap) {
  fflush(stdout);
  if (cli_cmd) fprintf(stderr, "embd %s: ", cli_cmd);
  else fputs("embd: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_msg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(fmt, ap);
  va_end(ap);
}

int cli_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(fmt, ap);
  va_end(ap);
  if (cli_cmd) fprintf(stderr, "Try 'embd %s --help'.\n", cli_cmd);
  else fputs("Try 'embd --help'.\n", stderr);
  return CLI_EUSAGE;
}

int cli_exit_for(embd_result r) {
  if (r == EMBD_ERR_OUT_OF_MEMORY || r == EMBD_ERR_INVALID_ARGUMENT ||
      r == EMBD_ERR_FRAME_DEFLATE || r == EMBD_ERR_OPENAI_UNAVAILABLE ||
      r == EMBD_ERR_UNAVAILABLE)
    return CLI_EINTERNAL;
  return CLI_EDATA;
}

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out) {
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  char *e;
  const unsigned long long v = strtoull(s, &e, 10);
  if (errno || *e || v > max) return -1;
  *out = v;
  return 0;
}

/* ---- input ----------------------------------------------------------------------------- */

const char *cli_in_label(const cli_in *in) {
  return strcmp(in->name, "-") ? in->name : "<stdin>";
}

int cli_in_open(cli_in *in, const char *path) {
  memset(in, 0, sizeof *in);
  in->name = path;
  if (!strcmp(path, "-")) {
    in->fd = 0;
  } else {
    in->fd = open(path, O_RDONLY);
    if (in->fd < 0) {
      cli_msg("%s: cannot open: %s", path, strerror(errno));
      return CLI_EIO;
    }
  }
  struct stat st;
  if (fstat(in->fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      cli_msg("%s: is a directory", path);
      cli_in_close(in);
      return CLI_EIO;
    }
    if (S_ISREG(st.st_mode)) {
      in->regular = 1;
      in->size = (uint64_t)st.st_size;
    }
  }
  return CLI_OK;
}

void cli_in_close(cli_in *in) {
  if (in->fd > 0) close(in->fd);
  in->fd = -1;
}

static int raw_read(cli_in *in, void *dst, size_t n, size_t *got, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    const size_t want = n - done > (1u << 30) ? (1u << 30) : n - done;
    const ssize_t r = read(in->fd, (char *)dst + done, want);
    if (r < 0) {
      if (errno == EINTR) continue;
      cli_msg("%s: read error at byte %llu: %s", cli_in_label(in),
              (unsigned long long)(at + done), strerror(errno));
      return CLI_EIO;
    }
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return CLI_OK;
}

int cli_in_peek(cli_in *in, size_t n, const uint8_t **p, size_t *got) {
  if (n > sizeof in->peek) n = sizeof in->peek;
  if (in->peek_pos) { /* compact */
    memmove(in->peek, in->peek + in->peek_pos, in->peek_len - in->peek_pos);
    in->peek_len -= in->peek_pos;
    in->peek_pos = 0;
  }
  if (in->peek_len < n) {
    size_t g;
    const int rc = raw_read(in, in->peek + in->peek_len, n - in->peek_len, &g,
                            in->pos + in->peek_len);
    if (rc) return rc;
    in->peek_len += g;
  }
  *p = in->peek;
  *got = in->peek_len < n ? in->peek_len : n;
  return CLI_OK;
}

int cli_in_read(cli_in *in, void *dst, size_t n, size_t *got) {
  size_t done = 0;
  if (in->peek_pos < in->peek_len && n) {
    size_t k = in->peek_len - in->peek_pos;
    if (k > n) k = n;
    memcpy(dst, in->peek + in->peek_pos, k);
    in->peek_pos += k;
    done = k;
    if (in->peek_pos == in->peek_len) in->peek_pos = in->peek_len = 0;
  }
  size_t g = 0;
  const int rc = raw_read(in, (char *)dst + done, n - done, &g, in->pos + done);
  if (rc) return rc;
  done += g;
  in->pos += done;
  *got = done;
  return CLI_OK;
}

int cli_in_read_all(cli_in *in, char **data, size_t *len) {
  size_t cap = in->regular && in->size >= in->pos && in->size - in->pos < SIZE_MAX / 2 ? (size_t)(in->size - in->pos) + 1 : 1 << 16;
  if (cap < 4096) cap = 4096;
  size_t n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    cli_msg("%s: out of memory reading the input", cli_in_label(in));
    return CLI_EINTERNAL;
  }
  for (;;) {
    if (cap - n < 2) {
      char *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!nb) {
        free(buf);
        cli_msg("%s: out of memory reading the input", cli_in_label(in));
        return CLI_EINTERNAL;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got;
    const int rc = cli_in_read(in, buf + n, cap - 1 - n, &got);
    if (rc) {
      free(buf);
      return rc;
    }
    n += got;
    if (got < cap - 1 - (n - got)) break; /* short read: end of input */
  }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return CLI_OK;
}

/* ---- output ---------------------------------------------------------------------------- */

const char *cli_out_label(const cli_out *o) {
  return o->name && strcmp(o->name, "-") ? o->name : "<stdout>";
}

int cli_out_open(cli_out *o, const char *path, int binary) {
  memset(o, 0, sizeof *o);
  o->name = path ? path : "-";
  if (!strcmp(o->name, "-")) {
    if (binary && isatty(1)) {
      cli_msg("refusing to write binary data to a terminal: use -o FILE or redirect stdout");
      return CLI_EUSAGE;
    }
    o->f = stdout;
  } else {
    o->f = fopen(o->name, "wb");
    if (!o->f) {
      cli_msg("%s: cannot open for writing: %s", o->name, strerror(errno));
      return CLI_EIO;
    }
    o->created = 1;
  }
  setvbuf(o->f, NULL, _IOFBF, 1 << 20);
  return CLI_OK;
}

int cli_out_write(cli_out *o, const void *p, size_t n) {
  if (o->failed) return CLI_EIO;
  if (n && fwrite(p, 1, n, o->f) != n) {
    o->failed = 1;
    cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
    return CLI_EIO;
  }
  return CLI_OK;
}

int cli_out_seekable(const cli_out *o) {
  struct stat st;
  const int fl = fcntl(fileno(o->f), F_GETFL);
  return fstat(fileno(o->f), &st) == 0 && S_ISREG(st.st_mode) && fl >= 0 && !(fl & O_APPEND) &&
         ftello(o->f) >= 0;
}

int cli_out_close(cli_out *o, int ok) {
  if (!o->f) return CLI_OK;
  int rc = CLI_OK;
  if (fflush(o->f) != 0 || ferror(o->f)) {
    if (!o->failed) cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
    o->failed = 1;
    rc = CLI_EIO;
  }
  if (o->f != stdout) {
    if (fclose(o->f) != 0 && !o->failed) {
      cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
      o->failed = 1;
      rc = CLI_EIO;
    }
    if ((!ok || rc) && o->created) remove(o->name);
  } else if ((!ok || rc) && o->trunc_on_fail) {
    if (ftruncate(fileno(o->f), (off_t)o->trunc_at)) { /* best effort: the exit code tells */ }
  }
  o->f = NULL;
  return rc;
}

/* ---- progress ---------------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, uint64_t total) {
  memset(p, 0, sizeof *p);
  p->total = total;
  p->tty = isatty(2) && !getenv("EMBD_NO_PROGRESS");
  p->start = now_s();
}

void cli_progress_update(cli_progress *p, uint64_t done) {
  if (!p->tty) return;
  const double t = now_s();
  if (t - p->start < 1.0 || t - p->last < 0.1) return;
  p->last = t;
  p->shown = 1;
  const double mib = (double)done / 1048576.0, rate = mib / (t - p->start);
  if (p->total) {
    const double f = done >= p->total ? 1.0 : (double)done / (double)p->total;
    char bar[31];
    const int fill = (int)(f * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '-';
    bar[30] = 0;
    fprintf(stderr, "\rembd %s [%s] %5.1f%% %.1f/%.1f MiB %.0f MiB/s ", cli_cmd, bar, f * 100,
            mib, (double)p->total / 1048576.0, rate);
  } else {
    fprintf(stderr, "\rembd %s: %.1f MiB %.0f MiB/s ", cli_cmd, mib, rate);
  }
}

void cli_progress_end(cli_progress *p) {
  if (p->shown) fputs("\r\033[K", stderr);
  p->shown = 0;
}

/* ---- floats ---------------------------------------------------------------------------- */
/* A float32 prints in at most 15 bytes with "%.9g": GCC cannot know that. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

int cli_fmt_f32(char *buf, float v) {
  /* round-trip holds for every precision from the shortest one up to 9: binary search */
  int lo = 1, hi = 9, n = 0;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    snprintf(buf, 32, "%.*g", mid, (double)v);
    const float b = strtof(buf, NULL);
    if (memcmp(&b, &v, sizeof v) == 0) hi = mid;
    else lo = mid + 1;
  }
  n = snprintf(buf, 32, "%.*g", lo, (double)v);
  if (memchr(buf, 'e', (size_t)n)) { /* "1e+02": a longer precision may be shorter text ("100") */
    char alt[32];
    for (int p = lo + 1; p <= 9; p++) {
      const int m = snprintf(alt, sizeof alt, "%.*g", p, (double)v);
      if (m < n) {
        memcpy(buf, alt, (size_t)m + 1);
        n = m;
      }
    }
  }
  return n;
}

/* ---- sinks ---------------------------------------------------------------------------- */

int cli_parse_fmt(const char *s, cli_fmt *out) {
  if (!strcmp(s, "jsonl") || !strcmp(s, "json")) *out = CLI_FMT_JSONL;
  else if (!strcmp(s, "npy")) *out = CLI_FMT_NPY;
  else if (!strcmp(s, "raw")) *out = CLI_FMT_RAW;
  else if (!strcmp(s, "embd")) *out = CLI_FMT_EMBD;
  else return -1;
  return 0;
}

static int grow(uint8_t **p, size_t *cap, size_t need) {
  if (*cap >= need) return 0;
  uint8_t *n = realloc(*p, need);
  if (!n) return -1;
  *p = n;
  *cap = need;
  return 0;
}

int cli_sink_begin(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                   const embd_frame_encode_options *enc) {
  memset(s, 0, sizeof *s);
  s->fmt = fmt;
  s->out = out;
  s->count = count;
  if (enc) s->enc = *enc;
  if (fmt == CLI_FMT_EMBD) {
    if (count > UINT32_MAX && count != UINT64_MAX) {
      cli_msg("%llu vectors: an EMBD batch holds at most 4294967295",
              (unsigned long long)count);
      return CLI_EDATA;
    }
    if (count == UINT64_MAX) { /* a placeholder, patched by cli_sink_finish */
      if (!cli_out_seekable(out)) {
        cli_msg("%s: an EMBD batch of unknown count needs a seekable output file",
                cli_out_label(out));
        return CLI_EINTERNAL;
      }
      s->count_at = (int64_t)ftello(out->f);
      if (!out->created) {
        out->trunc_on_fail = 1;
        out->trunc_at = s->count_at;
      }
      count = 0;
    }
    const uint8_t c[4] = {(uint8_t)count, (uint8_t)(count >> 8), (uint8_t)(count >> 16),
                          (uint8_t)(count >> 24)};
    return cli_out_write(out, c, 4);
  }
  if (fmt == CLI_FMT_NPY && count == UINT64_MAX && !cli_out_seekable(out)) {
    cli_msg("%s: --to npy with an unknown vector count (--stream) needs a seekable output file (-o FILE)",
            cli_out_label(out));
    return CLI_EUSAGE;
  }
  return CLI_OK;
}

static int sink_npy_header(cli_sink *s, uint64_t rows) {
  uint8_t h[NPY_WRITE_HEADER_SIZE];
  npy_header_write(h, rows, s->have_dims ? s->dims : 0);
  return cli_out_write(s->out, h, sizeof h);
}

int cli_sink_row(cli_sink *s, const float *v, uint32_t dims, const char *what) {
  int rc;
  if (!s->have_dims) {
    s->dims = dims;
    s->have_dims = 1;
    if (s->fmt == CLI_FMT_NPY && (rc = sink_npy_header(s, s->count == UINT64_MAX ? 0 : s->count)))
      return rc;
  } else if (dims != s->dims && s->fmt != CLI_FMT_JSONL && s->fmt != CLI_FMT_EMBD) {
    cli_msg("%s has %lu dims, the first vector had %lu: %s output needs one dims for all", what,
            (unsigned long)dims, (unsigned long)s->dims, s->fmt == CLI_FMT_NPY ? "npy" : "raw");
    return CLI_EDATA;
  }
  s->rows++;
  switch (s->fmt) {
    case CLI_FMT_NPY:
    case CLI_FMT_RAW:
      if (grow(&s->scratch, &s->scratch_cap, (size_t)dims * 4 + 1)) goto oom;
      embd_f32_to_le(s->scratch, v, dims);
      return cli_out_write(s->out, s->scratch, (size_t)dims * 4);
    case CLI_FMT_EMBD: {
      size_t cap, n;
      if (s->rows > UINT32_MAX) {
        cli_msg("%s: more than 4294967295 vectors: an EMBD batch holds at most 4294967295", what);
        return CLI_EDATA;
      }
      embd_result r = embd_frame_size(dims, s->enc.flags, &cap);
      if (r) {
        cli_msg("%s: %s", what, embd_strerror(r));
        return cli_exit_for(r);
      }
      if (grow(&s->scratch, &s->scratch_cap, cap)) goto oom;
      r = embd_frame_encode_f32(v, dims, &s->enc, s->scratch, cap, &n);
      if (r) {
        cli_msg("%s: encoding the frame: %s", what, embd_strerror(r));
        return cli_exit_for(r);
      }
      return cli_out_write(s->out, s->scratch, n);
    }
    case CLI_FMT_JSONL: {
      if (grow((uint8_t **)&s->line, &s->line_cap, (size_t)dims * 18 + 4)) goto oom;
      char *p = s->line;
      *p++ = '[';
      for (uint32_t i = 0; i < dims; i++) {
        if (i) *p++ = ',';
        if (isfinite(v[i])) {
          p += cli_fmt_f32(p, v[i]);
        } else {
          memcpy(p, "null", 4);
          p += 4;
          if (!s->nonfinite++)
            cli_msg("warning: %s holds NaN or infinity (not JSON numbers): written as null; "
                    "use --to raw or --to npy to keep them", what);
        }
      }
      *p++ = ']';
      *p++ = '\n';
      return cli_out_write(s->out, s->line, (size_t)(p - s->line));
    }
  }
  return CLI_OK;
oom:
  cli_msg("out of memory");
  return CLI_EINTERNAL;
}

int cli_sink_finish(cli_sink *s) {
  if (s->fmt == CLI_FMT_NPY) {
    if (!s->have_dims) {
      int rc = sink_npy_header(s, s->rows);
      if (rc) return rc;
    } else if (s->count == UINT64_MAX) { /* unknown count: rewrite the header */
      if (fflush(s->out->f) || fseek(s->out->f, 0, SEEK_SET)) {
        cli_msg("%s: cannot rewrite the .npy header: %s", cli_out_label(s->out), strerror(errno));
        return CLI_EIO;
      }
      int rc = sink_npy_header(s, s->rows);
      if (rc) return rc;
      fseek(s->out->f, 0, SEEK_END);
    }
  }
  if (s->fmt == CLI_FMT_EMBD && s->count == UINT64_MAX) { /* patch the count */
    const uint8_t c[4] = {(uint8_t)s->rows, (uint8_t)(s->rows >> 8), (uint8_t)(s->rows >> 16),
                          (uint8_t)(s->rows >> 24)};
    if (fflush(s->out->f) || fseeko(s->out->f, (off_t)s->count_at, SEEK_SET)) {
      cli_msg("%s: cannot write the batch count: %s", cli_out_label(s->out), strerror(errno));
      return CLI_EIO;
    }
    int rc = cli_out_write(s->out, c, 4);
    if (rc) return rc;
    if (fflush(s->out->f) || fseeko(s->out->f, 0, SEEK_END)) {
      cli_msg("%s: cannot write the batch count: %s", cli_out_label(s->out), strerror(errno));
      return CLI_EIO;
    }
  }
  if (s->count != UINT64_MAX && s->rows != s->count) {
    cli_msg("internal error: %llu vectors announced, %llu written", (unsigned long long)s->count,
            (unsigned long long)s->rows);
    return CLI_EINTERNAL;
  }
  if (s->nonfinite > 1)
    cli_msg("warning: %llu NaN/infinite values written as null in all",
            (unsigned long long)s->nonfinite);
  return CLI_OK;
}

void cli_sink_free(cli_sink *s) {
  free(s->scratch);
  free(s->line);
  s->scratch = NULL;
  s->line = NULL;
}
