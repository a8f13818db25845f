/* The tokenizer map's layout, shared by the JSON loader (tokmap_json.cc, C++) and the
 * accessors and detokenizer (tokmap.c, detok.c). Not installed. */
#ifndef EMBD_TOKMAP_INTERNAL_H
#define EMBD_TOKMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "embd/tokmap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_TOK_SPECIAL 1u /* flags of embd_tokmap_tok */
#define EMBD_TOK_RAW 2u     /* raw bytes (a v2 byte_level token): fed through the UTF-8
                               assembler like byte-fallback ids, maybe not UTF-8 alone */
#define EMBD_TOK_BYTE 4u    /* with EMBD_TOK_RAW: a v2 "<0xHH>" token, the one byte HH */

/* One id with text: a "tokens" / "vocab" entry, or a special token without one (its name). */
typedef struct embd_tokmap_tok {
  uint32_t id;
  uint32_t off;   /* text: arena + off */
  uint32_t len;
  uint32_t flags; /* EMBD_TOK_SPECIAL */
} embd_tokmap_tok;

typedef struct embd_tokmap_special_entry {
  uint32_t name_off; /* NUL-terminated in the arena */
  uint32_t name_len;
  uint32_t id;
} embd_tokmap_special_entry;

struct embd_tokmap {
  char *arena; /* every string of the map, one allocation */
  size_t arena_len;
  uint32_t id_off, version_off, published_off; /* NUL-terminated strings in the arena */
  uint64_t vocab_size;
  int has_fallback;
  uint32_t fb_start, fb_end;
  embd_tokmap_tok *toks; /* sorted by id, ids unique */
  size_t ntoks;
  size_t ntokens; /* entries of "tokens" / "vocab" (ntoks minus special-only ids) */
  int schema;     /* 1: v0.1 ("tokens"), 20: v2, 21: v2.1 ("vocab") */
  int encoder;    /* embd_tokmap_encoder */
  uint32_t *dense; /* dense[id] = index into toks + 1 (0: none), ids < ndense; NULL:
                      sparse map (binary search over toks) */
  size_t ndense;
  embd_tokmap_special_entry *specials; /* document order */
  size_t nspecials;
  size_t max_len; /* longest text of any id (>= 1) */
  size_t max_raw_len; /* longest EMBD_TOK_RAW text (0: none): each byte may be a U+FFFD */
  char hash[EMBD_TOKMAP_SHA256_SIZE];
};

/* The entry of id, or NULL. */
const embd_tokmap_tok *embd_tokmap_find(const embd_tokmap *map, uint32_t id)
    __attribute__((visibility("hidden")));

#ifdef __cplusplus
}
#endif

#endif
