/* PostgreSQL binary COPY streams of embedding rows. See include/embd/pgcopy.h.
 *
 * Each write call checks its arguments, the dims (one check for the call: every row has
 * them) and the whole call's size against cap, then takes the rows one by one: a row is
 * checked completely (values, sparse order, non-zero count) before its first byte is
 * stored, so a refused row leaves nothing behind, and *written covers the rows before it.
 * The byte order and dtype work is the kernels' (embd_from_f32, embd_u32_to_be): this
 * file only places their output in the COPY layout. */
#include "embd/pgcopy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "embd/bswap.h"
#include "embd/convert.h"
#include "internal.h"

/* The largest field PostgreSQL's COPY reads: CopyReadBinaryAttribute enlarges a StringInfo
 * to the field's length, and enlargeStringInfo refuses needed >= MaxAllocSize (1 GiB - 1)
 * with the one byte it adds for a terminator. */
#define PG_MAX_FIELD 0x3FFFFFFEu
/* float4 element type OID (pg_type.dat). */
#define PG_FLOAT4_OID 700u
/* Floats staged per kernel call where the output is not one contiguous run. */
#define CHUNK 256
/* binary16's rounding of |x| >= 65520 (65504 + half an ulp of 32, ties to even, away from
 * 65504's odd mantissa) is infinity: pgvector's float4 -> halfvec refuses those. */
#define HALF_OVERFLOW 65520.0f

static const char *const type_names[EMBD_PG_TYPE_COUNT_] = {
    [EMBD_PG_VECTOR] = "vector",     [EMBD_PG_HALFVEC] = "halfvec", [EMBD_PG_SPARSEVEC] = "sparsevec",
    [EMBD_PG_BIT] = "bit",           [EMBD_PG_FLOAT4_ARRAY] = "float4[]", [EMBD_PG_BYTEA] = "bytea"};

const char *embd_pg_type_name(embd_pg_type type) {
  return (unsigned)type < EMBD_PG_TYPE_COUNT_ ? type_names[type] : NULL;
}


