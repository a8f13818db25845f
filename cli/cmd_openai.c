/* embd openai: OpenAI /v1/embeddings responses (and the other servers' shapes: vLLM's
 * bytes bodies, Cohere's embeddings by type, integer and packed-bit lists) -> the --to
 * formats (formats.h): JSON lines, .npy, raw, EMBD, PostgreSQL binary COPY, _bulk lines,
 * .fvecs/.bvecs. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "formats.h"
#include "openai_stream.h"

static const char openai_help[] =
    "Usage: embd openai [options] [RESPONSE...]\n"
    "Decodes OpenAI-compatible /v1/embeddings response bodies (\"embedding\" as an array\n"
    "of numbers or as base64) into float32 vectors, in input order (by data[].index).\n"
    "Also Cohere's \"embeddings\" (by type, or v1 lists), and vLLM's encoding_format\n"
    "bytes (--metadata) and bytes_only (--bytes-only) octet-stream bodies.\n"
    "Several RESPONSE files are stitched in the order given (the chunks of one batch:\n"
    "same dims and model). RESPONSE defaults to - (stdin).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  write to FILE (default: stdout)\n"
    "  -t, --to FORMAT    jsonl  one JSON array per vector (the default; as embd decode)\n"
    "                     npy    a .npy file, '<f4', shape (count, dims)\n"
    "                     raw    float32 little-endian values back to back\n"
    "                     embd   an EMBD batch\n"
    "                     pgcopy PostgreSQL binary COPY rows (--pg-type, below)\n"
    "                     es-bulk  Elasticsearch/OpenSearch _bulk lines (--es-index)\n"
    "                     fvecs, bvecs  FAISS vector files\n"
    "  -z, --compress     --to embd: zlib-compress each frame's payload\n"
    "  -l, --level N      --to embd: zlib level 1..9; implies --compress\n"
    "  -c, --payload-crc  --to embd: a CRC-32 trailer on each frame\n"
    "  -d, --dims N       the vectors must have N dims (--bytes-only: they have N dims)\n"
    "      --dtype TYPE   the element type the request asked for (vLLM embed_dtype,\n"
    "                     Cohere embedding_types, Voyage/Mistral output_dtype, Jina\n"
    "                     embedding_type): f32 (default), f16, bf16, fp8-e4m3, fp8-e5m2,\n"
    "                     int8, uint8, binary, ubinary (or float32, float16, bfloat16,\n"
    "                     fp8_e4m3, fp8_e5m2). Base64 and bytes are read as that type,\n"
    "                     integer lists must fit it; anything else is an error.\n"
    "                     binary/ubinary: packed bits, 8 dims a byte (-1/+1, 0/1)\n"
    "      --byte-order little|big  of base64 and bytes elements (vLLM endianness;\n"
    "                     for \"native\" say the server's; default little)\n"
    "      --metadata FILE       RESPONSE is a vLLM encoding_format=bytes body and FILE\n"
    "                     holds its \"metadata\" HTTP header's JSON\n"
    "      --metadata-json TEXT  the same, the JSON given on the command line\n"
    "      --bytes-only   RESPONSE is a vLLM bytes_only body: vectors of --dims N\n"
    "                     elements back to back (N required)\n"
    "      --keep-dtype   write the elements in the wire dtype instead of float32 (npy\n"
    "                     descr, raw bytes and EMBD frames as embd decode writes them;\n"
    "                     jsonl numbers)\n"
    "  -v, --verbose      print model, count, dims and token usage on stderr\n"
    "      --max-record BYTES  the largest response (or batch line) accepted (default\n"
    "                     256M; K, M, G suffixes): a body is read whole, this bounds\n"
    "                     the memory\n"
    "\n"
    "Batch output files (OpenAI's Batch API, Azure OpenAI, Together, vLLM run_batch:\n"
    "JSON Lines, one request a line with its \"custom_id\") are recognised by their first\n"
    "line and streamed: read in pieces, each line's vectors written as it is decoded\n"
    "(file order, then data[].index order), memory bounded by the largest line. Give the\n"
    "output file, its error file and a retry batch's output together: a request that\n"
    "fails in one and succeeds in a later one is not failed. Exit 5 when requests stay\n"
    "failed (every other row written); a custom_id with vectors twice is an error.\n"
    "--to npy and --to embd need a seekable output (-o FILE): the count comes last.\n"
    "      --batch        insist that the inputs are batch output files\n"
    "      --ids FILE     one line per vector: custom_id<TAB>index (the row's data[].index),\n"
    "                     escaped as PostgreSQL's text COPY reads it\n"
    "      --failed FILE  one JSON line per request that failed: custom_id, line, file,\n"
    "                     status_code (or null), code (or null), message\n"
    "  -h, --help         show this help\n"
    "\n"
    CLI_FORMAT_HELP
    "\n"
    "Examples:\n"
    "  embd openai response.json > vectors.jsonl\n"
    "  embd openai --to embd -o vectors.embd part1.json part2.json\n"
    "  curl -s https://api.openai.com/v1/embeddings ... | embd openai --to npy -o v.npy\n"
    "  embd openai --dtype f16 --byte-order big --metadata meta.json body.bin\n"
    "  embd openai --dtype int8 cohere.json\n"
    "  embd openai batch_out.jsonl batch_err.jsonl --to npy -o v.npy --ids ids.tsv \\\n"
    "      --failed retry.jsonl\n"
    "  embd openai r.json --to pgcopy | psql -c \"COPY items (embedding) FROM STDIN (FORMAT binary)\"\n"
    "  embd openai r*.json --to pgcopy --pg-type halfvec --pg-id 1 | psql -c \\\n"
    "      \"COPY items (id, embedding) FROM STDIN (FORMAT binary)\"\n"
    "  embd openai r.json --to es-bulk --es-index docs --es-id 0 | curl -s -H \\\n"
    "      'Content-Type: application/x-ndjson' --data-binary @- localhost:9200/_bulk\n";

/* Reads a whole file (the --metadata JSON) into *data. */
static int read_file(const char *name, char **data, size_t *len, uint64_t max) {
  cli_in in;
  int rc = cli_in_open(&in, name);
  if (rc) return rc;
  rc = cli_in_read_all(&in, data, len, max, "--max-record");
  cli_in_close(&in);
  return rc;
}

