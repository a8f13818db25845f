/* The float-array kernel family (src/core/floatarray_kernel.h) on generated texts: the
 * differential checks of fuzz/fuzz_floatarray_diff.c (each implementation against this
 * file's grammar and glibc's strtof; the decoder under every tier against the scalar
 * tier's values, codes, messages and offsets) over EMBD_TEST_SCALE x 2,000 texts of JSON
 * array elements: shortest round-trip floats, "%.9g", "%.17g", exponents, integers,
 * compact and pretty separators, with every kind of grammar fault and random byte damage
 * mixed in. Also that the registry holds the family with its scalar reference first, that
 * automatic resolution keeps the scalar one and a named tier picks its own kernel, and
 * that the SIMD implementations take the ordinary numbers (a kernel that took nothing
 * would pass the differential checks). Exit 0, or abort at the first disagreement. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_floatarray_diff.c"
#include "testutil.h" /* tu_isa_preflight */

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return g_rng;
}

/* A float32 value like an embedding's (mostly |x| < 0.2, now and then tiny or large). */
static float value(void) {
  const uint64_t r = rnd();
  double x = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 0.4;
  switch (r & 31) {
    case 0: x *= 1e-4; break;
    case 1: x *= 1e-30; break;
    case 2: x *= 1e6; break;
    case 3: x = 0; break;
    case 4: { uint32_t b = (uint32_t)(r >> 32); float f; memcpy(&f, &b, 4); if (isfinite(f)) return f; break; }
    default: break;
  }
  return (float)x;
}

/* One number's text in one of several forms. */
static int number(char *b, size_t cap) {
  const float f = value();
  const unsigned form = (unsigned)(rnd() % 16);
  if (form < 8) { /* shortest that reads back, "%.*g" */
    for (int prec = 1; prec <= 9; prec++) {
      const int n = snprintf(b, cap, "%.*g", prec, (double)f);
      if (strtof(b, NULL) == f || prec == 9) return n;
    }
  }
  switch (form) {
    case 8: return snprintf(b, cap, "%.9g", (double)f);
    case 9: return snprintf(b, cap, "%.17g", (double)f);
    case 10: return snprintf(b, cap, "%.6e", (double)f);
    case 11: return snprintf(b, cap, "%.3E", (double)f);
    case 12: return snprintf(b, cap, "%d", (int)(rnd() % 2000000) - 1000000);
    case 13: return snprintf(b, cap, "%.12f", (double)f);
    case 14: return snprintf(b, cap, "%.1fe%+d", (double)(rnd() % 1000) / 10.0, (int)(rnd() % 60) - 30);
    default: return snprintf(b, cap, "0.%0*u", (int)(rnd() % 20) + 1, (unsigned)(rnd() % 1000));
  }
}

static const char *const faults[] = {"01", "-", "1.", ".5", "1e", "1e+", "1.2.3", "1e5e3", "+1", "-01",
                                     "1e5.3", "--1", "1-2", "0x1", "1 2", ",", "", "]", "1E400", "-0",
                                     "00.5", "1.e5", "Infinity", "\"1\"", "1,,2", "9e-400", "1.5e0003"};

