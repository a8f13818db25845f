// Token transport: what a streamed token costs on the wire and to decode, in one run.
//
//   sse/cjson/1, sse/simdjson/1      OpenAI chat.completion.chunk SSE events, one token
//                                    each, parsed to the token's text (cJSON; simdjson
//                                    on-demand with a reused parser)
//   tokens/{on_frame,dest}/<k>       Codec TOKENS session frames of k ids through
//                                    embd_codec_reader, one feed per frame, ids to host
//                                    order: by the callback (embd_codec_tokens) / by the
//                                    reader into caller memory (tokens_dest)
//   msgpack/<k>, protobuf/<k>        the engines' stream modes through their readers, one
//                                    feed per frame
// for k = 1, 8, 64 tokens per frame. Counters: ns_per_frame (per event), ns_per_token,
// bytes_per_token (wire bytes of the whole stream / tokens), ids_per_second.
// Every path is checked once at start-up to give back the same ids (or texts).
#include <benchmark/benchmark.h>
#include <cjson/cJSON.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <simdjson.h>
#include <string>
#include <vector>

#include "embd.h"
#include "bench_common.h"
#include "embd/codec.h"
#include "embd/codec_stream.h"

namespace {

constexpr size_t kTokens = 4096;

[[noreturn]] void die(const std::string &m) {
  std::fprintf(stderr, "bench_tokens: %s\n", m.c_str());
  std::exit(1);
}

std::vector<uint32_t> g_ids;
std::vector<std::string> g_text;  // the token texts, for the SSE events

struct Stream {
  std::string bytes;                 // the whole stream
  std::vector<size_t> frame_end;     // where each frame (event) ends
  size_t frames = 0;
};

Stream g_sse, g_tokens[3], g_msgpack[3], g_proto[3];
simdjson::padded_string g_sse_padded;
constexpr size_t kPer[3] = {1, 8, 64};

uint64_t rng(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void make_data() {
  static const char *const words[] = {" the", " of", "ing", " and", " model", " token", "s",
                                      " embed", "ding", " vector", ",", ".", " binary",
                                      " wire", " \\\"quoted\\\"", " caf\\u00e9"};
  uint64_t s = 11;
  for (size_t i = 0; i < kTokens; i++) {
    g_ids.push_back(static_cast<uint32_t>(rng(&s) % 151000));
    g_text.push_back(words[rng(&s) % (sizeof words / sizeof *words)]);
  }
  // SSE: one event per token, as OpenAI-compatible servers stream chat completions.
  for (size_t i = 0; i < kTokens; i++) {
    g_sse.bytes += "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":"
                   "\"chat.completion.chunk\",\"created\":1764547200,\"model\":"
                   "\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\","
                   "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" +
                   g_text[i] +
                   "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    g_sse.frame_end.push_back(g_sse.bytes.size());
  }
  g_sse.frames = kTokens;
  g_sse_padded = simdjson::padded_string(g_sse.bytes);
  for (int m = 0; m < 3; m++) {
    const size_t k = kPer[m];
    for (size_t i = 0; i < kTokens; i += k) {
      const size_t n = kTokens - i < k ? kTokens - i : k;
      // TOKENS session frame.
      size_t size, w;
      if (embd_codec_frame_size(EMBD_CODEC_TOKENS, n * 4, &size) != EMBD_OK) die("frame size");
      std::string f(size, '\0');
      if (embd_codec_encode_tokens(&g_ids[i], n, f.data(), f.size(), &w) != EMBD_OK)
        die("encode tokens");
      g_tokens[m].bytes.append(f.data(), w);
      g_tokens[m].frame_end.push_back(g_tokens[m].bytes.size());
      // msgpack and protobuf frames.
      embd_codec_stream_frame sf{};
      sf.ids = &g_ids[i];
      sf.n_ids = n;
      sf.done = i + n == kTokens;
      for (int proto = 0; proto < 2; proto++) {
        Stream &st = proto ? g_proto[m] : g_msgpack[m];
        if ((proto ? embd_codec_proto_encoded_size(&sf, &size)
                   : embd_codec_msgpack_encoded_size(&sf, &size)) != EMBD_OK)
          die("encoded size");
        std::string g(size, '\0');
        if ((proto ? embd_codec_proto_encode(&sf, g.data(), g.size(), &w)
                   : embd_codec_msgpack_encode(&sf, g.data(), g.size(), &w)) != EMBD_OK)
          die("encode stream frame");
        st.bytes.append(g.data(), w);
        st.frame_end.push_back(st.bytes.size());
      }
    }
    g_tokens[m].frames = g_msgpack[m].frames = g_proto[m].frames = g_tokens[m].frame_end.size();
  }
}

// ---- decoders: each returns the number of ids (or texts) it saw, and their sum -----------

struct Sink {
  std::vector<uint32_t> ids;
  size_t n = 0;
  uint64_t sum = 0;
};

embd_result on_tokens(void *user, const embd_codec_frame *f) {
  Sink *s = static_cast<Sink *>(user);
  if (f->type != EMBD_CODEC_TOKENS) return EMBD_OK;
  size_t n;
  embd_result r = embd_codec_tokens(f, s->ids.data() + s->n, s->ids.size() - s->n, &n);
  s->n += n;
  return r;
}

embd_result on_stream_frame(void *user, const embd_codec_stream_frame *f) {
  Sink *s = static_cast<Sink *>(user);
  if (s->n + f->n_ids > s->ids.size()) return EMBD_ERR_OUTPUT_TOO_SMALL;
  std::memcpy(s->ids.data() + s->n, f->ids, f->n_ids * 4);
  s->n += f->n_ids;
  return EMBD_OK;
}

// dest mode: the reader writes each TOKENS frame's ids (host order) where this says.
uint32_t *tokens_dest(void *user, uint32_t, size_t n) {
  Sink *s = static_cast<Sink *>(user);
  if (s->n + n > s->ids.size()) return nullptr;
  uint32_t *d = s->ids.data() + s->n;
  s->n += n;
  return d;
}

// dest: ids straight into s->ids; else on_frame converts each frame's payload.
size_t decode_tokens(const Stream &st, Sink *s, bool dest) {
  embd_codec_reader_options o{};
  o.max_payload = 64 * 4;
  o.on_frame = dest ? nullptr : on_tokens;
  o.tokens_dest = dest ? tokens_dest : nullptr;
  o.user = s;
  embd_codec_reader *r;
  if (embd_codec_reader_create(&o, &r) != EMBD_OK) die("reader");
  s->n = 0;
  size_t at = 0;
  for (size_t e : st.frame_end) {
    if (embd_codec_reader_feed(r, st.bytes.data() + at, e - at, nullptr) != EMBD_OK) die("feed");
    at = e;
  }
  if (embd_codec_reader_finish(r, nullptr) != EMBD_OK) die("finish");
  embd_codec_reader_destroy(r);
  return s->n;
}

template <bool Proto>
size_t decode_mode(const Stream &st, Sink *s) {
  embd_codec_stream_options o{};
  o.max_frame_bytes = 1024;
  o.on_frame = on_stream_frame;
  o.user = s;
  s->n = 0;
  size_t at = 0;
  if (Proto) {
    embd_codec_proto_reader *r;
    if (embd_codec_proto_create(&o, &r) != EMBD_OK) die("proto reader");
    for (size_t e : st.frame_end) {
      if (embd_codec_proto_feed(r, st.bytes.data() + at, e - at, nullptr) != EMBD_OK) die("feed");
      at = e;
    }
    if (embd_codec_proto_finish(r, nullptr) != EMBD_OK) die("finish");
    embd_codec_proto_destroy(r);
  } else {
    embd_codec_msgpack_reader *r;
    if (embd_codec_msgpack_create(&o, &r) != EMBD_OK) die("msgpack reader");
    for (size_t e : st.frame_end) {
      if (embd_codec_msgpack_feed(r, st.bytes.data() + at, e - at, nullptr) != EMBD_OK)
        die("feed");
      at = e;
    }
    if (embd_codec_msgpack_finish(r, nullptr) != EMBD_OK) die("finish");
    embd_codec_msgpack_destroy(r);
  }
  return s->n;
}

// SSE: the JSON after "data: " up to the blank line; the token text is
// choices[0].delta.content. Returns the number of texts; their total length goes to *chars.
size_t decode_sse_cjson(size_t *chars) {
  size_t at = 0, n = 0, c = 0;
  const std::string &b = g_sse.bytes;
  for (size_t e : g_sse.frame_end) {
    const char *json = b.data() + at + 6;  // "data: "
    cJSON *doc = cJSON_ParseWithLength(json, e - at - 8);
    if (!doc) die("cJSON parse");
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "choices"), 0);
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(ch, "delta");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(delta, "content");
    if (!cJSON_IsString(content)) die("cJSON content");
    c += std::strlen(content->valuestring);
    n++;
    cJSON_Delete(doc);
    at = e;
  }
  *chars = c;
  return n;
}

