/* embd: decoded float32 rows handed to Arrow consumers (pyarrow, Polars, DuckDB, LanceDB,
 * Spark, Ray, anything that imports the Arrow C Data Interface) without a copy.
 *
 *   embd_openai_embeddings e;            // decoded by embd_openai_decode (float32 rows)
 *   struct ArrowSchema s;
 *   struct ArrowArray a;
 *   if (embd_arrow_from_openai(&e, &s, &a, &err) == EMBD_OK) {
 *     // hand s and a to the consumer: it calls a.release(&a) and s.release(&s) when done
 *   }
 *
 * The two structs are the Arrow C Data Interface's, a stable ABI that its specification
 * defines (https://arrow.apache.org/docs/format/CDataInterface.html); they are declared
 * here as the specification writes them, under its ARROW_C_DATA_INTERFACE guard, so a
 * translation unit that also includes Arrow's own abi.h sees one definition. embd does
 * not link Arrow.
 *
 * What leaves:
 *   - embd_arrow_from_openai: one array of type fixed_size_list<item: float>[dims]
 *     (format "+w:<dims>", one child of format "f"), count rows, no nulls. The child's
 *     value buffer IS e->values (embd's own row storage): the whole decoded state of e
 *     moves into the array and e is left as after embd_openai_init (empty, reusable). The
 *     array's release frees it; embd keeps no pointer to it.
 *   - embd_arrow_batch: rows collected from many sources (one batch output line's request
 *     after another), exported as one struct array (a record batch: format "+s") with the
 *     children custom_id (utf8, "u"), index (int32, "i": the row's data[].index within
 *     its request) and embedding (fixed_size_list<float>[dims], as above). The columns'
 *     buffers are the builder's storage, moved into the array without a copy.
 *
 * Both follow the specification's rules: every buffer embd allocates is at least 16-byte
 * aligned (malloc), null_count 0 with no validity bitmap (buffers[0] NULL), offset 0,
 * n_buffers 1 for fixed_size_list and struct, 2 for float and int32, 3 for utf8 (its
 * int32 offsets never NULL, even for 0 rows). Every field carries ARROW_FLAG_NULLABLE
 * (what pyarrow, Spark and the stores make by default, so schemas compare equal), the
 * list's child field is named "item". Each child (schema and array) has its own
 * private_data and release, so a consumer may move a child out and release the parent
 * first (the specification's "moving child arrays"); a release sets `release` to NULL,
 * and releasing the parent releases the children not moved out.
 *
 * Errors (on error the outputs' release is NULL and nothing moved):
 *   EMBD_ERR_INVALID_ARGUMENT  a NULL argument; rows kept in the wire dtype
 *                              (EMBD_OPENAI_KEEP_DTYPE: only float32 rows leave as Arrow);
 *                              dims above INT32_MAX (fixed_size_list's size is an int32);
 *                              custom_ids over 2^31 - 1 bytes in one batch (utf8's int32
 *                              offsets: export in parts); an index above INT32_MAX
 *   EMBD_ERR_OPENAI_DIMS       embd_arrow_batch_add with other dims than the rows before
 *   EMBD_ERR_OUT_OF_MEMORY
 */
#ifndef EMBD_ARROW_H
#define EMBD_ARROW_H

#include "common.h"
#include "openai.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;

  /* Release callback */
  void (*release)(struct ArrowSchema *);
  /* Opaque producer-specific data */
  void *private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;

  /* Release callback */
  void (*release)(struct ArrowArray *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

/* Moves e's float32 rows (count x dims, from embd_openai_decode / _append / _decode_bytes /
 * _batch_line without EMBD_OPENAI_KEEP_DTYPE) into *array as fixed_size_list<float>[dims]
 * and describes it in *schema. On success e is empty (as after embd_openai_init; its
 * storage, parser scratch included, belongs to the array until its release). A decoded
 * e with count 0 gives an array of length 0 (dims as decoded, 0 when nothing was). */
EMBD_API embd_result embd_arrow_from_openai(embd_openai_embeddings *e, struct ArrowSchema *schema,
                                            struct ArrowArray *array, embd_error *err);

/* A builder of the record batch described above. Zero it with embd_arrow_batch_init; rows,
 * dims and id_bytes are for reading. Not thread-safe per object. */
typedef struct embd_arrow_batch {
  size_t rows;      /* rows added since init or the last export */
  size_t dims;      /* the rows' dims (0 until the first row) */
  size_t id_bytes;  /* custom_id bytes held */
  /* Room for later fields (zeroed by init). */
  uint64_t reserved_[4];
  void *impl_;
} embd_arrow_batch;

EMBD_API void embd_arrow_batch_init(embd_arrow_batch *b);
/* Frees what b holds (rows not exported) and zeroes it. */
EMBD_API void embd_arrow_batch_free(embd_arrow_batch *b);
/* Room for `rows` more rows and `id_bytes` more custom_id bytes (an estimate: the columns
 * then grow without copies or fresh page faults while it holds). */
EMBD_API embd_result embd_arrow_batch_reserve(embd_arrow_batch *b, size_t rows, size_t id_bytes,
                                              size_t dims, embd_error *err);
/* Appends `count` rows values[0 .. count x dims) (float32, row-major, copied) with
 * custom_id (id_len bytes of UTF-8, NUL allowed; the caller's, as embd_openai_batch_info
 * gives it: valid UTF-8 as the strict decoder guarantees) and index first_index + i for
 * row i. dims must equal those of the rows before (EMBD_ERR_OPENAI_DIMS); dims 0 only with
 * count 0. On error nothing is added. */
EMBD_API embd_result embd_arrow_batch_add(embd_arrow_batch *b, const char *custom_id, size_t id_len,
                                          const float *values, size_t count, size_t dims,
                                          size_t first_index, embd_error *err);
/* Moves the rows into one struct array {custom_id: utf8, index: int32, embedding:
 * fixed_size_list<float>[dims]} (dims 0 when no row was added). b is then empty (as after
 * init) and may collect the next batch. */
EMBD_API embd_result embd_arrow_batch_export(embd_arrow_batch *b, struct ArrowSchema *schema,
                                             struct ArrowArray *array, embd_error *err);

#ifdef __cplusplus
}
#endif

#endif
