/* embd: CPU features, tiers and kernel implementations.
 *
 * Each kernel family (CRC-32, ...) has several implementations: a portable scalar one
 * that is the reference, and SIMD ones that need CPU features. The library detects the
 * CPU once and picks, for each kernel, the best implementation the CPU can run.
 *
 * Tiers, by name (each includes the features of the lower x86 tiers):
 *   scalar  portable C, every host
 *   sse42   SSSE3 + SSE4.2 + PCLMULQDQ
 *   avx2    sse42 + AVX2 + BMI2 (the crc32 kernel uses VPCLMULQDQ on YMM where the
 *           CPU has it, otherwise the sse42 one runs)
 *   avx512  avx2 + AVX-512 F/BW/VL/VBMI + VPCLMULQDQ
 * Every implementation of a tier needs all of its tier's features (its code is compiled
 * for them), so masking one of them hides the whole tier: "avx2,-bmi2" is an error, and
 * "-bmi2" alone runs sse42 kernels. The NEON kernels built for x86 through simde
 * ("neon-simde", listed for tests and benchmarks, never picked) are sse42 code and are
 * listed with tier sse42.
 *   neon    aarch64 ASIMD (CRC-32 also uses the ARMv8 CRC32 and PMULL extensions,
 *           each detected separately)
 *   wasm-simd128  WebAssembly SIMD128: the module built with -msimd128 (js/); the
 *           module without it has the scalar tier alone
 *
 * Forcing and masking, for tests and benchmarks: a spec is a comma-separated list of
 * words: at most one tier name (the highest tier to use: it must be runnable here), or
 * "auto", and any number of "-feature" words that hide a feature (names as in
 * embd_cpu_feature_name, e.g. "-vpclmulqdq", "-pmull"). Examples: "scalar", "avx2",
 * "avx512,-vpclmulqdq" (an error: avx512 needs it), "avx2,-bmi2" (an error too),
 * "neon,-pmull".
 *
 * The environment variable EMBD_ISA holds such a spec and is read once, the first time
 * a kernel is used. An invalid EMBD_ISA is not ignored: the library prints the reason to
 * stderr and aborts, because a benchmark or test that silently ran another tier would
 * report wrong results.
 *
 * Thread safety: every function here may be called from any thread at any time. The
 * dispatcher's state (detected features, mask, the chosen implementations) is atomic;
 * embd_isa_set is process-wide and safe against concurrent kernel calls (they finish on
 * the implementation they started with).
 */
#ifndef EMBD_CPU_H
#define EMBD_CPU_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU feature bits, as returned by embd_cpu_features(). */
#define EMBD_CPU_SSSE3       (UINT64_C(1) << 0)
#define EMBD_CPU_SSE42       (UINT64_C(1) << 1)
#define EMBD_CPU_PCLMULQDQ   (UINT64_C(1) << 2)
#define EMBD_CPU_AVX2        (UINT64_C(1) << 3)
#define EMBD_CPU_BMI2        (UINT64_C(1) << 4)
#define EMBD_CPU_VPCLMULQDQ  (UINT64_C(1) << 5) /* with the OS saving YMM state */
#define EMBD_CPU_AVX512F     (UINT64_C(1) << 6) /* AVX-512 bits imply OS ZMM support */
#define EMBD_CPU_AVX512BW    (UINT64_C(1) << 7)
#define EMBD_CPU_AVX512VL    (UINT64_C(1) << 8)
#define EMBD_CPU_AVX512VBMI  (UINT64_C(1) << 9)
#define EMBD_CPU_F16C        (UINT64_C(1) << 10) /* with the OS saving YMM state */
#define EMBD_CPU_AVX512BF16  (UINT64_C(1) << 11)
#define EMBD_CPU_AVX512FP16  (UINT64_C(1) << 12)
#define EMBD_CPU_ASIMD       (UINT64_C(1) << 16)
#define EMBD_CPU_ARM_CRC32   (UINT64_C(1) << 17)
#define EMBD_CPU_ARM_PMULL   (UINT64_C(1) << 18)
#define EMBD_CPU_WASM_SIMD128 (UINT64_C(1) << 19) /* a WebAssembly build with -msimd128 */
#define EMBD_CPU_KNOWN       (UINT64_C(1) << 63) /* detection has run */

