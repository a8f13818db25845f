// bswap32 throughput: every implementation in embd's registry (neon-simde included on
// x86) and the dispatched public embd_bswap32, out of place and in place, beside memcpy
// of the same bytes, in one binary so that they share the machine's state.
//
// Names: bswap32/<contender>/<bytes> (out of place: src -> dst),
// bswap32-inplace/<contender>/<bytes> (dst == src), and memcpy/<bytes> (also registered
// as bswap32-inplace/memcpy/<bytes>, the same out-of-place copy, so that each group has
// its reference beside it). Buffers are 64-byte aligned. Bytes per second counts the
// bytes swapped (or copied) once.
//
// The x86 kernels swap out of place with streaming stores from the last-level cache's size
// on (src/core/internal.h, embd_bswap32_nt_min; 32 MiB on the Zen 3 here): the 64 MiB
// out-of-place rows take that path, memcpy beside them is glibc's (its own non-temporal
// threshold).
//
// Implementations the CPU (or EMBD_ISA) cannot run are registered and skipped with an
// error. Every contender is checked at start-up against a byte-reversal reference at
// every benchmarked size; a mismatch aborts.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "embd.h"

#include "bench_common.h"

namespace {
using namespace embd_bench;

constexpr size_t kSizes[] = {6144, 65536, 1048576, 67108864};
constexpr size_t kMaxSize = 67108864;

using Contender = embd_bench::ContenderT<embd_bswap32_fn>;

uint8_t *g_src;
uint8_t *g_dst;

void check_contender(const Contender &c) {
  for (size_t n : kSizes) {
    c.fn(g_dst, g_src, n / 4);
    for (size_t i = 0; i < n; i++)
      if (g_dst[i] != g_src[(i & ~size_t{3}) + 3 - (i & 3)])
        die(c.name + ": wrong at size " + std::to_string(n) + ", byte " + std::to_string(i));
  }
}

void bm_swap(benchmark::State &state, embd_bswap32_fn fn, std::string why, size_t n,
             bool in_place) {
  if (!fn) {
    state.SkipWithError(why.c_str());
    return;
  }
  clean_upper_state();
  uint8_t *dst = in_place ? g_src : g_dst;
  for (auto _ : state) {
    fn(dst, g_src, n / 4);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

void bm_memcpy(benchmark::State &state, size_t n) {
  clean_upper_state();
  for (auto _ : state) {
    std::memcpy(g_dst, g_src, n);
    benchmark::DoNotOptimize(g_dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}


}  // namespace

int main(int argc, char **argv) {
  g_src = alloc_aligned(kMaxSize);
  g_dst = alloc_aligned(kMaxSize);
  fill_random(g_src, kMaxSize);
  std::memset(g_dst, 0, kMaxSize);

  std::vector<Contender> cs = collect_contenders(EMBD_KERNEL_BSWAP32, embd_bswap32_impl, embd_bswap32);
  std::string runnable, skipped;
  for (const Contender &c : cs) {
    if (c.fn) {
      check_contender(c);
      runnable += (runnable.empty() ? "" : ",") + c.name;
    } else {
      skipped += (skipped.empty() ? "" : ",") + c.name;
    }
  }
  benchmark::AddCustomContext("embd_version", embd_version());
  benchmark::AddCustomContext("embd_bswap32_active", embd_impl_active(EMBD_KERNEL_BSWAP32));
  benchmark::AddCustomContext("bswap32_contenders", runnable);
  if (!skipped.empty()) benchmark::AddCustomContext("bswap32_not_runnable", skipped);

  for (size_t n : kSizes) {
    std::string tail = "/" + std::to_string(n);
    for (const Contender &c : cs)
      benchmark::RegisterBenchmark(("bswap32/" + c.name + tail).c_str(), bm_swap, c.fn, c.why, n,
                                   false);
    benchmark::RegisterBenchmark(("memcpy" + tail).c_str(), bm_memcpy, n);
    for (const Contender &c : cs)
      benchmark::RegisterBenchmark(("bswap32-inplace/" + c.name + tail).c_str(), bm_swap, c.fn,
                                   c.why, n, true);
    benchmark::RegisterBenchmark(("bswap32-inplace/memcpy" + tail).c_str(), bm_memcpy, n);
  }

  if (run_registered(argc, argv)) return 1;
  std::free(g_src);
  std::free(g_dst);
  return 0;
}
