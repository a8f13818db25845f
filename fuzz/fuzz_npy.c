/* Fuzz target for the CLI's .npy header reader (cli/npy.c), the one `embd encode` runs on
 * a .npy input. Arbitrary bytes as a .npy file:
 *   - fed as encode feeds it: a prefix of `need` bytes at a time (each in an allocation of
 *     exactly that size, so ASan sees any read past it), until it parses, fails or the
 *     input ends; a "need more" answer must ask for more than it had;
 *   - parsed again whole: the same answer and the same npy_info;
 *   - a failure has a message of printable text (names from the file are escaped); a
 *     success has a consistent npy_info (1 or 2 dims, dims <= 2^32 - 1, the data size
 *     representable, the element size of its dtype, header_len inside the input), and
 *     every shorter prefix of the header answers "need more";
 *   - npy_header_write of the parsed shape, and of a shape taken from the input's bytes,
 *     parses back to that shape as '<f4' with a 128-byte header;
 *   - the first data elements convert (npy_convert) bit-exactly for float32 and as C's
 *     (float) for float64 within range.
 * Built twice by fuzz/CMakeLists.txt: libFuzzer (fuzz_npy) and corpus replay. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what) {
  fprintf(stderr, "fuzz_npy: %s\n", what);
  abort();
}

/* npy_header_parse on an exact-size copy of data[0..len). */
static int parse_exact(const uint8_t *data, size_t len, npy_info *info, size_t *need, char *err,
                       size_t cap) {
  uint8_t *b = malloc(len ? len : 1);
  if (!b) abort();
  if (len) memcpy(b, data, len);
  memset(info, 0xa5, sizeof *info);
  *need = 0;
  err[0] = 0;
  const int r = npy_header_parse(b, len, info, need, err, cap);
  free(b);
  return r;
}

static void check_err(const char *err) {
  if (!err[0]) die("a failure without a message");
  for (const unsigned char *p = (const unsigned char *)err; *p; p++)
    if (*p < 0x20 || *p == 0x7f) die("a control character in a message");
}

static void check_info(const npy_info *i, size_t len) {
  if (i->ndim != 1 && i->ndim != 2) die("ndim");
  if (i->ndim == 1 && i->rows != 1) die("1-D rows");
  if (i->cols > UINT32_MAX) die("cols above 2^32 - 1");
  if (i->cols && i->rows > UINT64_MAX / 8 / i->cols) die("data size overflows");
  const size_t want = i->dtype == NPY_F8LE || i->dtype == NPY_F8BE ? 8 : 4;
  if (i->dtype > NPY_F8BE || i->elsize != want) die("elsize vs dtype");
  if (i->header_len < 10 || i->header_len > len) die("header_len outside the input");
}

static void roundtrip(uint64_t rows, uint64_t cols) {
  uint8_t h[NPY_WRITE_HEADER_SIZE];
  npy_header_write(h, rows, cols);
  npy_info i;
  size_t need;
  char err[160];
  const int r = parse_exact(h, sizeof h, &i, &need, err, sizeof err);
  const int too_large = cols > UINT32_MAX || (cols && rows > UINT64_MAX / 8 / cols);
  if (too_large) {
    if (r != -1) die("a too large written shape parsed");
    check_err(err);
    return;
  }
  if (r != 0) {
    fprintf(stderr, "fuzz_npy: written (%llu, %llu): %d %s\n", (unsigned long long)rows,
            (unsigned long long)cols, r, err);
    die("a written header does not parse");
  }
  if (i.dtype != NPY_F4LE || i.elsize != 4 || i.ndim != 2 || i.rows != rows || i.cols != cols ||
      i.header_len != NPY_WRITE_HEADER_SIZE)
    die("a written header parses to another shape");
}

static uint64_t rd64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = v << 8 | p[k];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[160];
  npy_info inc, whole;
  size_t need = 12, wneed;
  /* incremental, as cmd_encode: ask for `need`, give what there is */
  int r;
  size_t had;
  for (;;) {
    had = need < size ? need : size;
    r = parse_exact(data, had, &inc, &need, err, sizeof err);
    if (r != 1) break;
    if (need <= had) die("need more, but no more than it had");
    if (need > 12 + ((size_t)1 << 20) + 0xffff) die("need beyond any header");
    if (had == size) break; /* truncated: the input ends first */
  }
  if (r == -1) check_err(err);
  if (r == 0) check_info(&inc, had);

  const int rw = parse_exact(data, size, &whole, &wneed, err, sizeof err);
  if (r == 0 || r == -1) {
    /* the whole input holds at least what the incremental parse saw: same answer */
    if (rw != r) die("incremental and whole parses differ");
    if (r == 0 && memcmp(&inc, &whole, sizeof inc)) die("incremental and whole npy_info differ");
  } else if (rw != 1) {
    die("a truncated header parses whole");
  }
  if (rw == -1) check_err(err);

  if (rw == 0) {
    check_info(&whole, size);
    /* every shorter prefix of a good header asks for more */
    const size_t hl = whole.header_len;
    size_t probe[] = {0, 1, 5, 6, 9, 10, 11, 12, hl / 2, hl - 2, hl - 1};
    for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
      if (probe[k] >= hl) continue;
      npy_info t;
      size_t n2;
      if (parse_exact(data, probe[k], &t, &n2, err, sizeof err) != 1) die("a prefix does not ask for more");
    }
    roundtrip(whole.rows, whole.cols);
    /* the first elements after the header */
    const size_t avail = (size - hl) / whole.elsize;
    const size_t n = avail < 64 ? avail : 64;
    float f[64];
    const uint8_t *src = data + hl;
    const size_t ok = npy_convert(f, src, n, whole.dtype);
    if (ok > n) die("npy_convert index");
    for (size_t k = 0; k < ok; k++) {
      const uint8_t *p = src + k * whole.elsize;
      /* The element's value from its bytes by arithmetic, so the check holds on a host of
       * either byte order. */
      const int be = whole.dtype == NPY_F4BE || whole.dtype == NPY_F8BE;
      uint64_t v = 0;
      for (size_t b = 0; b < whole.elsize; b++) v |= (uint64_t)(be ? p[whole.elsize - 1 - b] : p[b]) << (8 * b);
      if (whole.elsize == 4) {
        uint32_t got;
        memcpy(&got, &f[k], 4);
        if (got != (uint32_t)v) die("float32 element not bit-exact");
      } else {
        double d;
        memcpy(&d, &v, 8);
        if (isnan(d) ? !isnan(f[k]) : (fabs(d) <= 3.4028234663852886e38 && f[k] != (float)d))
          die("float64 element converts wrongly");
      }
    }
    if (ok < n) { /* only a double beyond float32 */
      const uint8_t *p = src + ok * 8;
      const int be = whole.dtype == NPY_F8BE;
      uint64_t v = 0;
      for (size_t b = 0; b < 8; b++) v |= (uint64_t)(be ? p[7 - b] : p[b]) << (8 * b);
      double d;
      memcpy(&d, &v, 8);
      if (!(isfinite(d) && fabs(d) > 3.4028234663852886e38)) die("npy_convert stopped at an in-range value");
    }
  }
  if (size >= 16) roundtrip(rd64(data), rd64(data + 8) & 0x1ffffffffull);
  return 0;
}
