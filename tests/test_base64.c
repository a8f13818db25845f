/* base64: every decode and encode implementation the host can run (the registry,
 * neon-simde and avx512-simde included on x86) and the public dispatching functions,
 * against a naive reference encoder written here and against each other:
 *   - RFC 4648 §10 test vectors, both directions, both alphabets, padded and NOPAD;
 *   - every length 0..300 at every source offset 0..63: encode then decode round trip,
 *     each implementation's output byte-identical to the reference (= scalar's);
 *   - guard pages: input ending exactly at a PROT_NONE page, output of exactly the
 *     needed size ending at one (any over-read or over-store faults), 0..300 and long;
 *   - an invalid character at every position of inputs of many lengths: the same error
 *     code and err.offset from every implementation, equal to the expected position;
 *   - padding, length and trailing-bits rules with their offsets; the capacity rule
 *     (canary), *written == 0 on error; the size helpers (overflow included);
 *   - the float32 helpers (bit patterns, the F32 length rule, a fixed little-endian
 *     vector, which is what checks big-endian hosts);
 *   - OpenSSL's EVP_DecodeBlock / EVP_EncodeBlock where both define the result (only
 *     when CMake found OpenSSL: EMBD_TEST_HAVE_OPENSSL; the cross builds skip it);
 *   - the public functions under every tier the CPU runs (embd_isa_set).
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

#if defined(EMBD_TEST_HAVE_OPENSSL)
#include <openssl/evp.h>
#endif

/* The rows compiled through simde for the tests, never picked by the dispatcher. */
static int non_selectable(const char *name) {
  return !strcmp(name, "neon-simde") || !strcmp(name, "avx512-simde");
}

typedef struct variant {
  char name[64];
  embd_base64_decode_fn dec;
  embd_base64_encode_fn enc;
} variant;

static variant g_var[16];
static size_t g_nvar;
static tu_rng g_rng;

static void collect_variants(void) {
  const size_t n = embd_impl_count(EMBD_KERNEL_BASE64_DECODE);
  g_nvar = 0;
  printf("[ base64   ] implementations compiled in: %zu\n", n);
  for (size_t i = 0; i < n && g_nvar < 15; i++) {
    embd_impl_info info;
    embd_impl_get(EMBD_KERNEL_BASE64_DECODE, i, &info);
    const int scope = tu_impl_in_scope(i, info.tier);
    embd_base64_decode_fn d = scope ? embd_base64_decode_impl(i) : NULL;
    embd_base64_encode_fn e = scope ? embd_base64_encode_impl(i) : NULL;
    printf("[ base64   ]   %zu %-16s tier %-7s %s\n", i, info.name, embd_tier_name(info.tier),
           d && e ? "RUN" : !scope ? TU_OUT_OF_SCOPE : "skipped: not runnable on this CPU");
    if (!d || !e) continue;
    snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "%s", info.name);
    g_var[g_nvar].dec = d;
    g_var[g_nvar++].enc = e;
  }
  snprintf(g_var[g_nvar].name, sizeof g_var[g_nvar].name, "public (active %s/%s)",
           embd_impl_active(EMBD_KERNEL_BASE64_DECODE),
           embd_impl_active(EMBD_KERNEL_BASE64_ENCODE));
  g_var[g_nvar].dec = embd_base64_decode;
  g_var[g_nvar++].enc = embd_base64_encode;
  printf("[ base64   ] public functions dispatch to \"%s\" / \"%s\"\n",
         embd_impl_active(EMBD_KERNEL_BASE64_DECODE), embd_impl_active(EMBD_KERNEL_BASE64_ENCODE));
}

/* The mismatch counter is testutil.h's; this file calls it by its old names. */
#define report tu_report
#define end_checks tu_end_checks

static const unsigned k_flags[4] = {0, EMBD_BASE64_URL, EMBD_BASE64_NOPAD,
                                    EMBD_BASE64_URL | EMBD_BASE64_NOPAD};

static const char *flag_name(unsigned f) {
  static const char *const n[4] = {"std", "url", "std-nopad", "url-nopad"};
  return n[f & 3];
}

/* ---- the naive reference ------------------------------------------------------------ */

static const char k_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char k_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* RFC 4648 §4/§5 by the letter: 24-bit groups, 6 bits at a time. */
static size_t naive_encode(char *out, const uint8_t *in, size_t n, unsigned flags) {
  const char *a = (flags & EMBD_BASE64_URL) ? k_url : k_std;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    const size_t k = n - i < 3 ? n - i : 3;
    uint32_t w = (uint32_t)in[i] << 16;
    if (k > 1) w |= (uint32_t)in[i + 1] << 8;
    if (k > 2) w |= in[i + 2];
    for (size_t c = 0; c < k + 1; c++) out[o++] = a[(w >> (18 - 6 * c)) & 63];
    if (!(flags & EMBD_BASE64_NOPAD))
      for (size_t c = k + 1; c < 4; c++) out[o++] = '=';
  }
  return o;
}

static size_t enc_size(size_t n, unsigned flags) {
  if (flags & EMBD_BASE64_NOPAD) return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
  return (n + 2) / 3 * 4;
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return i;
  return (size_t)-1;
}

#define SENT ((size_t)0xDEADBEEF)
#define CANARY 0xA5

/* ---- registry ------------------------------------------------------------------------ */

static void test_registry(void **state) {
  (void)state;
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_BASE64_DECODE), "base64-decode");
  assert_string_equal(embd_kernel_name(EMBD_KERNEL_BASE64_ENCODE), "base64-encode");
  const size_t n = embd_impl_count(EMBD_KERNEL_BASE64_DECODE);
  assert_int_equal(n, embd_impl_count(EMBD_KERNEL_BASE64_ENCODE));
  assert_true(n >= 1);
  int have_neon = 0;
  for (size_t i = 0; i < n; i++) {
    embd_impl_info d, e;
    assert_int_equal(embd_impl_get(EMBD_KERNEL_BASE64_DECODE, i, &d), EMBD_OK);
    assert_int_equal(embd_impl_get(EMBD_KERNEL_BASE64_ENCODE, i, &e), EMBD_OK);
    assert_string_equal(d.name, e.name);
    if (i == 0) assert_string_equal(d.name, "scalar");
    assert_int_equal(embd_base64_decode_impl(i) != NULL, d.runnable != 0);
    assert_int_equal(embd_base64_encode_impl(i) != NULL, e.runnable != 0);
    if (strcmp(d.name, "neon") == 0) have_neon = 1;
  }
  assert_null(embd_base64_decode_impl(n));
  assert_null(embd_base64_encode_impl((size_t)-1));
#if defined(__aarch64__)
  assert_true(have_neon);
#else
  (void)have_neon;
#endif
  for (int k = 0; k < 2; k++) {
    const char *a = embd_impl_active(k ? EMBD_KERNEL_BASE64_ENCODE : EMBD_KERNEL_BASE64_DECODE);
    assert_non_null(a);
    assert_false(non_selectable(a));
  }
}

