/* dtype conversions (embd/convert.h): every implementation of EMBD_KERNEL_CONVERT and
 * EMBD_KERNEL_CONVERT_ENCODE the host can run, and the public entry points, bit for bit
 * against the scalar reference:
 *   - every input of each 8- and 16-bit dtype (all 65,536 f16 and bf16 patterns in both
 *     byte orders, all 256 bytes of the fp8s, int8, uint8 and the packed-bit types, each
 *     at every lane position of a vector);
 *   - every length 0..300 elements (packed bits: 0..300 bytes) with source and
 *     destination at every offset 0..63, next to guard pages, with canaries around the
 *     output;
 *   - encode (f16, bf16): a structured set of float32s (every sign and exponent, every
 *     value of the 10 mantissa bits a half keeps, the rounding bits below them at their
 *     edges), random bit patterns, and with EMBD_TEST_EXHAUSTIVE=1 all 2^32 floats.
 * The scalar reference in turn against an independent oracle (tests/gen_convert_oracle.py,
 * built into the program): numpy's float16 casts for all halves and a fixed float32 set,
 * exact rational arithmetic for bf16 encode and the fp8 formats. Run as
 * `test_convert oracle` (ctest: convert.oracle); it exits 77 (skipped) with the reason
 * when numpy was missing at build time, after checking the parts that do not need it.
 * NaNs against numpy: numpy keeps signaling NaNs signaling (and turns a NaN whose payload
 * truncates to zero into 0x7c01), the reference quiets them (F16C's and AArch64's rule,
 * embd/convert.h): they are compared as "NaN, same sign, same payload bits below the quiet
 * bit", and a payload that truncates to zero by sign only.
 * Then the public API: embd_to_f32 / embd_from_f32 for every dtype in both orders, the
 * errors (EMBD_ERR_DTYPE_LENGTH, EMBD_ERR_DTYPE_RANGE with err->offset,
 * EMBD_ERR_INVALID_ARGUMENT), and embd_dtype_parse / name / bits / bytes / count.
 *
 * Environment: EMBD_TEST_SCALE, EMBD_TEST_SEED, EMBD_ISA (exits 77 if this CPU cannot run
 * the forced tier), EMBD_TEST_EXHAUSTIVE=1 (all 2^32 floats through every encoder, both
 * dtypes, both byte orders: 290 s of CPU on the Zen 3 here with the two simde rows, most
 * of it theirs and the scalar reference's; too long for every run, hence opt-in).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <math.h>

#include "convert_oracle.inc"
#include "embd/convert.h"
#include "testutil.h"

/* Registered but never picked by the dispatcher (names ending in "-simde"). */
static int non_selectable(const char *name) {
  const size_t n = strlen(name);
  return n > 6 && strcmp(name + n - 6, "-simde") == 0;
}

/* ---- the implementations ------------------------------------------------------------ */

typedef struct variant {
  char name[80];
  int pub; /* 1: the public embd_to_f32 / embd_from_f32 */
  embd_to_f32_fn cvt[EMBD_DTYPE_COUNT_];
  embd_from_f32_fn enc[EMBD_DTYPE_COUNT_];
} variant;

static variant g_var[16];
static size_t g_nvar;
static tu_rng g_rng;
static const embd_dtype k_cvt_dtypes[] = {EMBD_DTYPE_F16,     EMBD_DTYPE_BF16,  EMBD_DTYPE_FP8_E4M3,
                                          EMBD_DTYPE_FP8_E5M2, EMBD_DTYPE_INT8, EMBD_DTYPE_UINT8,
                                          EMBD_DTYPE_BINARY,  EMBD_DTYPE_UBINARY};
#define NCVT (sizeof k_cvt_dtypes / sizeof k_cvt_dtypes[0])


static void collect_variants(void) {
  const size_t n = embd_impl_count(EMBD_KERNEL_CONVERT);
  printf("[ convert  ] implementations compiled in: %zu (encode: %zu)\n", n,
         embd_impl_count(EMBD_KERNEL_CONVERT_ENCODE));
  g_nvar = 0;
  for (size_t i = 0; i < n && g_nvar < 15; i++) {
    embd_impl_info info;
    assert_int_equal(embd_impl_get(EMBD_KERNEL_CONVERT, i, &info), EMBD_OK);
    variant *v = &g_var[g_nvar];
    memset(v, 0, sizeof *v);
    int any = 0;
    const int scope = tu_impl_in_scope(i, info.tier);
    if (!scope) {
      printf("[ convert  ]   %zu %-12s tier %-7s %s\n", i, info.name, embd_tier_name(info.tier),
             TU_OUT_OF_SCOPE);
      continue;
    }
    for (size_t d = 0; d < NCVT; d++)
      any |= (v->cvt[k_cvt_dtypes[d]] = embd_to_f32_impl(i, k_cvt_dtypes[d])) != NULL;
    v->enc[EMBD_DTYPE_F16] = embd_from_f32_impl(i, EMBD_DTYPE_F16);
    v->enc[EMBD_DTYPE_BF16] = embd_from_f32_impl(i, EMBD_DTYPE_BF16);
    printf("[ convert  ]   %zu %-12s tier %-7s %s\n", i, info.name, embd_tier_name(info.tier),
           any ? "RUN" : "skipped: not runnable here");
    if (!any) continue;
    snprintf(v->name, sizeof v->name, "%s", info.name);
    g_nvar++;
  }
  variant *p = &g_var[g_nvar++];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "public (active %s / %s)", embd_impl_active(EMBD_KERNEL_CONVERT),
           embd_impl_active(EMBD_KERNEL_CONVERT_ENCODE));
  p->pub = 1;
  printf("[ convert  ] public embd_to_f32 / embd_from_f32 dispatch to \"%s\" / \"%s\"\n",
         embd_impl_active(EMBD_KERNEL_CONVERT), embd_impl_active(EMBD_KERNEL_CONVERT_ENCODE));
}

static int has_cvt(const variant *v, embd_dtype d) { return v->pub || v->cvt[d] != NULL; }

static void call_cvt(const variant *v, embd_dtype d, float *dst, const void *src, size_t n,
                     int be) {
  if (v->pub) {
    embd_result r = embd_to_f32(dst, src, n, d, be ? EMBD_ORDER_BE : EMBD_ORDER_LE);
    if (r != EMBD_OK) tu_report("%s: embd_to_f32(%s, n=%zu) = %d", v->name, embd_dtype_name(d), n, r);
  } else {
    v->cvt[d](dst, src, n, be);
  }
}

static void call_enc(const variant *v, embd_dtype d, void *dst, const float *src, size_t n,
                     int be) {
  if (v->pub) {
    embd_result r = embd_from_f32(dst, src, n, d, be ? EMBD_ORDER_BE : EMBD_ORDER_LE, NULL);
    if (r != EMBD_OK) tu_report("%s: embd_from_f32(%s, n=%zu) = %d", v->name, embd_dtype_name(d), n, r);
  } else {
    v->enc[d](dst, src, n, be);
  }
}

