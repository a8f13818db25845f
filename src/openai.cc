// OpenAI-compatible /v1/embeddings response bodies -> float vectors (embd/openai.h).
//
// The library's only C++ file: simdjson's on-demand API behind the C API. Built with
// -fno-exceptions (simdjson's error-code API; allocations are nothrow), hidden visibility.
// simdjson's stage 1 (structural indexing) runs the implementation libsimdjson picks at
// run time for this CPU; the on-demand walk and number parsing compiled here are the
// baseline build.
//
// One pass: data.count_elements() gives n; the first embedding gives dims (its base64
// length, or its number count); then count x dims floats are allocated and item k is
// decoded straight into row k (base64 into the row by embd_base64_decode_f32, numbers one
// by one). data[].index may come before or after the embedding in an item, so rows are
// put in index order at the end by an in-place permutation (no copy when every item sits
// at its own index, the usual case).
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "embd/base64.h"
#include "embd/openai.h"
#include "fail.h"

namespace {

using namespace simdjson;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EMBD_NO_PAGE_TRICK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define EMBD_NO_PAGE_TRICK 1
#endif
#endif

// simdjson may read SIMDJSON_PADDING bytes past the document; their content does not
// affect the parse (simdjson's documentation, "the page trick"). When those bytes lie in
// the same 4 KiB block as the last byte of the body, reading them cannot fault (pages are
// multiples of 4 KiB), so the body is parsed where it is instead of copied: the copy
// costs a quarter of the time of a base64 response. About 1 body in 64 ends too close to
// a block end and is copied. Sanitizer builds always copy (they would report the read).
bool padding_in_page(const char *json, size_t len) {
#ifdef EMBD_NO_PAGE_TRICK
  (void)json, (void)len;
  return false;
#else
  if (!json || !len) return false;
  return (reinterpret_cast<uintptr_t>(json + len - 1) & 4095u) + SIMDJSON_PADDING < 4096u;
#endif
}

struct impl {
  ondemand::parser parser;
  char *pad = nullptr;    // padded copy of the body (when the caller's padding < 64)
  size_t pad_cap = 0;
  size_t *inv = nullptr;  // inv[index] = item position; SIZE_MAX = not seen yet
  size_t inv_cap = 0;
  float *tmp = nullptr;   // one row, for the permutation
  size_t tmp_cap = 0;
  ~impl() {
    free(pad);
    free(inv);
    free(tmp);
  }
};

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

// The double nearest the decimal text landed exactly on the midpoint between two floats:
// narrowing it would round a second time. (Exact test for the normal float range, where
// the 29 bits a float drops are 1000...0; a slower test below FLT_MIN.)
inline bool f32_midpoint(double d) {
  double a = std::fabs(d);
  if (a >= 1.1754943508222875e-38) {  // FLT_MIN
    uint64_t b;
    memcpy(&b, &d, 8);
    return (b & 0x1FFFFFFFu) == 0x10000000u;
  }
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return false;
  // g = the float next to f towards d (bit arithmetic: no libm for static consumers).
  uint32_t u;
  memcpy(&u, &f, 4);
  bool up = d > static_cast<double>(f);
  if ((u & 0x7FFFFFFFu) == 0) u = up ? 1u : 0x80000001u;
  else if (up == !(u >> 31)) u++;
  else u--;
  float g;
  memcpy(&g, &u, 4);
  return (static_cast<double>(f) + static_cast<double>(g)) / 2 == d;
}

struct decoder {
  embd_openai_embeddings *e;
  impl *im;
  const char *buf;  // what simdjson parses (the body or its padded copy)
  size_t len;
  const embd_openai_options *opt;
  embd_error *err;
  ondemand::document doc;
  size_t base;       // rows already in e (append)
  size_t dims;       // 0 = not known yet
  size_t n = 0;      // items in data[]
  char model[128] = {};
  int model_truncated = 0;
  int has_usage = 0;
  uint64_t prompt_tokens = 0, total_tokens = 0;

  size_t off(const char *p) const {
    return (p >= buf && p <= buf + len) ? static_cast<size_t>(p - buf) : len;
  }
  size_t here() {
    const char *p = nullptr;
    if (doc.current_location().get(p)) return len;
    return off(p);
  }
  // A simdjson error while reading `what`: INCORRECT_TYPE is a shape error, the rest is
  // malformed JSON.
  embd_result json_fail(error_code ec, const char *what) {
    size_t at = here();
    if (ec == INCORRECT_TYPE)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "%s: wrong type (body byte %zu)", what, at);
    return embd_fail(err, EMBD_ERR_OPENAI_JSON, at, "JSON: %s: %s (body byte %zu)", what,
                error_message(ec), at);
  }

