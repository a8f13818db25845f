/* embd openai: OpenAI /v1/embeddings responses -> JSON lines, .npy, raw or EMBD. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const char openai_help[] =
    "Usage: embd openai [options] [RESPONSE...]\n"
    "Decodes OpenAI-compatible /v1/embeddings response bodies (\"embedding\" as an array\n"
    "of numbers or as base64 float32) into vectors, in input order (by data[].index).\n"
    "Several RESPONSE files are stitched in the order given (the chunks of one batch:\n"
    "same dims and model). RESPONSE defaults to - (stdin).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  write to FILE (default: stdout)\n"
    "  -t, --to FORMAT    jsonl  one JSON array per vector (the default; as embd decode)\n"
    "                     npy    a .npy file, '<f4', shape (count, dims)\n"
    "                     raw    float32 little-endian values back to back\n"
    "                     embd   an EMBD batch\n"
    "  -z, --compress     --to embd: zlib-compress each frame's payload\n"
    "  -l, --level N      --to embd: zlib level 1..9; implies --compress\n"
    "  -c, --payload-crc  --to embd: a CRC-32 trailer on each frame\n"
    "  -d, --dims N       the vectors must have N dims\n"
    "  -v, --verbose      print model, count, dims and token usage on stderr\n"
    "      --max-record BYTES  the largest response accepted (default 256M; K, M, G\n"
    "                     suffixes): a body is read whole, this bounds the memory\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  embd openai response.json > vectors.jsonl\n"
    "  embd openai --to embd -o vectors.embd part1.json part2.json\n"
    "  curl -s https://api.openai.com/v1/embeddings ... | embd openai --to npy -o v.npy\n";

int cmd_openai(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                       {"to", required_argument, 0, 't'},
                                       {"compress", no_argument, 0, 'z'},
                                       {"level", required_argument, 0, 'l'},
                                       {"payload-crc", no_argument, 0, 'c'},
                                       {"dims", required_argument, 0, 'd'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"max-record", required_argument, 0, 'R'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *output = NULL;
  cli_fmt to = CLI_FMT_JSONL;
  embd_frame_encode_options enc = {.flags = 0, .level = 0};
  uint32_t want_dims = 0;
  uint64_t max_record = CLI_DEFAULT_MAX_RECORD;
  int verbose = 0, c;
  while ((c = getopt_long(argc, argv, "o:t:zl:cd:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'o': output = optarg; break;
      case 't':
        if (cli_parse_fmt(optarg, &to)) return cli_usage("--to: '%s' is not one of jsonl, npy, raw, embd", cli_esc(optarg));
        break;
      case 'z':
      case 'l':
      case 'c':
        if (cli_frame_opt(c, optarg, &enc) != 1) return CLI_EUSAGE;
        break;
      case 'd':
        if (cli_parse_dims(optarg, "--dims", &want_dims)) return CLI_EUSAGE;
        break;
      case 'v': verbose = 1; break;
      case 'R':
        if (cli_parse_max_record(optarg, &max_record)) return CLI_EUSAGE;
        break;
      case 'h': fputs(openai_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (enc.flags && to != CLI_FMT_EMBD) return cli_usage("--compress, --level and --payload-crc need --to embd");
  char *dash[] = {"-"};
  char **files = optind < argc ? argv + optind : dash;
  const int nfiles = optind < argc ? argc - optind : 1;

  embd_openai_embeddings e;
  embd_openai_init(&e);
  int rc = CLI_OK;
  for (int i = 0; i < nfiles && !rc; i++) {
    cli_in in;
    if ((rc = cli_in_open(&in, files[i]))) break;
    char *data = NULL;
    size_t len;
    if (!(rc = cli_out_check_input(output, &in)) &&
        !(rc = cli_in_read_json_object(&in, &data, &len, max_record))) {
      embd_error err;
      const embd_openai_options oo = {.expected_count = 0, .max_dims = 0, .padding = 0};
      const embd_result r = embd_openai_append(&e, data, len, &oo, &err);
      if (r) {
        cli_msg("%s: %s", cli_in_label(&in),
                r == EMBD_ERR_UNAVAILABLE ? embd_strerror(r) : err.message);
        rc = cli_exit_for(r);
      }
    }
    free(data);
    cli_in_close(&in);
  }
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
  if ((rc = cli_out_open(&out, output, to != CLI_FMT_JSONL))) {
    embd_openai_free(&e);
    return rc;
  }
  cli_sink sink;
  if (!(rc = cli_sink_begin(&sink, to, &out, e.count, &enc))) {
    char what[48];
    for (size_t i = 0; i < e.count && !rc; i++) {
      snprintf(what, sizeof what, "vector %zu", i);
      rc = cli_sink_row(&sink, e.values + i * e.dims, (uint32_t)e.dims, what);
    }
    if (!rc) rc = cli_sink_finish(&sink);
  }
  const int wrc = cli_out_close(&out, rc == CLI_OK);
  if (!rc) rc = wrc;
  cli_sink_free(&sink);
  embd_openai_free(&e);
  return rc;
}
