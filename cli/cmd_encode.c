/* embd encode: vectors (JSON lines, an OpenAI response, .npy, raw float32) -> an EMBD
 * batch, in bounded memory for inputs of any size. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "formats.h"
#include "jsonl.h"
#include "npy.h"

/* ==== encode =========================================================================== */

static const char encode_help[] =
    "Usage: embd encode [options] [INPUT]\n"
    "Vectors -> an EMBD batch (a uint32 LE count, then one EMBD frame per vector).\n"
    "INPUT is a file, or - for stdin (the default).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  write the batch to FILE (default: stdout, never a terminal)\n"
    "  -f, --from FORMAT  the input format:\n"
    "                       jsonl   one JSON array of numbers per line (blank lines skipped)\n"
    "                       openai  an OpenAI /v1/embeddings response (float or base64)\n"
    "                       npy     a .npy array: 2-D (count, dims) or 1-D (one vector);\n"
    "                               '<f4', '>f4', '<f8' or '>f8', C order\n"
    "                       raw     little-endian float32 values back to back (needs --dims)\n"
    "                     Without --from: by extension (.jsonl .ndjson .npy .raw .f32),\n"
    "                     else by content (\\x93NUMPY: npy, '{': openai, '[': jsonl,\n"
    "                     anything else: raw when --dims is given)\n"
    "  -d, --dims N       vectors of N values (required for raw; checked for the others)\n"
    "  -t, --dtype TYPE   the frames' element type: f32 (the default: version-1 frames, as\n"
    "                     the seed codec reads them), f16, bf16, fp8-e4m3, fp8-e5m2, int8,\n"
    "                     uint8, binary, ubinary (version-2 frames, docs/FORMAT.md); each\n"
    "                     value converted from float32 (int8/uint8: integers in range\n"
    "                     only, else an error naming the line or vector and the value;\n"
    "                     binary/ubinary: bit = value > 0, dims a multiple of 8)\n"
    "  -r, --ragged       JSON lines of different lengths: each frame its own dims (by\n"
    "                     default every vector must have the first one's dims)\n"
    "  -z, --compress     zlib-compress each frame's payload (frame flag bit 0)\n"
    "  -l, --level N      zlib level 1..9 (default 6); implies --compress\n"
    "  -c, --payload-crc  add a CRC-32 trailer to each frame (frame flag bit 1)\n"
    "      --max-record BYTES  the longest JSON line, and the largest --from openai\n"
    "                     response, accepted (default 256M; K, M, G suffixes)\n"
    "  -h, --help         show this help\n"
    "\n"
    "JSON numbers are read as the nearest float32 (strtof); a number beyond the float32\n"
    "range, null, NaN or anything else is an error naming its line:column.\n"
    "\n"
    "Memory stays bounded (one line, at most --max-record, or 1 MiB of input at a time)\n"
    "for inputs of any size, except --from openai (one JSON document, read whole, at most\n"
    "--max-record). A line that does not start with '[' fails at its first byte.\n"
    "The count comes first, so:\n"
    "  JSON lines in a regular file are read twice: checked and counted, then encoded;\n"
    "    an error is reported before anything is written.\n"
    "  JSON lines or raw from a pipe go straight to a seekable output (-o FILE, stdout\n"
    "    redirected to a file) behind a placeholder count written at the end; to a pipe,\n"
    "    the vectors are first kept as float32 in an unlinked temporary file in $TMPDIR\n"
    "    (default /tmp; 4 bytes a value), in memory if none can be created.\n"
    "  npy and raw files know their count: read and written in 1 MiB pieces.\n"
    "Output: -o FILE is written to a temporary file .FILE.XXXXXX beside it and renamed\n"
    "over FILE only when the whole batch is written: after an error or SIGINT, SIGTERM\n"
    "or SIGHUP, FILE is as it was (only SIGKILL can leave the temporary file). A device\n"
    "or FIFO as -o is written in place and never removed. A redirected stdout file is\n"
    "cut back to the size it had; to a pipe, what was written before an error stays\n"
    "written (JSON lines from a regular file are checked before anything is written).\n"
    "The input as the output (-o or stdout, same file) is refused (exit 2).\n"
    "\n"
    "Examples:\n"
    "  embd encode vectors.jsonl -o vectors.embd\n"
    "  embd encode --compress --payload-crc data.npy -o data.embd\n"
    "  embd encode --from openai response.json -o response.embd\n"
    "  embd encode --dtype int8 --ragged quantized.jsonl -o quantized.embd\n"
    "  cat vectors.f32 | embd encode --from raw --dims 768 > vectors.embd\n";

