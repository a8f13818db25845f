// OpenAI-compatible /v1/embeddings response bodies -> float vectors (embd/openai.h).
//
// One strict pass over the body, no copy, nothing read past json[len]: the fields the
// decoder wants (data[].index, data[].embedding, model, usage) are read where they are,
// everything else is checked with the strict RFC 8259 pieces of json_strict.h, so a body
// that is not JSON is an error wherever its fault sits, and every error names its byte.
// Numbers become float32 through decimal.h (rounded once, at any digit count); base64
// strings of float32 little-endian go straight into their row through
// embd_base64_decode_f32. The asked dtype (options.dtype, byte_order) changes only what a
// vector's text is read as: integer arrays for int8/uint8/packed bits and base64 of any
// dtype become wire bytes in a scratch row, then one step (emit_bytes) writes the output
// row, converted by embd_to_f32 or kept. The same walker reads Cohere's "embeddings"
// lists and a vLLM bytes body's metadata (list_kind), so every text gets one strictness,
// one set of messages and one fault formatter.
//
// A batch output line (embd_openai_batch_line) is walked by batch_line() with the same
// pieces; its response.body is decoded by run() itself, started at the body's '{' inside
// the line (nest_at), so a body in a line and a body alone get the same checks and
// messages, with offsets into the line.
//
// Rows are written in item order as the items come (the count is not known before the
// closing ']'); data[].index may come before or after the embedding in an item, so they
// are put in index order at the end by an in-place permutation (no copy when every item
// sits at its own index, the usual case). Nothing is formatted on the success path: error
// messages are built only when there is an error.
//
// C++ for fast_float (decimal.cc) and for the shared std-free helpers only: built with
// -fno-exceptions -fno-rtti, hidden visibility.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "decimal.h"
#include "embd/base64.h"
#include "embd/openai.h"
#include "fail.h"
#include "floatarray_kernel.h"
#include "json_strict.h"
#include "mem.h"

#include <cstdarg>
#include <cstddef>

