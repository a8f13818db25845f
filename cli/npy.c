/* embd CLI: NumPy .npy reading and writing (see npy.h). Byte order by bytes, never by
 * pointer casts: correct on big-endian hosts too. */
#include "npy.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/bswap.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

void npy_header_write(uint8_t out[NPY_WRITE_HEADER_SIZE], uint64_t rows, uint64_t cols) {
  char dict[NPY_WRITE_HEADER_SIZE];
  const int n = snprintf(dict, sizeof dict,
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (%llu, %llu), }",
                         (unsigned long long)rows, (unsigned long long)cols);
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

/* Finds 'key' in the dict text and returns a pointer after its ':' (and spaces). */
static const char *find_key(const char *d, const char *key) {
  const char *p = strstr(d, key);
  if (!p) return NULL;
  p += strlen(key);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
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
  char *d = malloc(hlen + 1);
  if (!d) return fail(err, errcap, "out of memory");
  memcpy(d, buf + pre, hlen);
  d[hlen] = 0;
  int rc = -1;
  const char *p = find_key(d, "'descr'");
  if (!p) {
    fail(err, errcap, "header has no 'descr'");
    goto out;
  }
  if (!strncmp(p, "'<f4'", 5)) info->dtype = NPY_F4LE, info->elsize = 4;
  else if (!strncmp(p, "'>f4'", 5)) info->dtype = NPY_F4BE, info->elsize = 4;
  else if (!strncmp(p, "'<f8'", 5)) info->dtype = NPY_F8LE, info->elsize = 8;
  else if (!strncmp(p, "'>f8'", 5)) info->dtype = NPY_F8BE, info->elsize = 8;
  else {
    char m[96];
    const char *q = strchr(p + 1, '\'');
    snprintf(m, sizeof m, "dtype %.*s not supported (want '<f4', '>f4', '<f8' or '>f8')",
             q ? (int)(q - p + 1) : 8, p);
    fail(err, errcap, m);
    goto out;
  }
  p = find_key(d, "'fortran_order'");
  if (!p) {
    fail(err, errcap, "header has no 'fortran_order'");
    goto out;
  }
  const int fortran = !strncmp(p, "True", 4);
  if (!fortran && strncmp(p, "False", 5)) {
    fail(err, errcap, "bad 'fortran_order'");
    goto out;
  }
  p = find_key(d, "'shape'");
  if (!p || *p != '(') {
    fail(err, errcap, "header has no 'shape' tuple");
    goto out;
  }
  p++;
  uint64_t dim[3];
  int nd = 0;
  for (;;) {
    while (*p == ' ') p++;
    if (*p == ')') break;
    if (*p < '0' || *p > '9') {
      fail(err, errcap, "bad 'shape' tuple");
      goto out;
    }
    char *e;
    const unsigned long long v = strtoull(p, &e, 10);
    if (nd == 3) {
      fail(err, errcap, "shape has more than 2 dimensions (want (count, dims) or (dims,))");
      goto out;
    }
    dim[nd++] = v;
    p = e;
    while (*p == ' ') p++;
    if (*p == ',') p++;
    else if (*p != ')') {
      fail(err, errcap, "bad 'shape' tuple");
      goto out;
    }
  }
  if (nd == 1) {
    info->ndim = 1, info->rows = 1, info->cols = dim[0];
  } else if (nd == 2) {
    if (fortran && dim[0] > 1 && dim[1] > 1) {
      fail(err, errcap, "fortran_order True (column-major) 2-D arrays are not supported");
      goto out;
    }
    info->ndim = 2, info->rows = dim[0], info->cols = dim[1];
  } else {
    fail(err, errcap, nd == 0 ? "shape () is a scalar: want (count, dims) or (dims,)"
                              : "shape has more than 2 dimensions (want (count, dims) or (dims,))");
    goto out;
  }
  if (info->cols > UINT32_MAX || (info->cols && info->rows > UINT64_MAX / 8 / info->cols)) {
    fail(err, errcap, "shape too large");
    goto out;
  }
  info->header_len = pre + hlen;
  rc = 0;
out:
  free(d);
  return rc;
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
