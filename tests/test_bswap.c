/* bswap32: every implementation the host can run, and the public embd_bswap32, against a
 * naive byte-reversal reference (out of place at every length 0..300 words and every
 * source and destination offset 0..63, next to guard pages; in place; random lengths up
 * to 1 MiB), the host-order helpers against explicit byte assembly (so the expectations
 * hold on big-endian hosts too), and the registry. The copy kernel paired with each
 * implementation (what the host-order helpers use instead of memcpy) against the source
 * bytes: every length 0..700 bytes at every source offset and at distances (dst - src)
 * mod 4096 that take each copy direction, random lengths up to 1 MiB; the helpers at
 * every distance 0..127 and a spread of others.
 *
 * Environment: EMBD_TEST_SCALE, EMBD_TEST_SEED, EMBD_ISA (exits 77 if this CPU cannot run
 * the forced tier).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "testutil.h"

/* Registered but never picked by the dispatcher. */
#define NON_SELECTABLE "neon-simde"

typedef struct variant {
  char name[64];
  embd_bswap32_fn fn;
} variant;

static variant g_var[16];
static size_t g_nvar;
static tu_rng g_rng;

static void collect_variants(void) {
  const size_t n = embd_impl_count(EMBD_KERNEL_BSWAP32);
  g_nvar = 0;
  printf("[ bswap32  ] implementations compiled in: %zu\n", n);
  for (size_t i = 0; i < n && g_nvar < 15; i++) {
    embd_impl_info info;
    embd_impl_get(EMBD_KERNEL_BSWAP32, i, &info);
    const int scope = tu_impl_in_scope(i, info.tier);
    embd_bswap32_fn fn = scope ? embd_bswap32_impl(i) : NULL;
    printf("[ bswap32  ]   %zu %-16s tier %-7s %s\n", i, info.name, embd_tier_name(info.tier),
           fn ? "RUN" : !scope ? TU_OUT_OF_SCOPE : "skipped: not runnable on this CPU");
    if (!fn) continue;
    snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "%s", info.name);
    g_var[g_nvar++].fn = fn;
  }
  snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "embd_bswap32 (public, active %s)",
           embd_impl_active(EMBD_KERNEL_BSWAP32));
  g_var[g_nvar++].fn = embd_bswap32;
  printf("[ bswap32  ] public embd_bswap32 dispatches to \"%s\"\n",
         embd_impl_active(EMBD_KERNEL_BSWAP32));
}


/* The definition: byte k of each word out is byte 3 - k of the word in. */
static void naive_bswap(uint8_t *out, const uint8_t *in, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < 4; k++) out[4 * i + k] = in[4 * i + 3 - k];
}

/* First differing byte, or (size_t)-1. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return i;
  return (size_t)-1;
}

#define MAXW 300
#define CANARY 0xA5

/* One out-of-place call: `in` holds n words, dst is written; the 64 bytes (within the
 * guarded output buffer) on each side of [dst, dst + 4n) must keep the canary. */
static void check_out_of_place(const variant *v, const tu_guard *go, uint8_t *dst,
                               const uint8_t *src, size_t n, uint8_t *want) {
  const size_t nb = 4 * n;
  uint8_t *wlo = dst - go->lo >= 64 ? dst - 64 : go->lo;
  uint8_t *whi = go->hi - (dst + nb) >= 64 ? dst + nb + 64 : go->hi;
  memset(wlo, CANARY, (size_t)(whi - wlo));
  naive_bswap(want, src, n);
  v->fn(dst, src, n);
  size_t d = first_diff(dst, want, nb);
  if (d != (size_t)-1)
    tu_report("%s: %zu words, src%%64=%u dst%%64=%u: byte %zu wrong", v->name, n,
           (unsigned)((uintptr_t)src & 63), (unsigned)((uintptr_t)dst & 63), d);
  for (const uint8_t *p = wlo; p < whi; p++) {
    if (p == dst) p += nb;
    if (p >= whi) break;
    if (*p != CANARY) {
      tu_report("%s: %zu words, src%%64=%u dst%%64=%u: wrote outside the output at %td", v->name,
             n, (unsigned)((uintptr_t)src & 63), (unsigned)((uintptr_t)dst & 63), p - dst);
      break;
    }
  }
}

