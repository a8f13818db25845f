/* The implementation registry and the one call mechanism, resolved once per process.
 *
 * embd_families_ has one row per kernel family: its name, its implementations, and its
 * slots, atomic function pointers that every public entry point reads inline
 * (EMBD_CALL in internal.h: a load and an indirect tail jump). The slots start at the
 * family's resolving stubs (zlib-ng's scheme, without GNU ifunc); the first call through
 * any of them detects the CPU, reads EMBD_ISA, stores every family's choice and forwards
 * the call. Stores are release, loads acquire: a thread sees either a stub or a complete
 * choice, never a torn one, and TSan sees the ordering. Re-resolution (embd_isa_set) is
 * serialised by a mutex.
 *
 * A new kernel family is its implementation list and one row here, plus its files (the
 * kernels, its stub and public entry points, and its embd_kernel value). */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floatarray_kernel.h"
#include "internal.h"

/* ---- the registry ---------------------------------------------------------------- */

/* Each row names its tier and only the features it needs beyond the tier's (the tier's
 * own come from the one table in cpu.c: embd_tier_required), so a row cannot leave out
 * a feature its file is compiled for. */
#define FN(f) ((embd_any_fn)(f))

/* In order of preference, lowest first: resolution takes the last runnable one. */
static const struct embd_impl_desc crc32_impls[] = {
    {"scalar", EMBD_TIER_SCALAR, 0, {FN(embd_crc32_scalar)}, 1},
#if defined(EMBD_HAVE_X86_SSE42)
    {"sse42-pclmul", EMBD_TIER_SSE42, 0, {FN(embd_crc32_pclmul)}, 1},
#endif
#if defined(EMBD_HAVE_X86_AVX2)
    /* The sse42 kernel's code VEX-encoded, for AVX2 CPUs without VPCLMULQDQ. */
    {"avx2-pclmul", EMBD_TIER_AVX2, 0, {FN(embd_crc32_pclmul_avx2)}, 1},
#endif
#if defined(EMBD_HAVE_CRC32_AVX512_SIMDE)
    /* The avx512 kernel through simde's AVX-512 emulation, in the avx2 family's files
     * (crc32_vpclmul_avx512_simde.c): never picked, there for the tests on CPUs without
     * AVX-512. Listed below the avx2 kernel: it is never preferred, and a row after the
     * active one that could run would look like a missed choice (tests/testutil.h's
     * dispatch check; embd_impl_info does not say which rows are never picked, only
     * embd_impl_emulated does). */
    {"avx512-simde", EMBD_TIER_AVX2, EMBD_CPU_VPCLMULQDQ,
     {FN(embd_crc32_vpclmul_avx512_simde)}, 0},
#endif
#if defined(EMBD_HAVE_X86_AVX2)
    {"avx2-vpclmul", EMBD_TIER_AVX2, EMBD_CPU_VPCLMULQDQ, {FN(embd_crc32_vpclmul_avx2)}, 1},
#endif
#if defined(EMBD_HAVE_X86_AVX512)
    {"avx512-vpclmul", EMBD_TIER_AVX512, 0, {FN(embd_crc32_vpclmul_avx512)}, 1},
#endif
#if defined(EMBD_HAVE_ARM_CRC32)
    {"armv8-crc", EMBD_TIER_NEON, EMBD_CPU_ARM_CRC32, {FN(embd_crc32_armv8)}, 1},
#endif
#if defined(EMBD_HAVE_ARM_PMULL)
    {"armv8-crc-pmull", EMBD_TIER_NEON, EMBD_CPU_ARM_CRC32 | EMBD_CPU_ARM_PMULL,
     {FN(embd_crc32_armv8_pmull)}, 1},
#endif
#if defined(EMBD_HAVE_WASM_SIMD128)
    /* Tables, three chains (no carry-less multiply in WebAssembly): src/arch/wasm. */
    {"wasm-simd128", EMBD_TIER_WASM_SIMD128, 0, {FN(embd_crc32_wasm)}, 1},
#endif
};

/* Each with its copy kernel (slot EMBD_BSWAP32_FN_COPY): the identity is the other half
 * of the host-order helpers (embd_f32_from_le copies on little-endian hosts), so it is
 * selected, forced and listed with the swap. */
