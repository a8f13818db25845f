/* Elasticsearch / OpenSearch _bulk lines and FAISS .fvecs / .bvecs records. See
 * include/embd/vecfile.h. The byte work is the kernels' (embd_from_f32 for byte order,
 * int8 and packed bits, embd_base64_encode): this file places their output. */
#include "embd/vecfile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embd/base64.h"
#include "embd/bswap.h"
#include "embd/convert.h"
#include "internal.h"

/* Floats per base64 step: 768 floats are 3,072 bytes, a multiple of 3, so the pieces'
 * base64 concatenate to the whole's. */
#define B64_CHUNK 768
/* Elements per hex step. */
#define HEX_CHUNK 1024


/* ---- JSON strings ------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s[0 .. n) (n > 0), 0 when ill-formed
 * (RFC 3629: no overlongs, surrogates or code points above U+10FFFF). */
static size_t utf8_seq(const uint8_t *s, size_t n) {
  const uint8_t c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF) len = 3;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  else return 0;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t k = 2; k < len; k++)
    if ((s[k] & 0xC0) != 0x80) return 0;
  return len;
}

/* The escaped form of s[0 .. n) written at o (when o is not NULL); returns its length, or
 * SIZE_MAX for ill-formed UTF-8. */
static size_t json_escape(char *o, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const uint8_t *p = (const uint8_t *)s;
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    const uint8_t c = p[i];
    if (c >= 0x80) {
      const size_t l = utf8_seq(p + i, n - i);
      if (!l) return SIZE_MAX;
      if (o) memcpy(o + k, p + i, l);
      k += l, i += l;
      continue;
    }
    char e = 0;
    switch (c) {
      case '"': e = '"'; break;
      case '\\': e = '\\'; break;
      case '\b': e = 'b'; break;
      case '\f': e = 'f'; break;
      case '\n': e = 'n'; break;
      case '\r': e = 'r'; break;
      case '\t': e = 't'; break;
      default: break;
    }
    if (e) {
      if (o) o[k] = '\\', o[k + 1] = e;
      k += 2;
    } else if (c < 0x20) {
      if (o) memcpy(o + k, "\\u00", 4), o[k + 4] = hex[c >> 4], o[k + 5] = hex[c & 15];
      k += 6;
    } else {
      if (o) o[k] = (char)c;
      k++;
    }
    i++;
  }
  return k;
}

/* ---- _bulk -------------------------------------------------------------------------- */

typedef struct bulk_plan {
  const char *index, *field;
  size_t index_len, field_len;    /* the names' own lengths */
  size_t index_esc, field_esc;    /* their escaped lengths */
  size_t value;                   /* the value's characters */
} bulk_plan;

static const char L1A[] = "{\"index\":{\"_index\":\"", L1ID[] = "\",\"_id\":\"", L1B[] = "\"}}\n";
static const char L2A[] = "{\"", L2B[] = "\":\"", L2C[] = "\"}\n";
#define SL(s) (sizeof(s) - 1)

/* Checks the options and dims; fills the plan. */
static embd_result bulk_plan_make(const embd_bulk_options *opt, size_t dims, bulk_plan *pl,
                                  embd_error *err) {
  if (!opt || !opt->index || !opt->field || !EMBD_RESERVED_OK(opt) ||
      (unsigned)opt->encoding >= EMBD_BULK_ENCODING_COUNT_)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "invalid options");
  pl->index = opt->index, pl->field = opt->field;
  pl->index_len = opt->index_len ? opt->index_len : strlen(opt->index);
  pl->field_len = opt->field_len ? opt->field_len : strlen(opt->field);
  pl->index_esc = json_escape(NULL, pl->index, pl->index_len);
  pl->field_esc = json_escape(NULL, pl->field, pl->field_len);
  if (pl->index_esc == SIZE_MAX || pl->field_esc == SIZE_MAX)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the %s name is not UTF-8",
                     pl->index_esc == SIZE_MAX ? "index" : "field");
  if (!dims) return embd_fail(err, EMBD_ERR_VECTOR_DIMS, 0, "0 dims (a vector has at least 1)");
  switch (opt->encoding) {
    case EMBD_BULK_F32_BASE64_BE:
    case EMBD_BULK_F32_BASE64_LE:
      if (dims > (SIZE_MAX / 4 - 2) / 4 * 3)
        return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "dims too large");
      pl->value = (4 * dims + 2) / 3 * 4;
      break;
    case EMBD_BULK_INT8_HEX:
      if (dims > SIZE_MAX / 2) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "dims too large");
      pl->value = 2 * dims;
      break;
    default:
      if (dims % 8)
        return embd_fail(err, EMBD_ERR_DTYPE_LENGTH, 0, "%zu dims: bit vectors need a multiple of 8",
                         dims);
      pl->value = dims / 4;
      break;
  }
  return EMBD_OK;
}

