/* Fuzz target for the Codec handshake (embd/codec.h): HELLO / READY parsing, building and
 * the server's tokenizer choice.
 *
 * Input: one selector byte, then the JSON body (not NUL-terminated, odd alignment).
 *   bit 0 = 0: HELLO, 1: READY.
 * Invariants checked (abort on violation):
 *   - parse fails with EMBD_ERR_CODEC_HANDSHAKE or EMBD_ERR_OUT_OF_MEMORY only, an offset
 *     inside the body, a message, and *out zeroed; or succeeds with every string valid
 *     UTF-8 and free of NUL;
 *   - what parsed builds again (HELLO only when it has a codec_version; without one the
 *     build must refuse with EMBD_ERR_CODEC_HANDSHAKE), the size query (cap 0) gives the
 *     exact length, and parsing the built JSON gives back the same fields;
 *   - HELLO: pick_tokenizer returns an index into the client's list that names one of the
 *     server's tokenizers, or EMBD_ERR_CODEC_NO_TOKENIZER when none is shared.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_codec_handshake: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  abort();
}

static void check_str(const char *s) {
  if (s && embd_codec_utf8_check(s, strlen(s)) != 0) die("parsed string is not UTF-8", s);
}

static void check_list(embd_codec_list l) {
  if (l.n && !l.v) die("list with items but no array", NULL);
  for (size_t i = 0; i < l.n; i++) {
    if (!l.v[i]) die("NULL list item", NULL);
    check_str(l.v[i]);
  }
}

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_list(embd_codec_list a, embd_codec_list b) {
  if (a.n != b.n) return 0;
  for (size_t i = 0; i < a.n; i++)
    if (strcmp(a.v[i], b.v[i]) != 0) return 0;
  return 1;
}

static void check_failure(embd_result r, const embd_error *err, size_t len, const void *out,
                          size_t out_size) {
  if (r != EMBD_ERR_CODEC_HANDSHAKE && r != EMBD_ERR_OUT_OF_MEMORY)
    die("parse failed with an unexpected result", embd_strerror(r));
  if (err->result != r) die("err->result differs from the result", NULL);
  if (err->offset > len) die("error offset past the body", err->message);
  if (!err->message[0]) die("error without a message", NULL);
  static const unsigned char zero[256];
  if (out_size > sizeof zero || memcmp(out, zero, out_size) != 0)
    die("failed parse left *out non-zero", NULL);
}

/* Builds with a size query first; returns malloc'd JSON (length in *n) or NULL when the
 * build refused (result in *r). */
typedef embd_result (*build_fn)(const void *v, char *json, size_t cap, size_t *len,
                                embd_error *err);

static embd_result hello_build(const void *v, char *json, size_t cap, size_t *len,
                               embd_error *err) {
  return embd_codec_hello_build((const embd_codec_hello *)v, json, cap, len, err);
}

static embd_result ready_build(const void *v, char *json, size_t cap, size_t *len,
                               embd_error *err) {
  return embd_codec_ready_build((const embd_codec_ready *)v, json, cap, len, err);
}

static char *build(build_fn fn, const void *v, size_t *n, embd_result *r) {
  embd_error err;
  size_t need = 0;
  *r = fn(v, NULL, 0, &need, &err);
  if (*r == EMBD_OK) die("a size query (cap 0) reported success: JSON is never empty", NULL);
  if (*r != EMBD_ERR_OUTPUT_TOO_SMALL) return NULL;
  char *json = malloc(need + 1);
  if (!json) abort();
  size_t got = 0;
  *r = fn(v, json, need + 1, &got, &err);
  if (*r != EMBD_OK) die("build failed after its size query", err.message);
  if (got != need) die("build wrote a different length than its size query", NULL);
  *n = got;
  return json;
}

