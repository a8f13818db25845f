/* Strict RFC 8259 JSON pieces (json_strict.h). Scalar and simple: the hot paths of the
 * decoders (float arrays, base64 strings) do not come through here, only what they skip
 * and what they reject. */
#include "json_strict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const uint8_t *embd_json_fault(embd_json *j, const uint8_t *p, const char *fmt, ...) {
  if (!j->fault_at) {
    j->fault_at = p;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->fault, sizeof j->fault, fmt, ap);
    va_end(ap);
  }
  return NULL;
}

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static int hex4(const uint8_t *p, unsigned *v) {
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t c = p[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return 0;
    x = x << 4 | d;
  }
  *v = x;
  return 1;
}

/* The length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 if it is not
 * one (RFC 3629 table 3-7: no overlongs, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const uint8_t *p, const uint8_t *end) {
  size_t left = (size_t)(end - p);
  uint8_t c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3) return 0;
    uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4) return 0;
    uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80 ? 4 : 0;
  }
  return 0;
}

const uint8_t *embd_json_string(embd_json *j, const uint8_t *p, int *escapes) {
  const uint8_t *end = j->end;
  const uint8_t *start = p;
  int esc = 0;
  p++; /* the opening quote */
  for (;;) {
    /* Plain ASCII runs first: everything but '"', '\\', controls and non-ASCII. */
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    if (p >= end)
      return embd_json_fault(j, end, "the text ends inside the string that starts at byte %zu",
                             (size_t)(start - j->base));
    uint8_t c = *p;
    if (c == '"') break;
    if (c == '\\') {
      esc = 1;
      if (end - p < 2) return embd_json_fault(j, end, "the text ends inside an escape");
      uint8_t e = p[1];
      if (e == 'u') {
        unsigned u;
        if (end - p < 6 || !hex4(p + 2, &u))
          return embd_json_fault(j, p, "\\u needs four hex digits");
        if (u >= 0xD800 && u <= 0xDBFF) {
          unsigned v;
          if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &v) || v < 0xDC00 ||
              v > 0xDFFF)
            return embd_json_fault(j, p, "unpaired surrogate \\u%04X (no low surrogate after it)", u);
          p += 12;
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
          return embd_json_fault(j, p, "unpaired low surrogate \\u%04X", u);
        } else {
          p += 6;
        }
        continue;
      }
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
          e != 't') {
        if (e >= 0x20 && e < 0x7F) return embd_json_fault(j, p, "invalid escape \\%c", e);
        return embd_json_fault(j, p, "invalid escape: '\\' then byte 0x%02x", e);
      }
      p += 2;
      continue;
    }
    if (c < 0x20)
      return embd_json_fault(j, p, "raw control byte 0x%02x in a string (JSON needs \\u%04x)", c, c);
    size_t n = utf8_len(p, end);
    if (!n) return embd_json_fault(j, p, "invalid UTF-8 (byte 0x%02x) in a string", c);
    p += n;
  }
  if (escapes) *escapes = esc;
  return p + 1;
}

const uint8_t *embd_json_number(embd_json *j, const uint8_t *p) {
  const uint8_t *end = j->end;
  if (p < end && *p == '-') p++;
  if (p >= end) return embd_json_fault(j, end, "the text ends inside a number");
  if (*p == '0') {
    p++;
    if (p < end && is_digit(*p)) return embd_json_fault(j, p - 1, "a number with a leading zero");
  } else if (is_digit(*p)) {
    while (p < end && is_digit(*p)) p++;
  } else {
    return embd_json_fault(j, p, "'-' without digits after it");
  }
  if (p < end && *p == '.') {
    p++;
    if (p >= end) return embd_json_fault(j, end, "the text ends inside a number");
    if (!is_digit(*p)) return embd_json_fault(j, p, "no digit after a decimal point");
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end) return embd_json_fault(j, end, "the text ends inside a number");
    if (!is_digit(*p)) return embd_json_fault(j, p, "no digit in a number's exponent");
    while (p < end && is_digit(*p)) p++;
  }
  return p;
}

static const uint8_t *literal(embd_json *j, const uint8_t *p, const char *word, size_t n) {
  if ((size_t)(j->end - p) < n || memcmp(p, word, n) != 0) {
    /* Name the first byte that differs. */
    size_t i = 0;
    while (p + i < j->end && i < n && p[i] == (uint8_t)word[i]) i++;
    if (p + i >= j->end) return embd_json_fault(j, j->end, "the text ends inside \"%s\"", word);
    return embd_json_fault(j, p, "invalid literal (did you mean %s?)", word);
  }
  return p + n;
}