/* ---- RFC 4648 §10 ---------------------------------------------------------------------- */

static const char *const k_rfc[7][2] = {
    {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
};

static void check_vectors(const variant *v) {
  char out[32];
  uint8_t bin[32];
  for (size_t i = 0; i < 7; i++) {
    const char *raw = k_rfc[i][0], *b64 = k_rfc[i][1];
    const size_t rn = strlen(raw), bn = strlen(b64);
    size_t nopad = bn;
    while (nopad && b64[nopad - 1] == '=') nopad--;
    for (int f = 0; f < 4; f++) {
      const unsigned fl = k_flags[f];
      const size_t want = (fl & EMBD_BASE64_NOPAD) ? nopad : bn;
      size_t w = SENT;
      embd_result r = v->enc(raw, rn, fl, out, sizeof out, &w);
      if (r != EMBD_OK || w != want || memcmp(out, b64, want) != 0)
        report("%s: encode \"%s\" %s: result %d, \"%.*s\"", v->name, raw, flag_name(fl), r,
               (int)(r == EMBD_OK ? w : 0), out);
      /* Decoding: the padded form under every flag set (NOPAD accepts padding too),
       * the unpadded one under NOPAD. */
      for (int p = 0; p < 2; p++) {
        const size_t len = p ? nopad : bn;
        if (p && !(fl & EMBD_BASE64_NOPAD)) continue;
        embd_error err;
        w = SENT;
        memset(bin, CANARY, sizeof bin);
        r = v->dec(b64, len, fl, bin, sizeof bin, &w, &err);
        if (r != EMBD_OK || w != rn || memcmp(bin, raw, rn) != 0 || bin[rn] != CANARY ||
            err.result != EMBD_OK)
          report("%s: decode \"%.*s\" %s: result %d (%s), %zu bytes", v->name, (int)len, b64,
                 flag_name(fl), r, err.message, w);
      }
    }
    /* Padded input of a non-multiple of 4 is a length error without NOPAD. */
    if (nopad != bn) {
      embd_error err;
      size_t w = SENT;
      embd_result r = v->dec(b64, nopad, 0, bin, sizeof bin, &w, &err);
      if (r != EMBD_ERR_BASE64_LENGTH || err.offset != nopad || w != 0)
        report("%s: \"%.*s\" padded: result %d offset %zu", v->name, (int)nopad, b64, r,
               err.offset);
    }
  }
}

static void test_rfc_vectors(void **state) {
  (void)state;
  for (size_t v = 0; v < g_nvar; v++) check_vectors(&g_var[v]);
  /* A vector using the characters that differ between the alphabets. */
  static const uint8_t raw[] = {0xfb, 0xff, 0xbf, 0xf8};
  for (size_t v = 0; v < g_nvar; v++) {
    char out[16];
    size_t w;
    assert_int_equal(g_var[v].enc(raw, 4, 0, out, sizeof out, &w), EMBD_OK);
    if (w != 8 || memcmp(out, "+/+/+A==", 8) != 0) report("%s: std +/", g_var[v].name);
    assert_int_equal(g_var[v].enc(raw, 4, EMBD_BASE64_URL, out, sizeof out, &w), EMBD_OK);
    if (w != 8 || memcmp(out, "-_-_-A==", 8) != 0) report("%s: url -_", g_var[v].name);
    uint8_t b[8];
    if (g_var[v].dec("-_-_-A==", 8, EMBD_BASE64_URL, b, sizeof b, &w, NULL) != EMBD_OK || w != 4 ||
        memcmp(b, raw, 4) != 0)
      report("%s: decode url -_", g_var[v].name);
    if (g_var[v].dec("+/+/+A", 6, EMBD_BASE64_NOPAD, b, sizeof b, &w, NULL) != EMBD_OK || w != 4 ||
        memcmp(b, raw, 4) != 0)
      report("%s: decode std +/ nopad", g_var[v].name);
  }
  end_checks("RFC 4648 vectors");
}

/* ---- round trips at every length and offset ------------------------------------------- */

#define MAXN 300

/* Longer inputs at every offset too: the avx512 encoder aligns its loads from 336 bytes
 * (up to three single blocks first, then 192 bytes a step, then single blocks and the
 * blocks ending at n), so these cover each alignment with each tail: 1..63 bytes after
 * the last step, more and less than a block. */
static const size_t k_long_n[] = {333, 336, 339, 381, 384, 387, 429, 432, 528, 531,
                                  573, 576, 765, 1002, 1536, 6144, 6147, 20481};
#define MAXL 20481

/* Encodes in[0..n) with one implementation into o (capacity rn, a canary after it) and
 * checks the result, the length, the text against the reference and the canary. */
static void check_encode(const variant *va, const uint8_t *in, size_t n, unsigned fl, char *o,
                         const char *ref, size_t rn, unsigned in_off, unsigned out_off) {
  memset(o, CANARY, rn + 64);
  size_t w = SENT;
  const embd_result r = va->enc(in, n, fl, o, rn, &w);
  if (r != EMBD_OK || w != rn || memcmp(o, ref, rn) != 0)
    report("%s: encode n=%zu in+%u out+%u %s: result %d, %zu chars, first diff %zu", va->name,
           n, in_off, out_off, flag_name(fl), r, w, first_diff((uint8_t *)o, (uint8_t *)ref, rn));
  else if ((uint8_t)o[rn] != CANARY)
    report("%s: encode n=%zu in+%u out+%u: wrote past the end", va->name, n, in_off, out_off);
}

static void test_roundtrip_offsets(void **state) {
  (void)state;
  static uint8_t inbuf[MAXL + 128], bin[MAXL + 128];
  static char ref[MAXL / 3 * 4 + 8], txtbuf[MAXL / 3 * 4 + 136], out[MAXL / 3 * 4 + 136];
  unsigned long calls = 0;
  const size_t nlong = sizeof k_long_n / sizeof k_long_n[0];
  for (size_t ni = 0; ni <= MAXN + nlong; ni++) {
    const size_t n = ni <= MAXN ? ni : k_long_n[ni - MAXN - 1];
    for (unsigned off = 0; off < 64; off++) {
      uint8_t *in = inbuf + off;
      tu_fill(&g_rng, in, n);
      const unsigned toff = (off * 37 + (unsigned)n * 7 + 11) & 63;
      for (int f = 0; f < 4; f++) {
        const unsigned fl = k_flags[f];
        const size_t rn = naive_encode(ref, in, n, fl);
        char *txt = txtbuf + toff;
        memcpy(txt, ref, rn);
        for (size_t v = 0; v < g_nvar; v++) {
          const variant *va = &g_var[v];
          /* encode, output at the text offset */
          check_encode(va, in, n, fl, out + toff, ref, rn, off, toff);
          /* decode the reference text back, output at the input's offset */
          uint8_t *b = bin + off;
          memset(b, CANARY, n + 64);
          embd_error err;
          size_t w = SENT;
          const embd_result r = va->dec(txt, rn, fl, b, n, &w, &err);
          if (r != EMBD_OK || w != n || memcmp(b, in, n) != 0)
            report("%s: decode n=%zu off=%u %s: result %d (%s), %zu bytes, first diff %zu",
                   va->name, n, off, flag_name(fl), r, err.message, w, first_diff(b, in, n));
          else if (b[n] != CANARY)
            report("%s: decode n=%zu %s: wrote past the end", va->name, n, flag_name(fl));
          calls += 2;
        }
      }
    }
  }
  printf("[ base64   ] round trips 0..%d bytes and %zu longer x 64 offsets x 4 flag sets: %lu calls\n",
         MAXN, nlong, calls);
  end_checks("round trips x offsets");
}


/* Every input offset with output offsets 0..63 (every fourth, and six others): from
 * 4 KiB to 20 KiB the avx512 encoder moves a misaligned output to a 64-byte boundary
 * (one block, then blocks until its aligned loads start inside the input) and picks
 * one of five step shapes by where the input then sits; the pairs reach each shape with
 * each peel. 20,478 bytes is the last length it takes, 4,143 ends in a partial block. */
static void test_encode_offset_pairs(void **state) {
  (void)state;
  enum { MAXP = 20478 };
  static const size_t lens[] = {4143, MAXP};
  static const unsigned outs[] = {0,  1,  2,  3,  4,  8,  12, 16, 17, 20, 24,
                                  28, 32, 33, 36, 40, 44, 48, 49, 52, 56, 60};
  static uint8_t inbuf[MAXP + 64];
  static char ref[MAXP / 3 * 4 + 4], outbuf[MAXP / 3 * 4 + 4 + 128];
  unsigned long calls = 0;
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    const size_t n = lens[li];
    for (unsigned off = 0; off < 64; off++) {
      uint8_t *in = inbuf + off;
      tu_fill(&g_rng, in, n);
      const unsigned fl = k_flags[off & 3];
      const size_t rn = naive_encode(ref, in, n, fl);
      for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; oi++)
        for (size_t v = 0; v < g_nvar; v++, calls++)
          check_encode(&g_var[v], in, n, fl, outbuf + outs[oi], ref, rn, off, outs[oi]);
    }
  }
  printf("[ base64   ] encode at 64 input x %zu output offsets, 2 lengths: %lu calls\n",
         sizeof outs / sizeof outs[0], calls);
  end_checks("encode offset pairs");
}
/* ---- guard pages ------------------------------------------------------------------------ */

