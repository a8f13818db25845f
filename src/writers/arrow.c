/* Arrow C Data Interface export (include/embd/arrow.h): decoded float32 rows and batch
 * rows leave as ArrowSchema / ArrowArray pairs whose buffers are embd's own storage, moved,
 * never copied.
 *
 * Ownership: every ArrowArray (the top one and each child) has its own heap node as
 * private_data, owning that array's buffers and the structs of its children. A consumer may
 * move a child out (copy the struct, set the original's release to NULL: the specification
 * allows it), so a child's buffers must not live in its parent's node, and the parent's
 * release releases only the children whose release is still set. Schemas likewise. */
#include "embd/arrow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_KIDS 3

/* ---- arrays ---- */

typedef void (*free_fn)(void *);

typedef struct arr_node {
  const void *bufs[3];
  void *own[3];      /* what release frees, with ... */
  free_fn frees[3];  /* ... these (NULL: nothing) */
  struct ArrowArray *kid_ptrs[MAX_KIDS];
  struct ArrowArray kids[MAX_KIDS];
} arr_node;

static void arr_release(struct ArrowArray *a) {
  if (!a || !a->release) return;
  arr_node *n = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray *k = n->kid_ptrs[i];
    if (k->release) k->release(k);
  }
  for (int i = 0; i < 3; i++)
    if (n->frees[i]) n->frees[i](n->own[i]);
  free(n);
  a->release = NULL;
  a->private_data = NULL;
}

/* An array over a fresh node (NULL: out of memory). Buffers and children are set after. */
static arr_node *arr_make(struct ArrowArray *a, int64_t length, int64_t n_buffers, int64_t n_children) {
  arr_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  memset(a, 0, sizeof *a);
  a->length = length;
  a->null_count = 0;
  a->offset = 0;
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = n->bufs;
  a->children = n_children ? n->kid_ptrs : NULL;
  for (int i = 0; i < MAX_KIDS; i++) n->kid_ptrs[i] = &n->kids[i];
  a->dictionary = NULL;
  a->release = arr_release;
  a->private_data = n;
  return n;
}

/* ---- schemas ---- */

typedef struct sch_node {
  char format[32];
  struct ArrowSchema *kid_ptrs[MAX_KIDS];
  struct ArrowSchema kids[MAX_KIDS];
} sch_node;

static void sch_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  sch_node *n = s->private_data;
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *k = n->kid_ptrs[i];
    if (k->release) k->release(k);
  }
  free(n);
  s->release = NULL;
  s->private_data = NULL;
}

/* A schema over a fresh node; names are static strings. */
static sch_node *sch_make(struct ArrowSchema *s, const char *format, const char *name, int64_t n_children) {
  sch_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  memset(s, 0, sizeof *s);
  snprintf(n->format, sizeof n->format, "%s", format);
  s->format = n->format;
  s->name = name;
  s->metadata = NULL;
  s->flags = ARROW_FLAG_NULLABLE;
  s->n_children = n_children;
  s->children = n_children ? n->kid_ptrs : NULL;
  for (int i = 0; i < MAX_KIDS; i++) n->kid_ptrs[i] = &n->kids[i];
  s->dictionary = NULL;
  s->release = sch_release;
  s->private_data = n;
  return n;
}

static void clear_out(struct ArrowSchema *s, struct ArrowArray *a) {
  if (s) memset(s, 0, sizeof *s);
  if (a) memset(a, 0, sizeof *a);
}

/* The fixed_size_list<float>[dims] schema into s (name: the field's). */
static int vec_schema(struct ArrowSchema *s, size_t dims, const char *name) {
  char fmt[32];
  snprintf(fmt, sizeof fmt, "+w:%zu", dims);
  sch_node *n = sch_make(s, fmt, name, 1);
  if (!n) return -1;
  if (!sch_make(&n->kids[0], "f", "item", 0)) {
    s->n_children = 0;
    sch_release(s);
    return -1;
  }
  return 0;
}

/* The fixed_size_list<float>[dims] array of `rows` rows over `values` into a; owner is
 * freed with fn by the child's release (also when this fails: the storage is then
 * released, so the caller must not keep it). */
static int vec_array(struct ArrowArray *a, size_t rows, size_t dims, const float *values, void *owner,
                     free_fn fn) {
  arr_node *n = arr_make(a, (int64_t)rows, 1, 1);
  if (!n) {
    if (fn) fn(owner);
    return -1;
  }
  n->bufs[0] = NULL;  // no validity bitmap: null_count 0
  arr_node *c = arr_make(&n->kids[0], (int64_t)(rows * dims), 2, 0);
  if (!c) {
    if (fn) fn(owner);
    a->n_children = 0;
    arr_release(a);
    return -1;
  }
  c->bufs[0] = NULL;
  c->bufs[1] = values;
  c->own[0] = owner;
  c->frees[0] = fn;
  return 0;
}