/* The reference: implementation 0 is the scalar kernel (checked in test_registry). */
static embd_to_f32_fn ref_cvt(embd_dtype d) { return embd_to_f32_impl(0, d); }
static embd_from_f32_fn ref_enc(embd_dtype d) { return embd_from_f32_impl(0, d); }

static uint32_t fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static float bitsf(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* Element size in bytes of the input for n elements (packed bits: n / 8). */
static size_t in_bytes(embd_dtype d, size_t n) {
  size_t b = 0;
  assert_int_equal(embd_dtype_bytes(d, n, &b), EMBD_OK);
  return b;
}

/* ---- registry -------------------------------------------------------------------------- */

static void test_registry(void **state) {
  (void)state;
  const size_t n = embd_impl_count(EMBD_KERNEL_CONVERT);
  assert_true(n >= 1);
  assert_int_equal(embd_impl_count(EMBD_KERNEL_CONVERT_ENCODE), n);
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_CONVERT), "convert");
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_CONVERT_ENCODE), "convert-encode");
  embd_impl_info a, b;
  assert_int_equal(embd_impl_get(EMBD_KERNEL_CONVERT, 0, &a), EMBD_OK);
  assert_string_equal(a.name, "scalar");
  assert_int_equal(a.tier, EMBD_TIER_SCALAR);
  assert_true(a.runnable);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(embd_impl_get(EMBD_KERNEL_CONVERT, i, &a), EMBD_OK);
    assert_int_equal(embd_impl_get(EMBD_KERNEL_CONVERT_ENCODE, i, &b), EMBD_OK);
    /* the two families list the same implementations in the same order */
    assert_string_equal(a.name, b.name);
    assert_int_equal(a.tier, b.tier);
    assert_true(a.required == b.required);
    assert_int_equal(a.runnable, b.runnable);
    /* runnable: every slot filled; not runnable: every accessor NULL */
    for (size_t d = 0; d < NCVT; d++)
      assert_true((embd_to_f32_impl(i, k_cvt_dtypes[d]) != NULL) == (a.runnable != 0));
    assert_true((embd_from_f32_impl(i, EMBD_DTYPE_F16) != NULL) == (a.runnable != 0));
    assert_true((embd_from_f32_impl(i, EMBD_DTYPE_BF16) != NULL) == (a.runnable != 0));
    /* the dtypes that have no kernel in a family */
    assert_null(embd_to_f32_impl(i, EMBD_DTYPE_F32));
    assert_null(embd_from_f32_impl(i, EMBD_DTYPE_F32));
    assert_null(embd_from_f32_impl(i, EMBD_DTYPE_FP8_E4M3));
    assert_null(embd_from_f32_impl(i, EMBD_DTYPE_INT8));
    /* the F16C kernel says so (a CPU or a spec without F16C must not run it) */
    if (strcmp(a.name, "avx2-f16c") == 0) assert_true(a.required & EMBD_CPU_F16C);
    if (a.runnable) assert_true((a.required & ~embd_cpu_features_enabled()) == 0);
  }
  assert_null(embd_to_f32_impl(n, EMBD_DTYPE_F16));
  assert_null(embd_from_f32_impl(n, EMBD_DTYPE_F16));
  assert_null(embd_to_f32_impl(0, (embd_dtype)99));
  /* The active one is the last runnable selectable implementation. */
  size_t want = 0;
  for (size_t i = 0; i < n; i++) {
    embd_impl_get(EMBD_KERNEL_CONVERT, i, &a);
    if (a.runnable && !non_selectable(a.name)) want = i;
  }
  embd_impl_get(EMBD_KERNEL_CONVERT, want, &a);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CONVERT), a.name);
  assert_string_equal(embd_impl_active(EMBD_KERNEL_CONVERT_ENCODE), a.name);
}

/* ---- every input value ----------------------------------------------------------------- */

/* out[i] vs want[i] bit for bit; reports the first few differences with their inputs. */
static void cmp_floats(const char *who, embd_dtype d, int be, const float *out, const float *want,
                       size_t n, const uint8_t *in) {
  for (size_t i = 0; i < n; i++) {
    if (fbits(out[i]) == fbits(want[i])) continue;
    const size_t eb = embd_dtype_bits(d) >= 8 ? embd_dtype_bits(d) / 8 : 0;
    unsigned inv = eb == 2 ? (unsigned)(in[2 * i] | in[2 * i + 1] << 8) : eb == 1 ? in[i] : in[i / 8];
    tu_report("%s %s %s: element %zu (input bytes %#x): %#010x, want %#010x", who, embd_dtype_name(d),
           be ? "BE" : "LE", i, inv, (unsigned)fbits(out[i]), (unsigned)fbits(want[i]));
  }
}

/* f16, bf16: all 65,536 patterns, both orders, as one vector and (shifted by 1..15
 * elements) at every lane position. */
static void test_all_16bit(void **state) {
  (void)state;
  const size_t N = 65536 + 16;
  uint8_t *in = malloc(2 * N);
  float *out = malloc(4 * N), *want = malloc(4 * N);
  assert_non_null(in);
  assert_non_null(out);
  assert_non_null(want);
  const embd_dtype ds[2] = {EMBD_DTYPE_F16, EMBD_DTYPE_BF16};
  for (int di = 0; di < 2; di++)
    for (int be = 0; be < 2; be++)
      for (unsigned shift = 0; shift < 16; shift += 5) {
        for (size_t i = 0; i < N; i++) {
          const unsigned h = (unsigned)((i + 65536 - shift) & 0xffff);
          in[2 * i + (be ? 1 : 0)] = (uint8_t)h;
          in[2 * i + (be ? 0 : 1)] = (uint8_t)(h >> 8);
        }
        ref_cvt(ds[di])(want, in, N, be);
        /* the reference against the definitions: bf16 is the upper half of a float32 */
        if (ds[di] == EMBD_DTYPE_BF16)
          for (size_t i = 0; i < N; i++) {
            const unsigned h = (unsigned)((i + 65536 - shift) & 0xffff);
            if (fbits(want[i]) != (uint32_t)h << 16) tu_report("scalar bf16 %#x: %#x", h, fbits(want[i]));
          }
        for (size_t v = 0; v < g_nvar; v++) {
          if (!has_cvt(&g_var[v], ds[di])) continue;
          memset(out, 0x5a, 4 * N);
          call_cvt(&g_var[v], ds[di], out, in, N, be);
          cmp_floats(g_var[v].name, ds[di], be, out, want, N, in);
        }
      }
  free(in);
  free(out);
  free(want);
  tu_end_checks("all 16-bit patterns");
}

/* The 8-bit and packed dtypes: every byte value at every position mod 64 (4,096 + 64
 * bytes whose value runs through 0..255 with a stride that moves it across lanes). */