static void guard_case(const variant *va, const tu_guard *gi, const tu_guard *go, size_t n,
                       unsigned fl, uint8_t *raw, char *ref, int at_start) {
  const size_t rn = naive_encode(ref, raw, n, fl);
  /* encode: input ends at (or starts right after) a guard, output ends at one */
  uint8_t *src = at_start ? gi->lo : gi->hi - n;
  memcpy(src, raw, n);
  char *dst = (char *)go->hi - rn;
  size_t w = SENT;
  embd_result r = va->enc(src, n, fl, dst, rn, &w);
  if (r != EMBD_OK || w != rn || memcmp(dst, ref, rn) != 0)
    report("%s: guarded encode n=%zu %s: result %d", va->name, n, flag_name(fl), r);
  /* decode: the text ends at a guard, the output of exactly n bytes ends at one */
  char *txt = at_start ? (char *)gi->lo : (char *)gi->hi - rn;
  memcpy(txt, ref, rn);
  uint8_t *bd = go->hi - n;
  embd_error err;
  w = SENT;
  r = va->dec(txt, rn, fl, bd, n, &w, &err);
  if (r != EMBD_OK || w != n || memcmp(bd, raw, n) != 0)
    report("%s: guarded decode n=%zu %s: result %d (%s)", va->name, n, flag_name(fl), r,
           err.message);
}

static void test_guard_pages(void **state) {
  (void)state;
  /* 402 and 594 bytes: 536 and 792 characters, where the avx512 decoder's pipelined
   * groups start and where one of them is followed by the plain last group alone (and
   * 3 bytes on) */
  static const size_t longs[] = {402,  405,  594,  597,   1023,  4095,
                                 6144, 8192, 8193, 65537, 65539, 100001};
  const size_t maxn = 100001;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, maxn / 3 * 4 + 8), 0);
  assert_int_equal(tu_guard_alloc(&go, maxn / 3 * 4 + 8), 0);
  uint8_t *raw = malloc(maxn);
  char *ref = malloc(maxn / 3 * 4 + 8);
  assert_non_null(raw);
  assert_non_null(ref);
  unsigned long cases = 0;
  for (size_t n = 0; n <= MAXN + sizeof longs / sizeof longs[0]; n++) {
    const size_t len = n <= MAXN ? n : longs[n - MAXN - 1];
    tu_fill(&g_rng, raw, len);
    for (int f = 0; f < 4; f++)
      for (size_t v = 0; v < g_nvar; v++) {
        guard_case(&g_var[v], &gi, &go, len, k_flags[f], raw, ref, 0);
        if (n % 7 == 0) guard_case(&g_var[v], &gi, &go, len, k_flags[f], raw, ref, 1);
        cases++;
      }
  }
  printf("[ base64   ] guard pages: %lu cases\n", cases);
  free(raw);
  free(ref);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  end_checks("guard pages");
}

/* ---- an invalid character at every position -------------------------------------------- */

static unsigned long g_bad_cases;

/* txt[0 .. len) is valid under fl; puts c at each position in `pos` (all when NULL) and
 * expects every implementation to report it. txt ends at a guard page. */
static void bad_char_sweep(char *txt, size_t len, unsigned fl, unsigned char c, uint8_t *dst,
                           size_t cap) {
  for (size_t p = 0; p < len; p++) {
    /* '=' last in a multiple-of-4 text is legal padding: not an error to look for here. */
    if (c == '=' && p == len - 1 && len % 4 == 0) continue;
    /* the text's own padding: a character there reports the '=' before it */
    if (txt[p] == '=') continue;
    /* '=' before a final '=' makes "xx==", legal too */
    if (c == '=' && p == len - 2 && txt[len - 1] == '=') continue;
    if (len > 1000) {
      /* long texts: the first and last 128 positions, those at 16-character boundaries
       * (the vector block edges), and every 61st */
      const size_t m = p % 16;
      if (!(p < 128 || p >= len - 128 || m == 0 || m == 15 || p % 61 == 0)) continue;
    }
    const char saved = txt[p];
    txt[p] = (char)c;
    const embd_result want = c == '=' ? EMBD_ERR_BASE64_PADDING : EMBD_ERR_BASE64_CHAR;
    for (size_t v = 0; v < g_nvar; v++) {
      embd_error err;
      size_t w = SENT;
      embd_result r = g_var[v].dec(txt, len, fl, dst, cap, &w, &err);
      if (r != want || err.result != want || err.offset != p || w != 0)
        report("%s: 0x%02x at %zu of %zu %s: result %d offset %zu written %zu (%s)",
               g_var[v].name, c, p, len, flag_name(fl), r, err.offset, w, err.message);
      g_bad_cases++;
    }
    txt[p] = saved;
  }
}

