/* embd: OpenAI-compatible /v1/embeddings response bodies (and the shapes of the other
 * embedding servers: vLLM, Cohere, Voyage, Mistral, Jina, llama.cpp, Infinity) -> vectors.
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
 * is not needed; its element type is: options.dtype, below). With dtype f32 (zero, the
 * default):
 *   - an array whose every element is a JSON number: the vector. Each number becomes the
 *     float32 nearest its decimal text, rounded once (to nearest, ties to even), whatever
 *     its form and digit count ("0.50000000000000000000" is 0.5, 800 digits are fine):
 *     a correctly rounded double for the common texts (at most 19 digits, exponent within
 *     +-22) narrowed when it is not on a float midpoint, fast_float's exact from_chars<float>
 *     for the rest (every path checked against glibc's strtof: tests/test_numbers.cc). A number whose nearest float32 is an infinity (at or above
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
 *
 * The asked dtype (options.dtype and byte_order: what the request said in vLLM's
 * embed_dtype / endianness, Cohere's embedding_types, Voyage's and Mistral's output_dtype,
 * Jina's embedding_type; the decoder cannot tell float16 from bfloat16 bytes, so it is
 * told, as the SDKs know encoding_format). Every mismatch it can detect is an error at
 * its place, never a vector of garbage:
 *   - f32, f16, bf16, fp8-e4m3, fp8-e5m2: a base64 string holds the elements in
 *     byte_order (vLLM base64; llama.cpp and Infinity send the host's float32, i.e.
 *     little-endian); its decoded length must be a whole number of elements
 *     (EMBD_ERR_DTYPE_LENGTH "data[0].embedding: base64: 3071 bytes, not a whole number of
 *     f16 elements (2 bytes each)"; f32 keeps EMBD_ERR_BASE64_F32_LENGTH). A number array
 *     is accepted as float32 values (vLLM answers encoding_format float with numbers
 *     whatever embed_dtype says); kept in the wire dtype (KEEP_DTYPE) each number must be
 *     a value of that dtype, else EMBD_ERR_OPENAI_DTYPE "data[0].embedding[1]: 0.1 is not
 *     a f16 value (the response is not f16)".
 *   - int8, uint8: an array of JSON integers (no fraction, no exponent: "2.0" is not one),
 *     one per dim, each in -128..127 / 0..255; binary, ubinary: one integer per packed
 *     byte, 8 dims each (dims = 8 x the array's length), binary in -128..127 (Cohere's,
 *     Voyage's and Jina's offset binary: the packed byte - 128), ubinary in 0..255. A
 *     non-integer is EMBD_ERR_OPENAI_DTYPE ("data[0].embedding[1]: 0.5 is not an integer
 *     (the response is not int8)": float arrays arriving), one out of range
 *     EMBD_ERR_DTYPE_RANGE ("... 128 is out of the int8 range -128..127"). A base64 string
 *     holds the bytes themselves (Voyage and Mistral encoding_format base64).
 *   - float32 output (the default): e->values as always, each element converted exactly by
 *     embd_to_f32 (embd/convert.h: packed bits give 0/1 for ubinary, -1/+1 for binary).
 *     With EMBD_OPENAI_KEEP_DTYPE the rows stay in the wire dtype instead: e->data holds
 *     count rows of e->row_bytes bytes of e->dtype elements in e->byte_order (the asked
 *     ones; the wire bytes as they came), e->values is NULL.
 * expected_dims (0 = any) must equal the dims (EMBD_ERR_OPENAI_DIMS), as max_dims bounds
 * them; both count dims, not bytes (a 1024-dim ubinary vector is 128 bytes).
 * Unknown dtype, byte_order or flags values are EMBD_ERR_INVALID_ARGUMENT.
 *
 * Cohere: a body with "embeddings" instead of "data" (both: EMBD_ERR_OPENAI_SHAPE). An
 * object (embed v2, response_type "embeddings_by_type": {"float": [[..]], "int8": [[..]],
 * "uint8", "binary", "ubinary", "base64": ["..."]}) gives the list of the asked dtype's key
 * (f32: "float", or when there is none "base64", float32 little-endian strings); the other
 * keys are checked as JSON only. No key for the asked dtype is EMBD_ERR_OPENAI_DTYPE
 * "embeddings: no \"int8\" list for int8 (the keys are: float, ubinary)". An array (v1,
 * "embeddings_floats") is the list itself. Vectors are placed by list position, named
 * "embeddings.int8[3][5]" / "embeddings[3]" in messages; "texts", "meta", "id" are skipped.
 * Voyage, Mistral, Jina, llama.cpp (which adds a non-standard "encoding_format" key to each
 * item) and Infinity use data[] as OpenAI does.
 *
 * vLLM encoding_format "bytes" (embd_openai_decode_bytes): the body is the vectors back to
 * back, the HTTP header "metadata" holds JSON {"id", "created", "model", "data": [{"index",
 * "embed_dtype", "endianness", "start", "end", "shape"}], "usage"} which is read as strictly
 * as a response body (model and usage as above; offsets and messages are into the metadata:
 * "... (metadata byte N)"). Each item needs all six fields: start and end non-negative
 * integers, shape a non-empty array of positive integers whose product is the dims,
 * embed_dtype a name embd_dtype_parse knows, endianness "little", "big" or "native"; one
 * missing, repeated or ill-typed is EMBD_ERR_OPENAI_METADATA (a missing index too; an
 * ill-typed, repeated, out-of-range or taken index is EMBD_ERR_OPENAI_INDEX as for data[]).
 * An embed_dtype other than the asked dtype, or an endianness little/big other than the
 * asked byte_order (multi-byte dtypes only; "native" is the server's, which the caller
 * names in byte_order), is EMBD_ERR_OPENAI_DTYPE. The byte ranges
 * [start, end) must lie in the body, hold exactly their shape (end - start = dims x element
 * size), and tile the body: no two overlap, and no byte of the body is outside every item
 * (a gap or trailing bytes would be data nobody described: a truncated or mis-sliced body),
 * all EMBD_ERR_OPENAI_METADATA. Items may list the ranges in any order; row i is the range
 * of the item whose index is i.
 * vLLM "bytes_only" (embd_openai_decode_bytes_only): the same body without metadata, the
 * caller gives dims; len must be a whole number of dims-element vectors
 * (EMBD_ERR_DTYPE_LENGTH, offset at the first byte left over), rows in body order.
 *
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
 * Errors: on any error e holds no vectors (count = dims = 0, values = data = NULL, model "",
 * has_usage 0): never a partial result. err->offset is a byte offset into the body (the body's length
 * when it ends too early) and err->message names the item and place, e.g.
 *   "data[3].embedding: base64: invalid character '*' at 17 (body byte 1234)"
 *   "data[2].embedding[5]: not a number (it is a string) (body byte 880)"
 *   "data[1].index: 7 out of range (3 items) (body byte 412)"
 *   "JSON: body: expected ',' or '}' after an object member (body byte 57)"
 *   "JSON: data[0]: invalid UTF-8 (byte 0xff) in a string (body byte 50000046)"
 * data[k] is the k-th item of the data array (0-based), whatever its index says.
 *
 * The bytes decoders report body-describing faults in the metadata too (its offsets);
 * only bytes_only's offsets are into the body.
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
  /* 0.3: the element type the request asked for (an embd_dtype: vLLM embed_dtype, Cohere
   * embedding_types, Voyage/Mistral output_dtype, Jina embedding_type). Zero = f32, what
   * 0.2 decoded. A uint64_t, so that it fills reserved_[0]'s slot exactly on every ABI
   * (an enum there would move into the padding before the slot on 32-bit hosts). */
  uint64_t dtype;
  /* 0.3 (reserved_[1]'s slot): for the multi-byte dtypes the byte order of base64 and
   * bytes bodies (an embd_byte_order: vLLM endianness; "native" means the server's: say
   * which; zero = little-endian), and flags (EMBD_OPENAI_KEEP_DTYPE). */
  uint32_t byte_order;
  uint32_t flags;
  /* 0.3 (reserved_[2]'s slot): the exact dims expected (0 = any; else
   * EMBD_ERR_OPENAI_DIMS when they differ), and 32 bits of room that must be zero. */
  uint32_t expected_dims;
  uint32_t reserved32_;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[1];
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
  /* Room for later result fields without a new struct size (zeroed by init and by every
   * decode). */
  uint64_t reserved_[2];
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
 * stays 1 only while every response had one). The options' dtype, byte order and
 * KEEP_DTYPE must be those of the earlier responses (EMBD_ERR_INVALID_ARGUMENT).
 * model: the first non-empty one is kept; a
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

