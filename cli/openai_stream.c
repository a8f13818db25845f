/* embd CLI: responses' rows into sinks, and batch output files streamed (openai_stream.h). */
#include "openai_stream.h"

#include <stdlib.h>
#include <string.h>

#include "lines.h"

int openai_rows(cli_sink *sink, const embd_openai_embeddings *e, int keep, uint8_t *le,
                const char *where) {
  char what[320];
  const size_t w = embd_dtype_bits(e->dtype) / 8; /* element bytes (multi-byte only) */
  int rc = CLI_OK;
  for (size_t i = 0; i < e->count && !rc; i++) {
    snprintf(what, sizeof what, "%svector %zu", where, i);
    sink->row_index = (int64_t)i; /* --pg-id custom: the row's data[].index */
    if (!keep) {
      rc = cli_sink_row(sink, e->values + i * e->dims, (uint32_t)e->dims, what);
      continue;
    }
    const uint8_t *row = (const uint8_t *)e->data + i * e->row_bytes;
    if (le) { /* the kept rows are in the asked (big-endian) order */
      for (size_t k = 0; k < e->row_bytes; k += w)
        for (size_t b = 0; b < w; b++) le[k + b] = row[k + w - 1 - b];
      row = le;
    }
    rc = cli_sink_row_raw(sink, row, (uint32_t)e->dims, e->dtype, what);
  }
  return rc;
}

/* ---- the custom_ids seen: where each yielded vectors, or its first failure ------------- */
typedef struct id_rec {
  char *id;
  size_t len;
  uint64_t hash;
  int file;           /* where it succeeded (ok) or first failed */
  unsigned long line;
  int ok;             /* 1: vectors came; 0: failed so far (fail = its failure) */
  size_t fail;
} id_rec;

typedef struct failure {
  size_t rec;         /* its id_rec */
  int file;
  unsigned long line;
  int status;         /* 0: none */
  char *code, *message;
  size_t code_len, message_len;
  int resolved;       /* a later line of the same custom_id yielded vectors (a retry) */
} failure;

typedef struct id_table {
  id_rec *recs;
  size_t nrecs, recs_cap;
  size_t *slots; /* index + 1 into recs; 0: empty */
  size_t nslots; /* a power of two, at least twice nrecs */
  failure *fails;
  size_t nfails, fails_cap;
} id_table;

static uint64_t id_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325u; /* FNV-1a: ids are short; a table of 50,000 is small */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
  return h ^ (h >> 29);
}

