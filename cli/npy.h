/* embd CLI: NumPy .npy files (format version 1.0 written; 1.0, 2.0 and 3.0 read). */
#ifndef EMBD_CLI_NPY_H
#define EMBD_CLI_NPY_H

#include <stddef.h>
#include <stdint.h>

/* Element types accepted on input (output: npy_header_write_descr's descr). */
typedef enum npy_dtype { NPY_F4LE, NPY_F4BE, NPY_F8LE, NPY_F8BE } npy_dtype;

#define NPY_WRITE_HEADER_SIZE 128 /* what npy_header_write produces: a multiple of 64 */

typedef struct npy_info {
  npy_dtype dtype;
  size_t elsize;     /* 4 or 8 */
  int ndim;          /* 1 or 2 */
  uint64_t rows, cols; /* 1-D: rows 1, cols = shape[0] */
  size_t header_len; /* bytes before the data */
} npy_info;

/* Writes a version 1.0 header for a C-order '<f4' array of shape (rows, cols) into
 * out[NPY_WRITE_HEADER_SIZE] (padded with spaces, ends in '\n'). */
void npy_header_write(uint8_t out[NPY_WRITE_HEADER_SIZE], uint64_t rows, uint64_t cols);
/* The same with another descr (3 characters, e.g. "<f2", "|i1"). */
void npy_header_write_descr(uint8_t out[NPY_WRITE_HEADER_SIZE], uint64_t rows, uint64_t cols,
                            const char *descr);

/* Parses a header from buf[0 .. len). Returns 0 and fills *info; 1 when more bytes are
 * needed (*need set to the header's full length); -1 on an invalid header (why in err). */
int npy_header_parse(const uint8_t *buf, size_t len, npy_info *info, size_t *need, char *err,
                     size_t errcap);

/* Converts n elements of dtype at src to host floats. Returns the index of the first
 * double out of float32 range (non-finite doubles convert as they are), or n when all
 * converted. */
size_t npy_convert(float *dst, const uint8_t *src, size_t n, npy_dtype dtype);

#endif
