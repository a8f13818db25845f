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
 * The decoder is built when EMBD_WITH_OPENAI is ON (the default; it needs a C++ compiler
 * and Debian's libfast-float-dev). Built without it, decode/append return
 * EMBD_ERR_UNAVAILABLE (EMBD_ERR_OPENAI_UNAVAILABLE is its old name, same value).
 *
 * The body must be JSON as RFC 8259 defines it, all of it: fields the decoder does not
 * read (e.g. "object", anything a server adds) are checked as strictly as the ones it
 * reads, so a body with a fault anywhere (a trailing or doubled comma, a missing ':',
 * "tru", "01", "-", NaN, an invalid escape, an unpaired \uD800, a raw control byte or
 * invalid UTF-8 in a string, nesting deeper than 1024, anything after the closing '}') is
 * EMBD_ERR_OPENAI_JSON at the byte of the fault. A UTF-8 byte order mark (EF BB BF) at
 * byte 0 is skipped (RFC 8259 section 8.1 lets a parser ignore one; some HTTP stacks add
 * one); anywhere else, or a UTF-16 one, is a JSON error. Keys are compared after
 * unescaping ("d\u0061ta" is "data"). The first fault in body order is the one reported.
 *
 * What is read:
 *   {"data": [{"index": <int>, "embedding": <vector>}, ...],
 *    "model": <string>, "usage": {"prompt_tokens": <int>, "total_tokens": <int>}}
 * Each data[] item's `embedding` is decoded by its shape (the request's encoding_format
 * is not needed):
 *   - an array whose every element is a JSON number: the vector. Each number becomes the
 *     float32 nearest its decimal text, rounded once (to nearest, ties to even), whatever
 *     its form and digit count ("0.50000000000000000000" is 0.5, 800 digits are fine):
 *     a correctly rounded double for the common texts (at most 19 digits, exponent within
 *     +-22) narrowed when it is not on a float midpoint, fast_float's exact from_chars<float>
 *     for the rest. A number whose nearest float32 is an infinity (at or above
 *     3.4028235677973366e38, the midpoint between FLT_MAX and 2^128, 1e400 included) is
 *     EMBD_ERR_OPENAI_SHAPE "... is out of the float32 range"; one below half the smallest
 *     subnormal becomes +-0 (1e-400 is 0), as rounding says.
 *   - a string: base64 (RFC 4648, strict, padded) of little-endian float32 values, decoded
 *     with embd_base64_decode_f32 straight into the output row. Invalid base64 or a
 *     decoded length that is not a multiple of 4 keeps its EMBD_ERR_BASE64_* code (unless
 *     the string is not valid JSON either: then EMBD_ERR_OPENAI_JSON). A string
 *     containing JSON escapes (e.g. "\/", as PHP writes '/') is unescaped first and then
 *     decoded: same vector.
 *   - anything else (null, number, bool, object, an array holding a non-number, an empty
 *     array or string): EMBD_ERR_OPENAI_SHAPE.
 * Vectors are placed by data[].index (0 .. n-1 for n items), not by array position: a
 * missing, non-integer, duplicate or out-of-range index is EMBD_ERR_OPENAI_INDEX. All
 * vectors have one dimensionality (EMBD_ERR_OPENAI_DIMS otherwise, or above max_dims).
 * An empty data array decodes to count 0 (unless expected_count says otherwise).
 * `model` missing or not a string: model "" (not an error). A string is unescaped and
 * kept whole when it has at most 127 bytes and no U+0000; otherwise it is cut, at a
 * U+0000 or to the longest prefix of at most 127 bytes that ends at a UTF-8 character
 * boundary, and model_truncated = 1 ("ab\u0000cd" gives "ab", cut). A missing or
 * malformed `usage` (not an object, prompt_tokens / total_tokens missing or not
 * non-negative integers) is reported as absent (has_usage = 0), not as an error.
 *
 * Errors: on any error e holds no vectors (count = dims = 0, model "", has_usage 0):
 * never a partial result. err->offset is a byte offset into the body (the body's length
 * when it ends too early) and err->message names the item and place, e.g.
 *   "data[3].embedding: base64: invalid character '*' at 17 (body byte 1234)"
 *   "data[2].embedding[5]: not a number (it is a string) (body byte 880)"
 *   "data[1].index: 7 out of range (3 items) (body byte 412)"
 *   "JSON: body: expected ',' or '}' after an object member (body byte 57)"
 *   "JSON: data[0]: invalid UTF-8 (byte 0xff) in a string (body byte 50000046)"
 * data[k] is the k-th item of the data array (0-based), whatever its index says.
 *
 * The input is never modified and never read past json[len] (options.padding is no
 * longer needed and is ignored; it stays for binary compatibility). Nothing is copied.
 *
 * Not thread-safe per object: one embd_openai_embeddings (it holds the parser) must not be
 * used by two threads at once; distinct objects are independent.
 */