static char *dup_bytes(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* The record of id, or NULL; *slot_out: where it is or would go. */
static id_rec *id_find(id_table *t, const char *id, size_t n, uint64_t h, size_t *slot_out) {
  size_t i = (size_t)h & (t->nslots - 1);
  for (;; i = (i + 1) & (t->nslots - 1)) {
    const size_t s = t->slots[i];
    if (!s) {
      *slot_out = i;
      return NULL;
    }
    id_rec *r = &t->recs[s - 1];
    if (r->hash == h && r->len == n && !memcmp(r->id, id, n)) {
      *slot_out = i;
      return r;
    }
  }
}

static int id_grow(id_table *t) {
  if (t->nrecs + 1 > t->nslots / 2) {
    const size_t ns = t->nslots ? t->nslots * 2 : 1024;
    size_t *sl = calloc(ns, sizeof *sl);
    if (!sl) return -1;
    for (size_t k = 0; k < t->nrecs; k++) {
      size_t i = (size_t)t->recs[k].hash & (ns - 1);
      while (sl[i]) i = (i + 1) & (ns - 1);
      sl[i] = k + 1;
    }
    free(t->slots);
    t->slots = sl;
    t->nslots = ns;
  }
  if (t->nrecs == t->recs_cap) {
    const size_t nc = t->recs_cap ? t->recs_cap * 2 : 1024;
    id_rec *nr = realloc(t->recs, nc * sizeof *nr);
    if (!nr) return -1;
    t->recs = nr;
    t->recs_cap = nc;
  }
  return 0;
}

static void id_free(id_table *t) {
  for (size_t k = 0; k < t->nrecs; k++) free(t->recs[k].id);
  for (size_t k = 0; k < t->nfails; k++) {
    free(t->fails[k].code);
    free(t->fails[k].message);
  }
  free(t->recs);
  free(t->slots);
  free(t->fails);
}

/* ---- the run ---------------------------------------------------------------------------- */
typedef struct batch_run {
  const openai_batch_args *a;
  id_table ids;
  cli_sink sink;
  cli_out out, ids_out;
  int have_ids_out;
  uint8_t *le;
  size_t le_cap;
  char *esc; /* an escaped custom_id */
  size_t esc_cap;
  uint64_t requests, vectors;
  size_t dims;
  int have_dims;
} batch_run;

static const char *file_label(const batch_run *b, int f) {
  return cli_esc(strcmp(b->a->files[f], "-") ? b->a->files[f] : "<stdin>");
}

static int grow(void *pp, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 256;
  while (c < n) c *= 2;
  void *p = realloc(*(void **)pp, c);
  if (!p) return -1;
  *(void **)pp = p;
  *cap = c;
  return 0;
}

/* A request that failed: kept (once per custom_id, its first failure) unless the id
 * yielded vectors already. */
static int on_failed(batch_run *b, const embd_openai_batch_info *info, int f, unsigned long line) {
  id_table *t = &b->ids;
  const uint64_t h = id_hash(info->custom_id, info->custom_id_len);
  size_t slot;
  if (id_grow(t)) return -1;
  if (id_find(t, info->custom_id, info->custom_id_len, h, &slot)) return 0;
  if (t->nfails == t->fails_cap) {
    const size_t nc = t->fails_cap ? t->fails_cap * 2 : 64;
    failure *nf = realloc(t->fails, nc * sizeof *nf);
    if (!nf) return -1;
    t->fails = nf;
    t->fails_cap = nc;
  }
  id_rec *r = &t->recs[t->nrecs];
  failure *fl = &t->fails[t->nfails];
  memset(r, 0, sizeof *r);
  memset(fl, 0, sizeof *fl);
  r->id = dup_bytes(info->custom_id, info->custom_id_len);
  fl->code = dup_bytes(info->error_code, info->error_code_len);
  fl->message = dup_bytes(info->error_message, info->error_message_len);
  if (!r->id || !fl->code || !fl->message) {
    free(r->id);
    free(fl->code);
    free(fl->message);
    return -1;
  }
  r->len = info->custom_id_len;
  r->hash = h;
  r->file = f;
  r->line = line;
  r->fail = t->nfails;
  fl->rec = t->nrecs;
  fl->file = f;
  fl->line = line;
  fl->status = info->status_code;
  fl->code_len = info->error_code_len;
  fl->message_len = info->error_message_len;
  t->slots[slot] = ++t->nrecs;
  t->nfails++;
  return 0;
}

/* A request that yielded vectors: its rows written, its id noted (twice is an error). */
static int on_vectors(batch_run *b, const embd_openai_embeddings *e, const embd_openai_batch_info *info,
                      int f, unsigned long line) {
  const openai_batch_args *a = b->a;
  id_table *t = &b->ids;
  const uint64_t h = id_hash(info->custom_id, info->custom_id_len);
  size_t slot;
  if (id_grow(t)) {
    cli_msg("out of memory");
    return CLI_EINTERNAL;
  }
  id_rec *r = id_find(t, info->custom_id, info->custom_id_len, h, &slot);
  if (r && r->ok) {
    char other[512];
    snprintf(other, sizeof other, "%s line %lu", file_label(b, r->file), r->line);
    cli_msg("%s:%lu: custom_id \"%s\" yields vectors twice: here and at %s", file_label(b, f), line,
            cli_esc(r->id), other);
    return CLI_EDATA;
  }
  if (r) { /* it failed before: this line is its retry */
    t->fails[r->fail].resolved = 1;
  } else {
    r = &t->recs[t->nrecs];
    memset(r, 0, sizeof *r);
    if (!(r->id = dup_bytes(info->custom_id, info->custom_id_len))) {
      cli_msg("out of memory");
      return CLI_EINTERNAL;
    }
    r->len = info->custom_id_len;
    r->hash = h;
    t->slots[slot] = ++t->nrecs;
  }
  r->ok = 1;
  r->file = f;
  r->line = line;
  b->requests++;
  if (!e->count) return CLI_OK;
  if (a->want_dims && e->dims != a->want_dims) {
    cli_msg("%s:%lu: custom_id \"%s\": the vectors have %zu dims, --dims is %lu", file_label(b, f), line,
            cli_esc(r->id), e->dims, (unsigned long)a->want_dims);
    return CLI_EDATA;
  }
  if (e->dims > UINT32_MAX) {
    cli_msg("%s:%lu: %zu dims: too many", file_label(b, f), line, e->dims);
    return CLI_EDATA;
  }
  if (!b->have_dims) {
    b->dims = e->dims;
    b->have_dims = 1;
  }
  uint8_t *le = NULL;
  if (a->keep && a->oo->byte_order == EMBD_ORDER_BE && embd_dtype_bits(e->dtype) > 8) {
    if (grow(&b->le, &b->le_cap, e->row_bytes)) {
      cli_msg("out of memory");
      return CLI_EINTERNAL;
    }
    le = b->le;
  }
  char where[300];
  snprintf(where, sizeof where, "%s line %lu ", file_label(b, f), line);
  b->sink.row_key = info->custom_id; /* --pg-id custom */
  b->sink.row_key_len = info->custom_id_len;
  int rc = openai_rows(&b->sink, e, a->keep, le, where);
  if (rc) return rc;
  b->vectors += e->count;
  if (b->have_ids_out) {
    if (memchr(info->custom_id, 0, info->custom_id_len)) {
      cli_msg("%s:%lu: custom_id \"%s\" holds a NUL byte (\\u0000): PostgreSQL text cannot hold it (--ids)",
              file_label(b, f), line, cli_esc(r->id));
      return CLI_EDATA;
    }
    const size_t n = cli_copy_text_escape(NULL, info->custom_id, info->custom_id_len);
    if (grow(&b->esc, &b->esc_cap, n + 32)) {
      cli_msg("out of memory");
      return CLI_EINTERNAL;
    }
    cli_copy_text_escape(b->esc, info->custom_id, info->custom_id_len);
    for (size_t i = 0; i < e->count && !rc; i++) {
      const int k = snprintf(b->esc + n, 32, "\t%zu\n", i);
      rc = cli_out_write(&b->ids_out, b->esc, n + (size_t)k);
    }
  }
  return rc;
}

/* One file's lines. */
static int batch_file(batch_run *b, cli_in *in, int f, cli_progress *pr, uint64_t *done) {
  const openai_batch_args *a = b->a;
  cli_lines lr;
  /* 8 MiB a read: a line of 100 x 1536 base64 vectors is ~820 KB; few lines are cut by a
   * read and moved to the front */
  int rc = cli_lines_init(&lr, in, a->max_record, '{', (size_t)8 << 20);
  if (rc) return rc;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  unsigned long line = 0;
  const char *ls, *le;
  int n;
  while ((n = cli_lines_next(&lr, &ls, &le, &rc)) == 1) {
    line++;
    const char *q = ls;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q == le) continue; /* an empty line between requests */
    embd_error err;
    /* the line with its '\n' when it has one: the library accepts one line ending */
    const size_t len = (size_t)(le - ls) + (le < lr.buf + lr.end && *le == '\n');
    const embd_result r = embd_openai_batch_line(&e, ls, len, a->oo, &info, &err);
    if (r) {
      cli_msg("%s:%lu: %s", file_label(b, f), line, r == EMBD_ERR_UNAVAILABLE ? embd_strerror(r) : err.message);
      rc = cli_exit_for(r);
      break;
    }
    if (info.failed) {
      if (on_failed(b, &info, f, line)) {
        cli_msg("out of memory");
        rc = CLI_EINTERNAL;
        break;
      }
    } else if ((rc = on_vectors(b, &e, &info, f, line))) {
      break;
    }
    if (pr->total) cli_progress_update(pr, *done + in->pos);
  }
  if (n < 0 && rc == CLI_EDATA)
    cli_msg("%s:%lu: the line is longer than %llu bytes (--max-record; raise it with --max-record BYTES)",
            file_label(b, f), line + 1, (unsigned long long)a->max_record);
  *done += in->pos;
  embd_openai_free(&e);
  cli_lines_free(&lr);
  return rc;
}

