/* embd tokens: read a Codec token stream (session frames, or the engines' msgpack or
 * protobuf stream modes) and print its ids, one line per frame, or its text through a
 * tokenizer map. Streams in 64 KiB chunks: memory stays bounded by one frame. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef enum { MODE_AUTO, MODE_SESSION, MODE_MSGPACK, MODE_PROTOBUF, MODE_MSGPACK_DELTA, MODE_PROTOBUF_DELTA } tok_mode;

typedef struct tok_ctx {
  cli_out out;
  embd_detok *detok; /* NULL: print ids */
  char *text;        /* detokenizer output buffer */
  size_t text_cap;
  uint64_t frames, tokens;
  int failed;        /* an output error or a detokenization error (already printed) */
  embd_result detok_err;
  /* The peer's report of a failed generation (a session ERROR frame, or a stream-mode
   * frame with finish_reason "error"): the stream stops there (EMBD_STOPPED) and the
   * command exits CLI_EPEER once the text before it is out. What it was and its text,
   * escaped, kept for after that text (a frame's bytes are valid during the callback only). */
  char *peer_error;
  uint64_t peer_index;
  uint64_t peer_offset;
} tok_ctx;

/* At most this much of an ERROR frame's text is printed (a payload may be 16 MiB). */
#define PEER_TEXT_MAX 4096

static int put(tok_ctx *c, const void *p, size_t n) {
  if (cli_out_write(&c->out, p, n) != 0) {
    c->failed = CLI_EIO;
    return -1;
  }
  return 0;
}

/* One frame's ids: a line of ids, or their text. */
static embd_result emit_ids(tok_ctx *c, const uint32_t *ids, size_t n, uint64_t frame) {
  c->frames++;
  c->tokens += n;
  if (!c->detok) {
    char num[16];
    for (size_t i = 0; i < n; i++) {
      int k = snprintf(num, sizeof num, i ? " %lu" : "%lu", (unsigned long)ids[i]);
      if (put(c, num, (size_t)k)) return EMBD_ERR_OUTPUT_TOO_SMALL;
    }
    if (put(c, "\n", 1)) return EMBD_ERR_OUTPUT_TOO_SMALL;
    return EMBD_OK;
  }
  size_t w;
  embd_error err;
  embd_result r = embd_detok_feed(c->detok, ids, n, c->text, c->text_cap, &w, &err);
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL) {
    char *t = realloc(c->text, w);
    if (!t) return EMBD_ERR_OUT_OF_MEMORY;
    c->text = t, c->text_cap = w;
    r = embd_detok_feed(c->detok, ids, n, c->text, c->text_cap, &w, &err);
  }
  if (r != EMBD_OK) {
    cli_msg("frame %llu: %s", (unsigned long long)frame, err.message);
    c->detok_err = r;
    return r;
  }
  return put(c, c->text, w) ? EMBD_ERR_OUTPUT_TOO_SMALL : EMBD_OK;
}

/* The peer reported a failed generation at frame `index`: keeps `what` and the first
 * PEER_TEXT_MAX bytes of `text`, escaped, and stops the stream (what follows is no part
 * of a good generation). One path for both kinds of report, so both exit CLI_EPEER. */
static embd_result peer_stop(tok_ctx *c, uint64_t index, uint64_t offset, const char *what,
                             const void *text, size_t len) {
  const size_t n = len > PEER_TEXT_MAX ? PEER_TEXT_MAX : len, w = strlen(what);
  const size_t need = w + cli_escape(NULL, 0, text, n) + 1;
  if (!(c->peer_error = malloc(need))) return EMBD_ERR_OUT_OF_MEMORY;
  memcpy(c->peer_error, what, w);
  cli_escape(c->peer_error + w, need - w, text, n);
  c->peer_index = index;
  c->peer_offset = offset;
  return EMBD_STOPPED;
}

static embd_result on_session(void *user, const embd_codec_frame *f) {
  tok_ctx *c = user;
  if (f->type == EMBD_CODEC_ERROR)
    return peer_stop(c, f->index, f->offset, "ERROR frame from the peer: ", f->payload, f->payload_len);
  /* HELLO/READY/EOS/LATENT*: checked by the reader, nothing to print; types from 0x07 up
   * (a newer protocol's) are skipped unless --strict-types made the reader refuse them. */
  if (f->type != EMBD_CODEC_TOKENS) return EMBD_OK;
  uint32_t stack[256];
  const size_t n = f->payload_len / 4;
  uint32_t *ids = n <= 256 ? stack : malloc(n * sizeof *ids);
  if (!ids) return EMBD_ERR_OUT_OF_MEMORY;
  size_t got;
  embd_result r = embd_codec_tokens(f, ids, n, &got);
  if (r == EMBD_OK) r = emit_ids(c, ids, got, f->index);
  if (ids != stack) free(ids);
  return r;
}

