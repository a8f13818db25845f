/* embd CLI: NumPy .npy reading and writing (see npy.h). Byte order by bytes, never by
 * pointer casts: correct on big-endian hosts too. */
#include "npy.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "embd/bswap.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

void npy_header_write(uint8_t out[NPY_WRITE_HEADER_SIZE], uint64_t rows, uint64_t cols) {
  npy_header_write_descr(out, rows, cols, "<f4");
}

void npy_header_write_descr(uint8_t out[NPY_WRITE_HEADER_SIZE], uint64_t rows, uint64_t cols,
                            const char *descr) {
  char dict[NPY_WRITE_HEADER_SIZE];
  const int n = snprintf(dict, sizeof dict,
                         "{'descr': '%.3s', 'fortran_order': False, 'shape': (%llu, %llu), }",
                         descr, (unsigned long long)rows, (unsigned long long)cols);
  const size_t hlen = NPY_WRITE_HEADER_SIZE - 10; /* magic 6, version 2, length 2 */
  memcpy(out, npy_magic, 6);
  out[6] = 1;
  out[7] = 0;
  out[8] = (uint8_t)(hlen & 0xff);
  out[9] = (uint8_t)(hlen >> 8);
  memset(out + 10, ' ', hlen);
  memcpy(out + 10, dict, (size_t)n); /* n <= 92 with 20-digit numbers */
  out[NPY_WRITE_HEADER_SIZE - 1] = '\n';
}

static int fail(char *err, size_t cap, const char *msg) {
  snprintf(err, cap, "%s", msg);
  return -1;
}

/* ---- the header dict: a Python literal, as numpy writes it and reads it back with
 * ast.literal_eval: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 * spaces to a '\n'. Parsed as a grammar over [p, e): every read is bounded by e, so a
 * header cut anywhere (or holding a NUL) cannot send a scan past the buffer. numpy accepts
 * exactly these three keys; a key given twice is rejected here (Python would keep the
 * last one, silently), as are other keys and anything else numpy's literal_eval would
 * refuse. */
typedef struct hdr {
  const char *p, *e;
  char *err;
  size_t cap;
} hdr;