/* The failures left: their JSON lines into --failed, a summary on stderr. */
static int report_failed(batch_run *b, size_t left) {
  const openai_batch_args *a = b->a;
  id_table *t = &b->ids;
  int rc = CLI_OK;
  cli_out fo;
  if (a->failed) {
    if ((rc = cli_out_open(&fo, a->failed, 0))) return rc;
    char *line = NULL;
    size_t cap = 0;
    for (size_t k = 0; k < t->nfails && !rc; k++) {
      const failure *fl = &t->fails[k];
      if (fl->resolved) continue;
      const id_rec *r = &t->recs[fl->rec];
      const char *fname = strcmp(a->files[fl->file], "-") ? a->files[fl->file] : "<stdin>";
      const size_t fn = strlen(fname);
      const size_t need = 160 + cli_json_escape(NULL, r->id, r->len) + cli_json_escape(NULL, fname, fn) +
                          cli_json_escape(NULL, fl->code, fl->code_len) +
                          cli_json_escape(NULL, fl->message, fl->message_len);
      if (grow(&line, &cap, need)) {
        cli_msg("out of memory");
        rc = CLI_EINTERNAL;
        break;
      }
      size_t w = 0;
#define PUTS(s) (memcpy(line + w, s, strlen(s)), w += strlen(s))
      PUTS("{\"custom_id\": \"");
      w += cli_json_escape(line + w, r->id, r->len);
      w += (size_t)snprintf(line + w, 64, "\", \"line\": %lu, \"file\": \"", fl->line);
      w += cli_json_escape(line + w, fname, fn);
      PUTS("\", \"status_code\": ");
      if (fl->status) w += (size_t)snprintf(line + w, 16, "%d", fl->status);
      else PUTS("null");
      PUTS(", \"code\": ");
      if (fl->code_len) {
        PUTS("\"");
        w += cli_json_escape(line + w, fl->code, fl->code_len);
        PUTS("\"");
      } else {
        PUTS("null");
      }
      PUTS(", \"message\": \"");
      w += cli_json_escape(line + w, fl->message, fl->message_len);
      PUTS("\"}\n");
#undef PUTS
      rc = cli_out_write(&fo, line, w);
    }
    free(line);
    const int crc = cli_out_close(&fo, rc == CLI_OK);
    if (!rc) rc = crc;
    if (rc) return rc;
  }
  /* the summary: how many, and the first few */
  char list[1024];
  size_t w = 0, shown = 0;
  list[0] = 0;
  for (size_t k = 0; k < t->nfails && shown < 3; k++) {
    const failure *fl = &t->fails[k];
    if (fl->resolved) continue;
    char st[16] = "";
    if (fl->status) snprintf(st, sizeof st, "%d ", fl->status);
    const int m = snprintf(list + w, sizeof list - w, "%s\"%s\" (%s line %lu: %s%s%s%s)", shown ? ", " : "",
                           cli_esc(t->recs[fl->rec].id), file_label(b, fl->file), fl->line, st,
                           cli_esc(fl->code), fl->code_len ? ": " : "", cli_esc(fl->message));
    if (m < 0 || (size_t)m >= sizeof list - w) break;
    w += (size_t)m;
    shown++;
  }
  cli_msg("%zu request%s failed%s: %s%s%s%s", left, left == 1 ? "" : "s",
          t->nfails > left ? " (the others were retried with success)" : "", list,
          left > shown ? ", ..." : "", a->failed ? "; every one in " : "",
          a->failed ? cli_esc(a->failed) : "");
  return CLI_EPEER;
}

