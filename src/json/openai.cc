// OpenAI-compatible /v1/embeddings response bodies -> float vectors (embd/openai.h).
//
// One strict pass over the body, no copy, nothing read past json[len]: the fields the
// decoder wants (data[].index, data[].embedding, model, usage) are read where they are,
// everything else is checked with the strict RFC 8259 pieces of json_strict.h, so a body
// that is not JSON is an error wherever its fault sits, and every error names its byte.
// Numbers become float32 through decimal.h (rounded once, at any digit count); base64
// strings go straight into their row through embd_base64_decode_f32.
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
#include "json_strict.h"

namespace {

// Grows *p to hold at least n elements of T (contents kept). false: out of memory.
template <class T>
bool reserve(T **p, size_t *cap, size_t n) {
  if (n <= *cap) return true;
  if (n > SIZE_MAX / sizeof(T)) return false;
  size_t c = *cap ? *cap : 16;
  while (c < n) c = c > SIZE_MAX / 2 / sizeof(T) ? n : c * 2;
  T *q = static_cast<T *>(realloc(*p, c * sizeof(T)));
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

struct item_index {
  size_t index;  // data[k].index
  size_t at;     // its byte, for the error
};

struct impl {
  item_index *idx = nullptr;  // per item, in item order
  size_t idx_cap = 0;
  size_t *inv = nullptr;  // inv[index] = item position; SIZE_MAX = not seen yet
  size_t inv_cap = 0;
  float *tmp = nullptr;  // one row, for the permutation
  size_t tmp_cap = 0;
  uint8_t *str = nullptr;  // an unescaped base64 string
  size_t str_cap = 0;
  ~impl() {
    free(idx);
    free(inv);
    free(tmp);
    free(str);
  }
};

// Where in the body a message is about: "data[3].embedding[5]" and the like.
enum where_kind { W_BODY, W_DATA, W_ITEM, W_INDEX, W_EMB, W_ELEM, W_MODEL, W_USAGE };

enum key_id { K_OTHER, K_DATA, K_MODEL, K_USAGE, K_INDEX, K_EMBEDDING, K_PROMPT, K_TOTAL };

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

struct decoder {
  embd_openai_embeddings *e;
  impl *im;
  const embd_openai_options *opt;
  embd_error *err;
  embd_json j;
  size_t base;   // rows already in e (append)
  size_t dims;   // 0 = not known yet
  size_t n = 0;  // items in data[]
  char model[128] = {};
  int model_truncated = 0;
  int has_usage = 0;
  uint64_t prompt_tokens = 0, total_tokens = 0;

  size_t off(const uint8_t *p) const { return static_cast<size_t>(p - j.base); }

  static void where(char *b, size_t cap, where_kind w, size_t k, size_t i) {
    switch (w) {
      case W_BODY: snprintf(b, cap, "body"); break;
      case W_DATA: snprintf(b, cap, "data"); break;
      case W_ITEM: snprintf(b, cap, "data[%zu]", k); break;
      case W_INDEX: snprintf(b, cap, "data[%zu].index", k); break;
      case W_EMB: snprintf(b, cap, "data[%zu].embedding", k); break;
      case W_ELEM: snprintf(b, cap, "data[%zu].embedding[%zu]", k, i); break;
      case W_MODEL: snprintf(b, cap, "model"); break;
      case W_USAGE: snprintf(b, cap, "usage"); break;
    }
  }

  // The fault recorded in j, as EMBD_ERR_OPENAI_JSON.
  embd_result json_fail(where_kind w, size_t k = 0, size_t i = 0) {
    char at[64];
    where(at, sizeof at, w, k, i);
    size_t o = embd_json_fault_offset(&j);
    return embd_fail(err, EMBD_ERR_OPENAI_JSON, o, "JSON: %s: %s (body byte %zu)", at, j.fault, o);
  }

  // A value of the wrong type at p: a shape error when it is valid JSON ("<where>: <its
  // type>, <want>"), the JSON error when it is not.
  embd_result type_fail(const uint8_t *p, embd_result r, const char *want, where_kind w,
                        size_t k = 0, size_t i = 0) {
    const char *t = embd_json_type_of(&j, p, nullptr);
    if (!t) return json_fail(w, k, i);
    char at[64];
    where(at, sizeof at, w, k, i);
    return embd_fail(err, r, off(p), "%s: %s (it is %s) (body byte %zu)", at, want, t, off(p));
  }

  // Past whitespace; at the end of the body: the JSON error "the text ends ...".
  const uint8_t *ws(const uint8_t *p, const char *what) {
    p = embd_json_ws(p, j.end);
    if (p >= j.end) return embd_json_fault(&j, j.end, "the body ends %s", what);
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
    if (m <= sizeof kb) {
      static const struct {
        const char *name;
        key_id id = K_OTHER;
      } names[] = {{"data", K_DATA},   {"model", K_MODEL},         {"usage", K_USAGE},
                   {"index", K_INDEX}, {"embedding", K_EMBEDDING}, {"prompt_tokens", K_PROMPT},
                   {"total_tokens", K_TOTAL}};
      for (const auto &nm : names)
        if (strlen(nm.name) == m && memcmp(nm.name, s, m) == 0) *id = nm.id;
    }
    p = ws(q, "after a key");
    if (!p) return nullptr;
    if (*p != ':') return embd_json_fault(&j, p, "expected ':' after a key");
    return ws(p + 1, "after a ':'");
  }

  // After a member's value: the position of the next key (after ','), or nullptr with
  // *closed set when the object ends (p then past the '}'); nullptr with *closed unset on
  // a fault.
  const uint8_t *next_member(const uint8_t *p, bool *closed) {
    *closed = false;
    p = ws(p, "inside an object");
    if (!p) return nullptr;
    if (*p == '}') {
      *closed = true;
      return p + 1;
    }
    if (*p != ',') return embd_json_fault(&j, p, "expected ',' or '}' after an object member");
    return ws(p + 1, "after a ','");
  }

  // After an array element: the position of the next element (after ','), or nullptr
  // with *closed set when the array ends (p then past the ']'); nullptr with *closed unset
  // on a fault.
  const uint8_t *next_element(const uint8_t *p, bool *closed) {
    *closed = false;
    p = ws(p, "inside an array");
    if (!p) return nullptr;
    if (*p == ']') {
      *closed = true;
      return p + 1;
    }
    if (*p != ',') return embd_json_fault(&j, p, "expected ',' or ']' after an array element");
    return ws(p + 1, "after a ','");
  }

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

  embd_result grow_rows(size_t rows) {
    if (dims && rows > SIZE_MAX / sizeof(float) / dims)
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%zu x %zu floats do not fit in memory", rows,
                       dims);
    if (!reserve(&e->values, &e->capacity_, rows * dims))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu x %zu floats", rows, dims);
    return EMBD_OK;
  }

  // The dims of item k's vector (first item: sets them), d > 0.
  embd_result check_dims(size_t k, size_t d, size_t at) {
    if (d == 0)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "data[%zu].embedding: empty (body byte %zu)", k, at);
    if (dims == 0) {
      if (opt && opt->max_dims && d > opt->max_dims)
        return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                         "data[%zu].embedding: %zu dims, above max_dims %u (body byte %zu)", k, d,
                         static_cast<unsigned>(opt->max_dims), at);
      dims = d;
      return grow_rows(base + k + 1);
    }
    if (d != dims)
      return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                       "data[%zu].embedding: %zu dims, the others have %zu (body byte %zu)", k, d,
                       dims, at);
    return EMBD_OK;
  }

  embd_result base64_fail(size_t k, embd_result r, const embd_error &be, size_t where) {
    return embd_fail(err, r, where, "data[%zu].embedding: base64: %s (body byte %zu)", k, be.message,
                     where);
  }

  // Base64 text s[0 .. m) of item k's embedding; `at` is the string's '"', raw: s is the
  // body itself (not an unescaped copy), so base64 offsets map to body bytes.
  embd_result base64_row(size_t k, const uint8_t *s, size_t m, size_t at, bool raw) {
    const char *p = reinterpret_cast<const char *>(s);
    embd_error be;
    size_t got = 0;
    if (m == 0) return check_dims(k, 0, at);
    // The exact float count from the length and the trailing '=' (the decoder checks all).
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
    float *row = e->values + (base + k) * dims;
    embd_result r = embd_base64_decode_f32(p, m, 0, row, dims, &got, &be);
    if (r) return base64_fail(k, r, be, raw ? at + 1 + be.offset : at);
    return EMBD_OK;
  }

  // Item k's embedding as a string at p (its '"'): base64. *past: after the string.
  embd_result base64_string(size_t k, const uint8_t *p, const uint8_t **past) {
    const uint8_t *s = p + 1;
    const uint8_t *q = static_cast<const uint8_t *>(memchr(s, '"', static_cast<size_t>(j.end - s)));
    if (q && !memchr(s, '\\', static_cast<size_t>(q - s))) {
      *past = q + 1;
      embd_result r = base64_row(k, s, static_cast<size_t>(q - s), off(p), true);
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
    return base64_row(k, im->str, m, off(p), false);
  }

  // Item k's embedding as an array at p (its '['). *past: after the ']'.
  embd_result numbers(size_t k, const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    p = ws(p + 1, "inside an array");
    if (!p) return json_fail(W_EMB, k);
    if (*p == ']') return check_dims(k, 0, at);
    size_t cap = dims;  // floats the row may hold (first row: grows)
    if (dims == 0) {
      if (!reserve(&e->values, &e->capacity_, 256))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory");
      cap = e->capacity_;
    }
    float *row = e->values + (base + k) * dims;
    size_t i = 0;
    const uint8_t *end = j.end;
    for (;;) {
      // p: at an element (not whitespace).
      float f;
      const uint8_t *q = embd_decimal_f32(&j, p, &f);
      if (__builtin_expect(!q, 0)) {
        if (*p != '-' && static_cast<unsigned>(*p - '0') >= 10) {
          j.fault_at = nullptr;  // not a number at all: a shape error if it is a value
          return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not a number", W_ELEM, k, i);
        }
        return json_fail(W_ELEM, k, i);
      }
      if (__builtin_expect(__builtin_isinf(f), 0))
        return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, off(p),
                         "data[%zu].embedding[%zu]: %.*s is out of the float32 range (body byte %zu)",
                         k, i, static_cast<int>(q - p > 40 ? 40 : q - p), p, off(p));
      if (__builtin_expect(i == cap, 0)) {
        if (dims)
          return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                           "data[%zu].embedding: more than %zu numbers, the others have %zu (body byte %zu)",
                           k, dims, dims, at);
        if (opt && opt->max_dims && i == opt->max_dims)
          return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                           "data[%zu].embedding: more than %u numbers, above max_dims %u (body byte %zu)",
                           k, static_cast<unsigned>(opt->max_dims),
                           static_cast<unsigned>(opt->max_dims), at);
        if (!reserve(&e->values, &e->capacity_, cap + 1))
          return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu floats", cap + 1);
        cap = e->capacity_;
        row = e->values;
      }
      row[i++] = f;
      p = q;
      if (p < end && *p == ',' && p + 1 < end && !is_ws(p[1])) {  // compact: "1,2"
        p++;
        continue;
      }
      bool closed;
      p = next_element(p, &closed);
      if (!p) return json_fail(W_EMB, k);
      if (closed) break;
    }
    *past = p;
    if (dims == 0) {
      if (embd_result r = check_dims(k, i, at)) return r;
      return EMBD_OK;
    }
    if (i != dims)
      return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                       "data[%zu].embedding: %zu numbers, the others have %zu (body byte %zu)", k, i,
                       dims, at);
    return EMBD_OK;
  }

  embd_result embedding(size_t k, const uint8_t *p, const uint8_t **past) {
    if (dims) {  // room for this row before it is written
      if (embd_result r = grow_rows(base + k + 1)) return r;
    }
    if (*p == '"') return base64_string(k, p, past);
    if (*p == '[') return numbers(k, p, past);
    return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an array of numbers or a base64 string", W_EMB, k);
  }

  // Item k at p (its '{'). *past: after the '}'.
  embd_result item(size_t k, const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    bool have_index = false, have_emb = false;
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
          if (have_index)
            return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w, "data[%zu]: two \"index\" keys (body byte %zu)",
                             k, w);
          uint64_t x = 0;
          int u = uint_value(p, &x, &q);
          if (u < 0) return json_fail(W_INDEX, k);
          if (u == 0 || x > SIZE_MAX)
            return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w,
                             "data[%zu].index: not a non-negative integer (body byte %zu)", k, w);
          im->idx[k] = {static_cast<size_t>(x), w};
          have_index = true;
        } else if (id == K_EMBEDDING) {
          if (have_emb) {
            size_t w = off(p);
            return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, w, "data[%zu]: two \"embedding\" keys (body byte %zu)",
                             k, w);
          }
          if (embd_result r = embedding(k, p, &q)) return r;
          have_emb = true;
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
      return embd_fail(err, EMBD_ERR_OPENAI_INDEX, at, "data[%zu]: no \"index\" (body byte %zu)", k, at);
    if (!have_emb)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "data[%zu]: no \"embedding\" (body byte %zu)", k, at);
    return EMBD_OK;
  }

  // data at p. *past: after its ']'.
  embd_result data(const uint8_t *p, const uint8_t **past) {
    size_t at = off(p);
    if (*p != '[') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an array", W_DATA);
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
          return embd_fail(err, EMBD_ERR_OPENAI_COUNT, at, "data: %zu items, expected %zu (body byte %zu)",
                           k + more, want, at);
        }
        if (*p != '{') return type_fail(p, EMBD_ERR_OPENAI_SHAPE, "not an object", W_ITEM, k);
        if (!reserve(&im->idx, &im->idx_cap, k + 1))
          return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu items", k + 1);
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
    if (want && n != want)
      return embd_fail(err, EMBD_ERR_OPENAI_COUNT, at, "data: %zu items, expected %zu (body byte %zu)", n,
                       want, at);
    if (!n) return EMBD_OK;
    // Indexes: each in 0 .. n-1, each once (reported in item order).
    if (!reserve(&im->inv, &im->inv_cap, n) || !reserve(&im->tmp, &im->tmp_cap, dims))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu items", n);
    size_t *inv = im->inv;
    for (size_t i = 0; i < n; i++) inv[i] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      const item_index &x = im->idx[i];
      if (x.index >= n)
        return embd_fail(err, EMBD_ERR_OPENAI_INDEX, x.at,
                         "data[%zu].index: %zu out of range (%zu items) (body byte %zu)", i, x.index, n,
                         x.at);
      if (inv[x.index] != SIZE_MAX)
        return embd_fail(err, EMBD_ERR_OPENAI_INDEX, x.at,
                         "data[%zu].index: %zu already taken by data[%zu] (body byte %zu)", i, x.index,
                         inv[x.index], x.at);
      inv[x.index] = i;
    }
    // Rows sit in item order; put them in index order (inv[t] = the item for row t).
    float *rows = e->values + base * dims;
    for (size_t s = 0; s < n; s++) {
      if (inv[s] == s) continue;
      memcpy(im->tmp, rows + s * dims, dims * sizeof(float));
      size_t t = s;
      for (;;) {
        size_t from = inv[t];
        inv[t] = t;
        if (from == s) {
          memcpy(rows + t * dims, im->tmp, dims * sizeof(float));
          break;
        }
        memcpy(rows + t * dims, rows + from * dims, dims * sizeof(float));
        t = from;
      }
    }
    return EMBD_OK;
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
    size_t keep = m < sizeof b ? m : sizeof b;
    const void *nul = memchr(b, 0, keep);
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

  embd_result run() {
    const uint8_t *p = j.base, *end = j.end;
    // RFC 8259 8.1: a parser may ignore a byte order mark; some HTTP stacks add one.
    if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
    p = ws(p, "before any value (the body is empty)");
    if (!p) return json_fail(W_BODY);
    if (*p != '{') {
      const uint8_t *q;
      const char *t = embd_json_type_of(&j, p, &q);
      if (!t) return json_fail(W_BODY);
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, off(p), "the body is not a JSON object but %s (body byte %zu)",
                       t, off(p));
    }
    bool have_data = false;
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
        if (id == K_DATA) {
          if (have_data)
            return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, off(p), "two \"data\" keys (body byte %zu)", off(p));
          have_data = true;
          if (embd_result r = data(p, &q)) return r;
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
    p = embd_json_ws(p, end);
    if (p != end) {
      embd_json_fault(&j, p, "content after the body's closing '}'");
      return json_fail(W_BODY);
    }
    if (!have_data) return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, 0, "no \"data\" array in the body");
    return EMBD_OK;
  }
};