static void fuzz_hello(const char *body, size_t len) {
  embd_codec_hello h;
  embd_error err;
  embd_result r = embd_codec_hello_parse(body, len, &h, &err);
  if (r != EMBD_OK) {
    check_failure(r, &err, len, &h, sizeof h);
    return;
  }
  check_str(h.codec_version);
  const embd_codec_list *lists[] = {&h.accept_tokenizers,      &h.modalities,
                                    &h.accept_latent_spaces,   &h.accept_decoders,
                                    &h.accept_pipelines,       &h.accept_safety_policies,
                                    &h.accept_transports,      &h.accept_encoding};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) check_list(*lists[i]);

  static const char *const supported[] = {"llama3", "o200k_base", "cl100k_base", ""};
  size_t idx = 0;
  r = embd_codec_pick_tokenizer(&h, supported, 4, &idx, &err);
  if (r == EMBD_OK) {
    if (idx >= h.accept_tokenizers.n) die("pick_tokenizer index out of range", NULL);
    int known = 0;
    for (size_t i = 0; i < 4; i++) known |= strcmp(h.accept_tokenizers.v[idx], supported[i]) == 0;
    if (!known) die("pick_tokenizer chose a tokenizer the server does not have", NULL);
  } else if (r != EMBD_ERR_CODEC_NO_TOKENIZER) {
    die("pick_tokenizer: unexpected result", embd_strerror(r));
  }

  size_t n = 0;
  char *json = build(hello_build, &h, &n, &r);
  if (!json) {
    if (h.codec_version || r != EMBD_ERR_CODEC_HANDSHAKE)
      die("a parsed HELLO does not build", embd_strerror(r));
    embd_codec_hello_free(&h);
    return;
  }
  embd_codec_hello back;
  if (embd_codec_hello_parse(json, n, &back, &err) != EMBD_OK) die("built HELLO does not parse", err.message);
  const embd_codec_list *blists[] = {&back.accept_tokenizers,    &back.modalities,
                                     &back.accept_latent_spaces, &back.accept_decoders,
                                     &back.accept_pipelines,     &back.accept_safety_policies,
                                     &back.accept_transports,    &back.accept_encoding};
  if (!same_str(h.codec_version, back.codec_version)) die("HELLO round trip: codec_version", NULL);
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
    if (!same_list(*lists[i], *blists[i])) die("HELLO round trip: a list differs", NULL);
  embd_codec_hello_free(&back);
  embd_codec_hello_free(&h);
  free(json);
}

static void fuzz_ready(const char *body, size_t len) {
  embd_codec_ready rd;
  embd_error err;
  embd_result r = embd_codec_ready_parse(body, len, &rd, &err);
  if (r != EMBD_OK) {
    check_failure(r, &err, len, &rd, sizeof rd);
    return;
  }
  const char *const *strs[] = {&rd.codec_version,     &rd.modality,           &rd.tokenizer_id,
                               &rd.map_url,           &rd.map_hash,           &rd.min_codec_version,
                               &rd.safety_policy_id,  &rd.safety_policy_hash, &rd.transport,
                               &rd.encoding,          &rd.latent_space_id,    &rd.latent_map_url,
                               &rd.latent_map_hash,   &rd.decoder_runtime,    &rd.pipeline};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) check_str(*strs[i]);
  check_list(rd.required_features);
  if (!rd.codec_version) die("READY parsed without its required codec_version", NULL);
  /* Pins come out in the one form embd writes, whatever accepted spelling came in
   * (SHA256:, upper-case hex): so they build again and compare with embd_tokmap_hash. */
  const char *const pins[3] = {rd.map_hash, rd.safety_policy_hash, rd.latent_map_hash};
  for (int i = 0; i < 3; i++)
    if (pins[i] && !embd_codec_is_sha256_ref(pins[i], strlen(pins[i])))
      die("READY parsed with a pin not in sha256: + lower-case form", pins[i]);

  size_t n = 0;
  char *json = build(ready_build, &rd, &n, &r);
  if (!json) die("a parsed READY does not build", embd_strerror(r));
  embd_codec_ready back;
  if (embd_codec_ready_parse(json, n, &back, &err) != EMBD_OK) die("built READY does not parse", err.message);
  const char *const *bstrs[] = {&back.codec_version,    &back.modality,
                                &back.tokenizer_id,     &back.map_url,
                                &back.map_hash,         &back.min_codec_version,
                                &back.safety_policy_id, &back.safety_policy_hash,
                                &back.transport,        &back.encoding,
                                &back.latent_space_id,  &back.latent_map_url,
                                &back.latent_map_hash,  &back.decoder_runtime,
                                &back.pipeline};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (!same_str(*strs[i], *bstrs[i])) die("READY round trip: a string field differs", NULL);
  if (!same_list(rd.required_features, back.required_features))
    die("READY round trip: required_features", NULL);
  embd_codec_ready_free(&back);
  embd_codec_ready_free(&rd);
  free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const unsigned sel = data[0];
  /* An exact-size copy at an odd address: reads past the body or aligned loads show up
   * under ASan / UBSan. */
  char *buf = malloc(size);
  if (!buf) abort();
  memcpy(buf + 1, data + 1, size - 1);
  const char *body = buf + 1;
  const size_t len = size - 1;
  if (sel & 1)
    fuzz_ready(body, len);
  else
    fuzz_hello(body, len);
  free(buf);
  return 0;
}
