// CRC-32 throughput and latency: every implementation in embd's registry, the dispatched
// public embd_crc32, and the anchors zlib crc32, ISA-L crc32_gzip_refl, libdeflate_crc32
// and memcpy of the same bytes, in one binary so that they share the machine's state.
//
// Names: <family>/<contender>/<bytes>/align<offset>, e.g. crc32/avx512-vpclmul/65536/align0,
// crc32/embd/12/align16, memcpy/1048576/align0. <offset> is the distance of the
// input from a 64-byte boundary. crc32/ calls are independent (throughput);
// crc32-chained/ (up to 4 KiB) starts each call from the previous call's CRC, so the time
// per call is the latency from one CRC to the next, which is what a caller updating one
// CRC over many short pieces waits for. Bytes per second is set on every benchmark;
// scripts/bench_ratios.py turns --benchmark_format=json output into ratios against
// ISA-L, zlib and the best anchor.
//
// Registry implementations the CPU (or EMBD_ISA masking) cannot run are registered
// anyway and skipped with an error, so a report shows what was not measured.
// crc32/avx512-simde is the avx512 kernel's source through simde's AVX-512 emulation
// (never dispatched to; there so that the tests run its logic without AVX-512): its
// speed says nothing about the avx512 kernel.
//
// With EMBD_BENCH_CLMUL_CEILING (x86), ceiling/pclmul-xmm, ceiling/vpclmul-ymm and
// ceiling/vpclmul-zmm (<bytes>/align0) time the carry-less products a fold of that many
// bytes needs and nothing else (bench/ceiling/clmul_ceiling.h): the fastest a PCLMULQDQ
// or VPCLMULQDQ kernel of that width could go on this core, so a kernel's distance from
// it is visible.
//
// The context block names each anchor's version (zlibVersion(), LIBDEFLATE_VERSION_STRING,
// ISA-L's version macros from <isa-l.h>): figures from different releases (ISA-L 2.30
// folds 128 bits at a time where 2.32 has a 256-bit function) are not comparable.
//
// crc32-edge/<contender>/<bytes>/{start,end} put the input at the start of a page whose
// page before is unmapped, or at the end of one whose next page is unmapped: where a
// kernel's masked loads would reach a page holding none of the input, the CPU may take
// a microcode assist on every call (about 200 ns on AMD Zen 5: see
// src/arch/x86/avx512_masked_mem.h); these rows show whether a contender pays it.
//
// Every contender is checked at start-up against the CRC-32 check value and against the
// scalar reference at every benchmarked size and offset; any mismatch aborts, because a
// fast wrong CRC is not a result.
#include <benchmark/benchmark.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "embd.h"

#ifdef EMBD_BENCH_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef EMBD_BENCH_HAVE_ISAL
#include <isa-l/crc.h>
#if defined(__has_include)
#if __has_include(<isa-l.h>)
#include <isa-l.h>
#endif
#endif
#endif
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "bench_common.h"
#ifdef EMBD_BENCH_CLMUL_CEILING
#include "ceiling/clmul_ceiling.h"
#endif

