// JSON number arrays -> float32 (embd_openai_decode's number path: decimal.h's fast
// parser and its careful fallback), held against glibc's strtof, which rounds any decimal
// text correctly and shares nothing with embd (fast_float is embd's slow path; strtof is
// not). Every float32 bit pattern tried is printed in nine forms:
//   0 shortest round trip, std::to_chars(f)           ("0.0105335", "1.5e-05")
//   1 "%.9g"-like, to_chars(f, general, 9)            (what many servers print)
//   2 shortest scientific                             ("1.05335e-02")
//   3 shortest fixed (up to 60 characters)            ("0.000000000123", 16+ digits)
//   4 the shortest double text of the midpoint between f and the next float (a decimal
//     within half a double ulp of a tie: the fast path's midpoint test and the careful
//     path decide these)
//   5 that midpoint to 30 significant digits (ties and near-ties, long)
//   6 a random decimal: 1..22 digits, a random point, a random exponent
//   7 the shortest double text of f widened to double, std::to_chars(double(f))
//     ("0.010533500276505947": what JSON.stringify prints for a Float32Array's values,
//     up to 17 significant digits: the 17-digit fast path decides nearly all)
//   8 the midpoint between f and the next float moved by -12..12 double ulps, to 19
//     significant digits ("%.18e"): the fast path's margin around midpoints (it narrows
//     a rounded double only more than 8 ulps from one) from both sides
// and the texts go into response bodies of 2,048 numbers, compact ("a,b") and pretty
// (",\n        b") in turn. Each decoded float must have strtof's bits.
//
// Patterns: by default 2^20 * EMBD_TEST_SCALE spread over all 2^32 (a multiplicative
// walk: every exponent and sign); EMBD_TEST_PATTERNS=N walks N instead (2^29 with
// EMBD_TEST_FORMS=01, the two cheap forms, is a billion numbers: about 7 minutes on two
// cores); EMBD_TEST_EXHAUSTIVE=1 tries all 2^32 in order (7 * 4.3 billion numbers, about
// 6 CPU-hours). EMBD_TEST_FORMS: the forms to try, as digits ("0123456", the default);
// EMBD_TEST_THREADS: threads (default 1, 2 with EMBD_TEST_PATTERNS or _EXHAUSTIVE). NaN and infinity patterns are skipped
// (JSON has no such numbers), as are texts beyond the float32 range (the decoder's
// range error is test_openai's). Exit 0 when all agree; 1 with the first disagreements.
// Built only with EMBD_WITH_OPENAI.
#include <atomic>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "embd.h"
#include "testutil.h"  // tu_isa_preflight