  embd_result alloc_rows(size_t k, size_t d) {
    if (opt && opt->max_dims && d > opt->max_dims)
      return embd_fail(err, EMBD_ERR_OPENAI_DIMS, here(),
                  "data[%zu].embedding: %zu dims, above max_dims %u (body byte %zu)", k, d,
                  static_cast<unsigned>(opt->max_dims), here());
    size_t rows = base + n;
    if (rows < base || (d && rows > SIZE_MAX / sizeof(float) / d))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%zu x %zu floats do not fit in memory", rows, d);
    if (!reserve(&e->values, &e->capacity_, rows * d) || !reserve(&im->tmp, &im->tmp_cap, d))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu x %zu floats", rows, d);
    dims = d;
    return EMBD_OK;
  }

  // The dims of item k's vector: sets them (and allocates) for the first one, checks the
  // others.
  embd_result check_dims(size_t k, size_t d, size_t at) {
    if (d == 0)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "data[%zu].embedding: empty (body byte %zu)", k,
                  at);
    if (dims == 0) return alloc_rows(k, d);
    if (d != dims)
      return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                  "data[%zu].embedding: %zu dims, the others have %zu (body byte %zu)", k, d, dims,
                  at);
    return EMBD_OK;
  }

  embd_result base64_row(size_t k, const char *p, size_t m, size_t at, bool unescaped) {
    // The exact float count from the length and the trailing '=' (the decoder checks all).
    size_t pads = (m >= 1 && p[m - 1] == '=') + (m >= 2 && p[m - 2] == '=');
    size_t bytes = m / 4 * 3 - (m % 4 == 0 && m >= 4 ? pads : 0);
    embd_error be;
    size_t got = 0;
    if (m == 0) return check_dims(k, 0, at);
    if (m % 4 != 0 || bytes % 4 != 0) {
      // Invalid: let the base64 decoder name the problem (length rules come first).
      float none[1];
      embd_result r = embd_base64_decode_f32(p, m, 0, none, 0, &got, &be);
      if (r == EMBD_OK || r == EMBD_ERR_OUTPUT_TOO_SMALL) return check_dims(k, 0, at);
      return embd_fail(err, r, unescaped ? at : at + 1 + be.offset,
                  "data[%zu].embedding: base64: %s (body byte %zu)", k, be.message,
                  unescaped ? at : at + 1 + be.offset);
    }
    embd_result r = check_dims(k, bytes / 4, at);
    if (r) return r;
    float *row = e->values + (base + k) * dims;
    r = embd_base64_decode_f32(p, m, 0, row, dims, &got, &be);
    if (r) {
      size_t where = unescaped ? at : at + 1 + be.offset;
      return embd_fail(err, r, where, "data[%zu].embedding: base64: %s (body byte %zu)", k, be.message,
                  where);
    }
    return EMBD_OK;
  }

  embd_result embedding(size_t k, ondemand::value v) {
    ondemand::json_type t;
    size_t at = here();
    char what[48];
    snprintf(what, sizeof what, "data[%zu].embedding", k);
    if (auto ec = v.type().get(t)) return json_fail(ec, what);
    if (t == ondemand::json_type::string) {
      std::string_view tok = v.raw_json_token();
      size_t m = tok.size();
      while (m && (tok[m - 1] == ' ' || tok[m - 1] == '\t' || tok[m - 1] == '\n' ||
                   tok[m - 1] == '\r'))
        m--;
      if (m < 2 || tok[0] != '"' || tok[m - 1] != '"')
        return embd_fail(err, EMBD_ERR_OPENAI_JSON, at, "JSON: %s: bad string (body byte %zu)", what, at);
      const char *p = tok.data() + 1;
      m -= 2;
      if (!memchr(p, '\\', m)) return base64_row(k, p, m, at, false);
      // JSON escapes ("\/" from some serializers): unescape, then decode the same way.
      std::string_view s;
      if (auto ec = v.get_string().get(s)) return json_fail(ec, what);
      return base64_row(k, s.data(), s.size(), at, true);
    }
    if (t != ondemand::json_type::array)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at,
                  "%s: %s, not an array of numbers or a base64 string (body byte %zu)", what,
                  t == ondemand::json_type::null      ? "null"
                  : t == ondemand::json_type::object  ? "an object"
                  : t == ondemand::json_type::number  ? "a number"
                  : t == ondemand::json_type::boolean ? "a boolean"
                                                      : "a value",
                  at);
    ondemand::array a;
    if (auto ec = v.get_array().get(a)) return json_fail(ec, what);
    if (dims == 0) {
      size_t c = 0;
      if (auto ec = a.count_elements().get(c)) return json_fail(ec, what);
      if (embd_result r = check_dims(k, c, at)) return r;
    }
    float *row = e->values + (base + k) * dims;
    size_t j = 0;
    for (auto el : a) {
      double d;
      error_code ec = el.get_double().get(d);
      if (ec) {
        size_t w = here();
        if (ec == INCORRECT_TYPE)
          return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, w,
                      "%s[%zu]: not a number (body byte %zu)", what, j, w);
        return embd_fail(err, EMBD_ERR_OPENAI_JSON, w, "JSON: %s[%zu]: %s (body byte %zu)", what, j,
                    error_message(ec), w);
      }
      if (j >= dims)
        return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                    "%s: more than %zu numbers, the others have %zu (body byte %zu)", what, dims,
                    dims, at);
      float f = static_cast<float>(d);
      if (__builtin_expect(f32_midpoint(d), 0)) {
        // Round once: re-read the number's text as a float. The value is consumed: the
        // location is the ',' or ']' after it; walk back over blanks and the number.
        const char *p = nullptr;
        if (!doc.current_location().get(p) && p > buf && p <= buf + len) {
          const char *q = p;
          while (q > buf && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n' || q[-1] == '\r')) q--;
          const char *s = q;
          while (s > buf && std::strchr("0123456789+-.eE", s[-1]) != nullptr && s[-1] != 0) s--;
          float g;
          auto res = std::from_chars(s, q, g);
          if (res.ec == std::errc() && res.ptr == q) f = g;
        }
      }
      if (__builtin_expect(std::isinf(f), 0)) {
        size_t w = here();
        return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, w,
                    "%s[%zu]: %g is out of the float32 range (body byte %zu)", what, j, d, w);
      }
      row[j++] = f;
    }
    if (j != dims)
      return embd_fail(err, EMBD_ERR_OPENAI_DIMS, at,
                  "%s: %zu numbers, the others have %zu (body byte %zu)", what, j, dims, at);
    return EMBD_OK;
  }

  embd_result item(size_t k, ondemand::object obj, size_t at) {
    bool have_index = false, have_emb = false;
    size_t index = 0;
    char what[48];
    for (auto fr : obj) {
      ondemand::field f;
      snprintf(what, sizeof what, "data[%zu]", k);
      if (auto ec = std::move(fr).get(f)) return json_fail(ec, what);
      ondemand::raw_json_string key = f.key();
      if (key == "index") {
        size_t w = here();
        if (have_index)
          return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w, "data[%zu]: two \"index\" keys (body byte %zu)",
                      k, w);
        uint64_t x;
        error_code ec = f.value().get_uint64().get(x);
        if (ec == INCORRECT_TYPE || ec == NUMBER_ERROR)
          return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w,
                      "data[%zu].index: not a non-negative integer (body byte %zu)", k, w);
        if (ec) {
          snprintf(what, sizeof what, "data[%zu].index", k);
          return json_fail(ec, what);
        }
        if (x >= n)
          return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w,
                      "data[%zu].index: %llu out of range (%zu items) (body byte %zu)", k,
                      static_cast<unsigned long long>(x), n, w);
        if (im->inv[x] != SIZE_MAX)
          return embd_fail(err, EMBD_ERR_OPENAI_INDEX, w,
                      "data[%zu].index: %llu already taken by data[%zu] (body byte %zu)", k,
                      static_cast<unsigned long long>(x), im->inv[x], w);
        im->inv[x] = k;
        index = static_cast<size_t>(x);
        have_index = true;
      } else if (key == "embedding") {
        if (have_emb) {
          size_t w = here();
          return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, w,
                      "data[%zu]: two \"embedding\" keys (body byte %zu)", k, w);
        }
        if (embd_result r = embedding(k, f.value())) return r;
        have_emb = true;
      }
    }
    (void)index;
    if (!have_index)
      return embd_fail(err, EMBD_ERR_OPENAI_INDEX, at, "data[%zu]: no \"index\" (body byte %zu)", k, at);
    if (!have_emb)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "data[%zu]: no \"embedding\" (body byte %zu)", k,
                  at);
    return EMBD_OK;
  }

  embd_result data(ondemand::value v) {
    ondemand::array arr;
    size_t at = here();
    if (auto ec = v.get_array().get(arr)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, at, "\"data\" is not an array (body byte %zu)", at);
      return json_fail(ec, "data");
    }
    if (auto ec = arr.count_elements().get(n)) return json_fail(ec, "data");
    if (opt && opt->expected_count && n != opt->expected_count)
      return embd_fail(err, EMBD_ERR_OPENAI_COUNT, at, "data: %zu items, expected %zu (body byte %zu)", n,
                  opt->expected_count, at);
    if (!reserve(&im->inv, &im->inv_cap, n ? n : 1))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu items", n);
    for (size_t i = 0; i < n; i++) im->inv[i] = SIZE_MAX;
    if (dims && n) {  // append after earlier rows: dims known
      if (embd_result r = alloc_rows(0, dims)) return r;
    }
    size_t k = 0;
    for (auto ir : arr) {
      size_t iat = here();
      char what[32];
      snprintf(what, sizeof what, "data[%zu]", k);
      ondemand::object obj;
      if (auto ec = ir.get_object().get(obj)) {
        if (ec == INCORRECT_TYPE)
          return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, iat, "%s: not an object (body byte %zu)", what,
                      iat);
        return json_fail(ec, what);
      }
      if (k >= n) return embd_fail(err, EMBD_ERR_OPENAI_JSON, iat, "JSON: data: more items than counted");
      if (embd_result r = item(k, obj, iat)) return r;
      k++;
    }
    if (k != n)
      return embd_fail(err, EMBD_ERR_OPENAI_JSON, here(), "JSON: data: %zu items, counted %zu", k, n);
    // Rows sit in item order; put them in index order (inv[t] = the item for row t).
    size_t *inv = im->inv;
    for (size_t s = 0; s < n; s++) {
      if (inv[s] == s) continue;
      float *rows = e->values + base * dims;
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

  // usage: well-formed or absent. Only malformed JSON inside it is an error.
  error_code usage(ondemand::value v) {
    has_usage = 0;
    ondemand::object u;
    error_code ec = v.get_object().get(u);
    if (ec == INCORRECT_TYPE) return SUCCESS;
    if (ec) return ec;
    bool pt = false, tt = false, bad = false;
    for (auto fr : u) {
      ondemand::field f;
      if ((ec = std::move(fr).get(f))) return ec;
      ondemand::raw_json_string key = f.key();
      bool is_pt = key == "prompt_tokens", is_tt = key == "total_tokens";
      if (!is_pt && !is_tt) continue;
      uint64_t x;
      ec = f.value().get_uint64().get(x);
      if (ec == INCORRECT_TYPE || ec == NUMBER_ERROR) {
        bad = true;
        continue;
      }
      if (ec) return ec;
      if (is_pt) {
        prompt_tokens = x;
        pt = true;
      } else {
        total_tokens = x;
        tt = true;
      }
    }
    has_usage = pt && tt && !bad;
    return SUCCESS;
  }

  embd_result run() {
    model[0] = 0;
    if (auto ec = im->parser.iterate(buf, len, len + SIMDJSON_PADDING).get(doc))
      return embd_fail(err, EMBD_ERR_OPENAI_JSON, 0, "JSON: %s (body byte 0)", error_message(ec));
    ondemand::object root;
    if (auto ec = doc.get_object().get(root)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, 0, "the body is not a JSON object (body byte 0)");
      return json_fail(ec, "body");
    }
    bool have_data = false;
    for (auto fr : root) {
      ondemand::field f;
      if (auto ec = std::move(fr).get(f)) return json_fail(ec, "body");
      ondemand::raw_json_string key = f.key();
      if (key == "data") {
        if (have_data) {
          size_t w = here();
          return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, w, "two \"data\" keys (body byte %zu)", w);
        }
        have_data = true;
        if (embd_result r = data(f.value())) return r;
      } else if (key == "model") {
        std::string_view s;
        error_code ec = f.value().get_string().get(s);
        if (ec == INCORRECT_TYPE) {
          model[0] = 0;
          model_truncated = 0;
          continue;
        }
        if (ec) return json_fail(ec, "model");
        size_t m = s.size();
        model_truncated = m > sizeof model - 1;
        if (model_truncated) {
          m = sizeof model - 1;
          while (m && (static_cast<unsigned char>(s[m]) & 0xC0) == 0x80) m--;  // UTF-8 boundary
        }
        memcpy(model, s.data(), m);
        model[m] = 0;
      } else if (key == "usage") {
        if (auto ec = usage(f.value())) return json_fail(ec, "usage");
      }
    }
    const char *rest = nullptr;
    if (!doc.current_location().get(rest)) {
      size_t w = off(rest);
      return embd_fail(err, EMBD_ERR_OPENAI_JSON, w, "JSON: content after the body's object (body byte %zu)",
                  w);
    }
    if (!have_data)
      return embd_fail(err, EMBD_ERR_OPENAI_SHAPE, 0, "no \"data\" array in the body");
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
  const char *buf = json;
  if ((!opt || opt->padding < SIMDJSON_PADDING) && !padding_in_page(json, len)) {
    if (len > SIZE_MAX - SIMDJSON_PADDING || !reserve(&im->pad, &im->pad_cap, len + SIMDJSON_PADDING)) {
      clear(e);
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for a padded copy of %zu bytes", len);
    }
    if (len) memcpy(im->pad, json, len);
    memset(im->pad + len, 0, SIMDJSON_PADDING);
    buf = im->pad;
  }
  decoder d{e, im, buf, len, opt, err, {}, append ? e->count : 0, append ? e->dims : 0};
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
