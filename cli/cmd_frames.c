/* embd encode / decode / inspect / verify: EMBD batch files and frame streams. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "jsonl.h"
#include "npy.h"

#define CHUNK (1u << 20)

static uint32_t rd32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int parse_dims_opt(const char *s, const char *opt, uint32_t *out) {
  uint64_t v;
  if (cli_parse_u64(s, UINT32_MAX, &v) || v == 0)
    return cli_usage("%s: '%s' is not a number in 1..4294967295", opt, cli_esc(s));
  *out = (uint32_t)v;
  return 0;
}

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

static int row_to_sink(void *ctx, const float *v, uint32_t dims, uint64_t index) {
  char what[64];
  snprintf(what, sizeof what, "vector %llu", (unsigned long long)index);
  return cli_sink_row(ctx, v, dims, what);
}

/* jsonl_pass, its data errors printed as NAME:LINE:COL: MSG (suffix appended). */
static int jl_pass(cli_in *in, const char *label, uint32_t want_dims, uint64_t max_record,
                   jsonl_row_fn emit, void *ctx, uint64_t *rows, uint32_t *dims,
                   const char *suffix) {
  jsonl_error e;
  const int rc = jsonl_pass(in, want_dims, max_record, emit, ctx, rows, dims, &e);
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
      size_t nc = s->cap ? s->cap : CHUNK;
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

static int spill_row(void *ctx, const float *v, uint32_t dims, uint64_t index) {
  spill *s = ctx;
  (void)index;
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
  memset(s, 0, sizeof *s);
}

/* The batch from the spill: count rows of dims float32 LE values. */
static int spill_replay(spill *s, cli_sink *sink, cli_out *out, uint64_t count, uint32_t dims,
                        const embd_frame_encode_options *enc) {
  int rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, count, enc);
  if (rc || (rc = spill_rewind(s))) return rc;
  const size_t row_bytes = (size_t)dims * 4;
  size_t per = row_bytes ? CHUNK / row_bytes : 1;
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
      rc = row_to_sink(sink, f, dims, i);
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

/* The second pass over a regular file must meet what the first counted: more rows mean
 * the file grew or changed in between (an input error, not an internal one). */
typedef struct counted_sink {
  cli_sink *sink;
  const char *label;
  uint64_t count;
} counted_sink;

static const char changed_msg[] = "%s: the file changed while being read: %llu vectors counted "
                                  "in the first pass, %s%llu in the second";

static int row_to_counted(void *ctx, const float *v, uint32_t dims, uint64_t index) {
  counted_sink *c = ctx;
  if (index >= c->count) {
    cli_msg(changed_msg, c->label, (unsigned long long)c->count, "more than ",
            (unsigned long long)c->count);
    return CLI_EDATA;
  }
  return row_to_sink(c->sink, v, dims, index);
}

static int encode_jsonl(cli_in *in, const char *label, uint32_t want_dims, uint64_t max_record,
                        cli_out *out, cli_sink *sink, const embd_frame_encode_options *enc) {
  uint64_t rows;
  uint32_t dims;
  int rc;
  off_t start = -1;
  if (in->regular && in->pos == 0) {
    const off_t at = lseek(in->fd, 0, SEEK_CUR), peeked = (off_t)(in->peek_len - in->peek_pos);
    if (at >= peeked) start = at - peeked;
  }
  if (start >= 0) { /* two passes: validate and count, then encode */
    if ((rc = jl_pass(in, label, want_dims, max_record, NULL, NULL, &rows, &dims, ""))) return rc;
    if (in_rewind(in, start)) {
      cli_msg("%s: cannot seek back to the start: %s", label, strerror(errno));
      return CLI_EIO;
    }
    if ((rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, rows, enc))) return rc;
    uint64_t again;
    counted_sink cs = {sink, label, rows};
    rc = jl_pass(in, label, want_dims, max_record, row_to_counted, &cs, &again, &dims,
                 " (the first pass found it valid: the file changed while being read)");
    if (!rc && again != rows) {
      cli_msg(changed_msg, label, (unsigned long long)rows, "", (unsigned long long)again);
      rc = CLI_EDATA;
    }
    return rc;
  }
  if (cli_out_seekable(out)) { /* one pass, the count patched at the end */
    if ((rc = cli_sink_begin(sink, CLI_FMT_EMBD, out, UINT64_MAX, enc))) return rc;
    return jl_pass(in, label, want_dims, max_record, row_to_sink, sink, &rows, &dims, "");
  }
  spill s;
  spill_open(&s);
  rc = jl_pass(in, label, want_dims, max_record, spill_row, &s, &rows, &dims, "");
  if (!rc) rc = spill_replay(&s, sink, out, rows, dims, enc);
  spill_close(&s);
  return rc;
}

