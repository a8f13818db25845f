// dtype conversion throughput: every implementation of EMBD_KERNEL_CONVERT and
// EMBD_KERNEL_CONVERT_ENCODE (neon-simde included on x86) and the public embd_to_f32 /
// embd_from_f32, beside memcpy of the float32 bytes, in one binary so that they share the
// machine's state.
//
// Names: to_f32/<dtype>/<contender>/<elements>, from_f32/<dtype>/<contender>/<elements>,
// memcpy/<float32 bytes>. Bytes per second counts the float32 side (4 bytes per element:
// the output of to_f32, the input of from_f32), so a row divides directly by the memcpy
// row of the same size. Elements: 1536 (a typical embedding: 6 KiB of floats), 16384,
// 262144.
//
// memcpy: glibc 2.36 copies 2,112 bytes .. 512 KiB with rep movsb, which runs at a tenth
// of its speed when 0 < (dst - src) mod 4096 < 32 (glibc bug 30994, see
// /work/shared/TOOLCHAIN.md); the buffers here are one allocation with dst - src = 2048
// mod 4096, the fast case, so memcpy is at its best.
//
// Decode input: random bytes (every bit pattern alike); encode input: embedding-like
// values (roughly normal, scale 0.03). Every contender is checked against the scalar reference at start-up (a mismatch
// aborts). Implementations this CPU (or EMBD_ISA) cannot run are registered and skipped
// with an error.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "embd.h"
#include "embd/convert.h"

#include "bench_common.h"

