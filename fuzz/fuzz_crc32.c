/* Differential fuzz target for CRC-32: every implementation the host can run, the public
 * embd_crc32 (under every tier the host can run) and embd_crc32_combine must agree with
 * the scalar reference (registry index 0), which must itself agree with a bit-at-a-time
 * CRC written here. Any difference prints the case and aborts.
 *
 * Input layout (missing header bytes read as zero, so every input is valid):
 *   byte 0     bits 0-1: number of split points k (0..3)
 *              bits 2-7: start offset of the message from a 64-byte boundary (0..63)
 *   bytes 1-4  initial CRC, little-endian
 *   next 2k    split points, 16-bit little-endian each, reduced modulo (message length + 1)
 *   the rest   the message
 *
 * The message is copied so that it ends exactly at the end of its allocation, whatever
 * the offset: ASan then catches a kernel that reads past the end of its input.
 *
 * Built twice by fuzz/CMakeLists.txt: with libFuzzer (clang, fuzz_crc32) and with a plain
 * main that replays a corpus directory (fuzz_replay_main.c, any compiler). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_len; /* for the failure report */
static uint32_t g_init;

static void fail(const char *what, const char *impl, uint32_t got, uint32_t want) {
  fprintf(stderr,
          "fuzz_crc32: %s: %s gave 0x%08x, expected 0x%08x (length %zu, initial CRC 0x%08x)\n",
          what, impl, (unsigned)got, (unsigned)want, g_len, (unsigned)g_init);
  abort();
}