typedef enum embd_tier {
  EMBD_TIER_SCALAR = 0,
  EMBD_TIER_SSE42 = 1,
  EMBD_TIER_AVX2 = 2,
  EMBD_TIER_AVX512 = 3,
  EMBD_TIER_NEON = 4,
  EMBD_TIER_WASM_SIMD128 = 5 /* only in the WebAssembly build (js/, scripts/build-wasm.sh) */
} embd_tier;

typedef enum embd_kernel {
  EMBD_KERNEL_CRC32 = 0,
  EMBD_KERNEL_BSWAP32 = 1,
  EMBD_KERNEL_BASE64_DECODE = 2,
  EMBD_KERNEL_BASE64_ENCODE = 3,
  EMBD_KERNEL_CONVERT = 4,        /* any dtype -> float32 (embd/convert.h) */
  EMBD_KERNEL_CONVERT_ENCODE = 5, /* float32 -> float16 / bfloat16 */
  EMBD_KERNEL_COUNT_ /* number of kernel families; not a kernel */
} embd_kernel;

/* Features of this CPU (with OS support), including EMBD_CPU_KNOWN. Not affected by
 * masking. */
EMBD_API uint64_t embd_cpu_features(void);

/* Features the library may use now: detected minus those masked by EMBD_ISA or
 * embd_isa_set(). */
EMBD_API uint64_t embd_cpu_features_enabled(void);

/* Name of one feature bit ("avx2", "pmull", ...), NULL for anything else. */
EMBD_API const char *embd_cpu_feature_name(uint64_t feature_bit);

/* Tier names: "scalar", "sse42", "avx2", "avx512", "neon"; NULL for others. */
EMBD_API const char *embd_tier_name(embd_tier tier);
/* Kernel family names: "crc32", "bswap32", "base64-decode", "base64-encode", "convert",
 * "convert-encode"; NULL for others. */
EMBD_API const char *embd_kernel_name(embd_kernel kernel);

/* Force a tier and/or mask features for the whole process, with the syntax described
 * above; NULL or "" or "auto" returns to automatic selection with nothing masked. On
 * error nothing changes. Kernel calls running concurrently finish on the implementation
 * they started with; later calls use the new one. Meant for tests and benchmarks. */
EMBD_API embd_result embd_isa_set(const char *spec);

/* Checks a spec without applying it. */
EMBD_API embd_result embd_isa_check(const char *spec);

/* The implementations of one kernel family, in order of preference (index 0 is the
 * scalar reference). */
typedef struct embd_impl_info {
  const char *name;   /* e.g. "avx512-vpclmul" */
  embd_tier tier;     /* the tier it belongs to */
  uint64_t required;  /* EMBD_CPU_* bits it needs */
  int runnable;       /* non-zero when every required feature is enabled */
} embd_impl_info;

/* Number of implementations compiled in for `kernel` (0 for an unknown kernel). */
EMBD_API size_t embd_impl_count(embd_kernel kernel);

/* Describes implementation `index` of `kernel`. */
EMBD_API embd_result embd_impl_get(embd_kernel kernel, size_t index, embd_impl_info *out);

/* Non-zero when implementation `index` of `kernel` is an emulation: another ISA's source
 * built for this one through simde ("avx512-simde": the avx512 kernel as AVX2 code,
 * "neon-simde": the NEON kernel as SSSE3/SSE4.1 code), compiled in so that tests and
 * benchmarks can run that source on CPUs without the ISA. Never picked by the dispatcher,
 * and no choice for users (embd cpu and embd bench list them only with --emulated). 0 for
 * every other implementation, an unknown kernel or an index past the end. */
EMBD_API int embd_impl_emulated(embd_kernel kernel, size_t index);

/* Name of the implementation that `kernel` uses now (resolving it if needed). */
EMBD_API const char *embd_impl_active(embd_kernel kernel);

#ifdef __cplusplus
}
#endif

#endif