static size_t id_text(char *buf, int64_t id) {
  return (size_t)snprintf(buf, 24, "%lld", (long long)id);
}

/* Bytes of one record (two lines); SIZE_MAX on overflow. */
static size_t bulk_record_size(const bulk_plan *pl, const int64_t *id) {
  char b[24];
  uint64_t n = SL(L1A) + (uint64_t)pl->index_esc + SL(L1B) + SL(L2A) + pl->field_esc + SL(L2B) +
               pl->value + SL(L2C);
  if (id) n += SL(L1ID) + id_text(b, *id);
  return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

static embd_result bulk_total(const bulk_plan *pl, size_t count, const int64_t *ids, size_t *size) {
  uint64_t n = 0;
  for (size_t i = 0; i < count; i++) {
    n += bulk_record_size(pl, ids ? ids + i : NULL);
    if (n > SIZE_MAX) return EMBD_ERR_INVALID_ARGUMENT;
  }
  *size = (size_t)n;
  return EMBD_OK;
}

embd_result embd_bulk_size(const embd_bulk_options *opt, size_t count, size_t dims,
                           const int64_t *ids, size_t *size) {
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  bulk_plan pl;
  embd_result r = bulk_plan_make(opt, dims, &pl, NULL);
  if (r != EMBD_OK) return r;
  return bulk_total(&pl, count, ids, size);
}

/* The checks of one row before a byte of it is written. */
static embd_result bulk_check_row(embd_bulk_encoding enc, const float *v, size_t dims, size_t row,
                                  embd_error *err) {
  if (enc == EMBD_BULK_BIT_HEX) return EMBD_OK;
  for (size_t j = 0; j < dims; j++) {
    const float x = v[j];
    if (enc == EMBD_BULK_INT8_HEX) {
      if (!(x >= -128.0f && x <= 127.0f) || x != (float)(int)x)
        return embd_fail(err, EMBD_ERR_DTYPE_RANGE, j,
                         "row %zu element %zu: %.9g is not an int8 (-128..127, an integer)", row, j,
                         (double)x);
    } else if (!isfinite(x)) {
      return embd_fail(err, EMBD_ERR_VECTOR_VALUE, j, "row %zu element %zu: %s (float vectors refuse %s)",
                       row, j, isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf",
                       isnan(x) ? "NaN" : "infinities");
    }
  }
  return EMBD_OK;
}

static void put_hex(char *o, const uint8_t *b, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) o[2 * i] = hex[b[i] >> 4], o[2 * i + 1] = hex[b[i] & 15];
}

/* The row's value characters at o (pl->value of them). */
static void bulk_put_value(char *o, embd_bulk_encoding enc, const float *v, size_t dims) {
  size_t w;
  if (enc == EMBD_BULK_F32_BASE64_LE) {
    embd_base64_encode_f32(v, dims, 0, o, SIZE_MAX, &w);
  } else if (enc == EMBD_BULK_F32_BASE64_BE) {
    uint8_t be[4 * B64_CHUNK];
    for (size_t i = 0; i < dims; i += B64_CHUNK) {
      const size_t n = dims - i < B64_CHUNK ? dims - i : B64_CHUNK;
      embd_from_f32(be, v + i, n, EMBD_DTYPE_F32, EMBD_ORDER_BE, NULL);
      embd_base64_encode(be, 4 * n, 0, o, SIZE_MAX, &w);
      o += w;
    }
  } else {
    uint8_t b[HEX_CHUNK];
    const embd_dtype dt = enc == EMBD_BULK_INT8_HEX ? EMBD_DTYPE_INT8 : EMBD_DTYPE_UBINARY;
    const size_t per = enc == EMBD_BULK_INT8_HEX ? 1 : 8; /* floats per byte */
    for (size_t i = 0; i < dims; i += HEX_CHUNK * per) {
      const size_t n = dims - i < HEX_CHUNK * per ? dims - i : HEX_CHUNK * per;
      embd_from_f32(b, v + i, n, dt, EMBD_ORDER_LE, NULL); /* checked: cannot fail */
      put_hex(o, b, n / per);
      o += 2 * (n / per);
    }
  }
}