static void test_invalid_chars(void **state) {
  (void)state;
  static const unsigned char common[] = {'*', ' ', '\n', 0x80, 0x00, '=', '\r', 0xff, '@'};
  static const size_t longs[] = {536, 792, 1024, 2055, 8192};
  const size_t maxlen = 8192;
  tu_guard gi = {0}, go = {0};
  assert_int_equal(tu_guard_alloc(&gi, maxlen + 8), 0);
  assert_int_equal(tu_guard_alloc(&go, maxlen + 8), 0);
  uint8_t *raw = malloc(maxlen);
  assert_non_null(raw);
  g_bad_cases = 0;
  /* stride over 4..400: 1 at scale 1 (every length), coarser under an emulator */
  const size_t stride = tu_scale() >= 1 ? 1 : 3;
  for (size_t i = 0; i < (400 - 4) / stride + 1 + sizeof longs / sizeof longs[0]; i++) {
    const size_t len = i <= (400 - 4) / stride ? 4 + i * stride
                                                 : longs[i - (400 - 4) / stride - 1];
    for (int alpha = 0; alpha < 2; alpha++) {
      unsigned fl = alpha ? EMBD_BASE64_URL : 0;
      if (len % 4 == 1) continue;
      /* padded for multiples of 4 at every other length, NOPAD otherwise */
      if (len % 4 || (len / 4) % 2) fl |= EMBD_BASE64_NOPAD;
      /* a valid text of exactly len characters: len / 4 * 3 bytes (+ 1 or 2 unpadded),
       * or a padded final group for some multiples of 4 */
      size_t n = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);
      if (len % 4 == 0 && (len / 4) % 3 == 1) n -= 1 + (len / 8) % 2; /* "xxx=" / "xx==" */
      tu_fill(&g_rng, raw, n);
      char *txt = (char *)gi.hi - len;
      const size_t got =
          naive_encode(txt, raw, n, (fl & EMBD_BASE64_URL) | (len % 4 ? EMBD_BASE64_NOPAD : 0));
      assert_int_equal(got, len);
      uint8_t *dst = go.hi - embd_base64_decoded_max(len);
      for (size_t k = 0; k < sizeof common + 2; k++) {
        const unsigned char c = k < sizeof common ? common[k]
                                : alpha             ? (k == sizeof common ? '+' : '/')
                                                    : (k == sizeof common ? '-' : '_');
        bad_char_sweep(txt, len, fl, c, dst, embd_base64_decoded_max(len));
      }
    }
  }
  printf("[ base64   ] invalid characters: %lu cases\n", g_bad_cases);
  free(raw);
  tu_guard_free(&gi);
  tu_guard_free(&go);
  end_checks("invalid characters");
}

/* ---- padding, length and trailing-bits rules --------------------------------------------- */

typedef struct rule_case {
  const char *txt;
  unsigned flags;
  embd_result want;
  size_t offset;
  const char *bytes; /* the decoded bytes when want == EMBD_OK */
} rule_case;

#define P EMBD_BASE64_NOPAD
#define U EMBD_BASE64_URL
static const rule_case k_rules[] = {
    {"Zg==", 0, EMBD_OK, 0, "f"},
    {"Zg==", P, EMBD_OK, 0, "f"},
    {"Zg", P, EMBD_OK, 0, "f"},
    {"Zm8", P, EMBD_OK, 0, "fo"},
    {"Zm8=", U | P, EMBD_OK, 0, "fo"},
    /* length rule: offset = len */
    {"Zg", 0, EMBD_ERR_BASE64_LENGTH, 2, NULL},
    {"Zm8", 0, EMBD_ERR_BASE64_LENGTH, 3, NULL},
    {"Z", 0, EMBD_ERR_BASE64_LENGTH, 1, NULL},
    {"Z", P, EMBD_ERR_BASE64_LENGTH, 1, NULL},
    {"Zm9vZ", P, EMBD_ERR_BASE64_LENGTH, 5, NULL},
    {"Zm9vZ", 0, EMBD_ERR_BASE64_LENGTH, 5, NULL},
    {"Zg===", 0, EMBD_ERR_BASE64_LENGTH, 5, NULL},
    {"=", P, EMBD_ERR_BASE64_LENGTH, 1, NULL},
    {"***", 0, EMBD_ERR_BASE64_LENGTH, 3, NULL}, /* the length first */
    {"Zg=", 0, EMBD_ERR_BASE64_LENGTH, 3, NULL},
    /* misplaced, partial, excessive padding */
    {"Zg=", P, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"Zm9vZg=", P, EMBD_ERR_BASE64_PADDING, 6, NULL},
    {"Zm=", P, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"Z===", 0, EMBD_ERR_BASE64_PADDING, 1, NULL},
    {"Z===", P, EMBD_ERR_BASE64_PADDING, 1, NULL},
    {"====", 0, EMBD_ERR_BASE64_PADDING, 0, NULL},
    {"Zm9v====", 0, EMBD_ERR_BASE64_PADDING, 4, NULL},
    {"Zg=a", 0, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"Zg=*", 0, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"*g=a", 0, EMBD_ERR_BASE64_CHAR, 0, NULL},
    {"=Zm9", 0, EMBD_ERR_BASE64_PADDING, 0, NULL},
    {"Zg==Zm9v", 0, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"Zm9=Zm9v", 0, EMBD_ERR_BASE64_PADDING, 3, NULL},
    {"Zm9vZg==Zm9v", 0, EMBD_ERR_BASE64_PADDING, 6, NULL},
    {"Zm9vZg==Zm9v", P, EMBD_ERR_BASE64_PADDING, 6, NULL},
    {"Zg==Zg==", 0, EMBD_ERR_BASE64_PADDING, 2, NULL},
    {"Zg==Zg", P, EMBD_ERR_BASE64_PADDING, 2, NULL},
    /* non-zero trailing bits */
    {"Zh==", 0, EMBD_ERR_BASE64_TRAILING_BITS, 1, NULL},
    {"Zm9=", 0, EMBD_ERR_BASE64_TRAILING_BITS, 2, NULL},
    {"Zh", P, EMBD_ERR_BASE64_TRAILING_BITS, 1, NULL},
    {"Zm9", P, EMBD_ERR_BASE64_TRAILING_BITS, 2, NULL},
    {"Zm9vZh==", 0, EMBD_ERR_BASE64_TRAILING_BITS, 5, NULL},
    {"Zm9vZm9=", U, EMBD_ERR_BASE64_TRAILING_BITS, 6, NULL},
    {"Zm9vZm9", U | P, EMBD_ERR_BASE64_TRAILING_BITS, 6, NULL},
    {"Zm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZ/==", 0,
     EMBD_ERR_BASE64_TRAILING_BITS, 81, NULL},
    /* a character error in the final group beats its trailing bits */
    {"Zm9vZ*==", 0, EMBD_ERR_BASE64_CHAR, 5, NULL},
    /* alphabets */
    {"ab+/", U, EMBD_ERR_BASE64_CHAR, 2, NULL},
    {"ab-_", 0, EMBD_ERR_BASE64_CHAR, 2, NULL},
    {"ab-_", U, EMBD_OK, 0, "i\xbf\xbf"},
    {"ab+/", 0, EMBD_OK, 0, "i\xbf\xbf"},
    {"", 0, EMBD_OK, 0, ""},
    {"", P, EMBD_OK, 0, ""},
};
#undef P
#undef U

