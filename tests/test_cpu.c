/* CPU features, tiers, ISA specs (embd_isa_check / embd_isa_set), the dispatcher's
 * choice under each of them, result strings, the version, and re-dispatch while other
 * threads compute CRCs (also the TSan test).
 *
 * Environment: EMBD_ISA (checked first: the initial state must honour it; exits 77 if
 * this CPU cannot run it), EMBD_TEST_SCALE, EMBD_TEST_SEED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "testutil.h"

#if defined(__x86_64__) || defined(__i386__)
#define ON_X86 1
#else
#define ON_X86 0
#endif
#if defined(__aarch64__)
#define ON_ARM64 1
#else
#define ON_ARM64 0
#endif

static tu_rng g_rng;

static int restore_auto(void **state) {
  (void)state;
  return embd_isa_set(NULL) == EMBD_OK ? 0 : -1;
}

static int impl_registered(const char *name) {
  for (size_t i = 0; i < embd_impl_count(EMBD_KERNEL_CRC32); i++) {
    embd_impl_info in;
    if (embd_impl_get(EMBD_KERNEL_CRC32, i, &in) == EMBD_OK && strcmp(in.name, name) == 0)
      return 1;
  }
  return 0;
}

static int tier_runnable(const char *tier) { return embd_isa_check(tier) == EMBD_OK; }

/* The public embd_crc32 (and every implementation embd_crc32_impl hands out) still
 * agrees with the naive reference, over lengths that take the dispatched path. */
static void check_crc_now(const char *ctx) {
  static uint8_t buf[5000 + 64];
  tu_fill(&g_rng, buf, sizeof buf);
  static const size_t lens[] = {0, 1, 15, 31, 32, 33, 63, 64, 127, 128, 255, 256, 257, 1000, 4999};
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    const size_t off = tu_range(&g_rng, 0, 63);
    const uint32_t init = tu_u32(&g_rng);
    const uint32_t want = tu_crc32_naive(init, buf + off, lens[k]);
    const uint32_t got = embd_crc32(init, buf + off, lens[k]);
    if (got != want)
      fail_msg("%s: embd_crc32 len %zu = %08x, want %08x (active %s)", ctx, lens[k], got, want,
               embd_impl_active(EMBD_KERNEL_CRC32));
    for (size_t i = 0; i < embd_impl_count(EMBD_KERNEL_CRC32); i++) {
      embd_crc32_fn f = embd_crc32_impl(i);
      if (f && f(init, buf + off, lens[k]) != want)
        fail_msg("%s: implementation %zu len %zu wrong", ctx, i, lens[k]);
    }
  }
}

/* The tier cap a spec sets: its tier word, or none (every tier) without one. */
static int spec_cap(const char *spec) {
  static const char *const tiers[] = {"scalar", "sse42", "avx2", "avx512", "neon"};
  int cap = EMBD_TIER_NEON;
  if (!spec) return cap;
  const char *p = spec;
  while (*p) {
    size_t len = strcspn(p, ",");
    for (int t = 0; t < 5; t++)
      if (strlen(tiers[t]) == len && strncmp(p, tiers[t], len) == 0) cap = t;
    p += len;
    if (*p == ',') p++;
  }
  return cap;
}

/* Registry flags follow the enabled features and the forced tier: an implementation
 * above the tier is not runnable either. Every kernel family, and the active one of each
 * is runnable. */
