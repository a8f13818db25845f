/* Codec handshake in C: building HELLO/READY JSON, picking the tokenizer, freeing parsed
 * messages. Parsing is in codec_json.cc (embd's own JSON reading) or codec_json_off.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec.h"
#include "internal.h"
#include "pin.h"

int embd_sha256_pin_norm_(const char *s, size_t len, char norm[72]) {
  static const char hex[] = "0123456789abcdef";
  if (!s || len != 7 + 64 || (memcmp(s, "sha256:", 7) != 0 && memcmp(s, "SHA256:", 7) != 0))
    return 0;
  char t[72];
  memcpy(t, "sha256:", 7);
  for (size_t i = 7; i < len; i++) {
    const char c = s[i];
    const int v = c >= '0' && c <= '9' ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (v < 0) return 0;
    t[i] = hex[v];
  }
  t[71] = 0;
  memcpy(norm, t, sizeof t); /* only once valid: norm may be s itself */
  return 1;
}

int embd_codec_is_sha256_ref(const char *s, size_t len) {
  if (!s || len != 7 + 64 || memcmp(s, "sha256:", 7) != 0) return 0;
  for (size_t i = 7; i < len; i++) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
  }
  return 1;
}

/* ---- JSON writer -------------------------------------------------------------------- */

typedef struct jw {
  char *o;
  size_t cap, n;
  int first;
  embd_error *err;
} jw;

static void put(jw *w, const char *s, size_t len) {
  if (w->n < w->cap) {
    const size_t k = w->cap - w->n < len ? w->cap - w->n : len;
    memcpy(w->o + w->n, s, k);
  }
  w->n += len;
}

static void puts_(jw *w, const char *s) { put(w, s, strlen(s)); }

/* A JSON string; its content must be valid UTF-8. */
static embd_result str(jw *w, const char *s, const char *field) {
  const size_t len = strlen(s);
  const size_t bad = embd_codec_utf8_check(s, len);
  if (bad)
    return embd_fail(w->err, EMBD_ERR_CODEC_UTF8, bad - 1,
                     "field \"%s\": invalid UTF-8 at byte %zu of its value", field, bad - 1);
  put(w, "\"", 1);
  size_t run = 0;
  for (size_t i = 0; i < len; i++) {
    const unsigned char c = (unsigned char)s[i];
    const char *e = NULL;
    char u[8];
    if (c == '"') e = "\\\"";
    else if (c == '\\') e = "\\\\";
    else if (c == '\n') e = "\\n";
    else if (c == '\r') e = "\\r";
    else if (c == '\t') e = "\\t";
    else if (c == '\b') e = "\\b";
    else if (c == '\f') e = "\\f";
    else if (c < 0x20) {
      snprintf(u, sizeof u, "\\u%04x", c);
      e = u;
    }
    if (!e) continue;
    put(w, s + run, i - run);
    puts_(w, e);
    run = i + 1;
  }
  put(w, s + run, len - run);
  put(w, "\"", 1);
  return EMBD_OK;
}

static void key(jw *w, const char *k) {
  puts_(w, w->first ? "{\"" : ",\"");
  w->first = 0;
  puts_(w, k);
  puts_(w, "\":");
}

static embd_result field_str(jw *w, const char *k, const char *v) {
  if (!v) return EMBD_OK;
  key(w, k);
  return str(w, v, k);
}

static embd_result field_list(jw *w, const char *k, const embd_codec_list *l) {
  if (!l->n) return EMBD_OK;
  if (!l->v)
    return embd_fail(w->err, EMBD_ERR_INVALID_ARGUMENT, 0, "field \"%s\": %zu items, v is NULL",
                     k, l->n);
  key(w, k);
  put(w, "[", 1);
  for (size_t i = 0; i < l->n; i++) {
    if (!l->v[i])
      return embd_fail(w->err, EMBD_ERR_INVALID_ARGUMENT, 0, "field \"%s\": item %zu is NULL", k, i);
    if (i) put(w, ",", 1);
    embd_result r = str(w, l->v[i], k);
    if (r != EMBD_OK) return r;
  }
  put(w, "]", 1);
  return EMBD_OK;
}

static embd_result finish_json(jw *w, size_t *len) {
  put(w, "}", 1);
  *len = w->n;
  if (w->n > w->cap)
    return embd_fail(w->err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "the JSON needs %zu bytes, the capacity is %zu",
                     w->n, w->cap);
  if (w->n < w->cap) w->o[w->n] = 0;
  embd_no_error(w->err);
  return EMBD_OK;
}

#define TRY(x)                       \
  do {                               \
    embd_result r_ = (x);            \
    if (r_ != EMBD_OK) return r_;    \
  } while (0)

embd_result embd_codec_hello_build(const embd_codec_hello *h, char *json, size_t cap, size_t *len,
                                   embd_error *err) {
  if (!h || !len || (!json && cap))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL hello, json or len");
  if (!h->codec_version)
    return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, 0, "HELLO: codec_version is required");
  jw w = {json, cap, 0, 1, err};
  TRY(field_str(&w, "codec_version", h->codec_version));
  TRY(field_list(&w, "modalities", &h->modalities));
  TRY(field_list(&w, "accept_tokenizers", &h->accept_tokenizers));
  TRY(field_list(&w, "accept_latent_spaces", &h->accept_latent_spaces));
  TRY(field_list(&w, "accept_decoders", &h->accept_decoders));
  TRY(field_list(&w, "accept_pipelines", &h->accept_pipelines));
  TRY(field_list(&w, "accept_safety_policies", &h->accept_safety_policies));
  TRY(field_list(&w, "accept_transports", &h->accept_transports));
  TRY(field_list(&w, "accept_encoding", &h->accept_encoding));
  return finish_json(&w, len);
}