static void test_all_8bit(void **state) {
  (void)state;
  const size_t NB = 64 * 256 + 64;
  uint8_t *in = malloc(NB);
  float *out = malloc(4 * 8 * NB), *want = malloc(4 * 8 * NB);
  assert_non_null(in);
  assert_non_null(out);
  assert_non_null(want);
  for (size_t i = 0; i < NB; i++) in[i] = (uint8_t)(i + i / 256);
  for (size_t di = 2; di < NCVT; di++) {
    const embd_dtype d = k_cvt_dtypes[di];
    const size_t n = embd_dtype_bits(d) == 1 ? 8 * NB : NB;
    ref_cvt(d)(want, in, n, 0);
    for (size_t v = 0; v < g_nvar; v++)
      for (int be = 0; be < 2; be++) {
        if (!has_cvt(&g_var[v], d)) continue;
        memset(out, 0x5a, 4 * n);
        call_cvt(&g_var[v], d, out, in, n, be);
        cmp_floats(g_var[v].name, d, be, out, want, n, in);
      }
  }
  /* the reference against the definitions for the exact dtypes */
  const size_t n = 256;
  uint8_t b[256];
  for (unsigned i = 0; i < 256; i++) b[i] = (uint8_t)i;
  float f[256 * 8];
  ref_cvt(EMBD_DTYPE_INT8)(f, b, n, 0);
  for (unsigned i = 0; i < 256; i++)
    if (f[i] != (float)(int8_t)i) tu_report("scalar int8 %u: %g", i, (double)f[i]);
  ref_cvt(EMBD_DTYPE_UINT8)(f, b, n, 0);
  for (unsigned i = 0; i < 256; i++)
    if (f[i] != (float)i) tu_report("scalar uint8 %u: %g", i, (double)f[i]);
  ref_cvt(EMBD_DTYPE_UBINARY)(f, b, 8 * n, 0);
  for (unsigned i = 0; i < 256; i++)
    for (unsigned j = 0; j < 8; j++)
      if (fbits(f[8 * i + j]) != fbits((i >> (7 - j)) & 1 ? 1.0f : 0.0f))
        tu_report("scalar ubinary %#x bit %u: %g", i, j, (double)f[8 * i + j]);
  ref_cvt(EMBD_DTYPE_BINARY)(f, b, 8 * n, 0);
  for (unsigned i = 0; i < 256; i++)
    for (unsigned j = 0; j < 8; j++) /* stored byte = packed ^ 0x80 */
      if (f[8 * i + j] != (((i ^ 0x80) >> (7 - j)) & 1 ? 1.0f : -1.0f))
        tu_report("scalar binary %#x bit %u: %g", i, j, (double)f[8 * i + j]);
  free(in);
  free(out);
  free(want);
  tu_end_checks("all 8-bit patterns");
}

/* ---- lengths x offsets, guard pages, canaries ------------------------------------------- */

#define MAXN 300
#define CANARY 0xA5

static void check_canary(const char *who, const tu_guard *go, const uint8_t *dst, size_t nb,
                         const uint8_t *wlo, const uint8_t *whi, size_t n) {
  for (const uint8_t *p = wlo; p < whi; p++) {
    if (p == dst) p += nb;
    if (p >= whi) break;
    if (*p != CANARY) {
      tu_report("%s: n=%zu dst%%64=%u: wrote outside the output at %td", who, n,
             (unsigned)((uintptr_t)dst & 63), p - dst);
      break;
    }
  }
  (void)go;
}

/* The highest start at alignment `off` (mod 64) that still ends at or before g.hi. */
static uint8_t *at(const tu_guard *g, size_t nb, unsigned off) {
  uint8_t *end = g->hi - nb;
  return end - ((((uintptr_t)end) - off) & 63);
}

static void one_cvt(const variant *v, embd_dtype d, int be, const tu_guard *go, uint8_t *dst,
                    const uint8_t *src, size_t n, const float *want) {
  const size_t nb = 4 * n;
  uint8_t *wlo = (size_t)(dst - go->lo) >= 64 ? dst - 64 : go->lo;
  uint8_t *whi = (size_t)(go->hi - (dst + nb)) >= 64 ? dst + nb + 64 : go->hi;
  memset(wlo, CANARY, (size_t)(whi - wlo));
  call_cvt(v, d, (float *)(void *)dst, src, n, be);
  if (nb && memcmp(dst, want, nb) != 0) {
    size_t i = 0;
    while (i < n && memcmp(dst + 4 * i, want + i, 4) == 0) i++;
    tu_report("%s %s %s: n=%zu src%%64=%u dst%%64=%u: element %zu wrong", v->name, embd_dtype_name(d),
           be ? "BE" : "LE", n, (unsigned)((uintptr_t)src & 63), (unsigned)((uintptr_t)dst & 63), i);
  }
  check_canary(v->name, go, dst, nb, wlo, whi, n);
}

static void test_cvt_lengths_offsets(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  const size_t maxin = 2 * MAXN, maxout = 4 * 8 * MAXN;
  assert_int_equal(tu_guard_alloc(&gi, maxin + 256), 0);
  assert_int_equal(tu_guard_alloc(&go, maxout + 256), 0);
  uint8_t *content = malloc(maxin);
  float *want = malloc(maxout);
  assert_non_null(content);
  assert_non_null(want);
  tu_fill(&g_rng, content, maxin);
  unsigned long calls = 0;
  /* Under an emulator (scale < 1) each offset once, as the source's (the destination's
   * offset moving with it); natively also each offset as the destination's. */
  const int both = tu_scale() >= 1;
  for (size_t di = 0; di < NCVT; di++) {
    const embd_dtype d = k_cvt_dtypes[di];
    const int packed = embd_dtype_bits(d) == 1;
    for (int be = 0; be < 2; be++)
      for (size_t k = 0; k <= MAXN; k++) {
        const size_t n = packed ? 8 * k : k, ib = in_bytes(d, n);
        ref_cvt(d)(want, content, n, be);
        for (size_t v = 0; v < g_nvar; v++) {
          if (!has_cvt(&g_var[v], d)) continue;
          for (unsigned off = 0; off < 64; off++) {
            const unsigned other = (unsigned)((off * 37 + k * 7 + 11) & 63);
            uint8_t *s1 = at(&gi, ib, off);
            memcpy(s1, content, ib);
            one_cvt(&g_var[v], d, be, &go, at(&go, 4 * n, other), s1, n, want);
            calls++;
            if (!both) continue;
            uint8_t *s2 = at(&gi, ib, other);
            memcpy(s2, content, ib);
            one_cvt(&g_var[v], d, be, &go, at(&go, 4 * n, off), s2, n, want);
            calls++;
          }
          /* exactly at the guard pages: input ending at one, output starting after one */
          memcpy(gi.hi - ib, content, ib);
          one_cvt(&g_var[v], d, be, &go, go.hi - 4 * n, gi.hi - ib, n, want);
          memcpy(gi.lo, content, ib);
          one_cvt(&g_var[v], d, be, &go, go.lo, gi.lo, n, want);
          calls += 2;
        }
      }
  }
  printf("[ convert  ] to-f32 lengths 0..%d x offsets 0..63: %lu calls\n", MAXN, calls);
  free(content);
  free(want);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("to-f32 lengths x offsets");
}