static void check_runnable_flags(const char *ctx, const char *spec) {
  const uint64_t en = embd_cpu_features_enabled();
  const int cap = spec_cap(spec);
  for (size_t i = 0; i < embd_impl_count(EMBD_KERNEL_CRC32); i++) {
    embd_impl_info in;
    assert_int_equal(embd_impl_get(EMBD_KERNEL_CRC32, i, &in), EMBD_OK);
    const int expect = (in.required & ~en) == 0 && (int)in.tier <= cap;
    if ((in.runnable != 0) != expect || (embd_crc32_impl(i) != NULL) != expect)
      fail_msg("%s: %s runnable=%d embd_crc32_impl=%p but required %#llx enabled %#llx", ctx,
               in.name, in.runnable, (void *)(uintptr_t)embd_crc32_impl(i),
               (unsigned long long)in.required, (unsigned long long)en);
  }
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++) {
    const char *active = embd_impl_active((embd_kernel)k);
    int active_seen = 0;
    for (size_t i = 0; i < embd_impl_count((embd_kernel)k); i++) {
      embd_impl_info in;
      assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
      const int expect = (in.required & ~en) == 0 && (int)in.tier <= cap;
      if ((in.runnable != 0) != expect)
        fail_msg("%s: %s %s runnable=%d, required %#llx enabled %#llx tier %s", ctx,
                 embd_kernel_name((embd_kernel)k), in.name, in.runnable,
                 (unsigned long long)in.required, (unsigned long long)en,
                 embd_tier_name(in.tier));
      if (active && strcmp(active, in.name) == 0) active_seen = 1, assert_true(in.runnable);
    }
    if (!active_seen) fail_msg("%s: %s active \"%s\" not listed", ctx,
                               embd_kernel_name((embd_kernel)k), active ? active : "(null)");
  }
}

