/* Shared helpers for embd's tests: a seeded PRNG, guard-page buffers, the run scale,
 * a naive CRC-32 reference, checks of the dispatcher's choice, and the mismatch counter
 * of the differential tests.
 *
 * Header-only (every function static inline) so each test program stays one file.
 * Needs _DEFAULT_SOURCE (set by tests/CMakeLists.txt) for mmap's MAP_ANONYMOUS.
 */
#ifndef EMBD_TESTUTIL_H
#define EMBD_TESTUTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embd.h"

/* ---- seeded PRNG (splitmix64) ------------------------------------------------------ */

typedef struct tu_rng {
  uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static inline uint32_t tu_u32(tu_rng *r) { return (uint32_t)(tu_next(r) >> 32); }

/* Uniform in [lo, hi] (inclusive); the tiny modulo bias does not matter here. */
static inline size_t tu_range(tu_rng *r, size_t lo, size_t hi) {
  return lo + (size_t)(tu_next(r) % ((uint64_t)(hi - lo) + 1));
}

static inline void tu_fill(tu_rng *r, void *dst, size_t n) {
  uint8_t *p = (uint8_t *)dst;
  while (n >= 8) {
    uint64_t v = tu_next(r);
    memcpy(p, &v, 8);
    p += 8;
    n -= 8;
  }
  if (n) {
    uint64_t v = tu_next(r);
    memcpy(p, &v, n);
  }
}

/* The run's seed: EMBD_TEST_SEED (any strtoull base) or a fixed default, so a failure
 * reproduces by default and other seeds can be explored by setting the variable. */
static inline uint64_t tu_seed(void) {
  const char *s = getenv("EMBD_TEST_SEED");
  if (s && *s) return strtoull(s, NULL, 0);
  return UINT64_C(0x656D6264); /* "embd" */
}

/* ---- run scale --------------------------------------------------------------------- */

/* EMBD_TEST_SCALE multiplies the heavy loops: 1 (default) natively; tests/CMakeLists.txt
 * sets a smaller value for runs under an emulator (qemu is 10-30x slower for SIMD code).
 * Values above 1 make a longer soak. Coverage that matters (vector-boundary lengths,
 * every offset near them, guard pages) never scales below its floor. */
static inline double tu_scale(void) {
  const char *s = getenv("EMBD_TEST_SCALE");
  if (!s || !*s) return 1.0;
  double v = strtod(s, NULL);
  return v > 0 ? v : 1.0;
}

/* n * scale, at least `floor`. */
static inline size_t tu_scaled(size_t n, size_t floor) {
  double v = (double)n * tu_scale();
  size_t r = v < 1 ? 0 : (size_t)v;
  return r < floor ? floor : r;
}

/* ---- mismatch reports (cmocka tests: include <cmocka.h> first) --------------------- */

#ifdef fail_msg
/* A differential test counts its mismatches and prints the first 20 with what reproduces
 * them (tu_report); tu_end_checks then fails the test once with the total and the seed. */
static inline unsigned long *tu_fails_(void) {
  static unsigned long n;
  return &n;
}

static inline unsigned long tu_fail_count(void) { return *tu_fails_(); }

static inline void tu_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tu_report(const char *fmt, ...) {
  if ((*tu_fails_())++ >= 20) return;
  va_list ap;
  va_start(ap, fmt);
  printf("MISMATCH: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static inline void tu_end_checks(const char *what) {
  const unsigned long f = *tu_fails_();
  *tu_fails_() = 0;
  if (f) fail_msg("%s: %lu mismatches (seed %#llx)", what, f, (unsigned long long)tu_seed());
}
#endif

/* ---- guard-page buffers ------------------------------------------------------------- */

/* `cap` usable bytes (rounded up to whole pages) with a PROT_NONE page on each side.
 * lo is the first usable byte (right after the leading guard page), hi one past the
 * last (the first byte of the trailing guard page). Data placed at hi - len ends exactly
 * at the guard: any read past its end faults; data at lo faults on any read before it.
 * mmap'ed memory is not tracked by ASan, so the guard pages are what catch over-reads of
 * the SIMD kernels (whose wide loads ASan would not flag inside a malloc block anyway). */
typedef struct tu_guard {
  uint8_t *map;
  size_t maplen;
  uint8_t *lo;
  uint8_t *hi;
} tu_guard;

static inline size_t tu_page(void) {
  long ps = sysconf(_SC_PAGESIZE);
  return ps > 0 ? (size_t)ps : 4096;
}

static inline int tu_guard_alloc(tu_guard *g, size_t cap) {
  const size_t ps = tu_page();
  const size_t body = (cap + ps - 1) / ps * ps;
  g->maplen = body + 2 * ps;
  void *m = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    fprintf(stderr, "mmap(%zu): %s\n", g->maplen, strerror(errno));
    return -1;
  }
  g->map = (uint8_t *)m;
  g->lo = g->map + ps;
  g->hi = g->lo + body;
  if (mprotect(g->map, ps, PROT_NONE) != 0 || mprotect(g->hi, ps, PROT_NONE) != 0) {
    fprintf(stderr, "mprotect: %s\n", strerror(errno));
    munmap(m, g->maplen);
    return -1;
  }
  return 0;
}

static inline void tu_guard_free(tu_guard *g) {
  if (g->map) munmap(g->map, g->maplen);
  memset(g, 0, sizeof *g);
}

/* ---- the naive reference ------------------------------------------------------------ */

/* CRC-32 (reflected 0xEDB88320, pre- and post-inverted), one bit at a time: the
 * definition, with nothing clever to get wrong. */
static inline uint32_t tu_crc32_naive(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t c = ~crc;
  while (len--) {
    c ^= *p++;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (UINT32_C(0xEDB88320) & (0u - (c & 1u)));
  }
  return ~c;
}

/* ---- EMBD_ISA ----------------------------------------------------------------------- */

/* Exit status of a test program that cannot run here (ctest SKIP_RETURN_CODE). */
#define TU_SKIP 77

/* embd_isa_check(spec) evaluated in a forked child with EMBD_ISA removed from its
 * environment. Needed because the first call into the library (embd_isa_check included)
 * reads EMBD_ISA and aborts the process when it is invalid; the parent must not touch
 * the library before it knows. Returns the embd_result, or -1 if the child died. */
static inline int tu_isa_check_isolated(const char *spec) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    unsetenv("EMBD_ISA");
    _exit((int)embd_isa_check(spec));
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Call first in main(). If EMBD_ISA names a tier this CPU cannot run, prints why and
 * returns TU_SKIP (the caller exits with it); an unknown word is not a skip: the
 * library's abort is the behaviour under test elsewhere, and here it fails loudly. */
static inline int tu_isa_preflight(const char *prog) {
  const char *env = getenv("EMBD_ISA");
  if (!env) return 0;
  int r = tu_isa_check_isolated(env);
  if (r == EMBD_ERR_UNSUPPORTED_ISA) {
    printf("%s: SKIP: EMBD_ISA=\"%s\" cannot run on this CPU\n", prog, env);
    return TU_SKIP;
  }
  return 0;
}

/* The feature bit named `name` (length n), 0 if none: the inverse of
 * embd_cpu_feature_name, found through the public API only. */
static inline uint64_t tu_feature_by_name(const char *name, size_t n) {
  for (int b = 0; b < 64; b++) {
    const char *s = embd_cpu_feature_name(UINT64_C(1) << b);
    if (s && strlen(s) == n && memcmp(s, name, n) == 0) return UINT64_C(1) << b;
  }
  return 0;
}

/* Parses an ISA spec the way embd/cpu.h documents it: the tier cap (-1 = none given)
 * and the masked features. Returns 0, or -1 for a word that is neither. */
static inline int tu_parse_spec(const char *spec, int *cap, uint64_t *masked) {
  *cap = -1;
  *masked = 0;
  const char *p = spec ? spec : "";
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 0 && p[0] == '-') {
      uint64_t b = tu_feature_by_name(p + 1, n - 1);
      if (!b) return -1;
      *masked |= b;
    } else if (n == 4 && memcmp(p, "auto", 4) == 0) {
      *cap = -1;
    } else {
      int t = -1;
      for (int i = 0; i <= EMBD_TIER_WASM_SIMD128; i++) {
        const char *tn = embd_tier_name((embd_tier)i);
        if (tn && strlen(tn) == n && memcmp(tn, p, n) == 0) t = i;
      }
      if (t < 0) return -1;
      *cap = t;
    }
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

/* Which registry rows a kernel test's per-implementation loops take. Under a forced tier
 * (EMBD_ISA=<tier>: the "tier" label's reruns, and all that the qemu-x86_64 -cpu steps run)
 * only that tier's rows, plus row 0 (the scalar reference the loops compare against): the
 * plain run takes every runnable row and each tier's rerun takes its own, so every row is
 * still run once per build and once per qemu CPU model, not once for every tier at or
 * above its own. Measured: under qemu -cpu Haswell base64.isa.avx2 ran five
 * implementations (the simde rows among them) for 89 s of the step's 173. The public
 * functions (the dispatch under the forced tier) stay in every run. */
static inline int tu_impl_in_scope(size_t index, embd_tier tier) {
  int cap;
  uint64_t masked;
  if (index == 0 || tu_parse_spec(getenv("EMBD_ISA"), &cap, &masked) != 0 || cap < 0) return 1;
  return (int)tier == cap;
}
#define TU_OUT_OF_SCOPE "not this run's: EMBD_ISA's tier reruns take their own rows"

/* Index of the active CRC-32 implementation in the registry, or (size_t)-1. */
static inline size_t tu_active_crc32_index(void) {
  const char *a = embd_impl_active(EMBD_KERNEL_CRC32);
  if (!a) return (size_t)-1;
  for (size_t i = 0; i < embd_impl_count(EMBD_KERNEL_CRC32); i++) {
    embd_impl_info in;
    if (embd_impl_get(EMBD_KERNEL_CRC32, i, &in) == EMBD_OK && strcmp(in.name, a) == 0)
      return i;
  }
  return (size_t)-1;
}

/* Checks the dispatcher's state against `spec` (NULL: automatic, nothing masked):
 * masked features are not enabled, enabled is a subset of detected, the active CRC-32
 * implementation is runnable with tier <= the cap, and no implementation later in the
 * preference order is both runnable and within the cap (i.e. it is the best allowed).
 * Returns 0, or -1 with a reason in msg. */
static inline int tu_check_dispatch(const char *spec, char *msg, size_t msgcap) {
  int cap;
  uint64_t masked;
  if (tu_parse_spec(spec, &cap, &masked) != 0) {
    snprintf(msg, msgcap, "spec \"%s\" does not parse", spec);
    return -1;
  }
  const uint64_t det = embd_cpu_features(), en = embd_cpu_features_enabled();
  if (!(det & EMBD_CPU_KNOWN) || !(en & EMBD_CPU_KNOWN)) {
    snprintf(msg, msgcap, "EMBD_CPU_KNOWN missing: detected %#llx enabled %#llx",
             (unsigned long long)det, (unsigned long long)en);
    return -1;
  }
  if (en & ~det) {
    snprintf(msg, msgcap, "enabled %#llx is not a subset of detected %#llx",
             (unsigned long long)en, (unsigned long long)det);
    return -1;
  }
  if (en & masked) {
    snprintf(msg, msgcap, "masked features %#llx still enabled (%#llx)",
             (unsigned long long)masked, (unsigned long long)en);
    return -1;
  }
  if ((det & ~masked) != en) {
    snprintf(msg, msgcap, "enabled %#llx != detected %#llx minus masked %#llx",
             (unsigned long long)en, (unsigned long long)det, (unsigned long long)masked);
    return -1;
  }
  const size_t ai = tu_active_crc32_index();
  const size_t n = embd_impl_count(EMBD_KERNEL_CRC32);
  if (ai >= n) {
    snprintf(msg, msgcap, "active implementation \"%s\" is not in the registry",
             embd_impl_active(EMBD_KERNEL_CRC32) ? embd_impl_active(EMBD_KERNEL_CRC32) : "(null)");
    return -1;
  }
  embd_impl_info a;
  embd_impl_get(EMBD_KERNEL_CRC32, ai, &a);
  if (!a.runnable || (a.required & ~en)) {
    snprintf(msg, msgcap, "active \"%s\" needs %#llx, enabled %#llx", a.name,
             (unsigned long long)a.required, (unsigned long long)en);
    return -1;
  }
  if (cap >= 0 && (int)a.tier > cap) {
    snprintf(msg, msgcap, "active \"%s\" has tier %s above the cap %s", a.name,
             embd_tier_name(a.tier), embd_tier_name((embd_tier)cap));
    return -1;
  }
  for (size_t j = ai + 1; j < n; j++) {
    embd_impl_info b;
    embd_impl_get(EMBD_KERNEL_CRC32, j, &b);
    if (b.runnable && (cap < 0 || (int)b.tier <= cap)) {
      snprintf(msg, msgcap, "active \"%s\" but the preferred \"%s\" is runnable and allowed",
               a.name, b.name);
      return -1;
    }
  }
  return 0;
}

/* Names of the features set in `bits`, space-separated, into buf. */
static inline const char *tu_feature_list(uint64_t bits, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = 0;
  for (int b = 0; b < 63; b++) {
    if (!(bits & (UINT64_C(1) << b))) continue;
    const char *s = embd_cpu_feature_name(UINT64_C(1) << b);
    int w = snprintf(buf + o, cap - o, "%s%s", o ? " " : "", s ? s : "?");
    if (w < 0 || (size_t)w >= cap - o) break;
    o += (size_t)w;
  }
  if (o == 0) snprintf(buf, cap, "(none)");
  return buf;
}

#endif