/* Every length 0..300 words. Source and destination each end 0..63 bytes before a
 * PROT_NONE page (exactly at it for one of the placements) and start at every offset mod
 * 64: every source offset (with a destination offset that moves with the length), every
 * destination offset (likewise), and the exact-end and exact-start placements. */
static void test_lengths_offsets(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, 4 * MAXW + 256), 0);
  assert_int_equal(tu_guard_alloc(&go, 4 * MAXW + 256), 0);
  static uint8_t want[4 * MAXW];
  tu_fill(&g_rng, gi.lo, (size_t)(gi.hi - gi.lo));
  unsigned long calls = 0;
  for (size_t v = 0; v < g_nvar; v++) {
    for (size_t n = 0; n <= MAXW; n++) {
      const size_t nb = 4 * n;
      /* The highest start at alignment `off` that still ends at or before the guard. */
#define AT(g, off) ((g).hi - nb - ((((uintptr_t)((g).hi - nb)) - (off)) & 63))
      for (unsigned off = 0; off < 64; off++) {
        const unsigned other = (unsigned)((off * 37 + n * 7 + 11) & 63);
        check_out_of_place(&g_var[v], &go, AT(go, other), AT(gi, off), n, want);
        check_out_of_place(&g_var[v], &go, AT(go, off), AT(gi, other), n, want);
        calls += 2;
      }
#undef AT
      check_out_of_place(&g_var[v], &go, go.hi - nb, gi.hi - nb, n, want);
      check_out_of_place(&g_var[v], &go, go.lo, gi.lo, n, want);
      check_out_of_place(&g_var[v], &go, go.hi - nb, gi.lo, n, want);
      calls += 3;
    }
  }
  printf("[ bswap32  ] lengths 0..%d words x offsets: %lu calls\n", MAXW, calls);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("lengths x offsets");
}

/* In place (dst == src), every length 0..300 words, at every offset and ending exactly at
 * the guard page. */
static void test_in_place(void **state) {
  (void)state;
  tu_guard g = {0};
  assert_int_equal(tu_guard_alloc(&g, 4 * MAXW + 256), 0);
  static uint8_t orig[4 * MAXW], want[4 * MAXW];
  for (size_t v = 0; v < g_nvar; v++) {
    for (size_t n = 0; n <= MAXW; n++) {
      const size_t nb = 4 * n;
      for (unsigned off = 0; off <= 64; off++) {
        uint8_t *p = off == 64 ? g.hi - nb
                               : g.hi - nb - ((((uintptr_t)(g.hi - nb)) - off) & 63);
        tu_fill(&g_rng, orig, nb);
        memcpy(p, orig, nb);
        naive_bswap(want, orig, n);
        g_var[v].fn(p, p, n);
        size_t d = first_diff(p, want, nb);
        if (d != (size_t)-1)
          tu_report("%s in place: %zu words at %%64=%u: byte %zu wrong", g_var[v].name, n,
                 (unsigned)((uintptr_t)p & 63), d);
        /* Twice is the identity. */
        g_var[v].fn(p, p, n);
        if (first_diff(p, orig, nb) != (size_t)-1)
          tu_report("%s in place twice: %zu words: not the identity", g_var[v].name, n);
      }
    }
  }
  tu_guard_free(&g);
  tu_end_checks("in place");
}

/* Random lengths up to 1 MiB, random offsets, out of place and in place, data ending at
 * the guard page. */