static void test_rules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_rules / sizeof k_rules[0]; i++) {
    const rule_case *c = &k_rules[i];
    const size_t len = strlen(c->txt);
    for (size_t v = 0; v < g_nvar; v++) {
      uint8_t out[128];
      embd_error err;
      memset(&err, 0x55, sizeof err);
      size_t w = SENT;
      embd_result r = g_var[v].dec(c->txt, len, c->flags, out, sizeof out, &w, &err);
      if (r != c->want || err.result != c->want) {
        report("%s: \"%s\" %s: result %d (%s), expected %d", g_var[v].name, c->txt,
               flag_name(c->flags), r, err.message, c->want);
      } else if (r == EMBD_OK) {
        const size_t bn = strlen(c->bytes);
        if (w != bn || memcmp(out, c->bytes, bn) != 0 || err.offset != 0 || err.message[0])
          report("%s: \"%s\": wrong bytes (%zu)", g_var[v].name, c->txt, w);
      } else if (err.offset != c->offset || w != 0 || !err.message[0]) {
        report("%s: \"%s\" %s: offset %zu written %zu, expected offset %zu", g_var[v].name,
               c->txt, flag_name(c->flags), err.offset, w, c->offset);
      }
      /* err may be NULL */
      w = SENT;
      r = g_var[v].dec(c->txt, len, c->flags, out, sizeof out, &w, NULL);
      if (r != c->want || (r != EMBD_OK && w != 0))
        report("%s: \"%s\" with err NULL: result %d", g_var[v].name, c->txt, r);
    }
  }
  /* Padding placed in a non-final group of longer texts, crossing vector blocks. */
  for (size_t len = 8; len <= 260; len += 4) {
    char txt[264];
    uint8_t raw[200], out[200];
    tu_fill(&g_rng, raw, len / 4 * 3);
    naive_encode(txt, raw, len / 4 * 3, 0);
    for (size_t g = 0; g + 4 < len; g += 4) {
      char save[4];
      memcpy(save, txt + g, 4);
      txt[g + 2] = txt[g + 3] = '=';
      txt[g + 1] = 'A'; /* keep its trailing bits zero: only the placement is wrong */
      for (size_t v = 0; v < g_nvar; v++) {
        embd_error err;
        size_t w = SENT;
        embd_result r = g_var[v].dec(txt, len, 0, out, sizeof out, &w, &err);
        if (r != EMBD_ERR_BASE64_PADDING || err.offset != g + 2 || w != 0)
          report("%s: \"xx==\" at group %zu of %zu: result %d offset %zu", g_var[v].name, g / 4,
                 len, r, err.offset);
      }
      memcpy(txt + g, save, 4);
    }
  }
  end_checks("padding/length/trailing-bit rules");
}

/* ---- capacity, arguments, *written ------------------------------------------------------- */

static void test_capacity(void **state) {
  (void)state;
  static uint8_t raw[1100], out[1200];
  static char txt[1600], eout[1600];
  static const size_t lens[] = {1, 2, 3, 4, 5, 16, 47, 48, 49, 64, 95, 96, 97, 300, 1024};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    const size_t n = lens[li];
    tu_fill(&g_rng, raw, n);
    for (int f = 0; f < 4; f++) {
      const unsigned fl = k_flags[f];
      const size_t tn = naive_encode(txt, raw, n, fl);
      for (size_t v = 0; v < g_nvar; v++) {
        const variant *va = &g_var[v];
        /* decode: cap = exact - 1 -> too small, nothing written anywhere, *written = the
         * bytes needed (common.h: one convention for "output too small") */
        memset(out, CANARY, sizeof out);
        embd_error err;
        size_t w = SENT;
        embd_result r = va->dec(txt, tn, fl, out, n - 1, &w, &err);
        if (r != EMBD_ERR_OUTPUT_TOO_SMALL || err.offset != 0 || w != n)
          report("%s: decode cap %zu-1 %s: result %d", va->name, n, flag_name(fl), r);
        for (size_t i = 0; i < sizeof out; i++)
          if (out[i] != CANARY) {
            report("%s: decode cap %zu-1: wrote byte %zu", va->name, n, i);
            break;
          }
        /* capacity is checked before the characters */
        char save = txt[0];
        txt[0] = '*';
        r = va->dec(txt, tn, fl, out, n - 1, &w, &err);
        if (r != EMBD_ERR_OUTPUT_TOO_SMALL) report("%s: capacity before characters: %d", va->name, r);
        txt[0] = save;
        /* cap = exact works, and so does a larger one */
        r = va->dec(txt, tn, fl, out, n, &w, &err);
        if (r != EMBD_OK || w != n || memcmp(out, raw, n) != 0 || out[n] != CANARY)
          report("%s: decode cap exact %zu %s: result %d", va->name, n, flag_name(fl), r);
        r = va->dec(txt, tn, fl, out, sizeof out, &w, &err);
        if (r != EMBD_OK || w != n) report("%s: decode big cap: %d", va->name, r);
        /* NULL output with a non-zero size is too small */
        r = va->dec(txt, tn, fl, NULL, 0, &w, &err);
        if (r != EMBD_ERR_OUTPUT_TOO_SMALL || w != n) report("%s: decode NULL dst: %d", va->name, r);
        /* encode: cap = exact - 1 */
        memset(eout, CANARY, sizeof eout);
        w = SENT;
        r = va->enc(raw, n, fl, eout, tn - 1, &w);
        if (r != EMBD_ERR_OUTPUT_TOO_SMALL || w != tn)
          report("%s: encode cap %zu-1 %s: result %d", va->name, tn, flag_name(fl), r);
        for (size_t i = 0; i < sizeof eout; i++)
          if ((uint8_t)eout[i] != CANARY) {
            report("%s: encode cap %zu-1: wrote byte %zu", va->name, tn, i);
            break;
          }
        r = va->enc(raw, n, fl, eout, tn, &w);
        if (r != EMBD_OK || w != tn || memcmp(eout, txt, tn) != 0 || (uint8_t)eout[tn] != CANARY)
          report("%s: encode cap exact %s: %d", va->name, flag_name(fl), r);
        r = va->enc(raw, n, fl, NULL, 0, &w);
        if (r != EMBD_ERR_OUTPUT_TOO_SMALL || w != tn) report("%s: encode NULL dst: %d", va->name, r);
      }
    }
  }
  /* arguments */
  for (size_t v = 0; v < g_nvar; v++) {
    const variant *va = &g_var[v];
    embd_error err;
    size_t w = SENT;
    uint8_t b[8];
    char c[8];
    if (va->dec(NULL, 4, 0, b, 8, &w, &err) != EMBD_ERR_INVALID_ARGUMENT || w != 0 ||
        err.result != EMBD_ERR_INVALID_ARGUMENT)
      report("%s: NULL input", va->name);
    w = SENT;
    if (va->dec("Zg==", 4, 0x4, b, 8, &w, &err) != EMBD_ERR_INVALID_ARGUMENT || w != 0)
      report("%s: unknown decode flags", va->name);
    w = SENT;
    if (va->dec(NULL, 0, 0, NULL, 0, &w, &err) != EMBD_OK || w != 0 || err.result != EMBD_OK)
      report("%s: empty NULL decode", va->name);
    w = SENT;
    if (va->dec("", 0, 0, NULL, 0, NULL, NULL) != EMBD_OK) report("%s: written NULL", va->name);
    w = SENT;
    if (va->enc(NULL, 3, 0, c, 8, &w) != EMBD_ERR_INVALID_ARGUMENT || w != 0)
      report("%s: NULL encode input", va->name);
    w = SENT;
    if (va->enc("abc", 3, 0x8, c, 8, &w) != EMBD_ERR_INVALID_ARGUMENT || w != 0)
      report("%s: unknown encode flags", va->name);
    w = SENT;
    if (va->enc(NULL, 0, 0, NULL, 0, &w) != EMBD_OK || w != 0) report("%s: empty encode", va->name);
    /* errors leave *written at 0 even after a success wrote it */
    w = SENT;
    if (va->dec("Zg=*", 4, 0, b, 8, &w, &err) == EMBD_OK || w != 0)
      report("%s: written after error", va->name);
  }
  end_checks("capacity and arguments");
}