/* One scalar value, or NULL: not a scalar (c is '{' or '[') is handled by the caller. */
static const uint8_t *scalar(embd_json *j, const uint8_t *p) {
  switch (*p) {
    case '"': return embd_json_string(j, p, NULL);
    case 't': return literal(j, p, "true", 4);
    case 'f': return literal(j, p, "false", 5);
    case 'n': return literal(j, p, "null", 4);
    default:
      if (*p == '-' || is_digit(*p)) return embd_json_number(j, p);
      if (*p >= 0x21 && *p < 0x7F) return embd_json_fault(j, p, "expected a value, found '%c'", *p);
      return embd_json_fault(j, p, "expected a value, found byte 0x%02x", *p);
  }
}

const uint8_t *embd_json_value(embd_json *j, const uint8_t *p) {
  const uint8_t *end = j->end;
  /* The open containers: bit d of kinds is 1 for an object at depth d. */
  uint8_t kinds[EMBD_JSON_MAX_DEPTH / 8];
  size_t depth = 0;
  if (p >= end) return embd_json_fault(j, end, "the text ends where a value should be");
  for (;;) {
    /* p: at a value. */
    if (*p == '{' || *p == '[') {
      if (depth == EMBD_JSON_MAX_DEPTH)
        return embd_json_fault(j, p, "nested deeper than %d", EMBD_JSON_MAX_DEPTH);
      int obj = *p == '{';
      if (obj) kinds[depth / 8] |= (uint8_t)(1u << depth % 8);
      else kinds[depth / 8] &= (uint8_t)~(1u << depth % 8);
      depth++;
      p = embd_json_ws(p + 1, end);
      if (p >= end) return embd_json_fault(j, end, "the text ends inside an %s", obj ? "object" : "array");
      if (*p == (obj ? '}' : ']')) {
        p++;
        depth--;
        goto after_value;
      }
      if (obj) goto member;
      continue;
    }
    p = scalar(j, p);
    if (!p) return NULL;
  after_value:
    /* p: just past a value inside the containers open at depth. */
    if (depth == 0) return p;
    {
      int obj = kinds[(depth - 1) / 8] >> (depth - 1) % 8 & 1;
      p = embd_json_ws(p, end);
      if (p >= end) return embd_json_fault(j, end, "the text ends inside an %s", obj ? "object" : "array");
      if (*p == (obj ? '}' : ']')) {
        p++;
        depth--;
        goto after_value;
      }
      if (*p != ',')
        return embd_json_fault(j, p, obj ? "expected ',' or '}' after an object member"
                                         : "expected ',' or ']' after an array element");
      p = embd_json_ws(p + 1, end);
      if (p >= end) return embd_json_fault(j, end, "the text ends after a ','");
      if (!obj) continue;
    }
  member:
    /* p: at an object member's key (not whitespace). */
    if (*p != '"') return embd_json_fault(j, p, "expected a string key");
    p = embd_json_string(j, p, NULL);
    if (!p) return NULL;
    p = embd_json_ws(p, end);
    if (p >= end) return embd_json_fault(j, end, "the text ends after a key");
    if (*p != ':') return embd_json_fault(j, p, "expected ':' after a key");
    p = embd_json_ws(p + 1, end);
    if (p >= end) return embd_json_fault(j, end, "the text ends after a ':'");
  }
}

const char *embd_json_type_of(embd_json *j, const uint8_t *p, const uint8_t **past) {
  const uint8_t *q = embd_json_value(j, p);
  if (!q) return NULL;
  if (past) *past = q;
  switch (*p) {
    case '"': return "a string";
    case '{': return "an object";
    case '[': return "an array";
    case 'n': return "null";
    case 't':
    case 'f': return "a boolean";
    default: return "a number";
  }
}

static size_t put_utf8(uint8_t *out, size_t at, size_t cap, unsigned cp) {
  uint8_t b[4];
  size_t n;
  if (cp < 0x80) b[0] = (uint8_t)cp, n = 1;
  else if (cp < 0x800) b[0] = (uint8_t)(0xC0 | cp >> 6), b[1] = (uint8_t)(0x80 | (cp & 0x3F)), n = 2;
  else if (cp < 0x10000)
    b[0] = (uint8_t)(0xE0 | cp >> 12), b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)),
    b[2] = (uint8_t)(0x80 | (cp & 0x3F)), n = 3;
  else
    b[0] = (uint8_t)(0xF0 | cp >> 18), b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F)),
    b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)), b[3] = (uint8_t)(0x80 | (cp & 0x3F)), n = 4;
  for (size_t i = 0; i < n; i++)
    if (at + i < cap) out[at + i] = b[i];
  return n;
}