static char *put(char *o, const char *s, size_t n) {
  memcpy(o, s, n);
  return o + n;
}

embd_result embd_bulk_write_f32(const embd_bulk_options *opt, const float *v, size_t count,
                                size_t dims, const int64_t *ids, char *out, size_t cap,
                                size_t *written, embd_error *err) {
  if (!written) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL written");
  *written = 0;
  if ((!out && cap) || (count && !v)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer");
  if (count && dims > SIZE_MAX / count)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "count x dims overflows size_t");
  bulk_plan pl;
  embd_result r = bulk_plan_make(opt, dims, &pl, err);
  if (r != EMBD_OK) return r;
  size_t total;
  if (bulk_total(&pl, count, ids, &total) != EMBD_OK)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the lines' size overflows size_t");
  if (total > cap) {
    *written = total;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "%zu bytes needed, %zu given", total, cap);
  }
  char *o = out;
  for (size_t i = 0; i < count; i++) {
    const float *row = v + i * dims;
    if ((r = bulk_check_row(opt->encoding, row, dims, i, err)) != EMBD_OK) return r;
    o = put(o, L1A, SL(L1A));
    o += json_escape(o, pl.index, pl.index_len);
    if (ids) {
      char b[24];
      o = put(o, L1ID, SL(L1ID));
      o = put(o, b, id_text(b, ids[i]));
    }
    o = put(o, L1B, SL(L1B));
    o = put(o, L2A, SL(L2A));
    o += json_escape(o, pl.field, pl.field_len);
    o = put(o, L2B, SL(L2B));
    bulk_put_value(o, opt->encoding, row, dims);
    o += pl.value;
    o = put(o, L2C, SL(L2C));
    *written = (size_t)(o - out);
  }
  embd_no_error(err);
  return EMBD_OK;
}

/* ---- .fvecs / .bvecs ---------------------------------------------------------------- */

static embd_result vecs_size(size_t count, size_t dims, size_t elem, size_t *size) {
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  if (!dims || (uint64_t)dims > INT32_MAX) return EMBD_ERR_VECTOR_DIMS;
  const uint64_t rec = 4 + (uint64_t)elem * dims;
  if (rec > SIZE_MAX || (count && rec > SIZE_MAX / count)) return EMBD_ERR_INVALID_ARGUMENT;
  *size = (size_t)rec * count;
  return EMBD_OK;
}

embd_result embd_fvecs_size(size_t count, size_t dims, size_t *size) {
  return vecs_size(count, dims, 4, size);
}
embd_result embd_bvecs_size(size_t count, size_t dims, size_t *size) {
  return vecs_size(count, dims, 1, size);
}

static void wr32le(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static embd_result vecs_write(const void *v, size_t count, size_t dims, size_t elem, void *out,
                              size_t cap, size_t *written) {
  if (!written) return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  if ((!out && cap) || (count && !v)) return EMBD_ERR_INVALID_ARGUMENT;
  size_t total;
  embd_result r = vecs_size(count, dims, elem, &total);
  if (r != EMBD_OK) return r;
  if (total > cap) return *written = total, EMBD_ERR_OUTPUT_TOO_SMALL;
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < count; i++) {
    wr32le(o, (uint32_t)dims);
    if (elem == 4)
      embd_f32_to_le(o + 4, (const float *)v + i * dims, dims);
    else
      memcpy(o + 4, (const uint8_t *)v + i * dims, dims);
    o += 4 + elem * dims;
  }
  *written = total;
  return EMBD_OK;
}

embd_result embd_fvecs_write(const float *v, size_t count, size_t dims, void *out, size_t cap,
                             size_t *written) {
  return vecs_write(v, count, dims, 4, out, cap, written);
}
embd_result embd_bvecs_write(const uint8_t *v, size_t count, size_t dims, void *out, size_t cap,
                             size_t *written) {
  return vecs_write(v, count, dims, 1, out, cap, written);
}