#define BIGB (1u << 20)
static void test_random_long(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, BIGB + 64), 0);
  assert_int_equal(tu_guard_alloc(&go, BIGB + 64), 0);
  uint8_t *want = malloc(BIGB), *orig = malloc(BIGB);
  assert_non_null(want);
  assert_non_null(orig);
  const size_t rounds = tu_scaled(12, 3);
  for (size_t r = 0; r < rounds; r++) {
    size_t n = r == 0 ? BIGB / 4 : tu_range(&g_rng, 0, BIGB / 4);
    const size_t nb = 4 * n;
    const unsigned so = (unsigned)tu_range(&g_rng, 0, 63), dof = (unsigned)tu_range(&g_rng, 0, 63);
    uint8_t *src = gi.hi - nb - (r & 1 ? 0 : ((((uintptr_t)(gi.hi - nb)) - so) & 63));
    uint8_t *dst = go.hi - nb - (r & 2 ? 0 : ((((uintptr_t)(go.hi - nb)) - dof) & 63));
    tu_fill(&g_rng, orig, nb);
    memcpy(src, orig, nb);
    naive_bswap(want, orig, n);
    for (size_t v = 0; v < g_nvar; v++) {
      memset(dst, 0, nb);
      g_var[v].fn(dst, src, n);
      size_t d = first_diff(dst, want, nb);
      if (d != (size_t)-1) tu_report("%s: %zu words: byte %zu wrong", g_var[v].name, n, d);
      if (first_diff(src, orig, nb) != (size_t)-1)
        tu_report("%s: %zu words: the source changed", g_var[v].name, n);
      memcpy(dst, orig, nb);
      g_var[v].fn(dst, dst, n);
      d = first_diff(dst, want, nb);
      if (d != (size_t)-1) tu_report("%s in place: %zu words: byte %zu wrong", g_var[v].name, n, d);
    }
  }
  free(want);
  free(orig);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("random long");
}

/* ---- streaming stores ---------------------------------------------------------------- */

/* The library's threshold for streaming stores (src/core/internal.h): measured on first
 * use, settable here (single-threaded) so that small buffers take that path. */
extern size_t embd_bswap32_nt_bytes_;
size_t embd_bswap32_nt_measure_(void);
size_t embd_cpu_llc_bytes(void);

/* The out-of-place tests again with every swap of 64 bytes or more on the streaming-store
 * path (x86 kernels: head, aligned streaming body and tail at every length and offset,
 * canaries around the output); the other kernels must not care. */
static void test_streaming_stores(void **state) {
  (void)state;
  const size_t measured = embd_bswap32_nt_measure_();
  printf("[ bswap32  ] streaming stores from %zu bytes (last-level cache %zu bytes)\n", measured,
         embd_cpu_llc_bytes());
  if (measured < ((size_t)1 << 20)) fail_msg("threshold %zu bytes: below 1 MiB", measured);
  embd_bswap32_nt_bytes_ = 1;
  test_lengths_offsets(state);
  test_random_long(state);
  embd_bswap32_nt_bytes_ = measured;
}

/* ---- host-order helpers ------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

#define HW 700
static void test_host_order(void **state) {
  (void)state;
  static uint8_t wire[4 * HW + 64], out[4 * HW + 64];
  static uint32_t host[HW + 16];
  static float fhost[HW + 16];
  static const size_t lens[] = {0, 1, 3, 4, 15, 16, 17, 31, 64, 65, 100, 257, HW};
  /* NULL with n == 0 is allowed. */
  embd_bswap32(NULL, NULL, 0);
  embd_f32_from_le(NULL, NULL, 0);
  embd_f32_to_le(NULL, NULL, 0);
  embd_u32_from_be(NULL, NULL, 0);
  embd_u32_to_be(NULL, NULL, 0);
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    const size_t n = lens[li];
    const unsigned off = (unsigned)tu_range(&g_rng, 0, 7);
    uint8_t *w = wire + off;
    tu_fill(&g_rng, w, 4 * n);

    /* from the wire: value i is assembled from its bytes in the wire order */
    embd_f32_from_le(fhost, w, n);
    for (size_t i = 0; i < n; i++) {
      uint32_t bits;
      memcpy(&bits, &fhost[i], 4);
      if (bits != le32(w + 4 * i)) tu_report("f32_from_le n=%zu: word %zu", n, i);
    }
    embd_u32_from_be(host, w, n);
    for (size_t i = 0; i < n; i++)
      if (host[i] != be32(w + 4 * i)) tu_report("u32_from_be n=%zu: word %zu", n, i);

    /* to the wire: bytes taken from the value by shifts */
    for (size_t i = 0; i < n; i++) host[i] = tu_u32(&g_rng);
    memcpy(fhost, host, 4 * n);
    embd_u32_to_be(out + off, host, n);
    for (size_t i = 0; i < n; i++)
      for (int k = 0; k < 4; k++)
        if (out[off + 4 * i + k] != (uint8_t)(host[i] >> (24 - 8 * k)))
          tu_report("u32_to_be n=%zu: word %zu byte %d", n, i, k);
    embd_f32_to_le(out + off, fhost, n);
    for (size_t i = 0; i < n; i++)
      for (int k = 0; k < 4; k++)
        if (out[off + 4 * i + k] != (uint8_t)(host[i] >> (8 * k)))
          tu_report("f32_to_le n=%zu: word %zu byte %d", n, i, k);

    /* in place: the same values, converted in the buffer itself */
    uint32_t *ip = host;
    for (size_t i = 0; i < n; i++) ip[i] = tu_u32(&g_rng);
    static uint32_t saved[HW + 16];
    memcpy(saved, ip, 4 * n);
    embd_u32_to_be(ip, ip, n);
    for (size_t i = 0; i < n; i++)
      if (be32((const uint8_t *)&ip[i]) != saved[i]) tu_report("u32_to_be in place n=%zu: %zu", n, i);
    embd_u32_from_be(ip, ip, n);
    if (n && memcmp(ip, saved, 4 * n) != 0) tu_report("u32_from_be in place n=%zu", n);
    memcpy(fhost, saved, 4 * n);
    embd_f32_to_le(fhost, fhost, n);
    for (size_t i = 0; i < n; i++)
      if (le32((const uint8_t *)&fhost[i]) != saved[i]) tu_report("f32_to_le in place n=%zu: %zu", n, i);
    embd_f32_from_le(fhost, fhost, n);
    if (n && memcmp(fhost, saved, 4 * n) != 0) tu_report("f32_from_le in place n=%zu", n);
  }
  tu_end_checks("host order");
}

