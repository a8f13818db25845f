/* CRC-32: every implementation the host can run, and the public embd_crc32, against a
 * naive bit-at-a-time reference and zlib's crc32()/crc32_combine(). On x86 CPUs without
 * AVX-512 the registry's "avx512-simde" row (the avx512 kernel's source through simde's
 * emulation, never dispatched to) is runnable, so the avx512 kernel's logic is tested
 * here too.
 *
 * Environment: EMBD_TEST_SCALE (heavy-loop multiplier, default 1), EMBD_TEST_SEED,
 * EMBD_ISA (the tier the public path is forced to; exits 77 if this CPU cannot run it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <inttypes.h>
#include <zlib.h>

#include "testutil.h"

/* ---- the implementations under test ------------------------------------------------ */

typedef struct variant {
  char name[64];
  embd_crc32_fn fn;
} variant;

static variant g_var[16];
static size_t g_nvar;
static tu_rng g_rng;

static void collect_variants(void) {
  const size_t n = embd_impl_count(EMBD_KERNEL_CRC32);
  g_nvar = 0;
  printf("[ crc32    ] implementations compiled in: %zu\n", n);
  for (size_t i = 0; i < n && g_nvar < 15; i++) {
    embd_impl_info info;
    embd_impl_get(EMBD_KERNEL_CRC32, i, &info);
    const int scope = tu_impl_in_scope(i, info.tier);
    embd_crc32_fn fn = scope ? embd_crc32_impl(i) : NULL;
    printf("[ crc32    ]   %zu %-16s tier %-7s %s\n", i, info.name, embd_tier_name(info.tier),
           fn ? "RUN" : !scope ? TU_OUT_OF_SCOPE : "skipped: not runnable on this CPU");
    if (!fn) continue;
    snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "%s", info.name);
    g_var[g_nvar++].fn = fn;
  }
  snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "embd_crc32 (public, active %s)",
           embd_impl_active(EMBD_KERNEL_CRC32));
  g_var[g_nvar++].fn = embd_crc32;
  printf("[ crc32    ] public embd_crc32 dispatches to \"%s\"\n",
         embd_impl_active(EMBD_KERNEL_CRC32));
}

/* Mismatches go to testutil.h's counter (tu_report: the first 20 printed with what
 * reproduces them); tu_end_checks fails the test once with the total. */
#define CHECK_CRC(got, want, ...) CHECK_CRC_((got), (want), __VA_ARGS__)
#define CHECK_CRC_(got, want, fmt, ...)                                                   \
  do {                                                                                    \
    uint32_t got_ = got, want_ = want;                                                    \
    if (got_ != want_)                                                                    \
      tu_report("got %08" PRIx32 " want %08" PRIx32 ": " fmt, got_, want_, ##__VA_ARGS__); \
  } while (0)

static uint32_t zlib_crc(uint32_t crc, const void *p, size_t n) {
  return (uint32_t)crc32_z((uLong)crc, (const Bytef *)p, (z_size_t)n);
}

/* ---- known answers ------------------------------------------------------------------ */

static void test_known_answers(void **state) {
  (void)state;
  static const struct {
    const char *s;
    size_t n;
    uint32_t crc;
  } kat[] = {
      {"", 0, 0x00000000},
      {"a", 1, 0xE8B7BE43},
      {"123456789", 9, 0xCBF43926},
      {"The quick brown fox jumps over the lazy dog", 43, 0x414FA339},
  };
  assert_int_equal(embd_crc32(0, NULL, 0), 0);
  for (size_t v = 0; v < g_nvar; v++) {
    const embd_crc32_fn f = g_var[v].fn;
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++) {
      CHECK_CRC(f(0, kat[k].s, kat[k].n), kat[k].crc, "%s(\"%s\")", g_var[v].name, kat[k].s);
      CHECK_CRC(tu_crc32_naive(0, kat[k].s, kat[k].n), kat[k].crc, "naive(\"%s\")", kat[k].s);
      CHECK_CRC(zlib_crc(0, kat[k].s, kat[k].n), kat[k].crc, "zlib(\"%s\")", kat[k].s);
    }
    CHECK_CRC(f(f(0, "1234", 4), "56789", 5), 0xCBF43926, "%s chunked 1234|56789", g_var[v].name);
    CHECK_CRC(f(0, NULL, 0), 0, "%s(0, NULL, 0)", g_var[v].name);
    /* The public function follows zlib: a NULL buffer returns the initial value 0 whatever
     * the CRC and length. The raw implementations leave the CRC unchanged at length 0. */
    if (f == embd_crc32) {
      CHECK_CRC(f(0xDEADBEEF, NULL, 0), 0, "%s(0xDEADBEEF, NULL, 0)", g_var[v].name);
      CHECK_CRC(f(0xDEADBEEF, NULL, 123), 0, "%s(0xDEADBEEF, NULL, 123)", g_var[v].name);
      CHECK_CRC(zlib_crc(0xDEADBEEF, NULL, 0), 0, "zlib(0xDEADBEEF, NULL, 0)");
    } else {
      CHECK_CRC(f(0xDEADBEEF, NULL, 0), 0xDEADBEEF, "%s(0xDEADBEEF, NULL, 0)", g_var[v].name);
    }
    CHECK_CRC(f(0xDEADBEEF, "x", 0), 0xDEADBEEF, "%s(0xDEADBEEF, \"x\", 0)", g_var[v].name);
    /* 32 zero bytes and 32 0xFF bytes: long enough to take the dispatched path. */
    uint8_t z[4096];
    memset(z, 0, sizeof z);
    CHECK_CRC(f(0, z, 32), 0x190A55AD, "%s(32 x 0x00)", g_var[v].name);
    CHECK_CRC(f(0, z, sizeof z), tu_crc32_naive(0, z, sizeof z), "%s(4096 x 0x00)",
              g_var[v].name);
    memset(z, 0xFF, sizeof z);
    CHECK_CRC(f(0, z, 32), 0xFF6CAB0B, "%s(32 x 0xFF)", g_var[v].name);
    CHECK_CRC(f(0, z, sizeof z), tu_crc32_naive(0, z, sizeof z), "%s(4096 x 0xFF)",
              g_var[v].name);
  }
  tu_end_checks("known answers");
}