typedef enum in_fmt { IN_AUTO, IN_JSONL, IN_OPENAI, IN_NPY, IN_RAW } in_fmt;

static int ends_with(const char *s, const char *suffix) {
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

/* ---- JSON lines, streamed (jsonl.c): one line in memory at a time ------------------------
 * A regular file is read twice (the first pass counts and validates: an error is reported
 * before anything is written; the second encodes), anything else once: rows go straight to
 * a seekable output behind a placeholder count patched at the end, else to a spill file of
 * float32 values (see spill below) that is replayed behind the count. */

/* Where a row came from, for messages: "NAME:LINE: vector N" (JSON lines), "vector N". */
static void row_what(char *what, size_t cap, const char *label, uint64_t index, unsigned long line) {
  if (line)
    snprintf(what, cap, "%s:%lu: vector %llu", label, line, (unsigned long long)index);
  else
    snprintf(what, cap, "vector %llu", (unsigned long long)index);
}

/* The rows' destination: the sink, with the input's name; count, when not UINT64_MAX, the
 * rows the first pass counted (the second must meet it: see row_to_sink). */
typedef struct row_ctx {
  cli_sink *sink;
  const char *label;
  uint64_t count;
} row_ctx;

static const char changed_msg[] = "%s: the file changed while being read: %llu vectors counted "
                                  "in the first pass, %s%llu in the second";

static int row_to_sink(void *ctx, const float *v, uint32_t dims, uint64_t index, unsigned long line) {
  row_ctx *c = ctx;
  if (c->count != UINT64_MAX && index >= c->count) {
    /* more rows than counted: the file grew or changed in between (an input error) */
    cli_msg(changed_msg, c->label, (unsigned long long)c->count, "more than ",
            (unsigned long long)c->count);
    return CLI_EDATA;
  }
  char what[4200];
  row_what(what, sizeof what, c->label, index, line);
  return cli_sink_row(c->sink, v, dims, what);
}

/* The first pass of a regular file with a dtype: each row converted as the sink will
 * convert it, so a value the dtype cannot hold fails before anything is written. */
typedef struct check_ctx {
  const char *label;
  embd_dtype dtype;
  uint8_t *buf;
  size_t cap;
} check_ctx;

static int check_row(void *ctx, const float *v, uint32_t dims, uint64_t index, unsigned long line) {
  check_ctx *c = ctx;
  char what[4200];
  row_what(what, sizeof what, c->label, index, line);
  return cli_row_to_dtype(v, dims, c->dtype, &c->buf, &c->cap, what);
}

/* jsonl_pass, its data errors printed as NAME:LINE:COL: MSG (suffix appended). */
static int jl_pass(cli_in *in, const char *label, uint32_t want_dims, int ragged,
                   uint64_t max_record, jsonl_row_fn emit, void *ctx, uint64_t *rows,
                   uint32_t *dims, const char *suffix) {
  jsonl_error e;
  const int rc = jsonl_pass(in, want_dims, ragged, max_record, emit, ctx, rows, dims, &e);
  if (rc && e.msg[0]) cli_msg("%s:%lu:%lu: %s%s", label, e.line, e.col, e.msg, suffix);
  return rc;
}

/* ---- spill: rows of unknown count for a pipe output, as float32 LE in an unlinked
 * temporary file in $TMPDIR (default /tmp), or in memory when none can be created --------- */
typedef struct spill {
  FILE *f;
  uint8_t *mem;
  size_t len, cap, pos;
  uint64_t bytes;
  uint8_t *conv; /* one row as float32 LE */
  size_t conv_cap;
  int ragged;    /* each row behind its uint32 LE dims (JSON lines of their own dims) */
  const char *label;
  embd_dtype dtype; /* rows checked against it as they come (their line is known here) */
  uint8_t *chk;
  size_t chk_cap;
} spill;

static void spill_open(spill *s) {
  memset(s, 0, sizeof *s);
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  char tmpl[4096];
  if (snprintf(tmpl, sizeof tmpl, "%s/embd-spill-XXXXXX", dir) >= (int)sizeof tmpl) return;
  const int fd = mkstemp(tmpl);
  if (fd < 0) return;
  unlink(tmpl);
  s->f = fdopen(fd, "w+b");
  if (!s->f) close(fd);
}

static int spill_write(spill *s, const void *p, size_t n) {
  if (s->f) {
    if (n && fwrite(p, 1, n, s->f) != n) {
      cli_msg("temporary file: write error: %s", strerror(errno));
      return CLI_EIO;
    }
  } else if (n) {
    if (s->cap - s->len < n) {
      size_t nc = s->cap ? s->cap : CLI_CHUNK;
      while (nc - s->len < n && nc < SIZE_MAX / 2) nc *= 2;
      uint8_t *nm = nc - s->len >= n ? realloc(s->mem, nc) : NULL;
      if (!nm) {
        cli_msg("out of memory (no temporary file could be created: set TMPDIR)");
        return CLI_EINTERNAL;
      }
      s->mem = nm;
      s->cap = nc;
    }
    memcpy(s->mem + s->len, p, n);
    s->len += n;
  }
  s->bytes += n;
  return CLI_OK;
}

static int spill_row(void *ctx, const float *v, uint32_t dims, uint64_t index, unsigned long line) {
  spill *s = ctx;
  int rc;
  if (s->dtype != EMBD_DTYPE_F32) {
    char what[4200];
    row_what(what, sizeof what, s->label, index, line);
    if ((rc = cli_row_to_dtype(v, dims, s->dtype, &s->chk, &s->chk_cap, what))) return rc;
  }
  if (s->ragged) {
    const uint8_t d[4] = {(uint8_t)dims, (uint8_t)(dims >> 8), (uint8_t)(dims >> 16),
                          (uint8_t)(dims >> 24)};
    if ((rc = spill_write(s, d, 4))) return rc;
  }
  const size_t n = (size_t)dims * 4;
  if (s->conv_cap < n + 1) {
    uint8_t *c = realloc(s->conv, n + 1);
    if (!c) {
      cli_msg("out of memory");
      return CLI_EINTERNAL;
    }
    s->conv = c;
    s->conv_cap = n + 1;
  }
  embd_f32_to_le(s->conv, v, dims);
  return spill_write(s, s->conv, n);
}

static int spill_rewind(spill *s) {
  s->pos = 0;
  if (s->f && (fflush(s->f) || fseeko(s->f, 0, SEEK_SET))) {
    cli_msg("temporary file: %s", strerror(errno));
    return CLI_EIO;
  }
  return CLI_OK;
}

static int spill_read(spill *s, void *dst, size_t n) {
  if (s->f) {
    if (fread(dst, 1, n, s->f) != n) {
      cli_msg("temporary file: read error: %s", ferror(s->f) ? strerror(errno) : "short");
      return CLI_EIO;
    }
  } else {
    memcpy(dst, s->mem + s->pos, n);
    s->pos += n;
  }
  return CLI_OK;
}

static void spill_close(spill *s) {
  if (s->f) fclose(s->f);
  free(s->mem);
  free(s->conv);
  free(s->chk);
  memset(s, 0, sizeof *s);
}

/* The batch from the spill: count rows of dims float32 LE values (ragged: each row
 * behind its own uint32 LE dims). */
static int spill_replay(spill *s, cli_sink *sink, cli_out *out, uint64_t count, uint32_t dims,
                        const embd_frame_encode_options *enc) {
  int rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, count, enc);
  if (rc || (rc = spill_rewind(s))) return rc;
  row_ctx rcx = {sink, NULL, UINT64_MAX};
  if (s->ragged) { /* rows one at a time, each of its own size */
    uint8_t *buf = NULL;
    float *f = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; !rc && i < count; i++) {
      uint8_t d[4];
      if ((rc = spill_read(s, d, 4))) break;
      const uint32_t k = cli_rd32le(d);
      if (cap < (size_t)k + 1) {
        uint8_t *nb = realloc(buf, ((size_t)k + 1) * 4);
        float *nf = nb ? realloc(f, ((size_t)k + 1) * sizeof *nf) : NULL;
        if (nb) buf = nb;
        if (nf) f = nf;
        if (!nb || !nf) {
          cli_msg("out of memory");
          rc = CLI_EINTERNAL;
          break;
        }
        cap = (size_t)k + 1;
      }
      if ((rc = spill_read(s, buf, (size_t)k * 4))) break;
      embd_f32_from_le(f, buf, k);
      rc = row_to_sink(&rcx, f, k, i, 0);
    }
    free(buf);
    free(f);
    return rc;
  }
  const size_t row_bytes = (size_t)dims * 4;
  size_t per = row_bytes ? CLI_CHUNK / row_bytes : 1;
  if (per == 0) per = 1;
  uint8_t *buf = malloc(row_bytes * per + 1);
  float *f = malloc((size_t)dims * sizeof *f + 4);
  if (!buf || !f) {
    cli_msg("out of memory");
    rc = CLI_EINTERNAL;
  }
  for (uint64_t i = 0; !rc && i < count;) {
    const size_t k = count - i < per ? (size_t)(count - i) : per;
    if ((rc = spill_read(s, buf, row_bytes * k))) break;
    for (size_t j = 0; j < k && !rc; j++, i++) {
      embd_f32_from_le(f, buf + j * row_bytes, dims);
      rc = row_to_sink(&rcx, f, dims, i, 0);
    }
  }
  free(buf);
  free(f);
  return rc;
}