namespace {

// The options grew by taking reserved slots (embd/common.h "Growing the ABI"): dtype the
// first (a uint64_t: an enum would sit in the padding before it on 32-bit hosts),
// byte_order and flags the second, expected_dims and reserved32_ the third. The size and
// every older offset must stay, on every ABI.
static_assert(offsetof(embd_openai_options, dtype) % 8 == 0 &&
                  offsetof(embd_openai_options, dtype) ==
                      (offsetof(embd_openai_options, padding) + sizeof(size_t) + 7) / 8 * 8,
              "dtype takes reserved_[0]'s slot");
static_assert(offsetof(embd_openai_options, byte_order) == offsetof(embd_openai_options, dtype) + 8,
              "byte_order and flags take reserved_[1]'s slot");
static_assert(offsetof(embd_openai_options, expected_dims) == offsetof(embd_openai_options, dtype) + 16,
              "expected_dims and reserved32_ take reserved_[2]'s slot");
static_assert(offsetof(embd_openai_options, reserved_) == offsetof(embd_openai_options, dtype) + 24,
              "one reserved_ slot left");

// Grows *p to hold at least n elements of T (contents kept). false: out of memory.
template <class T>
bool reserve(T **p, size_t *cap, size_t n) {
  if (n <= *cap) return true;
  if (n > SIZE_MAX / sizeof(T)) return false;
  size_t c = *cap ? *cap : 16;
  while (c < n) c = c > SIZE_MAX / 2 / sizeof(T) ? n : c * 2;
  T *q = static_cast<T *>(embd_realloc_big(*p, *cap * sizeof(T), c * sizeof(T)));  // mem.h: huge pages when big
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

struct item_index {
  size_t index;  // data[k].index
  size_t at;     // its byte, for the error
};

// One data[] item of a vLLM bytes body's metadata.
struct meta_item {
  uint64_t start, end;
  size_t dims;
  size_t at;                           // the item's '{' in the metadata
  size_t start_at, end_at, shape_at;  // the values' bytes
  size_t k;                            // item position (for sorting by start)
};

struct impl {
  float *fv = nullptr;  // the float32 rows (e->values)
  size_t fv_cap = 0;
  uint8_t *bv = nullptr;  // the wire-dtype rows (e->data, EMBD_OPENAI_KEEP_DTYPE)
  size_t bv_cap = 0;
  item_index *idx = nullptr;  // per item, in item order
  size_t idx_cap = 0;
  size_t *inv = nullptr;  // inv[index] = item position; SIZE_MAX = not seen yet
  size_t inv_cap = 0;
  uint8_t *tmp = nullptr;  // one row, for the permutation
  size_t tmp_cap = 0;
  uint8_t *str = nullptr;  // an unescaped base64 string
  size_t str_cap = 0;
  uint8_t *bytes = nullptr;  // one row of wire bytes (decoded base64, an integer array)
  size_t bytes_cap = 0;
  float *rowf = nullptr;  // one row of floats (number arrays kept in another dtype)
  size_t rowf_cap = 0;
  meta_item *meta = nullptr;  // bytes metadata items
  size_t meta_cap = 0;
  char *lstr = nullptr;  // a batch line's custom_id and error strings (embd_openai_batch_info)
  size_t lstr_cap = 0;
  ~impl() {
    free(lstr);
    free(fv);
    free(bv);
    free(idx);
    free(inv);
    free(tmp);
    free(str);
    free(bytes);
    free(rowf);
    free(meta);
  }
};

// Where in the text a message is about: "data[3].embedding[5]" and the like.
enum where_kind {
  W_BODY, W_DATA, W_ITEM, W_INDEX, W_EMB, W_ELEM, W_MODEL, W_USAGE, W_FIELD,
  W_RESP, W_RBODY, W_ERROR, W_CUSTOM  // a batch line's response, response.body, error, custom_id
};

// Which list the vectors come in: OpenAI's data[].embedding, Cohere's embeddings-by-type
// object ("embeddings": {"int8": [[...]]}), Cohere v1's "embeddings": [[...]], or a vLLM
// bytes body's metadata data[] (no vectors in the JSON).
enum list_kind { L_DATA, L_TYPED, L_V1, L_META, L_BYTES };

enum key_id {
  K_OTHER, K_DATA, K_MODEL, K_USAGE, K_INDEX, K_EMBEDDING, K_PROMPT, K_TOTAL, K_EMBEDDINGS,
  K_EMBED_DTYPE, K_ENDIANNESS, K_START, K_END, K_SHAPE,
  // Cohere's embedding type keys, in the order of cohere_names
  K_T_FLOAT, K_T_INT8, K_T_UINT8, K_T_BINARY, K_T_UBINARY, K_T_BASE64,
  // A batch output line's keys (batch_key_of: only while walking the line itself)
  B_CUSTOM_ID, B_RESPONSE, B_ERROR, B_STATUS, B_BODY, B_MESSAGE, B_CODE, B_TYPE
};
const char *const cohere_names[] = {"float", "int8", "uint8", "binary", "ubinary", "base64"};

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline bool is_packed(embd_dtype t) { return t == EMBD_DTYPE_BINARY || t == EMBD_DTYPE_UBINARY; }
inline bool is_integer(embd_dtype t) { return t >= EMBD_DTYPE_INT8 && t <= EMBD_DTYPE_UBINARY; }

// Whether s[0 .. N-1) is the literal (constant size: the compiler inlines the compare).
template <size_t N>
inline bool is(const uint8_t *s, const char (&lit)[N]) {
  return memcmp(s, lit, N - 1) == 0;
}

// The key s[0 .. m): this runs for every key of every body, so it switches on the length
// and compares constant-size literals (a table scan with strlen was a measurable part of
// decoding a small response).
inline key_id key_of(const uint8_t *s, size_t m) {
  switch (m) {
    case 3: return is(s, "end") ? K_END : K_OTHER;
    case 4: return is(s, "data") ? K_DATA : is(s, "int8") ? K_T_INT8 : K_OTHER;
    case 5:
      return is(s, "index")   ? K_INDEX
             : is(s, "model") ? K_MODEL
             : is(s, "usage") ? K_USAGE
             : is(s, "start") ? K_START
             : is(s, "shape") ? K_SHAPE
             : is(s, "float") ? K_T_FLOAT
             : is(s, "uint8") ? K_T_UINT8
                              : K_OTHER;
    case 6: return is(s, "binary") ? K_T_BINARY : is(s, "base64") ? K_T_BASE64 : K_OTHER;
    case 7: return is(s, "ubinary") ? K_T_UBINARY : K_OTHER;
    case 9: return is(s, "embedding") ? K_EMBEDDING : K_OTHER;
    case 10: return is(s, "embeddings") ? K_EMBEDDINGS : is(s, "endianness") ? K_ENDIANNESS : K_OTHER;
    case 11: return is(s, "embed_dtype") ? K_EMBED_DTYPE : K_OTHER;
    case 12: return is(s, "total_tokens") ? K_TOTAL : K_OTHER;
    case 13: return is(s, "prompt_tokens") ? K_PROMPT : K_OTHER;
    default: return K_OTHER;
  }
}

// A batch output line's keys: {"id", "custom_id", "response": {"status_code", "request_id",
// "body"}, "error": {"code", "message", "type"}} (other keys are K_OTHER, checked only).
inline key_id batch_key_of(const uint8_t *s, size_t m) {
  switch (m) {
    case 4: return is(s, "body") ? B_BODY : is(s, "code") ? B_CODE : is(s, "type") ? B_TYPE : K_OTHER;
    case 5: return is(s, "error") ? B_ERROR : K_OTHER;
    case 7: return is(s, "message") ? B_MESSAGE : K_OTHER;
    case 8: return is(s, "response") ? B_RESPONSE : K_OTHER;
    case 9: return is(s, "custom_id") ? B_CUSTOM_ID : K_OTHER;
    case 11: return is(s, "status_code") ? B_STATUS : K_OTHER;
    default: return K_OTHER;
  }
}

// A string of a batch line, not yet unescaped: its content [p, q) in the line; esc: it
// holds escapes. A number (an error code sent as one) is its text, esc false.
struct bref {
  const uint8_t *p = nullptr, *q = nullptr;
  bool esc = false, set = false;
};
struct berr {
  bref code, message, type;
};
// What a batch line's walk found (the strings are unescaped by the caller of run()).
struct batch_out {
  bref custom_id;
  berr top, body;     // the line's "error" and response.body's error
  uint64_t status = 0;
  bool have_status = false, have_response = false, top_error = false, decoded = false, failed = false;
};

struct decoder {
  embd_openai_embeddings *e;
  impl *im;
  const embd_openai_options *opt;
  embd_error *err;
  embd_json j;
  size_t base;   // rows already in e (append)
  size_t dims;   // 0 = not known yet
  embd_dtype dtype = EMBD_DTYPE_F32;        // asked
  embd_byte_order order = EMBD_ORDER_LE;    // asked (of base64 / bytes)
  bool keep = false;                        // EMBD_OPENAI_KEEP_DTYPE
  size_t row_bytes = 0;                     // bytes per output row (floats or wire dtype)
  const char *text = "body";                // what offsets point into
  list_kind list = L_DATA;
  const char *typed = "";                   // L_TYPED: the Cohere key being decoded
  size_t n = 0;  // items in data[]
  char model[128] = {};
  int model_truncated = 0;
  int has_usage = 0;
  uint64_t prompt_tokens = 0, total_tokens = 0;
  // A batch line: its keys are classified by batch_key_of while bkeys; the response body
  // is decoded by run() starting at nest_at (a '{' inside the line) instead of the text's
  // start, and run() leaves nest_past after its '}' instead of checking the text's end.
  bool bkeys = false;
  const uint8_t *nest_at = nullptr, *nest_past = nullptr;

  size_t off(const uint8_t *p) const { return static_cast<size_t>(p - j.base); }

  // Every error at a byte goes through here: "<message> (body byte N)" (or "metadata
  // byte N" for a vLLM bytes body's header), err->offset = N.
  embd_result fail(embd_result r, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5))) {
    char m[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return embd_fail(err, r, at, "%s (%s byte %zu)", m, text, at);
  }

  // fail() about vector k: "<its name>: <message>". Names are formatted only here, on
  // the way out with an error: nothing is formatted on the success path.
  embd_result efail(embd_result r, size_t at, size_t k, const char *fmt, ...) __attribute__((format(printf, 5, 6))) {
    char nm[64], m[sizeof err->message];
    emb_name(nm, sizeof nm, k);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return fail(r, at, "%s: %s", nm, m);
  }

  // "data[3].embedding", "embeddings.int8[3]", "embeddings[3]": vector k's name.
  void emb_name(char *b, size_t cap, size_t k) const {
    switch (list) {
      case L_DATA: snprintf(b, cap, "data[%zu].embedding", k); break;
      case L_TYPED: snprintf(b, cap, "embeddings.%s[%zu]", typed, k); break;
      case L_V1: snprintf(b, cap, "embeddings[%zu]", k); break;
      case L_META: snprintf(b, cap, "data[%zu]", k); break;
      case L_BYTES: snprintf(b, cap, "vector %zu", k); break;
    }
  }

  void where(char *b, size_t cap, where_kind w, size_t k, size_t i) const {
    char nm[64];
    switch (w) {
      case W_BODY: snprintf(b, cap, "%s", text); break;
      case W_DATA:
        if (list == L_TYPED) snprintf(b, cap, "embeddings.%s", typed);
        else snprintf(b, cap, "%s", list == L_V1 ? "embeddings" : "data");
        break;
      case W_ITEM: snprintf(b, cap, "data[%zu]", k); break;
      case W_INDEX: snprintf(b, cap, "data[%zu].index", k); break;
      case W_EMB: emb_name(b, cap, k); break;
      case W_ELEM:
        emb_name(nm, sizeof nm, k);
        snprintf(b, cap, "%s[%zu]", nm, i);
        break;
      case W_MODEL: snprintf(b, cap, "model"); break;
      case W_USAGE: snprintf(b, cap, "usage"); break;
      case W_FIELD: snprintf(b, cap, "data[%zu]", k); break;
      case W_RESP: snprintf(b, cap, "response"); break;
      case W_RBODY: snprintf(b, cap, "response.body"); break;
      case W_ERROR: snprintf(b, cap, "error"); break;
      case W_CUSTOM: snprintf(b, cap, "custom_id"); break;
    }
  }

  // The fault recorded in j, as EMBD_ERR_OPENAI_JSON.
  embd_result json_fail(where_kind w, size_t k = 0, size_t i = 0) {
    char at[80];
    where(at, sizeof at, w, k, i);
    return fail(EMBD_ERR_OPENAI_JSON, embd_json_fault_offset(&j), "JSON: %s: %s", at, j.fault);
  }

  // A value of the wrong type at p: a shape error when it is valid JSON ("<where>: <its
  // type>, <want>"), the JSON error when it is not.
  embd_result type_fail(const uint8_t *p, embd_result r, const char *want, where_kind w,
                        size_t k = 0, size_t i = 0) {
    const char *t = embd_json_type_of(&j, p, nullptr);
    if (!t) return json_fail(w, k, i);
    char at[80];
    where(at, sizeof at, w, k, i);
    return fail(r, off(p), "%s: %s (it is %s)", at, want, t);
  }

  // Past whitespace; at the end of the text: the JSON error "the text ends ...".
  const uint8_t *ws(const uint8_t *p, const char *what) {
    p = embd_json_ws(p, j.end);
    if (p >= j.end) return embd_json_fault(&j, j.end, "the %s ends %s", text, what);
    return p;
  }

  // The key at p (a '"'); *id says which one it is; returns the position after the ':'
  // and its whitespace (at the value).
  const uint8_t *key(const uint8_t *p, key_id *id) {
    *id = K_OTHER;
    if (*p != '"') return embd_json_fault(&j, p, "expected a string key");
    int esc = 0;
    const uint8_t *q = embd_json_string(&j, p, &esc);
    if (!q) return nullptr;
    uint8_t kb[16];
    const uint8_t *s = p + 1;
    size_t m = static_cast<size_t>(q - 1 - s);
    if (esc) {  // "d\u0061ta" is "data"
      m = embd_json_unescape(s, q - 1, kb, sizeof kb);
      s = kb;
    }
    if (m <= sizeof kb) *id = bkeys ? batch_key_of(s, m) : key_of(s, m);
    p = ws(q, "after a key");
    if (!p) return nullptr;
    if (*p != ':') return embd_json_fault(&j, p, "expected ':' after a key");
    return ws(p + 1, "after a ':'");
  }

  // After a member's value (close '}') or an array element (close ']'): the position of
  // the next one (after ','), or nullptr with *closed set when the object or array ends (p
  // then past the close); nullptr with *closed unset on a fault. One body for both, one
  // instance per close: the same code as the two copies it replaces.
  template <char Close>
  const uint8_t *next_item(const uint8_t *p, bool *closed) {
    constexpr bool obj = Close == '}';
    *closed = false;
    p = ws(p, obj ? "inside an object" : "inside an array");
    if (!p) return nullptr;
    if (*p == Close) {
      *closed = true;
      return p + 1;
    }
    if (*p != ',') {  // literal formats (printf checking), the one for this Close compiled in
      if constexpr (obj) return embd_json_fault(&j, p, "expected ',' or '}' after an object member");
      else return embd_json_fault(&j, p, "expected ',' or ']' after an array element");
    }
    return ws(p + 1, "after a ','");
  }
  const uint8_t *next_member(const uint8_t *p, bool *closed) { return next_item<'}'>(p, closed); }
  const uint8_t *next_element(const uint8_t *p, bool *closed) { return next_item<']'>(p, closed); }

  // A non-negative integer that fits in uint64 at p. 1: *x set; 0: a valid JSON value
  // that is not one (*past after it); -1: invalid JSON.
  int uint_value(const uint8_t *p, uint64_t *x, const uint8_t **past) {
    if (!embd_json_type_of(&j, p, past)) return -1;
    const uint8_t *q = *past;
    if (p == q || static_cast<unsigned>(*p - '0') >= 10) return 0;
    uint64_t v = 0;
    for (const uint8_t *c = p; c < q; c++) {
      unsigned d = static_cast<unsigned>(*c - '0');
      if (d >= 10) return 0;  // a fraction or an exponent
      if (v > (UINT64_MAX - d) / 10) return 0;
      v = v * 10 + d;
    }
    *x = v;
    return 1;
  }

  // Room for `rows` output rows (floats, or wire-dtype bytes with keep).
  embd_result grow_rows(size_t rows) {
    if (row_bytes && rows > SIZE_MAX / row_bytes)
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%zu x %zu dims do not fit in memory", rows, dims);
    bool ok = keep ? reserve(&im->bv, &im->bv_cap, rows * row_bytes)
                   : reserve(&im->fv, &im->fv_cap, rows * dims);
    if (!ok) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu x %zu dims", rows, dims);
    return EMBD_OK;
  }

  // The dims of vector k (first vector: sets them, checked against the options), d > 0.
  embd_result check_dims(size_t k, size_t d, size_t at) {
    if (d == 0) return efail(EMBD_ERR_OPENAI_SHAPE, at, k, "empty");
    if (dims == 0) {
      if (opt && opt->max_dims && d > opt->max_dims)
        return efail(EMBD_ERR_OPENAI_DIMS, at, k, "%zu dims, above max_dims %u", d, static_cast<unsigned>(opt->max_dims));
      if (opt && opt->expected_dims && d != opt->expected_dims)
        return efail(EMBD_ERR_OPENAI_DIMS, at, k, "%zu dims, expected_dims is %u", d,
                     static_cast<unsigned>(opt->expected_dims));
      dims = d;
      if (keep) {
        if (embd_dtype_bytes(dtype, d, &row_bytes) != EMBD_OK)
          return efail(EMBD_ERR_OPENAI_DIMS, at, k, "%zu dims do not fit in memory", d);
      } else {
        if (d > SIZE_MAX / sizeof(float)) return efail(EMBD_ERR_OPENAI_DIMS, at, k, "%zu dims do not fit in memory", d);
        row_bytes = d * sizeof(float);
      }
      return grow_rows(base + k + 1);
    }
    if (d != dims) return efail(EMBD_ERR_OPENAI_DIMS, at, k, "%zu dims, the others have %zu", d, dims);
    return EMBD_OK;
  }

  // Vector k as `nb` wire bytes of the asked dtype in byte order `o` (nb a whole number of
  // elements, checked by the caller): dims checked, the row written as float32 or kept.
  embd_result emit_bytes(size_t k, const uint8_t *b, size_t nb, embd_byte_order o, size_t at) {
    size_t d = 0;
    embd_dtype_count(dtype, nb, &d);
    if (embd_result r = check_dims(k, d, at)) return r;
    if (embd_result r = grow_rows(base + k + 1)) return r;
    if (keep) {
      // Kept rows are in the asked order; a wire in the other one (Cohere's base64, always
      // little-endian) is swapped on the way in.
      memcpy(im->bv + (base + k) * row_bytes, b, nb);
      if (o != order) swap_row(im->bv + (base + k) * row_bytes, d);
      return EMBD_OK;
    }
    embd_to_f32(im->fv + (base + k) * dims, b, d, dtype, o);
    return EMBD_OK;
  }

  // Reverses the bytes of each of the d multi-byte elements at p (single-byte dtypes: none).
  void swap_row(uint8_t *p, size_t d) const {
    unsigned w = embd_dtype_bits(dtype) / 8;
    if (w < 2) return;
    for (size_t i = 0; i < d; i++, p += w)
      for (unsigned a = 0, z = w - 1; a < z; a++, z--) {
        uint8_t t = p[a];
        p[a] = p[z];
        p[z] = t;
      }
  }

  // Vector k parsed as float32 values v[0 .. d) (a JSON number array) when the rows are
  // kept in the wire dtype: each value must be one of the dtype's (a float16 response
  // sent as numbers), else the response is not what was asked.
  embd_result emit_floats(size_t k, const float *v, size_t d, size_t at) {
    if (embd_result r = check_dims(k, d, at)) return r;
    if (embd_result r = grow_rows(base + k + 1)) return r;
    uint8_t *row = im->bv + (base + k) * row_bytes;
    embd_error ce;
    if (embd_from_f32(row, v, d, dtype, order, &ce) != EMBD_OK) {  // int dtypes come elsewhere
      char nm[64];
      emb_name(nm, sizeof nm, k);
      return fail(EMBD_ERR_OPENAI_DTYPE, at, "%s: not %s values", nm, embd_dtype_name(dtype));
    }
    if (dtype == EMBD_DTYPE_F32) return EMBD_OK;
    // The round trip is exact only for values of the dtype.
    if (!reserve(&im->tmp, &im->tmp_cap, 4 * 64))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory");
    float *back = reinterpret_cast<float *>(im->tmp);  // 64 floats at a time
    for (size_t i0 = 0; i0 < d; i0 += 64) {
      size_t c = d - i0 < 64 ? d - i0 : 64;
      embd_to_f32(back, row + i0 * (embd_dtype_bits(dtype) / 8), c, dtype, order);
      for (size_t i = 0; i < c; i++)
        if (memcmp(&back[i], &v[i0 + i], 4) != 0) {
          char nm[64];
          emb_name(nm, sizeof nm, k);
          return fail(EMBD_ERR_OPENAI_DTYPE, at, "%s[%zu]: %.9g is not a %s value (the response is not %s)",
                      nm, i0 + i, static_cast<double>(v[i0 + i]), embd_dtype_name(dtype),
                      embd_dtype_name(dtype));
        }
    }
    return EMBD_OK;
  }

  embd_result base64_fail(size_t k, embd_result r, const embd_error &be, size_t where) {
    char nm[64];
    emb_name(nm, sizeof nm, k);
    return fail(r, where, "%s: base64: %s", nm, be.message);
  }

  // Base64 text s[0 .. m) of vector k; `at` is the string's '"', raw: s is the body itself
  // (not an unescaped copy), so base64 offsets map to body bytes. o: the wire's byte order.
  embd_result base64_row(size_t k, const uint8_t *s, size_t m, size_t at, bool raw, embd_byte_order o) {
    const char *p = reinterpret_cast<const char *>(s);
    embd_error be;
    size_t got = 0;
    if (m == 0) return check_dims(k, 0, at);
    if (dtype == EMBD_DTYPE_F32 && !keep && o == EMBD_ORDER_LE) {
      // The common case straight into the row: the exact float count from the length and
      // the trailing '=' (the decoder checks all).
      size_t pads = (p[m - 1] == '=') + (m >= 2 && p[m - 2] == '=');
      size_t bytes = m / 4 * 3 - (m % 4 == 0 ? pads : 0);
      if (m % 4 != 0 || bytes % 4 != 0) {
        // Invalid: let the base64 decoder name the problem (length rules come first).
        float none[1];
        embd_result r = embd_base64_decode_f32(p, m, 0, none, 0, &got, &be);
        if (r == EMBD_OK || r == EMBD_ERR_OUTPUT_TOO_SMALL) return check_dims(k, 0, at);
        return base64_fail(k, r, be, raw ? at + 1 + be.offset : at);
      }
      if (embd_result r = check_dims(k, bytes / 4, at)) return r;
      float *row = im->fv + (base + k) * dims;
      embd_result r = embd_base64_decode_f32(p, m, 0, row, dims, &got, &be);
      if (r) return base64_fail(k, r, be, raw ? at + 1 + be.offset : at);
      return EMBD_OK;
    }
    size_t cap = embd_base64_decoded_max(m);
    if (!reserve(&im->bytes, &im->bytes_cap, cap ? cap : 1))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu bytes", cap);
    embd_result r = embd_base64_decode(p, m, 0, im->bytes, cap, &got, &be);
    if (r) return base64_fail(k, r, be, raw ? at + 1 + be.offset : at);
    unsigned bits = embd_dtype_bits(dtype);
    if (bits >= 16 && got % (bits / 8) != 0) {
      char nm[64];
      emb_name(nm, sizeof nm, k);
      if (dtype == EMBD_DTYPE_F32)  // the code 0.2 gave
        return fail(EMBD_ERR_BASE64_F32_LENGTH, at, "%s: base64: %zu bytes, not a multiple of 4 (float32)", nm,
                    got);
      return fail(EMBD_ERR_DTYPE_LENGTH, at, "%s: base64: %zu bytes, not a whole number of %s elements (%u bytes each)",
                  nm, got, embd_dtype_name(dtype), bits / 8);
    }
    return emit_bytes(k, im->bytes, got, o, at);
  }

  // Vector k as a string at p (its '"'): base64. *past: after the string.
  embd_result base64_string(size_t k, const uint8_t *p, const uint8_t **past, embd_byte_order o) {
    const uint8_t *s = p + 1;
    const uint8_t *q = static_cast<const uint8_t *>(memchr(s, '"', static_cast<size_t>(j.end - s)));
    if (q && !memchr(s, '\\', static_cast<size_t>(q - s))) {
      *past = q + 1;
      embd_result r = base64_row(k, s, static_cast<size_t>(q - s), off(p), true, o);
      // A string the base64 decoder rejects may also be invalid JSON (a raw control byte,
      // invalid UTF-8): then that is the error.
      if (r != EMBD_OK && !embd_json_string(&j, p, nullptr)) return json_fail(W_EMB, k);
      return r;
    }
    // Escapes (e.g. "\/" as PHP writes '/'), or no closing quote: the full string scan.
    int esc = 0;
    q = embd_json_string(&j, p, &esc);
    if (!q) return json_fail(W_EMB, k);
    *past = q;
    size_t raw = static_cast<size_t>(q - 1 - s);
    if (!reserve(&im->str, &im->str_cap, raw ? raw : 1))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for a %zu-byte string", raw);
    size_t m = embd_json_unescape(s, q - 1, im->str, raw);
    return base64_row(k, im->str, m, off(p), false, o);
  }

  // Vector k as an array of integers at p (its '['), for int8/uint8 (one element per dim)
  // and binary/ubinary (one packed byte per 8 dims: Cohere's, Voyage's, Jina's lists).
  // Each element must be a JSON integer in the type's range. *past: after the ']'.
  embd_result integers(size_t k, const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_EMB, k);
    if (*p == ']') {
      *past = p + 1;
      return check_dims(k, 0, at);
    }
    const bool sign = dtype == EMBD_DTYPE_INT8 || dtype == EMBD_DTYPE_BINARY;
    const long lo = sign ? -128 : 0, hi = sign ? 127 : 255;
    const size_t per = is_packed(dtype) ? 8 : 1;
    size_t i = 0;
    for (;;) {
      const uint8_t *q = nullptr;
      const char *t = embd_json_type_of(&j, p, &q);
      if (!t) return json_fail(W_ELEM, k, i);
      if (*p != '-' && static_cast<unsigned>(*p - '0') >= 10)
        return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not a number", W_ELEM, k, i);
      // A valid number: an integer iff it has no fraction or exponent.
      long v = 0;
      bool integer = true, big = false;
      for (const uint8_t *c = p + (*p == '-'); c < q; c++) {
        unsigned dg = static_cast<unsigned>(*c - '0');
        if (dg >= 10) {
          integer = false;
          break;
        }
        if (v < 1000) v = v * 10 + static_cast<long>(dg);
        else big = true;
      }
      char nm[80];
      if (!integer || big || (*p == '-' ? -v : v) < lo || (*p == '-' ? -v : v) > hi) where(nm, sizeof nm, W_ELEM, k, i);
      const int shown = static_cast<int>(q - p > 40 ? 40 : q - p);
      if (!integer)
        return fail(EMBD_ERR_OPENAI_DTYPE, off(p), "%s: %.*s is not an integer (the response is not %s)", nm,
                    shown, p, embd_dtype_name(dtype));
      if (*p == '-') v = -v;
      if (big || v < lo || v > hi)
        return fail(EMBD_ERR_DTYPE_RANGE, off(p), "%s: %.*s is out of the %s range %ld..%ld", nm, shown, p,
                    embd_dtype_name(dtype), lo, hi);
      if ((dims && (i + 1) * per > dims) || (opt && opt->max_dims && (i + 1) * per > opt->max_dims)) {
        char en[64];
        emb_name(en, sizeof en, k);
        if (dims)
          return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: more than %zu dims, the others have %zu", en, dims, dims);
        return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: more than %u dims, above max_dims %u", en,
                    static_cast<unsigned>(opt->max_dims), static_cast<unsigned>(opt->max_dims));
      }
      if (!reserve(&im->bytes, &im->bytes_cap, i + 1))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu bytes", i + 1);
      im->bytes[i++] = static_cast<uint8_t>(v & 0xff);  // two's complement for the signed types
      bool closed;
      p = next_element(q, &closed);
      if (!p) return json_fail(W_EMB, k);
      if (closed) break;
    }
    *past = p;
    return emit_bytes(k, im->bytes, i, order, at);
  }

  // The whitespace after an array's ',' in a pretty-printed body (a newline and the same
  // indent every time): its bytes (at most 16, as two words with masks) and length.
  struct ws_predictor {
    uint64_t w0 = 0, w1 = 0, m0 = 0, m1 = 0;
    size_t len = 0;  // 0: nothing learned (never matches: is_ws(p[1]) held)
    // [p, p + len) is the run, and 18 bytes are readable there
    bool same(const uint8_t *p, const uint8_t *end) const {
      return len && end - p >= 17 &&
             (((embd_dec_load(p) ^ w0) & m0) | ((embd_dec_load(p + 8) ^ w1) & m1)) == 0;
    }
    void learn(const uint8_t *p, const uint8_t *q, const uint8_t *end) {
      len = static_cast<size_t>(q - p);
      if (len > 16 || end - p < 17) {
        len = 0;
        return;
      }
      w0 = embd_dec_load(p), w1 = embd_dec_load(p + 8);
      m0 = len >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * len)) - 1;
      m1 = len >= 16 ? ~uint64_t{0} : len <= 8 ? 0 : (uint64_t{1} << (8 * (len - 8))) - 1;
    }
  };

  // Element i of vector k at p by the careful parser (decimal.h: any digit count, every
  // grammar fault named): *f and *q (past it) set, or the error.
  embd_result careful_number(size_t k, size_t i, const uint8_t *p, float *f, const uint8_t **q) {
    *q = embd_decimal_f32(&j, p, f);
    if (!*q) {
      if (*p != '-' && static_cast<unsigned>(*p - '0') >= 10) {
        j.fault_at = nullptr;  // not a number at all: a shape error if it is a value
        return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not a number", W_ELEM, k, i);
      }
      return json_fail(W_ELEM, k, i);
    }
    if (__builtin_isinf(*f)) {
      char nm[80];
      where(nm, sizeof nm, W_ELEM, k, i);
      return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "%s: %.*s is out of the float32 range", nm,
                  static_cast<int>(*q - p > 40 ? 40 : *q - p), p);
    }
    return EMBD_OK;
  }

  // Vector k as an array of numbers at p (its '['), a float dtype asked. *past: after the
  // ']'. Written straight into the float32 row; kept in another dtype, into a scratch
  // row first (emit_floats checks every value is one of the dtype's).
  embd_result numbers(size_t k, const uint8_t *p, const uint8_t **past) {
    if (is_integer(dtype)) return integers(k, p, past);
    size_t at = off(p);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_EMB, k);
    if (*p == ']') return check_dims(k, 0, at);
    float **buf = keep ? &im->rowf : &im->fv;
    size_t *bcap = keep ? &im->rowf_cap : &im->fv_cap;
    if (keep && dims && !reserve(buf, bcap, dims))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu floats", dims);
    size_t cap = dims;  // floats the row may hold (first row: grows)
    if (dims == 0) {
      if (!reserve(buf, bcap, 256)) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory");
      cap = *bcap;
    }
    // The first row (dims unknown) is row 0 of the buffer: base is 0 then.
    float *row = *buf + (keep ? 0 : (base + k) * dims);
    size_t i = 0;
    const uint8_t *end = j.end;
    ws_predictor ws_run;
    // The kernel only where the active one can take numbers (not the scalar tier's: this
    // loop is its reference), asked once per array; after one that took nothing, the
    // next 16 elements are parsed here.
    const bool use_kernel = embd_floatarray_takes_();
    unsigned kernel_skip = 0;
    for (;;) {
      // p: at an element (not whitespace). The float-array kernel first (the family's
      // implementation for this CPU, floatarray_kernel.h): it takes a run of numbers with
      // their separators when it can decide them exactly, never an error, and leaves p at
      // the next element. Then one number here: the fast parser (its values are finite by
      // construction: at most 2^53 * 10^22), the careful one for everything else.
      if (__builtin_expect(use_kernel, 0)) {  // out of line: the scalar tier's loop stays as it was
        if (kernel_skip) {
          kernel_skip--;
        } else if (i < cap) {
          const uint8_t *nx;
          const size_t run = embd_floatarray_run(j.base, p, end, row + i, cap - i, &nx);
          i += run;
          p = nx;
          kernel_skip = run ? 0 : 16;
        }
      }
      float f;
      const uint8_t *q = end - p >= EMBD_DEC_FAST_READ ? embd_decimal_f32_fast(p, j.base, &f) : nullptr;
      if (__builtin_expect(!q, 0)) {
        if (embd_result r = careful_number(k, i, p, &f, &q)) return r;
      }
      if (__builtin_expect(i == cap, 0)) {
        char nm[64];
        emb_name(nm, sizeof nm, k);
        if (dims) return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: more than %zu numbers, the others have %zu", nm, dims, dims);
        if (opt && opt->max_dims && i == opt->max_dims)
          return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: more than %u numbers, above max_dims %u", nm,
                      static_cast<unsigned>(opt->max_dims), static_cast<unsigned>(opt->max_dims));
        if (!reserve(buf, bcap, cap + 1))
          return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu floats", cap + 1);
        cap = *bcap;
        row = *buf;
      }
      row[i++] = f;
      p = q;
      if (end - p >= 2 && *p == ',') {  // compact "1,2", or pretty ",\n        2"
        const uint8_t *nx = p + 1;
        if (is_ws(p[1])) {
          // Pretty-printed: the same newline and indent after every ','. The next number
          // is assumed where the last one's whitespace ended (an address known at once,
          // not after scanning), and the bytes are checked against that run beside it;
          // any other whitespace is scanned and becomes the run to expect.
          nx += ws_run.len;
          if (!ws_run.same(p + 1, end) || is_ws(*nx)) {
            nx = embd_json_ws(p + 1, end);
            ws_run.learn(p + 1, nx, end);
          }
        }
        // '-' or a digit, as one range test and a bit of 0x1FF9 ('-', not "./", then the
        // ten digits): no branch on the sign, which is a coin toss in an embedding
        const unsigned c = static_cast<unsigned>(nx < end ? *nx : 0) - '-';
        if (c < 13 && ((0x1FF9u >> c) & 1)) {
          p = nx;
          continue;
        }
      }
      bool closed;  // the end, or anything else: the careful path says which
      p = next_element(p, &closed);
      if (!p) return json_fail(W_EMB, k);
      if (closed) break;
    }
    *past = p;
    if (keep) {
      if (dims && i != dims) {
        char nm[64];
        emb_name(nm, sizeof nm, k);
        return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: %zu numbers, the others have %zu", nm, i, dims);
      }
      return emit_floats(k, row, i, at);
    }
    if (dims == 0) return check_dims(k, i, at);
    if (i != dims) {
      char nm[64];
      emb_name(nm, sizeof nm, k);
      return fail(EMBD_ERR_OPENAI_DIMS, at, "%s: %zu numbers, the others have %zu", nm, i, dims);
    }
    return EMBD_OK;
  }

  // Vector k at p: a number array or a base64 string of the asked dtype, in byte order o.
  embd_result embedding(size_t k, const uint8_t *p, const uint8_t **past, embd_byte_order o) {
    if (dims) {  // room for this row before it is written
      if (embd_result r = grow_rows(base + k + 1)) return r;
    }
    if (*p == '"') return base64_string(k, p, past, o);
    if (*p == '[') return numbers(k, p, past);
    return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an array of numbers or a base64 string", W_EMB, k);
  }

  embd_result oom_items(size_t n_) {
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu items", n_);
  }

  // A string at p naming a dtype or a byte order (vLLM metadata): its unescaped text in
  // b (NUL-terminated, cut to cap - 1), or false (*past unset) when it is not a string.
  bool short_string(const uint8_t *p, char *b, size_t cap, size_t *len, const uint8_t **past) {
    if (*p != '"') return false;
    const uint8_t *q = embd_json_string(&j, p, nullptr);
    if (!q) return false;
    *past = q;
    size_t m = embd_json_unescape(p + 1, q - 1, reinterpret_cast<uint8_t *>(b), cap - 1);
    *len = m;
    b[m < cap - 1 ? m : cap - 1] = 0;
    return true;
  }

  // vLLM metadata item k's fields other than index: embed_dtype, endianness, start, end,
  // shape (all required). p at the value of key id.
  embd_result meta_field(size_t k, key_id id, const uint8_t *p, const uint8_t **q, unsigned *seen) {
    meta_item &mi = im->meta[k];
    static const char *const fname[] = {"embed_dtype", "endianness", "start", "end", "shape"};
    const unsigned bit = 1u << (id - K_EMBED_DTYPE);
    const char *name = fname[id - K_EMBED_DTYPE];
    size_t w = off(p);
    if (*seen & bit) return fail(EMBD_ERR_OPENAI_METADATA, w, "data[%zu]: two \"%s\" keys", k, name);
    *seen |= bit;
    if (id == K_EMBED_DTYPE || id == K_ENDIANNESS) {
      char b[24];
      size_t m = 0;
      if (!short_string(p, b, sizeof b, &m, q)) {
        if (!embd_json_type_of(&j, p, nullptr)) return json_fail(W_FIELD, k);
        return type_fail(p, EMBD_ERR_OPENAI_METADATA, "not a string", W_FIELD, k);
      }
      if (id == K_EMBED_DTYPE) {
        embd_dtype t;
        if (m >= sizeof b - 1 || embd_dtype_parse(b, m, &t) != EMBD_OK)
          return fail(EMBD_ERR_OPENAI_METADATA, w, "data[%zu].embed_dtype: \"%s\" is not a dtype", k, b);
        if (t != dtype)
          return fail(EMBD_ERR_OPENAI_DTYPE, w, "data[%zu].embed_dtype: %s, but %s was asked", k,
                      embd_dtype_name(t), embd_dtype_name(dtype));
        return EMBD_OK;
      }
      // "native" is the server's order, which the caller asked for knowing it (byte_order).
      int o = m == 6 && !memcmp(b, "little", 6) ? EMBD_ORDER_LE : m == 3 && !memcmp(b, "big", 3) ? EMBD_ORDER_BE
              : m == 6 && !memcmp(b, "native", 6) ? -1 : -2;
      if (o == -2)
        return fail(EMBD_ERR_OPENAI_METADATA, w, "data[%zu].endianness: \"%s\" is not little, big or native", k, b);
      if (o >= 0 && embd_dtype_bits(dtype) >= 16 && o != static_cast<int>(order))
        return fail(EMBD_ERR_OPENAI_DTYPE, w, "data[%zu].endianness: %s, but %s was asked", k, b,
                    order == EMBD_ORDER_BE ? "big" : "little");
      return EMBD_OK;
    }
    if (id == K_START || id == K_END) {
      uint64_t x = 0;
      int u = uint_value(p, &x, q);
      if (u < 0) return json_fail(W_FIELD, k);
      if (u == 0) return fail(EMBD_ERR_OPENAI_METADATA, w, "data[%zu].%s: not a non-negative integer", k, name);
      (id == K_START ? mi.start : mi.end) = x;
      (id == K_START ? mi.start_at : mi.end_at) = w;
      return EMBD_OK;
    }
    // shape: a non-empty array of positive integers; dims = their product.
    mi.shape_at = w;
    if (*p != '[') return type_fail(p, EMBD_ERR_OPENAI_METADATA, "not an array", W_FIELD, k);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_FIELD, k);
    size_t d = 1, parts = 0;
    bool closed = *p == ']';
    if (closed) p++;
    while (!closed) {
      uint64_t x = 0;
      const uint8_t *e2 = nullptr;
      int u = uint_value(p, &x, &e2);
      if (u < 0) return json_fail(W_FIELD, k);
      if (u == 0 || x == 0)
        return fail(EMBD_ERR_OPENAI_METADATA, off(p), "data[%zu].shape[%zu]: not a positive integer", k, parts);
      if (x > SIZE_MAX / d)
        return fail(EMBD_ERR_OPENAI_METADATA, off(p), "data[%zu].shape: too many elements", k);
      d *= static_cast<size_t>(x);
      parts++;
      p = next_element(e2, &closed);
      if (!p) return json_fail(W_FIELD, k);
    }
    if (!parts) return fail(EMBD_ERR_OPENAI_METADATA, w, "data[%zu].shape: empty", k);
    mi.dims = d;
    *q = p;
    return EMBD_OK;
  }

  // Item k at p (its '{'). *past: after the '}'.
  embd_result item(size_t k, const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    bool have_index = false, have_emb = false;
    unsigned seen = 0;  // metadata fields
    if (list == L_META) {
      if (!reserve(&im->meta, &im->meta_cap, k + 1)) return oom_items(k + 1);
      im->meta[k] = meta_item{};
      im->meta[k].at = at;
      im->meta[k].k = k;
    }
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_ITEM, k);
    if (*p != '}') {
      for (;;) {
        key_id id = K_OTHER;
        p = key(p, &id);
        if (!p) return json_fail(W_ITEM, k);
        const uint8_t *q = nullptr;
        if (id == K_INDEX) {
          size_t w = off(p);
          if (have_index) return fail(EMBD_ERR_OPENAI_INDEX, w, "data[%zu]: two \"index\" keys", k);
          uint64_t x = 0;
          int u = uint_value(p, &x, &q);
          if (u < 0) return json_fail(W_INDEX, k);
          if (u == 0 || x > SIZE_MAX) return fail(EMBD_ERR_OPENAI_INDEX, w, "data[%zu].index: not a non-negative integer", k);
          im->idx[k] = {static_cast<size_t>(x), w};
          have_index = true;
        } else if (id == K_EMBEDDING && list != L_META) {
          if (have_emb) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "data[%zu]: two \"embedding\" keys", k);
          if (embd_result r = embedding(k, p, &q, order)) return r;
          have_emb = true;
        } else if (list == L_META && id >= K_EMBED_DTYPE && id <= K_SHAPE) {
          if (embd_result r = meta_field(k, id, p, &q, &seen)) return r;
        } else {
          q = embd_json_value(&j, p);
          if (!q) return json_fail(W_ITEM, k);
        }
        bool closed;
        p = next_member(q, &closed);
        if (closed) break;
        if (!p) return json_fail(W_ITEM, k);
      }
    } else {
      p++;
    }
    *past = p;
    if (!have_index)
      return fail(list == L_META ? EMBD_ERR_OPENAI_METADATA : EMBD_ERR_OPENAI_INDEX, at, "data[%zu]: no \"index\"", k);
    if (list == L_META) {
      static const char *const fname[] = {"embed_dtype", "endianness", "start", "end", "shape"};
      for (unsigned b = 0; b < 5; b++)
        if (!(seen & (1u << b))) return fail(EMBD_ERR_OPENAI_METADATA, at, "data[%zu]: no \"%s\"", k, fname[b]);
      return EMBD_OK;
    }
    if (!have_emb) return fail(EMBD_ERR_OPENAI_SHAPE, at, "data[%zu]: no \"embedding\"", k);
    return EMBD_OK;
  }

  // The n items read (their indexes in im->idx): the count against expected_count, each
  // index in 0 .. n-1 once (reported in item order), then, with `permute`, the rows (in
  // item order) put in index order. at: the list's byte.
  embd_result finish_items(size_t at, bool permute) {
    size_t want = opt ? opt->expected_count : 0;
    if (want && n != want) {
      char ln[48];
      where(ln, sizeof ln, W_DATA, 0, 0);
      return fail(EMBD_ERR_OPENAI_COUNT, at, "%s: %zu items, expected %zu", ln, n, want);
    }
    if (!n) return EMBD_OK;
    if (!reserve(&im->inv, &im->inv_cap, n) || !reserve(&im->tmp, &im->tmp_cap, row_bytes ? row_bytes : 1))
      return oom_items(n);
    size_t *inv = im->inv;
    for (size_t i = 0; i < n; i++) inv[i] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      const item_index &x = im->idx[i];
      if (x.index >= n)
        return fail(EMBD_ERR_OPENAI_INDEX, x.at, "data[%zu].index: %zu out of range (%zu items)", i, x.index, n);
      if (inv[x.index] != SIZE_MAX)
        return fail(EMBD_ERR_OPENAI_INDEX, x.at, "data[%zu].index: %zu already taken by data[%zu]", i, x.index,
                    inv[x.index]);
      inv[x.index] = i;
    }
    if (!permute) return EMBD_OK;
    // Rows sit in item order; put them in index order (inv[t] = the item for row t).
    uint8_t *rows = (keep ? im->bv : reinterpret_cast<uint8_t *>(im->fv)) + base * row_bytes;
    const size_t rb = row_bytes;
    for (size_t s = 0; s < n; s++) {
      if (inv[s] == s) continue;
      memcpy(im->tmp, rows + s * rb, rb);
      size_t t = s;
      for (;;) {
        size_t from = inv[t];
        inv[t] = t;
        if (from == s) {
          memcpy(rows + t * rb, im->tmp, rb);
          break;
        }
        memcpy(rows + t * rb, rows + from * rb, rb);
        t = from;
      }
    }
    return EMBD_OK;
  }

  // data at p. *past: after its ']'.
  embd_result data(const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    if (*p != '[') return type_fail(p, list == L_META ? EMBD_ERR_OPENAI_METADATA : EMBD_ERR_OPENAI_SHAPE,
                                    "not an array", W_DATA);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_DATA);
    size_t want = opt ? opt->expected_count : 0;
    size_t k = 0;
    if (*p != ']') {
      for (;;) {
        const uint8_t *q = nullptr;
        if (want && k == want) {  // count the rest for the message, checking them
          size_t more = 0;
          for (bool closed = false; !closed; more++) {
            q = embd_json_value(&j, p);
            if (!q) return json_fail(W_ITEM, k + more);
            p = next_element(q, &closed);
            if (!p) return json_fail(W_DATA);
          }
          return fail(EMBD_ERR_OPENAI_COUNT, at, "data: %zu items, expected %zu", k + more, want);
        }
        if (*p != '{')
          return type_fail(p, list == L_META ? EMBD_ERR_OPENAI_METADATA : EMBD_ERR_OPENAI_SHAPE, "not an object",
                           W_ITEM, k);
        if (!reserve(&im->idx, &im->idx_cap, k + 1)) return oom_items(k + 1);
        if (embd_result r = item(k, p, &q)) return r;
        k++;
        bool closed;
        p = next_element(q, &closed);
        if (!p) return json_fail(W_DATA);
        if (closed) break;
      }
      *past = p;
    } else {
      *past = p + 1;
    }
    n = k;
    return finish_items(at, list != L_META);
  }

  // A list of vectors at p (Cohere: "embeddings": [[...], ...] or one type's list of the
  // by-type object), placed by position; o: the byte order of base64 strings in it.
  embd_result vector_list(const uint8_t *p, const uint8_t **past, embd_byte_order o) {
    size_t at = off(p);
    if (*p != '[') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an array", W_DATA);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_DATA);
    size_t k = 0;
    if (*p != ']') {
      for (;;) {
        const uint8_t *q = nullptr;
        if (!reserve(&im->idx, &im->idx_cap, k + 1)) return oom_items(k + 1);
        im->idx[k] = {k, off(p)};
        if (embd_result r = embedding(k, p, &q, o)) return r;
        k++;
        bool closed;
        p = next_element(q, &closed);
        if (!p) return json_fail(W_DATA);
        if (closed) break;
      }
      *past = p;
    } else {
      *past = p + 1;
    }
    n = k;
    return finish_items(at, false);  // already in index order
  }

  // Cohere's embeddings-by-type object at p: the list of the asked dtype's key (f32:
  // "float", else "base64", float32 little-endian strings), the others only checked.
  embd_result by_type(const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    key_id want = dtype == EMBD_DTYPE_F32 ? K_T_FLOAT : dtype == EMBD_DTYPE_INT8 ? K_T_INT8
                  : dtype == EMBD_DTYPE_UINT8 ? K_T_UINT8 : dtype == EMBD_DTYPE_BINARY ? K_T_BINARY
                  : dtype == EMBD_DTYPE_UBINARY ? K_T_UBINARY : K_OTHER;
    const uint8_t *b64 = nullptr;  // the "base64" list, for f32 when there is no "float"
    bool found = false;
    char keys[96] = "";  // the keys present, for the message
    size_t kl = 0;
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_BODY);
    if (*p == '}') {
      p++;
    } else {
      for (;;) {
        const uint8_t *ks = p;
        key_id id = K_OTHER;
        p = key(p, &id);
        if (!p) return json_fail(W_BODY);
        // ks .. the key's closing quote, raw (escapes shown as they are), for the message
        const uint8_t *ke = embd_json_string(&j, ks, nullptr);  // valid: key() read it
        if (ke && kl + 2 < sizeof keys) {
          int w = snprintf(keys + kl, sizeof keys - kl, "%s%.*s", kl ? ", " : "", static_cast<int>(ke - ks - 2), ks + 1);
          if (w > 0) kl += static_cast<size_t>(w) < sizeof keys - kl ? static_cast<size_t>(w) : sizeof keys - kl - 1;
        }
        const uint8_t *q = nullptr;
        if (id != K_OTHER && id == want) {
          if (found) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "embeddings: two \"%s\" keys", cohere_names[id - K_T_FLOAT]);
          found = true;
          list = L_TYPED;
          typed = cohere_names[id - K_T_FLOAT];
          if (embd_result r = vector_list(p, &q, order)) return r;
        } else {
          if (id == K_T_BASE64 && !b64) b64 = p;
          q = embd_json_value(&j, p);
          if (!q) return json_fail(W_BODY);
        }
        bool closed;
        p = next_member(q, &closed);
        if (closed) break;
        if (!p) return json_fail(W_BODY);
      }
    }
    *past = p;
    if (found) return EMBD_OK;
    if (want == K_T_FLOAT && b64) {  // validated above: decoded now
      list = L_TYPED;
      typed = "base64";
      const uint8_t *q = nullptr;
      return vector_list(b64, &q, EMBD_ORDER_LE);
    }
    return fail(EMBD_ERR_OPENAI_DTYPE, at, "embeddings: no \"%s\" list for %s (the keys are: %s)",
                want == K_OTHER ? embd_dtype_name(dtype) : cohere_names[want - K_T_FLOAT],
                embd_dtype_name(dtype), kl ? keys : "none");
  }

  // model at p: a string is kept (at most 127 bytes, cut at a character boundary, and at
  // a U+0000); anything else is model "".
  embd_result model_value(const uint8_t *p, const uint8_t **past) {
    model[0] = 0;
    model_truncated = 0;
    if (*p != '"') {
      *past = embd_json_value(&j, p);
      return *past ? EMBD_OK : json_fail(W_MODEL);
    }
    const uint8_t *q = embd_json_string(&j, p, nullptr);
    if (!q) return json_fail(W_MODEL);
    *past = q;
    uint8_t b[sizeof model];
    size_t m = embd_json_unescape(p + 1, q - 1, b, sizeof b);
    size_t keep_ = m < sizeof b ? m : sizeof b;
    const void *nul = memchr(b, 0, keep_);
    if (nul) {
      m = static_cast<size_t>(static_cast<const uint8_t *>(nul) - b);
      model_truncated = 1;
    } else if (m > sizeof model - 1) {
      m = sizeof model - 1;
      while (m && (b[m] & 0xC0) == 0x80) m--;  // b[m] starts the first character left out
      model_truncated = 1;
    }
    memcpy(model, b, m);
    model[m] = 0;
    return EMBD_OK;
  }

  // usage at p: well-formed or reported absent; only malformed JSON is an error.
  embd_result usage_value(const uint8_t *p, const uint8_t **past) {
    has_usage = 0;
    if (*p != '{') {
      *past = embd_json_value(&j, p);
      return *past ? EMBD_OK : json_fail(W_USAGE);
    }
    bool pt = false, tt = false, bad = false;
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_USAGE);
    if (*p == '}') {
      *past = p + 1;
      return EMBD_OK;
    }
    for (;;) {
      key_id id = K_OTHER;
      p = key(p, &id);
      if (!p) return json_fail(W_USAGE);
      const uint8_t *q = nullptr;
      if (id == K_PROMPT || id == K_TOTAL) {
        uint64_t x = 0;
        int u = uint_value(p, &x, &q);
        if (u < 0) return json_fail(W_USAGE);
        if (u == 0) bad = true;
        else if (id == K_PROMPT) prompt_tokens = x, pt = true;
        else total_tokens = x, tt = true;
      } else {
        q = embd_json_value(&j, p);
        if (!q) return json_fail(W_USAGE);
      }
      bool closed;
      p = next_member(q, &closed);
      if (closed) break;
      if (!p) return json_fail(W_USAGE);
    }
    *past = p;
    has_usage = pt && tt && !bad;
    return EMBD_OK;
  }

  // The whole text: an object holding "data" (OpenAI; or a vLLM bytes body's metadata
  // with list == L_META) or, not both, Cohere's "embeddings".
  embd_result run() {
    const uint8_t *p = nest_at ? nest_at : j.base, *end = j.end;
    const bool meta = list == L_META;
    // RFC 8259 8.1: a parser may ignore a byte order mark; some HTTP stacks add one.
    if (!nest_at && end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
    p = ws(p, meta ? "before any value (the metadata is empty)" : "before any value (the body is empty)");
    if (!p) return json_fail(W_BODY);
    const embd_result shape = meta ? EMBD_ERR_OPENAI_METADATA : EMBD_ERR_OPENAI_SHAPE;
    if (*p != '{') {
      const uint8_t *q;
      const char *t = embd_json_type_of(&j, p, &q);
      if (!t) return json_fail(W_BODY);
      return fail(shape, off(p), "the %s is not a JSON object but %s", text, t);
    }
    bool have_data = false, have_emb = false;
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_BODY);
    if (*p == '}') {
      p++;
    } else {
      for (;;) {
        key_id id = K_OTHER;
        p = key(p, &id);
        if (!p) return json_fail(W_BODY);
        const uint8_t *q = nullptr;
        if (id == K_DATA || (id == K_EMBEDDINGS && !meta)) {
          if (have_data || have_emb)
            return fail(shape, off(p), "%s", have_data == (id == K_DATA) && have_emb == (id == K_EMBEDDINGS)
                                                 ? (id == K_DATA ? "two \"data\" keys" : "two \"embeddings\" keys")
                                                 : "both \"data\" and \"embeddings\"");
          if (id == K_DATA) {
            have_data = true;
            if (embd_result r = data(p, &q)) return r;
          } else {
            have_emb = true;
            if (*p == '{') {
              if (embd_result r = by_type(p, &q)) return r;
            } else {
              list = L_V1;
              if (*p != '[') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an array or an object", W_DATA);
              if (embd_result r = vector_list(p, &q, order)) return r;
            }
          }
        } else if (id == K_MODEL) {
          if (embd_result r = model_value(p, &q)) return r;
        } else if (id == K_USAGE) {
          if (embd_result r = usage_value(p, &q)) return r;
        } else {
          q = embd_json_value(&j, p);
          if (!q) return json_fail(W_BODY);
        }
        bool closed;
        p = next_member(q, &closed);
        if (closed) break;
        if (!p) return json_fail(W_BODY);
      }
    }
    if (nest_at) {
      nest_past = p;
    } else {
      p = embd_json_ws(p, end);
      if (p != end) {
        embd_json_fault(&j, p, "content after the %s's closing '}'", text);
        return json_fail(W_BODY);
      }
    }
    if (!have_data && !have_emb && nest_at)
      return fail(shape, off(nest_at), "response.body: no \"data\" array (or Cohere \"embeddings\")");
    if (!have_data && !have_emb)
      return embd_fail(err, shape, 0, meta ? "no \"data\" array in the metadata"
                                           : "no \"data\" array (or Cohere \"embeddings\") in the body");
    return EMBD_OK;
  }


  // ---- A batch output line (embd_openai_batch_line) ----

  // The string at p (its '"') into *b; after it, or nullptr (fault recorded).
  const uint8_t *str_ref(const uint8_t *p, bref *b) {
    int esc = 0;
    const uint8_t *q = embd_json_string(&j, p, &esc);
    if (!q) return nullptr;
    b->p = p + 1;
    b->q = q - 1;
    b->esc = esc != 0;
    b->set = true;
    return q;
  }

  // An error at p: a string is its message; an object gives "message", "code" (a string,
  // or a number kept as its text), "type", and one nested "error" level (vLLM's
  // ErrorResponse {"error": {...}}); anything else, and every other key, is checked as
  // JSON only. After it, or nullptr (fault recorded).
  const uint8_t *err_value(const uint8_t *p, berr *f, int depth) {
    if (*p == '"') return str_ref(p, &f->message);
    if (*p != '{') return embd_json_value(&j, p);
    p = ws(p + 1, "inside an object");
    if (!p) return nullptr;
    if (*p == '}') return p + 1;
    for (;;) {
      key_id id = K_OTHER;
      p = key(p, &id);
      if (!p) return nullptr;
      const uint8_t *q;
      if (id == B_MESSAGE && *p == '"') {
        q = str_ref(p, &f->message);
      } else if (id == B_TYPE && *p == '"') {
        q = str_ref(p, &f->type);
      } else if (id == B_CODE && *p == '"') {
        q = str_ref(p, &f->code);
      } else if (id == B_CODE && (*p == '-' || static_cast<unsigned>(*p - '0') < 10)) {
        q = embd_json_number(&j, p);
        if (q) f->code = bref{p, q, false, true};
      } else if (id == B_ERROR && depth == 0 && (*p == '{' || *p == '"')) {
        q = err_value(p, f, 1);
      } else {
        q = embd_json_value(&j, p);
      }
      if (!q) return nullptr;
      bool closed;
      p = next_member(q, &closed);
      if (closed) return p;
      if (!p) return nullptr;
    }
  }

  static bool ok_status(uint64_t s) { return s >= 200 && s <= 299; }

  // response.body at p, the status known: a 2xx body is the embeddings response (decoded
  // into e by run(), the same walker as embd_openai_decode); another status's body is an
  // error ({"error": {...}}). *past: after it.
  embd_result body_value(const uint8_t *p, const uint8_t **past, batch_out *bo) {
    if (!ok_status(bo->status)) {
      *past = err_value(p, &bo->body, 0);
      return *past ? EMBD_OK : json_fail(W_RBODY);
    }
    if (*p == 'n') {  // null: no body (an error elsewhere, or a shape error at the end)
      *past = embd_json_value(&j, p);
      return *past ? EMBD_OK : json_fail(W_RBODY);
    }
    if (*p != '{') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an object", W_RBODY);
    bkeys = false;
    nest_at = p;
    embd_result r = run();
    nest_at = nullptr;
    bkeys = true;
    if (r) return r;
    bo->decoded = true;
    *past = nest_past;
    return EMBD_OK;
  }

  // The line's "response" object at p (its '{'): status_code, body (read when the status
  // is known: at once when it came first, else after the object). *past: after it.
  embd_result response_value(const uint8_t *p, const uint8_t **past, batch_out *bo) {
    const size_t at = off(p);
    const uint8_t *body = nullptr;
    bool body_done = false;
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_RESP);
    if (*p == '}') {
      p++;
    } else {
      for (;;) {
        key_id id = K_OTHER;
        p = key(p, &id);
        if (!p) return json_fail(W_RESP);
        const uint8_t *q = nullptr;
        if (id == B_STATUS) {
          if (bo->have_status) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "response: two \"status_code\" keys");
          uint64_t x = 0;
          int u = uint_value(p, &x, &q);
          if (u < 0) return json_fail(W_RESP);
          if (u == 0) return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "status_code: not an HTTP status", W_RESP);
          if (x < 100 || x > 599)
            return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "response.status_code: %llu is not an HTTP status (100..599)",
                        static_cast<unsigned long long>(x));
          bo->status = x;
          bo->have_status = true;
        } else if (id == B_BODY) {
          if (body) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "response: two \"body\" keys");
          body = p;
          if (bo->have_status) {
            body_done = true;
            if (embd_result r = body_value(p, &q, bo)) return r;
          } else {
            q = embd_json_value(&j, p);  // read once the status is known
            if (!q) return json_fail(W_RBODY);
          }
        } else {
          q = embd_json_value(&j, p);
          if (!q) return json_fail(W_RESP);
        }
        bool closed;
        p = next_member(q, &closed);
        if (closed) break;
        if (!p) return json_fail(W_RESP);
      }
    }
    *past = p;
    if (!bo->have_status) return fail(EMBD_ERR_OPENAI_SHAPE, at, "response: no \"status_code\"");
    if (body && !body_done) {
      const uint8_t *q = nullptr;
      if (embd_result r = body_value(body, &q, bo)) return r;
    }
    return EMBD_OK;
  }

  // The whole line: one object ({"id", "custom_id", "response", "error"} in any order,
  // other keys checked only), then at most spaces or tabs and one "\n" or "\r\n".
  embd_result batch_line(batch_out *bo) {
    const uint8_t *p = j.base, *end = j.end;
    bkeys = true;
    if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p >= end || *p == '\n' || *p == '\r') {
      embd_json_fault(&j, p, "the line ends before any value (an empty line)");
      return json_fail(W_BODY);
    }
    if (*p != '{') {
      const char *t = embd_json_type_of(&j, p, nullptr);
      if (!t) return json_fail(W_BODY);
      return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "not a batch output line: not a JSON object but %s", t);
    }
    bool have_error = false;
    p = ws(p + 1, "inside an object");
    if (!p) return json_fail(W_BODY);
    if (*p == '}') {
      p++;
    } else {
      for (;;) {
        key_id id = K_OTHER;
        p = key(p, &id);
        if (!p) return json_fail(W_BODY);
        const uint8_t *q = nullptr;
        if (id == B_CUSTOM_ID) {
          if (bo->custom_id.set) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "two \"custom_id\" keys");
          if (*p != '"') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not a string", W_CUSTOM);
          q = str_ref(p, &bo->custom_id);
          if (!q) return json_fail(W_BODY);
        } else if (id == B_RESPONSE) {
          if (bo->have_response) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "two \"response\" keys");
          bo->have_response = true;
          if (*p == '{') {
            if (embd_result r = response_value(p, &q, bo)) return r;
          } else if (*p == 'n') {
            q = embd_json_value(&j, p);
            if (!q) return json_fail(W_RESP);
          } else {
            return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an object or null", W_RESP);
          }
        } else if (id == B_ERROR) {
          if (have_error) return fail(EMBD_ERR_OPENAI_SHAPE, off(p), "two \"error\" keys");
          have_error = true;
          bo->top_error = *p != 'n';
          q = err_value(p, &bo->top, 0);
          if (!q) return json_fail(W_ERROR);
        } else {
          q = embd_json_value(&j, p);
          if (!q) return json_fail(W_BODY);
        }
        bool closed;
        p = next_member(q, &closed);
        if (closed) break;
        if (!p) return json_fail(W_BODY);
      }
    }
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == '\n') p++;
    else if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') p += 2;
    if (p != end) {
      embd_json_fault(&j, p, "content after the line's closing '}' (one line, then at most \"\\n\")");
      return json_fail(W_BODY);
    }
    if (!bo->custom_id.set) return fail(EMBD_ERR_OPENAI_SHAPE, 0, "not a batch output line: no \"custom_id\"");
    const bool resp = bo->have_status;  // a response object (its status_code is required)
    if (!resp && !bo->top_error)
      return fail(EMBD_ERR_OPENAI_SHAPE, 0, "not a batch output line: no \"response\" and no \"error\"");
    bo->failed = !resp || !ok_status(bo->status) || bo->top_error;
    if (!bo->failed && !bo->decoded)
      return fail(EMBD_ERR_OPENAI_SHAPE, 0, "response: status %llu without an embeddings body",
                  static_cast<unsigned long long>(bo->status));
    if (bo->failed) {  // no vectors for a failed request (a body decoded before "error" came)
      n = 0;
      model[0] = 0;
      model_truncated = 0;
      has_usage = 0;
      prompt_tokens = total_tokens = 0;
    }
    return EMBD_OK;
  }

  // A vLLM bytes body after its metadata parsed: the items' byte ranges must tile the
  // body exactly (in any order: no overlap, no gap, nothing after the last), each range
  // holding its shape's elements; then row index = the bytes of its range.
  embd_result meta_rows(const uint8_t *body, size_t len) {
    for (size_t k = 0; k < n; k++) {
      const meta_item &mi = im->meta[k];
      if (mi.end < mi.start || mi.end > len)
        return fail(EMBD_ERR_OPENAI_METADATA, mi.end < mi.start ? mi.end_at : (mi.start > len ? mi.start_at : mi.end_at),
                    "data[%zu]: bytes %llu..%llu are not inside the %zu-byte body", k,
                    static_cast<unsigned long long>(mi.start), static_cast<unsigned long long>(mi.end), len);
      size_t want = 0;
      if (embd_dtype_bytes(dtype, mi.dims, &want) != EMBD_OK || want != mi.end - mi.start)
        return fail(EMBD_ERR_OPENAI_METADATA, mi.shape_at,
                    "data[%zu]: shape of %zu %s elements is not its %llu bytes %llu..%llu", k, mi.dims,
                    embd_dtype_name(dtype), static_cast<unsigned long long>(mi.end - mi.start),
                    static_cast<unsigned long long>(mi.start), static_cast<unsigned long long>(mi.end));
    }
    // Tiling: sorted by start (insertion order kept for equal starts: the later one overlaps).
    meta_item *m = im->meta;
    for (size_t a = 1; a < n; a++) {  // insertion sort: vLLM's are in order already
      meta_item t = m[a];
      size_t b = a;
      while (b > 0 && m[b - 1].start > t.start) {
        m[b] = m[b - 1];
        b--;
      }
      m[b] = t;
    }
    uint64_t pos = 0;
    for (size_t a = 0; a < n; a++) {
      if (m[a].start < pos)
        return fail(EMBD_ERR_OPENAI_METADATA, m[a].start_at, "data[%zu]: bytes %llu..%llu overlap data[%zu]'s", m[a].k,
                    static_cast<unsigned long long>(m[a].start), static_cast<unsigned long long>(m[a].end), m[a - 1].k);
      if (m[a].start > pos)
        return fail(EMBD_ERR_OPENAI_METADATA, m[a].start_at, "body bytes %llu..%llu are in no item (data[%zu] starts after them)",
                    static_cast<unsigned long long>(pos), static_cast<unsigned long long>(m[a].start), m[a].k);
      pos = m[a].end;
    }
    if (pos != len)
      return fail(EMBD_ERR_OPENAI_METADATA, 0, "body bytes %llu..%zu are in no item", static_cast<unsigned long long>(pos), len);
    // The dims (max_dims, expected_dims, all alike), only now: the ranges tile the body, so
    // the rows they allocate are bounded by its length, whatever the metadata claims.
    // All like data[0]'s first (no allocation yet: one huge item among tiny ones must not
    // size every row), the first other one in item order reported.
    if (!n) return EMBD_OK;
    size_t first = 0, bad = n;
    for (size_t a = 0; a < n; a++)
      if (m[a].k == 0) first = a;
    for (size_t a = 0; a < n; a++)
      if (m[a].dims != m[first].dims && (bad == n || m[a].k < m[bad].k)) bad = a;
    if (bad != n)
      return fail(EMBD_ERR_OPENAI_DIMS, m[bad].shape_at, "data[%zu]: %zu dims, data[0] has %zu", m[bad].k, m[bad].dims,
                  m[first].dims);
    if (embd_result r = check_dims(0, m[first].dims, m[first].shape_at)) return r;
    // Rows: item k's bytes at row index (from finish_items, each index once).
    for (size_t a = 0; a < n; a++) {
      const meta_item &mi = m[a];
      size_t row = im->idx[mi.k].index;
      if (embd_result r = emit_bytes(row, body + mi.start, static_cast<size_t>(mi.end - mi.start), order, mi.shape_at))
        return r;
    }
    return EMBD_OK;
  }
};