/* The registry and embd_crc32_impl agree: NULL exactly when not runnable or out of range. */
static void test_registry(void **state) {
  (void)state;
  const size_t n = embd_impl_count(EMBD_KERNEL_CRC32);
  assert_true(n >= 1);
  embd_impl_info info;
  assert_int_equal(embd_impl_get(EMBD_KERNEL_CRC32, 0, &info), EMBD_OK);
  assert_string_equal(info.name, "scalar");
  assert_int_equal(info.tier, EMBD_TIER_SCALAR);
  assert_true(info.runnable);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(embd_impl_get(EMBD_KERNEL_CRC32, i, &info), EMBD_OK);
    assert_non_null(info.name);
    assert_int_equal(embd_crc32_impl(i) != NULL, info.runnable != 0);
    for (size_t j = 0; j < i; j++) {
      embd_impl_info o;
      embd_impl_get(EMBD_KERNEL_CRC32, j, &o);
      assert_string_not_equal(o.name, info.name);
    }
  }
  assert_null(embd_crc32_impl(n));
  assert_null(embd_crc32_impl((size_t)-1));
  assert_int_equal(embd_impl_get(EMBD_KERNEL_CRC32, n, &info), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_impl_get(EMBD_KERNEL_CRC32, 0, NULL), EMBD_ERR_INVALID_ARGUMENT);
}

/* With EMBD_ISA set (the per-tier runs of this binary), the public path must be the best
 * implementation the forced tier and masks allow; without it, the best overall. */
static void test_dispatch_matches_env(void **state) {
  (void)state;
  char msg[256];
  const char *env = getenv("EMBD_ISA");
  if (tu_check_dispatch(env, msg, sizeof msg) != 0) fail_msg("EMBD_ISA=%s: %s", env ? env : "", msg);
}

/* ---- every length x every start offset ----------------------------------------------- */

/* Lengths 0..2048 at every start offset 0..63 (the full cross product: 2049 x 64 calls
 * per implementation, ~134 MB of CRC per implementation, well under a second natively).
 * The data end 0..63 bytes before a PROT_NONE page (the pad is random bytes: a kernel
 * that includes a byte it should not changes the result; one that reads 64 or more bytes
 * past the end faults) and start at the requested alignment mod 64.
 *
 * Reduced runs (EMBD_TEST_SCALE < 1, e.g. under qemu) keep the full cross product up to
 * FULL_FLOOR = 1088 bytes: the x86 kernels' structure changes at 16 (also where the
 * public entry stops taking its inline table path), at every multiple of 16 below 128
 * (sse42) or 256 (avx2) (each k = (len - 1) / 16 has its own straight-line code, and
 * each len % 16 its masked last chunk and its row of multipliers), at 128 / 256 (the
 * 8-accumulator loops, whose remainder of 0..127 / 0..255 bytes reuses the short-message
 * code with every multiplier distance up to 255: all of them are seen below 512), at
 * 64 and 512 for avx512 (16..64 one masked register with per-length multipliers, 65..511
 * one straight-line piece per block count 2..8 with the CRC as a term of its own, each
 * from every start alignment; from 512 the 4-accumulator loop, which takes 1..3 leading
 * bytes by table when an aligned start would put the CRC across two blocks);
 * 1088 = 17 x 64 covers two iterations of every main loop from every alignment, plus
 * every tail length. Above the floor each length still runs at offsets
 * len % 64 and (len * 37 + 11) % 64, so every length and every offset is still seen.
 *
 * The references do not cost a naive pass per call: for a fixed start offset the
 * data are prefixes of one random pattern, so the naive CRC (and zlib's) of every
 * prefix is built incrementally, one byte at a time, and the two are compared too. */
