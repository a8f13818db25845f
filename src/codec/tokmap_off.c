/* embd/tokmap.h when the library is built with EMBD_WITH_TOKMAP=OFF (the build without
 * C++): the functions exist; loading a map and creating a detokenizer report
 * EMBD_ERR_UNAVAILABLE, so no map or detokenizer object can exist and the accessors only
 * ever see NULL. */
#include "embd/tokmap.h"
#include "internal.h"

static embd_result off(embd_error *err) {
  return embd_fail(err, EMBD_ERR_UNAVAILABLE, 0,
                   "embd was built without EMBD_WITH_TOKMAP (tokenizer maps)");
}

embd_result embd_tokmap_sha256(const void *data, size_t len, char out[EMBD_TOKMAP_SHA256_SIZE]) {
  (void)data, (void)len;
  if (out) out[0] = 0;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_tokmap_load(const char *json, size_t len, const char *expected_hash,
                             embd_tokmap **out, embd_error *err) {
  (void)json, (void)len, (void)expected_hash;
  if (out) *out = NULL;
  return off(err);
}
void embd_tokmap_free(embd_tokmap *map) { (void)map; }
const char *embd_tokmap_id(const embd_tokmap *map) { return (void)map, ""; }
const char *embd_tokmap_version(const embd_tokmap *map) { return (void)map, ""; }
const char *embd_tokmap_published_at(const embd_tokmap *map) { return (void)map, ""; }
const char *embd_tokmap_hash(const embd_tokmap *map) { return (void)map, ""; }
uint64_t embd_tokmap_vocab_size(const embd_tokmap *map) { return (void)map, 0; }
size_t embd_tokmap_token_count(const embd_tokmap *map) { return (void)map, 0; }
const char *embd_tokmap_schema(const embd_tokmap *map) { return (void)map, ""; }
embd_tokmap_encoder embd_tokmap_encoder_of(const embd_tokmap *map) {
  return (void)map, EMBD_TOKMAP_ENCODER_NONE;
}
size_t embd_tokmap_special_count(const embd_tokmap *map) { return (void)map, 0; }
int embd_tokmap_byte_fallback(const embd_tokmap *map, uint32_t *start, uint32_t *end) {
  (void)map, (void)start, (void)end;
  return 0;
}
embd_result embd_tokmap_special(const embd_tokmap *map, size_t i, const char **name,
                                uint32_t *id) {
  (void)map, (void)i, (void)name, (void)id;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_tokmap_special_id(const embd_tokmap *map, const char *name, size_t name_len,
                                   uint32_t *id) {
  (void)map, (void)name, (void)name_len, (void)id;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_tokmap_lookup(const embd_tokmap *map, uint32_t id, const char **bytes,
                               size_t *len, embd_token_kind *kind) {
  (void)map, (void)id, (void)bytes, (void)len, (void)kind;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_detok_create(const embd_tokmap *map, unsigned flags, embd_detok **out) {
  (void)map, (void)flags;
  if (out) *out = NULL;
  return EMBD_ERR_UNAVAILABLE;
}
void embd_detok_destroy(embd_detok *d) { (void)d; }
void embd_detok_reset(embd_detok *d) { (void)d; }
size_t embd_detok_pending(const embd_detok *d) { return (void)d, 0; }
embd_result embd_detok_feed(embd_detok *d, const uint32_t *ids, size_t n, char *out, size_t cap,
                            size_t *written, embd_error *err) {
  (void)d, (void)ids, (void)n, (void)out, (void)cap;
  if (written) *written = 0;
  return off(err);
}
embd_result embd_detok_finish(embd_detok *d, char *out, size_t cap, size_t *written,
                              embd_error *err) {
  (void)d, (void)out, (void)cap;
  if (written) *written = 0;
  return off(err);
}
size_t embd_detok_bound(const embd_tokmap *map, size_t n) { return (void)map, (void)n, 0; }
