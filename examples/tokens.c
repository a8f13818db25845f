/* examples/tokens.c: Codec token frames end to end, both sides in one program.
 *
 * Client -> server: a HELLO frame listing the tokenizers the client accepts.
 * Server: parses it, picks a tokenizer it supports, answers READY (tokenizer id, map URL and
 *   the map's sha256), then streams the generated token ids as TOKENS frames of 3 ids and
 *   ends with EOS.
 * Client: reads the server's bytes in 7-byte chunks with embd_codec_reader; on READY it
 *   loads the tokenizer map (here a JSON string in the program instead of a download from
 *   map_url), checked against READY's map_hash; each TOKENS frame goes through a streaming
 *   detokenizer, which holds an emoji split across frames (byte-fallback ids) until it is
 *   complete. The text must come out exactly.
 * The same ids are then sent as protobuf stream-mode frames (stream_format: "protobuf", as
 * vLLM / SGLang forks ship them) and read back with the protobuf reader in 5-byte chunks.
 * Exits 0 on success, 1 on any failure. Public API only: #include <embd.h>.
 */
#include <embd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "tokens: FAILED: " __VA_ARGS__);  \
      fprintf(stderr, "\n");                            \
      exit(1);                                          \
    }                                                   \
  } while (0)

/* A tiny tokenizer map (schema v0.1, docs/TOKMAP.md): 3 special tokens, the 256
 * byte-fallback ids 3..258 (id 3 + b is the raw byte b; the range need not be listed in
 * "tokens"), and a few text pieces. */
static const char MAP_JSON[] =
    "{\"id\":\"embd/example-v1\",\"version\":\"0.1.0\",\"vocab_size\":270,"
    "\"tokens\":{\"0\":\"<unk>\",\"1\":\"<s>\",\"2\":\"</s>\","
    "\"259\":\"Hello\",\"260\":\",\",\"261\":\" world\",\"262\":\"!\",\"263\":\" \","
    "\"264\":\" caf\\u00e9\",\"265\":\" \\u65e5\\u672c\"},"
    "\"special_tokens\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2},"
    "\"byte_fallback_start\":3,\"byte_fallback_end\":258}";

/* What the model "generated": <s> Hello, world! 🚀 café 日本 </s>, the rocket (F0 9F 9A 80)
 * as four byte-fallback ids that the 3-id framing splits across two TOKENS frames. */
static const uint32_t IDS[] = {1,   259, 260, 261, 262, 263, 3 + 0xF0, 3 + 0x9F,
                               3 + 0x9A, 3 + 0x80, 264, 265, 2};
#define N_IDS (sizeof IDS / sizeof IDS[0])
static const char TEXT[] = "Hello, world! \xF0\x9F\x9A\x80 caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC";

/* ---- the client's state while it reads the server's frames ---------------------------- */
typedef struct client {
  embd_tokmap *map;
  embd_detok *detok;
  char text[256];
  size_t text_len;
  int eos;
  uint32_t ids[64];
  size_t n_ids;
} client;

/* Appends the UTF-8 of ids to c->text (embd_detok_feed / _finish are all or nothing). */
static embd_result detok(client *c, const uint32_t *ids, size_t n, embd_error *err) {
  size_t w;
  embd_result r = ids ? embd_detok_feed(c->detok, ids, n, c->text + c->text_len,
                                        sizeof c->text - c->text_len, &w, err)
                      : embd_detok_finish(c->detok, c->text + c->text_len,
                                          sizeof c->text - c->text_len, &w, err);
  if (r == EMBD_OK) c->text_len += w;
  return r;
}

static embd_result on_frame(void *user, const embd_codec_frame *f) {
  client *c = user;
  embd_error err;
  embd_result r;
  switch (f->type) {
    case EMBD_CODEC_READY: {
      embd_codec_ready ready;
      r = embd_codec_ready_parse((const char *)f->payload, f->payload_len, &ready, &err);
      if (r != EMBD_OK) return r;
      printf("tokens: client: READY tokenizer %s, map %s\n        map_hash %s\n",
             ready.tokenizer_id, ready.map_url, ready.map_hash);
      /* "Download" map_url, then trust it only if its sha256 is the one READY announced. */
      r = embd_tokmap_load(MAP_JSON, sizeof MAP_JSON - 1, ready.map_hash, &c->map, &err);
      embd_codec_ready_free(&ready);
      if (r != EMBD_OK) {
        fprintf(stderr, "tokens: map: %s\n", err.message);
        return r;
      }
      /* PARTIAL: a UTF-8 sequence cut at the end of a frame waits for the next frame;
       * SKIP_SPECIAL: <s> and </s> are not text. */
      return embd_detok_create(c->map, EMBD_DETOK_PARTIAL | EMBD_DETOK_SKIP_SPECIAL,
                               &c->detok);
    }
    case EMBD_CODEC_TOKENS: {
      uint32_t ids[16];
      size_t n;
      if (c->detok == NULL) return EMBD_ERR_CODEC_HANDSHAKE; /* TOKENS before READY */
      r = embd_codec_tokens(f, ids, 16, &n); /* big-endian payload -> host ids */
      if (r != EMBD_OK) return r;
      size_t before = c->text_len;
      r = detok(c, ids, n, &err);
      if (r != EMBD_OK) {
        fprintf(stderr, "tokens: detok: %s\n", err.message);
        return r;
      }
      printf("tokens: client: frame %u, %zu ids -> \"%.*s\" (%zu bytes held back)\n",
             (unsigned)f->index, n, (int)(c->text_len - before), c->text + before,
             embd_detok_pending(c->detok));
      memcpy(c->ids + c->n_ids, ids, n * sizeof *ids);
      c->n_ids += n;
      return EMBD_OK;
    }
    case EMBD_CODEC_EOS:
      c->eos = 1;
      return c->detok ? detok(c, NULL, 0, &err) : EMBD_ERR_CODEC_HANDSHAKE;
    default:
      return EMBD_OK; /* ERROR, latents: not in this example */
  }
}

