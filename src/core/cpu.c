/* CPU feature detection and the feature/tier name tables. */
#include <string.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* xgetbv by opcode so this file needs no -mxsave. */
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

uint64_t embd_cpu_detect(void) {
  uint64_t f = EMBD_CPU_KNOWN;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const unsigned c1 = c;
  if (c1 & (1u << 9)) f |= EMBD_CPU_SSSE3;
  if (c1 & (1u << 20)) f |= EMBD_CPU_SSE42;
  if (c1 & (1u << 1)) f |= EMBD_CPU_PCLMULQDQ;

  /* AVX state must be enabled by the OS (OSXSAVE, XCR0 bits 1-2), and ZMM state (bits
   * 5-7) for AVX-512; otherwise the first YMM/ZMM instruction faults. */
  uint64_t xcr0 = 0;
  if ((c1 & (1u << 27)) && (c1 & (1u << 28))) xcr0 = read_xcr0();
  const int ymm_ok = (xcr0 & 0x6) == 0x6;
  const int zmm_ok = ymm_ok && (xcr0 & 0xE0) == 0xE0;

  if (ymm_ok && (c1 & (1u << 29))) f |= EMBD_CPU_F16C;

  const unsigned max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  if (b & (1u << 8)) f |= EMBD_CPU_BMI2;
  if (ymm_ok) {
    if (b & (1u << 5)) f |= EMBD_CPU_AVX2;
    if (c & (1u << 10)) f |= EMBD_CPU_VPCLMULQDQ;
  }
  if (zmm_ok) {
    if (b & (1u << 16)) f |= EMBD_CPU_AVX512F;
    if (b & (1u << 30)) f |= EMBD_CPU_AVX512BW;
    if (b & (1u << 31)) f |= EMBD_CPU_AVX512VL;
    if (c & (1u << 1)) f |= EMBD_CPU_AVX512VBMI;
    if (d & (1u << 23)) f |= EMBD_CPU_AVX512FP16;
    const unsigned subleaves = a;
    if (subleaves >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      if (a & (1u << 5)) f |= EMBD_CPU_AVX512BF16;
    }
  }
  return f;
}

/* The deterministic cache parameters: leaf 4 (Intel), 0x8000001D (AMD, same layout);
 * each subleaf one cache until type 0. Size = ways x partitions x line x sets. */
static size_t llc_from_leaf(unsigned leaf) {
  size_t best = 0;
  for (unsigned i = 0; i < 16; i++) {
    unsigned a, b, c, d;
    __cpuid_count(leaf, i, a, b, c, d);
    if ((a & 31u) == 0) break; /* no more caches */
    const size_t ways = (b >> 22) + 1, parts = ((b >> 12) & 0x3ffu) + 1, line = (b & 0xfffu) + 1;
    const size_t size = ways * parts * line * ((size_t)c + 1);
    if (size > best) best = size;
  }
  return best;
}

