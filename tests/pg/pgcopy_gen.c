/* pgcopy_gen: a COPY ... (FORMAT binary) stream of float32 vectors, for tests/pg/pg_roundtrip.py.
 *
 *   pgcopy_gen TYPE DIMS IN [--id] [--finite] [--stream] [--null ROW]...  > stream
 *
 * TYPE is float4[] or bytea (the types a stock PostgreSQL has; vector, halfvec, sparsevec
 * and bit are accepted too, for a server with pgvector). IN holds count x DIMS
 * little-endian float32 (numpy's tofile), count = its size / (4 * DIMS). --id adds a leading
 * bigint id (the row's number, from 0); --null ROW writes that row's vector as NULL;
 * --finite refuses NaN and infinities (EMBD_PGCOPY_FINITE).
 *
 * By default the batch is made in memory with the multi-row call (the runs between NULL
 * rows) and written only when every row passed: a refused row means no output at all
 * (exit 1, the message on stderr). --stream writes each row to stdout as it is made (the
 * per-row call), as a streaming producer would: a refused row stops the stream there (exit
 * 1, no trailer) with the rows before it whole and not a byte of the refused one.
 * PostgreSQL's COPY ends at end of input on a row boundary without the trailer, so it
 * stores the rows before the refused one: the test shows both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

static int die(const char *m) {
  fprintf(stderr, "pgcopy_gen: %s\n", m);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 4) return die("usage: pgcopy_gen TYPE DIMS IN [--id] [--finite] [--null ROW]...");
  embd_pgcopy_options o = {0};
  int found = 0;
  for (int t = 0; t < EMBD_PG_TYPE_COUNT_; t++)
    if (!strcmp(argv[1], embd_pg_type_name((embd_pg_type)t))) o.type = (embd_pg_type)t, found = 1;
  if (!found) return die("unknown type");
  const size_t dims = strtoul(argv[2], NULL, 10);
  unsigned char nulls[4096] = {0};
  int stream = 0;
  for (int i = 4; i < argc; i++) {
    if (!strcmp(argv[i], "--id")) o.columns |= EMBD_PGCOPY_ID;
    else if (!strcmp(argv[i], "--finite")) o.flags |= EMBD_PGCOPY_FINITE;
    else if (!strcmp(argv[i], "--stream")) stream = 1;
    else if (!strcmp(argv[i], "--null") && i + 1 < argc) {
      const unsigned long r = strtoul(argv[++i], NULL, 10);
      if (r >= sizeof nulls) return die("--null: row too large");
      nulls[r] = 1;
    } else return die("unknown option");
  }
  FILE *f = fopen(argv[3], "rb");
  if (!f) return die("cannot open input");
  fseek(f, 0, SEEK_END);
  const long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (len < 0 || !dims || (size_t)len % (4 * dims)) return die("input is not count x dims float32");
  const size_t count = (size_t)len / (4 * dims);
  float *v = malloc((size_t)len + 4);
  if (!v || fread(v, 1, (size_t)len, f) != (size_t)len) return die("cannot read input");
  fclose(f);
  /* The file is little-endian; on a big-endian host make the floats host order. */
  embd_f32_from_le(v, v, count * dims);

  embd_pgcopy w;
  if (embd_pgcopy_init(&w, &o) != EMBD_OK) return die("bad options");
  size_t cap, n;
  if (embd_pgcopy_rows_size(&w, v, 1, dims, &cap) != EMBD_OK) return die("dims refused");
  cap += 64; /* a sparsevec row of another row's non-zeros is no bigger than dims allow */
  if (o.type == EMBD_PG_SPARSEVEC && embd_pgcopy_row_size(&w, dims, dims < 16000 ? dims : 16000, &n) == EMBD_OK)
    cap = n + 64;
  embd_error err;
  if (!stream) {
    /* The whole batch, in memory: header, the runs of rows between NULL rows (one
     * multi-row call each), the NULL rows, the trailer; output only if all of it passed. */
    size_t total = EMBD_PGCOPY_HEADER_SIZE + EMBD_PGCOPY_TRAILER_SIZE, sz;
    for (size_t i = 0; i < count; i++) {
      if (i < sizeof nulls && nulls[i]) embd_pgcopy_null_row_size(&w, &sz);
      else if (embd_pgcopy_rows_size(&w, v + i * dims, 1, dims, &sz) != EMBD_OK) return die("size");
      total += sz;
    }
    unsigned char *all = malloc(total);
    if (!all) return die("out of memory");
    size_t at = 0;
    embd_pgcopy_header(&w, all, total, &n);
    at += n;
    for (size_t i = 0; i < count;) {
      embd_result r;
      size_t run = 0;
      if (i < sizeof nulls && nulls[i]) {
        r = embd_pgcopy_write_null(&w, NULL, all + at, total - at, &n, &err);
        run = 1;
      } else {
        while (i + run < count && !(i + run < sizeof nulls && nulls[i + run])) run++;
        r = embd_pgcopy_write_f32(&w, v + i * dims, run, dims, NULL, all + at, total - at, &n, &err);
      }
      if (r != EMBD_OK) {
        fprintf(stderr, "pgcopy_gen: %s: %s\n", embd_result_name(r), err.message);
        return 1; /* nothing written */
      }
      at += n;
      i += run;
    }
    embd_pgcopy_trailer(&w, all + at, total - at, &n);
    at += n;
    if (at != total) return die("sizes disagree");
    fwrite(all, 1, at, stdout);
    free(all);
    free(v);
    return fflush(stdout) ? 3 : 0;
  }
  unsigned char *buf = malloc(cap);
  if (!buf) return die("out of memory");
  embd_pgcopy_header(&w, buf, cap, &n);
  fwrite(buf, 1, n, stdout);
  for (size_t i = 0; i < count; i++) {
    embd_result r = i < sizeof nulls && nulls[i]
                        ? embd_pgcopy_write_null(&w, NULL, buf, cap, &n, &err)
                        : embd_pgcopy_write_f32(&w, v + i * dims, 1, dims, NULL, buf, cap, &n, &err);
    fwrite(buf, 1, n, stdout); /* n: the complete rows only (none when refused) */
    fflush(stdout);
    if (r != EMBD_OK) {
      fprintf(stderr, "pgcopy_gen: %s: %s\n", embd_result_name(r), err.message);
      return 1;
    }
  }
  embd_pgcopy_trailer(&w, buf, cap, &n);
  fwrite(buf, 1, n, stdout);
  free(buf);
  free(v);
  return fflush(stdout) ? 3 : 0;
}