size_t embd_json_unescape(const uint8_t *p, const uint8_t *q, uint8_t *out, size_t cap) {
  size_t n = 0;
  while (p < q) {
    if (*p != '\\') {
      if (n < cap) out[n] = *p;
      n++, p++;
      continue;
    }
    uint8_t e = p[1];
    if (e == 'u') {
      unsigned u = 0, v = 0;
      hex4(p + 2, &u);
      p += 6;
      if (u >= 0xD800 && u <= 0xDBFF) { /* validated: a low surrogate follows */
        hex4(p + 2, &v);
        p += 6;
        u = 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00);
      }
      n += put_utf8(out, n, cap, u);
      continue;
    }
    uint8_t c = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
    if (n < cap) out[n] = c;
    n++;
    p += 2;
  }
  return n;
}

int embd_json_validate(embd_json *j, int allow_bom) {
  const uint8_t *p = j->base;
  if (allow_bom && j->end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
  p = embd_json_ws(p, j->end);
  p = embd_json_value(j, p);
  if (!p) return -1;
  p = embd_json_ws(p, j->end);
  if (p != j->end) {
    embd_json_fault(j, p, "content after the end of the JSON text");
    return -1;
  }
  return 0;
}

/* ---- walking a validated text ------------------------------------------------------- */

const uint8_t *embd_json_string_end(const uint8_t *p, const uint8_t *end, int *escapes) {
  int esc = 0;
  p++;
  for (;;) {
    /* Eight bytes at a time while no '"' or '\\' is among them: token strings are short,
     * merges and long values are not. */
    while (end - p >= 8) {
      uint64_t x;
      memcpy(&x, p, 8);
      uint64_t stop = ~(embd_json_swar_ne(x, '"') & embd_json_swar_ne(x, '\\')) & UINT64_C(0x8080808080808080);
      if (stop) break;
      p += 8;
    }
    while (p < end && *p != '"' && *p != '\\') p++;
    if (p >= end || *p == '"') break; /* valid text: always '"' */
    esc = 1;
    p += 2; /* the escape's first two bytes; \uXXXX's hex digits are neither '"' nor '\\' */
  }
  if (escapes) *escapes = esc;
  return p + 1;
}

const uint8_t *embd_json_skip(const uint8_t *p, const uint8_t *end) {
  size_t depth = 0;
  for (;;) {
    switch (*p) {
      case '"': p = embd_json_string_end(p, end, NULL); break;
      case '{':
      case '[': depth++, p++; break;
      case '}':
      case ']': depth--, p++; break;
      default: /* a number or a literal: up to the next delimiter */
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
               *p != '\r' && *p != '\t')
          p++;
    }
    if (!depth) return p;
    /* inside a container: past whitespace, ':' and ',' to the next token */
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ':' || *p == ','))
      p++;
  }
}

int embd_json_iter_next(embd_json_iter *it, const uint8_t **key) {
  const uint8_t *p, *end = it->end;
  if (!it->started) {
    it->started = 1;
    p = embd_json_ws(it->at, end);
  } else {
    p = it->past ? it->past : embd_json_skip(it->at, end);
    p = embd_json_ws(p, end);
    if (*p == ',') p = embd_json_ws(p + 1, end);
  }
  it->past = NULL;
  if (*p == '}' || *p == ']') {
    it->at = p;
    it->past = p + 1;
    return 0;
  }
  if (it->obj) {
    if (key) *key = p;
    p = embd_json_ws(embd_json_string_end(p, end, NULL), end);
    p = embd_json_ws(p + 1, end); /* the ':' */
  } else if (key) {
    *key = NULL;
  }
  it->at = p;
  return 1;
}

int embd_json_int(const uint8_t *p, const uint8_t *end, uint64_t *u, int64_t *neg) {
  int minus = *p == '-';
  p += minus;
  uint64_t v = 0;
  for (; p < end && is_digit(*p); p++) {
    unsigned dig = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - dig) / 10) return EMBD_JSON_NOT_INT;
    v = v * 10 + dig;
  }
  if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return EMBD_JSON_NOT_INT;
  if (!minus) {
    *u = v;
    return EMBD_JSON_UINT;
  }
  if (v == 0) { /* -0: the integer 0, as readers that keep integers exact read it */
    *u = 0;
    return EMBD_JSON_UINT;
  }
  if (v > (uint64_t)INT64_MAX + 1) return EMBD_JSON_NOT_INT;
  *neg = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  return EMBD_JSON_NEG;
}