simdjson::ondemand::parser g_parser;

size_t decode_sse_simdjson(size_t *chars) {
  size_t at = 0, n = 0, c = 0;
  const char *base = g_sse_padded.data();
  for (size_t e : g_sse.frame_end) {
    const char *json = base + at + 6;
    const size_t len = e - at - 8;
    // The rest of the stream (and the padded string's padding after the last event) is
    // readable after each event: the padding simdjson needs.
    simdjson::ondemand::document doc;
    if (g_parser.iterate(json, len, len + (g_sse_padded.size() - (e - 2)) + simdjson::SIMDJSON_PADDING)
            .get(doc))
      die("simdjson iterate");
    std::string_view text;
    if (doc["choices"].at(0)["delta"]["content"].get_string().get(text)) die("simdjson content");
    c += text.size();
    n++;
    at = e;
  }
  *chars = c;
  return n;
}

void counters(benchmark::State &state, const Stream &st, size_t tokens) {
  const double iters = static_cast<double>(state.iterations());
  state.counters["ns_per_frame"] = benchmark::Counter(
      iters * static_cast<double>(st.frames) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["ns_per_token"] = benchmark::Counter(
      iters * static_cast<double>(tokens) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["ids_per_second"] =
      benchmark::Counter(iters * static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["bytes_per_token"] =
      static_cast<double>(st.bytes.size()) / static_cast<double>(tokens);
}

void bm_sse(benchmark::State &state, bool simd) {
  size_t chars = 0;
  for (auto _ : state) {
    size_t n = simd ? decode_sse_simdjson(&chars) : decode_sse_cjson(&chars);
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(chars);
  }
  counters(state, g_sse, kTokens);
}

void bm_tokens(benchmark::State &state, int m, bool dest) {
  Sink s;
  s.ids.resize(kTokens);
  for (auto _ : state) {
    size_t n = decode_tokens(g_tokens[m], &s, dest);
    benchmark::DoNotOptimize(n);
    benchmark::ClobberMemory();
  }
  counters(state, g_tokens[m], kTokens);
}

void bm_mode(benchmark::State &state, int m, bool proto) {
  Sink s;
  s.ids.resize(kTokens);
  for (auto _ : state) {
    size_t n = proto ? decode_mode<true>(g_proto[m], &s) : decode_mode<false>(g_msgpack[m], &s);
    benchmark::DoNotOptimize(n);
    benchmark::ClobberMemory();
  }
  counters(state, proto ? g_proto[m] : g_msgpack[m], kTokens);
}

void check() {
  size_t c1, c2;
  if (decode_sse_cjson(&c1) != kTokens || decode_sse_simdjson(&c2) != kTokens || c1 != c2)
    die("SSE decoders disagree");
  for (int m = 0; m < 3; m++) {
    Sink s;
    s.ids.resize(kTokens);
    for (bool dest : {false, true})
      if (decode_tokens(g_tokens[m], &s, dest) != kTokens || s.ids != g_ids)
        die("TOKENS ids differ");
    if (decode_mode<false>(g_msgpack[m], &s) != kTokens || s.ids != g_ids) die("msgpack ids differ");
    if (decode_mode<true>(g_proto[m], &s) != kTokens || s.ids != g_ids) die("protobuf ids differ");
  }
}

}  // namespace

int main(int argc, char **argv) {
  make_data();
  check();
  benchmark::AddCustomContext("embd_version", embd_version());
  benchmark::AddCustomContext("embd_bswap32_active", embd_impl_active(EMBD_KERNEL_BSWAP32));
  benchmark::RegisterBenchmark("sse/cjson/1", bm_sse, false);
  benchmark::RegisterBenchmark("sse/simdjson/1", bm_sse, true);
  for (int m = 0; m < 3; m++) {
    const std::string k = std::to_string(kPer[m]);
    benchmark::RegisterBenchmark(("tokens/on_frame/" + k).c_str(), bm_tokens, m, false);
    benchmark::RegisterBenchmark(("tokens/dest/" + k).c_str(), bm_tokens, m, true);
    benchmark::RegisterBenchmark(("msgpack/" + k).c_str(), bm_mode, m, false);
    benchmark::RegisterBenchmark(("protobuf/" + k).c_str(), bm_mode, m, true);
  }
  if (embd_bench::run_registered(argc, argv)) return 1;
  return 0;
}
