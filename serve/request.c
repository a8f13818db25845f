/* embd serve: request bodies (serve/request.h). A small strict JSON walker of its own:
 * the library's JSON decoders read responses, not requests, and the front must pass the
 * client's other members upstream byte for byte, which needs their spans. */
#include "request.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 128 /* nesting in a request (passed-through members included) */

typedef struct jp {
  const unsigned char *s; /* body */
  size_t pos, len;
  serve_fault *fault;
} jp;

enum jtype { J_ERR = -1, J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

static int fail(jp *p, size_t at, const char *what) {
  if (p->fault) {
    p->fault->offset = at;
    snprintf(p->fault->message, sizeof p->fault->message, "%s (body byte %zu)", what, at);
  }
  return J_ERR;
}

static void ws(jp *p) {
  while (p->pos < p->len) {
    const unsigned char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->pos++;
  }
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int hex4(jp *p, size_t at, unsigned *u) {
  if (p->len - at < 4) return -1;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    const int h = hexval(p->s[at + (size_t)i]);
    if (h < 0) return -1;
    v = v << 4 | (unsigned)h;
  }
  *u = v;
  return 0;
}

/* A string starting at p->pos ('"'). The unescaped text, when it is ASCII and fits,
 * goes to key[0 .. keycap) (NUL-terminated); otherwise key is "" (not a key we read). */
static int string(jp *p, char *key, size_t keycap) {
  size_t k = 0;
  int keyok = key != NULL;
  p->pos++; /* '"' */
  for (;;) {
    if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends inside a string");
    const unsigned char c = p->s[p->pos];
    unsigned cp = c;
    if (c == '"') {
      p->pos++;
      break;
    }
    if (c < 0x20) return fail(p, p->pos, "JSON: a raw control character in a string");
    if (c == '\\') {
      if (p->pos + 1 >= p->len) return fail(p, p->len, "JSON: the body ends inside an escape");
      const unsigned char e = p->s[p->pos + 1];
      switch (e) {
      case '"': case '\\': case '/': cp = e; p->pos += 2; break;
      case 'b': cp = '\b'; p->pos += 2; break;
      case 'f': cp = '\f'; p->pos += 2; break;
      case 'n': cp = '\n'; p->pos += 2; break;
      case 'r': cp = '\r'; p->pos += 2; break;
      case 't': cp = '\t'; p->pos += 2; break;
      case 'u': {
        unsigned u;
        if (hex4(p, p->pos + 2, &u)) return fail(p, p->pos, "JSON: invalid \\u escape");
        if (u >= 0xDC00 && u <= 0xDFFF) return fail(p, p->pos, "JSON: unpaired low surrogate");
        if (u >= 0xD800 && u <= 0xDBFF) {
          unsigned lo;
          if (p->len - p->pos < 12 || p->s[p->pos + 6] != '\\' || p->s[p->pos + 7] != 'u' ||
              hex4(p, p->pos + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return fail(p, p->pos, "JSON: unpaired high surrogate");
          u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
          p->pos += 6;
        }
        cp = u;
        p->pos += 6;
        break;
      }
      default:
        return fail(p, p->pos, "JSON: invalid escape in a string");
      }
    } else if (c < 0x80) {
      p->pos++;
    } else { /* UTF-8: the shortest form, no surrogates, at most U+10FFFF */
      size_t n;
      unsigned lo = 0x80, hi = 0xBF;
      if (c >= 0xC2 && c <= 0xDF) n = 1;
      else if (c >= 0xE0 && c <= 0xEF) {
        n = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
      } else if (c >= 0xF0 && c <= 0xF4) {
        n = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
      } else
        return fail(p, p->pos, "JSON: invalid UTF-8 in a string");
      if (p->len - p->pos <= n) return fail(p, p->len, "JSON: the body ends inside a UTF-8 character");
      for (size_t i = 1; i <= n; i++) {
        const unsigned char t = p->s[p->pos + i];
        if (t < (i == 1 ? lo : 0x80) || t > (i == 1 ? hi : 0xBF))
          return fail(p, p->pos + i, "JSON: invalid UTF-8 in a string");
      }
      p->pos += n + 1;
      cp = 0x80; /* not ASCII: not one of our keys */
    }
    if (keyok) {
      if (cp >= 0x80 || cp == 0 || k + 1 >= keycap) keyok = 0;
      else key[k++] = (char)cp;
    }
  }
  if (key) key[keyok ? k : 0] = '\0';
  if (key && !keyok && keycap) key[0] = '\0';
  return J_STR;
}

static int number(jp *p, int *integer) {
  const size_t start = p->pos;
  int isint = 1;
  if (p->s[p->pos] == '-') p->pos++;
  if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends inside a number");
  if (p->s[p->pos] == '0') {
    p->pos++;
  } else if (p->s[p->pos] >= '1' && p->s[p->pos] <= '9') {
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  } else {
    return fail(p, p->pos, "JSON: invalid number");
  }
  if (p->pos < p->len && p->s[p->pos] == '.') {
    isint = 0;
    p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
      return fail(p, p->pos, "JSON: a digit must follow '.'");
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
    isint = 0;
    p->pos++;
    if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
      return fail(p, p->pos, "JSON: a digit must follow the exponent");
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  (void)start;
  if (integer) *integer = isint;
  return J_NUM;
}

static int literal(jp *p, const char *word, int type) {
  const size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n)) return fail(p, p->pos, "JSON: invalid literal");
  p->pos += n;
  return type;
}

static int value(jp *p, int depth);

static int array(jp *p, int depth) {
  p->pos++; /* '[' */
  ws(p);
  if (p->pos < p->len && p->s[p->pos] == ']') {
    p->pos++;
    return J_ARR;
  }
  for (;;) {
    if (value(p, depth + 1) == J_ERR) return J_ERR;
    ws(p);
    if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends inside an array");
    if (p->s[p->pos] == ']') {
      p->pos++;
      return J_ARR;
    }
    if (p->s[p->pos] != ',') return fail(p, p->pos, "JSON: expected ',' or ']' in an array");
    p->pos++;
  }
}

static int object(jp *p, int depth) {
  p->pos++; /* '{' */
  ws(p);
  if (p->pos < p->len && p->s[p->pos] == '}') {
    p->pos++;
    return J_OBJ;
  }
  for (;;) {
    ws(p);
    if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends inside an object");
    if (p->s[p->pos] != '"') return fail(p, p->pos, "JSON: expected a string key");
    if (string(p, NULL, 0) == J_ERR) return J_ERR;
    ws(p);
    if (p->pos >= p->len || p->s[p->pos] != ':') return fail(p, p->pos, "JSON: expected ':' after a key");
    p->pos++;
    if (value(p, depth + 1) == J_ERR) return J_ERR;
    ws(p);
    if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends inside an object");
    if (p->s[p->pos] == '}') {
      p->pos++;
      return J_OBJ;
    }
    if (p->s[p->pos] != ',') return fail(p, p->pos, "JSON: expected ',' or '}' in an object");
    p->pos++;
  }
}

static int value(jp *p, int depth) {
  if (depth > MAX_DEPTH) return fail(p, p->pos, "JSON: nested deeper than 128");
  ws(p);
  if (p->pos >= p->len) return fail(p, p->len, "JSON: the body ends where a value should be");
  switch (p->s[p->pos]) {
  case '{': return object(p, depth);
  case '[': return array(p, depth);
  case '"': return string(p, NULL, 0);
  case 't': return literal(p, "true", J_BOOL);
  case 'f': return literal(p, "false", J_BOOL);
  case 'n': return literal(p, "null", J_NULL);
  default:
    if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) return number(p, NULL);
    return fail(p, p->pos, "JSON: unexpected character where a value should be");
  }
}

int serve_json_validate(const char *json, size_t len, serve_fault *fault) {
  jp p = {(const unsigned char *)json, 0, len, fault};
  if (value(&p, 0) == J_ERR) return -1;
  ws(&p);
  if (p.pos != len) {
    fail(&p, p.pos, "JSON: bytes after the value");
    return -1;
  }
  return 0;
}

/* OpenAI's input: a string, or a non-empty array of strings, of integers (one token
 * list) or of arrays of integers. Already valid JSON; the shape is checked here. */
static int input_shape(jp *p, size_t off, const char *name, size_t *count, int strings_only) {
  char msg[120];
  p->pos = off;
  if (p->s[off] == '"') {
    if (strings_only) {
      snprintf(msg, sizeof msg, "\"%s\" must be an array of strings", name);
      return fail(p, off, msg);
    }
    *count = 1;
    return 0;
  }
  if (p->s[off] != '[') {
    snprintf(msg, sizeof msg, strings_only ? "\"%s\" must be an array of strings"
                                           : "\"%s\" must be a string or an array of strings or of token ids",
             name);
    return fail(p, off, msg);
  }
  p->pos++;
  ws(p);
  if (p->s[p->pos] == ']') {
    snprintf(msg, sizeof msg, "\"%s\" is an empty array", name);
    return fail(p, off, msg);
  }
  int kind = -1; /* J_STR, J_NUM (token ids), J_ARR (lists of token ids) */
  size_t n = 0;
  for (;;) {
    ws(p);
    const size_t at = p->pos;
    const unsigned char c = p->s[at];
    int k = c == '"' ? J_STR : c == '[' ? J_ARR : (c == '-' || (c >= '0' && c <= '9')) ? J_NUM : J_ERR;
    if (strings_only && k != J_STR) {
      snprintf(msg, sizeof msg, "\"%s\"[%zu] is not a string", name, n);
      return fail(p, at, msg);
    }
    if (k == J_ERR || (kind >= 0 && k != kind)) {
      snprintf(msg, sizeof msg, "\"%s\"[%zu]: the items must all be strings, token ids or lists of token ids",
               name, n);
      return fail(p, at, msg);
    }
    kind = k;
    if (k == J_NUM) {
      int isint = 0;
      number(p, &isint);
      if (!isint || p->s[at] == '-') {
        snprintf(msg, sizeof msg, "\"%s\"[%zu] is not a token id (a non-negative integer)", name, n);
        return fail(p, at, msg);
      }
    } else if (k == J_ARR) {
      p->pos++;
      ws(p);
      if (p->s[p->pos] == ']') {
        snprintf(msg, sizeof msg, "\"%s\"[%zu] is an empty list of token ids", name, n);
        return fail(p, at, msg);
      }
      for (size_t j = 0;; j++) {
        ws(p);
        const size_t at2 = p->pos;
        int isint = 0;
        if (!(p->s[at2] == '-' || (p->s[at2] >= '0' && p->s[at2] <= '9')) || number(p, &isint) == J_ERR ||
            !isint || p->s[at2] == '-') {
          snprintf(msg, sizeof msg, "\"%s\"[%zu][%zu] is not a token id (a non-negative integer)", name, n, j);
          return fail(p, at2, msg);
        }
        ws(p);
        if (p->s[p->pos++] == ']') break;
      }
    } else {
      string(p, NULL, 0);
    }
    n++;
    ws(p);
    if (p->s[p->pos++] == ']') break;
  }
  *count = kind == J_NUM ? 1 : n;
  return 0;
}

int serve_request_parse(serve_request *req, serve_route route, const char *body, size_t len,
                        serve_fault *fault) {
  memset(req, 0, sizeof *req);
  req->route = route;
  req->dtype = EMBD_DTYPE_F32;
  jp p = {(const unsigned char *)body, 0, len, fault};
  /* the whole body first: a fault anywhere is reported at its byte, before any field */
  if (serve_json_validate(body, len, fault)) return -1;
  ws(&p);
  if (p.s[p.pos] != '{') return fail(&p, p.pos, "the request body must be a JSON object"), -1;
  const char *in_name = route == SERVE_ROUTE_EMBED ? "text" : route == SERVE_ROUTE_BATCH ? "texts" : "input";
  int have_input = 0, have_model = 0, have_enc = 0;
  p.pos++;
  ws(&p);
  if (p.s[p.pos] == '}') p.pos++;
  else
    for (;;) {
      ws(&p);
      const size_t kpos = p.pos;
      char key[32];
      string(&p, key, sizeof key);
      const serve_span kspan = {kpos, p.pos - kpos};
      ws(&p);
      p.pos++; /* ':' */
      ws(&p);
      const size_t vpos = p.pos;
      const int vt = value(&p, 1);
      const serve_span vspan = {vpos, p.pos - vpos};
      char msg[120];
      if (!strcmp(key, in_name)) {
        if (have_input) return fail(&p, kpos, "duplicate key in the request"), -1;
        have_input = 1;
        req->input = vspan;
        if (route == SERVE_ROUTE_EMBED) {
          if (vt != J_STR) return fail(&p, vpos, "\"text\" must be a string"), -1;
          req->count = 1;
        } else {
          jp q = p;
          if (input_shape(&q, vpos, in_name, &req->count, route == SERVE_ROUTE_BATCH)) return -1;
        }
      } else if (!strcmp(key, "model")) {
        if (have_model) return fail(&p, kpos, "duplicate key \"model\" in the request"), -1;
        have_model = 1;
        if (vt != J_STR) return fail(&p, vpos, "\"model\" must be a string"), -1;
        req->model = vspan;
      } else if (!strcmp(key, "dtype")) {
        if (req->has_dtype) return fail(&p, kpos, "duplicate key \"dtype\" in the request"), -1;
        req->has_dtype = 1;
        embd_dtype d;
        if (vt != J_STR || vspan.len < 2 || embd_dtype_parse(body + vpos + 1, vspan.len - 2, &d) != EMBD_OK)
          return fail(&p, vpos, "\"dtype\" must name an embd dtype (f32, f16, bf16, fp8-e4m3, fp8-e5m2, "
                                "int8, uint8, binary, ubinary)"), -1;
        req->dtype = d;
      } else if (!strcmp(key, "encoding_format") && route == SERVE_ROUTE_OPENAI) {
        if (have_enc) return fail(&p, kpos, "duplicate key \"encoding_format\" in the request"), -1;
        have_enc = 1;
        if (vt == J_STR && vspan.len == 8 && !memcmp(body + vpos, "\"base64\"", 8)) req->encoding_base64 = 1;
        else if (!(vt == J_STR && vspan.len == 7 && !memcmp(body + vpos, "\"float\"", 7)))
          return fail(&p, vpos, "\"encoding_format\" must be \"float\" or \"base64\""), -1;
      } else if (route != SERVE_ROUTE_OPENAI && (!strcmp(key, "input") || !strcmp(key, "encoding_format"))) {
        snprintf(msg, sizeof msg, "\"%s\" is not a field of %s (the front sets it upstream)", key,
                 route == SERVE_ROUTE_EMBED ? "/v1/embed" : "/v1/embed/batch");
        return fail(&p, kpos, msg), -1;
      } else {
        if (req->npass == SERVE_MAX_PASSTHROUGH) return fail(&p, kpos, "more than 32 other fields in the request"), -1;
        req->pass_key[req->npass] = kspan;
        req->pass_value[req->npass] = vspan;
        req->npass++;
      }
      ws(&p);
      if (p.s[p.pos++] == '}') break;
    }
  if (!have_input) {
    char msg[80];
    snprintf(msg, sizeof msg, "the request has no \"%s\"", in_name);
    fail(&p, 0, msg);
    return -1;
  }
  return 0;
}

typedef struct wbuf {
  char *out;
  size_t cap, n;
} wbuf;

static void put(wbuf *w, const void *s, size_t n) {
  if (w->n + n <= w->cap && n) memcpy(w->out + w->n, s, n);
  w->n += n;
}
#define PUTS(w, lit) put((w), (lit), sizeof(lit) - 1)

/* A plain string as a JSON string (the --model name: escapes for '"', '\\' and control
 * bytes; the rest as it is). */
static void put_jstring(wbuf *w, const char *s) {
  PUTS(w, "\"");
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      const char e[2] = {'\\', (char)c};
      put(w, e, 2);
    } else if (c < 0x20) {
      char e[8];
      snprintf(e, sizeof e, "\\u%04x", c);
      put(w, e, 6);
    } else {
      put(w, s, 1);
    }
  }
  PUTS(w, "\"");
}