#define MAXLEN 2048
#define FULL_FLOOR 1088

static void test_lengths_offsets(void **state) {
  (void)state;
  size_t full = tu_scale() >= 1 ? MAXLEN : tu_scaled(MAXLEN, FULL_FLOOR);
  if (full > MAXLEN) full = MAXLEN;
  static uint8_t pattern[MAXLEN];
  static uint32_t ref_naive[MAXLEN + 1], ref_zlib[MAXLEN + 1];
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, MAXLEN + 128), 0);
  tu_fill(&g_rng, pattern, sizeof pattern);
  unsigned long calls = 0;

  for (unsigned off = 0; off < 64; off++) {
    uint32_t init = off == 0 ? 0 : off == 1 ? 0xFFFFFFFFu : tu_u32(&g_rng);
    ref_naive[0] = ref_zlib[0] = init;
    for (size_t n = 1; n <= MAXLEN; n++) {
      ref_naive[n] = tu_crc32_naive(ref_naive[n - 1], pattern + n - 1, 1);
      ref_zlib[n] = zlib_crc(ref_zlib[n - 1], pattern + n - 1, 1);
    }
    for (size_t n = 0; n <= MAXLEN; n++)
      CHECK_CRC(ref_zlib[n], ref_naive[n], "oracles disagree: len %zu init %08x", n, init);

    for (size_t len = 0; len <= MAXLEN; len++) {
      if (len > full && len % 64 != off && (len * 37 + 11) % 64 != off) continue;
      /* start = hi - len - pad with start % 64 == off (hi is page aligned). */
      const size_t pad = (size_t)((0u - (unsigned)len - off) & 63u);
      uint8_t *start = g.hi - len - pad;
      memcpy(start, pattern, len);
      tu_fill(&g_rng, start + len, pad);
      for (size_t v = 0; v < g_nvar; v++) {
        const uint32_t got = g_var[v].fn(init, start, len);
        CHECK_CRC(got, ref_naive[len], "%s len %zu offset %u init %08x (naive)", g_var[v].name,
                  len, off, init);
        CHECK_CRC(got, ref_zlib[len], "%s len %zu offset %u init %08x (zlib)", g_var[v].name,
                  len, off, init);
        calls++;
      }
    }
  }
  printf("[ crc32    ] lengths 0..%d x offsets 0..63 (full cross product up to %zu): %lu calls\n",
         MAXLEN, full, calls);
  tu_guard_free(&g);
  tu_end_checks("lengths x offsets");
}

/* ---- guard pages on both sides -------------------------------------------------------- */

/* Every length 0..MAXLEN (and past one page) with the data ending exactly at a PROT_NONE
 * page (so the start alignment runs through every value mod 64 as the length grows),
 * then starting exactly after one, then a whole page fenced on both sides. Any read of
 * even one byte outside [buf, buf + len) faults. The avx512 kernel switches from blocks
 * that end at the end to aligned blocks at 6 KiB (EMBD_AVX512_END_ALIGNED_BELOW, not
 * visible here): every length from just below it to five blocks past it, each at two
 * start alignments, covers the aligned layout's every tail length (0..63 bytes), block
 * count mod 4 of its loop and leading-byte case. */