static void wr16be(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void wr32be(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}
static void wr64be(uint8_t *p, uint64_t v) {
  wr32be(p, (uint32_t)(v >> 32));
  wr32be(p + 4, (uint32_t)v);
}

/* The float's text for messages: "NaN", "inf", "-inf" or %.9g. */
static const char *ftext(char *buf, size_t cap, float x) {
  if (isnan(x)) return "NaN";
  if (isinf(x)) return x > 0 ? "inf" : "-inf";
  snprintf(buf, cap, "%.9g", (double)x);
  return buf;
}

/* ---- options and sizes -------------------------------------------------------------- */

static int opt_ok(const embd_pgcopy_options *o) {
  return (unsigned)o->type < EMBD_PG_TYPE_COUNT_ && !(o->columns & ~(EMBD_PGCOPY_ID | EMBD_PGCOPY_KEY)) &&
         !(o->flags & ~EMBD_PGCOPY_FINITE) && EMBD_RESERVED_OK(o);
}

embd_result embd_pgcopy_init(embd_pgcopy *w, const embd_pgcopy_options *opt) {
  if (!w) return EMBD_ERR_INVALID_ARGUMENT;
  embd_pgcopy_options o;
  memset(&o, 0, sizeof o);
  if (opt) o = *opt;
  if (!opt_ok(&o)) return EMBD_ERR_INVALID_ARGUMENT;
  memset(w, 0, sizeof *w);
  w->opt = o;
  return EMBD_OK;
}

/* Bytes before the vector field's data: field count, the id field, the key's length and
 * the index field (the key's text is the caller's: key_len), the vector's length. */
static uint64_t prefix_bytes(const embd_pgcopy *w) {
  return 2 + ((w->opt.columns & EMBD_PGCOPY_ID) ? 12 : 0) + ((w->opt.columns & EMBD_PGCOPY_KEY) ? 12 : 0) + 4;
}
static uint64_t key_bytes(const embd_pgcopy *w, const embd_pgcopy_keys *keys) {
  return (w->opt.columns & EMBD_PGCOPY_KEY) && keys ? keys->key_len : 0;
}

/* The vector field's length for dims (nnz: sparsevec's stored elements). dims is at most
 * SIZE_MAX, so 8 * dims + 20 fits in 64 bits on every host. */
static uint64_t field_bytes(embd_pg_type t, uint64_t dims, uint64_t nnz) {
  switch (t) {
    case EMBD_PG_VECTOR: return 4 + 4 * dims;
    case EMBD_PG_HALFVEC: return 4 + 2 * dims;
    case EMBD_PG_SPARSEVEC: return 12 + 8 * nnz;
    case EMBD_PG_BIT: return 4 + (dims + 7) / 8;
    case EMBD_PG_FLOAT4_ARRAY: return dims ? 20 + 8 * dims : 12;
    default: return 4 * dims; /* bytea */
  }
}

/* The row-level checks: dims for the type and the typmod, nnz (sparsevec), the field's
 * length. EMBD_ERR_VECTOR_DIMS at the row. */
static embd_result check_dims(const embd_pgcopy *w, uint64_t row, size_t dims, size_t nnz,
                              int check_nnz, embd_error *err) {
  const embd_pg_type t = w->opt.type;
  const char *name = type_names[t];
  uint64_t lo = 1, hi = UINT64_MAX;
  if (t == EMBD_PG_VECTOR || t == EMBD_PG_HALFVEC) hi = EMBD_PGVECTOR_MAX_DIM;
  if (t == EMBD_PG_SPARSEVEC) hi = EMBD_PGVECTOR_SPARSE_MAX_DIM;
  if (t == EMBD_PG_BIT) hi = (uint64_t)INT32_MAX - 7; /* VARBITMAXLEN */
  if (t == EMBD_PG_FLOAT4_ARRAY || t == EMBD_PG_BYTEA) lo = 0;
  if (dims < lo || dims > hi)
    return embd_fail(err, EMBD_ERR_VECTOR_DIMS, row, "row %llu: %zu dims, outside %s's %llu..%llu",
                     (unsigned long long)row, dims, name, (unsigned long long)lo,
                     (unsigned long long)(hi == UINT64_MAX ? PG_MAX_FIELD : hi));
  if (w->opt.typmod && dims != w->opt.typmod)
    return embd_fail(err, EMBD_ERR_VECTOR_DIMS, row, "row %llu: %zu dims, but the column is %s(%u)",
                     (unsigned long long)row, dims, name, (unsigned)w->opt.typmod);
  if (check_nnz && t == EMBD_PG_SPARSEVEC) {
    if (nnz > EMBD_PGVECTOR_SPARSE_MAX_NNZ)
      return embd_fail(err, EMBD_ERR_VECTOR_DIMS, row,
                       "row %llu: %zu non-zero elements, above sparsevec's %d", (unsigned long long)row,
                       nnz, EMBD_PGVECTOR_SPARSE_MAX_NNZ);
    if (nnz > dims)
      return embd_fail(err, EMBD_ERR_VECTOR_DIMS, row, "row %llu: %zu elements, more than its %zu dims",
                       (unsigned long long)row, nnz, dims);
  }
  if (field_bytes(t, dims, nnz) > PG_MAX_FIELD)
    return embd_fail(err, EMBD_ERR_VECTOR_DIMS, row,
                     "row %llu: a %s field of %llu bytes, above PostgreSQL's %u", (unsigned long long)row,
                     name, (unsigned long long)field_bytes(t, dims, nnz), PG_MAX_FIELD);
  return EMBD_OK;
}

static embd_result fits(uint64_t n, size_t *size) {
  if (n > SIZE_MAX) return EMBD_ERR_INVALID_ARGUMENT;
  *size = (size_t)n;
  return EMBD_OK;
}

embd_result embd_pgcopy_row_size(const embd_pgcopy *w, size_t dims, size_t nnz, size_t *size) {
  if (!w || !size || !opt_ok(&w->opt)) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = check_dims(w, w->rows, dims, nnz, 1, NULL);
  if (r != EMBD_OK) return r;
  return fits(prefix_bytes(w) + field_bytes(w->opt.type, dims, nnz), size);
}

embd_result embd_pgcopy_null_row_size(const embd_pgcopy *w, size_t *size) {
  if (!w || !size || !opt_ok(&w->opt)) return EMBD_ERR_INVALID_ARGUMENT;
  *size = (size_t)prefix_bytes(w);
  return EMBD_OK;
}

static size_t count_nonzero(const float *v, size_t dims) {
  size_t n = 0;
  for (size_t j = 0; j < dims; j++) n += v[j] != 0.0f; /* NaN counts: it is refused later */
  return n;
}

/* The whole call's bytes (dims already checked). */
static embd_result call_size(const embd_pgcopy *w, const float *v, size_t count, size_t dims,
                             uint64_t *total) {
  const uint64_t pre = prefix_bytes(w);
  uint64_t n = 0;
  if (w->opt.type == EMBD_PG_SPARSEVEC) {
    for (size_t i = 0; i < count; i++) {
      n += pre + field_bytes(EMBD_PG_SPARSEVEC, dims, count_nonzero(v + i * dims, dims));
      if (n > SIZE_MAX) return EMBD_ERR_INVALID_ARGUMENT;
    }
  } else {
    const uint64_t row = pre + field_bytes(w->opt.type, dims, 0);
    if (count && row > SIZE_MAX / count) return EMBD_ERR_INVALID_ARGUMENT;
    n = row * count;
  }
  *total = n;
  return EMBD_OK;
}

embd_result embd_pgcopy_rows_size(const embd_pgcopy *w, const float *v, size_t count, size_t dims,
                                  size_t *size) {
  if (!w || !size || !opt_ok(&w->opt)) return EMBD_ERR_INVALID_ARGUMENT;
  if (w->opt.type == EMBD_PG_SPARSEVEC && count && dims && !v) return EMBD_ERR_INVALID_ARGUMENT;
  if (count && dims > SIZE_MAX / count) return EMBD_ERR_INVALID_ARGUMENT;
  embd_result r = check_dims(w, w->rows, dims, 0, 0, NULL);
  if (r != EMBD_OK) return r;
  uint64_t n;
  r = call_size(w, v, count, dims, &n);
  if (r != EMBD_OK) return r;
  return fits(n, size);
}

/* ---- header, trailer ---------------------------------------------------------------- */

embd_result embd_pgcopy_header(embd_pgcopy *w, void *out, size_t cap, size_t *written) {
  static const uint8_t sig[EMBD_PGCOPY_HEADER_SIZE] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xFF, '\r',
                                                       '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0};
  if (!w || !written || (!out && cap)) return EMBD_ERR_INVALID_ARGUMENT;
  *written = sizeof sig;
  if (cap < sizeof sig) return EMBD_ERR_OUTPUT_TOO_SMALL;
  memcpy(out, sig, sizeof sig);
  w->bytes += sizeof sig;
  return EMBD_OK;
}

embd_result embd_pgcopy_trailer(embd_pgcopy *w, void *out, size_t cap, size_t *written) {
  if (!w || !written || (!out && cap)) return EMBD_ERR_INVALID_ARGUMENT;
  *written = EMBD_PGCOPY_TRAILER_SIZE;
  if (cap < EMBD_PGCOPY_TRAILER_SIZE) return EMBD_ERR_OUTPUT_TOO_SMALL;
  wr16be((uint8_t *)out, 0xFFFF);
  w->bytes += EMBD_PGCOPY_TRAILER_SIZE;
  return EMBD_OK;
}

/* ---- rows --------------------------------------------------------------------------- */

/* Checks a call's common arguments; *written = 0. */
static embd_result args_ok(const embd_pgcopy *w, const embd_pgcopy_keys *keys, const void *out,
                           size_t cap, size_t *written) {
  if (!written) return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  if (!w || !opt_ok(&w->opt) || (!out && cap)) return EMBD_ERR_INVALID_ARGUMENT;
  if (keys && !EMBD_RESERVED_OK(keys)) return EMBD_ERR_INVALID_ARGUMENT;
  if ((w->opt.columns & EMBD_PGCOPY_KEY) &&
      (!keys || (!keys->key && keys->key_len) || keys->key_len > PG_MAX_FIELD))
    return EMBD_ERR_INVALID_ARGUMENT;
  return EMBD_OK;
}

/* The key and the indexes of count rows: what PostgreSQL's text and int4 take. */
static embd_result check_key(const embd_pgcopy *w, const embd_pgcopy_keys *keys, size_t count,
                             embd_error *err) {
  if (!(w->opt.columns & EMBD_PGCOPY_KEY)) return EMBD_OK;
  const char *nul = keys->key_len ? memchr(keys->key, 0, (size_t)keys->key_len) : NULL;
  if (nul)
    return embd_fail(err, EMBD_ERR_VECTOR_VALUE, (uint64_t)(nul - keys->key),
                     "row %llu: the key holds a NUL byte at %zu (PostgreSQL text cannot)",
                     (unsigned long long)w->rows, (size_t)(nul - keys->key));
  if (count && (keys->first_index < INT32_MIN || keys->first_index > INT32_MAX ||
                (uint64_t)(count - 1) > (uint64_t)((int64_t)INT32_MAX - keys->first_index)))
    return embd_fail(err, EMBD_ERR_VECTOR_VALUE, 0, "row %llu: index %lld .. + %zu does not fit int4",
                     (unsigned long long)w->rows, (long long)keys->first_index, count - 1);
  return EMBD_OK;
}

/* Field count, the id field, and the vector field's length (-1: NULL); returns the bytes. */
static size_t put_prefix(const embd_pgcopy *w, uint8_t *o, const embd_pgcopy_keys *keys, size_t i,
                         int64_t field_len) {
  const int id = (w->opt.columns & EMBD_PGCOPY_ID) != 0;
  const int key = (w->opt.columns & EMBD_PGCOPY_KEY) != 0;
  size_t k = 0;
  wr16be(o, (uint16_t)(1 + id + 2 * key));
  k += 2;
  if (id) {
    const uint64_t v = keys && keys->ids ? (uint64_t)keys->ids[i]
                                         : (uint64_t)w->opt.first_id + w->rows; /* wraps as int64 */
    wr32be(o + k, 8);
    wr64be(o + k + 4, v);
    k += 12;
  }
  if (key) { /* args_ok made sure keys is there; check_key the values */
    const size_t n = (size_t)keys->key_len;
    wr32be(o + k, (uint32_t)n);
    if (n) memcpy(o + k + 4, keys->key, n);
    k += 4 + n;
    wr32be(o + k, 4);
    wr32be(o + k + 4, (uint32_t)(int32_t)(keys->first_index + (int64_t)i));
    k += 8;
  }
  wr32be(o + k, (uint32_t)field_len);
  return k + 4;
}

/* The value checks of one dense row (vector, halfvec, sparsevec; float4[]/bytea with
 * EMBD_PGCOPY_FINITE); *nnz = its non-zeros. */
static embd_result check_values(const embd_pgcopy *w, const float *v, size_t dims, size_t *nnz,
                                embd_error *err) {
  const embd_pg_type t = w->opt.type;
  const int finite = t == EMBD_PG_VECTOR || t == EMBD_PG_HALFVEC || t == EMBD_PG_SPARSEVEC ||
                     ((t == EMBD_PG_FLOAT4_ARRAY || t == EMBD_PG_BYTEA) && (w->opt.flags & EMBD_PGCOPY_FINITE));
  size_t n = 0;
  char b[32];
  if (finite) {
    for (size_t j = 0; j < dims; j++) {
      const float x = v[j];
      if (!isfinite(x))
        return embd_fail(err, EMBD_ERR_VECTOR_VALUE, j, "row %llu element %zu: %s (%s refuses %s)",
                         (unsigned long long)w->rows, j, ftext(b, sizeof b, x), type_names[t],
                         isnan(x) ? "NaN" : "infinities");
      if (t == EMBD_PG_HALFVEC && (x >= HALF_OVERFLOW || x <= -HALF_OVERFLOW))
        return embd_fail(err, EMBD_ERR_VECTOR_VALUE, j,
                         "row %llu element %zu: %s is out of range for halfvec (binary16 rounds it "
                         "to infinity)",
                         (unsigned long long)w->rows, j, ftext(b, sizeof b, x));
      n += x != 0.0f;
    }
  }
  *nnz = n;
  return EMBD_OK;
}

/* A dense row's vector field data at o (length field_bytes). */
static void put_dense(const embd_pgcopy *w, uint8_t *o, const float *v, size_t dims, size_t nnz) {
  switch (w->opt.type) {
    case EMBD_PG_VECTOR:
    case EMBD_PG_HALFVEC:
      wr16be(o, (uint16_t)dims);
      wr16be(o + 2, 0);
      embd_from_f32(o + 4, v, dims, w->opt.type == EMBD_PG_VECTOR ? EMBD_DTYPE_F32 : EMBD_DTYPE_F16,
                    EMBD_ORDER_BE, NULL);
      break;
    case EMBD_PG_SPARSEVEC: {
      wr32be(o, (uint32_t)dims);
      wr32be(o + 4, (uint32_t)nnz);
      wr32be(o + 8, 0);
      uint8_t *oi = o + 12, *ov = o + 12 + 4 * nnz;
      uint32_t idx[CHUNK];
      float val[CHUNK];
      size_t k = 0;
      for (size_t j = 0; j < dims; j++) {
        if (v[j] == 0.0f) continue;
        idx[k] = (uint32_t)j, val[k] = v[j];
        if (++k == CHUNK) {
          embd_u32_to_be(oi, idx, k);
          embd_from_f32(ov, val, k, EMBD_DTYPE_F32, EMBD_ORDER_BE, NULL);
          oi += 4 * k, ov += 4 * k, k = 0;
        }
      }
      embd_u32_to_be(oi, idx, k);
      embd_from_f32(ov, val, k, EMBD_DTYPE_F32, EMBD_ORDER_BE, NULL);
      break;
    }
    case EMBD_PG_BIT: {
      wr32be(o, (uint32_t)dims);
      const size_t whole = dims & ~(size_t)7;
      embd_from_f32(o + 4, v, whole, EMBD_DTYPE_UBINARY, EMBD_ORDER_BE, NULL);
      if (whole < dims) {
        uint8_t last = 0;
        for (size_t j = whole; j < dims; j++)
          if (v[j] > 0.0f) last |= (uint8_t)(0x80u >> (j - whole));
        o[4 + whole / 8] = last;
      }
      break;
    }
    case EMBD_PG_FLOAT4_ARRAY: {
      wr32be(o, dims ? 1 : 0);
      wr32be(o + 4, 0);
      wr32be(o + 8, PG_FLOAT4_OID);
      if (!dims) break;
      wr32be(o + 12, (uint32_t)dims);
      wr32be(o + 16, 1);
      uint8_t be[4 * CHUNK];
      uint8_t *p = o + 20;
      for (size_t i = 0; i < dims; i += CHUNK) {
        const size_t n = dims - i < CHUNK ? dims - i : CHUNK;
        embd_from_f32(be, v + i, n, EMBD_DTYPE_F32, EMBD_ORDER_BE, NULL);
        for (size_t k = 0; k < n; k++, p += 8) {
          wr32be(p, 4);
          memcpy(p + 4, be + 4 * k, 4);
        }
      }
      break;
    }
    default: /* bytea */
      embd_f32_to_le(o, v, dims);
      break;
  }
}

embd_result embd_pgcopy_write_f32(embd_pgcopy *w, const float *v, size_t count, size_t dims,
                                  const embd_pgcopy_keys *keys, void *out, size_t cap,
                                  size_t *written, embd_error *err) {
  embd_result r = args_ok(w, keys, out, cap, written);
  if (r != EMBD_OK) return embd_fail(err, r, 0, "invalid argument");
  if (count && dims && !v) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL values");
  if (count && dims > SIZE_MAX / count)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "count x dims overflows size_t");
  if (count && (r = check_dims(w, w->rows, dims, 0, 0, err)) != EMBD_OK) return r;
  if ((r = check_key(w, keys, count, err)) != EMBD_OK) return r;
  uint64_t total;
  if ((r = call_size(w, v, count, dims, &total)) != EMBD_OK ||
      (count && key_bytes(w, keys) > (SIZE_MAX - total) / count))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the rows' size overflows size_t");
  total += key_bytes(w, keys) * count;
  if (total > cap) {
    *written = (size_t)total;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "%llu bytes needed, %zu given",
                     (unsigned long long)total, cap);
  }
  uint8_t *o = (uint8_t *)out;
  size_t at = 0;
  for (size_t i = 0; i < count; i++) {
    const float *row = v + i * dims;
    size_t nnz = 0;
    if ((r = check_values(w, row, dims, &nnz, err)) != EMBD_OK) break;
    if ((r = check_dims(w, w->rows, dims, nnz, 1, err)) != EMBD_OK) break;
    const uint64_t fb = field_bytes(w->opt.type, dims, nnz);
    at += put_prefix(w, o + at, keys, i, (int64_t)fb);
    put_dense(w, o + at, row, dims, nnz);
    at += (size_t)fb;
    w->rows++;
    *written = at;
  }
  w->bytes += at;
  if (r == EMBD_OK) embd_no_error(err);
  return r;
}