/* Rewinds a regular-file input to where it started (in->pos 0, the peeked bytes unread):
 * 0, or -1 when it cannot seek. */
static int in_rewind(cli_in *in, off_t start) {
  if (lseek(in->fd, start, SEEK_SET) != start) return -1;
  in->pos = 0;
  in->peek_len = in->peek_pos = 0;
  return 0;
}

static int encode_jsonl(cli_in *in, const char *label, uint32_t want_dims, int ragged,
                        uint64_t max_record, cli_out *out, cli_sink *sink,
                        const embd_frame_encode_options *enc) {
  uint64_t rows;
  uint32_t dims;
  int rc;
  off_t start = -1;
  if (in->regular && in->pos == 0) {
    const off_t at = lseek(in->fd, 0, SEEK_CUR), peeked = (off_t)(in->peek_len - in->peek_pos);
    if (at >= peeked) start = at - peeked;
  }
  const embd_dtype dt = (embd_dtype)enc->dtype;
  if (start >= 0) { /* two passes: validate and count, then encode */
    /* float32 needs no values to validate (the fast pass); a dtype converts each row */
    check_ctx ck = {label, dt, NULL, 0};
    rc = jl_pass(in, label, want_dims, ragged, max_record, dt != EMBD_DTYPE_F32 ? check_row : NULL,
                 &ck, &rows, &dims, "");
    free(ck.buf);
    if (rc) return rc;
    if (in_rewind(in, start)) {
      cli_msg("%s: cannot seek back to the start: %s", label, strerror(errno));
      return CLI_EIO;
    }
    if ((rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, rows, enc))) return rc;
    uint64_t again;
    row_ctx cs = {sink, label, rows};
    rc = jl_pass(in, label, want_dims, ragged, max_record, row_to_sink, &cs, &again, &dims,
                 " (the first pass found it valid: the file changed while being read)");
    if (!rc && again != rows) {
      cli_msg(changed_msg, label, (unsigned long long)rows, "", (unsigned long long)again);
      rc = CLI_EDATA;
    }
    return rc;
  }
  if (cli_out_seekable(out)) { /* one pass, the count patched at the end */
    if ((rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, UINT64_MAX, enc))) return rc;
    row_ctx one = {sink, label, UINT64_MAX};
    return jl_pass(in, label, want_dims, ragged, max_record, row_to_sink, &one, &rows, &dims, "");
  }
  spill s;
  spill_open(&s);
  s.ragged = ragged;
  s.label = label;
  s.dtype = dt;
  rc = jl_pass(in, label, want_dims, ragged, max_record, spill_row, &s, &rows, &dims, "");
  if (!rc) rc = spill_replay(&s, sink, out, rows, dims, enc);
  spill_close(&s);
  return rc;
}