/* Build writes the canonical form only; the parser has normalised what it read (below), so
 * the one check serves both, with a message saying what each accepts. */
static embd_result check_hash(const char *v, const char *field, int reading, embd_error *err) {
  if (!v || embd_codec_is_sha256_ref(v, strlen(v))) return EMBD_OK;
  return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, 0,
                   reading ? "READY: %s \"%.60s\" is not a sha256 pin (sha256: or SHA256: + 64 hex digits)"
                           : "READY: %s \"%.60s\" is not sha256: + 64 lowercase hex digits",
                   field, v);
}

/* The parser's READY strings live in its own storage: a pin in another accepted spelling is
 * rewritten there, in place (same length), to "sha256:" + lower case, so that it compares
 * equal to embd_tokmap_hash. */
void embd_codec_ready_norm_pins_(embd_codec_ready *r);
void embd_codec_ready_norm_pins_(embd_codec_ready *r) {
  char *const pins[3] = {(char *)(uintptr_t)r->map_hash, (char *)(uintptr_t)r->safety_policy_hash,
                         (char *)(uintptr_t)r->latent_map_hash};
  for (int i = 0; i < 3; i++)
    if (pins[i]) embd_sha256_pin_norm_(pins[i], strlen(pins[i]), pins[i]);
}

/* The READY rules shared with the parser (codec_json.cc; reading = 1). */
embd_result embd_codec_ready_check_(const embd_codec_ready *r, int reading, embd_error *err);
embd_result embd_codec_ready_check_(const embd_codec_ready *r, int reading, embd_error *err) {
  if (!r->codec_version)
    return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, 0, "READY: codec_version is required");
  if (!r->modality || strcmp(r->modality, "text-tokens") == 0) {
    const char *miss = !r->tokenizer_id ? "tokenizer_id"
                       : !r->map_url    ? "map_url"
                       : !r->map_hash   ? "map_hash"
                                        : NULL;
    if (miss)
      return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, 0,
                       "READY: %s is required for the text-tokens modality", miss);
  }
  TRY(check_hash(r->map_hash, "map_hash", reading, err));
  TRY(check_hash(r->safety_policy_hash, "safety_policy_hash", reading, err));
  TRY(check_hash(r->latent_map_hash, "latent_map_hash", reading, err));
  return EMBD_OK;
}

embd_result embd_codec_ready_build(const embd_codec_ready *r, char *json, size_t cap, size_t *len,
                                   embd_error *err) {
  if (!r || !len || (!json && cap))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL ready, json or len");
  TRY(embd_codec_ready_check_(r, 0, err));
  jw w = {json, cap, 0, 1, err};
  TRY(field_str(&w, "codec_version", r->codec_version));
  TRY(field_str(&w, "modality", r->modality));
  TRY(field_str(&w, "tokenizer_id", r->tokenizer_id));
  TRY(field_str(&w, "map_url", r->map_url));
  TRY(field_str(&w, "map_hash", r->map_hash));
  TRY(field_str(&w, "min_codec_version", r->min_codec_version));
  TRY(field_list(&w, "required_features", &r->required_features));
  TRY(field_str(&w, "safety_policy_id", r->safety_policy_id));
  TRY(field_str(&w, "safety_policy_hash", r->safety_policy_hash));
  TRY(field_str(&w, "latent_space_id", r->latent_space_id));
  TRY(field_str(&w, "latent_map_url", r->latent_map_url));
  TRY(field_str(&w, "latent_map_hash", r->latent_map_hash));
  TRY(field_str(&w, "decoder_runtime", r->decoder_runtime));
  TRY(field_str(&w, "pipeline", r->pipeline));
  TRY(field_str(&w, "transport", r->transport));
  TRY(field_str(&w, "encoding", r->encoding));
  return finish_json(&w, len);
}

void embd_codec_hello_free(embd_codec_hello *h) {
  if (!h) return;
  free(h->storage_);
  memset(h, 0, sizeof *h);
}

void embd_codec_ready_free(embd_codec_ready *r) {
  if (!r) return;
  free(r->storage_);
  memset(r, 0, sizeof *r);
}

/* ["a", "b", ...] into d[cap] (cut with "..."). */
static void list_str(char *d, size_t cap, const char *const *v, size_t n) {
  size_t k = 0;
  int cut = 0;
  d[0] = 0;
  k += (size_t)snprintf(d + k, cap - k, "[");
  for (size_t i = 0; i < n && !cut; i++) {
    const int m = snprintf(d + k, cap - k, "%s\"%s\"", i ? ", " : "", v[i] ? v[i] : "(null)");
    if (m < 0 || (size_t)m >= cap - k - 5) cut = 1;
    else k += (size_t)m;
  }
  snprintf(d + k, cap - k, cut ? "...]" : "]");
}

embd_result embd_codec_pick_tokenizer(const embd_codec_hello *hello, const char *const *supported,
                                      size_t n, size_t *index, embd_error *err) {
  if (!hello || !index || (!supported && n) || (!hello->accept_tokenizers.v && hello->accept_tokenizers.n))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL hello, supported or index");
  const embd_codec_list *c = &hello->accept_tokenizers;
  for (size_t i = 0; i < c->n; i++) {
    if (!c->v[i]) continue;
    for (size_t j = 0; j < n; j++) {
      if (supported[j] && strcmp(c->v[i], supported[j]) == 0) {
        *index = i;
        embd_no_error(err);
        return EMBD_OK;
      }
    }
  }
  char a[72], b[72];
  list_str(a, sizeof a, c->v, c->n);
  list_str(b, sizeof b, supported, n);
  return embd_fail(err, EMBD_ERR_CODEC_NO_TOKENIZER, 0, "no tokenizer in common: client accepts %s, server supports %s",
                   a, b);
}