static void check_dispatch(const char *spec) {
  char msg[256];
  if (tu_check_dispatch(spec, msg, sizeof msg) != 0)
    fail_msg("spec \"%s\": %s", spec ? spec : "(NULL)", msg);
  check_runnable_flags(spec ? spec : "(NULL)", spec);
  check_crc_now(spec ? spec : "(NULL)");
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Runs first, before anything calls embd_isa_set: the state EMBD_ISA (or its absence)
 * produced at initialisation. */
static void test_initial_state_honours_env(void **state) {
  (void)state;
  const char *env = getenv("EMBD_ISA");
  printf("[ cpu      ] EMBD_ISA=%s: active %s\n", env ? env : "(unset)",
         embd_impl_active(EMBD_KERNEL_CRC32));
  char msg[256];
  if (tu_check_dispatch(env, msg, sizeof msg) != 0)
    fail_msg("initial state vs EMBD_ISA=%s: %s", env ? env : "(unset)", msg);
  check_crc_now("initial state");
}

static void test_features(void **state) {
  (void)state;
  const uint64_t det = embd_cpu_features(), en = embd_cpu_features_enabled();
  char buf[512];
  printf("[ cpu      ] detected: %s\n", tu_feature_list(det, buf, sizeof buf));
  assert_true(det & EMBD_CPU_KNOWN);
  assert_true(en & EMBD_CPU_KNOWN);
  assert_int_equal(en & ~det, 0);
  const uint64_t x86 = EMBD_CPU_SSSE3 | EMBD_CPU_SSE42 | EMBD_CPU_PCLMULQDQ | EMBD_CPU_AVX2 |
                       EMBD_CPU_BMI2 | EMBD_CPU_VPCLMULQDQ | EMBD_CPU_AVX512F |
                       EMBD_CPU_AVX512BW | EMBD_CPU_AVX512VL | EMBD_CPU_AVX512VBMI |
                       EMBD_CPU_F16C | EMBD_CPU_AVX512BF16 | EMBD_CPU_AVX512FP16;
  const uint64_t arm = EMBD_CPU_ASIMD | EMBD_CPU_ARM_CRC32 | EMBD_CPU_ARM_PMULL;
  /* Only bits of this architecture, and only bits the header defines. */
  assert_int_equal(det & ~(x86 | arm | EMBD_CPU_KNOWN), 0);
  if (!ON_X86) assert_int_equal(det & x86, 0);
  if (!ON_ARM64) assert_int_equal(det & arm, 0);
#if defined(__x86_64__)
  /* Every x86-64 CPU able to run a PCLMULQDQ kernel has SSSE3 (x86-64-v2 and up). */
  if (det & EMBD_CPU_SSE42) assert_true(det & EMBD_CPU_SSSE3);
#endif
  /* Stable: detection runs once. */
  assert_int_equal(embd_cpu_features(), det);
}

static void test_feature_names(void **state) {
  (void)state;
  static const uint64_t defined[] = {
      EMBD_CPU_SSSE3,      EMBD_CPU_SSE42,      EMBD_CPU_PCLMULQDQ, EMBD_CPU_AVX2,
      EMBD_CPU_BMI2,       EMBD_CPU_VPCLMULQDQ, EMBD_CPU_AVX512F,   EMBD_CPU_AVX512BW,
      EMBD_CPU_AVX512VL,   EMBD_CPU_AVX512VBMI, EMBD_CPU_ASIMD,     EMBD_CPU_ARM_CRC32,
      EMBD_CPU_ARM_PMULL,  EMBD_CPU_F16C,       EMBD_CPU_AVX512BF16, EMBD_CPU_AVX512FP16,
      EMBD_CPU_WASM_SIMD128};
  const size_t nd = sizeof defined / sizeof defined[0];
  uint64_t all = 0;
  for (size_t i = 0; i < nd; i++) all |= defined[i];
  /* Names the header's documentation uses in examples. */
  assert_string_equal(embd_cpu_feature_name(EMBD_CPU_AVX2), "avx2");
  assert_string_equal(embd_cpu_feature_name(EMBD_CPU_VPCLMULQDQ), "vpclmulqdq");
  assert_string_equal(embd_cpu_feature_name(EMBD_CPU_ARM_PMULL), "pmull");
  /* Bits without a feature, several bits at once, and 0 have no name. */
  for (int b = 0; b < 64; b++) {
    const uint64_t bit = UINT64_C(1) << b;
    if (!(all & bit)) assert_null(embd_cpu_feature_name(bit));
  }
  assert_null(embd_cpu_feature_name(0));
  assert_null(embd_cpu_feature_name(EMBD_CPU_SSE42 | EMBD_CPU_AVX2));
  assert_null(embd_cpu_feature_name(EMBD_CPU_KNOWN));

  const uint64_t det = embd_cpu_features();
  for (size_t i = 0; i < nd; i++) {
    const char *name = embd_cpu_feature_name(defined[i]);
    assert_non_null(name);
    assert_true(name[0] != 0);
    assert_null(strpbrk(name, ", \t-"));
    for (size_t j = 0; j < i; j++) assert_string_not_equal(name, embd_cpu_feature_name(defined[j]));
    /* Round trip through the spec parser: "-name" masks exactly that bit. */
    char spec[64];
    snprintf(spec, sizeof spec, "-%s", name);
    assert_int_equal(embd_isa_check(spec), EMBD_OK);
    assert_int_equal(embd_isa_set(spec), EMBD_OK);
    assert_int_equal(embd_cpu_features_enabled(), (det & ~defined[i]) | EMBD_CPU_KNOWN);
    check_dispatch(spec);
    assert_int_equal(embd_isa_set(NULL), EMBD_OK);
    assert_int_equal(embd_cpu_features_enabled(), det);
    /* Names are case-sensitive words. */
    char upper[64];
    snprintf(upper, sizeof upper, "-%s", name);
    for (char *c = upper; *c; c++)
      if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    assert_int_equal(embd_isa_check(upper), EMBD_ERR_UNKNOWN_ISA);
  }
}

static void test_tier_and_kernel_names(void **state) {
  (void)state;
  static const char *const want[] = {"scalar", "sse42", "avx2", "avx512", "neon", "wasm-simd128"};
  for (int t = 0; t <= EMBD_TIER_WASM_SIMD128; t++) {
    assert_string_equal(embd_tier_name((embd_tier)t), want[t]);
    /* Every tier name is a word the spec parser knows (runnable or not here). */
    assert_int_not_equal(embd_isa_check(want[t]), EMBD_ERR_UNKNOWN_ISA);
  }
  assert_null(embd_tier_name((embd_tier)(EMBD_TIER_WASM_SIMD128 + 1)));
  assert_null(embd_tier_name((embd_tier)-1));
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_CRC32), "crc32");
  assert_null(embd_kernel_name(EMBD_KERNEL_COUNT_));
  assert_null(embd_kernel_name((embd_kernel)-1));
  assert_int_equal(embd_impl_count(EMBD_KERNEL_COUNT_), 0);
  assert_null(embd_impl_active(EMBD_KERNEL_COUNT_));
  embd_impl_info in;
  assert_int_equal(embd_impl_get(EMBD_KERNEL_COUNT_, 0, &in), EMBD_ERR_INVALID_ARGUMENT);
}

