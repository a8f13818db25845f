/* Fuzz target for tokenizer maps and detokenization (embd/tokmap.h).
 *
 * Input: one selector byte, then the body.
 *   selector bit 0 = 0, bit 3 = 0: the body is a map (schema v0.1 or v2 / v2.1): load it
 *     (never crash; on error *out = NULL and err names the result with an offset inside
 *     the body); a loaded map is detokenized over ids 0..vocab (capped) and a few beyond,
 *     in partial mode, one id per feed (bit 1: EMBD_DETOK_SKIP_SPECIAL, bit 2:
 *     EMBD_DETOK_REPLACE_UNKNOWN).
 *   selector bit 0 = 0, bit 3 = 1: the body is big-endian uint32 ids (folded into 0..319),
 *     detokenized in partial mode with a fixed schema v2 byte_level map (raw-byte tokens
 *     that are parts of UTF-8 sequences, byte-fallback ids, specials); bits 1-2 as above,
 *     bits 4-6 the feed size - 1.
 *   selector bit 0 = 1: the body is big-endian uint32 ids, detokenized with a fixed small
 *     map (byte-fallback range, specials); bit 1 folds ids into 0..319 (mostly known),
 *     bits 2-3 are SKIP_SPECIAL / PARTIAL, bits 4-6 the feed size - 1, bit 7
 *     REPLACE_UNKNOWN.
 * Detokenizer invariants: feeds are all-or-nothing (a size query gives the exact bytes),
 * output never exceeds embd_detok_bound(), and is always well-formed UTF-8; with
 * REPLACE_UNKNOWN no feed fails with EMBD_ERR_UNKNOWN_TOKEN.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

static const char k_map[] =
    "{\"id\":\"fuzz\",\"version\":\"1\",\"vocab_size\":300,\"byte_fallback_start\":3,"
    "\"byte_fallback_end\":258,\"tokens\":{\"0\":\"<unk>\",\"1\":\"<s>\",\"3\":\"<0x00>\","
    "\"259\":\"Hello\",\"260\":\" w\\u00f6rld\",\"261\":\"\\ud83d\\ude00\",\"262\":\"a\\u0000b\","
    "\"263\":\"\\u65e5\"},\"special_tokens\":{\"<s>\":1,\"<eot>\":299}}";

/* schema v2, byte_level: "\u0120w\u00c3\u00b6rld" is " w\xC3\xB6rld", the 4 code points of id
 * 260 are F0 9F 98 80 (U+1F600), 261/262 the halves of U+00E9, 263 U+65E5, 264 a NUL, 265
 * A0 AD (ill-formed), 267 a newline (U+010A) */
static const char k_map2[] =
    "{\"id\":\"fuzz2\",\"version\":\"2\",\"vocab_size\":300,\"encoder\":\"byte_level\","
    "\"byte_fallback_start\":3,\"byte_fallback_end\":258,\"vocab\":{\"!\":0,"
    "\"\\u0120w\\u00c3\\u00b6rld\":259,\"\\u00f0\\u0141\\u013a\\u0122\":260,\"\\u00c3\":261,"
    "\"\\u00a9\":262,\"\\u00e6\\u0139\\u00a5\":263,\"\\u0100\":264,\"\\u0142\\u0143\":265,"
    "\"<|eot|>\":266,\"\\u010a\":267},\"special_tokens\":{\"<|eot|>\":266,\"<s>\":299}}";

static void die(const char *what) {
  fprintf(stderr, "fuzz_tokmap: %s\n", what);
  abort();
}

static int utf8_ok(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i], k, lo = 0x80, hi = 0xBF;
    if (c < 0x80) { i++; continue; }
    if (c >= 0xC2 && c <= 0xDF) k = 1;
    else if (c >= 0xE0 && c <= 0xEF) { k = 2; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 3; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return 0;
    if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi) return 0;
    for (unsigned j = 2; j <= k; j++)
      if ((s[i + j] & 0xC0) != 0x80) return 0;
    i += k + 1;
  }
  return 1;
}