int serve_request_upstream(const serve_request *req, const char *body, const char *default_model,
                           int keep_encoding, char *out, size_t cap, size_t *written) {
  wbuf w = {out, cap, 0};
  PUTS(&w, "{\"input\":");
  put(&w, body + req->input.off, req->input.len);
  const int placeholder = req->model.len == 9 && !memcmp(body + req->model.off, "\"default\"", 9);
  if (default_model && *default_model && (req->model.len == 0 || placeholder)) {
    PUTS(&w, ",\"model\":");
    put_jstring(&w, default_model);
  } else if (req->model.len) {
    PUTS(&w, ",\"model\":");
    put(&w, body + req->model.off, req->model.len);
  }
  if (!keep_encoding) PUTS(&w, ",\"encoding_format\":\"base64\"");
  else if (req->encoding_base64) PUTS(&w, ",\"encoding_format\":\"base64\"");
  for (size_t i = 0; i < req->npass; i++) {
    PUTS(&w, ",");
    put(&w, body + req->pass_key[i].off, req->pass_key[i].len);
    PUTS(&w, ":");
    put(&w, body + req->pass_value[i].off, req->pass_value[i].len);
  }
  PUTS(&w, "}");
  *written = w.n;
  return w.n <= cap ? 0 : -1;
}