#ifndef EMBD_OPENAI_H
#define EMBD_OPENAI_H

#include "common.h"
#include "convert.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decoder options. NULL means all zero; zero the whole struct before setting fields. */
typedef struct embd_openai_options {
  size_t expected_count; /* 0 = any; else exactly this many vectors (EMBD_ERR_OPENAI_COUNT);
                            for append: this response's own count */
  uint32_t max_dims;     /* 0 = no limit; above: EMBD_ERR_OPENAI_DIMS */
  size_t padding;        /* ignored (the decoder never reads past json[len]); kept so that
                            code setting it keeps compiling */
  /* 0.3: the element type the request asked for (vLLM embed_dtype, Cohere
   * embedding_types, Voyage/Mistral output_dtype, Jina embedding_type) and, for the
   * multi-byte dtypes, the byte order of base64 and bytes bodies (vLLM endianness; "native"
   * means the server's: say which). Zero = f32, little-endian = what 0.2 decoded. These
   * took one reserved_ slot (two 32-bit halves). */
  embd_dtype dtype;
  embd_byte_order byte_order;
  /* 0.3: flags (EMBD_OPENAI_KEEP_DTYPE) and the exact dims expected (0 = any; else
   * EMBD_ERR_OPENAI_DIMS when they differ). One reserved_ slot. */
  uint32_t flags;
  uint32_t expected_dims;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[2];
  void *reserved_ptr_[2];
} embd_openai_options;

/* options.flags: the vectors stay in the wire dtype (e->data, e->dtype, e->byte_order)
 * instead of becoming float32 (e->values). */
#define EMBD_OPENAI_KEEP_DTYPE 0x1u
#define EMBD_OPENAI_KNOWN_FLAGS 0x1u

typedef struct embd_openai_embeddings {
  float *values;        /* count x dims host floats, row i = input i; owned, freed by _free.
                           NULL with EMBD_OPENAI_KEEP_DTYPE (then `data` holds the rows) */
  size_t count, dims;
  char model[128];      /* NUL-terminated; "" when missing or not a string */
  int model_truncated;  /* the model name was longer than 127 bytes and was cut */
  int has_usage;        /* usage present and well-formed (in every appended response) */
  uint64_t prompt_tokens, total_tokens; /* summed over appended responses */
  /* 0.3, with EMBD_OPENAI_KEEP_DTYPE only (else data = NULL, dtype f32, row_bytes 0):
   * count rows of row_bytes bytes (embd_dtype_bytes(dtype, dims)), elements of `dtype`
   * in `byte_order` (the options' ones), the wire's bytes as they came. */
  embd_dtype dtype;
  embd_byte_order byte_order;
  void *data;
  size_t row_bytes;
  /* internal */
  void *impl_;          /* the row storage, parser scratch, index scratch (reused across
                           calls) */
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

/* A vLLM encoding_format "bytes" response: `body[0 .. len)` is the octet-stream body (the
 * vectors back to back), `metadata[0 .. mlen)` the JSON of its HTTP header "metadata"
 * ({"id", "created", "model", "data": [{"index", "embed_dtype", "endianness", "start",
 * "end", "shape"}], "usage"}). Replaces what e held. See the contract above. */
EMBD_API embd_result embd_openai_decode_bytes(embd_openai_embeddings *e, const void *body,
                                              size_t len, const char *metadata, size_t mlen,
                                              const embd_openai_options *opt, embd_error *err);

/* A vLLM encoding_format "bytes_only" body: the same vectors without metadata, in input
 * order; the caller gives their dims (opt->dtype / byte_order as asked). len must be a
 * whole number of vectors (EMBD_ERR_DTYPE_LENGTH). model "", has_usage 0. */
EMBD_API embd_result embd_openai_decode_bytes_only(embd_openai_embeddings *e, const void *body,
                                                   size_t len, size_t dims,
                                                   const embd_openai_options *opt,
                                                   embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