/* Raw float32 LE from a pipe (the count unknown until its end): rows straight to a
 * seekable output behind a placeholder count, else spilled and replayed. */
static int encode_raw_pipe(cli_in *in, const char *label, uint32_t dims, cli_out *out,
                           cli_sink *sink, const embd_frame_encode_options *enc) {
  const size_t row = (size_t)dims * 4;
  size_t per = CLI_CHUNK / row;
  if (per == 0) per = 1;
  const int direct = cli_out_seekable(out);
  spill s;
  int rc = CLI_OK;
  row_ctx rcx = {sink, label, UINT64_MAX};
  if (direct) rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, UINT64_MAX, enc);
  else spill_open(&s);
  uint8_t *buf = malloc(row * per + 1);
  float *f = malloc(row + 4);
  if (!rc && (!buf || !f)) {
    cli_msg("out of memory");
    rc = CLI_EINTERNAL;
  }
  uint64_t len = 0, count = 0;
  while (!rc) {
    size_t got;
    if ((rc = cli_in_read(in, buf, row * per, &got))) break;
    len += got;
    if (direct) {
      for (size_t j = 0; j + row <= got && !rc; j += row, count++) {
        embd_f32_from_le(f, buf + j, dims);
        rc = row_to_sink(&rcx, f, dims, count, 0);
      }
    } else {
      rc = spill_write(&s, buf, got);
    }
    if (got < row * per) break; /* the end */
  }
  if (!rc && len % row) {
    cli_msg("%s: %llu bytes is not a whole number of %lu-dims float32 vectors (%zu bytes each; "
            "%llu bytes left over)", label, (unsigned long long)len, (unsigned long)dims, row,
            (unsigned long long)(len % row));
    rc = CLI_EDATA;
  }
  if (!rc && !direct) rc = spill_replay(&s, sink, out, len / row, dims, enc);
  if (!direct) spill_close(&s);
  free(buf);
  free(f);
  return rc;
}