namespace {
using namespace embd_bench;

constexpr size_t kSizes[] = {12, 16, 24, 32, 48, 64, 128, 256, 384, 512, 1024, 2048, 4096, 6160, 8192, 65536, 1048576};
constexpr size_t kOffsets[] = {0, 16};
constexpr size_t kMaxSize = 1048576;
constexpr size_t kChainedMax = 4096; // above this a chained CRC runs at the throughput
constexpr size_t kEdgeSizes[] = {24, 100, 1000};

using CrcFn = uint32_t (*)(uint32_t crc, const void *buf, size_t len);

using Contender = embd_bench::ContenderT<CrcFn>;

// 64-byte aligned source (with room for the largest offset) and memcpy destination.
uint8_t *g_src;
uint8_t *g_dst;

// ---- anchors, adapted to one signature ---------------------------------------------
#ifdef EMBD_BENCH_HAVE_ZLIB
uint32_t zlib_crc(uint32_t crc, const void *buf, size_t len) {
  // Every benchmarked size fits in uInt; crc32_z would hide nothing here.
  return static_cast<uint32_t>(
      crc32(crc, static_cast<const Bytef *>(buf), static_cast<uInt>(len)));
}
#endif
#ifdef EMBD_BENCH_HAVE_ISAL
uint32_t isal_crc(uint32_t crc, const void *buf, size_t len) {
  // crc32_gzip_refl takes a non-const pointer but does not write through it.
  return crc32_gzip_refl(crc, const_cast<unsigned char *>(static_cast<const unsigned char *>(buf)),
                         len);
}
#endif
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
uint32_t libdeflate_crc(uint32_t crc, const void *buf, size_t len) {
  return libdeflate_crc32(crc, buf, len);
}
#endif

// Known answers: the check value, a chained call (same seed semantics as zlib: the CRC
// of the previous bytes, not a raw register) and every benchmarked size and offset
// against embd's scalar reference.
void check_contender(const Contender &c, CrcFn ref) {
  static const char kCheck[] = "123456789";
  uint32_t v = c.fn(0, kCheck, 9);
  if (v != 0xCBF43926u) {
    char m[128];
    std::snprintf(m, sizeof m, "%s(\"123456789\") = 0x%08" PRIx32 ", expected 0xcbf43926",
                  c.name.c_str(), v);
    die(m);
  }
  v = c.fn(c.fn(0, kCheck, 4), kCheck + 4, 5);
  if (v != 0xCBF43926u)
    die(c.name + ": chained call differs from one-shot: not zlib's seed semantics");
  if (c.fn(0, kCheck, 0) != 0 || c.fn(0x12345678u, kCheck, 0) != 0x12345678u)
    die(c.name + ": an empty update changes the CRC");
  for (size_t off : kOffsets)
    for (size_t n : kSizes)
      for (uint32_t seed : {0u, 0xDEADBEEFu})
        if (c.fn(seed, g_src + off, n) != ref(seed, g_src + off, n))
          die(c.name + ": differs from the scalar reference at size " + std::to_string(n) +
              ", offset " + std::to_string(off));
}

// kChained: each call starts from the CRC the previous one returned, so the next call
// cannot begin its dependent work before the last one ends (latency); otherwise every
// call starts from 0 (throughput).
template <bool kChained>
void bm_crc(benchmark::State &state, CrcFn fn, std::string why, size_t n, size_t off) {
  if (!fn) {
    state.SkipWithError(why.c_str());
    return;
  }
  clean_upper_state();
  const uint8_t *p = g_src + off;
  uint32_t c = 0;
  for (auto _ : state) {
    c = fn(kChained ? c : 0, p, n);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

void bm_memcpy(benchmark::State &state, size_t n, size_t off) {
  const uint8_t *p = g_src + off;
  for (auto _ : state) {
    std::memcpy(g_dst, p, n);
    benchmark::DoNotOptimize(g_dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

#ifdef EMBD_BENCH_HAVE_MMAP
EdgePages g_edge; // one page, unmapped pages around it

void bm_crc_edge(benchmark::State &state, CrcFn fn, std::string why, size_t n, bool at_end) {
  if (!fn) {
    state.SkipWithError(why.c_str());
    return;
  }
  const uint8_t *p = at_end ? g_edge.end - n : g_edge.begin;
  for (auto _ : state) {
    uint32_t c = fn(0, p, n);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
#endif

#ifdef EMBD_BENCH_CLMUL_CEILING
void bm_ceiling(benchmark::State &state, uint64_t (*fn)(size_t), size_t n) {
  clean_upper_state();
  for (auto _ : state) {
    uint64_t v = fn(n);
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
#endif
}  // namespace

int main(int argc, char **argv) {
  g_src = alloc_aligned(kMaxSize + kAlign);
  g_dst = alloc_aligned(kMaxSize + kAlign);
  fill_random(g_src, kMaxSize + kAlign);
  std::memset(g_dst, 0, kMaxSize + kAlign);

  std::vector<Contender> cs = collect_contenders(EMBD_KERNEL_CRC32, embd_crc32_impl, embd_crc32);
#ifdef EMBD_BENCH_HAVE_ZLIB
  cs.push_back({"zlib", zlib_crc, ""});
#endif
#ifdef EMBD_BENCH_HAVE_ISAL
  cs.push_back({"isal", isal_crc, ""});
#endif
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
  cs.push_back({"libdeflate", libdeflate_crc, ""});
#endif
  CrcFn ref = embd_crc32_impl(0);
  if (!ref) die("the scalar reference (index 0) is not runnable");
  std::string runnable, skipped;
  for (const Contender &c : cs) {
    if (c.fn) {
      check_contender(c, ref);
      runnable += (runnable.empty() ? "" : ",") + c.name;
    } else {
      skipped += (skipped.empty() ? "" : ",") + c.name;
    }
  }
  benchmark::AddCustomContext("embd_version", embd_version());
#ifdef EMBD_BENCH_HAVE_ZLIB
  benchmark::AddCustomContext("zlib_version", zlibVersion());
#endif
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
  benchmark::AddCustomContext("libdeflate_version", LIBDEFLATE_VERSION_STRING);
#endif
#ifdef EMBD_BENCH_HAVE_ISAL
#ifdef ISAL_MAJOR_VERSION
  benchmark::AddCustomContext("isal_version", std::to_string(ISAL_MAJOR_VERSION) + "." +
                                                  std::to_string(ISAL_MINOR_VERSION) + "." +
                                                  std::to_string(ISAL_PATCH_VERSION));
#else
  benchmark::AddCustomContext("isal_version", "unknown (no <isa-l.h> version macros)");
#endif
#endif
  benchmark::AddCustomContext("embd_crc32_active", embd_impl_active(EMBD_KERNEL_CRC32));
  benchmark::AddCustomContext("crc32_contenders", runnable);
  if (!skipped.empty()) benchmark::AddCustomContext("crc32_not_runnable", skipped);

  for (size_t off : kOffsets) {
    for (size_t n : kSizes) {
      std::string tail = "/" + std::to_string(n) + "/align" + std::to_string(off);
      for (const Contender &c : cs)
        benchmark::RegisterBenchmark(("crc32/" + c.name + tail).c_str(), bm_crc<false>, c.fn,
                                     c.why, n, off);
      if (n <= kChainedMax)
        for (const Contender &c : cs)
          benchmark::RegisterBenchmark(("crc32-chained/" + c.name + tail).c_str(),
                                       bm_crc<true>, c.fn, c.why, n, off);
      benchmark::RegisterBenchmark(("memcpy" + tail).c_str(), bm_memcpy, n, off);
#ifdef EMBD_BENCH_CLMUL_CEILING
      // No loads, so the offset is meaningless: once per size, from 1 KiB up (below that
      // a CRC is latency-bound, not throughput-bound).
      const uint64_t f = embd_cpu_features();
      if (off == 0 && n >= 1024) {
        if ((f & EMBD_CPU_PCLMULQDQ) && (f & EMBD_CPU_SSE42))
          benchmark::RegisterBenchmark(("ceiling/pclmul-xmm" + tail).c_str(), bm_ceiling,
                                       embd_bench_clmul_ceiling_xmm, n);
        if ((f & EMBD_CPU_VPCLMULQDQ) && (f & EMBD_CPU_AVX2))
          benchmark::RegisterBenchmark(("ceiling/vpclmul-ymm" + tail).c_str(), bm_ceiling,
                                       embd_bench_clmul_ceiling_ymm, n);
        if ((f & EMBD_CPU_VPCLMULQDQ) && (f & EMBD_CPU_AVX512F))
          benchmark::RegisterBenchmark(("ceiling/vpclmul-zmm" + tail).c_str(), bm_ceiling,
                                       embd_bench_clmul_ceiling_zmm, n);
      }
#endif
    }
  }

#ifdef EMBD_BENCH_HAVE_MMAP
  g_edge = map_edge_pages(1);
  if (g_edge.begin)
    for (size_t n : kEdgeSizes)
      for (bool at_end : {false, true})
        for (const Contender &c : cs) {
          const uint8_t *p = at_end ? g_edge.end - n : g_edge.begin;
          if (c.fn && c.fn(0, p, n) != ref(0, p, n))
            die(c.name + ": differs from the scalar reference next to an unmapped page");
          benchmark::RegisterBenchmark(("crc32-edge/" + c.name + "/" + std::to_string(n) +
                                        (at_end ? "/end" : "/start"))
                                           .c_str(),
                                       bm_crc_edge, c.fn, c.why, n, at_end);
        }
#endif

  if (run_registered(argc, argv)) return 1;
  std::free(g_src);
  std::free(g_dst);
  return 0;
}