int openai_batch(const openai_batch_args *a) {
  batch_run b;
  memset(&b, 0, sizeof b);
  b.a = a;
  int rc = CLI_OK;
  /* the output must not be an input: checked before a byte is written */
  if ((rc = cli_out_check_input(a->output, a->first))) {
    cli_in_close(a->first);
    return rc;
  }
  uint64_t total = a->first->regular ? a->first->size : 0;
  for (int i = 1; i < a->nfiles && !rc; i++) {
    cli_in in;
    if (!strcmp(a->files[i], "-")) { /* stdin once: it cannot be read twice */
      if (!strcmp(a->files[0], "-")) rc = cli_usage("- (stdin) given twice");
      continue;
    }
    if (!(rc = cli_in_open(&in, a->files[i]))) {
      rc = cli_out_check_input(a->output, &in);
      if (!rc && a->ids) rc = cli_out_check_input(a->ids, &in);
      if (!rc && a->failed) rc = cli_out_check_input(a->failed, &in);
      total = in.regular && total ? total + in.size : 0;
      cli_in_close(&in);
    }
  }
  if (!rc && a->ids) rc = cli_out_check_input(a->ids, a->first);
  if (!rc && a->failed) rc = cli_out_check_input(a->failed, a->first);
  if (rc) {
    cli_in_close(a->first);
    return rc;
  }
  if ((rc = cli_out_open(&b.out, a->output, cli_formats[a->to].flags & CLI_FMTF_BINARY))) {
    cli_in_close(a->first);
    return rc;
  }
  if (a->ids) {
    if ((rc = cli_out_open(&b.ids_out, a->ids, 0))) {
      cli_out_close(&b.out, 0);
      cli_in_close(a->first);
      return rc;
    }
    b.have_ids_out = 1;
  }
  /* the count is unknown until the end: npy and EMBD patch it into a seekable output */
  rc = cli_sink_begin_opts(&b.sink, a->to, &b.out, UINT64_MAX, a->fo);
  cli_progress pr;
  cli_progress_start(&pr, total);
  uint64_t done = 0;
  for (int f = 0; f < a->nfiles && !rc; f++) {
    cli_in in, *ip = a->first;
    if (f) {
      if ((rc = cli_in_open(&in, a->files[f]))) break;
      ip = &in;
    }
    rc = batch_file(&b, ip, f, &pr, &done);
    cli_in_close(ip);
  }
  if (!a->nfiles || rc) cli_in_close(a->first);
  cli_progress_end(&pr);
  if (!rc) rc = cli_sink_finish(&b.sink);
  size_t left = 0;
  for (size_t k = 0; k < b.ids.nfails; k++) left += !b.ids.fails[k].resolved;
  if (!rc && a->verbose)
    cli_msg("%llu requests succeeded: %llu vectors of %zu dims; %zu failed", (unsigned long long)b.requests,
            (unsigned long long)b.vectors, b.dims, left);
  if (rc) cli_sink_abort(&b.sink);
  /* exit 5 keeps the outputs: every row of the requests that succeeded is in them */
  int wrc = cli_out_close(&b.out, rc == CLI_OK);
  if (!rc) rc = wrc;
  if (b.have_ids_out) {
    wrc = cli_out_close(&b.ids_out, rc == CLI_OK);
    if (!rc) rc = wrc;
  }
  if (!rc && (left || a->failed)) {
    if (left) {
      rc = report_failed(&b, left);
    } else { /* an empty --failed file: nothing to retry */
      cli_out fo;
      if (!(rc = cli_out_open(&fo, a->failed, 0))) rc = cli_out_close(&fo, 1);
    }
  }
  cli_sink_free(&b.sink);
  id_free(&b.ids);
  free(b.le);
  free(b.esc);
  return rc;
}