void clear(embd_openai_embeddings *e) {
  e->values = nullptr;
  e->data = nullptr;
  e->count = 0;
  e->dims = 0;
  e->row_bytes = 0;
  e->dtype = EMBD_DTYPE_F32;
  e->byte_order = EMBD_ORDER_LE;
  e->model[0] = 0;
  e->model_truncated = 0;
  e->has_usage = 0;
  e->prompt_tokens = e->total_tokens = 0;
  memset(e->reserved_, 0, sizeof e->reserved_);
}

enum run_kind { R_JSON, R_META, R_BYTES_ONLY, R_LINE };

struct run_args {
  run_kind kind;
  const char *json;  // the body (R_JSON) or the metadata (R_META)
  size_t len;
  const uint8_t *body;  // R_META, R_BYTES_ONLY
  size_t body_len;
  size_t dims;  // R_BYTES_ONLY
  batch_out *bo;  // R_LINE
};

// The options' new fields checked: a known dtype, order and flags.
embd_result check_options(const embd_openai_options *opt, embd_error *err) {
  if (!opt) return EMBD_OK;
  if (!EMBD_RESERVED_OK(opt)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: reserved_ fields not zero");
  // Integers, checked before they become enums (a C caller may have stored anything).
  if (opt->reserved32_)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: reserved32_ not zero");
  if (opt->dtype >= EMBD_DTYPE_COUNT_)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: dtype %llu is not a dtype",
                     static_cast<unsigned long long>(opt->dtype));
  if (opt->byte_order > EMBD_ORDER_BE)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: byte_order %u is not one",
                     static_cast<unsigned>(opt->byte_order));
  if (opt->flags & ~EMBD_OPENAI_KNOWN_FLAGS)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: unknown flags 0x%x", static_cast<unsigned>(opt->flags));
  return EMBD_OK;
}

