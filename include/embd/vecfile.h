/* embd: vector ingest files beside PostgreSQL COPY (embd/pgcopy.h): Elasticsearch /
 * OpenSearch `_bulk` NDJSON with binary-encoded vectors, and FAISS .fvecs / .bvecs.
 *
 *   embd_bulk_options o = {.index = "docs", .field = "emb", .encoding = EMBD_BULK_F32_BASE64_BE};
 *   size_t need, n;
 *   embd_bulk_size(&o, v, count, dims, ids, &need);            // exact
 *   char *body = malloc(need);
 *   embd_bulk_write_f32(&o, v, count, dims, ids, body, need, &n, &err);
 *   // POST /_bulk with Content-Type: application/x-ndjson
 *
 * _bulk lines, two per vector, each ending in "\n":
 *   {"index":{"_index":"<index>","_id":"<id>"}}     ("_id" left out when ids is NULL)
 *   {"<field>":"<value>"}
 * The value, by encoding:
 *   EMBD_BULK_F32_BASE64_BE  base64 of the big-endian float32 bytes: Elasticsearch 9.3+
 *                            dense_vector (element_type float)
 *   EMBD_BULK_F32_BASE64_LE  base64 of the little-endian float32 bytes: OpenSearch k-NN
 *   EMBD_BULK_INT8_HEX       hex of int8 values (dense_vector element_type byte): each value
 *                            an integer in -128..127 (EMBD_ERR_DTYPE_RANGE otherwise)
 *   EMBD_BULK_BIT_HEX        hex of packed bits, bit j = (v[j] > 0), most significant bit
 *                            first (element_type bit): dims a multiple of 8
 *                            (EMBD_ERR_DTYPE_LENGTH otherwise)
 * The index and field names are JSON-escaped ('"', '\\' and control characters); they must
 * be UTF-8 (EMBD_ERR_INVALID_ARGUMENT otherwise). Float encodings refuse NaN and infinities
 * (EMBD_ERR_VECTOR_VALUE: both servers reject them), err->offset the element's index in its
 * row and the message naming the row and element; the lines of the rows before it are in
 * out and counted in *written, nothing of the refused row is.
 *
 * .fvecs: per vector int32 d, then d float32; .bvecs: int32 d, then d uint8; little-endian
 * (FAISS's and the TEXMEX corpora's format: numpy.fromfile(path, "<i4") reshaped to
 * (-1, d + 1) and viewed as float32 reads an .fvecs file).
 *
 * EMBD_ERR_OUTPUT_TOO_SMALL: nothing written, *written = the bytes the call needs (exact).
 *
 * Thread safety: reentrant; any thread, any time.
 */
#ifndef EMBD_VECFILE_H
#define EMBD_VECFILE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum embd_bulk_encoding {
  EMBD_BULK_F32_BASE64_BE = 0, /* Elasticsearch 9.3+ dense_vector */
  EMBD_BULK_F32_BASE64_LE = 1, /* OpenSearch k-NN */
  EMBD_BULK_INT8_HEX = 2,      /* element_type byte */
  EMBD_BULK_BIT_HEX = 3,       /* element_type bit */
  EMBD_BULK_ENCODING_COUNT_    /* not an encoding */
} embd_bulk_encoding;

typedef struct embd_bulk_options {
  const char *index; /* the _index (UTF-8, escaped here) */
  size_t index_len;  /* 0: strlen(index) */
  const char *field; /* the document's vector field */
  size_t field_len;  /* 0: strlen(field) */
  embd_bulk_encoding encoding;
  uint64_t reserved_[4]; /* must be zero (embd/common.h, "Growing the ABI") */
  void *reserved_ptr_[2];
} embd_bulk_options;

/* Exact bytes of embd_bulk_write_f32's output for count vectors of dims dims with these ids
 * (NULL: no "_id"). */
EMBD_API embd_result embd_bulk_size(const embd_bulk_options *opt, size_t count, size_t dims,
                                    const int64_t *ids, size_t *size);
/* count vectors (a row-major count x dims matrix of host floats) as 2 x count _bulk lines. */
EMBD_API embd_result embd_bulk_write_f32(const embd_bulk_options *opt, const float *v,
                                         size_t count, size_t dims, const int64_t *ids,
                                         char *out, size_t cap, size_t *written,
                                         embd_error *err);

/* Bytes of count .fvecs records of dims dims: count * (4 + 4 * dims); .bvecs: count *
 * (4 + dims). dims 1..INT32_MAX (the record's int32), else EMBD_ERR_VECTOR_DIMS. */
EMBD_API embd_result embd_fvecs_size(size_t count, size_t dims, size_t *size);
EMBD_API embd_result embd_bvecs_size(size_t count, size_t dims, size_t *size);
/* count .fvecs records from a count x dims matrix of host floats (any values, bit for bit). */
EMBD_API embd_result embd_fvecs_write(const float *v, size_t count, size_t dims, void *out,
                                      size_t cap, size_t *written);
/* count .bvecs records from a count x dims matrix of bytes. */
EMBD_API embd_result embd_bvecs_write(const uint8_t *v, size_t count, size_t dims, void *out,
                                      size_t cap, size_t *written);

#ifdef __cplusplus
}
#endif

#endif