namespace {

constexpr size_t kBatch = 2048;
constexpr int kForms = 9;

std::atomic<uint64_t> g_checked{0}, g_bad{0};
bool g_form[kForms] = {true, true, true, true, true, true, true, true, true};

float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// Form `form` of float f (or, forms 6 and 8, of the generator state too) into out; false: skip.
bool text(int form, float f, uint64_t *rng, std::string *out) {
  char b[128];
  std::to_chars_result r{};
  switch (form) {
    case 0: r = std::to_chars(b, b + sizeof b, f); break;
    case 1: r = std::to_chars(b, b + sizeof b, f, std::chars_format::general, 9); break;
    case 2: r = std::to_chars(b, b + sizeof b, f, std::chars_format::scientific); break;
    case 3:
      r = std::to_chars(b, b + 61, f, std::chars_format::fixed);
      if (r.ec != std::errc()) return false;  // longer than 60
      break;
    case 4:
    case 5: {
      const float g = std::nextafter(f, f < 0 ? -INFINITY : INFINITY);
      if (std::isinf(g)) return false;
      const double mid = (static_cast<double>(f) + static_cast<double>(g)) / 2;  // exact
      r = form == 4 ? std::to_chars(b, b + sizeof b, mid, std::chars_format::scientific)
                    : std::to_chars(b, b + sizeof b, mid, std::chars_format::scientific, 29);
      break;
    }
    case 7: r = std::to_chars(b, b + sizeof b, static_cast<double>(f)); break;
    case 8: {
      const float g = std::nextafter(f, f < 0 ? -INFINITY : INFINITY);
      if (std::isinf(g)) return false;
      double mid = (static_cast<double>(f) + static_cast<double>(g)) / 2;  // exact
      uint64_t &x = *rng;
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const int k = static_cast<int>(x % 25) - 12;
      for (int i = 0; i < (k < 0 ? -k : k); i++) mid = std::nextafter(mid, k < 0 ? -INFINITY : INFINITY);
      r = std::to_chars(b, b + sizeof b, mid, std::chars_format::scientific, 18);
      break;
    }
    default: {
      uint64_t &x = *rng;
      auto next = [&x] {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x;
      };
      const int nd = 1 + static_cast<int>(next() % 22), point = static_cast<int>(next() % (nd + 1));
      const int e = static_cast<int>(next() % 96) - 50;
      size_t n = 0;
      if (next() & 1) b[n++] = '-';
      for (int i = 0; i < nd; i++) {
        if (i == point && i > 0) b[n++] = '.';
        int d = static_cast<int>(next() % 10);
        if (i == 0 && d == 0 && point != 1) d = 1 + static_cast<int>(next() % 9);  // no leading zero
        b[n++] = static_cast<char>('0' + d);
      }
      if (next() & 1) n += static_cast<size_t>(snprintf(b + n, sizeof b - n, "e%d", e));
      r.ptr = b + n;
      r.ec = std::errc();
    }
  }
  if (r.ec != std::errc()) return false;
  out->assign(b, r.ptr);
  return true;
}

// One body of the texts; every float checked against strtof.
void check(const std::vector<std::string> &texts, bool pretty, std::string *body, std::vector<float> *want) {
  body->assign("{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[");
  want->clear();
  for (const std::string &t : texts) {
    const float w = strtof(t.c_str(), nullptr);
    if (std::isinf(w)) continue;  // beyond float32: the decoder's range error (test_openai)
    if (!want->empty()) body->append(pretty ? ",\n        " : ",");
    body->append(t);
    want->push_back(w);
  }
  body->append("]}],\"model\":\"m\",\"usage\":{\"prompt_tokens\":1,\"total_tokens\":1}}");
  if (want->empty()) return;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_result r = embd_openai_decode(&e, body->data(), body->size(), nullptr, &err);
  if (r != EMBD_OK || e.dims != want->size()) {
    fprintf(stderr, "FAIL: decode: %s (%s)\n", embd_strerror(r), err.message);
    g_bad++;
  } else {
    size_t k = 0;
    for (const std::string &t : texts) {
      if (std::isinf(strtof(t.c_str(), nullptr))) continue;
      const float got = e.values[k], w = (*want)[k];
      if (bits(got) != bits(w) && g_bad++ < 20)
        fprintf(stderr, "FAIL: \"%s\": embd %a (0x%08" PRIx32 "), strtof %a (0x%08" PRIx32 ")\n", t.c_str(),
                static_cast<double>(got), bits(got), static_cast<double>(w), bits(w));
      k++;
    }
  }
  g_checked += want->size();
  embd_openai_free(&e);
}

// Patterns first + i * step (mod 2^32) for i in [0, count), every form.
void run(uint64_t first, uint64_t count, uint64_t step, uint64_t seed) {
  std::vector<std::string> texts[kForms];
  std::string body, t;
  std::vector<float> want;
  uint64_t rng = seed | 1;
  bool pretty = false;
  for (uint64_t i = 0; i < count; i++) {
    const float f = from_bits(static_cast<uint32_t>(first + i * step));
    if (!std::isfinite(f)) continue;
    for (int form = 0; form < kForms; form++) {
      if (!g_form[form] || !text(form, f, &rng, &t)) continue;
      texts[form].push_back(t);
      if (texts[form].size() == kBatch) {
        check(texts[form], pretty, &body, &want);
        pretty = !pretty;
        texts[form].clear();
      }
    }
  }
  for (auto &v : texts) check(v, pretty, &body, &want);
}

}  // namespace

int main() {
  // The number path calls no kernel, but EMBD_ISA still names the run: a tier this CPU
  // lacks skips here as in every other test program.
  if (const int s = tu_isa_preflight("test_numbers")) return s;
  const char *ex = getenv("EMBD_TEST_EXHAUSTIVE");
  const bool all = ex && *ex && strcmp(ex, "0") != 0;
  const char *sc = getenv("EMBD_TEST_SCALE");
  double scale = sc && *sc ? atof(sc) : 1.0;
  if (!(scale > 0)) scale = 1;
  const char *np = getenv("EMBD_TEST_PATTERNS");
  const uint64_t patterns = np && *np ? strtoull(np, nullptr, 0) : 0;
  if (const char *fm = getenv("EMBD_TEST_FORMS"); fm && *fm) {
    for (bool &b : g_form) b = false;
    for (const char *c = fm; *c; c++)
      if (*c >= '0' && *c < '0' + kForms) g_form[*c - '0'] = true;
  }
  const char *th = getenv("EMBD_TEST_THREADS");
  const unsigned threads =
      th && atoi(th) > 0 ? static_cast<unsigned>(atoi(th)) : (all || patterns ? 2u : 1u);
  // The walk: an odd step visits every pattern once in 2^32 steps; a sample of it
  // touches every exponent and sign.
  const uint64_t total = all        ? (uint64_t{1} << 32)
                         : patterns ? (patterns < (uint64_t{1} << 32) ? patterns : uint64_t{1} << 32)
                                    : static_cast<uint64_t>((1u << 20) * scale);
  const uint64_t step = all ? 1 : 0x9E3779B1u;
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; k++) {
    const uint64_t a = total * k / threads, b = total * (k + 1) / threads;
    // A lambda, not `run` itself: binding a reference to a Thumb function (an odd
    // address) is what UBSan calls misaligned on armhf.
    pool.emplace_back([=] { run(a * step, b - a, step, 0x9E3779B97F4A7C15ull * (k + 1)); });
  }
  for (auto &p : pool) p.join();
  std::string forms;
  for (int f = 0; f < kForms; f++)
    if (g_form[f]) forms += static_cast<char>('0' + f);
  printf("%" PRIu64 " numbers from %" PRIu64 " float32 patterns (%s; forms %s), %" PRIu64
         " disagree with strtof\n",
         g_checked.load(), total, all ? "all of them" : "a walk over all exponents", forms.c_str(),
         g_bad.load());
  return g_bad.load() ? 1 : 0;
}