static void one_enc(const variant *v, embd_dtype d, int be, const tu_guard *go, uint8_t *dst,
                    const float *src, size_t n, const uint8_t *want) {
  const size_t nb = 2 * n;
  uint8_t *wlo = (size_t)(dst - go->lo) >= 64 ? dst - 64 : go->lo;
  uint8_t *whi = (size_t)(go->hi - (dst + nb)) >= 64 ? dst + nb + 64 : go->hi;
  memset(wlo, CANARY, (size_t)(whi - wlo));
  call_enc(v, d, dst, src, n, be);
  if (nb && memcmp(dst, want, nb) != 0) {
    size_t i = 0;
    while (i < n && memcmp(dst + 2 * i, want + 2 * i, 2) == 0) i++;
    tu_report("%s encode %s %s: n=%zu src%%64=%u dst%%64=%u: element %zu wrong", v->name,
           embd_dtype_name(d), be ? "BE" : "LE", n, (unsigned)((uintptr_t)src & 63),
           (unsigned)((uintptr_t)dst & 63), i);
  }
  check_canary(v->name, go, dst, nb, wlo, whi, n);
}

/* Random float32 bits, a quarter of them from the interesting neighbourhoods (halves'
 * rounding points, subnormals, the overflow edge, NaNs). */
static uint32_t rand_f32(tu_rng *r) {
  const uint32_t x = tu_u32(r);
  switch (x & 7) {
    case 0: /* near a half's rounding point: low 13 bits at 0x1000 +- 1 */
      return (x & 0xffffe000u) | (0x0fffu + (tu_u32(r) % 3));
    case 1: /* the f16 subnormal / underflow range */
      return (x & 0x80000000u) | ((0x67u + tu_u32(r) % 0x12u) << 23) | (tu_u32(r) & 0x7fffffu);
    case 2: /* inf / NaN, quiet and signaling */
      return (x & 0x80000000u) | 0x7f800000u | (tu_u32(r) & (tu_u32(r) & 1 ? 0x7fffffu : 0x3fu));
    default:
      return tu_u32(r);
  }
}

static void test_enc_lengths_offsets(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, 4 * MAXN + 256), 0);
  assert_int_equal(tu_guard_alloc(&go, 2 * MAXN + 256), 0);
  float content[MAXN];
  uint8_t want[2 * MAXN];
  for (size_t i = 0; i < MAXN; i++) content[i] = bitsf(rand_f32(&g_rng));
  unsigned long calls = 0;
  const int both = tu_scale() >= 1; /* see test_cvt_lengths_offsets */
  const embd_dtype ds[2] = {EMBD_DTYPE_F16, EMBD_DTYPE_BF16};
  for (int di = 0; di < 2; di++)
    for (int be = 0; be < 2; be++)
      for (size_t n = 0; n <= MAXN; n++) {
        ref_enc(ds[di])(want, content, n, be);
        for (size_t v = 0; v < g_nvar; v++) {
          if (!g_var[v].pub && !g_var[v].enc[ds[di]]) continue;
          for (unsigned off = 0; off < 64; off++) {
            const unsigned other = (unsigned)((off * 37 + n * 7 + 11) & 63);
            uint8_t *s1 = at(&gi, 4 * n, off);
            memcpy(s1, content, 4 * n);
            one_enc(&g_var[v], ds[di], be, &go, at(&go, 2 * n, other), (const float *)(void *)s1,
                    n, want);
            calls++;
            if (!both) continue;
            uint8_t *s2 = at(&gi, 4 * n, other);
            memcpy(s2, content, 4 * n);
            one_enc(&g_var[v], ds[di], be, &go, at(&go, 2 * n, off), (const float *)(void *)s2,
                    n, want);
            calls++;
          }
          memcpy(gi.hi - 4 * n, content, 4 * n);
          one_enc(&g_var[v], ds[di], be, &go, go.hi - 2 * n, (const float *)(void *)(gi.hi - 4 * n),
                  n, want);
          calls++;
        }
      }
  printf("[ convert  ] encode lengths 0..%d x offsets 0..63: %lu calls\n", MAXN, calls);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("encode lengths x offsets");
}

/* ---- encode values ---------------------------------------------------------------------- */

#define CHUNK 4096

/* Every encoder on in[0..n) against the reference, both orders. */
static void enc_chunk(const float *in, size_t n, uint8_t *want, uint8_t *out) {
  const embd_dtype ds[2] = {EMBD_DTYPE_F16, EMBD_DTYPE_BF16};
  for (int di = 0; di < 2; di++) {
    ref_enc(ds[di])(want, in, n, 0);
    for (size_t v = 0; v < g_nvar; v++) {
      if (!g_var[v].pub && !g_var[v].enc[ds[di]]) continue;
      for (int be = 0; be < 2; be++) {
        call_enc(&g_var[v], ds[di], out, in, n, be);
        for (size_t i = 0; i < n; i++) {
          const unsigned got = be ? (unsigned)(out[2 * i] << 8 | out[2 * i + 1])
                                  : (unsigned)(out[2 * i] | out[2 * i + 1] << 8);
          const unsigned w = (unsigned)(want[2 * i] | want[2 * i + 1] << 8);
          if (got != w)
            tu_report("%s encode %s %s: %#010x -> %#06x, want %#06x", g_var[v].name,
                   embd_dtype_name(ds[di]), be ? "BE" : "LE", (unsigned)fbits(in[i]), got, w);
        }
      }
    }
  }
}

/* Every sign and exponent x every value of the 10 mantissa bits a half keeps x the bits
 * below them at the rounding edges (and one random pattern), in random order within each
 * chunk so that neighbouring lanes differ; then random bit patterns. */
static void test_enc_values(void **state) {
  (void)state;
  static float in[CHUNK];
  static uint8_t want[2 * CHUNK], out[2 * CHUNK];
  static const uint32_t lows[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0800};
  const size_t nl = sizeof lows / sizeof lows[0];
  size_t k = 0, total = 0;
  /* under an emulator (scale < 1) every third exponent */
  const unsigned estep = tu_scale() < 1 ? 3 : 1;
  for (uint32_t se = 0; se < 512; se += estep)
    for (uint32_t m = 0; m < 1024; m++)
      for (size_t l = 0; l <= nl; l++) {
        const uint32_t low = l < nl ? lows[l] : (tu_u32(&g_rng) & 0x1fffu);
        in[k++] = bitsf((se & 256 ? 0x80000000u : 0) | (se & 255) << 23 | m << 13 | low);
        if (k == CHUNK) {
          for (size_t i = CHUNK - 1; i > 0; i--) { /* shuffle */
            const size_t j = tu_range(&g_rng, 0, i);
            const float t = in[i];
            in[i] = in[j];
            in[j] = t;
          }
          enc_chunk(in, k, want, out);
          total += k;
          k = 0;
        }
      }
  if (k) enc_chunk(in, k, want, out), total += k;
  const size_t rounds = tu_scaled(1000, 50);
  for (size_t r = 0; r < rounds; r++) {
    for (size_t i = 0; i < CHUNK; i++) in[i] = bitsf(rand_f32(&g_rng));
    enc_chunk(in, CHUNK, want, out);
    total += CHUNK;
  }
  printf("[ convert  ] encode: %zu float32 values through every encoder\n", total);
  tu_end_checks("encode values");
}