/* Streams rows of `elsize`-byte elements from `in` (npy or raw float32 LE). */
static int write_rows_stream(cli_sink *s, cli_in *in, uint64_t count, uint32_t dims,
                             npy_dtype dt, size_t elsize, uint64_t data_start) {
  const size_t row_bytes = (size_t)dims * elsize;
  size_t per = row_bytes ? CLI_CHUNK / row_bytes : 1;
  if (per == 0) per = 1;
  if (row_bytes && per > count) per = count ? (size_t)count : 1;
  uint8_t *buf = malloc(row_bytes * per + 1);
  float *f = malloc((size_t)dims * sizeof *f + 4);
  int rc = CLI_OK;
  if (!buf || !f) {
    cli_msg("out of memory");
    rc = CLI_EINTERNAL;
    goto out;
  }
  cli_progress pr;
  cli_progress_start(&pr, in->regular ? in->size : 0);
  char what[64];
  for (uint64_t i = 0; i < count;) {
    const size_t k = count - i < per ? (size_t)(count - i) : per;
    size_t got;
    if ((rc = cli_in_read(in, buf, row_bytes * k, &got))) goto out;
    if (got < row_bytes * k) {
      const uint64_t bad = i + got / (row_bytes ? row_bytes : 1);
      cli_msg("%s: truncated: vector %llu needs bytes %llu..%llu, the input ends at byte %llu",
              cli_in_label(in), (unsigned long long)bad,
              (unsigned long long)(data_start + bad * row_bytes),
              (unsigned long long)(data_start + (bad + 1) * row_bytes - 1),
              (unsigned long long)(data_start + i * row_bytes + got));
      rc = CLI_EDATA;
      goto out;
    }
    for (size_t j = 0; j < k; j++, i++) {
      const size_t bad = npy_convert(f, buf + j * row_bytes, dims, dt);
      if (bad != dims) {
        cli_msg("%s: vector %llu, value %zu: a double beyond the float32 range", cli_in_label(in),
                (unsigned long long)i, bad);
        rc = CLI_EDATA;
        goto out;
      }
      snprintf(what, sizeof what, "vector %llu", (unsigned long long)i);
      if ((rc = cli_sink_row(s, f, dims, what))) goto out;
    }
    cli_progress_update(&pr, in->pos);
  }
  cli_progress_end(&pr);
  {
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(in, 1, &p, &got))) goto out;
    if (got) {
      cli_msg("%s: unexpected bytes after the %llu vectors (at byte %llu)", cli_in_label(in),
              (unsigned long long)count, (unsigned long long)in->pos);
      rc = CLI_EDATA;
    }
  }
out:
  free(buf);
  free(f);
  return rc;
}