/* ---- copy kernels ------------------------------------------------------------------ */
/* The identity kernel paired with each bswap32 implementation (src/core/copy_kernel.h, used by
 * the host-order helpers on the matching-endian path and by the frame, batch, stream and
 * codec readers instead of memcpy). Internal, hidden in the shared library; this program
 * links the static one. Declared here, not through src/core/internal.h, which only the
 * library's own files may include. */
typedef void (*copy_fn)(void *dst, const void *src, size_t n);
copy_fn embd_copy_impl_(size_t index);
void embd_copy_dispatch_(void *dst, const void *src, size_t n);

typedef struct cvariant {
  char name[64];
  copy_fn fn;
} cvariant;
static cvariant g_cvar[16];
static size_t g_ncvar;

static void collect_copy_variants(void) {
  const size_t n = embd_impl_count(EMBD_KERNEL_BSWAP32);
  g_ncvar = 0;
  for (size_t i = 0; i < n && g_ncvar < 15; i++) {
    embd_impl_info info;
    embd_impl_get(EMBD_KERNEL_BSWAP32, i, &info);
    copy_fn fn = embd_copy_impl_(i);
    /* Exactly the runnable bswap32 implementations have a copy kernel. */
    if ((fn != NULL) != (embd_bswap32_impl(i) != NULL))
      fail_msg("copy kernel of %s: %s", info.name, fn ? "present, bswap32 not runnable" : "missing");
    if (!fn) continue;
    snprintf(g_cvar[g_ncvar].name, sizeof g_cvar[g_ncvar].name, "copy/%s", info.name);
    g_cvar[g_ncvar++].fn = fn;
  }
  snprintf(g_cvar[g_ncvar].name, sizeof g_cvar[g_ncvar].name, "copy/dispatched (%s)",
           embd_impl_active(EMBD_KERNEL_BSWAP32));
  g_cvar[g_ncvar++].fn = embd_copy_dispatch_;
}

/* Distances (dst - src) mod 4096 that pick each direction and sit at its edges: the
 * kernels copy backward for 1..2047, forward for 0 and 2048..4095. */
static const unsigned copy_dists[] = {0, 1, 7, 31, 32, 63, 64, 100, 2047, 2048, 2049, 3000, 4064, 4095};
#define NDIST (sizeof copy_dists / sizeof copy_dists[0])
#define CMAXB 700

/* One call: n bytes from src to dst (inside go); the 64 bytes around the output keep the
 * canary and the source is unchanged. */