static void test_sizes(void **state) {
  (void)state;
  assert_int_equal(embd_base64_decoded_max(0), 0);
  assert_int_equal(embd_base64_decoded_max(1), 3);
  assert_int_equal(embd_base64_decoded_max(2), 3);
  assert_int_equal(embd_base64_decoded_max(4), 3);
  assert_int_equal(embd_base64_decoded_max(5), 6);
  assert_int_equal(embd_base64_decoded_max(8192), 6144);
  assert_true(embd_base64_decoded_max(SIZE_MAX) == SIZE_MAX / 4 * 3 + 3);
  assert_true(embd_base64_decoded_max(SIZE_MAX) >= SIZE_MAX / 4 * 3);
  for (size_t n = 0; n < 200; n++)
    for (int f = 0; f < 4; f++) {
      size_t s = SENT;
      assert_int_equal(embd_base64_encoded_size(n, k_flags[f], &s), EMBD_OK);
      assert_int_equal(s, enc_size(n, k_flags[f]));
      /* the decode bound covers the encoded text of n bytes */
      assert_true(embd_base64_decoded_max(s) >= n);
    }
  size_t s = SENT;
  assert_int_equal(embd_base64_encoded_size(6144, 0, &s), EMBD_OK);
  assert_int_equal(s, 8192);
  assert_int_equal(embd_base64_encoded_size(0, 0x4, &s), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_base64_encoded_size(3, 0, NULL), EMBD_ERR_INVALID_ARGUMENT);
  /* overflow */
  for (int f = 0; f < 4; f++) {
    assert_int_equal(embd_base64_encoded_size(SIZE_MAX, k_flags[f], &s), EMBD_ERR_INVALID_ARGUMENT);
    assert_int_equal(embd_base64_encoded_size(SIZE_MAX / 4 * 3 + 3, k_flags[f], &s),
                     EMBD_ERR_INVALID_ARGUMENT);
  }
  /* the largest that fits: (SIZE_MAX - 4) / 4 whole groups and a partial one */
  const size_t g = (SIZE_MAX - 4) / 4;
  assert_int_equal(embd_base64_encoded_size(g * 3 + 2, 0, &s), EMBD_OK);
  assert_true(s == g * 4 + 4);
  assert_int_equal(embd_base64_encoded_size(g * 3 + 3, 0, &s), EMBD_ERR_INVALID_ARGUMENT);
  /* the encoders agree: huge n with a NULL source is an argument error */
  size_t w = SENT;
  char c[4];
  assert_int_equal(embd_base64_encode(c, SIZE_MAX, 0, c, 4, &w), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(w, 0);
}

/* ---- float32 helpers ----------------------------------------------------------------------- */

static void test_f32(void **state) {
  (void)state;
  /* fixed vector: little-endian float32 bytes on every host */
  static const float v3[3] = {1.0f, -2.5f, 0.0f};
  char txt[64];
  size_t w = SENT;
  assert_int_equal(embd_base64_encode_f32(v3, 3, 0, txt, sizeof txt, &w), EMBD_OK);
  assert_int_equal(w, 16);
  assert_memory_equal(txt, "AACAPwAAIMAAAAAA", 16);
  float back[8];
  size_t cnt = SENT;
  embd_error err;
  assert_int_equal(embd_base64_decode_f32("AACAPwAAIMAAAAAA", 16, 0, back, 8, &cnt, &err), EMBD_OK);
  assert_int_equal(cnt, 3);
  assert_memory_equal(back, v3, sizeof v3);
  assert_int_equal(embd_base64_decode_f32("AACAPwAAIMAAAAAA", 16, EMBD_BASE64_NOPAD, back, 3, &cnt,
                                          &err),
                   EMBD_OK);
  assert_memory_equal(back, v3, sizeof v3);
  /* one float short of room: the count / length needed comes back */
  cnt = SENT;
  assert_int_equal(embd_base64_decode_f32("AACAPwAAIMAAAAAA", 16, 0, back, 2, &cnt, &err),
                   EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(cnt, 3);
  w = SENT;
  assert_int_equal(embd_base64_encode_f32(v3, 3, 0, txt, 15, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 16);

  /* a byte length that is not a multiple of 4: no output */
  static const char *const odd[] = {"Zm9v", "Zg==", "Zm8=", "AACAPwAAIMAAAAA=", "AACAPwA",
                                    "AACAPwAAIMAAAA=="};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    memset(back, CANARY, sizeof back);
    cnt = SENT;
    embd_result r =
        embd_base64_decode_f32(odd[i], strlen(odd[i]), EMBD_BASE64_NOPAD, back, 8, &cnt, &err);
    assert_int_equal(r, EMBD_ERR_BASE64_F32_LENGTH);
    assert_int_equal(err.result, EMBD_ERR_BASE64_F32_LENGTH);
    assert_int_equal(cnt, 0);
    for (size_t b = 0; b < sizeof back; b++) assert_int_equal(((uint8_t *)back)[b], CANARY);
  }
  /* the F32 length rule comes after the length rule */
  assert_int_equal(embd_base64_decode_f32("Zm9", 3, 0, back, 8, &cnt, &err), EMBD_ERR_BASE64_LENGTH);
  assert_int_equal(embd_base64_decode_f32("Zm9v", 4, 0x10, back, 8, &cnt, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_base64_decode_f32("AAAA*AAA", 8, 0, back, 8, &cnt, &err),
                   EMBD_ERR_BASE64_F32_LENGTH); /* 6 bytes: checked before the characters */
  assert_int_equal(embd_base64_decode_f32("AAAA*AAAAAA=", 12, 0, back, 8, &cnt, &err),
                   EMBD_ERR_BASE64_CHAR);
  assert_int_equal(err.offset, 4);

  /* random bit patterns and the specials, compared as bits, every flag set */
  enum { NF = 2000 };
  uint32_t *bits = malloc(NF * 4), *got = malloc(NF * 4);
  char *t = malloc(NF * 4 / 3 * 4 + 8);
  assert_non_null(bits);
  assert_non_null(got);
  assert_non_null(t);
  static const uint32_t special[] = {0x7fc00000, 0x7fc00001, 0xffc12345, 0x7f800001, 0xff800000,
                                     0x7f800000, 0x80000000, 0x00000000, 0x00000001, 0x807fffff,
                                     0x00400000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0x7fbfffff};
  static const size_t counts[] = {0, 1, 2, 3, 4, 5, 15, 16, 17, 100, 1536, NF};
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
    const size_t n = counts[ci];
    for (size_t i = 0; i < n; i++)
      bits[i] = i < sizeof special / sizeof special[0] && ci % 2 ? special[i] : tu_u32(&g_rng);
    for (int f = 0; f < 4; f++) {
      const unsigned fl = k_flags[f];
      w = SENT;
      assert_int_equal(embd_base64_encode_f32((const float *)bits, n, fl, t, NF * 4 / 3 * 4 + 8, &w),
                       EMBD_OK);
      assert_int_equal(w, enc_size(4 * n, fl));
      /* the text is the base64 of the little-endian bytes */
      uint8_t *le = (uint8_t *)got;
      for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) le[4 * i + k] = (uint8_t)(bits[i] >> (8 * k));
      char *ref = malloc(w + 4);
      assert_non_null(ref);
      naive_encode(ref, le, 4 * n, fl);
      if (memcmp(ref, t, w) != 0) report("encode_f32 n=%zu %s: not the LE bytes", n, flag_name(fl));
      free(ref);
      memset(got, 0, NF * 4);
      cnt = SENT;
      assert_int_equal(embd_base64_decode_f32(t, w, fl, (float *)got, n, &cnt, &err), EMBD_OK);
      assert_int_equal(cnt, n);
      if (n && memcmp(got, bits, 4 * n) != 0) report("f32 round trip n=%zu %s", n, flag_name(fl));
    }
  }
  free(bits);
  free(got);
  free(t);
  end_checks("float32");
}

/* ---- OpenSSL ---------------------------------------------------------------------------------- */

#if defined(EMBD_TEST_HAVE_OPENSSL)
/* EVP_EncodeBlock writes standard padded base64 plus a NUL; EVP_DecodeBlock returns
 * 3 * len / 4 bytes, the padding's zero bytes included: compare our length's worth. */
static void test_openssl(void **state) {
  (void)state;
  enum { MAXB = 70000 };
  uint8_t *raw = malloc(MAXB), *ob = malloc(MAXB + 8), *ours = malloc(MAXB + 8);
  char *ot = malloc(MAXB / 3 * 4 + 16), *tt = malloc(MAXB / 3 * 4 + 16);
  assert_true(raw && ob && ours && ot && tt);
  unsigned long cases = 0;
  const size_t rounds = tu_scaled(400, 50);
  for (size_t i = 0; i < 301 + rounds; i++) {
    const size_t n = i <= 300 ? i : tu_range(&g_rng, 0, i % 8 == 0 ? MAXB : 3000);
    tu_fill(&g_rng, raw, n);
    const int on = EVP_EncodeBlock((unsigned char *)ot, raw, (int)n);
    assert_true(on >= 0);
    for (size_t v = 0; v < g_nvar; v++) {
      size_t w;
      if (g_var[v].enc(raw, n, 0, tt, MAXB / 3 * 4 + 16, &w) != EMBD_OK || w != (size_t)on ||
          memcmp(tt, ot, w) != 0)
        report("%s: encode n=%zu differs from EVP_EncodeBlock", g_var[v].name, n);
      embd_error err;
      if (g_var[v].dec(ot, (size_t)on, 0, ours, MAXB + 8, &w, &err) != EMBD_OK || w != n)
        report("%s: decode of EVP_EncodeBlock n=%zu: %s", g_var[v].name, n, err.message);
      cases++;
    }
    const int od = EVP_DecodeBlock(ob, (const unsigned char *)ot, on);
    if (od < 0 || (size_t)od < n || memcmp(ob, raw, n) != 0)
      report("EVP_DecodeBlock n=%zu: %d", n, od);
    else if (n && memcmp(ob, ours, n) != 0)
      report("decode n=%zu differs from EVP_DecodeBlock", n);
  }
  printf("[ base64   ] OpenSSL agreement: %lu cases\n", cases);
  free(raw);
  free(ob);
  free(ours);
  free(ot);
  free(tt);
  end_checks("OpenSSL");
}
#endif

/* ---- random long texts: all implementations agree with scalar ------------------------------ */

static void test_random_long(void **state) {
  (void)state;
  enum { MAXB = 1 << 20 };
  uint8_t *raw = malloc(MAXB), *out = malloc(MAXB + 8);
  char *ref = malloc(MAXB / 3 * 4 + 8), *t = malloc(MAXB / 3 * 4 + 8);
  assert_true(raw && out && ref && t);
  const size_t rounds = tu_scaled(24, 6);
  for (size_t r = 0; r < rounds; r++) {
    const size_t n = r == 0 ? MAXB : tu_range(&g_rng, 0, r % 3 ? 20000 : MAXB);
    const unsigned fl = k_flags[r % 4];
    tu_fill(&g_rng, raw, n);
    const size_t tn = naive_encode(ref, raw, n, fl);
    /* an error somewhere in one round of two: all must report the same place */
    size_t bad = (size_t)-1;
    for (size_t v = 0; v < g_nvar; v++) {
      size_t w;
      if (g_var[v].enc(raw, n, fl, t, tn, &w) != EMBD_OK || w != tn || memcmp(t, ref, tn) != 0)
        report("%s: encode n=%zu %s", g_var[v].name, n, flag_name(fl));
      embd_error err;
      if (g_var[v].dec(ref, tn, fl, out, n, &w, &err) != EMBD_OK || w != n ||
          memcmp(out, raw, n) != 0)
        report("%s: decode n=%zu %s: %s", g_var[v].name, n, flag_name(fl), err.message);
    }
    if (tn > 8 && r % 2) {
      bad = tu_range(&g_rng, 0, tn - 5);
      const char save = ref[bad];
      ref[bad] = (char)(r % 4 == 1 ? '.' : '\t');
      for (size_t v = 0; v < g_nvar; v++) {
        embd_error err;
        size_t w = SENT;
        if (g_var[v].dec(ref, tn, fl, out, n, &w, &err) != EMBD_ERR_BASE64_CHAR || err.offset != bad ||
            w != 0)
          report("%s: bad char at %zu of %zu: offset %zu", g_var[v].name, bad, tn, err.offset);
      }
      ref[bad] = save;
    }
  }
  free(raw);
  free(out);
  free(ref);
  free(t);
  end_checks("random long");
}

/* ---- every byte value at every position ------------------------------------------------ */

/* The decoders classify characters with table lookups (the x86 ones by nibbles, through
 * generated tables): each of the 256 byte values at every position of texts spanning
 * several vector groups and tails, alone and followed by a second bad character later in
 * the same group (the first one is reported). Each implementation must give what the
 * alphabet says: the byte decodes (same bytes as scalar) or the error names its offset. */
static void test_every_byte(void **state) {
  (void)state;
  static const size_t lens[] = {300, 520};
  const size_t stride = tu_scale() >= 1 ? 1 : 7;
  uint8_t raw[390], ref[390], out[390];
  char txt[520];
  unsigned long cases = 0;
  for (int alpha = 0; alpha < 2; alpha++) {
    const unsigned fl = alpha ? EMBD_BASE64_URL : 0;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      const size_t len = lens[li], n = len / 4 * 3; /* no padding: no final-group rule */
      tu_fill(&g_rng, raw, n);
      assert_int_equal(naive_encode(txt, raw, n, fl), len);
      for (unsigned c = 0; c < 256; c++) {
        const int ok = (alpha ? strchr(k_url, (int)c) : strchr(k_std, (int)c)) && c;
        for (size_t p = 0; p < len; p += stride) {
          if (c == '=' && p >= len - 2) continue; /* padding there: the rules test covers it */
          for (int second = 0; second < 2; second++) {
            const size_t q = p + 1 + (p * 7 + c) % 61;
            if (second && q >= len) continue;
            const char s0 = txt[p], s1 = second ? txt[q] : 0;
            txt[p] = (char)c;
            if (second) txt[q] = '*';
            size_t rw = SENT;
            embd_error rerr;
            const embd_result rr = g_var[0].dec(txt, len, fl, ref, sizeof ref, &rw, &rerr);
            const embd_result want = ok && !second ? EMBD_OK
                                     : ok          ? EMBD_ERR_BASE64_CHAR
                                     : c == '='    ? EMBD_ERR_BASE64_PADDING
                                                   : EMBD_ERR_BASE64_CHAR;
            const size_t at = ok ? q : p;
            if (rr != want || (want != EMBD_OK && rerr.offset != at))
              report("%s: 0x%02x at %zu of %zu %s: result %d offset %zu, want %d at %zu",
                     g_var[0].name, c, p, len, flag_name(fl), rr, rerr.offset, want, at);
            for (size_t v = 1; v < g_nvar; v++) {
              size_t w = SENT;
              embd_error err;
              const embd_result r = g_var[v].dec(txt, len, fl, out, sizeof out, &w, &err);
              if (r != rr || w != rw || (r != EMBD_OK && err.offset != rerr.offset) ||
                  (r == EMBD_OK && memcmp(out, ref, rw) != 0))
                report("%s: 0x%02x at %zu (second %d) of %zu %s: result %d offset %zu, scalar "
                       "%d at %zu",
                       g_var[v].name, c, p, second, len, flag_name(fl), r, err.offset, rr,
                       rerr.offset);
              cases++;
            }
            txt[p] = s0;
            if (second) txt[q] = s1;
          }
        }
      }
    }
  }
  printf("[ base64   ] every byte value: %lu cases\n", cases);
  end_checks("every byte value");
}

