/* Fuzz target for batch output lines (embd_openai_batch_line, embd/openai.h).
 *
 * Input: one option byte, then the line. The option byte: dtype (low 4 bits, mod the dtype
 * count), byte order (bit 4), KEEP_DTYPE (bit 5), expected_dims 4 (bit 6). Never crash or
 * read outside the line (an exact-size heap copy); the line is never modified. Every
 * call writes every info field: the strings are never NULL and are NUL-terminated at
 * their lengths. On error: e holds no vectors, info.failed and status_code are 0, err is
 * filled with an offset within the line. On success: a failed request has no vectors,
 * a successful one a 2xx status and readable rows obeying the options. Then, for a line
 * read without error: the same line again gives the same result, the same custom_id and
 * the same rows, in the same storage (reuse: nothing moves); the line without its last
 * '}' (cut) fails; the line with "x" after it fails as JSON; a line that did not end in
 * "\n" reads the same with one added; and for a wire dtype other than f32 read as
 * float32, the same line kept in the wire dtype either fails as EMBD_ERR_OPENAI_DTYPE (a
 * number array whose values are not all of the dtype) or gives rows that embd_to_f32
 * turns into the same floats, bit for bit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"
#include "fuzz_openai_check.h"

static void die(const char *what, int got) {
  fprintf(stderr, "fuzz_openai_batch: %s (%d: %s)\n", what, got, embd_strerror((embd_result)got));
  abort();
}

static void check_str(const char *s, size_t n, const char *what) {
  if (!s) die(what, 0);
  if (s[n] != 0) die(what, 1);
}

static void check_info(const embd_openai_batch_info *info) {
  check_str(info->custom_id, info->custom_id_len, "custom_id not a string");
  check_str(info->error_code, info->error_code_len, "error_code not a string");
  check_str(info->error_message, info->error_message_len, "error_message not a string");
  check_str(info->error_type, info->error_type_len, "error_type not a string");
  for (size_t i = 0; i < sizeof info->reserved_ / sizeof info->reserved_[0]; i++)
    if (info->reserved_[i]) die("reserved_ not zero", 0);
  for (size_t i = 0; i < sizeof info->reserved_ptr_ / sizeof info->reserved_ptr_[0]; i++)
    if (info->reserved_ptr_[i]) die("reserved_ptr_ not NULL", 0);
}

/* One read of line[0 .. len) from an exact-size heap copy. */
static embd_result read_line(embd_openai_embeddings *e, const uint8_t *line, size_t len,
                             const embd_openai_options *o, embd_openai_batch_info *info,
                             embd_error *err) {
  char *buf = malloc(len ? len : 1);
  char *keep = malloc(len ? len : 1);
  if (!buf || !keep) abort();
  memcpy(buf, line, len);
  memcpy(keep, buf, len);
  memset(info, 0xA5, sizeof *info); /* every field must be written */
  embd_result r = embd_openai_batch_line(e, buf, len, o, info, err);
  if (memcmp(buf, keep, len) != 0) die("input modified", r);
  check_info(info);
  if (r != EMBD_OK) {
    const char *why = fo_error_wrong(e, r, err, len);
    if (why) die(why, r);
    if (info->failed || info->status_code) die("failed/status after an error", r);
  } else if (info->failed) {
    if (e->count || e->values || e->data) die("vectors for a failed request", r);
  } else {
    if (info->status_code < 200 || info->status_code > 299) die("success without a 2xx status", info->status_code);
    if (e->count && !e->dims) die("vectors of 0 dims", r);
    if (e->count && o->expected_dims && e->dims != o->expected_dims) die("dims != expected_dims", r);
    if (!e->values && e->count && (!e->data || !e->row_bytes)) die("kept rows missing", r);
    fo_touch_rows(e);
  }
  free(buf);
  free(keep);
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t sel = data[0];
  const uint8_t *line = data + 1;
  const size_t len = size - 1;
  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = (uint64_t)((sel & 15) % EMBD_DTYPE_COUNT_);
  o.byte_order = (sel & 16) ? EMBD_ORDER_BE : EMBD_ORDER_LE;
  o.flags = (sel & 32) ? EMBD_OPENAI_KEEP_DTYPE : 0;
  o.expected_dims = (sel & 64) ? 4u : 0u;

  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info, info2;
  embd_error err;
  embd_result r = read_line(&e, line, len, &o, &info, &err);
  if (r == EMBD_OK) {
    const size_t n = e.count, dims = e.dims;
    const int failed = info.failed, status = info.status_code;
    const size_t rb = e.values ? n * dims * sizeof(float) : n * e.row_bytes;
    uint8_t *rows = malloc(rb + 1);
    char *cid = malloc(info.custom_id_len + 1);
    if (!rows || !cid) abort();
    if (rb) memcpy(rows, e.values ? (const void *)e.values : e.data, rb);
    memcpy(cid, info.custom_id, info.custom_id_len);
    const size_t cid_len = info.custom_id_len;
    const void *where = e.values ? (const void *)e.values : e.data;
    const char *cid_where = info.custom_id;

    /* again: the same answer in the same storage */
    embd_result r2 = read_line(&e, line, len, &o, &info2, &err);
    if (r2 != EMBD_OK || e.count != n || e.dims != dims || info2.failed != failed || info2.status_code != status)
      die("second read differs", r2);
    if (info2.custom_id_len != cid_len || memcmp(info2.custom_id, cid, cid_len) != 0) die("custom_id differs", r2);
    if (cid_len && info2.custom_id != cid_where) die("custom_id storage moved", r2);
    if (rb && memcmp(rows, e.values ? (const void *)e.values : e.data, rb) != 0) die("rows differ", r2);
    if (rb && (e.values ? (const void *)e.values : e.data) != where) die("row storage moved", r2);

    uint8_t *more = malloc(len + 2);
    if (!more) abort();
    memcpy(more, line, len);
    /* cut before the closing '}' (the last '}' in the line) */
    size_t close = len;
    while (close > 0 && line[close - 1] != '}') close--;
    if (close == 0) die("a line without '}'", 0);
    r2 = read_line(&e, more, close - 1, &o, &info2, &err);
    if (r2 == EMBD_OK) die("a cut line read", r2);
    /* content after the line */
    more[len] = 'x';
    r2 = read_line(&e, more, len + 1, &o, &info2, &err);
    if (r2 != EMBD_ERR_OPENAI_JSON) die("content after the line not a JSON error", r2);
    /* a "\n" added to a line without one */
    if (line[len - 1] != '\n') {
      more[len] = '\n';
      r2 = read_line(&e, more, len + 1, &o, &info2, &err);
      if (r2 != EMBD_OK || e.count != n || info2.failed != failed) die("the line with \"\\n\" differs", r2);
      if (rb && memcmp(rows, e.values ? (const void *)e.values : e.data, rb) != 0) die("rows differ with \"\\n\"", r2);
    }
    /* kept rows through embd_to_f32 = the float32 rows */
    if (!failed && n && !(o.flags & EMBD_OPENAI_KEEP_DTYPE) && o.dtype != EMBD_DTYPE_F32) {
      embd_openai_options k = o;
      k.flags = EMBD_OPENAI_KEEP_DTYPE;
      r2 = read_line(&e, line, len, &k, &info2, &err);
      /* a number array read as float32 need not hold values of the dtype: kept, that is
       * EMBD_ERR_OPENAI_DTYPE (the documented contract); nothing else may differ */
      if (r2 == EMBD_ERR_OPENAI_DTYPE) goto done;
      if (r2 != EMBD_OK || e.count != n || e.dims != dims || !e.data) die("kept read differs", r2);
      float *back = malloc(dims * sizeof(float));
      if (!back) abort();
      for (size_t i = 0; i < n; i++) {
        embd_to_f32(back, (const uint8_t *)e.data + i * e.row_bytes, dims, e.dtype, e.byte_order);
        if (memcmp(back, rows + i * dims * sizeof(float), dims * sizeof(float)) != 0)
          die("kept rows through embd_to_f32 differ", (int)i);
      }
      free(back);
    }
  done:
    free(more);
    free(rows);
    free(cid);
  }
  (void)embd_openai_is_batch_line((const char *)line, len);
  embd_openai_free(&e);
  return 0;
}
