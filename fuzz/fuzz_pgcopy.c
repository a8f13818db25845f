/* Fuzz target for the PostgreSQL COPY writer's checks (embd/pgcopy.h): arbitrary bytes as
 * sparse rows (dims, indices, values) and dense rows of every column type, the writers'
 * verdict against a naive statement of pgvector's and PostgreSQL's rules written here, and
 * on success the row parsed back; on a refusal not a byte of the row in the output (canary)
 * and *written 0, the message non-empty and the offset the element.
 *
 * Input: byte 0 the column type ((byte & 7) mod 6) and options (bit 3: the id column,
 * bit 4: EMBD_PGCOPY_FINITE, bit 5: a typmod equal to dims, bit 6: a typmod one off, bit 7
 * with sparsevec: indices and values given), bytes 1-4 dims (little-endian, mod 40,000),
 * then the rest: (uint32 index, float bits) pairs for given sparse rows, else float bits
 * repeated to fill the dims (zeros when there are none).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

#define CANARY 0xA5

static void fail(const char *what, const embd_error *err) {
  fprintf(stderr, "fuzz_pgcopy: %s (%s)\n", what, err ? err->message : "");
  abort();
}
static uint32_t rd32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t rd32be(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* pgvector's sparsevec_recv rules, the plain way: the expected result. */
static embd_result naive_sparse(size_t dims, const uint32_t *idx, const float *val, size_t nnz,
                                uint32_t typmod, size_t *bad) {
  *bad = 0;
  if (dims < 1 || dims > 1000000000) return EMBD_ERR_VECTOR_DIMS;
  if (typmod && dims != typmod) return EMBD_ERR_VECTOR_DIMS;
  if (nnz > 16000 || nnz > dims) return EMBD_ERR_VECTOR_DIMS;
  for (size_t k = 0; k < nnz; k++)
    if (idx[k] >= dims || (k && idx[k] <= idx[k - 1])) return *bad = k, EMBD_ERR_SPARSE_INDEX;
  for (size_t k = 0; k < nnz; k++)
    if (isnan(val[k]) || isinf(val[k]) || val[k] == 0) return *bad = k, EMBD_ERR_VECTOR_VALUE;
  return EMBD_OK;
}