/* The stream modes have no ERROR frame: a failed generation ends with a frame whose
 * finish_reason is "error". That frame's ids are printed, then it ends the stream as an
 * ERROR frame ends a session (exit 5, the report on stderr after the text). */
static embd_result on_stream(void *user, const embd_codec_stream_frame *f) {
  tok_ctx *c = user;
  embd_result r = emit_ids(c, f->ids, f->n_ids, f->index);
  if (r == EMBD_OK && f->finish_reason && f->finish_reason_len == 5 && !memcmp(f->finish_reason, "error", 5))
    return peer_stop(c, f->index, f->offset, "finish_reason \"error\" from the peer", NULL, 0);
  return r;
}

static void usage(FILE *f) {
  fputs(
      "Usage: embd tokens [options] [FILE]\n"
      "\n"
      "Reads a Codec token stream from FILE (default: - for stdin) and prints the token\n"
      "ids, one line per frame, ids separated by spaces; with --map, the text instead.\n"
      "\n"
      "  -m, --mode MODE     session  Codec session frames ([type][len u32 BE][payload]):\n"
      "                               TOKENS frames are printed; HELLO/READY/EOS/LATENT*\n"
      "                               are checked and skipped; frame types from 0x07 up\n"
      "                               (newer protocol versions) are skipped; an ERROR\n"
      "                               frame ends the stream with its text and exit 5\n"
      "                      msgpack  msgpack maps {ids, done, ...} back to back\n"
      "                      protobuf u32 big-endian length + CodecFrame, repeated\n"
      "                      msgpack-delta, protobuf-delta  the delta variants (Codec\n"
      "                               v0.5): base_id + zigzag deltas, ids printed whole\n"
      "                      default: msgpack when the stream starts with a msgpack map,\n"
      "                      else session (protobuf must be named)\n"
      "      --map FILE      detokenize with this tokenizer map (docs/TOKMAP.md)\n"
      "      --map-hash H    require the map's sha256: \"sha256:\" or \"SHA256:\" and 64 hex\n"
      "                      digits, either case\n"
      "      --skip-special  special tokens print nothing (default: their text)\n"
      "      --replace-unknown  an id the map lacks prints U+FFFD (default: exit 1 naming\n"
      "                      the id and frame)\n"
      "      --reference     the reference client's defaults: --skip-special and\n"
      "                      --replace-unknown (default: embd's strict rendering)\n"
      "      --max-frame N   largest frame payload accepted, bytes (default 16 MiB)\n"
      "      --strict-types  session: a frame type from 0x07 up is an error (exit 1); a usage\n"
      "                      error with --mode msgpack or protobuf\n"
      "      --base-id-field N  protobuf-delta: base_id's field number, 5 (the Internet-Draft,\n"
      "                      default) or 4 (spec v0.5); a usage error with other modes\n"
      "  -o, --output FILE   write here instead of stdout\n"
      "  -h, --help          this text\n"
      "\n"
      "Exit codes: 0 ok, 1 invalid stream or map (the message names the frame and byte),\n"
      "2 usage, 3 I/O, 4 out of memory, 5 the stream carried an ERROR frame, or in a\n"
      "stream mode a frame with finish_reason \"error\" (what came before it is printed,\n"
      "then the error on stderr).\n"
      "\n"
      "Examples:\n"
      "  embd tokens stream.codec\n"
      "  curl -s ... | embd tokens --mode protobuf --map llama3.json -\n",
      f);
}

static int load_map(const char *path, const char *hash, embd_tokmap **map) {
  cli_in in;
  int rc = cli_in_open(&in, path);
  if (rc) return rc;
  char *json;
  size_t len;
  /* a map is one JSON document, read whole: the bound only stops /dev/zero */
  rc = cli_in_read_all(&in, &json, &len, (uint64_t)1 << 31, NULL);
  cli_in_close(&in);
  if (rc) return rc;
  embd_error err;
  embd_result r = embd_tokmap_load(json, len, hash, map, &err);
  free(json);
  if (r != EMBD_OK) {
    cli_msg("%s: %s", cli_esc(path), err.message);
    return r == EMBD_ERR_INVALID_ARGUMENT ? CLI_EUSAGE : cli_exit_for(r);
  }
  return CLI_OK;
}