static void test_spec_errors(void **state) {
  (void)state;
  static const char *const unknown[] = {
      "bogus", "-nosuchfeature", "scalar,avx2", "scalar,scalar", "SCALAR", "avx-512",
      ",scalar", "scalar,,-avx2", "-", "avx2f", "-scalar", "avx512f", "scalar -avx2",
      "auto,bogus", "neon,-pmull,-nosuch", "scalar,auto", "auto,scalar", "auto,auto",
      "scalar,", "-avx2,"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    if (embd_isa_check(unknown[i]) != EMBD_ERR_UNKNOWN_ISA)
      fail_msg("embd_isa_check(\"%s\") = %d, want EMBD_ERR_UNKNOWN_ISA", unknown[i],
               (int)embd_isa_check(unknown[i]));
  }
  /* Tiers this architecture does not have. */
  if (ON_X86) {
    assert_int_equal(embd_isa_check("neon"), EMBD_ERR_UNSUPPORTED_ISA);
    assert_int_equal(embd_isa_check("avx512,-vpclmulqdq"), EMBD_ERR_UNSUPPORTED_ISA);
    assert_int_equal(embd_isa_check("sse42,-pclmulqdq"), EMBD_ERR_UNSUPPORTED_ISA);
    assert_int_equal(embd_isa_check("avx2,-avx2"), EMBD_ERR_UNSUPPORTED_ISA);
  } else {
    assert_int_equal(embd_isa_check("sse42"), EMBD_ERR_UNSUPPORTED_ISA);
    assert_int_equal(embd_isa_check("avx2"), EMBD_ERR_UNSUPPORTED_ISA);
    assert_int_equal(embd_isa_check("avx512"), EMBD_ERR_UNSUPPORTED_ISA);
  }
  if (ON_ARM64) assert_int_equal(embd_isa_check("neon,-asimd"), EMBD_ERR_UNSUPPORTED_ISA);
  else assert_int_equal(embd_isa_check("neon"), EMBD_ERR_UNSUPPORTED_ISA);
  /* Always valid. */
  static const char *const ok[] = {"scalar", "auto", "", "scalar,-avx2", "-pmull,-vpclmulqdq",
                                   "-crc32,scalar"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (embd_isa_check(ok[i]) != EMBD_OK) fail_msg("embd_isa_check(\"%s\") not OK", ok[i]);
  assert_int_equal(embd_isa_check(NULL), EMBD_OK);

  /* A failed embd_isa_set changes nothing. */
  assert_int_equal(embd_isa_set("scalar"), EMBD_OK);
  const uint64_t en = embd_cpu_features_enabled();
  assert_int_equal(embd_isa_set("bogus"), EMBD_ERR_UNKNOWN_ISA);
  assert_int_equal(embd_isa_set("scalar,avx2"), EMBD_ERR_UNKNOWN_ISA);
  assert_int_equal(embd_isa_set(ON_X86 ? "neon" : "avx2"), EMBD_ERR_UNSUPPORTED_ISA);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), "scalar");
  assert_int_equal(embd_cpu_features_enabled(), en);
}

static void test_scalar_always(void **state) {
  (void)state;
  assert_int_equal(embd_isa_check("scalar"), EMBD_OK);
  assert_int_equal(embd_isa_set("scalar"), EMBD_OK);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), "scalar");
  check_dispatch("scalar");
}

/* Each tier this CPU runs: the active implementation is the best one of that tier or
 * below, and results stay right. Then a list of masks and tier+mask combinations. */