#define DENSE_LO (6144 - 8)
#define DENSE_HI (6144 + 5 * 64)
static void test_guard_pages(void **state) {
  (void)state;
  const size_t ps = tu_page();
  size_t maxlen = MAXLEN + ps + 64;
  if (maxlen < DENSE_HI) maxlen = DENSE_HI;
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, maxlen), 0);
  tu_fill(&g_rng, g.lo, (size_t)(g.hi - g.lo));
  for (size_t len = 0; len <= maxlen;
       len += len < MAXLEN + 16 || (len >= DENSE_LO && len < DENSE_HI) ? 1 : 7) {
    const uint32_t init = tu_u32(&g_rng);
    const uint8_t *end_at_guard = g.hi - len;
    const uint8_t *start_at_guard = g.lo;
    const uint32_t want_end = tu_crc32_naive(init, end_at_guard, len);
    const uint32_t want_start = tu_crc32_naive(init, start_at_guard, len);
    CHECK_CRC(zlib_crc(init, end_at_guard, len), want_end, "zlib len %zu", len);
    for (size_t v = 0; v < g_nvar; v++) {
      CHECK_CRC(g_var[v].fn(init, end_at_guard, len), want_end,
                "%s len %zu ending at a guard page, init %08x", g_var[v].name, len, init);
      CHECK_CRC(g_var[v].fn(init, start_at_guard, len), want_start,
                "%s len %zu starting after a guard page, init %08x", g_var[v].name, len, init);
    }
  }
  tu_guard_free(&g);

  /* Exactly one page between two guard pages. */
  assert_int_equal(tu_guard_alloc(&g, ps), 0);
  tu_fill(&g_rng, g.lo, ps);
  const uint32_t want = tu_crc32_naive(0x12345678, g.lo, ps);
  for (size_t v = 0; v < g_nvar; v++)
    CHECK_CRC(g_var[v].fn(0x12345678, g.lo, ps), want, "%s one fenced page", g_var[v].name);
  tu_guard_free(&g);
  tu_end_checks("guard pages");
}

/* ---- long lengths ------------------------------------------------------------------- */

/* Lengths around page and 64 KiB boundaries and up to 1 MiB, plus random ones, each
 * placed right after a guard page, ending at a guard page, and at a random odd offset;
 * random initial CRCs. One naive pass per length (~6 MB in all). */
static void test_long_lengths(void **state) {
  (void)state;
  size_t lens[32] = {2049, 4095, 4096, 4097, 8191, 8193, 65535, 65536, 65536 + 17,
                     (1u << 20) - 1, 1u << 20};
  size_t nl = 11;
  const size_t nrand = tu_scaled(8, 2);
  for (size_t i = 0; i < nrand && nl < 32; i++) lens[nl++] = tu_range(&g_rng, MAXLEN + 1, 1u << 20);

  const size_t maxlen = 1u << 20;
  uint8_t *content = malloc(maxlen);
  assert_non_null(content);
  tu_fill(&g_rng, content, maxlen);
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, maxlen + 64), 0);

  for (size_t i = 0; i < nl; i++) {
    const size_t len = lens[i];
    const uint32_t init = tu_u32(&g_rng);
    const uint32_t want = tu_crc32_naive(init, content, len);
    uint8_t *places[3] = {g.lo, g.hi - len, g.lo + 1 + 2 * tu_range(&g_rng, 0, 30)};
    for (int p = 0; p < 3; p++) {
      memmove(places[p], content, len);
      CHECK_CRC(zlib_crc(init, places[p], len), want, "zlib len %zu", len);
      for (size_t v = 0; v < g_nvar; v++)
        CHECK_CRC(g_var[v].fn(init, places[p], len), want, "%s len %zu at %s, init %08x",
                  g_var[v].name, len,
                  p == 0 ? "guard start" : p == 1 ? "guard end" : "odd offset", init);
    }
  }
  printf("[ crc32    ] %zu long lengths up to %zu bytes\n", nl, maxlen);
  tu_guard_free(&g);
  free(content);
  tu_end_checks("long lengths");
}

/* ---- chunking ----------------------------------------------------------------------- */

static size_t random_chunk(tu_rng *r) {
  switch (tu_range(r, 0, 9)) {
    case 0: return 0;
    case 1: case 2: case 3: return tu_range(r, 1, 16);
    case 4: case 5: case 6: return tu_range(r, 17, 300);
    case 7: case 8: return tu_range(r, 301, 5000);
    default: return tu_range(r, 5001, 70000);
  }
}

/* Random splits of a random buffer give the one-shot CRC: through each implementation
 * alone, through the public embd_crc32 (variant list's last entry), and with every chunk
 * going to a randomly chosen implementation (the CRC state is interchangeable). */