static embd_result naive_dense(embd_pg_type t, unsigned flags, size_t dims, const float *v,
                               uint32_t typmod, size_t *bad) {
  *bad = 0;
  size_t lo = 1, hi = 0x3FFFFFFF;
  if (t == EMBD_PG_VECTOR || t == EMBD_PG_HALFVEC) hi = 16000;
  if (t == EMBD_PG_FLOAT4_ARRAY || t == EMBD_PG_BYTEA) lo = 0;
  if (dims < lo || dims > hi || (typmod && dims != typmod)) return EMBD_ERR_VECTOR_DIMS;
  const int finite = t == EMBD_PG_VECTOR || t == EMBD_PG_HALFVEC || t == EMBD_PG_SPARSEVEC ||
                     ((t == EMBD_PG_FLOAT4_ARRAY || t == EMBD_PG_BYTEA) && (flags & EMBD_PGCOPY_FINITE));
  size_t nnz = 0;
  for (size_t j = 0; finite && j < dims; j++) {
    if (isnan(v[j]) || isinf(v[j])) return *bad = j, EMBD_ERR_VECTOR_VALUE;
    if (t == EMBD_PG_HALFVEC && (v[j] >= 65520.0f || v[j] <= -65520.0f)) return *bad = j, EMBD_ERR_VECTOR_VALUE;
    nnz += v[j] != 0;
  }
  if (t == EMBD_PG_SPARSEVEC && nnz > 16000) return EMBD_ERR_VECTOR_DIMS;
  return EMBD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  const uint8_t ctl = data[0];
  const embd_pg_type t = (embd_pg_type)((ctl & 7) % 6);
  size_t dims = rd32le(data + 1) % 40000;
  data += 5, size -= 5;
  embd_pgcopy_options o = {0};
  o.type = t;
  o.columns = ctl & 8 ? EMBD_PGCOPY_ID : 0;
  o.flags = ctl & 16 ? EMBD_PGCOPY_FINITE : 0;
  o.typmod = ctl & 32 ? (uint32_t)dims : ctl & 64 ? (uint32_t)dims + 1 : 0;
  embd_pgcopy w;
  if (embd_pgcopy_init(&w, &o) != EMBD_OK) fail("init", NULL);
  embd_error err;
  size_t n, bad;
  if (t == EMBD_PG_SPARSEVEC && (ctl & 128)) {
    const size_t nnz = size / 8;
    uint32_t *idx = malloc(nnz * 4 + 4);
    float *val = malloc(nnz * 4 + 4);
    if (!idx || !val) abort();
    for (size_t k = 0; k < nnz; k++) {
      idx[k] = rd32le(data + 8 * k);
      uint32_t u = rd32le(data + 8 * k + 4);
      memcpy(&val[k], &u, 4);
    }
    const embd_result want = naive_sparse(dims, idx, val, nnz, o.typmod, &bad);
    const size_t cap = 18 + 12 + 8 * nnz + 16;
    uint8_t *out = malloc(cap);
    if (!out) abort();
    memset(out, CANARY, cap);
    const embd_result r = embd_pgcopy_write_sparse(&w, dims, idx, val, nnz, NULL, out, cap, &n, &err);
    if (r != want) fail("sparse verdict differs from the rules", &err);
    if (r != EMBD_OK) {
      if (n || !err.message[0] || err.result != r) fail("refusal: written, or no message", &err);
      if (r != EMBD_ERR_VECTOR_DIMS && err.offset != bad) fail("refusal offset", &err);
      for (size_t i = 0; i < cap; i++)
        if (out[i] != CANARY) fail("refused row left bytes", &err);
    } else {
      const size_t at = o.columns ? 18 : 6;
      if (n != at + 12 + 8 * nnz || rd32be(out + at) != dims || rd32be(out + at + 4) != nnz)
        fail("sparse row layout", &err);
      for (size_t k = 0; k < nnz; k++)
        if (rd32be(out + at + 12 + 4 * k) != idx[k] || rd32be(out + at + 12 + 4 * nnz + 4 * k) != f2u(val[k]))
          fail("sparse element", &err);
    }
    free(idx), free(val), free(out);
    return 0;
  }
  /* dense: the input's floats repeated to dims (at least one float, else zeros) */
  float *v = malloc(dims * 4 + 4);
  if (!v) abort();
  const size_t nf = size / 4;
  for (size_t j = 0; j < dims; j++) {
    uint32_t u = nf ? rd32le(data + 4 * (j % nf)) : 0;
    memcpy(&v[j], &u, 4);
  }
  const embd_result want = naive_dense(t, o.flags, dims, v, o.typmod, &bad);
  size_t need = 0;
  embd_result sr = embd_pgcopy_rows_size(&w, v, 1, dims, &need);
  if (sr != EMBD_OK && sr != EMBD_ERR_VECTOR_DIMS) fail("rows_size", NULL);
  const size_t cap = (sr == EMBD_OK ? need : 0) + 16;
  uint8_t *out = malloc(cap);
  if (!out) abort();
  memset(out, CANARY, cap);
  const embd_result r = embd_pgcopy_write_f32(&w, v, 1, dims, NULL, out, cap, &n, &err);
  if (r != want) fail("dense verdict differs from the rules", &err);
  if (r != EMBD_OK) {
    if (n || !err.message[0] || err.result != r || w.rows) fail("refusal: written, or no message", &err);
    if (r == EMBD_ERR_VECTOR_VALUE && err.offset != bad) fail("refusal offset", &err);
    for (size_t i = 0; i < cap; i++)
      if (out[i] != CANARY) fail("refused row left bytes", &err);
  } else {
    if (n != need || out[n] != CANARY || w.rows != 1) fail("size", &err);
  }
  free(v), free(out);
  return 0;
}