static void test_every_tier_and_mask(void **state) {
  (void)state;
  int nrun = 0;
  for (int t = 0; t <= EMBD_TIER_NEON; t++) {
    const char *name = embd_tier_name((embd_tier)t);
    const embd_result r = embd_isa_check(name);
    assert_true(r == EMBD_OK || r == EMBD_ERR_UNSUPPORTED_ISA);
    if (r != EMBD_OK) {
      printf("[ cpu      ] tier %-7s not supported here\n", name);
      assert_int_equal(embd_isa_set(name), EMBD_ERR_UNSUPPORTED_ISA);
      continue;
    }
    nrun++;
    assert_int_equal(embd_isa_set(name), EMBD_OK);
    printf("[ cpu      ] tier %-7s -> %s\n", name, embd_impl_active(EMBD_KERNEL_CRC32));
    check_dispatch(name);
    /* The active implementation has this tier whenever one of this tier is built and
     * runnable (check_dispatch: nothing preferred is runnable). */
    embd_impl_info a;
    embd_impl_get(EMBD_KERNEL_CRC32, tu_active_crc32_index(), &a);
    assert_true((int)a.tier <= t);
  }
  assert_true(nrun >= 1);
  assert_true(ON_X86 || ON_ARM64 || nrun == 1);

  static const char *const specs[] = {
      "auto", "", "-vpclmulqdq", "avx2,-vpclmulqdq", "sse42,-avx2", "-avx512vbmi",
      "-avx2", "-pclmulqdq", "-ssse3", "-avx512bw,avx2", "neon,-pmull", "neon,-pmull,-crc32",
      "neon,-crc32", "-pmull", "-crc32", "-asimd", "scalar,-pmull"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    const embd_result r = embd_isa_check(specs[i]);
    assert_int_equal(embd_isa_set(specs[i]), r);
    if (r == EMBD_OK) {
      printf("[ cpu      ] %-20s -> %s\n", specs[i], embd_impl_active(EMBD_KERNEL_CRC32));
      check_dispatch(specs[i]);
    }
    assert_int_equal(embd_isa_set(NULL), EMBD_OK);
  }
}

/* x86: without VPCLMULQDQ the avx2 tier falls back to the 128-bit PCLMULQDQ kernel and
 * avx512 (which needs it) cannot run. */
static void test_x86_mask_vpclmulqdq(void **state) {
  (void)state;
  if (!ON_X86) skip();
  assert_int_equal(embd_isa_check("avx512,-vpclmulqdq"), EMBD_ERR_UNSUPPORTED_ISA);
  assert_int_equal(embd_isa_set("avx512,-vpclmulqdq"), EMBD_ERR_UNSUPPORTED_ISA);
  if (!tier_runnable("avx2")) {
    printf("[ cpu      ] no avx2 tier here: only the avx512 half of this test ran\n");
    return;
  }
  /* Without VPCLMULQDQ the avx2 tier's CRC-32 is the VEX-encoded 128-bit kernel. */
  const char *want = impl_registered("avx2-pclmul")    ? "avx2-pclmul"
                     : impl_registered("sse42-pclmul") ? "sse42-pclmul"
                                                       : "scalar";
  const embd_result avx512_before = embd_isa_check("avx512");
  assert_int_equal(embd_isa_set("avx2,-vpclmulqdq"), EMBD_OK);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), want);
  check_dispatch("avx2,-vpclmulqdq");
  assert_int_equal(embd_isa_set("-vpclmulqdq"), EMBD_OK);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), want);
  assert_int_equal(embd_cpu_features_enabled() & EMBD_CPU_VPCLMULQDQ, 0);
  /* embd_isa_check judges against the detected features, not the current masks. */
  assert_int_equal(embd_isa_check("avx512"), avx512_before);
  check_dispatch("-vpclmulqdq");
}

/* Issue 12: EMBD_ISA=avx2,-bmi2 used to be accepted (the spec parser's avx2 tier left
 * BMI2 out) and then ran sse42 kernels (the registry's avx2 rows need it): a forced tier
 * that quietly became another. Every avx2 and avx512 kernel file is compiled with -mbmi2,
 * so the one tier table makes BMI2 part of those tiers: the spec is refused, everywhere
 * (and EMBD_ISA=avx2,-bmi2 aborts with the reason: isa_report.unsupported.avx2-nobmi2
 * in tests/CMakeLists.txt). Masking bmi2 without a tier runs no avx2 code at all. */