static embd_result dims_check(size_t dims, embd_error *err) {
  if (dims > INT32_MAX)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     "%zu dims: an Arrow fixed_size_list holds at most 2^31 - 1 (int32 list_size)", dims);
  return EMBD_OK;
}

/* ---- embd_openai_embeddings -> fixed_size_list<float>[dims] ---- */

static void free_embeddings(void *p) {
  embd_openai_free(p);
  free(p);
}

embd_result embd_arrow_from_openai(embd_openai_embeddings *e, struct ArrowSchema *schema,
                                   struct ArrowArray *array, embd_error *err) {
  clear_out(schema, array);
  if (!e || !schema || !array) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL argument");
  if (e->data || (e->count && !e->values))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     "the rows are kept in the wire dtype (EMBD_OPENAI_KEEP_DTYPE): only float32 rows "
                     "leave as Arrow");
  { embd_result r_ = dims_check(e->dims, err); if (r_ != EMBD_OK) return r_; }
  if (e->count > (size_t)INT64_MAX / (e->dims ? e->dims : 1))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "%zu x %zu values exceed Arrow's int64 length",
                     e->count, e->dims);
  /* The whole decoded state moves into a heap copy that the value buffer's owner holds;
   * e is left empty. Moving the struct is safe: nothing in it points into itself. */
  embd_openai_embeddings *moved = malloc(sizeof *moved);
  if (!moved) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the Arrow export");
  if (vec_schema(schema, e->dims, "")) {
    free(moved);
    clear_out(schema, array);
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the Arrow schema");
  }
  size_t rows = e->count, dims = e->dims;
  const float *values = e->values;
  if (vec_array(array, rows, dims, values, NULL, NULL)) {
    free(moved);
    schema->release(schema);
    clear_out(schema, array);
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the Arrow array");
  }
  *moved = *e;
  embd_openai_init(e);
  arr_node *c = ((arr_node *)array->private_data)->kids[0].private_data;
  c->own[0] = moved;
  c->frees[0] = free_embeddings;
  return EMBD_OK;
}

/* ---- the batch builder ---- */

typedef struct batch_impl {
  float *vals;       /* rows x dims */
  size_t vals_cap;   /* floats */
  int32_t *index;    /* rows */
  int32_t *offsets;  /* rows + 1 */
  size_t rows_cap;   /* rows index and offsets have room for */
  char *ids;         /* id_bytes */
  size_t ids_cap;
} batch_impl;

static void batch_impl_free(batch_impl *m) {
  if (!m) return;
  free(m->vals);
  free(m->index);
  free(m->offsets);
  free(m->ids);
  free(m);
}

void embd_arrow_batch_init(embd_arrow_batch *b) {
  if (b) memset(b, 0, sizeof *b);
}

void embd_arrow_batch_free(embd_arrow_batch *b) {
  if (!b) return;
  batch_impl_free(b->impl_);
  memset(b, 0, sizeof *b);
}

/* Grows *p (elem bytes each) to at least n elements, doubling. 0: ok. */
static int grow(void **p, size_t *cap, size_t n, size_t elem) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 64;
  while (c < n) c = c > SIZE_MAX / 2 / elem ? n : c * 2;
  if (c > SIZE_MAX / elem) return -1;
  void *q = realloc(*p, c * elem);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static batch_impl *batch_impl_get(embd_arrow_batch *b) {
  if (!b->impl_) b->impl_ = calloc(1, sizeof(batch_impl));
  return b->impl_;
}

/* Room for `rows` rows in total, `ids` id bytes and `floats` values (exact sizes asked of
 * grow, which doubles from what is there). */
static embd_result batch_room(embd_arrow_batch *b, size_t rows, size_t ids, size_t floats, embd_error *err) {
  batch_impl *m = batch_impl_get(b);
  if (!m) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the Arrow batch");
  size_t rc = m->rows_cap;
  if (rows == SIZE_MAX || grow((void **)&m->index, &rc, rows, sizeof(int32_t)))
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu rows", rows);
  if (rc != m->rows_cap) {
    size_t oc = m->rows_cap;
    /* offsets hold one more than the rows */
    if (grow((void **)&m->offsets, &oc, rc + 1, sizeof(int32_t)))
      return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu rows", rows);
    m->rows_cap = rc;
  }
  if (grow((void **)&m->ids, &m->ids_cap, ids, 1))
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu custom_id bytes", ids);
  if (grow((void **)&m->vals, &m->vals_cap, floats, sizeof(float)))
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for %zu values", floats);
  return EMBD_OK;
}

embd_result embd_arrow_batch_reserve(embd_arrow_batch *b, size_t rows, size_t id_bytes, size_t dims,
                                     embd_error *err) {
  if (!b) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL batch");
  if (b->dims && dims && dims != b->dims)
    return embd_fail(err, EMBD_ERR_OPENAI_DIMS, 0, "reserve for %zu dims, the rows have %zu", dims, b->dims);
  if (!dims) dims = b->dims;
  if (rows > SIZE_MAX - b->rows || id_bytes > SIZE_MAX - b->id_bytes ||
      (dims && b->rows + rows > SIZE_MAX / dims))
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%zu rows do not fit in memory", rows);
  return batch_room(b, b->rows + rows, b->id_bytes + id_bytes, (b->rows + rows) * dims, err);
}

