// OpenAI-compatible /v1/embeddings responses: embd_openai_decode (simdjson on-demand +
// embd base64) beside the baseline a C user would write: cJSON_Parse, walk data[], and
// EVP_DecodeBlock (OpenSSL) for base64 strings / cJSON number arrays -> floats. Whole
// responses of 1 and of 100 x 1536-dim embeddings, float and base64 forms; ns per vector.
// "b64_only" times embd_base64_decode_f32 over the same strings alone: our time minus it
// is the JSON part. At start-up every contender's floats are checked bit for bit against
// embd's.
#include <benchmark/benchmark.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using embd_bench::die;
constexpr size_t kDims = 1536;

struct Doc {
  std::string json;              // the body, followed by 64 readable bytes (padding)
  std::vector<std::string> b64;  // the base64 strings (base64 form)
  size_t n;
};

float val(size_t i, size_t j) {  // reproducible, full-precision float32 values
  uint32_t x = static_cast<uint32_t>(i * 2654435761u + j * 40503u + 12345u);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
}

Doc make(size_t n, bool b64) {
  Doc d;
  d.n = n;
  std::string &s = d.json;
  s = "{\"object\":\"list\",\"data\":[";
  std::vector<float> v(kDims);
  char tmp[32];
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < kDims; j++) v[j] = val(i, j);
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
      s += "[";
      for (size_t j = 0; j < kDims; j++) {
        snprintf(tmp, sizeof tmp, "%s%.9g", j ? "," : "", static_cast<double>(v[j]));
        s += tmp;
      }
      s += "]";
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

struct Fixture {
  Doc docs[2][2];  // [n==100][b64]
  Fixture() {
    for (int big = 0; big < 2; big++)
      for (int b = 0; b < 2; b++) {
        Doc &d = docs[big][b];
        d = make(big ? 100 : 1, b);
        // check: embd == baseline, bit for bit
        embd_openai_embeddings e;
        embd_openai_init(&e);
        embd_error err;
        embd_openai_options o{};
        o.expected_count = d.n;
        if (embd_openai_decode(&e, d.json.data(), d.json.size(), &o, &err) != EMBD_OK)
          die(std::string("embd_openai_decode: ") + err.message);
        std::vector<float> ref;
        std::vector<unsigned char> bytes;
        if (!baseline(d, ref, bytes)) die("baseline failed");
        if (e.count * e.dims != ref.size() || memcmp(e.values, ref.data(), ref.size() * 4) != 0)
          die("embd and cJSON + OpenSSL disagree");
        for (size_t i = 0; i < d.n; i++)
          for (size_t j = 0; j < kDims; j++) {
            float v = val(i, j);
            if (memcmp(&e.values[i * kDims + j], &v, 4) != 0) die("embd differs from the source floats");
          }
        embd_openai_free(&e);
        d.json.append(64, ' ');  // padding, outside the body's length
        d.json.resize(d.json.size() - 64);
        d.json.reserve(d.json.size() + 64);
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

void BM_embd(benchmark::State &st, int big, int b64, size_t padding) {
  embd_bench::clean_upper_state();
  const Doc &d = fx().docs[big][b64];
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

void BM_baseline(benchmark::State &st, int big, int b64) {
  const Doc &d = fx().docs[big][b64];
  std::vector<float> out;
  std::vector<unsigned char> bytes;
  for (auto _ : st) {
    if (!baseline(d, out, bytes)) die("baseline");
    benchmark::DoNotOptimize(out.data());
  }
  per_vector(st, d.n);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * d.json.size()));
}

// Our base64 part alone: the same strings through embd_base64_decode_f32.
void BM_b64_only(benchmark::State &st, int big) {
  embd_bench::clean_upper_state();
  const Doc &d = fx().docs[big][1];
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
    for (int b64 = 0; b64 < 2; b64++) {
      const char *f = b64 ? "base64" : "float";
      std::string tag = std::string(n) + "/" + f;
      benchmark::RegisterBenchmark(("openai/" + tag + "/embd").c_str(), BM_embd, big, b64, size_t{64});
      benchmark::RegisterBenchmark(("openai/" + tag + "/embd_copy").c_str(), BM_embd, big, b64, size_t{0});
      benchmark::RegisterBenchmark(("openai/" + tag + "/cjson_openssl").c_str(), BM_baseline, big, b64);
    }
    benchmark::RegisterBenchmark((std::string("openai/") + n + "/base64/b64_only").c_str(), BM_b64_only, big);
  }
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