static const struct embd_impl_desc bswap32_impls[] = {
    {"scalar", EMBD_TIER_SCALAR, 0, {FN(embd_bswap32_scalar), FN(embd_copy_scalar)}, 1},
#if defined(EMBD_HAVE_X86_SSE42)
    {"sse42-ssse3", EMBD_TIER_SSE42, 0, {FN(embd_bswap32_ssse3), FN(embd_copy_sse2)}, 1},
#endif
#if defined(EMBD_HAVE_X86_AVX2)
    {"avx2", EMBD_TIER_AVX2, 0, {FN(embd_bswap32_avx2), FN(embd_copy_avx2)}, 1},
#endif
#if defined(EMBD_HAVE_X86_AVX512)
    /* the AVX2 copy: see bswap_avx2.c */
    {"avx512-bw", EMBD_TIER_AVX512, 0, {FN(embd_bswap32_avx512), FN(embd_copy_avx2)}, 1},
#endif
#if defined(EMBD_HAVE_NEON_SIMDE)
    /* The NEON kernel compiled through simde, in the sse42 family's files (its -m flags:
     * simde turns the NEON calls into SSSE3/SSE4.1 code): tier sse42, so that EMBD_ISA=
     * scalar never runs it. For tests and benchmarks only, never picked. */
    {"neon-simde", EMBD_TIER_SSE42, 0, {FN(embd_bswap32_neon), FN(embd_copy_neon)}, 0},
#endif
#if defined(EMBD_HAVE_ARM_NEON)
    {"neon", EMBD_TIER_NEON, 0, {FN(embd_bswap32_neon), FN(embd_copy_neon)}, 1},
#endif
#if defined(EMBD_HAVE_WASM_SIMD128)
    {"wasm-simd128", EMBD_TIER_WASM_SIMD128, 0, {FN(embd_bswap32_wasm), FN(embd_copy_wasm)}, 1},
#endif
};

