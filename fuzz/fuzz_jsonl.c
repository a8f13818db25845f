/* Fuzz target for the CLI's JSON lines reader (cli/jsonl.c), the one `embd encode` runs:
 * the text goes through jsonl_pass twice over a file (a memfd), once validating only (the
 * first pass of a regular file, which skips strtof for plain numbers) and once storing the
 * values. Properties:
 *   - both passes give the same result, rows, dims and error (line, column, message): the
 *     shortcut of the validating pass never accepts or rejects differently;
 *   - the result is CLI_OK or CLI_EDATA (no internal errors, no crash, no read past a
 *     line: the reader's buffer is exact-sized per line as far as ASan sees it);
 *   - an error is specific: a printable message, a line that exists in the text and a
 *     column inside that line (or one past its end);
 *   - success means every line is at most max_record bytes;
 *   - what parses re-encodes: the stored vectors printed as JSON lines with cli_fmt_f32
 *     (what `embd decode` writes) parse back to the same float32 bits;
 *   - the ragged pass (`embd encode --ragged`: vectors of their own dims) accepts every
 *     text the uniform pass accepts, with the same rows and first dims.
 * Input layout:
 *   byte 0   bits 0-1: max_record: 0 default (256 MiB), 1: 1 + byte 1, 2: 64 + 16 * byte 1,
 *            3: unlimited; bit 2: want_dims = byte 2 (0: none)
 *   byte 1   the max_record parameter
 *   byte 2   want_dims (with bit 2 of byte 0)
 *   the rest the JSON lines text
 * Built twice by fuzz/CMakeLists.txt: libFuzzer (fuzz_jsonl) and corpus replay. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what) {
  fprintf(stderr, "fuzz_jsonl: %s\n", what);
  abort();
}

static int g_fd = -1;

/* A cli_in over a file holding text[0..n). */
static void make_in(cli_in *in, const void *text, size_t n) {
  if (g_fd < 0) {
    setenv("EMBD_NO_PROGRESS", "1", 1);
#ifdef MFD_CLOEXEC
    g_fd = memfd_create("fuzz_jsonl", MFD_CLOEXEC);
#endif
    if (g_fd < 0) {
      FILE *f = tmpfile();
      if (!f) die("no temporary file");
      g_fd = dup(fileno(f));
      fclose(f);
    }
  }
  if (ftruncate(g_fd, 0) || (n && pwrite(g_fd, text, n, 0) != (ssize_t)n) || lseek(g_fd, 0, SEEK_SET))
    die("cannot write the temporary file");
  memset(in, 0, sizeof *in);
  in->name = "fuzz";
  in->fd = g_fd;
  in->regular = 1;
  in->size = n;
}

typedef struct store {
  float *v;
  size_t len, cap;
  uint32_t dims;
} store;

static int keep(void *ctx, const float *v, uint32_t dims, uint64_t index, unsigned long line) {
  store *s = ctx;
  (void)index;
  if (line < 1) die("row on line 0");
  s->dims = dims;
  if (!dims) return CLI_OK; /* "[]": v may be NULL */
  if (s->cap - s->len < dims) {
    size_t nc = s->cap ? s->cap : 64;
    while (nc - s->len < dims) nc *= 2;
    float *n = realloc(s->v, nc * sizeof *n);
    if (!n) abort();
    s->v = n;
    s->cap = nc;
  }
  memcpy(s->v + s->len, v, (size_t)dims * sizeof *v);
  s->len += dims;
  return CLI_OK;
}