static void test_chunking(void **state) {
  (void)state;
  const size_t trials = tu_scaled(60, 8), maxlen = 1u << 17;
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, maxlen), 0);
  for (size_t t = 0; t < trials; t++) {
    const size_t len = t == 0 ? 0 : tu_range(&g_rng, 0, maxlen);
    uint8_t *buf = g.hi - len;
    tu_fill(&g_rng, buf, len);
    const uint32_t init = tu_u32(&g_rng);
    const uint32_t want = tu_crc32_naive(init, buf, len);
    CHECK_CRC(zlib_crc(init, buf, len), want, "zlib one-shot len %zu", len);
    for (size_t v = 0; v <= g_nvar; v++) { /* v == g_nvar: each chunk a random variant */
      uint32_t c = init;
      size_t pos = 0;
      while (pos < len) {
        size_t n = random_chunk(&g_rng);
        if (n > len - pos) n = len - pos;
        const size_t w = v < g_nvar ? v : tu_range(&g_rng, 0, g_nvar - 1);
        c = g_var[w].fn(c, buf + pos, n);
        pos += n;
      }
      CHECK_CRC(c, want, "%s chunked, len %zu init %08x",
                v < g_nvar ? g_var[v].name : "random implementation per chunk", len, init);
    }
  }
  tu_guard_free(&g);
  tu_end_checks("chunking");
}

/* ---- combine ------------------------------------------------------------------------- */

static uint64_t random_len2(tu_rng *r) {
  switch (tu_range(r, 0, 5)) {
    case 0: return tu_range(r, 0, 3);
    case 1: return tu_range(r, 0, 300);
    case 2: return tu_range(r, 0, 1u << 20);
    case 3: return tu_next(r) >> 24; /* up to 2^40 */
    case 4: return tu_next(r) >> 1;  /* up to 2^63 - 1 */
    default: return (UINT64_C(1) << tu_range(r, 0, 62)) + tu_range(r, 0, 2) - 1;
  }
}

static void test_combine(void **state) {
  (void)state;
  /* Against zlib on arbitrary CRC values and lengths (z_off_t is 64-bit on LP64). */
  const uint64_t zmax =
      sizeof(z_off_t) >= 8 ? (UINT64_C(1) << 63) - 1 : (UINT64_C(1) << 31) - 1;
  const size_t n = tu_scaled(20000, 500);
  for (size_t i = 0; i < n; i++) {
    const uint32_t c1 = tu_u32(&g_rng), c2 = tu_u32(&g_rng);
    uint64_t l2 = i == 0 ? 0 : random_len2(&g_rng);
    if (l2 > zmax) l2 &= zmax;
    CHECK_CRC(embd_crc32_combine(c1, c2, l2),
              (uint32_t)crc32_combine(c1, c2, (z_off_t)l2),
              "combine(%08x, %08x, %llu) vs zlib", c1, c2, (unsigned long long)l2);
  }
  /* On real data: CRC(A || B) from CRC(A) and CRC(B), lengths including 0. */
  static uint8_t buf[12000];
  const size_t m = tu_scaled(300, 30);
  for (size_t i = 0; i < m; i++) {
    const size_t la = i % 4 == 0 ? 0 : tu_range(&g_rng, 0, 6000);
    const size_t lb = i % 4 == 1 ? 0 : tu_range(&g_rng, 0, 6000);
    tu_fill(&g_rng, buf, la + lb);
    const uint32_t init = i % 3 ? tu_u32(&g_rng) : 0;
    const uint32_t ca = embd_crc32(init, buf, la), cb = embd_crc32(0, buf + la, lb);
    const uint32_t whole = tu_crc32_naive(init, buf, la + lb);
    CHECK_CRC(embd_crc32_combine(ca, cb, lb), whole, "combine of real data, %zu + %zu", la, lb);
    CHECK_CRC((uint32_t)crc32_combine(ca, cb, (z_off_t)lb), whole, "zlib combine %zu + %zu",
              la, lb);
  }
  tu_end_checks("combine");
}

int main(void) {
  const int pre = tu_isa_preflight("test_crc32");
  if (pre) return pre;
  g_rng.s = tu_seed();
  printf("[ crc32    ] seed %#llx scale %g EMBD_ISA=%s zlib %s\n", (unsigned long long)tu_seed(),
         tu_scale(), getenv("EMBD_ISA") ? getenv("EMBD_ISA") : "(unset)", zlibVersion());
  collect_variants();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),
      cmocka_unit_test(test_dispatch_matches_env),
      cmocka_unit_test(test_known_answers),
      cmocka_unit_test(test_lengths_offsets),
      cmocka_unit_test(test_guard_pages),
      cmocka_unit_test(test_long_lengths),
      cmocka_unit_test(test_chunking),
      cmocka_unit_test(test_combine),
  };
  return cmocka_run_group_tests_name("crc32", tests, NULL, NULL);
}