/* ---- Batch output lines ----
 *
 * The output file of a batch job (OpenAI's Batch API, Azure OpenAI, Together, vLLM's
 * run_batch) is JSON Lines, one object per request:
 *   {"id": "batch_req_...", "custom_id": "doc-17",
 *    "response": {"status_code": 200, "request_id": "req_...", "body": {<a /v1/embeddings
 *                 response>}},
 *    "error": null}
 * embd_openai_batch_line reads one such line: the whole of it strict JSON exactly as
 * embd_openai_decode reads a body (same parser, same codes, err->offset a byte of the
 * line, messages "... (line byte N)"), keys in any order at every level, unknown keys
 * ("id", "request_id", anything a server adds) checked as JSON and skipped. A UTF-8 byte
 * order mark and spaces or tabs may come before the object; after it only spaces or tabs
 * and one "\n" or "\r\n" (it is a line): anything else, a second line included, is
 * EMBD_ERR_OPENAI_JSON "content after the line's closing '}'".
 *
 * What a line must hold (else EMBD_ERR_OPENAI_SHAPE): "custom_id", a string ("not a batch
 * output line: no \"custom_id\"" when absent); "response", an object or null, and/or a
 * non-null "error"; a response object needs "status_code", an integer 100..599. Each of
 * custom_id, response, error, status_code and body at most once.
 *   - status 2xx and no non-null "error": the request succeeded; response.body (an object)
 *     is decoded into e exactly as embd_openai_decode(e, body, ..., opt) does (data[],
 *     index placement, Cohere lists, the dtype and byte order of options: vLLM's
 *     embed_dtype / endianness, expected_count / expected_dims / max_dims, KEEP_DTYPE);
 *     a fault in it is the error of the line, at its byte of the line. A 2xx status
 *     without a body object is EMBD_ERR_OPENAI_SHAPE.
 *   - otherwise (a status outside 200..299, "response": null, or a non-null "error"): the request
 *     failed. The call returns EMBD_OK with info->failed = 1 and e empty (count 0); the
 *     reason comes from the line's "error" (a string is its message; an object gives
 *     "message", "code" (a string, or a number as its text) and "type", also from one
 *     nested "error" object, vLLM's ErrorResponse) or else from response.body's
 *     {"error": {"message", "type", "param", "code"}}; each field is taken from the line's
 *     error when it has it, else from the body's. A missing field is "".
 * The body may come before "status_code" in the response (then it is checked as JSON at
 * its place and read once the status is known).
 *
 * info (required; every field written by the call, the caller need not zero it):
 * custom_id, error_code, error_message and error_type are unescaped (UTF-8; "\u0000"
 * gives a NUL byte inside, so use the lengths), NUL-terminated, never NULL ("" when
 * absent). They point into storage e owns, valid until the next call with e or
 * embd_openai_free(e). That storage and e's rows are reused from line to line: after the
 * first, lines whose strings and vectors are no larger allocate nothing.
 * On error, e is empty, info is zeroed (strings "") except custom_id when it came before
 * the fault in the line.
 */
