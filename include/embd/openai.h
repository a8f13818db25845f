/* embd: OpenAI-compatible /v1/embeddings response bodies -> float vectors.
 *
 *   embd_openai_embeddings e;
 *   embd_openai_init(&e);
 *   embd_error err;
 *   if (embd_openai_decode(&e, body, body_len, NULL, &err) != EMBD_OK)
 *     fprintf(stderr, "%s\n", err.message);
 *   // e.values[i * e.dims + j]: component j of the vector of input i
 *   embd_openai_free(&e);
 *
 * The body is parsed with simdjson (on-demand); the library is built with it when
 * EMBD_WITH_OPENAI is ON (the default). Built without it, decode/append return
 * EMBD_ERR_OPENAI_UNAVAILABLE.
 *
 * What is read (other fields, e.g. "object", are skipped: checked for JSON structure only):
 *   {"data": [{"index": <int>, "embedding": <vector>}, ...],
 *    "model": <string>, "usage": {"prompt_tokens": <int>, "total_tokens": <int>}}
 * Each data[] item's `embedding` is decoded by its shape (the request's encoding_format
 * is not needed):
 *   - an array whose every element is a JSON number: the vector. Each number is the float32
 *     nearest its decimal text (round-to-nearest-even, rounded once: parsed as a double
 *     and narrowed; when the double lands exactly on a midpoint between two floats the
 *     text is re-read as a float with std::from_chars, so no double rounding). A number
 *     beyond the float32 range (it would round to infinity) is EMBD_ERR_OPENAI_SHAPE.
 *   - a string: base64 (RFC 4648, strict, padded) of little-endian float32 values, decoded
 *     with embd_base64_decode_f32 straight into the output row. Invalid base64 or a
 *     decoded length that is not a multiple of 4 keeps its EMBD_ERR_BASE64_* code. A
 *     string containing JSON escapes (e.g. "\/", as PHP writes '/') is unescaped first and
 *     then decoded: same vector.
 *   - anything else (null, number, bool, object, an array holding a non-number, an empty
 *     array or string): EMBD_ERR_OPENAI_SHAPE.
 * Vectors are placed by data[].index (0 .. n-1 for n items), not by array position: a
 * missing, non-integer, duplicate or out-of-range index is EMBD_ERR_OPENAI_INDEX. All
 * vectors have one dimensionality (EMBD_ERR_OPENAI_DIMS otherwise, or above max_dims).
 * An empty data array decodes to count 0 (unless expected_count says otherwise).
 * `model` missing or not a string: model "" (not an error); longer than 127 bytes: cut
 * at 127 bytes (model_truncated = 1). A missing or malformed `usage` (not an object,
 * prompt_tokens / total_tokens missing or not non-negative integers) is reported as
 * absent (has_usage = 0), not as an error.
 *
 * Errors: on any error e holds no vectors (count = dims = 0, model "", has_usage 0):
 * never a partial result. err->offset is a byte offset into the body and err->message
 * names the item and place, e.g.
 *   "data[3].embedding: base64: invalid character '*' at 17 (body byte 1234)"
 *   "data[2].embedding[5]: not a number (body byte 880)"
 *   "data[1].index: 7 out of range (3 items) (body byte 412)"
 *   "JSON: TAPE_ERROR: ... (body byte 57)"
 * data[k] is the k-th item of the data array (0-based), whatever its index says.
 *
 * The input is never modified. simdjson reads up to 64 bytes (SIMDJSON_PADDING) past the
 * end of the JSON (their content does not matter): set options.padding to the number of
 * readable bytes the caller guarantees after json[len]. With less than 64, the body is
 * parsed in place when those 64 bytes lie in the same 4 KiB block as its last byte (a
 * read there cannot fault), and otherwise first copied into a padded buffer the decoder
 * keeps (and reuses) in e. Sanitizer builds of the library always copy; so should a
 * caller who runs it under valgrind: set padding only when it is true.
 *
 * Not thread-safe per object: one embd_openai_embeddings (it holds the parser) must not be
 * used by two threads at once; distinct objects are independent.
 */
#ifndef EMBD_OPENAI_H
#define EMBD_OPENAI_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decoder options. NULL means all zero. */
typedef struct embd_openai_options {
  size_t expected_count; /* 0 = any; else exactly this many vectors (EMBD_ERR_OPENAI_COUNT);
                            for append: this response's own count */
  uint32_t max_dims;     /* 0 = no limit; above: EMBD_ERR_OPENAI_DIMS */
  size_t padding;        /* readable bytes after json[len] the caller guarantees (>= 64 to
                            parse in place; less: the body is copied) */
} embd_openai_options;

typedef struct embd_openai_embeddings {
  float *values;        /* count x dims floats, row i = input i; owned, freed by _free */
  size_t count, dims;
  char model[128];      /* NUL-terminated; "" when missing or not a string */
  int model_truncated;  /* the model name was longer than 127 bytes and was cut */
  int has_usage;        /* usage present and well-formed (in every appended response) */
  uint64_t prompt_tokens, total_tokens; /* summed over appended responses */
  /* internal */
  size_t capacity_;     /* floats allocated at values */
  void *impl_;          /* parser, padded copy, index scratch (reused across calls) */
} embd_openai_embeddings;

/* Zeroes *e. Must be called before the first decode/append. */
EMBD_API void embd_openai_init(embd_openai_embeddings *e);
/* Frees everything e owns and zeroes it (init state). */
EMBD_API void embd_openai_free(embd_openai_embeddings *e);

/* Decodes one response body json[0 .. len) into e, replacing what e held. `opt` and `err`
 * may be NULL. */
EMBD_API embd_result embd_openai_decode(embd_openai_embeddings *e, const char *json, size_t len,
                                        const embd_openai_options *opt, embd_error *err);

/* Stitches the responses of a batch split into chunks, in input order: this response's
 * vectors (placed by its own data[].index 0..n-1) go after those already in e. The dims
 * must match those already there (EMBD_ERR_OPENAI_DIMS). usage is summed (has_usage
 * stays 1 only while every response had one). model: the first non-empty one is kept; a
 * response naming a different non-empty model is EMBD_ERR_OPENAI_MODEL. On error e is
 * emptied, earlier chunks included (the stitched result would be incomplete). */
EMBD_API embd_result embd_openai_append(embd_openai_embeddings *e, const char *json, size_t len,
                                        const embd_openai_options *opt, embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