embd_result embd_pgcopy_write_sparse(embd_pgcopy *w, size_t dims, const uint32_t *indices,
                                     const float *values, size_t nnz, const embd_pgcopy_keys *keys,
                                     void *out, size_t cap, size_t *written, embd_error *err) {
  embd_result r = args_ok(w, keys, out, cap, written);
  if (r != EMBD_OK) return embd_fail(err, r, 0, "invalid argument");
  if (w->opt.type != EMBD_PG_SPARSEVEC)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the writer's type is %s, not sparsevec",
                     type_names[w->opt.type]);
  if (nnz && (!indices || !values)) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL input");
  if ((r = check_dims(w, w->rows, dims, nnz, 1, err)) != EMBD_OK) return r;
  if ((r = check_key(w, keys, 1, err)) != EMBD_OK) return r;
  const uint64_t fb = field_bytes(EMBD_PG_SPARSEVEC, dims, nnz);
  const uint64_t total = prefix_bytes(w) + key_bytes(w, keys) + fb;
  if (total > cap) {
    *written = (size_t)total;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "%llu bytes needed, %zu given",
                     (unsigned long long)total, cap);
  }
  /* Everything the server checks, in its order (indices, then values), before a byte. */
  const unsigned long long row = w->rows;
  char b[32];
  for (size_t k = 0; k < nnz; k++) {
    const uint32_t x = indices[k];
    if (x >= dims)
      return embd_fail(err, EMBD_ERR_SPARSE_INDEX, k, "row %llu element %zu: index %u out of range (dims %zu)",
                       row, k, (unsigned)x, dims);
    if (k && x == indices[k - 1])
      return embd_fail(err, EMBD_ERR_SPARSE_INDEX, k, "row %llu element %zu: index %u repeated", row, k,
                       (unsigned)x);
    if (k && x < indices[k - 1])
      return embd_fail(err, EMBD_ERR_SPARSE_INDEX, k,
                       "row %llu element %zu: index %u after %u (indices must ascend)", row, k,
                       (unsigned)x, (unsigned)indices[k - 1]);
  }
  for (size_t k = 0; k < nnz; k++) {
    const float x = values[k];
    if (!isfinite(x))
      return embd_fail(err, EMBD_ERR_VECTOR_VALUE, k,
                       "row %llu element %zu (index %u): %s (sparsevec refuses %s)", row, k,
                       (unsigned)indices[k], ftext(b, sizeof b, x), isnan(x) ? "NaN" : "infinities");
    if (x == 0.0f)
      return embd_fail(err, EMBD_ERR_VECTOR_VALUE, k,
                       "row %llu element %zu (index %u): zero (sparsevec stores non-zero values only)",
                       row, k, (unsigned)indices[k]);
  }
  uint8_t *o = (uint8_t *)out;
  size_t at = put_prefix(w, o, keys, 0, (int64_t)fb);
  wr32be(o + at, (uint32_t)dims);
  wr32be(o + at + 4, (uint32_t)nnz);
  wr32be(o + at + 8, 0);
  embd_u32_to_be(o + at + 12, indices, nnz);
  embd_from_f32(o + at + 12 + 4 * nnz, values, nnz, EMBD_DTYPE_F32, EMBD_ORDER_BE, NULL);
  *written = (size_t)total;
  w->rows++;
  w->bytes += total;
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_pgcopy_write_bits(embd_pgcopy *w, const uint8_t *bits, size_t count, size_t dims,
                                   const embd_pgcopy_keys *keys, void *out, size_t cap,
                                   size_t *written, embd_error *err) {
  embd_result r = args_ok(w, keys, out, cap, written);
  if (r != EMBD_OK) return embd_fail(err, r, 0, "invalid argument");
  if (w->opt.type != EMBD_PG_BIT)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the writer's type is %s, not bit",
                     type_names[w->opt.type]);
  if (count && dims && !bits) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL bits");
  if (count && (r = check_dims(w, w->rows, dims, 0, 0, err)) != EMBD_OK) return r;
  const size_t nb = dims / 8 + (dims % 8 != 0);
  if ((r = check_key(w, keys, count, err)) != EMBD_OK) return r;
  const uint64_t row = prefix_bytes(w) + key_bytes(w, keys) + field_bytes(EMBD_PG_BIT, dims, 0);
  if (count && row > SIZE_MAX / count)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "the rows' size overflows size_t");
  const uint64_t total = row * count;
  if (total > cap) {
    *written = (size_t)total;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "%llu bytes needed, %zu given",
                     (unsigned long long)total, cap);
  }
  uint8_t *o = (uint8_t *)out;
  size_t at = 0;
  const uint8_t mask = (uint8_t)(dims % 8 ? 0xFF00u >> (dims % 8) : 0xFF);
  for (size_t i = 0; i < count; i++) {
    at += put_prefix(w, o + at, keys, i, 4 + (int64_t)nb);
    wr32be(o + at, (uint32_t)dims);
    memcpy(o + at + 4, bits + i * nb, nb);
    o[at + 4 + nb - 1] &= mask;
    at += 4 + nb;
    w->rows++;
  }
  *written = at;
  w->bytes += at;
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_pgcopy_write_null(embd_pgcopy *w, const embd_pgcopy_keys *keys, void *out,
                                   size_t cap, size_t *written, embd_error *err) {
  embd_result r = args_ok(w, keys, out, cap, written);
  if (r != EMBD_OK) return embd_fail(err, r, 0, "invalid argument");
  if ((r = check_key(w, keys, 1, err)) != EMBD_OK) return r;
  const size_t n = (size_t)(prefix_bytes(w) + key_bytes(w, keys));
  if (cap < n) {
    *written = n;
    return embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 0, "%zu bytes needed, %zu given", n, cap);
  }
  put_prefix(w, (uint8_t *)out, keys, 0, -1);
  *written = n;
  w->rows++;
  w->bytes += n;
  embd_no_error(err);
  return EMBD_OK;
}