static void check_copy(const cvariant *v, const tu_guard *go, uint8_t *dst, const uint8_t *src,
                       size_t n, unsigned dist) {
  uint8_t *wlo = dst - go->lo >= 64 ? dst - 64 : go->lo;
  uint8_t *whi = go->hi - (dst + n) >= 64 ? dst + n + 64 : go->hi;
  memset(wlo, CANARY, (size_t)(whi - wlo));
  v->fn(dst, src, n);
  size_t d = first_diff(dst, src, n);
  if (d != (size_t)-1)
    tu_report("%s: %zu bytes, src%%64=%u dist %u: byte %zu wrong", v->name, n,
           (unsigned)((uintptr_t)src & 63), dist, d);
  for (const uint8_t *p = wlo; p < whi; p++) {
    if (p == dst) p += n;
    if (p >= whi) break;
    if (*p != CANARY) {
      tu_report("%s: %zu bytes, src%%64=%u dist %u: wrote outside the output at %td", v->name, n,
             (unsigned)((uintptr_t)src & 63), dist, p - dst);
      break;
    }
  }
}

/* Every length 0..700 bytes, every source offset mod 64 (the source ending at or just
 * before a PROT_NONE page), each of the distances above (so every destination offset mod
 * 64 comes up across the lengths), and the source exactly at both ends of its buffer. */
static void test_copy_lengths_offsets(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, CMAXB + 256), 0);
  assert_int_equal(tu_guard_alloc(&go, 4096 + CMAXB + 256), 0);
  tu_fill(&g_rng, gi.lo, (size_t)(gi.hi - gi.lo));
  unsigned long calls = 0;
  const size_t nd = tu_scaled(NDIST, 5) < NDIST ? tu_scaled(NDIST, 5) : NDIST;
  for (size_t v = 0; v < g_ncvar; v++) {
    for (size_t n = 0; n <= CMAXB; n++) {
      for (unsigned off = 0; off <= 65; off++) {
        const uint8_t *src = off == 64   ? gi.hi - n
                             : off == 65 ? gi.lo
                                         : gi.hi - n - ((((uintptr_t)(gi.hi - n)) - off) & 63);
        for (size_t j = 0; j < nd; j++) {
          /* All distances at scale 1; fewer per cell below it, rotating with n and off so
           * that each still meets every length and offset class. */
          const size_t k = (j + n + off) % NDIST;
          /* The lowest place in go at this distance; it ends before go.hi - 64. */
          uint8_t *dst = go.lo + 64 + (((uintptr_t)src + copy_dists[k] - (uintptr_t)(go.lo + 64)) & 4095);
          check_copy(&g_cvar[v], &go, dst, src, n, copy_dists[k]);
          calls++;
        }
      }
      /* Destination ending exactly at the guard page, and in place. */
      check_copy(&g_cvar[v], &go, go.hi - n, gi.lo, n, 9999);
      memcpy(go.lo, gi.lo, n);
      g_cvar[v].fn(go.lo, go.lo, n);
      if (first_diff(go.lo, gi.lo, n) != (size_t)-1) tu_report("%s in place: %zu bytes changed", g_cvar[v].name, n);
      calls += 2;
    }
  }
  printf("[ copy     ] lengths 0..%d bytes x offsets x %zu of %zu distances: %lu calls\n", CMAXB, nd,
         NDIST, calls);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("copy lengths x offsets");
}

/* Random lengths up to 1 MiB at random offsets and distances. */
static void test_copy_random_long(void **state) {
  (void)state;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, BIGB + 64), 0);
  assert_int_equal(tu_guard_alloc(&go, BIGB + 4096 + 64), 0);
  uint8_t *orig = malloc(BIGB);
  assert_non_null(orig);
  const size_t rounds = tu_scaled(12, 3);
  for (size_t r = 0; r < rounds; r++) {
    const size_t n = r == 0 ? BIGB : tu_range(&g_rng, 0, BIGB);
    const unsigned so = (unsigned)tu_range(&g_rng, 0, 63);
    const unsigned dist = (unsigned)tu_range(&g_rng, 0, 4095);
    uint8_t *src = gi.hi - n - ((((uintptr_t)(gi.hi - n)) - so) & 63);
    uint8_t *dst = go.lo + (((uintptr_t)src + dist - (uintptr_t)go.lo) & 4095);
    tu_fill(&g_rng, orig, n);
    memcpy(src, orig, n);
    for (size_t v = 0; v < g_ncvar; v++) {
      memset(dst, 0, n);
      g_cvar[v].fn(dst, src, n);
      size_t d = first_diff(dst, orig, n);
      if (d != (size_t)-1) tu_report("%s: %zu bytes dist %u: byte %zu wrong", g_cvar[v].name, n, dist, d);
      if (first_diff(src, orig, n) != (size_t)-1)
        tu_report("%s: %zu bytes: the source changed", g_cvar[v].name, n);
    }
  }
  free(orig);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  tu_end_checks("copy random long");
}

