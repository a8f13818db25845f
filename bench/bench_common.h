// Helpers every embd benchmark shares: aligned buffers, reproducible input, a fatal
// check, and clean upper-register state before each measurement.
#ifndef EMBD_BENCH_COMMON_H
#define EMBD_BENCH_COMMON_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "embd.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define EMBD_BENCH_HAVE_MMAP 1
#endif

namespace embd_bench {

constexpr size_t kAlign = 64;

// The CPU's name from /proc/cpuinfo ("unknown" elsewhere): every benchmark says what it
// ran on (the context block of each suite's output, and a line on stderr).
inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, name = "unknown", family, model;
  auto value = [&line] {
    size_t c = line.find(':');
    return c == std::string::npos || c + 2 > line.size() ? std::string() : line.substr(c + 2);
  };
  while (std::getline(f, line) && line != "") {  // the first processor's block
    if (line.rfind("model name", 0) == 0) name = value();
    else if (line.rfind("cpu family", 0) == 0) family = value();
    else if (line.rfind("model\t", 0) == 0) model = value();
  }
  return family.empty() ? name : name + " (family " + family + " model " + model + ")";
}

// The CPU features the library may use, by name ("avx2 bmi2 ...").
inline std::string cpu_features() {
  std::string out;
  const uint64_t en = embd_cpu_features_enabled();
  for (int b = 0; b < 63; b++) {
    const char *n = embd_cpu_feature_name(uint64_t{1} << b);
    if (n && (en & (uint64_t{1} << b))) out += (out.empty() ? "" : " ") + std::string(n);
  }
  return out.empty() ? "none" : out;
}

// Runs before main (one per benchmark program): the CPU into the suite's context and on
// stderr, so a result pasted anywhere still says which machine made it.
struct CpuContext {
  CpuContext() {
    const std::string m = cpu_model(), f = cpu_features();
    benchmark::AddCustomContext("cpu_model", m);
    benchmark::AddCustomContext("embd_cpu_features", f);
    std::fprintf(stderr, "embd bench: CPU %s; features %s\n", m.c_str(), f.c_str());
  }
};
inline CpuContext g_cpu_context;

[[noreturn]] inline void die(const std::string &what) {
  std::fprintf(stderr, "bench: %s\n", what.c_str());
  std::abort();
}

inline uint8_t *alloc_aligned(size_t n) {
  void *p = std::aligned_alloc(kAlign, (n + kAlign - 1) / kAlign * kAlign);
  if (!p) die("out of memory");
  return static_cast<uint8_t *>(p);
}

// xorshift64*, fixed seed: the same input on every run.
inline void fill_random(uint8_t *p, size_t n) {
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (size_t i = 0; i < n; i++) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p[i] = static_cast<uint8_t>((x * 0x2545F4914F6CDD1Du) >> 56);
  }
}

// Google Benchmark's main once the benchmarks are registered: its flags (1 on one it does
// not know, after saying so), the run, the shutdown. 0 when it ran.
inline int run_registered(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// AVX code that returns without VZEROUPPER (ISA-L's assembly, for one) leaves the upper
// register halves dirty, and legacy-SSE code run after it (our sse42 tier, neon-simde) is
// then measured 25% slower on this Zen 4 (11.3 vs 14.7 GB/s for CRC-32 at 64 KiB). Every
// benchmark starts from clean state so that the order of benchmarks does not decide.
inline void clean_upper_state() {
#if defined(__x86_64__)
  if (embd_cpu_features() & EMBD_CPU_AVX2) __asm__ volatile("vzeroupper");
#endif
}

// One contender in a kernel benchmark: a registry implementation (fn is nullptr when this
// CPU or EMBD_ISA cannot run it, with the reason in `why`) or the public entry point.
template <class Fn>
struct ContenderT {
  std::string name;
  Fn fn;
  std::string why;
};

// Every implementation of `kernel` in registry order, then the dispatched public function.
template <class Fn>
std::vector<ContenderT<Fn>> collect_contenders(embd_kernel kernel, Fn (*impl)(size_t),
                                              Fn public_fn) {
  std::vector<ContenderT<Fn>> cs;
  size_t count = embd_impl_count(kernel);
  for (size_t i = 0; i < count; i++) {
    embd_impl_info info;
    if (embd_impl_get(kernel, i, &info) != EMBD_OK)
      die("embd_impl_get failed for index " + std::to_string(i));
    Fn fn = impl(i);
    std::string why;
    if (!fn) why = std::string(info.name) + " is not runnable on this CPU (or masked by EMBD_ISA)";
    cs.push_back({info.name, fn, why});
  }
  cs.push_back({"embd", public_fn, ""});
  return cs;
}

#ifdef EMBD_BENCH_HAVE_MMAP
// `pages` readable pages (random bytes) with unmapped pages on both sides, for the
// "-edge" rows: buffers that start or end at a page boundary where the page beyond holds
// none of their bytes. nullptr when mmap fails. The mapping is never freed.
struct EdgePages {
  uint8_t *begin = nullptr, *end = nullptr;
};
inline EdgePages map_edge_pages(size_t pages) {
  EdgePages e;
  const long ps = sysconf(_SC_PAGESIZE);
  if (ps <= 0) return e;
  const size_t sz = static_cast<size_t>(ps);
  void *m = mmap(nullptr, (pages + 2) * sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (m == MAP_FAILED) return e;
  uint8_t *b = static_cast<uint8_t *>(m);
  munmap(b, sz);
  munmap(b + (pages + 1) * sz, sz);
  e.begin = b + sz;
  e.end = e.begin + pages * sz;
  fill_random(e.begin, pages * sz);
  return e;
}
#endif

}  // namespace embd_bench

#endif