embd_result run(embd_openai_embeddings *e, const run_args &a, const embd_openai_options *opt, embd_error *err,
                bool append) {
  if (!e || (!a.json && a.len) || (!a.body && a.body_len)) {
    if (e) clear(e);
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL embeddings, body or metadata");
  }
  if (embd_result r = check_options(opt, err)) {
    clear(e);
    return r;
  }
  const embd_dtype dtype = opt ? static_cast<embd_dtype>(opt->dtype) : EMBD_DTYPE_F32;
  const embd_byte_order order = opt ? static_cast<embd_byte_order>(opt->byte_order) : EMBD_ORDER_LE;
  const bool keep = opt && (opt->flags & EMBD_OPENAI_KEEP_DTYPE);
  if (append && e->count) {
    // The rows already there and these must be of one kind to be stitched.
    const bool had_keep = e->row_bytes != 0;
    if (had_keep != keep || (keep && (e->dtype != dtype || (embd_dtype_bits(dtype) >= 16 && e->byte_order != order)))) {
      clear(e);
      return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                       "append: the options' dtype, byte order or KEEP_DTYPE differ from the earlier responses'");
    }
  }
  impl *im = static_cast<impl *>(e->impl_);
  if (!im) {
    im = new (std::nothrow) impl;
    if (!im) {
      clear(e);
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory");
    }
    e->impl_ = im;
  }
  const size_t before = append ? e->count : 0;
  if (!append) clear(e);
  decoder d{e, im, opt, err, {}, before, before ? e->dims : 0};
  d.dtype = dtype;
  d.order = order;
  d.keep = keep;
  d.row_bytes = before ? (keep ? e->row_bytes : e->dims * sizeof(float)) : 0;
  embd_result r = EMBD_OK;
  if (a.kind == R_BYTES_ONLY) {
    embd_json_init(&d.j, "", 0);
    d.list = L_BYTES;
    size_t row = 0;
    if (a.dims == 0) {
      r = embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "bytes_only: dims 0");
    } else if (embd_dtype_bytes(dtype, a.dims, &row) != EMBD_OK) {
      r = embd_fail(err, EMBD_ERR_DTYPE_LENGTH, 0, "bytes_only: %zu dims are not a whole number of %s bytes", a.dims,
                    embd_dtype_name(dtype));
    } else if (a.body_len % row != 0) {
      r = embd_fail(err, EMBD_ERR_DTYPE_LENGTH, a.body_len - a.body_len % row,
                    "bytes_only: the %zu-byte body is not a whole number of %zu-dim %s vectors (%zu bytes each; "
                    "%zu bytes left over at body byte %zu)",
                    a.body_len, a.dims, embd_dtype_name(dtype), row, a.body_len % row, a.body_len - a.body_len % row);
    } else {
      d.n = a.body_len / row;
      size_t want = opt ? opt->expected_count : 0;
      if (want && d.n != want)
        r = embd_fail(err, EMBD_ERR_OPENAI_COUNT, 0, "bytes_only: %zu vectors, expected %zu", d.n, want);
      for (size_t k = 0; k < d.n && !r; k++) r = d.emit_bytes(k, a.body + k * row, row, order, k * row);
    }
  } else {
    embd_json_init(&d.j, a.json ? a.json : "", a.len);
    if (a.kind == R_META) {
      d.list = L_META;
      d.text = "metadata";
    }
    if (a.kind == R_LINE) {
      d.text = "line";
      r = d.batch_line(a.bo);
    } else {
      r = d.run();
    }
    if (r == EMBD_OK && a.kind == R_META) r = d.meta_rows(a.body, a.body_len);
  }
  if (r == EMBD_OK && append && before && e->model[0] && d.model[0] && strcmp(e->model, d.model) != 0)
    r = embd_fail(err, EMBD_ERR_OPENAI_MODEL, 0, "model \"%.40s\" differs from \"%.40s\" of the earlier responses",
                  d.model, e->model);
  if (r != EMBD_OK) {
    clear(e);
    return r;
  }
  // Appending to an empty e (nothing decoded yet, or after an error) is a decode.
  e->count = before + d.n;
  if (d.n) e->dims = d.dims;
  if (e->count) {
    e->values = keep ? nullptr : im->fv;
    e->data = keep ? im->bv : nullptr;
    e->row_bytes = keep ? d.row_bytes : 0;
    e->dtype = keep ? dtype : EMBD_DTYPE_F32;
    e->byte_order = keep ? order : EMBD_ORDER_LE;
  }
  if (before == 0) {
    memcpy(e->model, d.model, sizeof e->model);
    e->model_truncated = d.model_truncated;
    e->has_usage = d.has_usage;
    e->prompt_tokens = d.has_usage ? d.prompt_tokens : 0;
    e->total_tokens = d.has_usage ? d.total_tokens : 0;
  } else {
    if (!e->model[0]) {
      memcpy(e->model, d.model, sizeof e->model);
      e->model_truncated = d.model_truncated;
    }
    // usage stays reported only while every response had one.
    e->has_usage = e->has_usage && d.has_usage;
    e->prompt_tokens = e->has_usage ? e->prompt_tokens + d.prompt_tokens : 0;
    e->total_tokens = e->has_usage ? e->total_tokens + d.total_tokens : 0;
  }
  embd_no_error(err);
  return EMBD_OK;
}