/* Bit-at-a-time CRC-32 (reflected 0xEDB88320, pre- and post-inverted): slow and obvious. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (UINT32_C(0xEDB88320) & (0u - (crc & 1)));
  }
  return ~crc;
}

/* CRC in chunks split at cuts[0..k-1] (sorted, each <= n). */
static uint32_t crc32_chunked(embd_crc32_fn fn, uint32_t crc, const uint8_t *p, size_t n,
                              const size_t *cuts, unsigned k) {
  size_t at = 0;
  for (unsigned i = 0; i < k; i++) {
    crc = fn(crc, p + at, cuts[i] - at);
    at = cuts[i];
  }
  return fn(crc, p + at, n - at);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

static void check_fn(const char *impl, embd_crc32_fn fn, uint32_t init, const uint8_t *p, size_t n,
                     const size_t *cuts, unsigned k, uint32_t want) {
  uint32_t got = fn(init, p, n);
  if (got != want) fail("one-shot", impl, got, want);
  got = crc32_chunked(fn, init, p, n, cuts, k);
  if (got != want) fail("split", impl, got, want);
  /* Every single split point alone too: a chunk boundary at each cut. */
  for (unsigned i = 0; i < k; i++) {
    got = fn(fn(init, p, cuts[i]), p + cuts[i], n - cuts[i]);
    if (got != want) fail("split in two", impl, got, want);
  }
}

/* Tiers to run embd_crc32 under, when EMBD_ISA does not pin one. */
static const char *const k_tiers[] = {"scalar", "sse42", "avx2", "avx512", "neon"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t hdr[5] = {0};
  memcpy(hdr, data, size < 5 ? size : 5);
  size_t pos = size < 5 ? size : 5;
  unsigned k = hdr[0] & 3u;
  size_t off = hdr[0] >> 2;
  uint32_t init = (uint32_t)hdr[1] | (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3] << 16 |
                  (uint32_t)hdr[4] << 24;
  uint16_t raw_cuts[3] = {0, 0, 0};
  for (unsigned i = 0; i < k; i++) {
    uint8_t b[2] = {0, 0};
    for (int j = 0; j < 2; j++)
      if (pos < size) b[j] = data[pos++];
    raw_cuts[i] = (uint16_t)(b[0] | b[1] << 8);
  }
  size_t n = size - pos;

  /* The message, ending exactly at the end of its allocation. */
  uint8_t *block = (uint8_t *)malloc(off + n + 1); /* +1: malloc(0) may return NULL */
  if (!block) abort();
  uint8_t *p = block + off;
  if (n) memcpy(p, data + pos, n);
  /* An empty message passes a pointer one past real bytes; also try NULL below. */

  size_t cuts[3];
  for (unsigned i = 0; i < k; i++) cuts[i] = raw_cuts[i] % (n + 1);
  qsort(cuts, k, sizeof cuts[0], cmp_size);

  g_len = n;
  g_init = init;

  embd_crc32_fn scalar = embd_crc32_impl(0);
  if (!scalar) {
    fprintf(stderr, "fuzz_crc32: the scalar implementation (index 0) is not runnable\n");
    abort();
  }
  const uint32_t want = crc32_bitwise(init, p, n);
  check_fn("scalar", scalar, init, p, n, cuts, k, want);
  if (n == 0 && scalar(init, NULL, 0) != init) fail("NULL, 0", "scalar", scalar(init, NULL, 0), init);

  /* Every implementation this host (after EMBD_ISA masking) can run. */
  size_t count = embd_impl_count(EMBD_KERNEL_CRC32);
  for (size_t i = 1; i < count; i++) {
    embd_impl_info info;
    if (embd_impl_get(EMBD_KERNEL_CRC32, i, &info) != EMBD_OK) abort();
    embd_crc32_fn fn = embd_crc32_impl(i);
    if ((fn != NULL) != (info.runnable != 0)) {
      fprintf(stderr, "fuzz_crc32: %s: embd_crc32_impl and embd_impl_get disagree on runnable\n",
              info.name);
      abort();
    }
    if (!fn) continue;
    check_fn(info.name, fn, init, p, n, cuts, k, want);
    if (n == 0 && fn(init, NULL, 0) != init) fail("NULL, 0", info.name, fn(init, NULL, 0), init);
  }

  /* The public entry point: as dispatched now, and under every tier that can run here
   * (which exercises the dispatcher's re-resolution). EMBD_ISA, when set, is the user's
   * choice of configuration: keep it. */
  check_fn("embd_crc32", embd_crc32, init, p, n, cuts, k, want);
  if (!getenv("EMBD_ISA")) {
    for (size_t t = 0; t < sizeof k_tiers / sizeof k_tiers[0]; t++) {
      if (embd_isa_check(k_tiers[t]) != EMBD_OK) continue;
      if (embd_isa_set(k_tiers[t]) != EMBD_OK) abort();
      check_fn(k_tiers[t], embd_crc32, init, p, n, cuts, k, want);
    }
    if (embd_isa_set(NULL) != EMBD_OK) abort();
  }

  /* combine: crc(A+B) == combine(crc(A), crc(B), len(B)) at every cut and at the ends. */
  for (unsigned i = 0; i <= k + 1; i++) {
    size_t c = i < k ? cuts[i] : (i == k ? 0 : n);
    uint32_t a = scalar(init, p, c);
    uint32_t b = scalar(0, p + c, n - c);
    uint32_t got = embd_crc32_combine(a, b, n - c);
    if (got != want) fail("combine", "embd_crc32_combine", got, want);
  }
  /* combine with lengths beyond any buffer: it is linear, so it must be associative,
   * combine(combine(x, y, ly), z, lz) == combine(x, combine(y, z, lz), ly + lz), for any
   * CRC values and any lengths whose sum does not overflow. Values and lengths come
   * from the input. */
  {
    uint64_t ly = ((uint64_t)want << 29 ^ (uint64_t)init << 3 ^ n) & (UINT64_MAX >> 2);
    uint64_t lz = ((uint64_t)init << 30 ^ (uint64_t)want ^ (uint64_t)k << 60) & (UINT64_MAX >> 2);
    uint32_t x = want, y = init, z = want ^ (uint32_t)n;
    uint32_t l = embd_crc32_combine(embd_crc32_combine(x, y, ly), z, lz);
    uint32_t r = embd_crc32_combine(x, embd_crc32_combine(y, z, lz), ly + lz);
    if (l != r) {
      fprintf(stderr, "fuzz_crc32: combine is not associative for lengths %llu, %llu\n",
              (unsigned long long)ly, (unsigned long long)lz);
      fail("combine associativity", "embd_crc32_combine", l, r);
    }
  }

  free(block);
  return 0;
}