static void test_avx2_without_bmi2_is_refused(void **state) {
  (void)state;
  assert_int_equal(embd_isa_check("avx2,-bmi2"), EMBD_ERR_UNSUPPORTED_ISA);
  assert_int_equal(embd_isa_check("avx512,-bmi2"), EMBD_ERR_UNSUPPORTED_ISA);
  assert_int_equal(embd_isa_set("scalar"), EMBD_OK);
  const uint64_t en = embd_cpu_features_enabled();
  assert_int_equal(embd_isa_set("avx2,-bmi2"), EMBD_ERR_UNSUPPORTED_ISA);
  assert_int_equal(embd_cpu_features_enabled(), en); /* nothing changed */
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++)
    assert_string_equal(embd_impl_active((embd_kernel)k), "scalar");
  if (!tier_runnable("avx2")) {
    printf("[ cpu      ] no avx2 tier here: only the refusal was checked\n");
    return;
  }
  assert_int_equal(embd_isa_set("-bmi2"), EMBD_OK);
  check_dispatch("-bmi2");
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++) {
    for (size_t i = 0; i < embd_impl_count((embd_kernel)k); i++) {
      embd_impl_info in;
      assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
      if (in.tier == EMBD_TIER_AVX2 || in.tier == EMBD_TIER_AVX512) {
        assert_true(in.required & EMBD_CPU_BMI2);
        assert_false(in.runnable);
      }
    }
    printf("[ cpu      ] -bmi2: %-14s -> %s\n", embd_kernel_name((embd_kernel)k),
           embd_impl_active((embd_kernel)k));
  }
}

/* The registry and the spec parser read one tier table: every implementation of a tier
 * needs each feature without which the parser refuses that tier (probed here for the
 * tiers this CPU runs), and nothing that needs a CPU feature is listed as tier scalar
 * (issue 12: the neon-simde kernels, SSSE3 code, were, and ran under EMBD_ISA=scalar). */
static void test_registry_agrees_with_tiers(void **state) {
  (void)state;
  for (int t = 0; t <= EMBD_TIER_NEON; t++) {
    const char *tn = embd_tier_name((embd_tier)t);
    if (embd_isa_check(tn) != EMBD_OK) continue;
    uint64_t need = 0;
    for (int b = 0; b < 63; b++) {
      const char *f = embd_cpu_feature_name(UINT64_C(1) << b);
      if (!f) continue;
      char spec[64];
      snprintf(spec, sizeof spec, "%s,-%s", tn, f);
      if (embd_isa_check(spec) == EMBD_ERR_UNSUPPORTED_ISA) need |= UINT64_C(1) << b;
    }
    for (int k = 0; k < EMBD_KERNEL_COUNT_; k++)
      for (size_t i = 0; i < embd_impl_count((embd_kernel)k); i++) {
        embd_impl_info in;
        assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
        if ((int)in.tier == t && (need & ~in.required))
          fail_msg("%s %s (tier %s) needs %#llx, the tier %#llx",
                   embd_kernel_name((embd_kernel)k), in.name, tn,
                   (unsigned long long)in.required, (unsigned long long)need);
      }
  }
  assert_int_equal(embd_isa_set("scalar"), EMBD_OK);
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++)
    for (size_t i = 0; i < embd_impl_count((embd_kernel)k); i++) {
      embd_impl_info in;
      assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
      if (in.tier == EMBD_TIER_SCALAR) assert_int_equal(in.required, 0);
      if (in.required) assert_int_not_equal(in.tier, EMBD_TIER_SCALAR);
      if (in.runnable && (in.tier != EMBD_TIER_SCALAR || in.required))
        fail_msg("EMBD_ISA=scalar: %s %s (tier %s) is runnable",
                 embd_kernel_name((embd_kernel)k), in.name, embd_tier_name(in.tier));
    }
}

/* embd_impl_emulated marks exactly the simde builds of another ISA's kernel (named
 * "<isa>-simde"), the rows embd cpu and embd bench leave out unless asked (issue 31):
 * never the scalar reference, never the active one under any tier this CPU runs, and 0
 * past the end of a family or for an unknown kernel. */
