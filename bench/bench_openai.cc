// OpenAI-compatible /v1/embeddings responses: embd_openai_decode beside the anchors, in
// one run, on the same bodies; ns per vector. Whole responses of 1 and of 100 x
// 1536-dim embeddings in four forms:
//   float     "%.9g" of uniform values in [-1, 1) (the old body: 9-10 digits each);
//   shortest  what servers send: unit-norm vectors (Gaussian, normalised) as float32, each
//             value the shortest text that round-trips (std::to_chars: "0.0105335",
//             "-5.2e-05"), compact ("a,b");
//   pretty    the same numbers pretty-printed (a newline and 8 spaces before each number,
//             as OpenAI's own responses are);
//   base64    the raw float32s as base64 strings.
// Anchors: cjson_openssl (cJSON_Parse + EVP_DecodeBlock: the baseline a C user writes);
// simdjson (Debian's, on-demand, get_double per number / get_raw_json_string + a memchr
// for escapes + OpenSSL's EVP_DecodeBlock per base64 string); ff_double and ff_float
// (fast_float's from_chars<double> / <float> over the numbers alone, no JSON: each
// vector's numbers as one "a,b,c" string, the comma skipped). The issue-15 target is
// embd / ff_double <= 0.8 on shortest and pretty. "b64_only" times
// embd_base64_decode_f32 over the strings alone: our time minus it is the JSON part. At
// start-up every contender's floats are checked bit for bit against embd's.
#include <benchmark/benchmark.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include <fast_float/fast_float.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "unit_rows.h"

#define EMBD_STR_(x) #x
#define EMBD_STR(x) EMBD_STR_(x)

namespace {

using embd_bench::die;
constexpr size_t kDims = 1536;

enum Form { kFloat, kShortest, kPretty, kBase64, kForms };
const char *const kFormName[kForms] = {"float", "shortest", "pretty", "base64"};

struct Doc {
  std::string json;              // the body, followed by 64 readable bytes (padding)
  std::vector<std::string> b64;  // the base64 strings (base64 form)
  std::vector<std::string> nums; // each vector's numbers as "a,b,c" (number forms)
  std::vector<float> want;       // the floats the body holds, row-major
  size_t n;
};

float val(size_t i, size_t j) {  // reproducible, full-precision float32 values
  uint32_t x = static_cast<uint32_t>(i * 2654435761u + j * 40503u + 12345u);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
}

Doc make(size_t n, Form form) {
  Doc d;
  d.n = n;
  const bool b64 = form == kBase64;
  std::string &s = d.json;
  s = "{\"object\":\"list\",\"data\":[";
  std::vector<float> v(kDims);
  char tmp[32];
  for (size_t i = 0; i < n; i++) {
    if (form == kShortest || form == kPretty) unit_row(i, v.data(), kDims);
    else for (size_t j = 0; j < kDims; j++) v[j] = val(i, j);
    d.want.insert(d.want.end(), v.begin(), v.end());
    s += i ? "," : "";
    s += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":";
    if (b64) {
      size_t cap = 0, w = 0;
      embd_base64_encoded_size(kDims * 4, 0, &cap);
      std::string t(cap, '\0');
      if (embd_base64_encode_f32(v.data(), kDims, 0, &t[0], cap, &w) != EMBD_OK) die("encode");
      t.resize(w);
      d.b64.push_back(t);
      s += "\"" + t + "\"";
    } else {
      std::string nums;
      s += "[";
      for (size_t j = 0; j < kDims; j++) {
        if (form == kFloat) {
          snprintf(tmp, sizeof tmp, "%.9g", static_cast<double>(v[j]));
        } else {
          auto r = std::to_chars(tmp, tmp + sizeof tmp - 1, v[j]);  // shortest round trip
          *r.ptr = 0;
        }
        nums += (j ? "," : "") + std::string(tmp);
        s += (j ? "," : "") + std::string(form == kPretty ? "\n        " : "") + tmp;
      }
      s += form == kPretty ? "\n      ]" : "]";
      d.nums.push_back(nums);
    }
    s += "}";
  }
  s += "],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":8,\"total_tokens\":8}}";
  return d;
}

// The baseline: cJSON + EVP_DecodeBlock, rows placed by index. Returns false on any problem.
bool baseline(const Doc &d, std::vector<float> &out, std::vector<unsigned char> &bytes) {
  cJSON *root = cJSON_ParseWithLength(d.json.data(), d.json.size());
  if (!root) return false;
  bool ok = true;
  cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
  int n = cJSON_GetArraySize(data);
  out.resize(static_cast<size_t>(n) * kDims);
  cJSON *item;
  cJSON_ArrayForEach(item, data) {
    cJSON *idx = cJSON_GetObjectItemCaseSensitive(item, "index");
    cJSON *emb = cJSON_GetObjectItemCaseSensitive(item, "embedding");
    if (!cJSON_IsNumber(idx) || idx->valueint < 0 || idx->valueint >= n) { ok = false; break; }
    float *row = out.data() + static_cast<size_t>(idx->valueint) * kDims;
    if (cJSON_IsString(emb)) {
      size_t m = strlen(emb->valuestring);
      bytes.resize(m / 4 * 3 + 3);
      int w = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char *>(emb->valuestring),
                              static_cast<int>(m));
      int pads = (m >= 1 && emb->valuestring[m - 1] == '=') + (m >= 2 && emb->valuestring[m - 2] == '=');
      if (w < 0 || static_cast<size_t>(w - pads) != kDims * 4) { ok = false; break; }
      memcpy(row, bytes.data(), kDims * 4);  // little-endian host
    } else if (cJSON_IsArray(emb)) {
      size_t j = 0;
      cJSON *x;
      cJSON_ArrayForEach(x, emb) {
        if (!cJSON_IsNumber(x) || j >= kDims) { ok = false; break; }
        row[j++] = static_cast<float>(x->valuedouble);
      }
      if (j != kDims) ok = false;
    } else {
      ok = false;
    }
  }
  cJSON_Delete(root);
  return ok;
}