/* The public paths that copy (embd_f32_from_le / _to_le on little-endian hosts,
 * embd_u32_from_be / _to_be on big-endian ones), at lengths around the size below which
 * they keep memcpy and at every distance 0..127 plus a spread, against byte assembly. */
static void test_host_order_distances(void **state) {
  (void)state;
  static const size_t lens[] = {47, 48, 49, 64, 511, 512, 1536, 4096}; /* 48 words: 192 B */
  static _Alignas(64) uint8_t wire[4 * 4096 + 128];
  static _Alignas(64) uint8_t outb[4 * 4096 + 8192];
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    const size_t n = lens[li];
    for (unsigned dist = 0; dist < 4096; dist += dist < 128 ? 1 : 61) {
      /* The float / uint32 side must be 4-byte aligned: the wire side takes every
       * 4-byte-aligned offset mod 64 across the distances, the host side moves with it. */
      uint8_t *w = wire + 4 * ((dist * 13) & 15);
      tu_fill(&g_rng, w, 4 * n);
      uint8_t *o = outb + 64 + (((uintptr_t)w + dist - (uintptr_t)(outb + 64)) & 4095);
      const uint8_t *wa = w;
      if ((uintptr_t)o & 3) continue; /* only 4-byte-aligned host arrays are valid */
      float *fo = (float *)(void *)o;
      uint32_t *uo = (uint32_t *)(void *)o;
      embd_f32_from_le(fo, wa, n);
      for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &fo[i], 4);
        if (bits != le32(wa + 4 * i)) {
          tu_report("f32_from_le n=%zu dist %u: word %zu", n, dist, i);
          break;
        }
      }
      embd_u32_from_be(uo, wa, n);
      for (size_t i = 0; i < n; i++)
        if (uo[i] != be32(wa + 4 * i)) {
          tu_report("u32_from_be n=%zu dist %u: word %zu", n, dist, i);
          break;
        }
      /* To the wire, the other way round: host words at w, wire bytes at o. */
      const float *fw = (const float *)(const void *)w;
      const uint32_t *uw = (const uint32_t *)(const void *)w;
      embd_f32_to_le(o, fw, n);
      for (size_t i = 0; i < n; i++)
        if (le32(o + 4 * i) != uw[i]) {
          tu_report("f32_to_le n=%zu dist %u: word %zu", n, dist, i);
          break;
        }
      embd_u32_to_be(o, uw, n);
      for (size_t i = 0; i < n; i++)
        if (be32(o + 4 * i) != uw[i]) {
          tu_report("u32_to_be n=%zu dist %u: word %zu", n, dist, i);
          break;
        }
    }
  }
  tu_end_checks("host order distances");
}

/* ---- the registry ------------------------------------------------------------------ */

static void test_registry(void **state) {
  (void)state;
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_BSWAP32), "bswap32");
  const size_t n = embd_impl_count(EMBD_KERNEL_BSWAP32);
  assert_true(n >= 1);
  embd_impl_info info;
  assert_int_equal(embd_impl_get(EMBD_KERNEL_BSWAP32, 0, &info), EMBD_OK);
  assert_string_equal(info.name, "scalar");
  assert_int_equal(info.tier, EMBD_TIER_SCALAR);
  assert_true(info.runnable);
  int have_simde = 0, have_neon = 0;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(embd_impl_get(EMBD_KERNEL_BSWAP32, i, &info), EMBD_OK);
    assert_non_null(info.name);
    assert_int_equal(embd_bswap32_impl(i) != NULL, info.runnable != 0);
    if (strcmp(info.name, NON_SELECTABLE) == 0) have_simde = 1;
    if (strcmp(info.name, "neon") == 0) have_neon = 1;
    for (size_t j = 0; j < i; j++) {
      embd_impl_info o;
      embd_impl_get(EMBD_KERNEL_BSWAP32, j, &o);
      assert_string_not_equal(o.name, info.name);
    }
  }
  assert_null(embd_bswap32_impl(n));
  assert_null(embd_bswap32_impl((size_t)-1));
  assert_int_equal(embd_impl_get(EMBD_KERNEL_BSWAP32, n, &info), EMBD_ERR_INVALID_ARGUMENT);
  printf("[ bswap32  ] %s listed: %s; neon listed: %s\n", NON_SELECTABLE, have_simde ? "yes" : "no",
         have_neon ? "yes" : "no");