// The info's strings: pointers into im->lstr (reused: a steady stream of lines of one
// shape allocates nothing after the first), each unescaped and NUL-terminated; "" (a
// static empty string) when absent. Unescaping never lengthens a string, so the raw
// lengths bound the storage.
embd_result batch_strings(impl *im, const batch_out &bo, bool all, embd_openai_batch_info *info, embd_error *err) {
  const bref *src[4] = {&bo.custom_id, nullptr, nullptr, nullptr};
  if (all) {
    src[1] = bo.top.code.set ? &bo.top.code : &bo.body.code;
    src[2] = bo.top.message.set ? &bo.top.message : &bo.body.message;
    src[3] = bo.top.type.set ? &bo.top.type : &bo.body.type;
  }
  size_t need = 0;
  for (const bref *b : src)
    if (b && b->set) need += static_cast<size_t>(b->q - b->p) + 1;
  if (need && !reserve(&im->lstr, &im->lstr_cap, need))
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for a %zu-byte batch line's strings", need);
  const char *out[4] = {"", "", "", ""};
  size_t lens[4] = {0, 0, 0, 0};
  char *w = im->lstr;
  for (int i = 0; i < 4; i++) {
    const bref *b = src[i];
    if (!b || !b->set) continue;
    size_t raw = static_cast<size_t>(b->q - b->p);
    size_t m = raw;
    if (b->esc) m = embd_json_unescape(b->p, b->q, reinterpret_cast<uint8_t *>(w), raw);
    else if (raw) memcpy(w, b->p, raw);
    w[m] = 0;
    out[i] = w;
    lens[i] = m;
    w += m + 1;
  }
  info->custom_id = out[0];
  info->custom_id_len = lens[0];
  info->error_code = out[1];
  info->error_code_len = lens[1];
  info->error_message = out[2];
  info->error_message_len = lens[2];
  info->error_type = out[3];
  info->error_type_len = lens[3];
  return EMBD_OK;
}