int cmd_encode(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                       {"from", required_argument, 0, 'f'},
                                       {"dims", required_argument, 0, 'd'},
                                       CLI_FRAME_OPTIONS,
                                       {"max-record", required_argument, 0, 'R'},
                                       {"dtype", required_argument, 0, 't'},
                                       {"ragged", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *output = NULL;
  uint64_t max_record = CLI_DEFAULT_MAX_RECORD;
  in_fmt from = IN_AUTO;
  uint32_t want_dims = 0;
  embd_frame_encode_options enc = {.flags = 0, .level = 0};
  embd_dtype dtype = EMBD_DTYPE_F32;
  int ragged = 0;
  int c;
  while ((c = getopt_long(argc, argv, "o:f:d:zl:ct:rh", opts, NULL)) != -1) {
    switch (c) {
      case 'o': output = optarg; break;
      case 'f':
        if (!strcmp(optarg, "jsonl") || !strcmp(optarg, "json")) from = IN_JSONL;
        else if (!strcmp(optarg, "openai")) from = IN_OPENAI;
        else if (!strcmp(optarg, "npy")) from = IN_NPY;
        else if (!strcmp(optarg, "raw")) from = IN_RAW;
        else return cli_usage("--from: '%s' is not one of jsonl, openai, npy, raw", cli_esc(optarg));
        break;
      case 'd':
        if (cli_parse_dims(optarg, "--dims", &want_dims)) return CLI_EUSAGE;
        break;
      case 'z':
      case 'l':
      case 'c':
        if (cli_frame_opt(c, optarg, &enc) != 1) return CLI_EUSAGE;
        break;
      case 'R':
        if (cli_parse_max_record(optarg, &max_record)) return CLI_EUSAGE;
        break;
      case 't':
        if (cli_parse_dtype(optarg, "--dtype", &dtype)) return CLI_EUSAGE;
        break;
      case 'r': ragged = 1; break;
      case 'h': fputs(encode_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (argc - optind > 1) return cli_usage("one INPUT at most (got %d)", argc - optind);
  const char *path = optind < argc ? argv[optind] : "-";
  if (from == IN_AUTO) {
    if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson")) from = IN_JSONL;
    else if (ends_with(path, ".npy")) from = IN_NPY;
    else if (ends_with(path, ".raw") || ends_with(path, ".f32")) from = IN_RAW;
  }
  if (from == IN_RAW && !want_dims) return cli_usage("--from raw needs --dims N");
  if (ragged && want_dims) return cli_usage("--ragged and --dims exclude each other");
  if (ragged && from != IN_AUTO && from != IN_JSONL)
    return cli_usage("--ragged is for JSON lines (npy, raw and openai vectors have one dims)");
  enc.dtype = (uint64_t)dtype;

  cli_in in;
  int rc = cli_in_open(&in, path);
  if (rc) return rc;
  if ((rc = cli_out_check_input(output, &in))) goto close_in;
  const char *label = cli_in_label(&in);
  if (from == IN_AUTO) {
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(&in, 4096, &p, &got))) goto close_in;
    size_t i = 0;
    while (i < got && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) i++;
    if (got >= 6 && !memcmp(p, "\x93NUMPY", 6)) from = IN_NPY;
    else if (i < got && p[i] == '{') from = IN_OPENAI;
    else if (i < got && p[i] == '[') from = IN_JSONL;
    else if (want_dims) from = IN_RAW;
    else {
      cli_msg("%s: cannot tell the input format (%s): use --from jsonl|openai|npy|raw", label,
              got == 0 ? "the input is empty" : "not .npy, not JSON");
      rc = got == 0 ? CLI_EDATA : CLI_EUSAGE;
      goto close_in;
    }
  }

  cli_out out;
  if ((rc = cli_out_open(&out, output, 1))) goto close_in;
  cli_sink sink;
  memset(&sink, 0, sizeof sink);
  char *data = NULL;
  embd_openai_embeddings oa;
  embd_openai_init(&oa);

  if (from == IN_JSONL) {
    if ((rc = encode_jsonl(&in, label, want_dims, ragged, max_record, &out, &sink, &enc))) goto done;
  } else if (ragged && from != IN_JSONL) {
    cli_msg("%s: --ragged is for JSON lines; the input is %s", label,
            from == IN_NPY ? "a .npy array" : from == IN_OPENAI ? "an OpenAI response" : "raw float32");
    rc = CLI_EUSAGE;
    goto done;
  } else if (from == IN_RAW && !in.regular) {
    if ((rc = encode_raw_pipe(&in, label, want_dims, &out, &sink, &enc))) goto done;
  } else if (from == IN_OPENAI) { /* a JSON document: read whole */
    size_t len;
    if ((rc = cli_in_read_json_object(&in, &data, &len, max_record))) goto done;
    embd_error err;
    const embd_openai_options oo = {.expected_count = 0, .max_dims = 0, .padding = 0};
    const embd_result r = embd_openai_decode(&oa, data, len, &oo, &err);
    if (r) {
      cli_msg("%s: %s", label, r == EMBD_ERR_OPENAI_UNAVAILABLE ? embd_strerror(r) : err.message);
      rc = cli_exit_for(r);
      goto done;
    }
    if (oa.dims > UINT32_MAX) {
      cli_msg("%s: %zu dims: too many for an EMBD frame", label, oa.dims);
      rc = CLI_EDATA;
      goto done;
    }
    const uint64_t count = oa.count;
    const uint32_t dims = (uint32_t)oa.dims;
    if (want_dims && count && dims != want_dims) {
      cli_msg("%s: the vectors have %lu dims, --dims is %lu", label, (unsigned long)dims,
              (unsigned long)want_dims);
      rc = CLI_EDATA;
      goto done;
    }
    if ((rc = cli_sink_begin(&sink, CLI_FMT_EMBD, &out, count, &enc))) goto done;
    char what[64];
    for (uint64_t i = 0; i < count; i++) {
      snprintf(what, sizeof what, "data item %llu", (unsigned long long)i);
      if ((rc = cli_sink_row(&sink, oa.values + i * dims, dims, what))) goto done;
    }
  } else if (from == IN_NPY) {
    const uint8_t *p;
    size_t got, need = 12;
    npy_info ni;
    char err[160];
    int pr;
    for (;;) {
      if ((rc = cli_in_peek(&in, need, &p, &got))) goto done;
      const size_t asked = need;
      pr = npy_header_parse(p, got, &ni, &need, err, sizeof err);
      if (pr <= 0) break;
      if (need > sizeof in.peek || got < asked || need <= got) {
        if (need > sizeof in.peek) snprintf(err, sizeof err, "header longer than 4096 bytes");
        else snprintf(err, sizeof err, "truncated header: %zu of its %zu bytes", got, need);
        pr = -1;
        break;
      }
    }
    if (pr < 0) {
      cli_msg("%s: %s", label, err);
      rc = CLI_EDATA;
      goto done;
    }
    {
      size_t skip;
      uint8_t tmp[4096];
      if ((rc = cli_in_read(&in, tmp, ni.header_len, &skip))) goto done;
    }
    if (want_dims && ni.rows && ni.cols != want_dims) {
      cli_msg("%s: the array has %llu dims, --dims is %lu", label, (unsigned long long)ni.cols,
              (unsigned long)want_dims);
      rc = CLI_EDATA;
      goto done;
    }
    if ((rc = cli_sink_begin(&sink, CLI_FMT_EMBD, &out, ni.rows, &enc))) goto done;
    rc = write_rows_stream(&sink, &in, ni.rows, (uint32_t)ni.cols, ni.dtype, ni.elsize, ni.header_len);
    if (rc) goto done;
  } else { /* raw, regular file: count from its size */
    const uint64_t row = (uint64_t)want_dims * 4;
    if (in.size % row) {
      cli_msg("%s: %llu bytes is not a whole number of %lu-dims float32 vectors (%llu bytes each; "
              "%llu bytes left over)", label, (unsigned long long)in.size, (unsigned long)want_dims,
              (unsigned long long)row, (unsigned long long)(in.size % row));
      rc = CLI_EDATA;
      goto done;
    }
    if ((rc = cli_sink_begin(&sink, CLI_FMT_EMBD, &out, in.size / row, &enc))) goto done;
    if ((rc = write_rows_stream(&sink, &in, in.size / row, want_dims, NPY_F4LE, 4, 0))) goto done;
  }
  rc = cli_sink_finish(&sink);
done:
  {
    const int wrc = cli_out_close(&out, rc == CLI_OK);
    if (!rc) rc = wrc;
  }
  cli_sink_free(&sink);
  embd_openai_free(&oa);
  free(data);
close_in:
  cli_in_close(&in);
  return rc;
}