void clear(embd_openai_embeddings *e) {
  e->count = 0;
  e->dims = 0;
  e->model[0] = 0;
  e->model_truncated = 0;
  e->has_usage = 0;
  e->prompt_tokens = e->total_tokens = 0;
}

embd_result run(embd_openai_embeddings *e, const char *json, size_t len,
                const embd_openai_options *opt, embd_error *err, bool append) {
  if (!e || (!json && len)) {
    if (e) clear(e);
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL embeddings or json");
  }
  if (opt && !EMBD_RESERVED_OK(opt)) {
    clear(e);
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: reserved_ fields not zero");
  }
  if (!json) json = "";
  impl *im = static_cast<impl *>(e->impl_);
  if (!im) {
    im = new (std::nothrow) impl;
    if (!im) {
      clear(e);
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory");
    }
    e->impl_ = im;
  }
  if (!append) clear(e);
  decoder d{e, im, opt, err, {}, append ? e->count : 0, append ? e->dims : 0};
  embd_json_init(&d.j, json, len);
  embd_result r = d.run();
  if (r == EMBD_OK && append && e->count && e->model[0] && d.model[0] && strcmp(e->model, d.model) != 0)
    r = embd_fail(err, EMBD_ERR_OPENAI_MODEL, 0, "model \"%.40s\" differs from \"%.40s\" of the earlier responses",
                  d.model, e->model);
  if (r != EMBD_OK) {
    clear(e);
    return r;
  }
  // Appending to an empty e (nothing decoded yet, or after an error) is a decode.
  size_t before = append ? e->count : 0;
  e->count = before + d.n;
  if (d.n) e->dims = d.dims;
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
  if (err) {
    err->result = EMBD_OK;
    err->offset = 0;
    err->message[0] = 0;
  }
  return EMBD_OK;
}

}  // namespace

extern "C" {

void embd_openai_init(embd_openai_embeddings *e) {
  if (e) memset(e, 0, sizeof *e);
}

void embd_openai_free(embd_openai_embeddings *e) {
  if (!e) return;
  free(e->values);
  delete static_cast<impl *>(e->impl_);
  memset(e, 0, sizeof *e);
}

embd_result embd_openai_decode(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  return run(e, json, len, opt, err, false);
}

embd_result embd_openai_append(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  return run(e, json, len, opt, err, true);
}

}  // extern "C"