#if defined(__aarch64__)
  assert_true(have_neon);
#endif
}

/* The active implementation is the best selectable one allowed by the spec; neon-simde
 * is never active, under the environment's spec and under every tier this CPU runs. */
static void check_active(const char *spec) {
  int cap;
  uint64_t masked;
  if (tu_parse_spec(spec, &cap, &masked) != 0) fail_msg("spec %s does not parse", spec);
  const char *a = embd_impl_active(EMBD_KERNEL_BSWAP32);
  assert_non_null(a);
  if (strcmp(a, NON_SELECTABLE) == 0) fail_msg("spec %s: %s is active", spec ? spec : "", a);
  const size_t n = embd_impl_count(EMBD_KERNEL_BSWAP32);
  size_t ai = n;
  for (size_t i = 0; i < n; i++) {
    embd_impl_info in;
    embd_impl_get(EMBD_KERNEL_BSWAP32, i, &in);
    if (strcmp(in.name, a) == 0) ai = i;
  }
  if (ai == n) fail_msg("active %s not in the registry", a);
  embd_impl_info ia;
  embd_impl_get(EMBD_KERNEL_BSWAP32, ai, &ia);
  if (!ia.runnable) fail_msg("spec %s: active %s not runnable", spec ? spec : "", a);
  for (size_t j = ai + 1; j < n; j++) {
    embd_impl_info b;
    embd_impl_get(EMBD_KERNEL_BSWAP32, j, &b);
    if (b.runnable && strcmp(b.name, NON_SELECTABLE) != 0)
      fail_msg("spec %s: active %s but the preferred %s is runnable", spec ? spec : "", a, b.name);
  }
  /* The public path works after the (re-)dispatch. */
  uint8_t in[400], out[400], want[400];
  tu_fill(&g_rng, in, sizeof in);
  naive_bswap(want, in, 100);
  embd_bswap32(out, in, 100);
  if (memcmp(out, want, 400) != 0) fail_msg("spec %s: embd_bswap32 wrong (active %s)", spec ? spec : "", a);
}

static void test_dispatch(void **state) {
  (void)state;
  check_active(getenv("EMBD_ISA"));
  static const char *const tiers[] = {"scalar", "sse42", "avx2", "avx512", "neon"};
  for (size_t t = 0; t < 5; t++) {
    if (embd_isa_check(tiers[t]) != EMBD_OK) continue;
    assert_int_equal(embd_isa_set(tiers[t]), EMBD_OK);
    printf("[ bswap32  ] tier %-7s -> %s\n", tiers[t], embd_impl_active(EMBD_KERNEL_BSWAP32));
    check_active(tiers[t]);
  }
  assert_int_equal(embd_isa_set(getenv("EMBD_ISA")), EMBD_OK);
  check_active(getenv("EMBD_ISA"));
}

int main(void) {
  int s = tu_isa_preflight("test_bswap");
  if (s) return s;
  g_rng.s = tu_seed() ^ UINT64_C(0x62737761); /* "bswa" */
  collect_variants();
  collect_copy_variants();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),        cmocka_unit_test(test_lengths_offsets),
      cmocka_unit_test(test_in_place),        cmocka_unit_test(test_random_long),
      cmocka_unit_test(test_host_order),      cmocka_unit_test(test_dispatch),
      cmocka_unit_test(test_copy_lengths_offsets), cmocka_unit_test(test_copy_random_long),
      cmocka_unit_test(test_host_order_distances), cmocka_unit_test(test_streaming_stores),
  };
  return cmocka_run_group_tests_name("bswap32", tests, NULL, NULL);
}
