/* Tokenizer maps (embd/tokmap.h): the map's sha256 pin (src/core/sha256.c), the accessors
 * and the id lookup. The JSON loader is src/json/tokmap_json.cc, the detokenizer src/codec/detok.c. */
#include <stdlib.h>
#include <string.h>

#include "embd/tokmap.h"
#include "internal.h"
#include "sha256.h"
#include "tokmap_internal.h"

embd_result embd_tokmap_sha256(const void *data, size_t len, char out[EMBD_TOKMAP_SHA256_SIZE]) {
  static const char hex[] = "0123456789abcdef";
  if (!out || (!data && len)) return EMBD_ERR_INVALID_ARGUMENT;
  uint8_t md[32];
  embd_sha256(data, len, md);
  memcpy(out, "sha256:", 7);
  for (unsigned i = 0; i < 32; i++) {
    out[7 + 2 * i] = hex[md[i] >> 4];
    out[8 + 2 * i] = hex[md[i] & 15];
  }
  out[71] = 0;
  return EMBD_OK;
}

void embd_tokmap_free(embd_tokmap *map) {
  if (!map) return;
  free(map->arena);
  free(map->toks);
  free(map->dense);
  free(map->specials);
  free(map);
}

const char *embd_tokmap_id(const embd_tokmap *map) { return map ? map->arena + map->id_off : ""; }
const char *embd_tokmap_version(const embd_tokmap *map) {
  return map ? map->arena + map->version_off : "";
}
const char *embd_tokmap_published_at(const embd_tokmap *map) {
  return map ? map->arena + map->published_off : "";
}
const char *embd_tokmap_hash(const embd_tokmap *map) { return map ? map->hash : ""; }
uint64_t embd_tokmap_vocab_size(const embd_tokmap *map) { return map ? map->vocab_size : 0; }
size_t embd_tokmap_token_count(const embd_tokmap *map) { return map ? map->ntokens : 0; }
size_t embd_tokmap_special_count(const embd_tokmap *map) { return map ? map->nspecials : 0; }
const char *embd_tokmap_schema(const embd_tokmap *map) {
  if (!map) return "";
  return map->schema == 21 ? "2.1" : map->schema == 20 ? "2" : "0.1";
}
embd_tokmap_encoder embd_tokmap_encoder_of(const embd_tokmap *map) {
  return map ? (embd_tokmap_encoder)map->encoder : EMBD_TOKMAP_ENCODER_NONE;
}

int embd_tokmap_byte_fallback(const embd_tokmap *map, uint32_t *start, uint32_t *end) {
  if (!map || !map->has_fallback) return 0;
  if (start) *start = map->fb_start;
  if (end) *end = map->fb_end;
  return 1;
}

embd_result embd_tokmap_special(const embd_tokmap *map, size_t i, const char **name,
                                uint32_t *id) {
  if (!map || i >= map->nspecials) return EMBD_ERR_INVALID_ARGUMENT;
  if (name) *name = map->arena + map->specials[i].name_off;
  if (id) *id = map->specials[i].id;
  return EMBD_OK;
}

embd_result embd_tokmap_special_id(const embd_tokmap *map, const char *name, size_t name_len,
                                   uint32_t *id) {
  if (!map || (!name && name_len)) return EMBD_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < map->nspecials; i++) {
    const embd_tokmap_special_entry *s = &map->specials[i];
    if (s->name_len == name_len && (!name_len || !memcmp(map->arena + s->name_off, name, name_len))) {
      if (id) *id = s->id;
      return EMBD_OK;
    }
  }
  return EMBD_ERR_UNKNOWN_TOKEN;
}

const embd_tokmap_tok *embd_tokmap_find(const embd_tokmap *map, uint32_t id) {
  if (map->dense) {
    if (id >= map->ndense || !map->dense[id]) return NULL;
    return &map->toks[map->dense[id] - 1];
  }
  size_t lo = 0, hi = map->ntoks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (map->toks[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < map->ntoks && map->toks[lo].id == id ? &map->toks[lo] : NULL;
}

static const unsigned char embd_byte_table[256] = {
#define B4(i) (i), (i) + 1, (i) + 2, (i) + 3
#define B16(i) B4(i), B4((i) + 4), B4((i) + 8), B4((i) + 12)
#define B64(i) B16(i), B16((i) + 16), B16((i) + 32), B16((i) + 48)
    B64(0), B64(64), B64(128), B64(192)
#undef B64
#undef B16
#undef B4
};

embd_result embd_tokmap_lookup(const embd_tokmap *map, uint32_t id, const char **bytes,
                               size_t *len, embd_token_kind *kind) {
  if (!map) return EMBD_ERR_INVALID_ARGUMENT;
  if (map->has_fallback && id >= map->fb_start && id <= map->fb_end) {
    if (bytes) *bytes = (const char *)&embd_byte_table[id - map->fb_start];
    if (len) *len = 1;
    if (kind) *kind = EMBD_TOKEN_BYTE;
    return EMBD_OK;
  }
  const embd_tokmap_tok *t = embd_tokmap_find(map, id);
  if (!t) return EMBD_ERR_UNKNOWN_TOKEN;
  if (bytes) *bytes = map->arena + t->off;
  if (len) *len = t->len;
  if (kind)
    *kind = (t->flags & EMBD_TOK_SPECIAL) ? EMBD_TOKEN_SPECIAL
            : (t->flags & EMBD_TOK_BYTE)  ? EMBD_TOKEN_BYTE
            : (t->flags & EMBD_TOK_RAW)   ? EMBD_TOKEN_BYTES
                                          : EMBD_TOKEN_TEXT;
  return EMBD_OK;
}
