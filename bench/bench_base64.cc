// base64 throughput: every decode and encode implementation in embd's registry
// (neon-simde included on x86) and the dispatched public functions, beside OpenSSL's
// EVP_DecodeBlock / EVP_EncodeBlock (when found) and memcpy of the same number of bytes,
// in one binary so that they share the machine's state.
//
// Sizes are in base64 characters: 100 and 1024 (75 and 768 bytes: where the per-call work
// and the tails show), 8192 (6144 bytes: one 1536-dim float32 embedding), 65536 and
// 1048576 (49152 and 786432 bytes); standard alphabet, padded (these byte counts are
// multiples of 3, so there is no '='). Names:
//   base64-decode/<contender>/<chars>, base64-encode/<contender>/<chars>,
//   memcpy/<chars> (copies chars / 4 * 3 bytes).
// Contenders: the registry names, "embd" (the public function), "openssl".
// bytes_per_second counts the decoded bytes (chars / 4 * 3) for both directions and for
// memcpy, so all rates compare directly. scripts/bench_base64_ratios.py prints ratios.
//
// base64-decode-edge/<contender>/<chars> and base64-encode-edge/<contender>/<chars>
// write their output so that it ends at a page boundary with an unmapped page after it,
// where a kernel's masked stores could reach a page holding none of the output (a
// microcode assist on each call on some CPUs: src/arch/x86/avx512_masked_mem.h).
//
// base64-encode-out16/<contender>/<chars> encode into an output 16 bytes past a 64-byte
// boundary, as malloc's 16-byte-aligned buffers often are: every 64-byte store then
// crosses a cache line unless the kernel realigns (the avx512 encoder does from 4 KiB to
// 20 KiB of input: 8192 and 16384 characters here; 65536 is above that range).
//
// Every runnable contender is checked once at start-up at every size (decode gives the
// bytes back, encode the exact text, at both output offsets); a mismatch aborts.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "embd.h"

#include "bench_common.h"

#if defined(EMBD_BENCH_HAVE_OPENSSL)
#include <openssl/evp.h>
#endif