/* base64: one list per direction, the same implementations. */
#define B64_IMPLS(dir)                                                                      \
  {"scalar", EMBD_TIER_SCALAR, 0, {FN(embd_base64_##dir##_scalar)}, 1},                       \
  B64_SSE42(dir) B64_AVX2(dir) B64_AVX512(dir) B64_AVX512_SIMDE(dir) B64_NEON_SIMDE(dir) \
      B64_NEON(dir) B64_WASM(dir)
#if defined(EMBD_HAVE_X86_SSE42)
#define B64_SSE42(dir) {"sse42", EMBD_TIER_SSE42, 0, {FN(embd_base64_##dir##_sse42)}, 1},
#else
#define B64_SSE42(dir)
#endif
#if defined(EMBD_HAVE_X86_AVX2)
#define B64_AVX2(dir) {"avx2", EMBD_TIER_AVX2, 0, {FN(embd_base64_##dir##_avx2)}, 1},
#else
#define B64_AVX2(dir)
#endif
#if defined(EMBD_HAVE_X86_AVX512)
#define B64_AVX512(dir) \
  {"avx512-vbmi", EMBD_TIER_AVX512, 0, {FN(embd_base64_##dir##_avx512)}, 1},
#else
#define B64_AVX512(dir)
#endif
#if defined(EMBD_HAVE_B64_AVX512_SIMDE)
/* The avx512 kernels' source through simde's AVX-512 emulation, built with the avx2
 * family's flags: tier avx2, never picked. For the tests on CPUs without AVX-512
 * (base64_avx512_simde.c). */
#define B64_AVX512_SIMDE(dir) \
  {"avx512-simde", EMBD_TIER_AVX2, 0, {FN(embd_base64_##dir##_avx512simde)}, 0},
#else
#define B64_AVX512_SIMDE(dir)
#endif
#if defined(EMBD_HAVE_NEON_SIMDE)
#define B64_NEON_SIMDE(dir) \
  {"neon-simde", EMBD_TIER_SSE42, 0, {FN(embd_base64_##dir##_neon)}, 0},
#else
#define B64_NEON_SIMDE(dir)
#endif
#if defined(EMBD_HAVE_ARM_NEON)
#define B64_NEON(dir) {"neon", EMBD_TIER_NEON, 0, {FN(embd_base64_##dir##_neon)}, 1},
#else
#define B64_NEON(dir)
#endif
#if defined(EMBD_HAVE_WASM_SIMD128)
#define B64_WASM(dir) \
  {"wasm-simd128", EMBD_TIER_WASM_SIMD128, 0, {FN(embd_base64_##dir##_wasm)}, 1},
#else
#define B64_WASM(dir)
#endif
static const struct embd_impl_desc b64dec_impls[] = {B64_IMPLS(decode)};
static const struct embd_impl_desc b64enc_impls[] = {B64_IMPLS(encode)};

/* dtype conversions: one slot per dtype (internal.h, EMBD_CONVERT_SLOTS). */
#define CVT_FNS(isa)                                                                     \
  {FN(embd_cvt_f16_##isa), FN(embd_cvt_bf16_##isa), FN(embd_cvt_e4m3_##isa),              \
   FN(embd_cvt_e5m2_##isa), FN(embd_cvt_i8_##isa), FN(embd_cvt_u8_##isa),                 \
   FN(embd_cvt_binary_##isa), FN(embd_cvt_ubinary_##isa)}
#define ENC_FNS(isa) {FN(embd_enc_f16_##isa), FN(embd_enc_bf16_##isa)}
/* Both families: the same implementations, in the same order. */
#if defined(EMBD_HAVE_X86_SSE42)
#define CVT_SSE42(fns) {"sse42", EMBD_TIER_SSE42, 0, fns(sse42), 1},
#else
#define CVT_SSE42(fns)
#endif
#if defined(EMBD_HAVE_X86_AVX2_F16C)
/* The file is built with -mf16c besides the avx2 tier's flags (cmake/EmbdIsaFlags.cmake). */
#define CVT_AVX2(fns) {"avx2-f16c", EMBD_TIER_AVX2, EMBD_CPU_F16C, fns(avx2), 1},
#else
#define CVT_AVX2(fns)
#endif
#if defined(EMBD_HAVE_X86_AVX512)
#define CVT_AVX512(fns) {"avx512", EMBD_TIER_AVX512, 0, fns(avx512), 1},
#else
#define CVT_AVX512(fns)
#endif
#if defined(EMBD_HAVE_AVX512_SIMDE)
/* The avx512 kernels' source through simde's AVX-512 emulation, built with the avx2
 * family's flags and -mf16c: tier avx2 + F16C, never picked. For the tests on CPUs
 * without AVX-512 (convert_avx512_simde.c). */
#define CVT_AVX512_SIMDE(fns) {"avx512-simde", EMBD_TIER_AVX2, EMBD_CPU_F16C, fns(avx512simde), 0},
#else
#define CVT_AVX512_SIMDE(fns)
#endif
#if defined(EMBD_HAVE_NEON_SIMDE)
/* Tested and measured on x86, never picked: see bswap32's row. */
#define CVT_NEON_SIMDE(fns) {"neon-simde", EMBD_TIER_SSE42, 0, fns(neon), 0},
#else
#define CVT_NEON_SIMDE(fns)
#endif
#if defined(EMBD_HAVE_ARM_NEON)
#define CVT_NEON(fns) {"neon", EMBD_TIER_NEON, 0, fns(neon), 1},
#else
#define CVT_NEON(fns)
#endif
#if defined(EMBD_HAVE_WASM_SIMD128)
#define CVT_WASM(fns) {"wasm-simd128", EMBD_TIER_WASM_SIMD128, 0, fns(wasm), 1},
#else
#define CVT_WASM(fns)
#endif
#define CVT_IMPLS(fns)                                                               \
  {"scalar", EMBD_TIER_SCALAR, 0, fns(scalar), 1},                                    \
  CVT_SSE42(fns) CVT_AVX2(fns) CVT_AVX512(fns) CVT_AVX512_SIMDE(fns) CVT_NEON_SIMDE(fns)    \
  CVT_NEON(fns) CVT_WASM(fns)
static const struct embd_impl_desc convert_impls[] = {CVT_IMPLS(CVT_FNS)};
static const struct embd_impl_desc convert_enc_impls[] = {CVT_IMPLS(ENC_FNS)};

/* JSON float arrays (floatarray_kernel.h). The scalar reference takes nothing: the OpenAI
 * decoder's own loop (decimal.h) is today's exact path. The SIMD kernels are opt-in
 * (selectable FA_OPT_IN): picked only when EMBD_ISA or embd_isa_set names a tier (the
 * per-tier tests, benchmarks), never by automatic resolution, because they are not
 * faster than that loop on the CPU they were measured on (AMD Zen 1: 0.95x compact,
 * 0.85x pretty-printed; README, Measured). Listed, runnable, not emulations. */
#define FA_OPT_IN 2
static const struct embd_impl_desc floatarray_impls[] = {
    {"scalar", EMBD_TIER_SCALAR, 0, {FN(embd_floatarray_scalar)}, 1},
#if defined(EMBD_HAVE_X86_SSE42)
    {"sse42", EMBD_TIER_SSE42, 0, {FN(embd_floatarray_sse42)}, FA_OPT_IN},
#endif
#if defined(EMBD_HAVE_X86_AVX2)
    {"avx2", EMBD_TIER_AVX2, 0, {FN(embd_floatarray_avx2)}, FA_OPT_IN},
#endif
};

/* The registry: one row per kernel family, its slots starting at its stubs. */
#define FAMILY(name, impls, ...) {{__VA_ARGS__}, 0, name, impls, sizeof impls / sizeof impls[0]}
struct embd_family embd_families_[EMBD_FAMILY_COUNT_] = {
    [EMBD_KERNEL_CRC32] = FAMILY("crc32", crc32_impls, FN(embd_crc32_stub_)),
    [EMBD_KERNEL_BSWAP32] =
        FAMILY("bswap32", bswap32_impls, FN(embd_bswap32_stub_), FN(embd_copy_stub_)),
    [EMBD_KERNEL_BASE64_DECODE] =
        FAMILY("base64-decode", b64dec_impls, FN(embd_base64_decode_stub_)),
    [EMBD_KERNEL_BASE64_ENCODE] =
        FAMILY("base64-encode", b64enc_impls, FN(embd_base64_encode_stub_)),
    [EMBD_KERNEL_CONVERT] = FAMILY("convert", convert_impls, FN(embd_cvt_f16_stub_),
                                   FN(embd_cvt_bf16_stub_), FN(embd_cvt_e4m3_stub_),
                                   FN(embd_cvt_e5m2_stub_), FN(embd_cvt_i8_stub_),
                                   FN(embd_cvt_u8_stub_), FN(embd_cvt_binary_stub_),
                                   FN(embd_cvt_ubinary_stub_)),
    [EMBD_KERNEL_CONVERT_ENCODE] = FAMILY("convert-encode", convert_enc_impls,
                                          FN(embd_enc_f16_stub_), FN(embd_enc_bf16_stub_)),
    [EMBD_KERNEL_FLOAT_ARRAY_] = FAMILY("float-array", floatarray_impls, FN(embd_floatarray_stub_)),
};
#undef FAMILY

const struct embd_impl_desc *embd_impl_desc(embd_kernel kernel, size_t index) {
  if ((unsigned)kernel >= EMBD_FAMILY_COUNT_ || index >= embd_families_[kernel].count) return NULL;
  return &embd_families_[kernel].impls[index];
}

const char *embd_kernel_name(embd_kernel kernel) {
  if ((unsigned)kernel >= EMBD_KERNEL_COUNT_) return NULL;
  return embd_families_[kernel].name;
}

size_t embd_impl_count(embd_kernel kernel) {
  if ((unsigned)kernel >= EMBD_KERNEL_COUNT_) return 0;
  return embd_families_[kernel].count;
}

int embd_impl_emulated(embd_kernel kernel, size_t index) {
  if ((unsigned)kernel >= EMBD_KERNEL_COUNT_) return 0; /* the public families only */
  const struct embd_impl_desc *d = embd_impl_desc(kernel, index);
  return d && !d->selectable;
}

/* ---- state ----------------------------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_ready;
static _Atomic uint64_t g_detected;
static _Atomic uint64_t g_enabled;
/* No tier forced: every tier is allowed (the cap is compared with embd_tier values). */
#define CAP_NONE INT_MAX
static atomic_int g_cap = CAP_NONE; /* highest tier allowed */

static uint64_t impl_required(const struct embd_impl_desc *d) {
  return embd_tier_required(d->tier) | d->extra;
}

static int impl_runnable(const struct embd_impl_desc *d, int cap, uint64_t enabled) {
  return (int)d->tier <= cap && (impl_required(d) & ~enabled) == 0;
}

static size_t select_impl(embd_kernel k, int cap, uint64_t enabled) {
  for (size_t i = embd_families_[k].count; i-- > 0;) {
    const struct embd_impl_desc *d = &embd_families_[k].impls[i];
    /* FA_OPT_IN rows only under a tier named in EMBD_ISA / embd_isa_set */
    if ((d->selectable == 1 || (d->selectable == FA_OPT_IN && cap != CAP_NONE)) &&
        impl_runnable(d, cap, enabled))
      return i;
  }
  return 0;
}

/* Caller holds g_lock. */
static void apply(int cap, uint64_t enabled) {
  atomic_store_explicit(&g_enabled, enabled, memory_order_release);
  atomic_store_explicit(&g_cap, cap, memory_order_release);
  for (int k = 0; k < EMBD_FAMILY_COUNT_; k++) {
    const size_t i = select_impl((embd_kernel)k, cap, enabled);
    atomic_store_explicit(&embd_families_[k].active, i, memory_order_release);
    /* The family uses the slots its scalar row fills; every row fills the same ones
     * (tests/test_bswap.c checks the copy kernels). */
    for (int f = 0; f < EMBD_IMPL_FNS; f++)
      if (embd_families_[k].impls[0].fn[f])
        atomic_store_explicit(&embd_families_[k].slot[f], embd_families_[k].impls[i].fn[f],
                              memory_order_release);
  }
}

/* ---- spec parsing ---------------------------------------------------------------- */

static embd_result parse_spec(const char *spec, uint64_t detected, int *cap_out,
                              uint64_t *enabled_out, char *msg, size_t msgcap) {
  int cap = CAP_NONE, have_tier = 0;
  uint64_t enabled = detected;
  const char *p = spec ? spec : "";
  int first = 1;
  while (*p || (!first && p[-1] == ',')) {
    first = 0;
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0) {
      snprintf(msg, msgcap, "empty word in ISA spec \"%s\"", spec);
      return EMBD_ERR_UNKNOWN_ISA;
    }
    if (p[0] == '-') {
      uint64_t bit = embd_cpu_feature_by_name(p + 1, len - 1);
      if (!bit) {
        snprintf(msg, msgcap, "unknown CPU feature \"%.*s\" in ISA spec \"%s\"", (int)len - 1,
                 p + 1, spec);
        return EMBD_ERR_UNKNOWN_ISA;
      }
      enabled &= ~bit;
    } else if (len == 4 && memcmp(p, "auto", 4) == 0) {
      if (have_tier) {
        snprintf(msg, msgcap, "more than one tier in ISA spec \"%s\"", spec);
        return EMBD_ERR_UNKNOWN_ISA;
      }
      have_tier = 2; /* "auto": no cap, nothing to check */
      cap = CAP_NONE;
    } else {
      const int t = embd_tier_by_name(p, len);
      if (t < 0) {
        snprintf(msg, msgcap,
                 "unknown tier \"%.*s\" in ISA spec \"%s\" (tiers: scalar, sse42, avx2, "
                 "avx512, neon, wasm-simd128, auto; features are masked with -name)",
                 (int)len, p, spec);
        return EMBD_ERR_UNKNOWN_ISA;
      }
      if (have_tier) {
        snprintf(msg, msgcap, "more than one tier in ISA spec \"%s\"", spec);
        return EMBD_ERR_UNKNOWN_ISA;
      }
      have_tier = 1;
      cap = t;
    }
    p += len;
    if (*p == ',') p++;
  }
  if (have_tier == 1) {
    /* The same requirement the registry applies: a forced tier whose kernels could not
     * run is refused here, never quietly run as a lower tier. */
    const uint64_t missing = embd_tier_required((embd_tier)cap) & ~enabled;
    if (missing) {
      /* Name a masked feature first: the spec's own mask is the likelier surprise. */
      const uint64_t named = (missing & detected) ? (missing & detected) : missing;
      const char *fname = "?";
      for (int b = 0; b < 64; b++)
        if (named & (UINT64_C(1) << b)) {
          fname = embd_cpu_feature_name(UINT64_C(1) << b);
          break;
        }
      snprintf(msg, msgcap, "tier \"%s\" in ISA spec \"%s\" cannot run here: %s is %s",
               embd_tier_name((embd_tier)cap), spec, fname,
               (detected & named) ? "masked" : "not available");
      return EMBD_ERR_UNSUPPORTED_ISA;
    }
  }
  *cap_out = cap;
  *enabled_out = enabled;
  return EMBD_OK;
}

/* ---- resolution ------------------------------------------------------------------ */

/* CPU detection alone, without EMBD_ISA: embd_isa_check must work even when the
 * environment holds a spec that would abort. Racing first calls store the same value. */
static uint64_t detected_features(void) {
  uint64_t f = atomic_load_explicit(&g_detected, memory_order_acquire);
  if (!f) {
    f = embd_cpu_detect();
    atomic_store_explicit(&g_detected, f, memory_order_release);
  }
  return f;
}

/* Caller holds g_lock. */
static void init_locked(void) {
  if (atomic_load_explicit(&g_ready, memory_order_acquire)) return;
  uint64_t detected = detected_features();
  int cap;
  uint64_t enabled;
  char msg[256];
  const char *env = getenv("EMBD_ISA");
  embd_result r = parse_spec(env, detected, &cap, &enabled, msg, sizeof msg);
  if (r != EMBD_OK) {
    /* Documented in embd/cpu.h: a forced tier that silently became another one would
     * make every benchmark and test run with it meaningless. */
    fprintf(stderr, "embd: EMBD_ISA: %s\n", msg);
    abort();
  }
  apply(cap, enabled);
  atomic_store_explicit(&g_ready, 1, memory_order_release);
}

static void ensure_init(void) {
  if (atomic_load_explicit(&g_ready, memory_order_acquire)) return;
  pthread_mutex_lock(&g_lock);
  init_locked();
  pthread_mutex_unlock(&g_lock);
}

void embd_dispatch_init_(void) { ensure_init(); }

/* ---- public API ------------------------------------------------------------------ */

uint64_t embd_cpu_features(void) { return detected_features(); }

uint64_t embd_cpu_features_enabled(void) {
  ensure_init();
  return atomic_load_explicit(&g_enabled, memory_order_acquire) | EMBD_CPU_KNOWN;
}

embd_result embd_isa_check(const char *spec) {
  int cap;
  uint64_t enabled;
  char msg[256];
  return parse_spec(spec, detected_features(), &cap, &enabled, msg, sizeof msg);
}

embd_result embd_isa_set(const char *spec) {
  int cap;
  uint64_t enabled;
  char msg[256];
  pthread_mutex_lock(&g_lock);
  init_locked();
  embd_result r = parse_spec(spec, atomic_load(&g_detected), &cap, &enabled, msg, sizeof msg);
  if (r == EMBD_OK) apply(cap, enabled);
  pthread_mutex_unlock(&g_lock);
  return r;
}

/* Any family's implementation `index` (internal families included). */
static embd_result impl_get(embd_kernel kernel, size_t index, embd_impl_info *out) {
  const struct embd_impl_desc *d = embd_impl_desc(kernel, index);
  if (!d || !out) return EMBD_ERR_INVALID_ARGUMENT;
  uint64_t enabled = embd_cpu_features_enabled();
  int cap = atomic_load_explicit(&g_cap, memory_order_acquire);
  out->name = d->name;
  out->tier = d->tier;
  out->required = impl_required(d);
  /* A forced tier hides the implementations above it too: a benchmark or test run with
   * EMBD_ISA=avx2 must not measure or call avx512 code through the registry. */
  out->runnable = impl_runnable(d, cap, enabled);
  return EMBD_OK;
}

embd_result embd_impl_get(embd_kernel kernel, size_t index, embd_impl_info *out) {
  if ((unsigned)kernel >= EMBD_KERNEL_COUNT_) return EMBD_ERR_INVALID_ARGUMENT; /* public only */
  return impl_get(kernel, index, out);
}

const char *embd_impl_active(embd_kernel kernel) {
  if ((unsigned)kernel >= EMBD_KERNEL_COUNT_) return NULL; /* the public families only */
  return embd_family_active_(kernel);
}

const char *embd_family_active_(embd_kernel kernel) {
  if ((unsigned)kernel >= EMBD_FAMILY_COUNT_) return NULL;
  ensure_init();
  size_t i = atomic_load_explicit(&embd_families_[kernel].active, memory_order_acquire);
  return embd_families_[kernel].impls[i].name;
}

embd_any_fn embd_impl_fn_(embd_kernel kernel, size_t index, int fn) {
  embd_impl_info info;
  if (impl_get(kernel, index, &info) != EMBD_OK || !info.runnable) return NULL;
  return embd_families_[kernel].impls[index].fn[fn];
}
