/* embd: Codec tokenizer maps (schema v0.1, v2 and v2.1) and lazy detokenization of token ids
 * to UTF-8.
 *
 * A tokenizer map is the client-side decode table of the Codec token transport: a JSON
 * document (spec/tokenizer-map.schema.json) giving, per token id, the fragment it stands
 * for (v0.1 "tokens": id -> UTF-8 text; v2 "vocab": token string -> id, the string decoded
 * by the map's "encoder": byte_level (GPT-2 byte alphabet), metaspace (U+2581 = space) or
 * none), the named special tokens, and an optional byte-fallback id range whose ids stand
 * for single raw bytes. v2's encode-only fields (merges, pre_tokenizer_pattern / _program,
 * tool_calling, zstd_dictionaries) are validated, not used: embd does not encode text. Maps are content-addressed: the loader checks the
 * "sha256:<hex>" the server announced (READY frame map_hash, Codec-Tokenizer-Map header)
 * over the raw bytes before trusting them. docs/TOKMAP.md has the validation and
 * detokenization rules in full.
 *
 * Token ids stay token ids until a human reads them: nothing here runs unless asked.
 *
 * Thread safety: a loaded map is immutable and may be shared by any number of threads and
 * detokenizers. A detokenizer holds one stream's state: one thread at a time.
 * Built with EMBD_WITH_TOKMAP=ON (the default; needs a C++ compiler, no other library).
 */
#ifndef EMBD_TOKMAP_H
#define EMBD_TOKMAP_H

#include <stddef.h>
#include <stdint.h>

#include "embd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "sha256:" + 64 lowercase hex digits + NUL: the one form embd writes */
#define EMBD_TOKMAP_SHA256_SIZE 72

typedef struct embd_tokmap embd_tokmap;

/* sha256 of len bytes as "sha256:<64 lowercase hex>" (NUL-terminated) in out.
 * EMBD_ERR_INVALID_ARGUMENT for a NULL out or NULL data with len > 0;
 * EMBD_ERR_UNAVAILABLE in a build without EMBD_WITH_TOKMAP. */
EMBD_API embd_result embd_tokmap_sha256(const void *data, size_t len,
                                        char out[EMBD_TOKMAP_SHA256_SIZE]);

/* Parses and validates a tokenizer map. The json bytes are only read (and hashed); the map
 * copies what it keeps into its own memory (one arena), so json may be freed afterwards.
 * expected_hash: the pin, or NULL to skip the check. Read as the peers write it: "sha256:" or
 * "SHA256:" (no other spelling), then 64 hex digits of any case; compared (and shown in a
 * mismatch message) as "sha256:" + lower case, the one form embd writes (docs/TOKMAP.md).
 * Errors (err filled when not NULL; *out = NULL):
 *   EMBD_ERR_INVALID_ARGUMENT  NULL out, NULL json with len > 0, malformed expected_hash
 *   EMBD_ERR_MAP_HASH          the bytes' sha256 differs (both hashes in the message)
 *   EMBD_ERR_MAP_SCHEMA        malformed JSON, or a map that breaks schema v0.1 / v2.1 or
 *                              their consistency rules; the message names the field, e.g.
 *                              'tokens["300"]: id 300 >= vocab_size 256'; err->offset is
 *                              the byte offset of that field in json
 *   EMBD_ERR_OUT_OF_MEMORY */
EMBD_API embd_result embd_tokmap_load(const char *json, size_t len, const char *expected_hash,
                                      embd_tokmap **out, embd_error *err);
EMBD_API void embd_tokmap_free(embd_tokmap *map);