/* The protobuf reader's callback: collects the ids of every CodecFrame. */
typedef struct proto_sink {
  uint32_t ids[64];
  size_t n_ids;
  int done;
  char finish_reason[16];
} proto_sink;

static embd_result on_proto(void *user, const embd_codec_stream_frame *f) {
  proto_sink *s = user;
  if (s->n_ids + f->n_ids > 64) return EMBD_ERR_OUTPUT_TOO_SMALL;
  if (f->n_ids) memcpy(s->ids + s->n_ids, f->ids, f->n_ids * sizeof *f->ids);
  s->n_ids += f->n_ids;
  if (f->done) s->done = 1;
  if (f->finish_reason && f->finish_reason_len < sizeof s->finish_reason) {
    memcpy(s->finish_reason, f->finish_reason, f->finish_reason_len);
    s->finish_reason[f->finish_reason_len] = '\0';
  }
  return EMBD_OK;
}

int main(void) {
  embd_error err;
  embd_result r;
  size_t n;

  /* ---- client -> server: HELLO ---- */
  static const char *const accept[] = {"meta-llama/llama-3", "embd/example-v1"};
  embd_codec_hello hello = {.codec_version = "0.5", .accept_tokenizers = {accept, 2}};
  char json[512];
  size_t json_len;
  r = embd_codec_hello_build(&hello, json, sizeof json, &json_len, &err);
  CHECK(r == EMBD_OK, "hello_build: %s", err.message);
  uint8_t hello_frame[512];
  size_t hello_len;
  r = embd_codec_encode_frame(EMBD_CODEC_HELLO, json, json_len, hello_frame,
                              sizeof hello_frame, &hello_len);
  CHECK(r == EMBD_OK, "encode HELLO: %s", embd_strerror(r));

  /* ---- server: read HELLO, pick a tokenizer, answer READY ---- */
  embd_codec_frame f;
  r = embd_codec_decode_frame(hello_frame, hello_len, NULL, &f, &n, &err);
  CHECK(r == EMBD_OK && f.type == EMBD_CODEC_HELLO, "decode HELLO: %s", err.message);
  embd_codec_hello got;
  r = embd_codec_hello_parse((const char *)f.payload, f.payload_len, &got, &err);
  CHECK(r == EMBD_OK, "hello_parse: %s", err.message);
  static const char *const supported[] = {"embd/example-v1"};
  size_t pick;
  r = embd_codec_pick_tokenizer(&got, supported, 1, &pick, &err);
  CHECK(r == EMBD_OK, "pick_tokenizer: %s", err.message);
  printf("tokens: server: HELLO codec %s, picked tokenizer %s (client's choice #%zu)\n",
         got.codec_version, got.accept_tokenizers.v[pick], pick + 1);
  embd_codec_hello_free(&got);

  char map_hash[EMBD_TOKMAP_SHA256_SIZE];
  CHECK(embd_tokmap_sha256(MAP_JSON, sizeof MAP_JSON - 1, map_hash) == EMBD_OK, "sha256");
  embd_codec_ready ready = {.codec_version = "0.5",
                            .tokenizer_id = "embd/example-v1",
                            .map_url = "https://example.invalid/maps/example-v1.json",
                            .map_hash = map_hash};
  r = embd_codec_ready_build(&ready, json, sizeof json, &json_len, &err);
  CHECK(r == EMBD_OK, "ready_build: %s", err.message);

  /* the server's byte stream: READY, TOKENS frames of at most 3 ids, EOS */
  static uint8_t wire[1024];
  size_t len = 0;
  r = embd_codec_encode_frame(EMBD_CODEC_READY, json, json_len, wire, sizeof wire, &n);
  CHECK(r == EMBD_OK, "encode READY: %s", embd_strerror(r));
  len += n;
  r = embd_codec_encode_tokens_frames(IDS, N_IDS, 3, wire + len, sizeof wire - len, &n);
  CHECK(r == EMBD_OK, "encode TOKENS: %s", embd_strerror(r));
  len += n;
  r = embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, wire + len, sizeof wire - len, &n);
  CHECK(r == EMBD_OK, "encode EOS: %s", embd_strerror(r));
  len += n;
  printf("tokens: server: %zu ids -> %zu bytes of session frames\n", N_IDS, len);

  /* ---- client: the stream reader, 7-byte chunks ---- */
  client c = {0};
  embd_codec_reader_options ro = {.max_payload = 4096, .on_frame = on_frame, .user = &c};
  embd_codec_reader *reader;
  CHECK(embd_codec_reader_create(&ro, &reader) == EMBD_OK, "reader_create");
  for (size_t off = 0; off < len; off += 7) {
    r = embd_codec_reader_feed(reader, wire + off, len - off < 7 ? len - off : 7, &err);
    CHECK(r == EMBD_OK, "reader at byte %zu: %s", err.offset, err.message);
  }
  r = embd_codec_reader_finish(reader, &err);
  CHECK(r == EMBD_OK, "reader finish: %s", err.message);
  embd_codec_reader_destroy(reader);
  CHECK(c.eos, "no EOS");
  CHECK(c.n_ids == N_IDS && memcmp(c.ids, IDS, sizeof IDS) == 0, "ids differ");
  CHECK(c.text_len == sizeof TEXT - 1 && memcmp(c.text, TEXT, c.text_len) == 0,
        "text \"%.*s\"", (int)c.text_len, c.text);
  printf("tokens: client: text \"%.*s\"\n", (int)c.text_len, c.text);

  /* ---- the same ids in protobuf stream mode: [u32 BE length][CodecFrame] per frame ---- */
  static uint8_t pb[512];
  size_t pb_len = 0;
  for (size_t i = 0; i < N_IDS; i += 4) {
    embd_codec_stream_frame sf = {0};
    sf.ids = IDS + i;
    sf.n_ids = N_IDS - i < 4 ? N_IDS - i : 4;
    if (i + sf.n_ids == N_IDS) { /* the last frame says why the stream ends */
      sf.done = 1;
      sf.finish_reason = "stop";
      sf.finish_reason_len = 4;
    }
    r = embd_codec_proto_encode(&sf, pb + pb_len, sizeof pb - pb_len, &n);
    CHECK(r == EMBD_OK, "proto_encode: %s", embd_strerror(r));
    pb_len += n;
  }
  proto_sink sink = {0};
  embd_codec_stream_options po = {.max_frame_bytes = 1024, .on_frame = on_proto, .user = &sink};
  embd_codec_proto_reader *pr;
  CHECK(embd_codec_proto_create(&po, &pr) == EMBD_OK, "proto_create");
  for (size_t off = 0; off < pb_len; off += 5) {
    r = embd_codec_proto_feed(pr, pb + off, pb_len - off < 5 ? pb_len - off : 5, &err);
    CHECK(r == EMBD_OK, "proto reader: %s", err.message);
  }
  r = embd_codec_proto_finish(pr, &err);
  CHECK(r == EMBD_OK, "proto finish: %s", err.message);
  unsigned long long pb_frames = (unsigned long long)embd_codec_proto_frames(pr);
  embd_codec_proto_destroy(pr);
  CHECK(sink.n_ids == N_IDS && memcmp(sink.ids, IDS, sizeof IDS) == 0, "protobuf ids differ");
  CHECK(sink.done && strcmp(sink.finish_reason, "stop") == 0, "protobuf: no done/stop");
  printf("tokens: protobuf mode: %llu frames, %zu bytes, %zu ids back, finish_reason %s\n",
         pb_frames, pb_len, sink.n_ids, sink.finish_reason);

  /* the protobuf ids detokenize to the same text (one complete feed: no PARTIAL) */
  embd_detok *d;
  CHECK(embd_detok_create(c.map, EMBD_DETOK_SKIP_SPECIAL, &d) == EMBD_OK, "detok_create");
  char text[256];
  r = embd_detok_feed(d, sink.ids, sink.n_ids, text, sizeof text, &n, &err);
  CHECK(r == EMBD_OK && n == sizeof TEXT - 1 && memcmp(text, TEXT, n) == 0,
        "protobuf text: %s", r == EMBD_OK ? "differs" : err.message);
  embd_detok_destroy(d);

  embd_detok_destroy(c.detok);
  embd_tokmap_free(c.map);
  printf("tokens: ok\n");
  return 0;
}