/* EMBD_TEST_EXHAUSTIVE=1: all 2^32 float32 patterns. */
static void test_enc_exhaustive(void **state) {
  (void)state;
  const char *e = getenv("EMBD_TEST_EXHAUSTIVE");
  if (!e || strcmp(e, "1") != 0) {
    printf("[ convert  ] exhaustive encode not run (EMBD_TEST_EXHAUSTIVE=1 runs all 2^32 floats)\n");
    skip();
  }
  static float in[CHUNK];
  static uint8_t want[2 * CHUNK], out[2 * CHUNK];
  for (uint64_t base = 0; base < (UINT64_C(1) << 32); base += CHUNK) {
    for (size_t i = 0; i < CHUNK; i++) in[i] = bitsf((uint32_t)(base + i));
    enc_chunk(in, CHUNK, want, out);
    if (tu_fail_count() > 20) break;
  }
  tu_end_checks("encode exhaustive");
}

/* ---- the oracle (test_convert oracle) ---------------------------------------------------- */

static int is_nan32(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }

#if ORACLE_HAVE_NUMPY
/* NaN-tolerant equality for float32 bits (see the top of the file). */
static int same_f32(uint32_t got, uint32_t want) {
  if (got == want) return 1;
  if (!is_nan32(got) || !is_nan32(want)) return 0;
  return (got >> 31) == (want >> 31) && (got & 0x3fffffu) == (want & 0x3fffffu);
}

static int is_nan16(unsigned h) { return (h & 0x7fffu) > 0x7c00u; }
#endif

static void test_oracle_decode(void **state) {
  (void)state;
  uint8_t in[256];
  float out[256];
  for (unsigned i = 0; i < 256; i++) in[i] = (uint8_t)i;
  ref_cvt(EMBD_DTYPE_FP8_E4M3)(out, in, 256, 0);
  for (unsigned i = 0; i < 256; i++) {
    const uint32_t w = oracle_e4m3_to_f32[i], g = fbits(out[i]);
    /* fp8 NaNs: a quiet NaN of the sign, no payload */
    if (is_nan32(w) ? !(is_nan32(g) && g >> 31 == w >> 31 && (g & 0x400000u)) : g != w)
      tu_report("e4m3 %#04x: %#010x, oracle %#010x", i, g, w);
  }
  ref_cvt(EMBD_DTYPE_FP8_E5M2)(out, in, 256, 0);
  for (unsigned i = 0; i < 256; i++) {
    const uint32_t w = oracle_e5m2_to_f32[i], g = fbits(out[i]);
    if (is_nan32(w) ? !(is_nan32(g) && g >> 31 == w >> 31 && (g & 0x400000u)) : g != w)
      tu_report("e5m2 %#04x: %#010x, oracle %#010x", i, g, w);
  }
#if ORACLE_HAVE_NUMPY
  uint8_t *h = malloc(2 * 65536);
  float *f = malloc(4 * 65536);
  assert_non_null(h);
  assert_non_null(f);
  for (unsigned i = 0; i < 65536; i++) {
    h[2 * i] = (uint8_t)i;
    h[2 * i + 1] = (uint8_t)(i >> 8);
  }
  unsigned long nans = 0;
  ref_cvt(EMBD_DTYPE_F16)(f, h, 65536, 0);
  for (unsigned i = 0; i < 65536; i++) {
    if (!same_f32(fbits(f[i]), oracle_f16_to_f32[i]))
      tu_report("f16 %#06x: %#010x, numpy %#010x", i, fbits(f[i]), oracle_f16_to_f32[i]);
    nans += is_nan32(oracle_f16_to_f32[i]);
    /* and the quiet bit the reference promises */
    if (is_nan32(fbits(f[i])) && !(fbits(f[i]) & 0x400000u)) tu_report("f16 %#06x: NaN not quiet", i);
  }
  ref_cvt(EMBD_DTYPE_BF16)(f, h, 65536, 0);
  for (unsigned i = 0; i < 65536; i++)
    if (fbits(f[i]) != oracle_bf16_to_f32[i]) /* bf16 is exact, NaNs bit for bit */
      tu_report("bf16 %#06x: %#010x, numpy %#010x", i, fbits(f[i]), oracle_bf16_to_f32[i]);
  printf("[ convert  ] oracle: all halves and bf16s against numpy (%lu NaNs by sign+payload)\n",
         nans);
  free(h);
  free(f);
#endif
  tu_end_checks("oracle decode");
}

static void test_oracle_encode(void **state) {
  (void)state;
  const size_t n = sizeof oracle_enc_in / sizeof oracle_enc_in[0];
  float *in = malloc(4 * n);
  uint8_t *o16 = malloc(2 * n), *ob = malloc(2 * n), *o8 = malloc(n);
  assert_non_null(in);
  assert_non_null(o16);
  assert_non_null(ob);
  assert_non_null(o8);
  for (size_t i = 0; i < n; i++) in[i] = bitsf(oracle_enc_in[i]);
  ref_enc(EMBD_DTYPE_F16)(o16, in, n, 0);
  ref_enc(EMBD_DTYPE_BF16)(ob, in, n, 0);
  for (size_t i = 0; i < n; i++) {
    const unsigned g16 = (unsigned)(o16[2 * i] | o16[2 * i + 1] << 8);
    const unsigned gb = (unsigned)(ob[2 * i] | ob[2 * i + 1] << 8);
    /* the definitions (rational arithmetic) agree with the reference exactly, NaNs too */
    if (g16 != oracle_enc_f16_exact[i])
      tu_report("f16 encode %#010x: %#06x, definition %#06x", oracle_enc_in[i], g16,
             oracle_enc_f16_exact[i]);
    if (gb != oracle_enc_bf16[i])
      tu_report("bf16 encode %#010x: %#06x, definition %#06x", oracle_enc_in[i], gb, oracle_enc_bf16[i]);
#if ORACLE_HAVE_NUMPY
    const unsigned w = oracle_enc_f16[i];
    int ok = g16 == w;
    if (!ok && is_nan16(g16) && is_nan16(w) && (g16 >> 15) == (w >> 15)) {
      /* numpy: payload kept unquieted, or 0x7c01 when it truncates to zero */
      const unsigned trunc = (oracle_enc_in[i] >> 13) & 0x1ffu;
      ok = trunc == 0 || (g16 & 0x1ffu) == (w & 0x1ffu);
    }
    if (!ok) tu_report("f16 encode %#010x: %#06x, numpy %#06x", oracle_enc_in[i], g16, w);
#endif
  }
  /* fp8 through the public entry point (the only encoder of those dtypes) */
  embd_error err;
  assert_int_equal(embd_from_f32(o8, in, n, EMBD_DTYPE_FP8_E4M3, EMBD_ORDER_LE, &err), EMBD_OK);
  for (size_t i = 0; i < n; i++)
    if (o8[i] != oracle_enc_e4m3[i])
      tu_report("e4m3 encode %#010x: %#04x, definition %#04x", oracle_enc_in[i], o8[i], oracle_enc_e4m3[i]);
  assert_int_equal(embd_from_f32(o8, in, n, EMBD_DTYPE_FP8_E5M2, EMBD_ORDER_BE, &err), EMBD_OK);
  for (size_t i = 0; i < n; i++)
    if (o8[i] != oracle_enc_e5m2[i])
      tu_report("e5m2 encode %#010x: %#04x, definition %#04x", oracle_enc_in[i], o8[i], oracle_enc_e5m2[i]);
  printf("[ convert  ] oracle: %zu float32 values encoded to f16 (numpy%s), bf16, e4m3, e5m2 "
         "(definitions)\n", n, ORACLE_HAVE_NUMPY ? "" : ": SKIPPED");
  free(in);
  free(o16);
  free(ob);
  free(o8);
  tu_end_checks("oracle encode");
}