namespace {
using namespace embd_bench;

constexpr size_t kSizes[] = {1536, 16384, 262144};
constexpr size_t kMax = 262144;

uint8_t *g_arena;
uint8_t *g_wire;  // dtype bytes: decode input, encode output (2 bytes per element at most)
float *g_f32;     // float32: decode output, encode input
float *g_want;
float *g_fin;     // float32: encode input (embedding-like values)

struct Cvt {
  std::string name;
  embd_dtype dtype;
  embd_to_f32_fn fn;  // nullptr: the public entry point (pub) or not runnable
  bool pub;
};
struct Enc {
  std::string name;
  embd_dtype dtype;
  embd_from_f32_fn fn;
  bool pub;
};

void bm_cvt(benchmark::State &state, Cvt c, size_t n) {
  if (!c.fn && !c.pub) {
    state.SkipWithError((c.name + " is not runnable here (CPU or EMBD_ISA)").c_str());
    return;
  }
  clean_upper_state();
  for (auto _ : state) {
    if (c.pub)
      embd_to_f32(g_f32, g_wire, n, c.dtype, EMBD_ORDER_LE);
    else
      c.fn(g_f32, g_wire, n, 0);
    benchmark::DoNotOptimize(g_f32);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(4 * n));
}

void bm_enc(benchmark::State &state, Enc c, size_t n) {
  if (!c.fn && !c.pub) {
    state.SkipWithError((c.name + " is not runnable here (CPU or EMBD_ISA)").c_str());
    return;
  }
  clean_upper_state();
  for (auto _ : state) {
    if (c.pub)
      embd_from_f32(g_wire, g_fin, n, c.dtype, EMBD_ORDER_LE, nullptr);
    else
      c.fn(g_wire, g_fin, n, 0);
    benchmark::DoNotOptimize(g_wire);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(4 * n));
}

void bm_memcpy(benchmark::State &state, size_t bytes) {
  clean_upper_state();
  uint8_t *src = reinterpret_cast<uint8_t *>(g_want), *dst = reinterpret_cast<uint8_t *>(g_f32);
  for (auto _ : state) {
    std::memcpy(dst, src, bytes);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void check_cvt(const Cvt &c) {
  if (!c.fn && !c.pub) return;
  embd_to_f32_fn ref = embd_to_f32_impl(0, c.dtype);
  for (size_t n : kSizes) {
    ref(g_want, g_wire, n, 0);
    if (c.pub)
      embd_to_f32(g_f32, g_wire, n, c.dtype, EMBD_ORDER_LE);
    else
      c.fn(g_f32, g_wire, n, 0);
    if (std::memcmp(g_f32, g_want, 4 * n) != 0)
      die(c.name + ": " + embd_dtype_name(c.dtype) + " differs from scalar at n=" + std::to_string(n));
  }
}

void check_enc(const Enc &c) {
  if (!c.fn && !c.pub) return;
  embd_from_f32_fn ref = embd_from_f32_impl(0, c.dtype);
  std::vector<uint8_t> want(2 * kMax);
  for (size_t n : kSizes) {
    ref(want.data(), g_fin, n, 0);
    if (c.pub)
      embd_from_f32(g_wire, g_fin, n, c.dtype, EMBD_ORDER_LE, nullptr);
    else
      c.fn(g_wire, g_fin, n, 0);
    if (std::memcmp(g_wire, want.data(), 2 * n) != 0)
      die(c.name + ": encode " + embd_dtype_name(c.dtype) + " differs at n=" + std::to_string(n));
  }
}

}  // namespace

int main(int argc, char **argv) {
  // one arena: wire | f32 | want, f32 - want = 2048 mod 4096 (see the top)
  const size_t wire_b = 2 * kMax, f32_b = 4 * kMax + 4096;
  g_arena = alloc_aligned(wire_b + 2 * f32_b + 8192);
  g_wire = g_arena;
  g_want = reinterpret_cast<float *>(g_arena + wire_b + 4096);
  g_f32 = reinterpret_cast<float *>(reinterpret_cast<uint8_t *>(g_want) + f32_b + 2048);
  fill_random(g_wire, wire_b);

  const embd_dtype cvt_dtypes[] = {EMBD_DTYPE_F16,      EMBD_DTYPE_BF16,  EMBD_DTYPE_FP8_E4M3,
                                   EMBD_DTYPE_FP8_E5M2, EMBD_DTYPE_INT8,  EMBD_DTYPE_UINT8,
                                   EMBD_DTYPE_BINARY,   EMBD_DTYPE_UBINARY};
  std::vector<Cvt> cvts;
  std::vector<Enc> encs;
  std::string runnable;
  const size_t count = embd_impl_count(EMBD_KERNEL_CONVERT);
  for (embd_dtype d : cvt_dtypes) {
    for (size_t i = 0; i < count; i++) {
      embd_impl_info info;
      if (embd_impl_get(EMBD_KERNEL_CONVERT, i, &info) != EMBD_OK) die("embd_impl_get");
      cvts.push_back({info.name, d, embd_to_f32_impl(i, d), false});
      if (d == EMBD_DTYPE_F16 && info.runnable)
        runnable += (runnable.empty() ? "" : ",") + std::string(info.name);
    }
    cvts.push_back({"embd", d, nullptr, true});
  }
  g_fin = reinterpret_cast<float *>(alloc_aligned(4 * kMax));
  // encode input: embedding-like values (roughly normal, scale 0.03, as embd bench), so
  // that the kernels see the value mix of real data (few subnormal results, no NaNs)
  {
    uint64_t x = 0x2545F4914F6CDD1Du;
    for (size_t i = 0; i < kMax; i++) {
      double a = 0;
      for (int k = 0; k < 4; k++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        a += static_cast<double>((x * 0x2545F4914F6CDD1Du) >> 11) * 0x1.0p-53 - 0.5;
      }
      g_fin[i] = static_cast<float>(a * 0.05);
    }
  }
  for (embd_dtype d : {EMBD_DTYPE_F16, EMBD_DTYPE_BF16}) {
    for (size_t i = 0; i < count; i++) {
      embd_impl_info info;
      if (embd_impl_get(EMBD_KERNEL_CONVERT_ENCODE, i, &info) != EMBD_OK) die("embd_impl_get");
      encs.push_back({info.name, d, embd_from_f32_impl(i, d), false});
    }
    encs.push_back({"embd", d, nullptr, true});
  }
  for (const Enc &c : encs) check_enc(c);
  fill_random(g_wire, wire_b);
  for (const Cvt &c : cvts) check_cvt(c);

  const std::string cpu = cpu_model();
  std::fprintf(stderr, "bench_convert: CPU %s; convert %s, convert-encode %s\n", cpu.c_str(),
               embd_impl_active(EMBD_KERNEL_CONVERT), embd_impl_active(EMBD_KERNEL_CONVERT_ENCODE));
    benchmark::AddCustomContext("embd_version", embd_version());
  benchmark::AddCustomContext("embd_convert_active", embd_impl_active(EMBD_KERNEL_CONVERT));
  benchmark::AddCustomContext("convert_contenders", runnable);

  for (size_t n : kSizes) {
    const std::string tail = "/" + std::to_string(n);
    benchmark::RegisterBenchmark(("memcpy/" + std::to_string(4 * n)).c_str(), bm_memcpy, 4 * n);
    for (const Cvt &c : cvts)
      benchmark::RegisterBenchmark(
          ("to_f32/" + std::string(embd_dtype_name(c.dtype)) + "/" + c.name + tail).c_str(), bm_cvt,
          c, n);
    for (const Enc &c : encs)
      benchmark::RegisterBenchmark(
          ("from_f32/" + std::string(embd_dtype_name(c.dtype)) + "/" + c.name + tail).c_str(),
          bm_enc, c, n);
  }

  if (run_registered(argc, argv)) return 1;
  std::free(g_arena);
  std::free(g_fin);
  return 0;
}