/* ---- the public functions under every tier ---------------------------------------------- */

static void test_tiers(void **state) {
  (void)state;
  static const char *const tiers[] = {"scalar", "sse42", "avx2", "avx512", "neon"};
  static uint8_t raw[3000], out[3000];
  static char txt[4100];
  for (size_t t = 0; t < 5; t++) {
    if (embd_isa_check(tiers[t]) != EMBD_OK) continue;
    assert_int_equal(embd_isa_set(tiers[t]), EMBD_OK);
    const char *ad = embd_impl_active(EMBD_KERNEL_BASE64_DECODE);
    printf("[ base64   ] tier %-7s -> %s / %s\n", tiers[t], ad,
           embd_impl_active(EMBD_KERNEL_BASE64_ENCODE));
    assert_false(non_selectable(ad));
    variant pub = {"public", embd_base64_decode, embd_base64_encode};
    snprintf(pub.name, sizeof pub.name, "public under %s", tiers[t]);
    check_vectors(&pub);
    for (size_t n = 0; n < 3000; n += 97) {
      tu_fill(&g_rng, raw, n);
      for (int f = 0; f < 4; f++) {
        char ref[4100];
        const size_t tn = naive_encode(ref, raw, n, k_flags[f]);
        size_t w;
        if (embd_base64_encode(raw, n, k_flags[f], txt, sizeof txt, &w) != EMBD_OK || w != tn ||
            memcmp(txt, ref, tn) != 0)
          report("%s: encode n=%zu", pub.name, n);
        if (embd_base64_decode(txt, tn, k_flags[f], out, n, &w, NULL) != EMBD_OK || w != n ||
            memcmp(out, raw, n) != 0)
          report("%s: decode n=%zu", pub.name, n);
        if (tn > 40) {
          const size_t p = tn / 2;
          const char s = txt[p];
          txt[p] = '!';
          embd_error err;
          if (embd_base64_decode(txt, tn, k_flags[f], out, n, &w, &err) != EMBD_ERR_BASE64_CHAR ||
              err.offset != p)
            report("%s: bad char offset", pub.name);
          txt[p] = s;
        }
      }
    }
  }
  assert_int_equal(embd_isa_set(getenv("EMBD_ISA")), EMBD_OK);
  end_checks("tiers");
}

int main(void) {
  int s = tu_isa_preflight("test_base64");
  if (s) return s;
  g_rng.s = tu_seed() ^ UINT64_C(0x62363421); /* "b64!" */
  collect_variants();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),       cmocka_unit_test(test_rfc_vectors),
      cmocka_unit_test(test_rules),          cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_capacity),       cmocka_unit_test(test_roundtrip_offsets),
      cmocka_unit_test(test_encode_offset_pairs),
      cmocka_unit_test(test_guard_pages),    cmocka_unit_test(test_invalid_chars),
      cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_random_long),    cmocka_unit_test(test_f32),
#if defined(EMBD_TEST_HAVE_OPENSSL)
      cmocka_unit_test(test_openssl),
#endif
      cmocka_unit_test(test_tiers),
  };
  return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