/* ---- the public API ----------------------------------------------------------------------- */

static void test_dtype_table(void **state) {
  (void)state;
  static const struct {
    const char *name;
    embd_dtype d;
    unsigned bits;
  } rows[] = {{"f32", EMBD_DTYPE_F32, 32},          {"f16", EMBD_DTYPE_F16, 16},
              {"bf16", EMBD_DTYPE_BF16, 16},        {"fp8-e4m3", EMBD_DTYPE_FP8_E4M3, 8},
              {"fp8-e5m2", EMBD_DTYPE_FP8_E5M2, 8}, {"int8", EMBD_DTYPE_INT8, 8},
              {"uint8", EMBD_DTYPE_UINT8, 8},       {"binary", EMBD_DTYPE_BINARY, 1},
              {"ubinary", EMBD_DTYPE_UBINARY, 1}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    assert_string_equal(embd_dtype_name(rows[i].d), rows[i].name);
    assert_int_equal(embd_dtype_bits(rows[i].d), rows[i].bits);
    embd_dtype d = (embd_dtype)99;
    assert_int_equal(embd_dtype_parse(rows[i].name, strlen(rows[i].name), &d), EMBD_OK);
    assert_int_equal(d, rows[i].d);
  }
  /* the codes are the frame format's: fixed */
  assert_int_equal(EMBD_DTYPE_F16, 1);
  assert_int_equal(EMBD_DTYPE_UBINARY, 8);
  static const struct {
    const char *name;
    embd_dtype d;
  } al[] = {{"float32", EMBD_DTYPE_F32},       {"float", EMBD_DTYPE_F32},
            {"float16", EMBD_DTYPE_F16},       {"half", EMBD_DTYPE_F16},
            {"bfloat16", EMBD_DTYPE_BF16},     {"fp8_e4m3", EMBD_DTYPE_FP8_E4M3},
            {"float8_e4m3fn", EMBD_DTYPE_FP8_E4M3}, {"e4m3", EMBD_DTYPE_FP8_E4M3},
            {"fp8_e5m2", EMBD_DTYPE_FP8_E5M2}, {"float8_e5m2", EMBD_DTYPE_FP8_E5M2},
            {"e5m2", EMBD_DTYPE_FP8_E5M2}};
  for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
    embd_dtype d = (embd_dtype)99;
    assert_int_equal(embd_dtype_parse(al[i].name, strlen(al[i].name), &d), EMBD_OK);
    assert_int_equal(d, al[i].d);
  }
  /* not NUL-terminated: only name[0 .. len) counts; case-sensitive; unknown untouched */
  embd_dtype d = EMBD_DTYPE_INT8;
  assert_int_equal(embd_dtype_parse("f16x", 3, &d), EMBD_OK);
  assert_int_equal(d, EMBD_DTYPE_F16);
  d = EMBD_DTYPE_INT8;
  assert_int_equal(embd_dtype_parse("F16", 3, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_parse("f1", 2, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_parse("", 0, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_parse("float8_e4m3", 11, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(d, EMBD_DTYPE_INT8);
  assert_int_equal(embd_dtype_parse(NULL, 0, &d), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_parse("f16", 3, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(embd_dtype_name((embd_dtype)9));
  assert_null(embd_dtype_name((embd_dtype)-1));
  assert_int_equal(embd_dtype_bits((embd_dtype)9), 0);
  /* bytes / count */
  size_t b = 7, n = 7;
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_F16, 1536, &b), EMBD_OK);
  assert_int_equal(b, 3072);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_F32, 3, &b), EMBD_OK);
  assert_int_equal(b, 12);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_INT8, 5, &b), EMBD_OK);
  assert_int_equal(b, 5);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_UBINARY, 1024, &b), EMBD_OK);
  assert_int_equal(b, 128);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_BINARY, 0, &b), EMBD_OK);
  assert_int_equal(b, 0);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_BINARY, 12, &b), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_F32, SIZE_MAX / 2, &b), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_bytes((embd_dtype)9, 1, &b), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_bytes(EMBD_DTYPE_F16, 1, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_F16, 3072, &n), EMBD_OK);
  assert_int_equal(n, 1536);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_F16, 3071, &n), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_F32, 6, &n), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_UBINARY, 3, &n), EMBD_OK);
  assert_int_equal(n, 24);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_UINT8, 3, &n), EMBD_OK);
  assert_int_equal(n, 3);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_UBINARY, SIZE_MAX, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_count((embd_dtype)9, 4, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_dtype_count(EMBD_DTYPE_F16, 4, NULL), EMBD_ERR_INVALID_ARGUMENT);
}

/* embd_to_f32 / embd_from_f32 on known values, every dtype and order: the expectations are
 * explicit byte strings, so they hold on big-endian hosts too. */