int cmd_tokens(int argc, char **argv) {
  static const struct option opts[] = {{"mode", required_argument, 0, 'm'},
                                       {"map", required_argument, 0, 'M'},
                                       {"map-hash", required_argument, 0, 'H'},
                                       {"skip-special", no_argument, 0, 'S'},
                                       {"replace-unknown", no_argument, 0, 'U'},
                                       {"reference", no_argument, 0, 'R'},
                                       {"max-frame", required_argument, 0, 'F'},
                                       {"strict-types", no_argument, 0, 'T'},
                                       {"base-id-field", required_argument, 0, 'B'},
                                       {"output", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  tok_mode mode = MODE_AUTO;
  const char *map_path = NULL, *hash = NULL, *out_path = NULL;
  unsigned detok_flags = 0; /* EMBD_DETOK_* from the options; PARTIAL added below */
  int strict_types = 0, base_id_field = 0, o;
  uint64_t max_frame = 16u << 20;
  optind = 1;
  while ((o = getopt_long(argc, argv, "m:o:h", opts, NULL)) != -1) {
    switch (o) {
      case 'm':
        if (!strcmp(optarg, "session")) mode = MODE_SESSION;
        else if (!strcmp(optarg, "msgpack")) mode = MODE_MSGPACK;
        else if (!strcmp(optarg, "protobuf")) mode = MODE_PROTOBUF;
        else if (!strcmp(optarg, "msgpack-delta")) mode = MODE_MSGPACK_DELTA;
        else if (!strcmp(optarg, "protobuf-delta")) mode = MODE_PROTOBUF_DELTA;
        else
          return cli_usage("unknown mode '%s' (session, msgpack, protobuf, msgpack-delta or protobuf-delta)",
                           cli_esc(optarg));
        break;
      case 'M': map_path = optarg; break;
      case 'H': hash = optarg; break;
      case 'S': detok_flags |= EMBD_DETOK_SKIP_SPECIAL; break;
      case 'U': detok_flags |= EMBD_DETOK_REPLACE_UNKNOWN; break;
      case 'R': detok_flags |= EMBD_DETOK_REFERENCE; break;
      case 'F':
        if (cli_parse_u64(optarg, UINT32_MAX, &max_frame) || !max_frame)
          return cli_usage("--max-frame: '%s' is not a size from 1 to 4294967295", cli_esc(optarg));
        break;
      case 'T': strict_types = 1; break;
      case 'B':
        if (strcmp(optarg, "4") && strcmp(optarg, "5"))
          return cli_usage("--base-id-field: '%s' is not 4 or 5", cli_esc(optarg));
        base_id_field = optarg[0] - '0';
        break;
      case 'o': out_path = optarg; break;
      case 'h': usage(stdout); return CLI_OK;
      default: return cli_usage("unknown option");
    }
  }
  if (argc - optind > 1) return cli_usage("one input at most (got %d)", argc - optind);
  if (hash && !map_path) return cli_usage("--map-hash needs --map");
  if (base_id_field && mode != MODE_PROTOBUF_DELTA)
    return cli_usage("--base-id-field is for --mode protobuf-delta");
  if (strict_types && mode != MODE_AUTO && mode != MODE_SESSION)
    return cli_usage("--strict-types is for session frames (the stream modes have no frame types)");
  if (detok_flags && !map_path)
    return cli_usage("--skip-special, --replace-unknown and --reference need --map");
  const char *path = optind < argc ? argv[optind] : "-";

  tok_ctx c;
  memset(&c, 0, sizeof c);
  embd_tokmap *map = NULL;
  int rc = CLI_OK;
  if (map_path) {
    rc = load_map(map_path, hash, &map);
    if (rc) return rc;
    embd_result r =
        embd_detok_create(map, EMBD_DETOK_PARTIAL | detok_flags, &c.detok);
    if (r != EMBD_OK) {
      embd_tokmap_free(map);
      cli_msg("cannot create a detokenizer: %s", embd_strerror(r));
      return cli_exit_for(r);
    }
  }
  cli_in in;
  if ((rc = cli_in_open(&in, path)) != CLI_OK) goto done_map;
  if ((rc = cli_out_check_input(out_path, &in)) != CLI_OK) goto done_in;
  if ((rc = cli_out_open(&c.out, out_path, 0)) != CLI_OK) goto done_in;
  if (mode == MODE_AUTO) {
    const uint8_t *p;
    size_t got;
    if ((rc = cli_in_peek(&in, 1, &p, &got)) != CLI_OK) goto done_out;
    mode = got && ((p[0] & 0xF0) == 0x80 || p[0] == 0xDE || p[0] == 0xDF) ? MODE_MSGPACK
                                                                           : MODE_SESSION;
  }

  embd_codec_reader *sr = NULL;
  embd_codec_msgpack_reader *mr = NULL;
  embd_codec_proto_reader *pr = NULL;
  embd_result r;
  if (mode == MODE_SESSION) {
    embd_codec_reader_options so = {0};
    so.max_payload = (size_t)max_frame;
    so.flags = strict_types ? EMBD_CODEC_STRICT_TYPES : 0;
    so.on_frame = on_session;
    so.user = &c;
    r = embd_codec_reader_create(&so, &sr);
  } else {
    embd_codec_stream_options so = {0};
    so.max_frame_bytes = (size_t)max_frame;
    so.on_frame = on_stream;
    so.user = &c;
    if (mode == MODE_MSGPACK_DELTA || mode == MODE_PROTOBUF_DELTA) so.flags = EMBD_CODEC_STREAM_DELTA;
    if (base_id_field == 4) so.flags |= EMBD_CODEC_STREAM_BASE_ID_4;
    r = mode == MODE_MSGPACK || mode == MODE_MSGPACK_DELTA ? embd_codec_msgpack_create(&so, &mr)
                                                           : embd_codec_proto_create(&so, &pr);
  }
  if (r != EMBD_OK) {
    cli_msg("cannot create the %s reader: %s", mode == MODE_SESSION ? "session"
                                               : mode == MODE_MSGPACK || mode == MODE_MSGPACK_DELTA ? "msgpack"
                                                                                                    : "protobuf",
            embd_strerror(r));
    rc = cli_exit_for(r);
    goto done_out;
  }
  enum { CHUNK = 64 * 1024 };
  uint8_t *chunk = malloc(CHUNK);
  if (!chunk) {
    rc = CLI_EINTERNAL;
    cli_msg("out of memory");
    goto done_readers;
  }
  embd_error err;
  r = EMBD_OK;
  cli_progress prog;
  cli_progress_start(&prog, in.regular ? in.size : 0);
  for (;;) {
    size_t got;
    if ((rc = cli_in_read(&in, chunk, CHUNK, &got)) != CLI_OK) break;
    if (!got) break;
    r = sr ? embd_codec_reader_feed(sr, chunk, got, &err)
           : mr ? embd_codec_msgpack_feed(mr, chunk, got, &err)
                : embd_codec_proto_feed(pr, chunk, got, &err);
    if (r != EMBD_OK) break;
    cli_progress_update(&prog, in.pos);
  }
  cli_progress_end(&prog);
  /* The peer's ERROR frame stopped the reader: the text before it is finished as at the end
   * of a stream, then the error is reported. */
  const int peer = r == EMBD_STOPPED && c.peer_error;
  if (peer) r = EMBD_OK;
  else if (rc == CLI_OK && r == EMBD_OK)
    r = sr ? embd_codec_reader_finish(sr, &err)
           : mr ? embd_codec_msgpack_finish(mr, &err) : embd_codec_proto_finish(pr, &err);
  if (rc == CLI_OK && r == EMBD_OK && c.detok) {
    char tail[8];
    size_t w;
    if (embd_detok_finish(c.detok, tail, sizeof tail, &w, NULL) == EMBD_OK && w)
      if (put(&c, tail, w)) rc = CLI_EIO;
    if (rc == CLI_OK && put(&c, "\n", 1)) rc = CLI_EIO;
  }
  if (rc == CLI_OK && c.failed) rc = c.failed;
  if (rc == CLI_OK && peer) {
    /* stdout first, so that on a terminal the message follows the text it ended (a write
     * error is reported by cli_out_close below) */
    fflush(c.out.f);
    cli_msg("%s: frame %llu at byte %llu: %s", cli_in_label(&in), (unsigned long long)c.peer_index,
            (unsigned long long)c.peer_offset, c.peer_error);
    rc = CLI_EPEER;
  }
  if (rc == CLI_OK && r != EMBD_OK) {
    /* A detokenization error was printed by emit_ids; the reader adds its frame context. */
    if (!c.detok_err) cli_msg("%s: %s", cli_in_label(&in), err.message);
    rc = cli_exit_for(r);
  }
  free(chunk);
done_readers:
  embd_codec_reader_destroy(sr);
  embd_codec_msgpack_destroy(mr);
  embd_codec_proto_destroy(pr);
done_out:
  /* After a peer's ERROR the text before it is kept (-o renamed into place, stdout not cut):
   * it is what the peer sent, and exit 5 says it ended in an error. */
  if (cli_out_close(&c.out, rc == CLI_OK || rc == CLI_EPEER) != CLI_OK &&
      (rc == CLI_OK || rc == CLI_EPEER))
    rc = CLI_EIO;
done_in:
  cli_in_close(&in);
done_map:
  embd_detok_destroy(c.detok);
  embd_tokmap_free(map);
  free(c.text);
  free(c.peer_error);
  return rc;
}