// simdjson (Debian's) walking the body: data[], each embedding an array (get_double per
// number, narrowed to float) or a base64 string (its raw token, a memchr for escapes, then
// OpenSSL's EVP_DecodeBlock). Rows placed by index. Returns false on any problem.
bool simdjson_walk(simdjson::ondemand::parser &parser, const simdjson::padded_string &body,
                   std::vector<float> &out, std::vector<unsigned char> &bytes) {
  simdjson::ondemand::document doc;
  if (parser.iterate(body).get(doc)) return false;
  simdjson::ondemand::array data;
  if (doc["data"].get_array().get(data)) return false;
  for (auto item_r : data) {
    simdjson::ondemand::object item;
    if (item_r.get_object().get(item)) return false;
    uint64_t idx = 0;
    if (item["index"].get_uint64().get(idx)) return false;
    if ((idx + 1) * kDims > out.size()) out.resize((idx + 1) * kDims);
    float *row = out.data() + idx * kDims;
    simdjson::ondemand::value emb;
    if (item["embedding"].get(emb)) return false;
    simdjson::ondemand::json_type t;
    if (emb.type().get(t)) return false;
    if (t == simdjson::ondemand::json_type::string) {
      simdjson::ondemand::raw_json_string raw;
      if (emb.get_raw_json_string().get(raw)) return false;
      const char *p = raw.raw();
      const char *q = static_cast<const char *>(memchr(p, '"', body.size() - (p - body.data())));
      if (!q || memchr(p, '\\', q - p)) return false;  // escapes: not base64
      const size_t m = q - p;
      bytes.resize(m / 4 * 3 + 3);
      int w = EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char *>(p), static_cast<int>(m));
      int pads = (m >= 1 && p[m - 1] == '=') + (m >= 2 && p[m - 2] == '=');
      if (w < 0 || static_cast<size_t>(w - pads) != kDims * 4) return false;
      memcpy(row, bytes.data(), kDims * 4);  // little-endian host
    } else {
      size_t j = 0;
      for (auto x : emb.get_array()) {
        double v;
        if (x.get_double().get(v) || j >= kDims) return false;
        row[j++] = static_cast<float>(v);
      }
      if (j != kDims) return false;
    }
  }
  return true;
}

// fast_float over the numbers alone: each vector's "a,b,c" string, from_chars<T> per number.
template <class T>
bool ff_numbers(const Doc &d, std::vector<float> &out) {
  out.resize(d.n * kDims);
  float *o = out.data();
  for (const std::string &s : d.nums) {
    const char *p = s.data(), *e = p + s.size();
    for (size_t j = 0; j < kDims; j++) {
      T v;
      auto r = fast_float::from_chars(p, e, v);
      if (r.ec != std::errc()) return false;
      *o++ = static_cast<float>(v);
      p = r.ptr + 1;  // the comma (or one past the end after the last)
    }
  }
  return true;
}

size_t mismatches(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size()) return a.size() + b.size();
  size_t n = 0;
  for (size_t i = 0; i < a.size(); i++) n += memcmp(&a[i], &b[i], 4) != 0;
  return n;
}

struct Fixture {
  Doc docs[2][kForms];  // [n==100][form]
  Fixture() {
    simdjson::ondemand::parser parser;
    for (int big = 0; big < 2; big++)
      for (int f = 0; f < kForms; f++) {
        Doc &d = docs[big][f];
        d = make(big ? 100 : 1, static_cast<Form>(f));
        // embd: bit for bit the source floats (the exactness requirement)
        embd_openai_embeddings e;
        embd_openai_init(&e);
        embd_error err;
        embd_openai_options o{};
        o.expected_count = d.n;
        if (embd_openai_decode(&e, d.json.data(), d.json.size(), &o, &err) != EMBD_OK)
          die(std::string("embd_openai_decode: ") + err.message);
        if (e.count * e.dims != d.want.size() || memcmp(e.values, d.want.data(), d.want.size() * 4) != 0)
          die(std::string("embd differs from the source floats (") + kFormName[f] + ")");
        embd_openai_free(&e);
        // the anchors: each must read the body; a narrowed double may differ (double
        // rounding), which is reported, not fatal
        std::vector<float> ref;
        std::vector<unsigned char> bytes;
        if (!baseline(d, ref, bytes)) die("cJSON + OpenSSL failed");
        size_t bad = mismatches(ref, d.want);
        simdjson::padded_string body(d.json);
        if (!simdjson_walk(parser, body, ref, bytes)) die("simdjson walk failed");
        bad += mismatches(ref, d.want);
        if (f != kBase64) {
          if (!ff_numbers<double>(d, ref)) die("fast_float<double> failed");
          bad += mismatches(ref, d.want);
          if (!ff_numbers<float>(d, ref) || mismatches(ref, d.want)) die("fast_float<float> differs");
        }
        if (bad) fprintf(stderr, "note: %s: %zu floats from the double-parsing anchors differ (double rounding)\n", kFormName[f], bad);
      }
  }
};