typedef struct embd_openai_batch_info {
  const char *custom_id;   /* the request's custom_id (never NULL) */
  size_t custom_id_len;
  int status_code;         /* response.status_code; 0 when the response is null or absent */
  int failed;              /* 1: the request failed (error_* say why; e holds no vectors);
                              0: e holds its vectors */
  const char *error_code;  /* failed: e.g. "batch_expired", "invalid_request_error"'s
                              code, "400" for vLLM's numeric one; else "" */
  size_t error_code_len;
  const char *error_message;
  size_t error_message_len;
  const char *error_type;  /* e.g. "invalid_request_error" */
  size_t error_type_len;
  /* Room for later result fields (zeroed by every call). */
  uint64_t reserved_[4];
  void *reserved_ptr_[4];
} embd_openai_batch_info;

/* Reads one batch output line line[0 .. len) (see above) into e (its vectors replace what
 * e held) and *info. `opt` and `err` may be NULL; e and info may not
 * (EMBD_ERR_INVALID_ARGUMENT). */
EMBD_API embd_result embd_openai_batch_line(embd_openai_embeddings *e, const char *line, size_t len,
                                            const embd_openai_options *opt,
                                            embd_openai_batch_info *info, embd_error *err);

/* A cheap sniff, not a validation: 1 when buf's first line (up to its first '\n') is, after
 * an optional byte order mark and spaces or tabs, a '{' and somewhere holds the text
 * "custom_id" as a key (quoted, followed by ':'); else 0. For telling a batch output file
 * from a response body before choosing a reader; embd_openai_batch_line decides. Built
 * without EMBD_WITH_OPENAI: always 0. */
EMBD_API int embd_openai_is_batch_line(const char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
