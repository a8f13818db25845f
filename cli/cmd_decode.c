/* embd decode / verify: EMBD batch files and frame streams -> vectors, or just checked. */
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

/* ==== decode / verify: the streaming decoder =========================================== */

typedef struct dec_ctx {
  cli_sink *sink; /* NULL: verify */
  int keep;       /* rows in their wire dtype (npy, raw without --as f32) */
  float *buf;
  size_t cap;
  uint8_t *raw;   /* a frame's elements (keep) */
  size_t raw_cap;
  int rc;       /* an exit code from the sink (already reported) */
  embd_error ferr;
  embd_result fres;
  uint64_t frames, values;
} dec_ctx;

static float *dec_dest(void *user, uint32_t index, const embd_frame_info *info) {
  dec_ctx *c = user;
  (void)index;
  /* float32 frames go to floats either way (the direct path); a frame of another dtype
   * whose elements are kept takes the callback path (embd_batch_frame_decode_raw) */
  if (c->keep && info->dtype != EMBD_DTYPE_F32) return NULL;
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
  char what[64];
  snprintf(what, sizeof what, "frame %lu at byte %llu", (unsigned long)f->index,
           (unsigned long long)f->offset);
  if (!v && c->keep && f->info.dtype != EMBD_DTYPE_F32) {
    if (c->raw_cap < f->info.value_bytes + 1) {
      uint8_t *n = realloc(c->raw, f->info.value_bytes + 1);
      if (!n) {
        c->rc = CLI_EINTERNAL;
        cli_msg("out of memory");
        return EMBD_ERR_OUT_OF_MEMORY;
      }
      c->raw = n;
      c->raw_cap = f->info.value_bytes + 1;
    }
    const embd_result r = embd_batch_frame_decode_raw(f, c->raw, c->raw_cap, EMBD_ORDER_LE, &c->ferr);
    if (r) {
      c->fres = r;
      return r;
    }
    c->frames++;
    c->values += f->info.dims;
    const int rc = cli_sink_row_raw(c->sink, c->raw, f->info.dims, (embd_dtype)f->info.dtype, what);
    if (rc) {
      c->rc = rc;
      return EMBD_ERR_INVALID_ARGUMENT;
    }
    return EMBD_OK;
  }
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
  uint8_t *chunk = malloc(CLI_CHUNK);
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
    if ((rc = cli_in_read(in, chunk, CLI_CHUNK, &got))) break;
    if (got == 0) {
      r = embd_stream_finish(s, &err);
      break;
    }
    r = embd_stream_feed(s, chunk, got, &err);
    if (r) break;
    cli_progress_update(&pr, in->pos);
    if (got < CLI_CHUNK && in->regular) { /* end of a regular file */
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
    "  -t, --to FORMAT    jsonl  one JSON array per vector (the default); each value as a\n"
    "                            float32 in its shortest form that reads back to the same\n"
    "                            bits (integer dtypes: integers); NaN and infinities are\n"
    "                            not JSON numbers: written as null, with a warning\n"
    "                     npy    a .npy file, shape (count, dims), format 1.0, in the\n"
    "                            frames' own dtype: f32 '<f4', f16 '<f2', int8 '|i1',\n"
    "                            bf16 '<u2' (its bits: numpy has no bfloat16), and '|u1'\n"
    "                            (the wire bytes) for uint8, fp8-e4m3, fp8-e5m2 and the\n"
    "                            packed binary/ubinary (shape (count, dims / 8))\n"
    "                     raw    the frames' values back to back as the wire has them\n"
    "                            (little-endian; float32 for f32 frames)\n"
    "                     (npy and raw need every vector to have the same dims and dtype)\n"
    "                     pgcopy   PostgreSQL binary COPY rows (--pg-type, below)\n"
    "                     es-bulk  Elasticsearch/OpenSearch _bulk lines (--es-index)\n"
    "                     fvecs, bvecs  FAISS vector files\n"
    "                     (these four and jsonl take every dtype as float32, exactly)\n"
    "  -a, --as f32       npy and raw: convert every value to float32 ('<f4')\n"
    "  -s, --stream       the input is frames back to back, without the batch count\n"
    "  -d, --dims N       every frame must have N dims\n"
    "  -m, --max-dims N   reject frames above N dims (default 1048576); bounds memory\n"
    "  -h, --help         show this help\n"
    "\n"
    CLI_FORMAT_HELP
    "\n"
    "Output as for embd encode: -o FILE is replaced only on success (a temporary file\n"
    "renamed into place; FILE as it was after an error or an interrupt), a device or FIFO\n"
    "is written in place, a redirected stdout file is cut back on an error, a pipe keeps\n"
    "what it got. The input as the output is refused (exit 2).\n"
    "\n"
    "Examples:\n"
    "  embd decode vectors.embd > vectors.jsonl\n"
    "  embd decode --to npy -o vectors.npy vectors.embd\n"
    "  embd decode --to npy --as f32 -o floats.npy int8.embd\n"
    "  curl -s http://host/embeddings.embd | embd decode --stream --to raw > vecs.f32\n"
    "  embd decode vectors.embd --to pgcopy --pg-type float4[] --pg-id 1 | psql -c \\\n"
    "      \"COPY items (id, embedding) FROM STDIN (FORMAT binary)\"\n"
    "  embd decode vectors.embd --to fvecs -o base.fvecs\n";

int cmd_decode(int argc, char **argv) {
  static const struct option opts[] = {CLI_OUTPUT_OPTIONS, CLI_READ_OPTIONS, {"as", required_argument, 0, 'a'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *output = NULL;
  cli_fmt to = CLI_FMT_JSONL;
  cli_fmt_opts fo;
  cli_fmt_opts_init(&fo);
  cli_read_opts ro = CLI_READ_OPTS_INIT;
  int as_f32 = 0;
  int c;
  while ((c = getopt_long(argc, argv, "o:t:sd:m:a:h", opts, NULL)) != -1) {
    switch (c) {
      case 'a': {
        embd_dtype as;
        if (cli_parse_dtype(optarg, "--as", &as)) return CLI_EUSAGE;
        if (as != EMBD_DTYPE_F32)
          return cli_usage("--as: only f32 (float32) is offered: '%s' would be a lossy conversion",
                           cli_esc(optarg));
        as_f32 = 1;
        break;
      }
      case 's':
      case 'd':
      case 'm':
        if (cli_read_opt(c, optarg, &ro) != 1) return CLI_EUSAGE;
        break;
      case 'h': fputs(decode_help, stdout); return CLI_OK;
      default: {
        const int f = cli_output_opt(c, optarg, CLI_FOR_DECODE, &output, &to, &fo);
        if (f) return f;
      }
    }
  }
  if (cli_format_opts_check(to, &fo)) return CLI_EUSAGE;
  if (fo.pg_key) return cli_usage("--pg-id custom is for embd openai over batch output files (a custom_id each)");
  if (argc - optind > 1) return cli_usage("one INPUT at most (got %d)", argc - optind);
  cli_in in;
  int rc = cli_in_open(&in, optind < argc ? argv[optind] : "-");
  if (rc) return rc;
  if ((rc = cli_out_check_input(output, &in))) goto close_in;
  uint64_t count = UINT64_MAX;
  if (!ro.stream) {
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(&in, 4, &p, &got))) goto close_in;
    if (got == 4 && memcmp(p, "EMBD", 4)) count = cli_rd32le(p);
  }
  cli_out out;
  if ((rc = cli_out_open(&out, output, cli_formats[to].flags & CLI_FMTF_BINARY))) goto close_in;
  cli_sink sink;
  dec_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.sink = &sink;
  ctx.keep = !as_f32 && (cli_formats[to].flags & CLI_FMTF_RAW_ROWS);
  if (!(rc = cli_sink_begin_opts(&sink, to, &out, count, &fo))) {
    rc = run_stream(&in, !ro.stream, cli_read_max_dims(&ro), ro.dims, &ctx);
    if (!rc) rc = cli_sink_finish(&sink);
  }
  /* rows are written as the frames come: into a pipe, a failure (a refused row, a broken
   * frame) ends pgcopy, es-bulk and the vecs with a record cut short (formats.h) */
  if (rc) cli_sink_abort(&sink);
  {
    const int wrc = cli_out_close(&out, rc == CLI_OK);
    if (!rc) rc = wrc;
  }
  cli_sink_free(&sink);
  free(ctx.buf);
  free(ctx.raw);
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
  static const struct option opts[] = {CLI_READ_OPTIONS,
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  cli_read_opts ro = CLI_READ_OPTS_INIT;
  int quiet = 0;
  int c;
  while ((c = getopt_long(argc, argv, "sd:m:qh", opts, NULL)) != -1) {
    switch (c) {
      case 's':
      case 'd':
      case 'm':
        if (cli_read_opt(c, optarg, &ro) != 1) return CLI_EUSAGE;
        break;
      case 'q': quiet = 1; break;
      case 'h': fputs(verify_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  char *dash[] = {"-"};
  char **files = optind < argc ? argv + optind : dash;
  const int nfiles = optind < argc ? argc - optind : 1;
  for (int i = 0; i < nfiles; i++) {
    cli_in in;
    int rc = cli_in_open(&in, files[i]);
    if (rc) return rc;
    dec_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    rc = run_stream(&in, !ro.stream, cli_read_max_dims(&ro), ro.dims, &ctx);
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