static void test_impl_emulated(void **state) {
  (void)state;
  size_t emulated = 0;
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++) {
    const size_t n = embd_impl_count((embd_kernel)k);
    assert_int_equal(embd_impl_emulated((embd_kernel)k, 0), 0);
    assert_int_equal(embd_impl_emulated((embd_kernel)k, n), 0);
    assert_int_equal(embd_impl_emulated((embd_kernel)k, (size_t)-1), 0);
    for (size_t i = 0; i < n; i++) {
      embd_impl_info in;
      assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
      const size_t len = strlen(in.name);
      const int simde = len > 6 && strcmp(in.name + len - 6, "-simde") == 0;
      if (!!embd_impl_emulated((embd_kernel)k, i) != simde)
        fail_msg("%s %s: embd_impl_emulated %d", embd_kernel_name((embd_kernel)k), in.name,
                 embd_impl_emulated((embd_kernel)k, i));
      emulated += (size_t)simde;
    }
  }
  assert_int_equal(embd_impl_emulated(EMBD_KERNEL_COUNT_, 0), 0);
  assert_int_equal(embd_impl_emulated((embd_kernel)-1, 0), 0);
  static const char *const specs[] = {"scalar", "sse42", "avx2", "avx512", "neon", "auto"};
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    if (embd_isa_set(specs[s]) != EMBD_OK) continue;
    for (int k = 0; k < EMBD_KERNEL_COUNT_; k++) {
      const char *active = embd_impl_active((embd_kernel)k);
      assert_non_null(active);
      for (size_t i = 0; i < embd_impl_count((embd_kernel)k); i++) {
        embd_impl_info in;
        assert_int_equal(embd_impl_get((embd_kernel)k, i, &in), EMBD_OK);
        if (!strcmp(in.name, active) && embd_impl_emulated((embd_kernel)k, i))
          fail_msg("EMBD_ISA=%s: %s runs the emulation %s", specs[s],
                   embd_kernel_name((embd_kernel)k), active);
      }
    }
  }
  printf("[ cpu      ] %zu emulated implementations compiled in\n", emulated);
}

/* "auto", "" and NULL all return to the best implementation with nothing masked. */
static void test_auto_restores(void **state) {
  (void)state;
  assert_int_equal(embd_isa_set(NULL), EMBD_OK);
  const char *best = embd_impl_active(EMBD_KERNEL_CRC32);
  const uint64_t det = embd_cpu_features();
  static const char *const back[] = {"auto", "", NULL};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(embd_isa_set(ON_X86 ? "scalar,-pclmulqdq" : "scalar,-pmull"), EMBD_OK);
    assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), "scalar");
    assert_int_equal(embd_isa_set(back[i]), EMBD_OK);
    assert_string_equal(embd_impl_active(EMBD_KERNEL_CRC32), best);
    assert_int_equal(embd_cpu_features_enabled(), det);
    check_dispatch(NULL);
  }
  printf("[ cpu      ] best: %s\n", best);
}

static void test_strerror(void **state) {
  (void)state;
  const embd_result codes[] = {EMBD_OK, EMBD_ERR_INVALID_ARGUMENT, EMBD_ERR_UNKNOWN_ISA,
                               EMBD_ERR_UNSUPPORTED_ISA, EMBD_ERR_OUTPUT_TOO_SMALL,
                               (embd_result)12345};
  const size_t n = sizeof codes / sizeof codes[0];
  for (size_t i = 0; i < n; i++) {
    const char *s = embd_strerror(codes[i]);
    assert_non_null(s);
    assert_true(s[0] != 0);
    for (size_t j = 0; j < i; j++) assert_string_not_equal(s, embd_strerror(codes[j]));
  }
  assert_int_equal(EMBD_OK, 0);
}

static void test_version(void **state) {
  (void)state;
  assert_non_null(embd_version());
  assert_string_equal(embd_version(), EMBD_VERSION_STRING);
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", EMBD_VERSION_MAJOR, EMBD_VERSION_MINOR, EMBD_VERSION_PATCH);
  assert_string_equal(v, EMBD_VERSION_STRING);
  assert_int_equal(embd_version_number(), EMBD_VERSION_NUMBER);
}

/* ---- re-dispatch under load ---------------------------------------------------------- */

#define NBUF 12
#define NWORKERS 4

static struct {
  uint8_t *buf[NBUF];
  size_t len[NBUF];
  uint32_t want[NBUF];
  size_t iters;
  atomic_int workers_left;
  atomic_long errors;
  atomic_long calls;
} T;