Fixture &fx() {
  static Fixture f;
  return f;
}

void per_vector(benchmark::State &st, size_t n) {
  st.counters["ns/vector"] =
      benchmark::Counter(static_cast<double>(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                            benchmark::Counter::kInvert);
}

void BM_embd(benchmark::State &st, int big, int form, size_t padding) {
  embd_bench::clean_upper_state();
  const Doc &d = fx().docs[big][form];
  // padding 64: a buffer with 64 readable bytes after the body (parsed in place)
  std::vector<char> buf(d.json.size() + 64, ' ');
  memcpy(buf.data(), d.json.data(), d.json.size());
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_openai_options o{};
  o.padding = padding;
  for (auto _ : st) {
    if (embd_openai_decode(&e, buf.data(), d.json.size(), &o, &err) != EMBD_OK) die(err.message);
    benchmark::DoNotOptimize(e.values);
  }
  embd_openai_free(&e);
  per_vector(st, d.n);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * d.json.size()));
}

void BM_baseline(benchmark::State &st, int big, int form) {
  const Doc &d = fx().docs[big][form];
  std::vector<float> out;
  std::vector<unsigned char> bytes;
  for (auto _ : st) {
    if (!baseline(d, out, bytes)) die("baseline");
    benchmark::DoNotOptimize(out.data());
  }
  per_vector(st, d.n);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * d.json.size()));
}

void BM_simdjson(benchmark::State &st, int big, int form) {
  const Doc &d = fx().docs[big][form];
  simdjson::ondemand::parser parser;
  simdjson::padded_string body(d.json);
  std::vector<float> out(d.n * kDims);
  std::vector<unsigned char> bytes;
  for (auto _ : st) {
    if (!simdjson_walk(parser, body, out, bytes)) die("simdjson");
    benchmark::DoNotOptimize(out.data());
  }
  per_vector(st, d.n);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * d.json.size()));
}

template <class T>
void BM_ff(benchmark::State &st, int big, int form) {
  const Doc &d = fx().docs[big][form];
  std::vector<float> out(d.n * kDims);
  for (auto _ : st) {
    if (!ff_numbers<T>(d, out)) die("fast_float");
    benchmark::DoNotOptimize(out.data());
  }
  per_vector(st, d.n);
}

// Our base64 part alone: the same strings through embd_base64_decode_f32.
void BM_b64_only(benchmark::State &st, int big) {
  embd_bench::clean_upper_state();
  const Doc &d = fx().docs[big][kBase64];
  std::vector<float> out(d.n * kDims);
  embd_error err;
  for (auto _ : st) {
    for (size_t i = 0; i < d.n; i++) {
      size_t c;
      if (embd_base64_decode_f32(d.b64[i].data(), d.b64[i].size(), 0, out.data() + i * kDims, kDims,
                                 &c, &err) != EMBD_OK)
        die(err.message);
    }
    benchmark::DoNotOptimize(out.data());
  }
  per_vector(st, d.n);
}

void register_all() {
  fx();
  for (int big = 0; big < 2; big++) {
    const char *n = big ? "100x1536" : "1x1536";
    for (int f = 0; f < kForms; f++) {
      std::string tag = std::string(n) + "/" + kFormName[f];
      benchmark::RegisterBenchmark(("openai/" + tag + "/embd").c_str(), BM_embd, big, f, size_t{64});
      benchmark::RegisterBenchmark(("openai/" + tag + "/embd_copy").c_str(), BM_embd, big, f, size_t{0});
      benchmark::RegisterBenchmark(("openai/" + tag + "/simdjson").c_str(), BM_simdjson, big, f);
      if (f != kBase64) {
        benchmark::RegisterBenchmark(("openai/" + tag + "/ff_double").c_str(), BM_ff<double>, big, f);
        benchmark::RegisterBenchmark(("openai/" + tag + "/ff_float").c_str(), BM_ff<float>, big, f);
      }
      benchmark::RegisterBenchmark(("openai/" + tag + "/cjson_openssl").c_str(), BM_baseline, big, f);
    }
    benchmark::RegisterBenchmark((std::string("openai/") + n + "/base64/b64_only").c_str(), BM_b64_only, big);
  }
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("simdjson", EMBD_STR(SIMDJSON_VERSION));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