embd_result embd_arrow_batch_add(embd_arrow_batch *b, const char *custom_id, size_t id_len,
                                 const float *values, size_t count, size_t dims, size_t first_index,
                                 embd_error *err) {
  if (!b || (!custom_id && id_len) || (!values && count && dims))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL argument");
  if (!count) return EMBD_OK;
  { embd_result r_ = dims_check(dims, err); if (r_ != EMBD_OK) return r_; }
  if (!dims) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "rows of 0 dims");
  if (b->rows && dims != b->dims)
    return embd_fail(err, EMBD_ERR_OPENAI_DIMS, 0, "%zu dims, the rows before have %zu", dims, b->dims);
  if (first_index > INT32_MAX || count - 1 > INT32_MAX - first_index)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "index %zu does not fit Arrow's int32 column",
                     first_index + count - 1);
  /* utf8 offsets are int32: all ids of one batch in 2^31 - 1 bytes */
  if (id_len > (size_t)INT32_MAX || count > ((size_t)INT32_MAX - b->id_bytes) / (id_len ? id_len : 1) ||
      b->id_bytes + count * id_len > (size_t)INT32_MAX)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                     "custom_ids over 2^31 - 1 bytes in one batch (utf8's int32 offsets): export in parts");
  if (count > SIZE_MAX / dims - b->rows)
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%zu rows do not fit in memory", count);
  size_t rows = b->rows + count;
  { embd_result r_ = batch_room(b, rows, b->id_bytes + count * id_len, rows * dims, err); if (r_ != EMBD_OK) return r_; }
  batch_impl *m = b->impl_;
  memcpy(m->vals + b->rows * dims, values, count * dims * sizeof(float));
  if (!b->rows) m->offsets[0] = 0;
  size_t at = b->id_bytes;
  for (size_t i = 0; i < count; i++) {
    m->index[b->rows + i] = (int32_t)(first_index + i);
    if (id_len) memcpy(m->ids + at, custom_id, id_len);
    at += id_len;
    m->offsets[b->rows + i + 1] = (int32_t)at;
  }
  b->id_bytes = at;
  b->rows = rows;
  b->dims = dims;
  return EMBD_OK;
}

embd_result embd_arrow_batch_export(embd_arrow_batch *b, struct ArrowSchema *schema, struct ArrowArray *array,
                                    embd_error *err) {
  clear_out(schema, array);
  if (!b || !schema || !array) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL argument");
  /* Even 0 rows need one offset (the utf8 offsets buffer is never NULL). */
  { embd_result r_ = batch_room(b, 1, 1, 1, err); if (r_ != EMBD_OK) return r_; }
  batch_impl *m = b->impl_;
  if (!b->rows) m->offsets[0] = 0;
  size_t rows = b->rows, dims = b->dims;

  sch_node *sn = sch_make(schema, "+s", "", 3);
  if (!sn) goto oom;
  int ok = sch_make(&sn->kids[0], "u", "custom_id", 0) != NULL;
  ok = ok && sch_make(&sn->kids[1], "i", "index", 0) != NULL;
  ok = ok && vec_schema(&sn->kids[2], dims, "embedding") == 0;
  if (!ok) {  /* the kids not made are zeroed (release NULL): released as absent */
    schema->release(schema);
    goto oom;
  }
  arr_node *an = arr_make(array, (int64_t)rows, 1, 3);
  if (!an) {
    schema->release(schema);
    goto oom;
  }
  arr_node *ids = arr_make(&an->kids[0], (int64_t)rows, 3, 0);
  arr_node *idx = ids ? arr_make(&an->kids[1], (int64_t)rows, 2, 0) : NULL;
  if (!idx) {
    array->release(array);  /* kids not made have release NULL (zeroed node) */
    schema->release(schema);
    goto oom;
  }
  /* The vector child last: from here on the buffers belong to the array. */
  if (vec_array(&an->kids[2], rows, dims, m->vals, m->vals, free)) {
    m->vals = NULL;  /* freed by vec_array's failure path */
    m->vals_cap = 0;
    array->release(array);
    schema->release(schema);
    goto oom;
  }
  ids->bufs[1] = m->offsets;
  ids->bufs[2] = m->ids;
  ids->own[0] = m->offsets, ids->frees[0] = free;
  ids->own[1] = m->ids, ids->frees[1] = free;
  idx->bufs[1] = m->index;
  idx->own[0] = m->index, idx->frees[0] = free;
  free(m);
  b->impl_ = NULL;
  embd_arrow_batch_free(b);
  return EMBD_OK;
oom:
  clear_out(schema, array);
  return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the Arrow batch export");
}
