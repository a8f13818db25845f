/* embd: PostgreSQL binary COPY streams of embedding rows: pgvector's vector, halfvec,
 * sparsevec and bit(n), float4[] and bytea, with an optional leading bigint id.
 *
 *   embd_pgcopy w;
 *   embd_pgcopy_options o = {.type = EMBD_PG_VECTOR, .columns = EMBD_PGCOPY_ID, .typmod = 1536};
 *   embd_pgcopy_init(&w, &o);
 *   size_t rows_len, n;
 *   embd_pgcopy_rows_size(&w, v, count, 1536, &rows_len);       // exact
 *   uint8_t *buf = malloc(EMBD_PGCOPY_HEADER_SIZE + rows_len + EMBD_PGCOPY_TRAILER_SIZE);
 *   embd_error err;
 *   size_t at = 0;
 *   embd_pgcopy_header(&w, buf, EMBD_PGCOPY_HEADER_SIZE, &n);  at += n;
 *   if (embd_pgcopy_write_f32(&w, v, count, 1536, NULL, buf + at, rows_len, &n, &err) != EMBD_OK)
 *     fprintf(stderr, "%s\n", err.message);  // "row 7 element 12: NaN (vector refuses NaN)"
 *   at += n;
 *   embd_pgcopy_trailer(&w, buf + at, EMBD_PGCOPY_TRAILER_SIZE, &n);  at += n;
 *   // psql -c "COPY items (id, embedding) FROM STDIN (FORMAT binary)" < those bytes
 *
 * The stream (PostgreSQL's COPY BINARY format; all integers big-endian):
 *   header   "PGCOPY\n\377\r\n\0", int32 flags 0, int32 header-extension length 0 (19 bytes)
 *   row      int16 field count, then per field int32 length (-1: NULL) and the bytes:
 *            [bigint id: length 8, int64] then the vector column
 *   trailer  int16 -1 (2 bytes)
 * The vector column, in the type's binary send/recv form:
 *   EMBD_PG_VECTOR       int16 dim, int16 0, dim x float4
 *   EMBD_PG_HALFVEC      int16 dim, int16 0, dim x binary16 (embd_from_f32's IEEE rounding)
 *   EMBD_PG_SPARSEVEC    int32 dim, int32 nnz, int32 0, nnz x int32 index (0-based, strictly
 *                        ascending), nnz x float4 (none zero)
 *   EMBD_PG_BIT          int32 bit length, ceil(n/8) bytes, most significant bit first, the
 *                        unused low bits of the last byte zero
 *   EMBD_PG_FLOAT4_ARRAY array_send: int32 ndim (1; 0 for an empty array), int32 flags 0,
 *                        uint32 element type 700 (float4), int32 size, int32 lower bound 1,
 *                        then per element int32 length 4 and the float4
 *   EMBD_PG_BYTEA        the little-endian float32 bytes (4 x dims), as numpy's tobytes()
 *
 * Every check the server makes is made first, and a row that fails one is not written at
 * all: the rows before it are complete in `out` and counted in *written (and w->rows),
 * nothing of the failing row is (not a byte of it is stored), so the caller can write out
 * what succeeded and stop, or skip the row. What is refused, as pgvector 0.8 and
 * PostgreSQL 15 refuse it:
 *   EMBD_ERR_VECTOR_DIMS   vector, halfvec: dims outside 1..16,000; sparsevec: dims outside
 *                          1..1,000,000,000, nnz above 16,000 or above dims; bit: dims 0; any
 *                          type: dims different from options.typmod (when set); a field
 *                          longer than PostgreSQL reads (about 1 GiB); err->offset = the row
 *   EMBD_ERR_VECTOR_VALUE  vector, halfvec, sparsevec: a NaN or an infinity; halfvec: a finite
 *                          float32 whose binary16 rounding is infinite (|x| >= 65520, as
 *                          pgvector's float4 -> halfvec refuses it); sparsevec: a zero value
 *                          given with indices (dense input drops its zeros); float4[] and
 *                          bytea only with EMBD_PGCOPY_FINITE. err->offset = the element's
 *                          index in the row (sparse input: its position in indices/values)
 *   EMBD_ERR_SPARSE_INDEX  a sparse index at or above dims, below or equal to the one before
 *                          it; err->offset = its position
 * PostgreSQL ends a binary COPY at end of input on a row boundary, trailer or not (checked
 * against PostgreSQL 15 by tests/pg/): a stream cut at a refused row loads the rows before
 * it. For all or nothing, write the batch into memory with the multi-row calls and send it
 * only when every call succeeded.
 * err->message names the row (its number in the stream, w->rows) and the element, e.g.
 * "row 3 element 17: inf (halfvec refuses infinities)".
 * EMBD_ERR_OUTPUT_TOO_SMALL: nothing of the call is written (*written = the bytes the whole
 * call needs, exact, and w is unchanged); EMBD_ERR_INVALID_ARGUMENT likewise.
 *
 * Thread safety: the functions are reentrant; an embd_pgcopy is one stream, used by one
 * thread at a time (it counts rows and hands out ids); distinct writers are independent.
 * A stream may also be made of pieces written by several writers in parallel, each
 * initialized alike: the header once, each piece's rows, the trailer once.
 */