int main(void) {
  const int skip = tu_isa_preflight("test_floatarray");
  if (skip) return skip;
  const char *sc = getenv("EMBD_TEST_SCALE");
  const double scale = sc ? atof(sc) : 1.0;
  const size_t texts = (size_t)(2000 * (scale > 0 ? scale : 1));
  if (embd_floatarray_count_() < 1 || strcmp(embd_floatarray_name_(0), "scalar") != 0 ||
      embd_floatarray_name_(embd_floatarray_count_()) != NULL) {
    fprintf(stderr, "the float-array family's registry rows are not as expected\n");
    return 1;
  }
  printf("float-array: active %s; implementations:", embd_floatarray_active_());
  for (size_t i = 0; i < embd_floatarray_count_(); i++)
    printf(" %s%s", embd_floatarray_name_(i), embd_floatarray_impl_(i) ? "" : "(not runnable)");
  printf("\n");
  /* Automatic resolution keeps the scalar reference (the SIMD kernels are opt-in, see
   * src/core/dispatch.c); a named tier picks that tier's kernel. */
  if (!getenv("EMBD_ISA") && strcmp(embd_floatarray_active_(), "scalar") != 0) {
    fprintf(stderr, "automatic resolution picked %s\n", embd_floatarray_active_());
    return 1;
  }
  for (size_t i = 1; i < embd_floatarray_count_(); i++) {
    if (!embd_floatarray_impl_(i)) continue;
    const char *tier = embd_floatarray_name_(i); /* the rows are named after their tier */
    if (embd_isa_set(tier) != EMBD_OK || strcmp(embd_floatarray_active_(), tier) != 0) {
      fprintf(stderr, "EMBD_ISA=%s did not pick the %s kernel (active %s)\n", tier, tier, embd_floatarray_active_());
      return 1;
    }
  }
  if (embd_isa_set(NULL) != EMBD_OK) return 1;

  size_t cap = 1 << 16;
  char *t = (char *)malloc(cap);
  for (size_t it = 0; it < texts; it++) {
    size_t n = 0;
    const unsigned count = (unsigned)(rnd() % 200) + 1, sep = (unsigned)(rnd() % 4);
    const int damage = rnd() % 3 == 0;
    for (unsigned i = 0; i < count; i++) {
      if (n + 128 > cap) break;
      if (i) {
        t[n++] = ',';
        if (sep == 1) n += (size_t)snprintf(t + n, cap - n, "\n        ");
        if (sep == 2) n += (size_t)snprintf(t + n, cap - n, " ");
        if (sep == 3 && rnd() % 4 == 0) n += (size_t)snprintf(t + n, cap - n, "%s", rnd() % 2 ? "\t" : " \r\n ");
      }
      if (damage && rnd() % 64 == 0)
        n += (size_t)snprintf(t + n, cap - n, "%s", faults[rnd() % (sizeof faults / sizeof faults[0])]);
      else
        n += (size_t)number(t + n, cap - n);
    }
    if (damage && n && rnd() % 2) t[rnd() % n] = rnd() % 2 ? (char)rnd() : "0123456789-+.eE, \n"[rnd() % 18];
    LLVMFuzzerTestOneInput((const uint8_t *)t, n);
  }
  free(t);
  /* A plain body's worth (1,536 shortest texts of embedding-like values, compact): each
   * SIMD implementation must take nearly all of it (a kernel that took nothing would
   * pass every differential check above). Called again after each number it leaves. */
  {
    enum { kDims = 1536 };
    char *b = (char *)malloc(16 + kDims * 24 + 64);
    float *out = (float *)malloc(kDims * sizeof(float));
    size_t n = 16;
    memset(b, ' ', 16);
    for (int i = 0; i < kDims; i++) {
      const float f = (float)(((double)(rnd() >> 11) / 9007199254740992.0 - 0.5) * 0.2);
      int w = 0;
      for (int prec = 1; prec <= 9; prec++) {
        w = snprintf(b + n + (i > 0), 24, "%.*g", prec, (double)f);
        if (strtof(b + n + (i > 0), NULL) == f) break;
      }
      if (i) b[n] = ',';
      n += (size_t)w + (i > 0);
    }
    for (size_t i = 1; i < embd_floatarray_count_(); i++) {
      fa_fn fn = embd_floatarray_impl_(i);
      if (!fn) continue;
      const char *name = embd_floatarray_name_(i);
      const uint8_t *p = (const uint8_t *)b + 16, *end = (const uint8_t *)b + n;
      size_t taken = 0, left = 0;
      while (p < end) {
        const uint8_t *q;
        const size_t k = fn((const uint8_t *)b, p, end, out, kDims, &q);
        taken += k;
        if (k) {
          p = q;
          continue;
        }
        left++; /* the decoder parses this one: past it and its ',' */
        while (q < end && *q != ',') q++;
        p = q < end ? q + 1 : end;
      }
      printf("%s took %zu of %d plain numbers (%zu left to the decoder)\n", name, taken, kDims, left);
      if (taken + left != kDims || taken < kDims * 95 / 100) {
        fprintf(stderr, "%s takes too few of the plain numbers: its fast path is not exercised\n", name);
        return 1;
      }
    }
    free(out);
    free(b);
  }
  printf("%zu texts: every implementation and tier agreed\n", texts);
  return 0;
}