static void test_public_values(void **state) {
  (void)state;
  float out[16];
  uint8_t enc[64];
  embd_error err;
  /* f32: the bytes of 1.0f and -2.5f in each order */
  const uint8_t f32le[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0};
  const uint8_t f32be[8] = {0x3f, 0x80, 0x00, 0x00, 0xc0, 0x20, 0x00, 0x00};
  assert_int_equal(embd_to_f32(out, f32le, 2, EMBD_DTYPE_F32, EMBD_ORDER_LE), EMBD_OK);
  assert_true(out[0] == 1.0f && out[1] == -2.5f);
  assert_int_equal(embd_to_f32(out, f32be, 2, EMBD_DTYPE_F32, EMBD_ORDER_BE), EMBD_OK);
  assert_true(out[0] == 1.0f && out[1] == -2.5f);
  const float v2[2] = {1.0f, -2.5f};
  assert_int_equal(embd_from_f32(enc, v2, 2, EMBD_DTYPE_F32, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_memory_equal(enc, f32le, 8);
  assert_int_equal(embd_from_f32(enc, v2, 2, EMBD_DTYPE_F32, EMBD_ORDER_BE, &err), EMBD_OK);
  assert_memory_equal(enc, f32be, 8);
  /* f16: 1.0 (0x3c00), -2.0 (0xc000), 65504 (0x7bff), 2^-24 (0x0001), inf, -0 */
  const float hv[6] = {1.0f, -2.0f, 65504.0f, 0x1p-24f, INFINITY, -0.0f};
  /* bf16: 65504 is not one (it rounds to 65536 = 0x4780) */
  const float bv[6] = {1.0f, -2.0f, 65536.0f, 0x1p-24f, INFINITY, -0.0f};
  const uint8_t hle[12] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00, 0x00, 0x7c, 0x00, 0x80};
  const uint8_t hbe[12] = {0x3c, 0x00, 0xc0, 0x00, 0x7b, 0xff, 0x00, 0x01, 0x7c, 0x00, 0x80, 0x00};
  const uint8_t ble[12] = {0x80, 0x3f, 0x00, 0xc0, 0x80, 0x47, 0x80, 0x33, 0x80, 0x7f, 0x00, 0x80};
  const uint8_t bbe[12] = {0x3f, 0x80, 0xc0, 0x00, 0x47, 0x80, 0x33, 0x80, 0x7f, 0x80, 0x80, 0x00};
  struct {
    embd_dtype d;
    embd_byte_order o;
    const uint8_t *bytes;
    const float *v;
  } c16[] = {{EMBD_DTYPE_F16, EMBD_ORDER_LE, hle, hv},
             {EMBD_DTYPE_F16, EMBD_ORDER_BE, hbe, hv},
             {EMBD_DTYPE_BF16, EMBD_ORDER_LE, ble, bv},
             {EMBD_DTYPE_BF16, EMBD_ORDER_BE, bbe, bv}};
  for (size_t c = 0; c < 4; c++) {
    memset(out, 0, sizeof out);
    assert_int_equal(embd_to_f32(out, c16[c].bytes, 6, c16[c].d, c16[c].o), EMBD_OK);
    for (int i = 0; i < 6; i++) assert_true(fbits(out[i]) == fbits(c16[c].v[i]));
    assert_int_equal(embd_from_f32(enc, c16[c].v, 6, c16[c].d, c16[c].o, &err), EMBD_OK);
    assert_memory_equal(enc, c16[c].bytes, 12);
  }
  /* the 8-bit types ignore the byte order */
  const uint8_t e4[4] = {0x38, 0xb8, 0x7e, 0x01};      /* 1, -1, 448, 2^-9 */
  const float e4v[4] = {1.0f, -1.0f, 448.0f, 0x1p-9f};
  const uint8_t e5[4] = {0x3c, 0xbc, 0x7b, 0x7c};      /* 1, -1, 57344, inf */
  const float e5v[4] = {1.0f, -1.0f, 57344.0f, INFINITY};
  const uint8_t i8[4] = {0x80, 0xff, 0x00, 0x7f};
  const float i8v[4] = {-128.0f, -1.0f, 0.0f, 127.0f}, u8v[4] = {128.0f, 255.0f, 0.0f, 127.0f};
  struct {
    embd_dtype d;
    const uint8_t *b;
    const float *v;
  } c8[] = {{EMBD_DTYPE_FP8_E4M3, e4, e4v},
            {EMBD_DTYPE_FP8_E5M2, e5, e5v},
            {EMBD_DTYPE_INT8, i8, i8v},
            {EMBD_DTYPE_UINT8, i8, u8v}};
  for (size_t c = 0; c < 4; c++)
    for (int o = 0; o < 2; o++) {
      assert_int_equal(embd_to_f32(out, c8[c].b, 4, c8[c].d, (embd_byte_order)o), EMBD_OK);
      for (int i = 0; i < 4; i++) assert_true(out[i] == c8[c].v[i]);
      memset(enc, 0, sizeof enc);
      assert_int_equal(embd_from_f32(enc, c8[c].v, 4, c8[c].d, (embd_byte_order)o, &err), EMBD_OK);
      assert_memory_equal(enc, c8[c].b, 4);
    }
  /* packed bits: 0xa5 = 1010 0101 */
  const uint8_t ub = 0xa5, sb = 0xa5 ^ 0x80;
  const float ubv[8] = {1, 0, 1, 0, 0, 1, 0, 1}, sbv[8] = {1, -1, 1, -1, -1, 1, -1, 1};
  for (int o = 0; o < 2; o++) {
    assert_int_equal(embd_to_f32(out, &ub, 8, EMBD_DTYPE_UBINARY, (embd_byte_order)o), EMBD_OK);
    for (int i = 0; i < 8; i++) assert_true(out[i] == ubv[i]);
    assert_int_equal(embd_to_f32(out, &sb, 8, EMBD_DTYPE_BINARY, (embd_byte_order)o), EMBD_OK);
    for (int i = 0; i < 8; i++) assert_true(out[i] == sbv[i]);
    assert_int_equal(embd_from_f32(enc, ubv, 8, EMBD_DTYPE_UBINARY, (embd_byte_order)o, &err), EMBD_OK);
    assert_int_equal(enc[0], ub);
    assert_int_equal(embd_from_f32(enc, sbv, 8, EMBD_DTYPE_BINARY, (embd_byte_order)o, &err), EMBD_OK);
    assert_int_equal(enc[0], sb);
  }
  /* bit = (value > 0): NaN, -0 and negatives give 0 */
  const float odd[8] = {NAN, -0.0f, 0.0f, -1.0f, 1e-30f, 0x1p-149f, INFINITY, -INFINITY};
  assert_int_equal(embd_from_f32(enc, odd, 8, EMBD_DTYPE_UBINARY, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_int_equal(enc[0], 0x0e);
  assert_int_equal(err.result, EMBD_OK);
}

static void test_public_errors(void **state) {
  (void)state;
  float out[64], in[64];
  uint8_t b[64] = {0};
  embd_error err;
  for (int i = 0; i < 64; i++) in[i] = (float)(i - 20);
  /* packed bits need a multiple of 8 */
  assert_int_equal(embd_to_f32(out, b, 12, EMBD_DTYPE_UBINARY, EMBD_ORDER_LE), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(embd_to_f32(out, b, 7, EMBD_DTYPE_BINARY, EMBD_ORDER_LE), EMBD_ERR_DTYPE_LENGTH);
  memset(&err, 0, sizeof err);
  assert_int_equal(embd_from_f32(b, in, 9, EMBD_DTYPE_BINARY, EMBD_ORDER_LE, &err), EMBD_ERR_DTYPE_LENGTH);
  assert_int_equal(err.result, EMBD_ERR_DTYPE_LENGTH);
  assert_true(err.message[0] != 0);
  /* unknown dtype or order, NULL buffers with n > 0 */
  assert_int_equal(embd_to_f32(out, b, 4, (embd_dtype)9, EMBD_ORDER_LE), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_to_f32(out, b, 4, EMBD_DTYPE_F16, (embd_byte_order)2), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_to_f32(NULL, b, 4, EMBD_DTYPE_F16, EMBD_ORDER_LE), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_to_f32(out, NULL, 4, EMBD_DTYPE_F16, EMBD_ORDER_LE), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_from_f32(b, in, 4, (embd_dtype)9, EMBD_ORDER_LE, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(err.result, EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_from_f32(b, in, 4, EMBD_DTYPE_F16, (embd_byte_order)5, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_from_f32(NULL, in, 4, EMBD_DTYPE_F16, EMBD_ORDER_LE, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_from_f32(b, NULL, 4, EMBD_DTYPE_BF16, EMBD_ORDER_LE, NULL), EMBD_ERR_INVALID_ARGUMENT);
  /* n = 0: nothing, NULL allowed */
  assert_int_equal(embd_to_f32(NULL, NULL, 0, EMBD_DTYPE_F16, EMBD_ORDER_LE), EMBD_OK);
  assert_int_equal(embd_to_f32(NULL, NULL, 0, EMBD_DTYPE_F32, EMBD_ORDER_BE), EMBD_OK);
  assert_int_equal(embd_from_f32(NULL, NULL, 0, EMBD_DTYPE_INT8, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_int_equal(err.result, EMBD_OK);
  /* int8 / uint8: integers in range only; err->offset names the element */
  const struct {
    embd_dtype d;
    float bad;
    size_t at;
  } rc[] = {{EMBD_DTYPE_INT8, 128.0f, 5},     {EMBD_DTYPE_INT8, -129.0f, 0},
            {EMBD_DTYPE_INT8, 0.5f, 63},      {EMBD_DTYPE_INT8, NAN, 17},
            {EMBD_DTYPE_INT8, INFINITY, 2},   {EMBD_DTYPE_UINT8, -1.0f, 30},
            {EMBD_DTYPE_UINT8, 256.0f, 31},   {EMBD_DTYPE_UINT8, 2.25f, 1},
            {EMBD_DTYPE_UINT8, -INFINITY, 9}, {EMBD_DTYPE_INT8, 3e9f, 40}};
  for (size_t c = 0; c < sizeof rc / sizeof rc[0]; c++) {
    float v[64];
    for (int i = 0; i < 64; i++) v[i] = (float)(i % 100);
    v[rc[c].at] = rc[c].bad;
    if (rc[c].at + 1 < 64) v[rc[c].at + 1] = 1000.0f; /* only the first bad one is named */
    memset(&err, 0, sizeof err);
    assert_int_equal(embd_from_f32(b, v, 64, rc[c].d, EMBD_ORDER_LE, &err), EMBD_ERR_DTYPE_RANGE);
    assert_int_equal(err.result, EMBD_ERR_DTYPE_RANGE);
    assert_int_equal(err.offset, rc[c].at);
    assert_true(err.message[0] != 0);
    assert_int_equal(embd_from_f32(b, v, 64, rc[c].d, EMBD_ORDER_BE, NULL), EMBD_ERR_DTYPE_RANGE);
  }
  /* the range ends are in range, -0 is 0 */
  const float ends[4] = {-128.0f, 127.0f, -0.0f, 0.0f};
  assert_int_equal(embd_from_f32(b, ends, 4, EMBD_DTYPE_INT8, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_int_equal(b[0], 0x80);
  assert_int_equal(b[1], 0x7f);
  assert_int_equal(b[2], 0);
  const float uends[2] = {0.0f, 255.0f};
  assert_int_equal(embd_from_f32(b, uends, 2, EMBD_DTYPE_UINT8, EMBD_ORDER_LE, &err), EMBD_OK);
  assert_int_equal(b[1], 255);
}

/* Round trips through the public API, every dtype and order, at a typical embedding size:
 * decode(encode(decode(x))) == decode(x) for random wire bytes (a wire value survives). */
static void test_public_roundtrip(void **state) {
  (void)state;
  enum { N = 1536 };
  static uint8_t wire[4 * N], wire2[4 * N];
  static float f[N], f2[N];
  for (int d = 0; d < EMBD_DTYPE_COUNT_; d++)
    for (int o = 0; o < 2; o++) {
      const size_t nb = in_bytes((embd_dtype)d, N);
      tu_fill(&g_rng, wire, nb);
      assert_int_equal(embd_to_f32(f, wire, N, (embd_dtype)d, (embd_byte_order)o), EMBD_OK);
      embd_error err;
      assert_int_equal(embd_from_f32(wire2, f, N, (embd_dtype)d, (embd_byte_order)o, &err), EMBD_OK);
      assert_int_equal(embd_to_f32(f2, wire2, N, (embd_dtype)d, (embd_byte_order)o), EMBD_OK);
      for (size_t i = 0; i < N; i++) {
        const uint32_t a = fbits(f[i]), b = fbits(f2[i]);
        if (a != b && !(is_nan32(a) && is_nan32(b)))
          tu_report("round trip %s %s element %zu: %#x -> %#x", embd_dtype_name((embd_dtype)d),
                 o ? "BE" : "LE", i, a, b);
      }
    }
  tu_end_checks("public round trips");
}

int main(int argc, char **argv) {
  int s = tu_isa_preflight("test_convert");
  if (s) return s;
  g_rng.s = tu_seed() ^ UINT64_C(0x63767274); /* "cvrt" */
  collect_variants();
  if (argc > 1 && strcmp(argv[1], "oracle") == 0) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_decode),
        cmocka_unit_test(test_oracle_encode),
    };
    int r = cmocka_run_group_tests_name("convert-oracle", tests, NULL, NULL);
    if (r) return r;
    if (!ORACLE_HAVE_NUMPY) {
      printf("test_convert oracle: SKIP: the numpy parts (f16 <-> f32) were not generated: %s; "
             "only the fraction-based checks ran\n",
             ORACLE_NO_NUMPY_REASON);
      return TU_SKIP;
    }
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),         cmocka_unit_test(test_all_16bit),
      cmocka_unit_test(test_all_8bit),         cmocka_unit_test(test_cvt_lengths_offsets),
      cmocka_unit_test(test_enc_lengths_offsets), cmocka_unit_test(test_enc_values),
      cmocka_unit_test(test_enc_exhaustive),   cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_public_values),    cmocka_unit_test(test_public_errors),
      cmocka_unit_test(test_public_roundtrip),
  };
  return cmocka_run_group_tests_name("convert", tests, NULL, NULL);
}