int cmd_openai(int argc, char **argv) {
  static const struct option opts[] = {CLI_OUTPUT_OPTIONS,
                                       CLI_FRAME_OPTIONS,
                                       {"dims", required_argument, 0, 'd'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"max-record", required_argument, 0, 'R'},
                                       {"dtype", required_argument, 0, 'T'},
                                       {"byte-order", required_argument, 0, 'B'},
                                       {"metadata", required_argument, 0, 'M'},
                                       {"metadata-json", required_argument, 0, 'J'},
                                       {"bytes-only", no_argument, 0, 'Y'},
                                       {"keep-dtype", no_argument, 0, 'K'},
                                       {"batch", no_argument, 0, 'P'},
                                       {"ids", required_argument, 0, 'I'},
                                       {"failed", required_argument, 0, 'F'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *output = NULL;
  cli_fmt to = CLI_FMT_JSONL;
  cli_fmt_opts fo;
  cli_fmt_opts_init(&fo);
  uint32_t want_dims = 0;
  uint64_t max_record = CLI_DEFAULT_MAX_RECORD;
  int verbose = 0, c;
  embd_dtype dtype = EMBD_DTYPE_F32;
  embd_byte_order order = EMBD_ORDER_LE;
  const char *meta_file = NULL, *meta_json = NULL;
  int bytes_only = 0, keep = 0, batch = 0;
  const char *ids = NULL, *failed = NULL;
  while ((c = getopt_long(argc, argv, "o:t:zl:cd:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'z':
      case 'l':
      case 'c':
        if (cli_frame_opt(c, optarg, &fo.enc) != 1) return CLI_EUSAGE;
        break;
      case 'd':
        if (cli_parse_dims(optarg, "--dims", &want_dims)) return CLI_EUSAGE;
        break;
      case 'v': verbose = 1; break;
      case 'R':
        if (cli_parse_max_record(optarg, &max_record)) return CLI_EUSAGE;
        break;
      case 'T':
        if (cli_parse_dtype(optarg, "--dtype", &dtype)) return CLI_EUSAGE;
        break;
      case 'B':
        if (!strcmp(optarg, "little")) order = EMBD_ORDER_LE;
        else if (!strcmp(optarg, "big")) order = EMBD_ORDER_BE;
        else return cli_usage("--byte-order: '%s' is not little or big", cli_esc(optarg));
        break;
      case 'M': meta_file = optarg; break;
      case 'J': meta_json = optarg; break;
      case 'Y': bytes_only = 1; break;
      case 'K': keep = 1; break;
      case 'P': batch = 1; break;
      case 'I': ids = optarg; break;
      case 'F': failed = optarg; break;
      case 'h': fputs(openai_help, stdout); return CLI_OK;
      default: {
        const int f = cli_output_opt(c, optarg, CLI_FOR_OPENAI, &output, &to, &fo);
        if (f) return f;
      }
    }
  }
  if (fo.enc.flags && to != CLI_FMT_EMBD) return cli_usage("--compress, --level and --payload-crc need --to embd");
  if (cli_format_opts_check(to, &fo)) return CLI_EUSAGE;
  if (meta_file && meta_json) return cli_usage("--metadata and --metadata-json: one or the other");
  const int bytes_body = meta_file || meta_json;
  if (bytes_body && bytes_only) return cli_usage("--bytes-only bodies have no metadata");
  if (bytes_only && !want_dims) return cli_usage("--bytes-only needs --dims N");
  char *dash[] = {"-"};
  char **files = optind < argc ? argv + optind : dash;
  const int nfiles = optind < argc ? argc - optind : 1;
  if ((bytes_body || bytes_only) && nfiles != 1)
    return cli_usage("--metadata, --metadata-json and --bytes-only take one body");
  char *meta = NULL;
  size_t mlen = 0;
  if (meta_file) {
    int mrc = read_file(meta_file, &meta, &mlen, max_record);
    if (mrc) return mrc;
  } else if (meta_json) {
    mlen = strlen(meta_json);
  }
  embd_openai_options oo;
  memset(&oo, 0, sizeof oo); /* reserved_ must be zero */
  oo.dtype = dtype;
  oo.byte_order = order;
  if (keep) oo.flags = EMBD_OPENAI_KEEP_DTYPE;
  if (batch && (bytes_body || bytes_only))
    return cli_usage("--batch reads batch output files, not --metadata or --bytes-only bodies");

  /* Batch output files (JSON Lines, one request a line with its "custom_id") are told
   * apart from a response body by their first line (or --batch) and streamed. */
  cli_in first;
  int have_first = 0, rc = CLI_OK;
  if (!bytes_body && !bytes_only) {
    if ((rc = cli_in_open(&first, files[0]))) return rc;
    have_first = 1;
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(&first, sizeof first.peek, &p, &got))) {
      cli_in_close(&first);
      return rc;
    }
    if (batch || embd_openai_is_batch_line((const char *)p, got)) {
      openai_batch_args ba;
      memset(&ba, 0, sizeof ba);
      ba.files = files;
      ba.nfiles = nfiles;
      ba.first = &first;
      ba.output = output;
      ba.ids = ids;
      ba.failed = failed;
      ba.to = to;
      ba.fo = &fo;
      ba.oo = &oo;
      ba.want_dims = want_dims;
      ba.max_record = max_record;
      ba.verbose = verbose;
      ba.keep = keep;
      return openai_batch(&ba);
    }
  }
  if (ids || failed || fo.pg_key) {
    if (have_first) cli_in_close(&first);
    free(meta);
    if (fo.pg_key)
      return cli_usage("--pg-id custom is for batch output files (JSON Lines with a \"custom_id\" each; "
                       "--batch to insist): %s is a response body", cli_esc(files[0]));
    return cli_usage("--ids and --failed are for batch output files (JSON Lines with a \"custom_id\" "
                     "each; --batch to insist): %s is a response body", cli_esc(files[0]));
  }

  embd_openai_embeddings e;
  embd_openai_init(&e);
  for (int i = 0; i < nfiles && !rc; i++) {
    cli_in in;
    if (i == 0 && have_first) in = first;
    else if ((rc = cli_in_open(&in, files[i]))) break;
    const char *data = NULL;
    char *owned = NULL;
    size_t len;
    if (!(rc = cli_out_check_input(output, &in)) &&
        !(rc = bytes_body || bytes_only ? cli_in_read_all(&in, &owned, &len, max_record, "--max-record")
                                        : cli_in_load_json_object(&in, &data, &len, max_record))) {
      if (owned) data = owned;
      embd_error err;
      const embd_result r =
          bytes_only ? embd_openai_decode_bytes_only(&e, data, len, want_dims, &oo, &err)
          : bytes_body ? embd_openai_decode_bytes(&e, data, len, meta ? meta : meta_json, mlen, &oo, &err)
                       : embd_openai_append(&e, data, len, &oo, &err);
      if (r) {
        /* embd_openai_decode_bytes' offsets are all into the metadata (the body's faults are
         * found through it): name that */
        cli_msg("%s: %s", bytes_body ? (meta_file ? cli_esc(meta_file) : "--metadata-json") : cli_in_label(&in),
                r == EMBD_ERR_UNAVAILABLE ? embd_strerror(r) : err.message);
        rc = cli_exit_for(r);
      }
    }
    cli_in_release(&in, data ? data : owned);
    cli_in_close(&in);
  }
  free(meta);
  if (!rc && want_dims && e.count && e.dims != want_dims) {
    cli_msg("the vectors have %zu dims, --dims is %lu", e.dims, (unsigned long)want_dims);
    rc = CLI_EDATA;
  }
  if (!rc && e.dims > UINT32_MAX) {
    cli_msg("%zu dims: too many", e.dims);
    rc = CLI_EDATA;
  }
  if (rc) {
    embd_openai_free(&e);
    return rc;
  }
  if (verbose) {
    cli_msg("model \"%s\"%s, %zu vectors of %zu dims", cli_esc(e.model), e.model_truncated ? " (cut)" : "",
            e.count, e.dims);
    if (e.has_usage)
      cli_msg("usage: prompt_tokens %llu, total_tokens %llu", (unsigned long long)e.prompt_tokens,
              (unsigned long long)e.total_tokens);
  }
  cli_out out;
  if ((rc = cli_out_open(&out, output, cli_formats[to].flags & CLI_FMTF_BINARY))) {
    embd_openai_free(&e);
    return rc;
  }
  cli_sink sink;
  memset(&sink, 0, sizeof sink);
  uint8_t *le = NULL; /* --keep-dtype, big-endian: a row in the sink's little-endian order */
  if (keep && (order == EMBD_ORDER_BE && embd_dtype_bits(e.dtype) > 8) && e.row_bytes &&
      !(le = malloc(e.row_bytes))) {
    cli_msg("out of memory");
    rc = CLI_EINTERNAL;
  }
  /* a format that may refuse a row, into an output that cannot be taken back (a pipe):
   * every row checked first, so that a refused one leaves not a byte there */
  if (!rc && !(rc = cli_sink_begin_opts(&sink, to, NULL, e.count, &fo)) && cli_sink_may_refuse(&sink) &&
      !cli_out_can_take_back(&out))
    rc = openai_rows(&sink, &e, keep, le, "");
  cli_sink_free(&sink);
  if (!rc && !(rc = cli_sink_begin_opts(&sink, to, &out, e.count, &fo))) {
    rc = openai_rows(&sink, &e, keep, le, "");
    if (!rc) rc = cli_sink_finish(&sink);
  }
  if (rc) cli_sink_abort(&sink);
  free(le);
  const int wrc = cli_out_close(&out, rc == CLI_OK);
  if (!rc) rc = wrc;
  cli_sink_free(&sink);
  embd_openai_free(&e);
  return rc;
}