/* Accessors. Strings are NUL-terminated and live as long as the map. */
EMBD_API const char *embd_tokmap_id(const embd_tokmap *map);
EMBD_API const char *embd_tokmap_version(const embd_tokmap *map);
EMBD_API const char *embd_tokmap_published_at(const embd_tokmap *map); /* "" if absent */
EMBD_API const char *embd_tokmap_hash(const embd_tokmap *map); /* "sha256:..." of its bytes */
EMBD_API uint64_t embd_tokmap_vocab_size(const embd_tokmap *map); /* 1 .. 2^32 */
EMBD_API size_t embd_tokmap_token_count(const embd_tokmap *map);  /* entries of "tokens"/"vocab" */
EMBD_API size_t embd_tokmap_special_count(const embd_tokmap *map); /* entries of "special_tokens" */
/* 1 and the inclusive range if the map has a byte-fallback range, else 0. */
EMBD_API int embd_tokmap_byte_fallback(const embd_tokmap *map, uint32_t *start, uint32_t *end);
/* Special token i (0 .. special_count-1, in document order): its name and id. */
EMBD_API embd_result embd_tokmap_special(const embd_tokmap *map, size_t i, const char **name,
                                         uint32_t *id);
/* The id of the special token called name (name_len bytes); EMBD_ERR_UNKNOWN_TOKEN if none. */
EMBD_API embd_result embd_tokmap_special_id(const embd_tokmap *map, const char *name,
                                            size_t name_len, uint32_t *id);

/* The schema a loaded map follows: "0.1" (a "tokens" map), "2" (a "vocab" map), or "2.1" (a
 * "vocab" map with version "2.1" or a v2.1 field: pre_tokenizer_program, tool_calling). */
EMBD_API const char *embd_tokmap_schema(const embd_tokmap *map);

typedef enum embd_tokmap_encoder {
  EMBD_TOKMAP_ENCODER_NONE = 0,       /* v0.1, or v2 without "encoder": text as written */
  EMBD_TOKMAP_ENCODER_BYTE_LEVEL = 1, /* v2 "byte_level": GPT-2 byte<->unicode alphabet */
  EMBD_TOKMAP_ENCODER_METASPACE = 2   /* v2 "metaspace": U+2581 stands for a space */
} embd_tokmap_encoder;
EMBD_API embd_tokmap_encoder embd_tokmap_encoder_of(const embd_tokmap *map);

typedef enum embd_token_kind {
  EMBD_TOKEN_TEXT = 1,    /* a "tokens" entry, or a v2 vocab token (none / metaspace
                             encoder): its UTF-8 fragment */
  EMBD_TOKEN_BYTE = 2,    /* byte-fallback id: one raw byte (id - byte_fallback_start), or
                             a v2 "<0xHH>" token (none / metaspace encoder): the byte HH */
  EMBD_TOKEN_SPECIAL = 3, /* a special token: its "tokens" / "vocab" string if any, else its
                             name (as written: never byte_level- or metaspace-decoded) */
  EMBD_TOKEN_BYTES = 4    /* a v2 byte_level vocab token: its raw bytes, which may be a part
                             of a UTF-8 sequence only (the detokenizer assembles them) */
} embd_token_kind;

/* What id stands for, in O(1): *bytes and *len (not NUL-terminated; a byte-fallback id gives
 * one byte from a static table) and its kind (any out pointer may be NULL).
 * EMBD_ERR_UNKNOWN_TOKEN if the map has no such id (id >= vocab_size, or an id of the
 * vocabulary that the map does not list). */
EMBD_API embd_result embd_tokmap_lookup(const embd_tokmap *map, uint32_t id, const char **bytes,
                                        size_t *len, embd_token_kind *kind);

/* ---- detokenizer ---------------------------------------------------------------------- */

typedef struct embd_detok embd_detok;

/* Flags for embd_detok_create. 0 is embd's strict default: special tokens rendered, an
 * unknown id EMBD_ERR_UNKNOWN_TOKEN (nothing is hidden or invented). The reference client
 * (@codecai/web's Detokenizer) skips specials and renders an unknown id as U+FFFD by
 * default: EMBD_DETOK_REFERENCE gives that. docs/TOKMAP.md has both in full. */