void info_clear(embd_openai_batch_info *info) {
  memset(info, 0, sizeof *info);
  info->custom_id = info->error_code = info->error_message = info->error_type = "";
}

}  // namespace

extern "C" {

embd_result embd_openai_batch_line(embd_openai_embeddings *e, const char *line, size_t len,
                                   const embd_openai_options *opt, embd_openai_batch_info *info, embd_error *err) {
  if (!info) {
    if (e) clear(e);
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL batch info");
  }
  info_clear(info);
  batch_out bo;
  embd_result r = run(e, {R_LINE, line, len, nullptr, 0, 0, &bo}, opt, err, false);
  impl *im = e ? static_cast<impl *>(e->impl_) : nullptr;
  if (!im) return r;
  if (r != EMBD_OK) {
    // The custom_id when it was read before the fault (naming the line in a report).
    embd_error keep;
    if (bo.custom_id.set) {
      if (err) keep = *err;
      if (batch_strings(im, bo, false, info, nullptr) == EMBD_OK && err) *err = keep;
    }
    return r;
  }
  if (embd_result r2 = batch_strings(im, bo, bo.failed, info, err)) {
    clear(e);
    info_clear(info);
    return r2;
  }
  info->status_code = bo.have_status ? static_cast<int>(bo.status) : 0;
  info->failed = bo.failed ? 1 : 0;
  return EMBD_OK;
}

int embd_openai_is_batch_line(const char *buf, size_t len) {
  if (!buf) return 0;
  const uint8_t *p = reinterpret_cast<const uint8_t *>(buf), *end = p + len;
  if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p >= end || *p != '{') return 0;
  const uint8_t *nl = static_cast<const uint8_t *>(memchr(p, '\n', static_cast<size_t>(end - p)));
  if (nl) end = nl;
  static const char key[] = "\"custom_id\"";
  const size_t kl = sizeof key - 1;
  for (const uint8_t *s = p; static_cast<size_t>(end - s) >= kl; s++) {
    s = static_cast<const uint8_t *>(memchr(s, '"', static_cast<size_t>(end - s)));
    if (!s || static_cast<size_t>(end - s) < kl) return 0;
    if (memcmp(s, key, kl) == 0) {
      const uint8_t *c = embd_json_ws(s + kl, end);
      if (c < end && *c == ':') return 1;
    }
  }
  return 0;
}