namespace {
using namespace embd_bench;

constexpr size_t kChars[] = {100, 1024, 8192, 65536, 1048576};
constexpr size_t kOut16Chars[] = {8192, 16384, 65536};
constexpr size_t kOutOff = 16;
constexpr size_t kMaxChars = 1048576;
constexpr size_t kMaxBytes = kMaxChars / 4 * 3;
constexpr size_t kEdgeChars[] = {100, 16384};
constexpr size_t kEdgePages = 4; // 16 KiB: room for the largest edge output at 4 KiB pages

using Dec = embd_bench::ContenderT<embd_base64_decode_fn>;
using Enc = embd_bench::ContenderT<embd_base64_encode_fn>;

uint8_t *g_raw;   // kMaxBytes random bytes
char *g_text;     // their base64 (first chars/4*3 bytes encode to the first chars chars)
uint8_t *g_bytes; // decode output
char *g_out;      // encode output (+1 for OpenSSL's NUL, + kOutOff for the out16 rows)

void check_dec(const std::string &name, embd_base64_decode_fn fn) {
  for (size_t n : kChars) {
    std::memset(g_bytes, 0, kMaxBytes);
    size_t w = 0;
    embd_error err;
    if (fn(g_text, n, 0, g_bytes, kMaxBytes, &w, &err) != EMBD_OK)
      die(name + ": decode failed at " + std::to_string(n) + ": " + err.message);
    if (w != n / 4 * 3 || std::memcmp(g_bytes, g_raw, w) != 0)
      die(name + ": decode wrong at " + std::to_string(n));
  }
}

void check_enc_at(const std::string &name, embd_base64_encode_fn fn, size_t n, size_t off) {
  std::memset(g_out, 0, kMaxChars + 1 + kOutOff);
  size_t w = 0;
  if (fn(g_raw, n / 4 * 3, 0, g_out + off, kMaxChars, &w) != EMBD_OK || w != n ||
      std::memcmp(g_out + off, g_text, n) != 0)
    die(name + ": encode wrong at " + std::to_string(n) + " (output offset " +
        std::to_string(off) + ")");
}

void check_enc(const std::string &name, embd_base64_encode_fn fn) {
  for (size_t n : kChars) check_enc_at(name, fn, n, 0);
  for (size_t n : kOut16Chars) check_enc_at(name, fn, n, kOutOff);
}

void bm_dec(benchmark::State &state, embd_base64_decode_fn fn, std::string why, size_t n) {
  if (!fn) {
    state.SkipWithError(why.c_str());
    return;
  }
  clean_upper_state();
  for (auto _ : state) {
    size_t w;
    embd_result r = fn(g_text, n, 0, g_bytes, kMaxBytes, &w, nullptr);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g_bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}

void bm_enc(benchmark::State &state, embd_base64_encode_fn fn, std::string why, size_t n,
            size_t off) {
  if (!fn) {
    state.SkipWithError(why.c_str());
    return;
  }
  clean_upper_state();
  for (auto _ : state) {
    size_t w;
    embd_result r = fn(g_raw, n / 4 * 3, 0, g_out + off, kMaxChars, &w);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g_out);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}

#ifdef EMBD_BENCH_HAVE_MMAP
EdgePages g_edge;

// dec: decode n characters into the last n / 4 * 3 bytes of the pages; enc: encode into
// the last n characters.
void bm_edge(benchmark::State &state, embd_base64_decode_fn dec, embd_base64_encode_fn enc,
             std::string why, size_t n) {
  if (!dec && !enc) {
    state.SkipWithError(why.c_str());
    return;
  }
  clean_upper_state();
  for (auto _ : state) {
    size_t w;
    embd_result r =
        dec ? dec(g_text, n, 0, g_edge.end - n / 4 * 3, n / 4 * 3, &w, nullptr)
            : enc(g_raw, n / 4 * 3, 0, reinterpret_cast<char *>(g_edge.end - n), n, &w);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}
#endif

#if defined(EMBD_BENCH_HAVE_OPENSSL)
void check_openssl() {
  for (size_t n : kChars) {
    int d = EVP_DecodeBlock(g_bytes, reinterpret_cast<const unsigned char *>(g_text),
                            static_cast<int>(n));
    if (d != static_cast<int>(n / 4 * 3) || std::memcmp(g_bytes, g_raw, n / 4 * 3) != 0)
      die("openssl: EVP_DecodeBlock wrong at " + std::to_string(n));
    int e = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(g_out), g_raw,
                            static_cast<int>(n / 4 * 3));
    if (e != static_cast<int>(n) || std::memcmp(g_out, g_text, n) != 0)
      die("openssl: EVP_EncodeBlock wrong at " + std::to_string(n));
  }
}

void bm_ossl_dec(benchmark::State &state, size_t n) {
  clean_upper_state();
  for (auto _ : state) {
    int r = EVP_DecodeBlock(g_bytes, reinterpret_cast<const unsigned char *>(g_text),
                            static_cast<int>(n));
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g_bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}

void bm_ossl_enc(benchmark::State &state, size_t n) {
  clean_upper_state();
  for (auto _ : state) {
    int r = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(g_out), g_raw,
                            static_cast<int>(n / 4 * 3));
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g_out);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}
#endif

void bm_memcpy(benchmark::State &state, size_t n) {
  clean_upper_state();
  for (auto _ : state) {
    std::memcpy(g_bytes, g_raw, n / 4 * 3);
    benchmark::DoNotOptimize(g_bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n / 4 * 3));
}

}  // namespace

int main(int argc, char **argv) {
  g_raw = alloc_aligned(kMaxBytes);
  g_text = reinterpret_cast<char *>(alloc_aligned(kMaxChars + 1));
  g_bytes = alloc_aligned(kMaxBytes + 16);
  g_out = reinterpret_cast<char *>(alloc_aligned(kMaxChars + 1 + kOutOff));
  fill_random(g_raw, kMaxBytes);
  size_t w = 0;
  // The reference text: scalar (registry index 0), checked below against every other
  // contender and OpenSSL; scalar itself is checked against a 6-bit-at-a-time encoder.
  embd_base64_encode_fn scalar = embd_base64_encode_impl(0);
  if (!scalar || scalar(g_raw, kMaxBytes, 0, g_text, kMaxChars, &w) != EMBD_OK || w != kMaxChars)
    die("scalar encode failed");
  static const char kAlpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kMaxBytes; i += 3) {
    const uint32_t v = uint32_t{g_raw[i]} << 16 | uint32_t{g_raw[i + 1]} << 8 | g_raw[i + 2];
    for (int k = 0; k < 4; k++)
      if (g_text[i / 3 * 4 + k] != kAlpha[(v >> (18 - 6 * k)) & 63])
        die("scalar encode wrong at byte " + std::to_string(i));
  }