#define EMBD_DETOK_SKIP_SPECIAL 1u /* special tokens produce no text (default: their text) */
#define EMBD_DETOK_PARTIAL 2u      /* streaming: an incomplete UTF-8 sequence at the end of
                                      a feed is held back for the next feed (default: each
                                      feed is complete and ends with the flush rule) */
#define EMBD_DETOK_REPLACE_UNKNOWN 4u /* an id the map does not know is U+FFFD (3 bytes; it
                                         ends a pending byte sequence like any non-byte
                                         token) instead of EMBD_ERR_UNKNOWN_TOKEN */
#define EMBD_DETOK_REFERENCE (EMBD_DETOK_SKIP_SPECIAL | EMBD_DETOK_REPLACE_UNKNOWN)

/* A detokenizer for one token stream over map (which must outlive it).
 * EMBD_ERR_INVALID_ARGUMENT for NULL map/out or unknown flag bits; EMBD_ERR_OUT_OF_MEMORY. */
EMBD_API embd_result embd_detok_create(const embd_tokmap *map, unsigned flags, embd_detok **out);
EMBD_API void embd_detok_destroy(embd_detok *d);
/* Drops held-back bytes: the detokenizer starts a new stream. */
EMBD_API void embd_detok_reset(embd_detok *d);
/* Bytes held back (0..3): the start of a UTF-8 sequence waiting for its next bytes. */
EMBD_API size_t embd_detok_pending(const embd_detok *d);

/* Appends the UTF-8 text of n ids to out (cap bytes; out may be NULL when cap is 0);
 * *written = bytes written. Output is always valid UTF-8 (no NUL terminator is added).
 * All or nothing: on any error nothing is written and nothing consumed (the detokenizer's
 * state is as before the call), so no text is ever lost:
 *   EMBD_ERR_OUTPUT_TOO_SMALL  cap is below the bytes this feed produces; *written = the
 *                              bytes needed: call again with that much room (a size query
 *                              is out = NULL, cap = 0)
 *   EMBD_ERR_UNKNOWN_TOKEN     ids[i] is not in the map (without
 *                              EMBD_DETOK_REPLACE_UNKNOWN); err->offset = i, the message
 *                              names the id and i (drop or replace it and feed again)
 *   EMBD_ERR_INVALID_ARGUMENT  NULL d/written, NULL ids with n > 0, NULL out with cap > 0
 * Bytes of byte-fallback ids are assembled into UTF-8 sequences; ill-formed bytes become
 * one U+FFFD per maximal subpart, the Unicode Standard's recommended practice (ch. 3,
 * "U+FFFD Substitution of Maximal Subparts"; what the WHATWG decoder does): e.g.
 * 61 F1 80 80 E1 80 C2 62 gives "a" FFFD FFFD FFFD "b" (docs/TOKMAP.md). */
EMBD_API embd_result embd_detok_feed(embd_detok *d, const uint32_t *ids, size_t n, char *out,
                                     size_t cap, size_t *written, embd_error *err);
/* End of stream: flushes held-back bytes (an incomplete sequence becomes one U+FFFD, 3
 * bytes) and resets the detokenizer. *written = 0..3. Same all-or-nothing rule: with
 * cap < needed it returns EMBD_ERR_OUTPUT_TOO_SMALL, *written = needed, nothing dropped. */
EMBD_API embd_result embd_detok_finish(embd_detok *d, char *out, size_t cap, size_t *written,
                                       embd_error *err);
/* An upper bound of the bytes any feed of n ids (plus finish) can produce with this map:
 * a buffer this large never gets EMBD_ERR_OUTPUT_TOO_SMALL. SIZE_MAX if it overflows. */
EMBD_API size_t embd_detok_bound(const embd_tokmap *map, size_t n);

#ifdef __cplusplus
}
#endif

#endif