/* Feeds ids in chunks of `chunk`; checks the invariants; returns total bytes. */
static void run(const embd_tokmap *m, unsigned flags, const uint32_t *ids, size_t n, size_t chunk) {
  embd_detok *d;
  if (embd_detok_create(m, flags, &d) != EMBD_OK) die("create");
  size_t bound = embd_detok_bound(m, chunk);
  size_t cap = bound < 65536 ? bound : 65536;
  char *out = malloc(cap ? cap : 1);
  if (!out) abort();
  for (size_t i = 0; i < n; i += chunk) {
    size_t k = n - i < chunk ? n - i : chunk;
    size_t need = 0, w = 0;
    embd_error err;
    size_t pend = embd_detok_pending(d);
    embd_result r = embd_detok_feed(d, ids + i, k, NULL, 0, &need, &err);
    if (r == EMBD_ERR_UNKNOWN_TOKEN) {
      if (flags & EMBD_DETOK_REPLACE_UNKNOWN) die("unknown id with REPLACE_UNKNOWN");
      if (err.offset >= k || embd_detok_pending(d) != pend) die("unknown id: offset/state");
      continue;
    }
    if (r != EMBD_OK && r != EMBD_ERR_OUTPUT_TOO_SMALL) die("size query");
    if (r == EMBD_OK) { /* nothing to write: the feed is done (consumed) */
      if (need != 0) die("size query OK with bytes");
      continue;
    }
    if (need > bound) die("above bound");
    if (need > cap) continue;
    r = embd_detok_feed(d, ids + i, k, out, need, &w, &err);
    if (r != EMBD_OK || w != need) die("feed with the needed size");
    if (!utf8_ok((const unsigned char *)out, w)) die("ill-formed UTF-8 out");
  }
  size_t w = 0;
  char fin[3];
  if (embd_detok_finish(d, fin, sizeof fin, &w, NULL) != EMBD_OK) die("finish");
  if (!utf8_ok((const unsigned char *)fin, w) || embd_detok_pending(d)) die("finish output");
  free(out);
  embd_detok_destroy(d);
}

/* The two id-stream modes: the body as big-endian uint32 ids (len / 4 of them; each % 320
 * when `known`: mostly ids the fixed maps have), detokenized by run() with the map `json`,
 * loaded once into *map. */
static void run_ids(embd_tokmap **map, const char *json, size_t json_len, const uint8_t *body,
                    size_t len, int known, unsigned flags, size_t chunk) {
  embd_error err;
  if (!*map && embd_tokmap_load(json, json_len, NULL, map, &err) != EMBD_OK) die(err.message);
  size_t n = len / 4;
  uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids) abort();
  for (size_t i = 0; i < n; i++) {
    const uint8_t *p = body + 4 * i;
    uint32_t v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    ids[i] = known ? v % 320 : v;
  }
  run(*map, flags, ids, n, chunk);
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t sel = data[0];
  const size_t len = size - 1;
  embd_error err;
  if (sel & 1) {
    static embd_tokmap *fixed;
    run_ids(&fixed, k_map, sizeof k_map - 1, data + 1, len, sel & 2 /* mostly known ids */,
            ((sel >> 2) & 3) | (sel & 0x80 ? EMBD_DETOK_REPLACE_UNKNOWN : 0), 1 + ((sel >> 4) & 7));
    return 0;
  }
  if (sel & 8) {
    static embd_tokmap *fixed2;
    run_ids(&fixed2, k_map2, sizeof k_map2 - 1, data + 1, len, 1,
            EMBD_DETOK_PARTIAL | ((sel >> 1) & 1) | (sel & 4 ? EMBD_DETOK_REPLACE_UNKNOWN : 0),
            1 + ((sel >> 4) & 7));
    return 0;
  }
  char *body = malloc(len ? len : 1); /* exact size: ASan sees over-reads */
  if (!body) abort();
  memcpy(body, data + 1, len);
  embd_tokmap *m = (embd_tokmap *)&err;
  embd_result r = embd_tokmap_load(body, len, NULL, &m, &err);
  if (r != EMBD_OK) {
    if (m || err.result != r || err.offset > len || !err.message[0]) die("load error contract");
  } else {
    if (!m || memcmp(body, data + 1, len)) die("load ok contract");
    uint64_t v = embd_tokmap_vocab_size(m);
    size_t n = v < 600 ? (size_t)v + 4 : 604;
    uint32_t *ids = malloc(n * sizeof *ids);
    if (!ids) abort();
    for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)i;
    ids[n - 1] = UINT32_MAX;
    run(m, EMBD_DETOK_PARTIAL | ((sel >> 1) & 1) | (sel & 4 ? EMBD_DETOK_REPLACE_UNKNOWN : 0), ids,
        n, 1);
    free(ids);
    embd_tokmap_free(m);
  }
  free(body);
  return 0;
}