/* Raw float32 LE from a pipe (the count unknown until its end): rows straight to a
 * seekable output behind a placeholder count, else spilled and replayed. */
static int encode_raw_pipe(cli_in *in, const char *label, uint32_t dims, cli_out *out,
                           cli_sink *sink, const embd_frame_encode_options *enc) {
  const size_t row = (size_t)dims * 4;
  size_t per = CHUNK / row;
  if (per == 0) per = 1;
  const int direct = cli_out_seekable(out);
  spill s;
  int rc = CLI_OK;
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
        rc = row_to_sink(sink, f, dims, count);
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
  size_t per = row_bytes ? CHUNK / row_bytes : 1;
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
                                       {"compress", no_argument, 0, 'z'},
                                       {"level", required_argument, 0, 'l'},
                                       {"payload-crc", no_argument, 0, 'c'},
                                       {"max-record", required_argument, 0, 'R'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *output = NULL;
  uint64_t max_record = CLI_DEFAULT_MAX_RECORD;
  in_fmt from = IN_AUTO;
  uint32_t want_dims = 0;
  embd_frame_encode_options enc = {.flags = 0, .level = 0};
  int c;
  while ((c = getopt_long(argc, argv, "o:f:d:zl:ch", opts, NULL)) != -1) {
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
        if (parse_dims_opt(optarg, "--dims", &want_dims)) return CLI_EUSAGE;
        break;
      case 'z': enc.flags |= EMBD_FRAME_ZLIB; break;
      case 'l': {
        uint64_t l;
        if (cli_parse_u64(optarg, 9, &l) || l < 1) return cli_usage("--level: '%s' is not 1..9", cli_esc(optarg));
        enc.level = (int)l;
        enc.flags |= EMBD_FRAME_ZLIB;
        break;
      }
      case 'c': enc.flags |= EMBD_FRAME_PAYLOAD_CRC; break;
      case 'R':
        if (cli_parse_size(optarg, &max_record))
          return cli_usage("--max-record: '%s' is not a byte count (N, NK, NM or NG; N >= 1)",
                           cli_esc(optarg));
        break;
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
    if ((rc = encode_jsonl(&in, label, want_dims, max_record, &out, &sink, &enc))) goto done;
  } else if (from == IN_RAW && !in.regular) {
    if ((rc = encode_raw_pipe(&in, label, want_dims, &out, &sink, &enc))) goto done;
  } else if (from == IN_OPENAI) { /* a JSON document: read whole */
    size_t len;
    if ((rc = cli_in_read_json_object(&in, &data, &len, max_record))) goto done;
    embd_error err;
    const embd_openai_options oo = {.expected_count = 0, .max_dims = 0, .padding = 0};
    const embd_result r = embd_openai_decode(&oa, data, len, &oo, &err);
    if (r) {
      cli_msg("%s: %s", label, r == EMBD_ERR_UNAVAILABLE ? embd_strerror(r) : err.message);
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

/* ==== decode / verify: the streaming decoder =========================================== */

typedef struct dec_ctx {
  cli_sink *sink; /* NULL: verify */
  float *buf;
  size_t cap;
  int rc;       /* an exit code from the sink (already reported) */
  embd_error ferr;
  embd_result fres;
  uint64_t frames, values;
} dec_ctx;

static float *dec_dest(void *user, uint32_t index, const embd_frame_info *info) {
  dec_ctx *c = user;
  (void)index;
  const size_t need = info->dims ? info->dims : 1;
  if (c->cap < need) {
    float *n = realloc(c->buf, need * sizeof *n);
    if (!n) return NULL; /* the frame takes the callback path */
    c->buf = n;
    c->cap = need;
  }
  return c->buf;
}

static embd_result dec_frame(void *user, const embd_batch_frame *f) {
  dec_ctx *c = user;
  const float *v = f->values;
  if (!v) {
    if (!dec_dest(c, f->index, &f->info)) {
      c->rc = CLI_EINTERNAL;
      cli_msg("out of memory");
      return EMBD_ERR_OUT_OF_MEMORY;
    }
    const embd_result r = embd_batch_frame_decode(f, c->buf, c->cap, &c->ferr);
    if (r) {
      c->fres = r;
      return r;
    }
    v = c->buf;
  }
  c->frames++;
  c->values += f->info.dims;
  if (c->sink) {
    char what[64];
    snprintf(what, sizeof what, "frame %lu at byte %llu", (unsigned long)f->index,
             (unsigned long long)f->offset);
    const int rc = cli_sink_row(c->sink, v, f->info.dims, what);
    if (rc) {
      c->rc = rc;
      return EMBD_ERR_INVALID_ARGUMENT;
    }
  }
  return EMBD_OK;
}

/* Feeds the whole input to a stream decoder. Returns the exit code, errors reported. */
static int run_stream(cli_in *in, int batch, uint32_t max_dims, uint32_t expected, dec_ctx *c) {
  embd_stream_options so;
  memset(&so, 0, sizeof so);
  so.max_dims = max_dims;
  so.expected_dims = expected;
  so.batch = batch;
  so.on_frame = dec_frame;
  so.dest = dec_dest;
  so.user = c;
  embd_stream *s;
  embd_result r = embd_stream_create(&so, &s);
  if (r) {
    cli_msg("cannot create the stream decoder for --max-dims %lu: %s", (unsigned long)max_dims,
            embd_strerror(r));
    return CLI_EINTERNAL;
  }
  uint8_t *chunk = malloc(CHUNK);
  if (!chunk) {
    embd_stream_destroy(s);
    cli_msg("out of memory");
    return CLI_EINTERNAL;
  }
  int looks_stream = 0;
  {
    const uint8_t *p;
    size_t got;
    if (!cli_in_peek(in, 4, &p, &got) && got == 4 && !memcmp(p, "EMBD", 4)) looks_stream = 1;
  }
  cli_progress pr;
  cli_progress_start(&pr, in->regular ? in->size : 0);
  embd_error err;
  int rc = CLI_OK;
  for (;;) {
    size_t got;
    if ((rc = cli_in_read(in, chunk, CHUNK, &got))) break;
    if (got == 0) {
      r = embd_stream_finish(s, &err);
      break;
    }
    r = embd_stream_feed(s, chunk, got, &err);
    if (r) break;
    cli_progress_update(&pr, in->pos);
    if (got < CHUNK && in->regular) { /* end of a regular file */
      r = embd_stream_finish(s, &err);
      break;
    }
  }
  cli_progress_end(&pr);
  if (!rc && r) {
    if (c->rc) {
      rc = c->rc;
    } else {
      /* a decode error from the callback path: its message has the frame and offset */
      const char *msg = c->fres ? c->ferr.message : err.message;
      const embd_result code = c->fres ? c->fres : r;
      cli_msg("%s: %s%s", cli_in_label(in), msg,
              batch && looks_stream ? " (the input starts with an EMBD frame, not a batch count: "
                                      "is it a frame stream? try --stream)"
                                    : "");
      rc = cli_exit_for(code);
      if (code == EMBD_ERR_FRAME_DIMS_TOO_LARGE) fprintf(stderr, "(raise the limit with --max-dims)\n");
    }
  }
  free(chunk);
  embd_stream_destroy(s);
  return rc;
}

static const char decode_help[] =
    "Usage: embd decode [options] [INPUT]\n"
    "An EMBD batch (or with --stream, EMBD frames back to back) -> vectors.\n"
    "INPUT is a file, or - for stdin (the default). Read in chunks: memory stays bounded\n"
    "by one frame, whatever the input's size.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  write to FILE (default: stdout)\n"
    "  -t, --to FORMAT    jsonl  one JSON array per vector (the default); each float32 in its\n"
    "                            shortest form that reads back to the same bits; NaN and\n"
    "                            infinities are not JSON numbers: written as null, with a\n"
    "                            warning on stderr\n"
    "                     npy    a .npy file, '<f4', shape (count, dims), format 1.0\n"
    "                     raw    float32 little-endian values back to back\n"
    "                     (npy and raw need every vector to have the same dims)\n"
    "  -s, --stream       the input is frames back to back, without the batch count\n"
    "  -d, --dims N       every frame must have N dims\n"
    "  -m, --max-dims N   reject frames above N dims (default 1048576); bounds memory\n"
    "  -h, --help         show this help\n"
    "\n"
    "Output as for embd encode: -o FILE is replaced only on success (a temporary file\n"
    "renamed into place; FILE as it was after an error or an interrupt), a device or FIFO\n"
    "is written in place, a redirected stdout file is cut back on an error, a pipe keeps\n"
    "what it got. The input as the output is refused (exit 2).\n"
    "\n"
    "Examples:\n"
    "  embd decode vectors.embd > vectors.jsonl\n"
    "  embd decode --to npy -o vectors.npy vectors.embd\n"
    "  curl -s http://host/embeddings.embd | embd decode --stream --to raw > vecs.f32\n";

int cmd_decode(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                       {"to", required_argument, 0, 't'},
                                       {"stream", no_argument, 0, 's'},
                                       {"dims", required_argument, 0, 'd'},
                                       {"max-dims", required_argument, 0, 'm'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *output = NULL;
  cli_fmt to = CLI_FMT_JSONL;
  int stream = 0;
  uint32_t dims = 0, max_dims = CLI_DEFAULT_MAX_DIMS;
  int c;
  while ((c = getopt_long(argc, argv, "o:t:sd:m:h", opts, NULL)) != -1) {
    switch (c) {
      case 'o': output = optarg; break;
      case 't':
        if (cli_parse_fmt(optarg, &to) || to == CLI_FMT_EMBD)
          return cli_usage("--to: '%s' is not one of jsonl, npy, raw", cli_esc(optarg));
        break;
      case 's': stream = 1; break;
      case 'd':
        if (parse_dims_opt(optarg, "--dims", &dims)) return CLI_EUSAGE;
        break;
      case 'm':
        if (parse_dims_opt(optarg, "--max-dims", &max_dims)) return CLI_EUSAGE;
        break;
      case 'h': fputs(decode_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (argc - optind > 1) return cli_usage("one INPUT at most (got %d)", argc - optind);
  if (dims > max_dims) max_dims = dims;
  cli_in in;
  int rc = cli_in_open(&in, optind < argc ? argv[optind] : "-");
  if (rc) return rc;
  if ((rc = cli_out_check_input(output, &in))) goto close_in;
  uint64_t count = UINT64_MAX;
  if (!stream) {
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(&in, 4, &p, &got))) goto close_in;
    if (got == 4 && memcmp(p, "EMBD", 4)) count = rd32le(p);
  }
  cli_out out;
  if ((rc = cli_out_open(&out, output, to != CLI_FMT_JSONL))) goto close_in;
  cli_sink sink;
  dec_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.sink = &sink;
  if (!(rc = cli_sink_begin(&sink, to, &out, count, NULL))) {
    rc = run_stream(&in, !stream, max_dims, dims, &ctx);
    if (!rc) rc = cli_sink_finish(&sink);
  }
  {
    const int wrc = cli_out_close(&out, rc == CLI_OK);
    if (!rc) rc = wrc;
  }
  cli_sink_free(&sink);
  free(ctx.buf);
close_in:
  cli_in_close(&in);
  return rc;
}

static const char verify_help[] =
    "Usage: embd verify [options] [INPUT...]\n"
    "Checks that every frame of each EMBD batch (or --stream) is valid: header, magic,\n"
    "version, flags, header CRC, lengths, payload CRC, and the zlib stream of compressed\n"
    "frames. Exit 0 when all are valid; otherwise the first error, with the frame number\n"
    "(from 0) and its byte offset, and exit 1. INPUT defaults to - (stdin).\n"
    "\n"
    "Options:\n"
    "  -s, --stream       the input is frames back to back, without the batch count\n"
    "  -d, --dims N       every frame must have N dims\n"
    "  -m, --max-dims N   reject frames above N dims (default 1048576)\n"
    "  -q, --quiet        print nothing on success\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  embd verify vectors.embd && echo valid\n"
    "  embd verify --stream --dims 1536 capture.bin\n";

int cmd_verify(int argc, char **argv) {
  static const struct option opts[] = {{"stream", no_argument, 0, 's'},
                                       {"dims", required_argument, 0, 'd'},
                                       {"max-dims", required_argument, 0, 'm'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int stream = 0, quiet = 0;
  uint32_t dims = 0, max_dims = CLI_DEFAULT_MAX_DIMS;
  int c;
  while ((c = getopt_long(argc, argv, "sd:m:qh", opts, NULL)) != -1) {
    switch (c) {
      case 's': stream = 1; break;
      case 'd':
        if (parse_dims_opt(optarg, "--dims", &dims)) return CLI_EUSAGE;
        break;
      case 'm':
        if (parse_dims_opt(optarg, "--max-dims", &max_dims)) return CLI_EUSAGE;
        break;
      case 'q': quiet = 1; break;
      case 'h': fputs(verify_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (dims > max_dims) max_dims = dims;
  char *dash[] = {"-"};
  char **files = optind < argc ? argv + optind : dash;
  const int nfiles = optind < argc ? argc - optind : 1;
  for (int i = 0; i < nfiles; i++) {
    cli_in in;
    int rc = cli_in_open(&in, files[i]);
    if (rc) return rc;
    dec_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    rc = run_stream(&in, !stream, max_dims, dims, &ctx);
    free(ctx.buf);
    if (!rc && !quiet)
      printf("%s: ok: %llu frames, %llu values, %llu bytes\n", cli_in_label(&in),
             (unsigned long long)ctx.frames, (unsigned long long)ctx.values,
             (unsigned long long)in.pos);
    cli_in_close(&in);
    if (rc) return rc;
  }
  return CLI_OK;
}

/* ==== inspect =========================================================================== */

typedef struct breader {
  cli_in *in;
  uint8_t *buf;
  size_t cap, pos, end;
  uint64_t base; /* absolute offset of buf[0] */
  int eof;
} breader;

/* Makes n bytes available at buf + pos (fewer at the end of the input). */
static int br_need(breader *b, size_t n, size_t *avail) {
  if (b->end - b->pos < n && !b->eof) {
    if (b->pos) {
      memmove(b->buf, b->buf + b->pos, b->end - b->pos);
      b->end -= b->pos;
      b->base += b->pos;
      b->pos = 0;
    }
    const size_t want = n > CHUNK ? n : CHUNK;
    if (b->cap < want) {
      uint8_t *nb = realloc(b->buf, want);
      if (!nb) {
        cli_msg("out of memory");
        return CLI_EINTERNAL;
      }
      b->buf = nb;
      b->cap = want;
    }
    while (b->end < n && !b->eof) {
      size_t got;
      const int rc = cli_in_read(b->in, b->buf + b->end, b->cap - b->end, &got);
      if (rc) return rc;
      if (got < b->cap - b->end) b->eof = 1;
      b->end += got;
    }
  }
  *avail = b->end - b->pos < n ? b->end - b->pos : n;
  return CLI_OK;
}

static const char inspect_help[] =
    "Usage: embd inspect [options] [INPUT]\n"
    "Prints each frame's header fields: its byte offset, magic, version, flags, dims, the\n"
    "header CRC stored and computed, the payload CRC (when the frame has one), the\n"
    "compressed length (zlib frames) and the frame's size; then a summary (frames, bytes,\n"
    "a histogram of dims and of flags). Stops at the first invalid frame: prints what it\n"
    "could read of it, the error with frame number (from 0) and byte offset, exit 1.\n"
    "INPUT defaults to - (stdin).\n"
    "\n"
    "Options:\n"
    "  -s, --stream       the input is frames back to back, without the batch count\n"
    "  -S, --summary      print only the summary\n"
    "  -m, --max-dims N   reject frames above N dims (default 1048576)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Example:\n"
    "  embd inspect vectors.embd\n"
    "  frame 0 at byte 4: magic ok, version 1, flags 0x02 (payload-crc), dims 3,\n"
    "    header crc 0x1c291ca3 (computed 0x1c291ca3) ok, payload crc 0x... ok, size 32\n";

#define HIST_MAX 16
typedef struct hist {
  uint32_t key[HIST_MAX];
  uint64_t n[HIST_MAX];
  int len;
  uint64_t other;
} hist;

static void hist_add(hist *h, uint32_t k) {
  for (int i = 0; i < h->len; i++)
    if (h->key[i] == k) {
      h->n[i]++;
      return;
    }
  if (h->len == HIST_MAX) {
    h->other++;
    return;
  }
  h->key[h->len] = k;
  h->n[h->len++] = 1;
}

static const char *flag_names(unsigned f, char *buf, size_t cap) {
  if (!f) return "none";
  snprintf(buf, cap, "%s%s%s%s", f & 1 ? "zlib" : "", (f & 1) && (f & 2) ? "," : "",
           f & 2 ? "payload-crc" : "", f & ~3u ? (f & 3 ? ",unknown" : "unknown") : "");
  return buf;
}

static void print_summary(uint64_t frames, uint64_t bytes, int batch, uint32_t count,
                          const hist *dh, const hist *fh) {
  printf("summary: %llu frames, %llu bytes", (unsigned long long)frames, (unsigned long long)bytes);
  if (batch) printf(" (batch count %lu)", (unsigned long)count);
  printf("\n  dims:");
  if (!dh->len) printf(" -");
  for (int i = 0; i < dh->len; i++)
    printf("%s %lu x%llu", i ? "," : "", (unsigned long)dh->key[i], (unsigned long long)dh->n[i]);
  if (dh->other) printf(", other x%llu", (unsigned long long)dh->other);
  printf("\n  flags:");
  if (!fh->len) printf(" -");
  char fb[48];
  for (int i = 0; i < fh->len; i++)
    printf("%s %s x%llu", i ? "," : "", flag_names(fh->key[i], fb, sizeof fb),
           (unsigned long long)fh->n[i]);
  printf("\n");
}

int cmd_inspect(int argc, char **argv) {
  static const struct option opts[] = {{"stream", no_argument, 0, 's'},
                                       {"summary", no_argument, 0, 'S'},
                                       {"max-dims", required_argument, 0, 'm'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int stream = 0, summary_only = 0;
  uint32_t max_dims = CLI_DEFAULT_MAX_DIMS;
  int c;
  while ((c = getopt_long(argc, argv, "sSm:h", opts, NULL)) != -1) {
    switch (c) {
      case 's': stream = 1; break;
      case 'S': summary_only = 1; break;
      case 'm':
        if (parse_dims_opt(optarg, "--max-dims", &max_dims)) return CLI_EUSAGE;
        break;
      case 'h': fputs(inspect_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (argc - optind > 1) return cli_usage("one INPUT at most (got %d)", argc - optind);
  cli_in in;
  int rc = cli_in_open(&in, optind < argc ? argv[optind] : "-");
  if (rc) return rc;
  const char *label = cli_in_label(&in);
  breader b = {&in, NULL, 0, 0, 0, 0, 0};
  size_t max_frame;
  if (embd_stream_buffer_size(max_dims, &max_frame)) {
    cli_msg("--max-dims %lu: too large", (unsigned long)max_dims);
    return CLI_EUSAGE;
  }
  float *vals = NULL;
  size_t vcap = 0;
  hist dh = {{0}, {0}, 0, 0}, fh = {{0}, {0}, 0, 0};
  uint64_t frames = 0;
  uint32_t count = 0;
  size_t av;
  char fb[48];
  cli_progress pr;
  cli_progress_start(&pr, in.regular ? in.size : 0);
  const embd_frame_decode_options o = {.max_dims = max_dims, .expected_dims = 0, .allow_trailing = 1};
  if (!stream) {
    if ((rc = br_need(&b, 4, &av))) goto out;
    if (av < 4) {
      cli_msg("%s: batch count: %zu of its 4 bytes (at byte 0)%s", label, av,
              av == 0 ? ": the input is empty" : "");
      rc = CLI_EDATA;
      goto out;
    }
    count = rd32le(b.buf);
    if (!memcmp(b.buf, "EMBD", 4))
      cli_msg("warning: %s starts with an EMBD frame, not a batch count: is it a frame stream? try --stream",
              label);
    if (!summary_only) printf("batch count %lu at byte 0\n", (unsigned long)count);
    b.pos += 4;
  }
  for (uint32_t idx = 0;; idx++) {
    const uint64_t off = b.base + b.pos;
    if (!stream && idx == count) {
      if ((rc = br_need(&b, 1, &av))) goto out;
      if (av) {
        cli_msg("%s: bytes after the last of the %lu frames, from byte %llu", label,
                (unsigned long)count, (unsigned long long)off);
        rc = CLI_EDATA;
      }
      break;
    }
    if ((rc = br_need(&b, 20, &av))) goto out;
    if (av == 0 && stream) break;
    const uint8_t *h = b.buf + b.pos;
    embd_frame_info info;
    embd_error e;
    if (av < 16) {
      if (!summary_only) printf("frame %lu at byte %llu: %zu bytes, truncated\n", (unsigned long)idx, (unsigned long long)off, av);
      cli_msg("%s: frame %lu at byte %llu: truncated: %zu of the 16 header bytes%s", label,
              (unsigned long)idx, (unsigned long long)(off + av), av,
              !stream ? " (fewer frames than the batch count says)" : "");
      rc = CLI_EDATA;
      break;
    }
    const unsigned flags = h[5];
    const uint32_t dims = rd32le(h + 8), stored = rd32le(h + 12);
    const uint32_t computed = embd_crc32(0, h, 12);
    const int magic_ok = !memcmp(h, "EMBD", 4);
    if (!summary_only) {
      printf("frame %lu at byte %llu: magic %s, version %u, flags 0x%02x (%s), dims %lu,\n"
             "  header crc 0x%08lx (computed 0x%08lx) %s",
             (unsigned long)idx, (unsigned long long)off, magic_ok ? "ok" : "BAD", h[4], flags,
             flag_names(flags, fb, sizeof fb), (unsigned long)dims, (unsigned long)stored,
             (unsigned long)computed, stored == computed ? "ok" : "MISMATCH");
    }
    embd_result r = embd_frame_header(h, av, &o, &info, &e);
    size_t fsize = 0;
    if (r == EMBD_OK || r == EMBD_ERR_FRAME_TRUNCATED) {
      /* the header is valid: the frame's size */
      const int z = flags & EMBD_FRAME_ZLIB, tr = flags & EMBD_FRAME_PAYLOAD_CRC ? 4 : 0;
      if (z && av >= 20) {
        const uint32_t clen = rd32le(h + 16);
        if (!summary_only) printf(", compressed %lu bytes", (unsigned long)clen);
        fsize = 20 + (size_t)clen + tr;
      } else if (!z) {
        fsize = 16 + (size_t)dims * 4 + tr;
      }
      if (fsize > max_frame) {
        if (!summary_only) printf("\n");
        cli_msg("%s: frame %lu at byte %llu: %zu bytes, more than --max-dims %lu allows", label,
                (unsigned long)idx, (unsigned long long)off, fsize, (unsigned long)max_dims);
        rc = CLI_EDATA;
        break;
      }
      if (fsize) {
        if ((rc = br_need(&b, fsize, &av))) goto out;
        h = b.buf + b.pos;
        if (vcap < (size_t)dims + 1) {
          float *nv = realloc(vals, ((size_t)dims + 1) * sizeof *nv);
          if (!nv) {
            cli_msg("out of memory");
            rc = CLI_EINTERNAL;
            goto out;
          }
          vals = nv;
          vcap = (size_t)dims + 1;
        }
        if (tr && av == fsize && !summary_only) {
          const uint32_t ps = rd32le(h + fsize - 4), pc = embd_crc32(0, h + 16, fsize - 20);
          printf(", payload crc 0x%08lx (computed 0x%08lx) %s", (unsigned long)ps,
                 (unsigned long)pc, ps == pc ? "ok" : "MISMATCH");
        }
        r = embd_frame_decode(h, av, &o, vals, vcap, &info, &e);
      }
    }
    if (!summary_only) {
      if (fsize) printf(", size %zu", fsize);
      printf(r ? ": INVALID\n" : "\n");
    }
    if (r) {
      /* the frame's offset, as the batch and stream decoders report it */
      cli_msg("%s: frame %lu at byte %llu: %s", label, (unsigned long)idx,
              (unsigned long long)off, e.message);
      rc = cli_exit_for(r);
      break;
    }
    hist_add(&dh, dims);
    hist_add(&fh, flags);
    frames++;
    b.pos += fsize;
    cli_progress_update(&pr, b.base + b.pos);
  }
  cli_progress_end(&pr);
  fflush(stderr);
  print_summary(frames, b.base + b.pos, !stream, count, &dh, &fh);
out:
  cli_progress_end(&pr);
  free(b.buf);
  free(vals);
  cli_in_close(&in);
  return rc;
}