size_t embd_cpu_llc_bytes(void) {
  size_t s = 0;
  if (__get_cpuid_max(0, NULL) >= 4) s = llc_from_leaf(4);
  if (!s && (unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x8000001Du) s = llc_from_leaf(0x8000001Du);
  return s;
}

#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

uint64_t embd_cpu_detect(void) {
  uint64_t f = EMBD_CPU_KNOWN;
  unsigned long hw = getauxval(AT_HWCAP);
  if (hw & HWCAP_ASIMD) f |= EMBD_CPU_ASIMD;
  if (hw & HWCAP_CRC32) f |= EMBD_CPU_ARM_CRC32;
  if (hw & HWCAP_PMULL) f |= EMBD_CPU_ARM_PMULL;
  return f;
}
size_t embd_cpu_llc_bytes(void) { return 0; } /* only the x86 kernels use it */

#elif defined(__wasm_simd128__)
/* A module that validated has every instruction it was compiled with: the loader
 * (js/) picks the SIMD128 module only where WebAssembly.validate accepts it. */
uint64_t embd_cpu_detect(void) { return EMBD_CPU_KNOWN | EMBD_CPU_WASM_SIMD128; }
size_t embd_cpu_llc_bytes(void) { return 0; }

#else
uint64_t embd_cpu_detect(void) { return EMBD_CPU_KNOWN; }
size_t embd_cpu_llc_bytes(void) { return 0; }
#endif

static const struct {
  uint64_t bit;
  const char *name;
} feature_names[] = {
    {EMBD_CPU_SSSE3, "ssse3"},         {EMBD_CPU_SSE42, "sse4.2"},
    {EMBD_CPU_PCLMULQDQ, "pclmulqdq"}, {EMBD_CPU_AVX2, "avx2"},
    {EMBD_CPU_BMI2, "bmi2"},           {EMBD_CPU_VPCLMULQDQ, "vpclmulqdq"},
    {EMBD_CPU_AVX512F, "avx512f"},     {EMBD_CPU_AVX512BW, "avx512bw"},
    {EMBD_CPU_AVX512VL, "avx512vl"},   {EMBD_CPU_AVX512VBMI, "avx512vbmi"},
    {EMBD_CPU_F16C, "f16c"},           {EMBD_CPU_AVX512BF16, "avx512bf16"},
    {EMBD_CPU_AVX512FP16, "avx512fp16"},
    {EMBD_CPU_ASIMD, "asimd"},         {EMBD_CPU_ARM_CRC32, "crc32"},
    {EMBD_CPU_ARM_PMULL, "pmull"},
    {EMBD_CPU_WASM_SIMD128, "simd128"},
};

const char *embd_cpu_feature_name(uint64_t bit) {
  for (size_t i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++)
    if (feature_names[i].bit == bit) return feature_names[i].name;
  return NULL;
}

uint64_t embd_cpu_feature_by_name(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++)
    if (strlen(feature_names[i].name) == len && memcmp(feature_names[i].name, name, len) == 0)
      return feature_names[i].bit;
  return 0;
}

/* The one table of tier requirements. The spec parser (a forced tier must be runnable
 * here), the registry (every implementation of a tier needs the tier's features, plus
 * its own extras: src/dispatch.c) and the listings all read it, so they cannot disagree.
 * A tier's features are the -m flags its kernel files are compiled with
 * (cmake/EmbdIsaFlags.cmake): the compiler may use any of them anywhere in those files
 * (BMI2's shrx/sarx/bzhi in plain index arithmetic, say), so every implementation of the
 * tier needs all of them. The one exception is VPCLMULQDQ, also passed to the avx2 files:
 * compilers emit it only for the carry-less multiply intrinsics, so only the kernel that
 * calls them on 256-bit vectors (crc32 avx2-vpclmul) lists it as an extra. (The 128-bit
 * intrinsic, which crc32 avx2-pclmul calls, is the VEX.128 form: PCLMULQDQ and AVX.) */
#define TIER_SSE42 (EMBD_CPU_SSSE3 | EMBD_CPU_SSE42 | EMBD_CPU_PCLMULQDQ)
#define TIER_AVX2 (TIER_SSE42 | EMBD_CPU_AVX2 | EMBD_CPU_BMI2)
#define TIER_AVX512                                                                \
  (TIER_AVX2 | EMBD_CPU_AVX512F | EMBD_CPU_AVX512BW | EMBD_CPU_AVX512VL |          \
   EMBD_CPU_AVX512VBMI | EMBD_CPU_VPCLMULQDQ)

static const struct {
  const char *name;
  uint64_t required;
} tiers[] = {
    [EMBD_TIER_SCALAR] = {"scalar", 0},
    [EMBD_TIER_SSE42] = {"sse42", TIER_SSE42},
    [EMBD_TIER_AVX2] = {"avx2", TIER_AVX2},
    [EMBD_TIER_AVX512] = {"avx512", TIER_AVX512},
    [EMBD_TIER_NEON] = {"neon", EMBD_CPU_ASIMD},
    [EMBD_TIER_WASM_SIMD128] = {"wasm-simd128", EMBD_CPU_WASM_SIMD128},
};
_Static_assert(sizeof tiers / sizeof tiers[0] == EMBD_TIER_COUNT, "one row per tier");

uint64_t embd_tier_required(embd_tier tier) {
  return (unsigned)tier < EMBD_TIER_COUNT ? tiers[tier].required : 0;
}

const char *embd_tier_name(embd_tier tier) {
  return (unsigned)tier < EMBD_TIER_COUNT ? tiers[tier].name : NULL;
}

int embd_tier_by_name(const char *name, size_t len) {
  for (int t = 0; t < EMBD_TIER_COUNT; t++)
    if (strlen(tiers[t].name) == len && memcmp(tiers[t].name, name, len) == 0) return t;
  return -1;
}