#ifndef EMBD_PGCOPY_H
#define EMBD_PGCOPY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_PGCOPY_HEADER_SIZE 19
#define EMBD_PGCOPY_TRAILER_SIZE 2
/* pgvector's limits (vector.h, halfvec.h, sparsevec.h of pgvector 0.8). */
#define EMBD_PGVECTOR_MAX_DIM 16000
#define EMBD_PGVECTOR_SPARSE_MAX_DIM 1000000000
#define EMBD_PGVECTOR_SPARSE_MAX_NNZ 16000

/* The vector column's type. */
typedef enum embd_pg_type {
  EMBD_PG_VECTOR = 0,       /* pgvector vector(n) */
  EMBD_PG_HALFVEC = 1,      /* pgvector halfvec(n) */
  EMBD_PG_SPARSEVEC = 2,    /* pgvector sparsevec(n) */
  EMBD_PG_BIT = 3,          /* bit(n) (pgvector's binary vectors) */
  EMBD_PG_FLOAT4_ARRAY = 4, /* real[] / float4[] */
  EMBD_PG_BYTEA = 5,        /* bytea: the little-endian float32 bytes */
  EMBD_PG_TYPE_COUNT_       /* number of types; not a type */
} embd_pg_type;

/* options.columns: the columns before the vector, in this order. */
#define EMBD_PGCOPY_ID 1u  /* a bigint id */
#define EMBD_PGCOPY_KEY 2u /* a text key and an int4 index (a batch file's custom_id and the
                              row's data[].index): keys->key, key_len and first_index give
                              them (below); required with this bit. The size functions
                              count these two fields without the key's text: add key_len
                              bytes to each row. */

/* options.flags */
#define EMBD_PGCOPY_FINITE 1u /* refuse NaN and infinities for float4[] and bytea too (a
                                 staging table later cast to vector refuses them then) */

typedef struct embd_pgcopy_options {
  embd_pg_type type;
  unsigned columns;  /* EMBD_PGCOPY_ID, or 0: the vector alone */
  unsigned flags;    /* EMBD_PGCOPY_FINITE */
  uint32_t typmod;   /* the column's declared dims (vector(1536): 1536; bit(n): n), checked
                        on every row; 0: none declared */
  int64_t first_id;  /* the id of stream row 0 when ids are not given (below) */
  uint64_t reserved_[4];     /* must be zero (embd/common.h, "Growing the ABI") */
  void *reserved_ptr_[2];
} embd_pgcopy_options;

/* Per-call values of the leading columns. NULL, or ids NULL: row r of the stream (w->rows
 * when it is written) gets id options.first_id + r. With EMBD_PGCOPY_KEY every row of the
 * call gets the text key[0 .. key_len) (UTF-8 as the server's encoding wants it; a NUL
 * byte, which PostgreSQL text cannot hold, is EMBD_ERR_VECTOR_VALUE) and row i the index
 * first_index + i (an int4: beyond INT32_MAX is EMBD_ERR_VECTOR_VALUE). */
typedef struct embd_pgcopy_keys {
  const int64_t *ids; /* one per row of the call */
  uint64_t key_len;      /* 0.3: the EMBD_PGCOPY_KEY text's bytes (was reserved_[0]) */
  int64_t first_index;   /* 0.3: the index of the call's first row (was reserved_[1]) */
  uint64_t reserved_[2]; /* must be zero */
  const char *key;       /* 0.3: the EMBD_PGCOPY_KEY text (was reserved_ptr_[0]) */
  void *reserved_ptr_[1];
} embd_pgcopy_keys;