  std::vector<Dec> decs =
      collect_contenders(EMBD_KERNEL_BASE64_DECODE, embd_base64_decode_impl, embd_base64_decode);
  std::vector<Enc> encs =
      collect_contenders(EMBD_KERNEL_BASE64_ENCODE, embd_base64_encode_impl, embd_base64_encode);
  std::string runnable, skipped;
  for (const Dec &c : decs) {
    if (c.fn) {
      check_dec(c.name, c.fn);
      runnable += (runnable.empty() ? "" : ",") + c.name;
    } else {
      skipped += (skipped.empty() ? "" : ",") + c.name;
    }
  }
  for (const Enc &c : encs)
    if (c.fn) check_enc(c.name, c.fn);
#if defined(EMBD_BENCH_HAVE_OPENSSL)
  check_openssl();
  runnable += ",openssl";
#endif
  benchmark::AddCustomContext("embd_version", embd_version());
  benchmark::AddCustomContext("embd_base64_decode_active",
                              embd_impl_active(EMBD_KERNEL_BASE64_DECODE));
  benchmark::AddCustomContext("embd_base64_encode_active",
                              embd_impl_active(EMBD_KERNEL_BASE64_ENCODE));
  benchmark::AddCustomContext("base64_contenders", runnable);
  if (!skipped.empty()) benchmark::AddCustomContext("base64_not_runnable", skipped);

  for (size_t n : kChars) {
    const std::string tail = "/" + std::to_string(n);
    for (const Dec &c : decs)
      benchmark::RegisterBenchmark(("base64-decode/" + c.name + tail).c_str(), bm_dec, c.fn,
                                   c.why, n);
#if defined(EMBD_BENCH_HAVE_OPENSSL)
    benchmark::RegisterBenchmark(("base64-decode/openssl" + tail).c_str(), bm_ossl_dec, n);
#endif
    for (const Enc &c : encs)
      benchmark::RegisterBenchmark(("base64-encode/" + c.name + tail).c_str(), bm_enc, c.fn,
                                   c.why, n, size_t{0});
#if defined(EMBD_BENCH_HAVE_OPENSSL)
    benchmark::RegisterBenchmark(("base64-encode/openssl" + tail).c_str(), bm_ossl_enc, n);
#endif
    benchmark::RegisterBenchmark(("memcpy" + tail).c_str(), bm_memcpy, n);
  }
  for (size_t n : kOut16Chars)
    for (const Enc &c : encs)
      benchmark::RegisterBenchmark(
          ("base64-encode-out16/" + c.name + "/" + std::to_string(n)).c_str(), bm_enc, c.fn,
          c.why, n, kOutOff);

#ifdef EMBD_BENCH_HAVE_MMAP
  g_edge = map_edge_pages(kEdgePages);
  if (g_edge.begin && g_edge.end - g_edge.begin >= 16384)
    for (size_t n : kEdgeChars) {
      const std::string tail = "/" + std::to_string(n);
      for (const Dec &c : decs) {
        size_t w = 0;
        if (c.fn && (c.fn(g_text, n, 0, g_edge.end - n / 4 * 3, n / 4 * 3, &w, nullptr) !=
                         EMBD_OK ||
                     std::memcmp(g_edge.end - n / 4 * 3, g_raw, n / 4 * 3) != 0))
          die(c.name + ": decode wrong next to an unmapped page at " + std::to_string(n));
        benchmark::RegisterBenchmark(("base64-decode-edge/" + c.name + tail).c_str(), bm_edge,
                                     c.fn, nullptr, c.why, n);
      }
      for (const Enc &c : encs) {
        size_t w = 0;
        char *o = reinterpret_cast<char *>(g_edge.end - n);
        if (c.fn && (c.fn(g_raw, n / 4 * 3, 0, o, n, &w) != EMBD_OK ||
                     std::memcmp(o, g_text, n) != 0))
          die(c.name + ": encode wrong next to an unmapped page at " + std::to_string(n));
        benchmark::RegisterBenchmark(("base64-encode-edge/" + c.name + tail).c_str(), bm_edge,
                                     nullptr, c.fn, c.why, n);
      }
    }
#endif

  if (run_registered(argc, argv)) return 1;
  std::free(g_raw);
  std::free(g_text);
  std::free(g_bytes);
  std::free(g_out);
  return 0;
}
