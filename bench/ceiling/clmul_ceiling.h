/* The carry-less multiply ceiling of a fold-based CRC-32 on this core.
 *
 * Folding consumes every 64-bit input word in one 64x64 carry-less product, so no
 * PCLMULQDQ / VPCLMULQDQ kernel can process bytes faster than the core retires those
 * products. Each function below issues, for n input bytes, exactly the products a fold
 * needs (n / 8 of them, packed as wide as the instruction allows) on eight independent
 * chains with nothing else in the loop: no loads, no XORs, no latency to wait for. Its
 * time is a lower bound for any fold at that width on this machine; bench_crc32 reports
 * it beside the real kernels as ceiling/<width>.
 *
 * Each lives in its own file compiled with its ISA's -m flags (see bench/CMakeLists.txt);
 * the caller checks embd_cpu_features() first. */
#ifndef EMBD_BENCH_CLMUL_CEILING_H
#define EMBD_BENCH_CLMUL_CEILING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n / 8 64x64 products as n / 8 PCLMULQDQ on 128-bit registers (one product each: the
 * sse42 tier). */
uint64_t embd_bench_clmul_ceiling_xmm(size_t n);
/* n / 8 products as n / 16 VPCLMULQDQ on 256-bit registers (the avx2 tier). */
uint64_t embd_bench_clmul_ceiling_ymm(size_t n);
/* n / 8 products as n / 32 VPCLMULQDQ on 512-bit registers (the avx512 tier). */
uint64_t embd_bench_clmul_ceiling_zmm(size_t n);

#ifdef __cplusplus
}
#endif

#endif