/* One COPY stream's writer: caller-owned, no allocation, nothing to free. */
typedef struct embd_pgcopy {
  embd_pgcopy_options opt;
  uint64_t rows;  /* rows written so far: the next row's number in messages and ids */
  uint64_t bytes; /* bytes written so far (header, rows, trailer) */
} embd_pgcopy;

/* Checks the options (NULL: a bare vector column) and resets the counts. */
EMBD_API embd_result embd_pgcopy_init(embd_pgcopy *w, const embd_pgcopy_options *opt);

/* The 19-byte header and the 2-byte trailer. EMBD_ERR_OUTPUT_TOO_SMALL with the size. */
EMBD_API embd_result embd_pgcopy_header(embd_pgcopy *w, void *out, size_t cap, size_t *written);
EMBD_API embd_result embd_pgcopy_trailer(embd_pgcopy *w, void *out, size_t cap, size_t *written);

/* Exact bytes of one row whose vector has `dims` dims (sparsevec: `nnz` stored elements;
 * ignored for the other types), leading columns included. EMBD_ERR_VECTOR_DIMS for dims
 * the type refuses (the writers' check). */
EMBD_API embd_result embd_pgcopy_row_size(const embd_pgcopy *w, size_t dims, size_t nnz,
                                          size_t *size);
/* Exact bytes embd_pgcopy_write_f32 writes for this count x dims matrix: count rows of
 * embd_pgcopy_row_size (sparsevec: each row's non-zeros counted, so v is read; the other
 * types do not read v, which may be NULL). Values are not checked here. */
EMBD_API embd_result embd_pgcopy_rows_size(const embd_pgcopy *w, const float *v, size_t count,
                                           size_t dims, size_t *size);
/* Bytes of one NULL row (the vector NULL, the leading columns present). */
EMBD_API embd_result embd_pgcopy_null_row_size(const embd_pgcopy *w, size_t *size);

/* count rows from a row-major count x dims matrix of host floats, into out[0 .. cap); the
 * bytes in *written. Every type: vector and halfvec as the values; sparsevec keeps the
 * non-zeros (+0 and -0 dropped, as pgvector's vector -> sparsevec); bit sets bit j when
 * v[j] > 0 (pgvector's binary_quantize: a NaN gives 0); float4[] and bytea the values bit
 * for bit. count 1 is the per-row call. */
EMBD_API embd_result embd_pgcopy_write_f32(embd_pgcopy *w, const float *v, size_t count,
                                           size_t dims, const embd_pgcopy_keys *keys,
                                           void *out, size_t cap, size_t *written,
                                           embd_error *err);
/* One sparsevec row of `dims` dims from its nnz stored elements: indices (0-based) and
 * values. The writer's type must be EMBD_PG_SPARSEVEC. */
EMBD_API embd_result embd_pgcopy_write_sparse(embd_pgcopy *w, size_t dims,
                                              const uint32_t *indices, const float *values,
                                              size_t nnz, const embd_pgcopy_keys *keys,
                                              void *out, size_t cap, size_t *written,
                                              embd_error *err);
/* count bit rows of `dims` bits from packed bytes, ceil(dims / 8) per row, most significant
 * bit first (numpy.packbits' order); the unused low bits of each row's last byte are
 * written as zero whatever they hold. The writer's type must be EMBD_PG_BIT. */
EMBD_API embd_result embd_pgcopy_write_bits(embd_pgcopy *w, const uint8_t *bits, size_t count,
                                            size_t dims, const embd_pgcopy_keys *keys,
                                            void *out, size_t cap, size_t *written,
                                            embd_error *err);
/* One row whose vector is NULL (field length -1). */
EMBD_API embd_result embd_pgcopy_write_null(embd_pgcopy *w, const embd_pgcopy_keys *keys,
                                            void *out, size_t cap, size_t *written,
                                            embd_error *err);

/* The canonical name of a type ("vector", "halfvec", "sparsevec", "bit", "float4[]",
 * "bytea"); NULL for anything else. */
EMBD_API const char *embd_pg_type_name(embd_pg_type type);

#ifdef __cplusplus
}
#endif

#endif