static void ws(hdr *h) {
  while (h->p < h->e && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int eat(hdr *h, char c) {
  ws(h);
  if (h->p < h->e && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes ('...' or "..."): [*s, *s + *n). 0: not one. */
static int str(hdr *h, const char **s, size_t *n) {
  ws(h);
  if (h->p >= h->e || (*h->p != '\'' && *h->p != '"')) return 0;
  const char q = *h->p;
  const char *b = h->p + 1, *c = b;
  while (c < h->e && *c != q && *c != '\\' && *c != '\n') c++;
  if (c >= h->e || *c != q) return 0;
  *s = b;
  *n = (size_t)(c - b);
  h->p = c + 1;
  return 1;
}

static int is(const char *s, size_t n, const char *lit) {
  return n == strlen(lit) && !memcmp(s, lit, n);
}

/* A non-negative decimal integer as Python writes one (no sign, no leading zeros). */
static int uint_lit(hdr *h, uint64_t *v) {
  ws(h);
  const char *c = h->p;
  if (c >= h->e || *c < '0' || *c > '9') return 0;
  if (*c == '0' && c + 1 < h->e && c[1] >= '0' && c[1] <= '9') return 0;
  uint64_t x = 0;
  for (; c < h->e && *c >= '0' && *c <= '9'; c++) {
    const unsigned d = (unsigned)(*c - '0');
    if (x > (UINT64_MAX - d) / 10) return 0;
    x = x * 10 + d;
  }
  *v = x;
  h->p = c;
  return 1;
}

int npy_header_parse(const uint8_t *buf, size_t len, npy_info *info, size_t *need, char *err,
                     size_t errcap) {
  if (len < 10) {
    if (len < 6 ? memcmp(buf, npy_magic, len) != 0 : memcmp(buf, npy_magic, 6) != 0)
      return fail(err, errcap, "not a .npy file (no \\x93NUMPY magic)");
    *need = 12;
    return 1;
  }
  if (memcmp(buf, npy_magic, 6) != 0) return fail(err, errcap, "not a .npy file (no \\x93NUMPY magic)");
  const unsigned major = buf[6];
  size_t hlen, pre;
  if (major == 1) {
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    pre = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      *need = 12;
      return 1;
    }
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    pre = 12;
    if (hlen > (1u << 20)) return fail(err, errcap, "header length above 1 MiB");
  } else {
    char m[64];
    snprintf(m, sizeof m, "unsupported .npy format version %u.%u", major, buf[7]);
    return fail(err, errcap, m);
  }
  if (len < pre + hlen) {
    *need = pre + hlen;
    return 1;
  }
  hdr h = {(const char *)buf + pre, (const char *)buf + pre + hlen, err, errcap};
  int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, nd = 0;
  uint64_t dim[2] = {0, 0};
  npy_dtype dtype = NPY_F4LE;
  size_t elsize = 4;
  if (!eat(&h, '{')) return fail(err, errcap, "header is not a dict ('{' expected)");
  while (!eat(&h, '}')) {
    const char *k;
    size_t kn;
    if (!str(&h, &k, &kn)) return fail(err, errcap, "header dict: a quoted key or '}' expected");
    if (!eat(&h, ':')) return fail(err, errcap, "header dict: ':' expected after a key");
    if (is(k, kn, "descr")) {
      if (have_descr++) return fail(err, errcap, "header has 'descr' twice");
      const char *v;
      size_t vn;
      if (!str(&h, &v, &vn)) return fail(err, errcap, "'descr' is not a quoted string");
      if (is(v, vn, "<f4")) dtype = NPY_F4LE, elsize = 4;
      else if (is(v, vn, ">f4")) dtype = NPY_F4BE, elsize = 4;
      else if (is(v, vn, "<f8")) dtype = NPY_F8LE, elsize = 8;
      else if (is(v, vn, ">f8")) dtype = NPY_F8BE, elsize = 8;
      else {
        char shown[40], m[112];
        const size_t full = cli_escape(shown, sizeof shown, v, vn);
        snprintf(m, sizeof m, "dtype '%s%s' not supported (want '<f4', '>f4', '<f8' or '>f8')",
                 shown, full >= sizeof shown ? "..." : "");
        return fail(err, errcap, m);
      }
    } else if (is(k, kn, "fortran_order")) {
      if (have_fortran++) return fail(err, errcap, "header has 'fortran_order' twice");
      ws(&h);
      const size_t left = (size_t)(h.e - h.p);
      if (left >= 4 && !memcmp(h.p, "True", 4)) fortran = 1, h.p += 4;
      else if (left >= 5 && !memcmp(h.p, "False", 5)) fortran = 0, h.p += 5;
      else return fail(err, errcap, "bad 'fortran_order' (True or False)");
    } else if (is(k, kn, "shape")) {
      if (have_shape++) return fail(err, errcap, "header has 'shape' twice");
      if (!eat(&h, '(')) return fail(err, errcap, "header has no 'shape' tuple");
      int commas = 0;
      nd = 0;
      while (!eat(&h, ')')) {
        uint64_t v;
        if (!uint_lit(&h, &v)) return fail(err, errcap, "bad 'shape' tuple");
        if (nd == 2) return fail(err, errcap, "shape has more than 2 dimensions (want (count, dims) or (dims,))");
        dim[nd++] = v;
        if (eat(&h, ',')) commas++;
        else if (!eat(&h, ')')) return fail(err, errcap, "bad 'shape' tuple");
        else break;
      }
      /* (3) is the number 3 in Python, not a tuple: numpy rejects it */
      if (nd == 1 && !commas) return fail(err, errcap, "bad 'shape' tuple: (N) is not a tuple, (N,) is");
    } else {
      char shown[40], m[96];
      const size_t full = cli_escape(shown, sizeof shown, k, kn);
      snprintf(m, sizeof m, "header has an unknown key '%s%s'", shown, full >= sizeof shown ? "..." : "");
      return fail(err, errcap, m);
    }
    if (!eat(&h, ',')) {
      if (!eat(&h, '}')) return fail(err, errcap, "header dict: ',' or '}' expected");
      break;
    }
  }
  ws(&h);
  if (h.p != h.e) return fail(err, errcap, "text after the header dict");
  if (!have_descr) return fail(err, errcap, "header has no 'descr'");
  if (!have_fortran) return fail(err, errcap, "header has no 'fortran_order'");
  if (!have_shape) return fail(err, errcap, "header has no 'shape' tuple");
  if (nd == 1) {
    info->ndim = 1, info->rows = 1, info->cols = dim[0];
  } else if (nd == 2) {
    if (fortran && dim[0] > 1 && dim[1] > 1)
      return fail(err, errcap, "fortran_order True (column-major) 2-D arrays are not supported");
    info->ndim = 2, info->rows = dim[0], info->cols = dim[1];
  } else {
    return fail(err, errcap, "shape () is a scalar: want (count, dims) or (dims,)");
  }
  if (info->cols > UINT32_MAX || (info->cols && info->rows > UINT64_MAX / 8 / info->cols))
    return fail(err, errcap, "shape too large");
  info->dtype = dtype;
  info->elsize = elsize;
  info->header_len = pre + hlen;
  return 0;
}

static uint32_t rd32(const uint8_t *p, int be) {
  return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
            : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

size_t npy_convert(float *dst, const uint8_t *src, size_t n, npy_dtype dtype) {
  switch (dtype) {
    case NPY_F4LE:
      embd_f32_from_le(dst, src, n);
      return n;
    case NPY_F4BE:
      for (size_t i = 0; i < n; i++) {
        const uint32_t u = rd32(src + 4 * i, 1);
        memcpy(dst + i, &u, 4);
      }
      return n;
    case NPY_F8LE:
    case NPY_F8BE: {
      const int be = dtype == NPY_F8BE;
      for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src + 8 * i;
        const uint64_t lo = rd32(be ? p + 4 : p, be), hi = rd32(be ? p : p + 4, be);
        const uint64_t u = hi << 32 | lo;
        double d;
        memcpy(&d, &u, 8);
        if (isfinite(d) && fabs(d) > FLT_MAX) {
          /* rounds to infinity only beyond FLT_MAX + half an ulp; C leaves the cast
           * undefined outside the range: treat anything above as out of range */
          if (fabs(d) >= (double)FLT_MAX + ldexp(1.0, 103)) return i;
          dst[i] = d > 0 ? FLT_MAX : -FLT_MAX;
          continue;
        }
        dst[i] = (float)d;
      }
      return n;
    }
  }
  return n;
}