void embd_openai_init(embd_openai_embeddings *e) {
  if (e) memset(e, 0, sizeof *e);
}

void embd_openai_free(embd_openai_embeddings *e) {
  if (!e) return;
  delete static_cast<impl *>(e->impl_);
  memset(e, 0, sizeof *e);
}

embd_result embd_openai_decode(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  return run(e, {R_JSON, json, len, nullptr, 0, 0, nullptr}, opt, err, false);
}

embd_result embd_openai_append(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  return run(e, {R_JSON, json, len, nullptr, 0, 0, nullptr}, opt, err, true);
}

embd_result embd_openai_decode_bytes(embd_openai_embeddings *e, const void *body, size_t len,
                                     const char *metadata, size_t mlen, const embd_openai_options *opt,
                                     embd_error *err) {
  return run(e, {R_META, metadata, mlen, static_cast<const uint8_t *>(body), len, 0, nullptr}, opt, err, false);
}

embd_result embd_openai_decode_bytes_only(embd_openai_embeddings *e, const void *body, size_t len, size_t dims,
                                          const embd_openai_options *opt, embd_error *err) {
  return run(e, {R_BYTES_ONLY, nullptr, 0, static_cast<const uint8_t *>(body), len, dims, nullptr}, opt, err, false);
}

}  // extern "C"