static void check_error(const jsonl_error *e, const char *text, size_t n) {
  if (!e->msg[0]) die("CLI_EDATA without a message");
  for (const unsigned char *p = (const unsigned char *)e->msg; *p; p++)
    if (*p < 0x20 || *p == 0x7f) die("a control character in a message");
  /* the line it names, and its length */
  const char *ls = text, *end = text + n;
  for (unsigned long l = 1; l < e->line; l++) {
    const char *nl = memchr(ls, '\n', (size_t)(end - ls));
    if (!nl) die("the error names a line after the last");
    ls = nl + 1;
  }
  if (e->line < 1) die("line 0");
  const char *le = memchr(ls, '\n', (size_t)(end - ls));
  const size_t len = (size_t)((le ? le : end) - ls);
  if (e->col < 1 || e->col > len + 1) die("the column is outside its line");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  uint64_t max;
  switch (data[0] & 3) {
    case 0: max = CLI_DEFAULT_MAX_RECORD; break;
    case 1: max = 1 + (uint64_t)data[1]; break;
    case 2: max = 64 + 16 * (uint64_t)data[1]; break;
    default: max = UINT64_MAX; break;
  }
  const uint32_t want = data[0] & 4 ? data[2] : 0;
  const char *text = (const char *)data + 3;
  const size_t n = size - 3;

  cli_in in;
  jsonl_error e1, e2;
  uint64_t rows1, rows2;
  uint32_t dims1, dims2;
  make_in(&in, text, n);
  const int rc1 = jsonl_pass(&in, want, 0, max, NULL, NULL, &rows1, &dims1, &e1);
  store s = {NULL, 0, 0, 0};
  make_in(&in, text, n);
  const int rc2 = jsonl_pass(&in, want, 0, max, keep, &s, &rows2, &dims2, &e2);
  /* --ragged accepts every input the uniform pass accepts, with the same rows, and
   * stores every value of the lines it reads */
  {
    jsonl_error e4;
    uint64_t rows4;
    uint32_t dims4;
    store s4 = {NULL, 0, 0, 0};
    make_in(&in, text, n);
    const int rc4 = jsonl_pass(&in, 0, 1, max, keep, &s4, &rows4, &dims4, &e4);
    if (rc1 == CLI_OK && want == 0 && (rc4 != CLI_OK || rows4 != rows1 || dims4 != dims1))
      die("the ragged pass refuses or differs from a uniform input");
    if (rc4 != CLI_OK && rc4 != CLI_EDATA) die("ragged pass: not CLI_OK nor CLI_EDATA");
    free(s4.v);
  }
  if (rc1 != CLI_OK && rc1 != CLI_EDATA) die("validating pass: not CLI_OK nor CLI_EDATA");
  if (rc1 != rc2 || rows1 != rows2 || dims1 != dims2) die("validating and storing passes differ");
  if (memcmp(&e1, &e2, sizeof e1)) {
    fprintf(stderr, "fuzz_jsonl: %lu:%lu: %s | %lu:%lu: %s\n", e1.line, e1.col, e1.msg, e2.line,
            e2.col, e2.msg);
    die("the passes report different errors");
  }
  if (rc1 == CLI_EDATA) {
    check_error(&e1, text, n);
  } else {
    /* every line within the bound */
    for (const char *ls = text, *end = text + n; ls < end;) {
      const char *nl = memchr(ls, '\n', (size_t)(end - ls));
      if ((uint64_t)((nl ? nl : end) - ls) > max) die("a line over max_record passed");
      ls = nl ? nl + 1 : end;
    }
    if (rows1 && s.len != rows1 * dims1) die("stored values vs rows * dims");
    if (want && rows1 && dims1 != want) die("--dims not enforced");
    /* re-encode as `embd decode` writes JSON lines and parse back */
    /* "[]\n" a row, a value at most 15 bytes and a comma; cli_fmt_f32 wants 32 free bytes */
    size_t cap = (size_t)rows1 * 3 + s.len * 17 + 32, w = 0;
    char *out = malloc(cap);
    if (!out) abort();
    for (uint64_t r = 0; r < rows1; r++) {
      out[w++] = '[';
      for (uint32_t k = 0; k < dims1; k++) {
        if (k) out[w++] = ',';
        w += (size_t)cli_fmt_f32(out + w, s.v[r * dims1 + k]);
      }
      out[w++] = ']';
      out[w++] = '\n';
    }
    store s2 = {NULL, 0, 0, 0};
    jsonl_error e3;
    uint64_t rows3;
    uint32_t dims3;
    make_in(&in, out, w);
    const int rc3 = jsonl_pass(&in, 0, 0, UINT64_MAX, keep, &s2, &rows3, &dims3, &e3);
    if (rc3 != CLI_OK || rows3 != rows1 || s2.len != s.len ||
        (s.len && memcmp(s.v, s2.v, s.len * sizeof *s.v)))
      die("the re-encoded JSON lines do not read back to the same bits");
    free(out);
    free(s2.v);
  }
  free(s.v);
  return 0;
}
