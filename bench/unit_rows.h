// The float32 rows the OpenAI-body benchmarks (bench_openai, bench_floatarray) print into
// their JSON bodies: one generator, so that both measure the same numbers' text. Header
// only, no Google Benchmark (bench_floatarray is a plain program).
#ifndef EMBD_BENCH_UNIT_ROWS_H
#define EMBD_BENCH_UNIT_ROWS_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

// Row i of a unit-norm "embedding" of `dims` values: Gaussian values (Box-Muller over a
// reproducible xorshift generator), normalised, as float32.
inline void unit_row(size_t i, float *v, size_t dims) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (i + 1);
  auto u01 = [&x] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<double> g(dims);
  double ss = 0;
  for (size_t j = 0; j < dims; j += 2) {
    const double r = std::sqrt(-2 * std::log(u01())), t = 6.283185307179586 * u01();
    g[j] = r * std::cos(t);
    if (j + 1 < dims) g[j + 1] = r * std::sin(t);
  }
  for (double a : g) ss += a * a;
  for (size_t j = 0; j < dims; j++) v[j] = static_cast<float>(g[j] / std::sqrt(ss));
}

#endif
