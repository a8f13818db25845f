/* The checks the OpenAI decoder targets (fuzz_openai, fuzz_openai_dtype, fuzz_openai_bytes,
 * fuzz_openai_batch) make alike on an embd_openai_embeddings: one copy, so that a rule of
 * embd/openai.h (no vectors after an error, kept rows equal to the float32 decode) is
 * checked the same way by each. Each returns NULL when all holds, else what does not: the
 * target dies with its own name and result code. */
#ifndef EMBD_FUZZ_OPENAI_CHECK_H
#define EMBD_FUZZ_OPENAI_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

/* After a failed decode: no vectors, err filled, its offset within the `bound` bytes read. */
static inline const char *fo_error_wrong(const embd_openai_embeddings *e, embd_result r, const embd_error *err,
                                         size_t bound) {
  if (e->count || e->dims || e->values || e->data) return "vectors after an error";
  if (err->result != r || !err->message[0]) return "error not filled";
  if (err->offset > bound) return "error offset past the input";
  return NULL;
}

/* Reads every float32 value, or every byte of kept rows: ASan sees a row that overruns its
 * allocation. */
static inline void fo_touch_rows(const embd_openai_embeddings *e) {
  volatile uint32_t acc = 0;
  if (e->values) {
    for (size_t i = 0; i < e->count * e->dims; i++) {
      uint32_t u;
      memcpy(&u, &e->values[i], 4);
      acc ^= u;
    }
  } else if (e->data) {
    for (size_t i = 0; i < e->count * e->row_bytes; i++) acc ^= ((const uint8_t *)e->data)[i];
  }
  (void)acc;
}

/* Kept rows `e` (EMBD_OPENAI_KEEP_DTYPE) against the float32 decode `f` of the same body:
 * the same shape, and each kept row through embd_to_f32 equal to f's row bit for bit. */
static inline const char *fo_kept_vs_f32(const embd_openai_embeddings *e, const embd_openai_embeddings *f) {
  if (f->count != e->count || f->dims != e->dims) return "the kept and float32 decodes differ in shape";
  float *v = malloc(e->dims * sizeof *v + 1);
  if (!v) abort();
  const char *why = NULL;
  for (size_t i = 0; i < e->count && !why; i++) {
    if (embd_to_f32(v, (const uint8_t *)e->data + i * e->row_bytes, e->dims, e->dtype, e->byte_order))
      why = "embd_to_f32 refused a kept row";
    else if (memcmp(v, f->values + i * f->dims, e->dims * sizeof *v) != 0)
      why = "kept rows and float32 rows differ";
  }
  free(v);
  return why;
}

#endif