static void *worker(void *arg) {
  tu_rng r = {(uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15u + tu_seed()};
  for (size_t it = 0; it < T.iters; it++) {
    const size_t i = tu_range(&r, 0, NBUF - 1);
    uint32_t c;
    if (it & 1) {
      c = embd_crc32(0, T.buf[i], T.len[i]);
    } else { /* two chunks: the implementation may change between them */
      const size_t k = tu_range(&r, 0, T.len[i]);
      c = embd_crc32(embd_crc32(0, T.buf[i], k), T.buf[i] + k, T.len[i] - k);
    }
    if (c != T.want[i]) atomic_fetch_add(&T.errors, 1);
    if (!embd_impl_active(EMBD_KERNEL_CRC32)) atomic_fetch_add(&T.errors, 1);
    atomic_fetch_add(&T.calls, 1);
  }
  atomic_fetch_sub(&T.workers_left, 1);
  return NULL;
}

static void test_threads_toggle(void **state) {
  (void)state;
  static const char *const cand[] = {"scalar",      "sse42",         "avx2",       "avx512",
                                     "neon",        "neon,-pmull",   "neon,-pmull,-crc32",
                                     "-vpclmulqdq", "avx2,-vpclmulqdq", "auto"};
  const char *specs[16];
  size_t ns = 0;
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
    if (embd_isa_check(cand[i]) == EMBD_OK) specs[ns++] = cand[i];
  assert_true(ns >= 2);

  for (int i = 0; i < NBUF; i++) {
    T.len[i] = i < 4 ? tu_range(&g_rng, 32, 300) : tu_range(&g_rng, 301, 1u << 16);
    T.buf[i] = malloc(T.len[i]);
    assert_non_null(T.buf[i]);
    tu_fill(&g_rng, T.buf[i], T.len[i]);
    T.want[i] = tu_crc32_naive(0, T.buf[i], T.len[i]);
  }
  T.iters = tu_scaled(10000, 200);
  atomic_store(&T.errors, 0);
  atomic_store(&T.calls, 0);
  atomic_store(&T.workers_left, NWORKERS);

  pthread_t th[NWORKERS];
  for (uintptr_t i = 0; i < NWORKERS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(i + 1)), 0);
  long toggles = 0, bad_sets = 0;
  while (atomic_load(&T.workers_left) > 0) {
    if (embd_isa_set(specs[toggles % (long)ns]) != EMBD_OK) bad_sets++;
    toggles++;
    if (toggles % 8 == 0) sched_yield();
  }
  for (int i = 0; i < NWORKERS; i++) pthread_join(th[i], NULL);
  printf("[ cpu      ] %ld CRC calls in %d threads while %ld embd_isa_set calls cycled %zu specs\n",
         atomic_load(&T.calls), NWORKERS, toggles, ns);
  for (int i = 0; i < NBUF; i++) free(T.buf[i]);
  assert_int_equal(bad_sets, 0);
  assert_int_equal(atomic_load(&T.errors), 0);
  assert_true(toggles >= 1);
  assert_int_equal(embd_isa_set(NULL), EMBD_OK);
  check_dispatch(NULL);
}

int main(void) {
  const int pre = tu_isa_preflight("test_cpu");
  if (pre) return pre;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      /* first: nothing may call embd_isa_set before it */
      cmocka_unit_test(test_initial_state_honours_env),
      cmocka_unit_test(test_features),
      cmocka_unit_test_teardown(test_feature_names, restore_auto),
      cmocka_unit_test(test_tier_and_kernel_names),
      cmocka_unit_test_teardown(test_spec_errors, restore_auto),
      cmocka_unit_test_teardown(test_scalar_always, restore_auto),
      cmocka_unit_test_teardown(test_every_tier_and_mask, restore_auto),
      cmocka_unit_test_teardown(test_x86_mask_vpclmulqdq, restore_auto),
      cmocka_unit_test_teardown(test_auto_restores, restore_auto),
      cmocka_unit_test_teardown(test_avx2_without_bmi2_is_refused, restore_auto),
      cmocka_unit_test_teardown(test_registry_agrees_with_tiers, restore_auto),
      cmocka_unit_test_teardown(test_impl_emulated, restore_auto),
      cmocka_unit_test(test_strerror),
      cmocka_unit_test(test_version),
      cmocka_unit_test_teardown(test_threads_toggle, restore_auto),
  };
  return cmocka_run_group_tests_name("cpu", tests, NULL, NULL);
}
