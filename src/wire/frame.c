/* EMBD frames: encode, validate, decode. See include/embd/frame.h and docs/FORMAT.md. */
#include "embd/frame.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#ifdef EMBD_HAVE_LIBDEFLATE
#include <libdeflate.h>
#include <pthread.h>
#endif

#include "embd/bswap.h"
#include "embd/crc32.h"
#include "wire.h"

#define HDR EMBD_FRAME_HEADER_SIZE
/* Floats converted per step on the double path and the compressed encoder's staging. */
#define CHUNK 256

/* dims whose float32 payload plus the largest fixed overhead (header 16, compressed
 * length 4, trailer 4) still fits in size_t. */
#define MAX_DIMS_SIZE ((SIZE_MAX - HDR - 8) / 4)

/* A function, not an inline comparison: with a 64-bit size_t a uint32_t always fits, and
 * the compiler would warn about the comparison being always false. */
static int dims_fit(uint64_t dims) { return dims <= MAX_DIMS_SIZE; }




/* ---- size ----------------------------------------------------------------------------- */

/* zlib's compressBound() formula, in 64 bits (it overflows uLong on 32-bit hosts). */
static uint64_t zbound(uint64_t n) { return n + (n >> 12) + (n >> 14) + (n >> 25) + 13; }

embd_result embd_frame_size_dtype(size_t dims, embd_dtype dtype, unsigned flags, size_t *size) {
  if (!size || (flags & ~EMBD_FRAME_KNOWN_FLAGS)) return EMBD_ERR_INVALID_ARGUMENT;
  if ((unsigned)dtype >= EMBD_DTYPE_COUNT_) return EMBD_ERR_INVALID_ARGUMENT;
  if (embd_above_u32(dims) || dims > MAX_DIMS_SIZE) return EMBD_ERR_INVALID_ARGUMENT;
  if (embd_dtype_bits(dtype) == 1 && dims % 8) return EMBD_ERR_DTYPE_LENGTH;
  uint64_t n = embd_value_bytes_(dtype, dims);
  if (flags & EMBD_FRAME_ZLIB) n = 4 + zbound(n);
  n += HDR;
  if (flags & EMBD_FRAME_PAYLOAD_CRC) n += 4;
  if (n > SIZE_MAX) return EMBD_ERR_INVALID_ARGUMENT;
  *size = (size_t)n;
  return EMBD_OK;
}

embd_result embd_frame_size(size_t dims, unsigned flags, size_t *size) {
  return embd_frame_size_dtype(dims, EMBD_DTYPE_F32, flags, size);
}

/* ---- encode --------------------------------------------------------------------------- */

/* float32 stays version 1, the seed codec's frame; every other dtype is version 2 with
 * its code in byte 6. */
static void write_header(uint8_t *o, uint32_t dims, unsigned flags, embd_dtype dtype) {
  o[0] = 0x45;
  o[1] = 0x4D;
  o[2] = 0x42;
  o[3] = 0x44;
  o[4] = dtype == EMBD_DTYPE_F32 ? EMBD_FRAME_VERSION : EMBD_FRAME_VERSION_DTYPE;
  o[5] = (uint8_t)flags;
  o[6] = (uint8_t)dtype;
  o[7] = 0;
  embd_wr32le(o + 8, dims);
  embd_wr32le(o + 12, embd_crc32(0, o, 12));
}

/* Source of the values: a float or double array converted to `dtype`, or elements
 * already in `dtype` (raw, in byte order `order`). */
typedef struct src {
  const float *f;
  const double *d;
  const uint8_t *raw;
  embd_dtype dtype; /* what the frame carries */
  embd_byte_order order; /* raw's */
} src;

/* Elements [i, i + n) of `s` (n <= CHUNK; i and n multiples of 8, CHUNK's divisor, for
 * packed bits) as the frame's little-endian elements at dst. Only int8/uint8 can fail
 * (EMBD_ERR_DTYPE_RANGE). */
static embd_result stage(uint8_t *dst, const src *s, size_t i, size_t n) {
  if (s->raw) {
    const uint64_t at = embd_value_bytes_(s->dtype, i);
    embd_copy_elems_(dst, s->raw + at, embd_value_bytes_(s->dtype, n), embd_dtype_bits(s->dtype) / 8,
                     s->order != EMBD_ORDER_LE);
    return EMBD_OK;
  }
  if (s->f) return embd_from_f32(dst, s->f + i, n, s->dtype, EMBD_ORDER_LE, NULL);
  float tmp[CHUNK];
  for (size_t k = 0; k < n; k++) tmp[k] = (float)s->d[i + k];
  return embd_from_f32(dst, tmp, n, s->dtype, EMBD_ORDER_LE, NULL);
}

static embd_result encode(const src *s, size_t dims, const embd_frame_encode_options *opt,
                          void *out, size_t cap, size_t *written) {
  const unsigned flags = opt ? opt->flags : 0;
  const int level = opt && opt->level ? opt->level : Z_DEFAULT_COMPRESSION;
  if (!written) return EMBD_ERR_INVALID_ARGUMENT;
  *written = 0;
  if ((!out && cap) || (dims && !s->f && !s->d && !s->raw)) return EMBD_ERR_INVALID_ARGUMENT;
  if (opt && !EMBD_RESERVED_OK(opt)) return EMBD_ERR_INVALID_ARGUMENT;
  if (flags & ~EMBD_FRAME_KNOWN_FLAGS) return EMBD_ERR_INVALID_ARGUMENT;
  if (level != Z_DEFAULT_COMPRESSION && (level < 1 || level > 9)) return EMBD_ERR_INVALID_ARGUMENT;
  size_t bound;
  embd_result r = embd_frame_size_dtype(dims, s->dtype, flags, &bound);
  if (r != EMBD_OK) return r;
  const size_t tr = (flags & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0;
  const size_t vb = (size_t)embd_value_bytes_(s->dtype, dims); /* fits: bound does */
  uint8_t *o = (uint8_t *)out;

  if (!(flags & EMBD_FRAME_ZLIB)) {
    if (cap < bound) return *written = bound, EMBD_ERR_OUTPUT_TOO_SMALL;
    write_header(o, (uint32_t)dims, flags, s->dtype);
    if (s->f && s->dtype == EMBD_DTYPE_F32) {
      embd_f32_to_le(o + HDR, s->f, dims);
    } else if (s->f) {
      r = embd_from_f32(o + HDR, s->f, dims, s->dtype, EMBD_ORDER_LE, NULL);
    } else if (s->raw) {
      embd_copy_elems_(o + HDR, s->raw, vb, embd_dtype_bits(s->dtype) / 8, s->order != EMBD_ORDER_LE);
    } else {
      for (size_t i = 0; r == EMBD_OK && i < dims; i += CHUNK) {
        size_t n = dims - i < CHUNK ? dims - i : CHUNK;
        r = stage(o + HDR + embd_value_bytes_(s->dtype, i), s, i, n);
      }
    }
    if (r != EMBD_OK) return r;
    if (tr) embd_wr32le(o + HDR + vb, embd_crc32(0, o + HDR, vb));
    *written = bound;
    return EMBD_OK;
  }

  /* Compressed: header, 4-byte length, the deflate output straight into `out`. */
  if (cap < HDR + 4 + tr) return *written = bound, EMBD_ERR_OUTPUT_TOO_SMALL;
  write_header(o, (uint32_t)dims, flags, s->dtype);
  z_stream z;
  memset(&z, 0, sizeof z);
  const int zi = deflateInit(&z, level);
  if (zi != Z_OK) return zi == Z_MEM_ERROR ? EMBD_ERR_OUT_OF_MEMORY : EMBD_ERR_FRAME_DEFLATE;
  uint8_t *zo = o + HDR + 4;
  size_t zcap = cap - HDR - 4 - tr, zlen = 0;
  uint8_t buf[4 * CHUNK];
  size_t i = 0;
  int zr = Z_OK;
  r = EMBD_OK;
  for (;;) {
    if (z.avail_in == 0 && i < dims) {
      size_t n = dims - i < CHUNK ? dims - i : CHUNK;
      r = stage(buf, s, i, n);
      if (r != EMBD_OK) break;
      i += n;
      z.next_in = buf;
      z.avail_in = (uInt)embd_value_bytes_(s->dtype, n);
    }
    const int fl = (i == dims) ? Z_FINISH : Z_NO_FLUSH;
    size_t room = zcap - zlen;
    uInt give = room > UINT_MAX ? UINT_MAX : (uInt)room;
    z.next_out = zo + zlen;
    z.avail_out = give;
    zr = deflate(&z, fl);
    zlen += give - z.avail_out;
    if (zr == Z_STREAM_END) break;
    if (zr == Z_STREAM_ERROR) {
      r = EMBD_ERR_FRAME_DEFLATE;
      break;
    }
    if (z.avail_out == 0 && zlen == zcap) {
      /* Full with more to come (deflate may still only be holding pending output). */
      r = EMBD_ERR_OUTPUT_TOO_SMALL;
      break;
    }
  }
  deflateEnd(&z);
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL) *written = bound; /* enough: see embd_frame_size */
  if (r != EMBD_OK) return r;
  if (embd_above_u32(zlen)) return EMBD_ERR_FRAME_DEFLATE;
  embd_wr32le(o + HDR, (uint32_t)zlen);
  if (tr) embd_wr32le(zo + zlen, embd_crc32(0, o + HDR, 4 + zlen));
  *written = HDR + 4 + zlen + tr;
  return EMBD_OK;
}

/* opt->dtype for the float paths (0 = f32); -1 when it is not a dtype. */
static int opt_dtype(const embd_frame_encode_options *opt) {
  if (!opt) return EMBD_DTYPE_F32;
  return opt->dtype < EMBD_DTYPE_COUNT_ ? (int)opt->dtype : -1;
}

embd_result embd_frame_encode_f32(const float *v, size_t dims,
                                  const embd_frame_encode_options *opt, void *out, size_t cap,
                                  size_t *written) {
  const int dt = opt_dtype(opt);
  if (dt < 0) return written ? (*written = 0, EMBD_ERR_INVALID_ARGUMENT) : EMBD_ERR_INVALID_ARGUMENT;
  src s = {dims ? v : NULL, NULL, NULL, (embd_dtype)dt, EMBD_ORDER_LE};
  return encode(&s, dims, opt, out, cap, written);
}

embd_result embd_frame_encode_f64(const double *v, size_t dims,
                                  const embd_frame_encode_options *opt, void *out, size_t cap,
                                  size_t *written) {
  const int dt = opt_dtype(opt);
  if (dt < 0) return written ? (*written = 0, EMBD_ERR_INVALID_ARGUMENT) : EMBD_ERR_INVALID_ARGUMENT;
  src s = {NULL, dims ? v : NULL, NULL, (embd_dtype)dt, EMBD_ORDER_LE};
  return encode(&s, dims, opt, out, cap, written);
}

embd_result embd_frame_encode_raw(const void *data, size_t dims, embd_dtype dtype,
                                  embd_byte_order order_of_data,
                                  const embd_frame_encode_options *opt, void *out, size_t cap,
                                  size_t *written) {
  if ((unsigned)dtype >= EMBD_DTYPE_COUNT_ || (order_of_data != EMBD_ORDER_LE && order_of_data != EMBD_ORDER_BE) ||
      (opt && opt->dtype && opt->dtype != (uint64_t)dtype))
    return written ? (*written = 0, EMBD_ERR_INVALID_ARGUMENT) : EMBD_ERR_INVALID_ARGUMENT;
  src s = {NULL, NULL, dims ? (const uint8_t *)data : NULL, dtype, order_of_data};
  return encode(&s, dims, opt, out, cap, written);
}

/* ---- decode --------------------------------------------------------------------------- */

void (*embd_check_hook_)(int what) = NULL;
int embd_inflate_zlib_only_ = 0;

/* The header's magic, version, padding, flags and CRC (16 bytes at p). */
static embd_result check_fields(const uint8_t *p, embd_error *err) {
  EMBD_CHECKED_(EMBD_CHECK_HEADER);
  const uint32_t magic = embd_rd32be(p);
  if (magic != EMBD_FRAME_MAGIC)
    return embd_fail(err, EMBD_ERR_FRAME_BAD_MAGIC, 0,
                "bad magic: 0x%08lx (bytes 0-3), expected 0x%08lx \"EMBD\"", (unsigned long)magic,
                (unsigned long)EMBD_FRAME_MAGIC);
  if (p[4] != EMBD_FRAME_VERSION && p[4] != EMBD_FRAME_VERSION_DTYPE)
    return embd_fail(err, EMBD_ERR_FRAME_BAD_VERSION, 4,
                     "unsupported version %u (byte 4), expected %d or %d", p[4],
                     EMBD_FRAME_VERSION, EMBD_FRAME_VERSION_DTYPE);
  if (p[4] == EMBD_FRAME_VERSION && (p[6] || p[7]))
    return embd_fail(err, EMBD_ERR_FRAME_BAD_PADDING, p[6] ? 6 : 7,
                "non-zero padding: bytes 6-7 are 0x%02x 0x%02x (version 1)", p[6], p[7]);
  if (p[4] == EMBD_FRAME_VERSION_DTYPE && p[6] >= EMBD_DTYPE_COUNT_)
    return embd_fail(err, EMBD_ERR_FRAME_BAD_DTYPE, 6,
                     "unknown dtype code %u (byte 6; known: 0-%d)", p[6], EMBD_DTYPE_COUNT_ - 1);
  if (p[4] == EMBD_FRAME_VERSION_DTYPE && p[7])
    return embd_fail(err, EMBD_ERR_FRAME_BAD_PADDING, 7,
                     "non-zero padding: byte 7 is 0x%02x (version 2)", p[7]);
  if (p[5] & ~EMBD_FRAME_KNOWN_FLAGS)
    return embd_fail(err, EMBD_ERR_FRAME_UNKNOWN_FLAGS, 5,
                "unknown flag bits 0x%02x in flags 0x%02x (byte 5; known: 0x%02x)",
                (unsigned)(p[5] & ~EMBD_FRAME_KNOWN_FLAGS), p[5], EMBD_FRAME_KNOWN_FLAGS);
  const uint32_t stored = embd_rd32le(p + 12), computed = embd_crc32(0, p, 12);
  if (stored != computed)
    return embd_fail(err, EMBD_ERR_FRAME_HEADER_CRC, 12,
                "header CRC mismatch: stored 0x%08lx, computed 0x%08lx (bytes 0-11)",
                (unsigned long)stored, (unsigned long)computed);
  return EMBD_OK;
}

/* The 16 header bytes at p (present): fields, CRC and the dims limits. */
static embd_result check_dims(const uint8_t *p, const embd_frame_decode_options *opt,
                              embd_error *err) {
  const uint32_t dims = embd_rd32le(p + 8);
  const uint32_t maxd = opt ? opt->max_dims : 0, want = opt ? opt->expected_dims : 0;
  if (maxd && dims > maxd)
    return embd_fail(err, EMBD_ERR_FRAME_DIMS_TOO_LARGE, 8, "dims %lu above the maximum %lu",
                (unsigned long)dims, (unsigned long)maxd);
  if (!dims_fit(dims))
    return embd_fail(err, EMBD_ERR_FRAME_DIMS_TOO_LARGE, 8,
                "dims %lu: %llu-byte payload does not fit in this host's size_t",
                (unsigned long)dims, (unsigned long long)dims * 4u);
  if (want && dims != want)
    return embd_fail(err, EMBD_ERR_FRAME_DIMS_MISMATCH, 8, "dims %lu, expected %lu", (unsigned long)dims,
                (unsigned long)want);
  const embd_dtype dt = embd_hdr_dtype_(p);
  if (embd_dtype_bits(dt) == 1 && dims % 8)
    return embd_fail(err, EMBD_ERR_DTYPE_LENGTH, 8,
                     "dims %lu of dtype %s: packed bits need a multiple of 8 dims",
                     (unsigned long)dims, embd_dtype_name(dt));
  return EMBD_OK;
}

embd_result embd_frame_need_(const uint8_t *p, size_t avail, const embd_frame_decode_options *opt,
                             int checked, uint64_t *need, embd_error *err) {
  if (!checked) {
    embd_result r = check_fields(p, err);
    if (r == EMBD_OK) r = check_dims(p, opt, err);
    if (r != EMBD_OK) return r;
  }
  const uint64_t tr = (p[5] & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0;
  if (p[5] & EMBD_FRAME_ZLIB)
    *need = avail < HDR + 4 ? HDR + 4 : HDR + 4 + (uint64_t)embd_rd32le(p + HDR) + tr;
  else
    *need = HDR + embd_value_bytes_(embd_hdr_dtype_(p), embd_rd32le(p + 8)) + tr;
  return EMBD_OK;
}

embd_result embd_frame_need(const void *buf, size_t len, const embd_frame_decode_options *opt,
                            uint64_t *need, embd_error *err) {
  if (!need || (!buf && len))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer or need");
  if (len < HDR) {
    *need = HDR;
  } else {
    embd_result r = embd_frame_need_((const uint8_t *)buf, len, opt, 0, need, err);
    if (r != EMBD_OK) return r;
  }
  embd_no_error(err);
  return EMBD_OK;
}

void embd_frame_info_(const uint8_t *p, size_t size, embd_frame_info *info) {
  memset(info, 0, sizeof *info); /* the reserved room too */
  info->dims = embd_rd32le(p + 8);
  info->version = p[4];
  info->flags = p[5];
  info->dtype = (uint8_t)embd_hdr_dtype_(p);
  info->frame_size = size;
  info->payload_offset = HDR;
  info->payload_size = size - HDR - ((p[5] & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0);
  /* fits: the frame's size does (dims_fit), and the values are at most dims*4 bytes */
  info->value_bytes = (size_t)embd_value_bytes_((embd_dtype)info->dtype, info->dims);
}

/* Everything but the inflate and the payload CRC: the header, the dims limits, that the
 * frame fits in len, and the trailing-bytes rule. Fills *info. */
static embd_result check_header(const uint8_t *p, size_t len,
                                const embd_frame_decode_options *opt, embd_frame_info *info,
                                embd_error *err) {
  if (!p && len) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL buffer with length %zu", len);
  if (opt && !EMBD_RESERVED_OK(opt))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: reserved_ fields not zero");
  if (len < HDR)
    return embd_fail(err, EMBD_ERR_FRAME_TOO_SMALL, len,
                "frame too small: %zu bytes, the header alone is %d", len, HDR);
  embd_result r0 = check_fields(p, err);
  if (r0 == EMBD_OK) r0 = check_dims(p, opt, err);
  if (r0 != EMBD_OK) return r0;
  const uint32_t dims = embd_rd32le(p + 8);
  const uint8_t flags = p[5];
  const embd_dtype dtype = embd_hdr_dtype_(p);
  const size_t tr = (flags & EMBD_FRAME_PAYLOAD_CRC) ? 4 : 0;
  const size_t rest = len - HDR; /* bytes after the header */
  size_t payload;
  if (flags & EMBD_FRAME_ZLIB) {
    if (rest < 4)
      return embd_fail(err, EMBD_ERR_FRAME_TRUNCATED, len,
                  "truncated: compressed frame needs its 4-byte length at bytes 16-19, got %zu bytes",
                  len);
    const uint32_t clen = embd_rd32le(p + HDR);
    if ((uint64_t)clen > rest - 4 || tr > rest - 4 - clen)
      return embd_fail(err, EMBD_ERR_FRAME_TRUNCATED, len,
                  "truncated: compressed length %lu needs %llu bytes in all, got %zu",
                  (unsigned long)clen, (unsigned long long)(HDR + 4 + (uint64_t)clen + tr), len);
    payload = 4 + (size_t)clen;
  } else {
    /* no overflow: dims <= MAX_DIMS_SIZE, and no dtype takes more than 4 bytes */
    const size_t need = (size_t)embd_value_bytes_(dtype, dims);
    if (need > rest || tr > rest - need)
      return embd_fail(err, EMBD_ERR_FRAME_TRUNCATED, len,
                  "truncated: %lu dims of %s need %llu bytes, got %zu", (unsigned long)dims,
                  embd_dtype_name(dtype), (unsigned long long)(HDR + (uint64_t)need + tr), len);
    payload = need;
  }
  const size_t fsize = HDR + payload + tr;
  if (len > fsize && !(opt && opt->allow_trailing))
    return embd_fail(err, EMBD_ERR_FRAME_TRAILING, fsize, "%zu bytes after the %zu-byte frame",
                len - fsize, fsize);
  if (info) embd_frame_info_(p, fsize, info);
  return EMBD_OK;
}

static embd_result check_payload_crc(const uint8_t *p, const embd_frame_info *in, embd_error *err) {
  if (!(in->flags & EMBD_FRAME_PAYLOAD_CRC)) return EMBD_OK;
  EMBD_CHECKED_(EMBD_CHECK_PAYLOAD_CRC);
  const size_t at = HDR + in->payload_size;
  const uint32_t stored = embd_rd32le(p + at), computed = embd_crc32(0, p + HDR, in->payload_size);
  if (stored != computed)
    return embd_fail(err, EMBD_ERR_FRAME_PAYLOAD_CRC, at,
                "payload CRC mismatch: stored 0x%08lx, computed 0x%08lx (bytes 16-%zu)",
                (unsigned long)stored, (unsigned long)computed, at - 1);
  return EMBD_OK;
}

embd_result embd_frame_header(const void *buf, size_t len, const embd_frame_decode_options *opt,
                              embd_frame_info *info, embd_error *err) {
  embd_frame_info in;
  embd_result r = check_header((const uint8_t *)buf, len, opt, &in, err);
  if (r != EMBD_OK) return r;
  if (info) *info = in;
  embd_no_error(err);
  return EMBD_OK;
}

#ifdef EMBD_HAVE_LIBDEFLATE
/* One libdeflate decompressor per thread, made on first use and freed when the thread
 * ends (the key's destructor; the thread that unloads or exits the library frees its own
 * in the library destructor). Per-call allocation would be thread-safe too, but costs
 * 2.6 us a frame here (bench_frame, libdeflate/zlib-alloc/sparse: a fresh decompressor
 * rebuilds the fixed Huffman tables every time), twice the decode of a sparse frame. The
 * cache is invisible: nothing in the API changes, and a thread that cannot have one
 * (no key, no memory) allocates per call or falls back to zlib. */
static pthread_once_t g_ld_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_ld_key;
static int g_ld_key_ok;

static void ld_free(void *d) { libdeflate_free_decompressor((struct libdeflate_decompressor *)d); }
static void ld_make_key(void) { g_ld_key_ok = pthread_key_create(&g_ld_key, ld_free) == 0; }

#if defined(__GNUC__) || defined(__clang__)
/* After pthread_key_delete no destructor runs: other threads' decompressors are left
 * (the library is going away), none is freed through an unloaded function pointer. A
 * call after this (another destructor, a thread still running at exit) sees g_ld_gone
 * and allocates a decompressor for itself. */
static int g_ld_gone; /* __atomic_* only */
__attribute__((destructor)) static void ld_unload(void) {
  if (!g_ld_key_ok) return;
  __atomic_store_n(&g_ld_gone, 1, __ATOMIC_RELAXED);
  ld_free(pthread_getspecific(g_ld_key));
  pthread_setspecific(g_ld_key, NULL);
  pthread_key_delete(g_ld_key);
}
#define LD_GONE() __atomic_load_n(&g_ld_gone, __ATOMIC_RELAXED)
#else
#define LD_GONE() 0
#endif

/* libdeflate: the whole stream into out in one call. Success only when the stream is
 * valid, its Adler-32 matches, it makes exactly `want` bytes and ends exactly at clen:
 * then the frame is done. Anything else (or no decompressor) returns 0 and zlib decodes
 * the frame again from the start, so a bad stream gets zlib's error, offset and message
 * as before (libdeflate reports no position). */
static int inflate_libdeflate(const uint8_t *zin, size_t clen, uint8_t *out, size_t want) {
  pthread_once(&g_ld_once, ld_make_key);
  const int keyed = g_ld_key_ok && !LD_GONE();
  struct libdeflate_decompressor *d =
      keyed ? (struct libdeflate_decompressor *)pthread_getspecific(g_ld_key) : NULL;
  int cached = d != NULL;
  if (!d) {
    d = libdeflate_alloc_decompressor();
    if (!d) return 0;
    cached = keyed && pthread_setspecific(g_ld_key, d) == 0;
  }
  size_t used = 0;
  /* actual_out NULL: exactly `want` bytes or an error; actual_in: where the stream ends */
  const enum libdeflate_result lr =
      libdeflate_zlib_decompress_ex(d, zin, clen, out, want, &used, NULL);
  if (!cached) libdeflate_free_decompressor(d);
  return lr == LIBDEFLATE_SUCCESS && used == clen;
}
#endif

/* Inflates the compressed payload of a validated frame into out (exactly the values'
 * in->value_bytes bytes). */
static embd_result inflate_payload(const uint8_t *p, const embd_frame_info *in, uint8_t *out,
                                   embd_error *err) {
  const size_t clen = in->payload_size - 4;
  const size_t want = in->value_bytes;
  const uint8_t *zin = p + HDR + 4;
#ifdef EMBD_HAVE_LIBDEFLATE
  if (!embd_inflate_zlib_only_ && inflate_libdeflate(zin, clen, out, want)) return EMBD_OK;
  /* zlib below from the start: out may hold libdeflate's partial output, overwritten */
#endif
  z_stream z;
  memset(&z, 0, sizeof z);
  z.next_in = (Bytef *)(uintptr_t)zin; /* zlib's API is not const; it only reads */
  z.avail_in = (uInt)clen;             /* clen <= UINT32_MAX <= UINT_MAX here */
  int zr = inflateInit(&z);
  if (zr != Z_OK)
    return embd_fail(err, zr == Z_MEM_ERROR ? EMBD_ERR_OUT_OF_MEMORY : EMBD_ERR_FRAME_INFLATE,
                     HDR + 4, "inflateInit failed: %d (%s)", zr,
                z.msg ? z.msg : "no memory?");
  size_t got = 0;
  uint8_t spare;
  embd_result r = EMBD_OK;
  for (;;) {
    const size_t room = want - got;
    /* With the output full, offer one spare byte: a stream that fills it wants more. */
    z.next_out = room ? out + got : &spare;
    z.avail_out = room ? (room > UINT_MAX ? UINT_MAX : (uInt)room) : 1;
    const uInt before = z.avail_out, in_before = z.avail_in;
    zr = inflate(&z, Z_NO_FLUSH);
    const size_t made = before - z.avail_out;
    if (!room && made) {
      r = embd_fail(err, EMBD_ERR_FRAME_INFLATE, HDR + 4 + (clen - z.avail_in),
               "zlib stream inflates to more than the %zu bytes of %lu dims of %s", want,
               (unsigned long)in->dims, embd_dtype_name((embd_dtype)in->dtype));
      break;
    }
    got += room ? made : 0;
    if (zr == Z_STREAM_END) {
      if (got != want) {
        r = embd_fail(err, EMBD_ERR_FRAME_INFLATE, HDR + 4 + (clen - z.avail_in),
                 "zlib stream inflates to %zu bytes, dims %lu of %s need %zu", got,
                 (unsigned long)in->dims, embd_dtype_name((embd_dtype)in->dtype), want);
      } else if (z.avail_in) {
        r = embd_fail(err, EMBD_ERR_FRAME_COMPRESSED_LENGTH, HDR + 4 + (clen - z.avail_in),
                 "zlib stream ends after %zu of its %zu compressed bytes (%lu trailing)",
                 clen - z.avail_in, clen, (unsigned long)z.avail_in);
      }
      break;
    }
    if (zr == Z_NEED_DICT || zr == Z_DATA_ERROR || zr == Z_MEM_ERROR || zr == Z_STREAM_ERROR) {
      r = embd_fail(err, zr == Z_MEM_ERROR ? EMBD_ERR_OUT_OF_MEMORY : EMBD_ERR_FRAME_INFLATE, HDR + 4 + (clen - z.avail_in),
               "zlib inflate error %d at compressed byte %zu: %s", zr, clen - z.avail_in,
               zr == Z_NEED_DICT ? "needs a preset dictionary" : (z.msg ? z.msg : "?"));
      break;
    }
    if (made == 0 && z.avail_in == in_before && z.avail_in) {
      r = embd_fail(err, EMBD_ERR_FRAME_INFLATE, HDR + 4 + (clen - z.avail_in),
               "zlib inflate made no progress (%d) at compressed byte %zu", zr, clen - z.avail_in);
      break;
    }
    if (z.avail_in == 0 && made == 0) {
      /* All input consumed, no progress: the stream is cut short. */
      r = embd_fail(err, EMBD_ERR_FRAME_COMPRESSED_LENGTH, HDR + 4 + clen,
               "zlib stream not finished at the end of its %zu compressed bytes "
               "(%zu of %zu bytes inflated)",
               clen, got, want);
      break;
    }
  }
  inflateEnd(&z);
  return r;
}

/* The output's checks, then the payload CRC when check_crc (the order the errors always
 * had). cap is in the output's unit: floats (raw 0) or bytes (raw 1). */
static embd_result out_check(const uint8_t *p, const embd_frame_info *in, const void *out,
                             size_t cap, int raw, int check_crc, embd_error *err) {
  const size_t need = raw ? in->value_bytes : in->dims;
  if (!out && need)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL output for %lu dims",
                     (unsigned long)in->dims);
  if (cap < need)
    return raw ? embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 8,
                           "output holds %zu bytes, frame has %zu (%lu dims of %s)", cap, need,
                           (unsigned long)in->dims, embd_dtype_name((embd_dtype)in->dtype))
               : embd_fail(err, EMBD_ERR_OUTPUT_TOO_SMALL, 8,
                           "output holds %zu floats, frame has %lu dims", cap,
                           (unsigned long)in->dims);
  return check_crc ? check_payload_crc(p, in, err) : EMBD_OK;
}

/* Elements of a frame's dtype at src (LE) -> floats, in CHUNK steps through a stack copy:
 * src may lie in the tail of out itself (an inflated non-f32 payload, below). That is
 * safe because element i's float ends at byte 4(i+1) and its source starts at
 * T + (i+1)*size with T = dims*(4 - size): the floats never overtake bytes still to be
 * read, and each step's bytes are copied out before its floats are written; the kernel
 * itself never sees overlapping memory (embd_to_f32's rule). */
static void widen_in_place(float *out, const uint8_t *from, size_t dims, embd_dtype dt) {
  uint8_t tmp[CHUNK * 2];
  for (size_t i = 0; i < dims; i += CHUNK) {
    const size_t n = dims - i < CHUNK ? dims - i : CHUNK;
    const size_t b = (size_t)embd_value_bytes_(dt, n);
    memcpy(tmp, from + embd_value_bytes_(dt, i), b);
    embd_to_f32(out + i, tmp, n, dt, EMBD_ORDER_LE);
  }
}

/* The values of a frame whose header and lengths are checked (in), as floats. */
static embd_result decode_(const uint8_t *p, const embd_frame_info *in, float *out,
                           size_t out_cap, int check_crc, embd_error *err) {
  embd_result r = out_check(p, in, out, out_cap, 0, check_crc, err);
  if (r != EMBD_OK) return r;
  const embd_dtype dt = (embd_dtype)in->dtype;
  if (in->flags & EMBD_FRAME_ZLIB) {
    /* Inflate into the output itself: f32 fills it, a narrower dtype its tail, widened
     * from there (no allocation, as for float32). */
    uint8_t *o = (uint8_t *)out, *tail = o + (size_t)in->dims * 4 - in->value_bytes;
    r = inflate_payload(p, in, tail, err);
    if (r != EMBD_OK) return r;
    if (dt == EMBD_DTYPE_F32)
      embd_f32_from_le(out, out, in->dims);
    else
      widen_in_place(out, tail, in->dims, dt);
  } else if (dt == EMBD_DTYPE_F32) {
    embd_f32_from_le(out, p + HDR, in->dims);
  } else {
    embd_to_f32(out, p + HDR, in->dims, dt, EMBD_ORDER_LE);
  }
  embd_no_error(err);
  return EMBD_OK;
}

/* The values of a checked frame in its own dtype, multi-byte elements in order `want`. */
static embd_result decode_raw_(const uint8_t *p, const embd_frame_info *in, void *out,
                               size_t cap, embd_byte_order want, int check_crc,
                               embd_error *err) {
  if (want != EMBD_ORDER_LE && want != EMBD_ORDER_BE)
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "byte order %d is not LE or BE", (int)want);
  embd_result r = out_check(p, in, out, cap, 1, check_crc, err);
  if (r != EMBD_OK) return r;
  const unsigned size = embd_dtype_bits((embd_dtype)in->dtype) / 8;
  const int swap = want != EMBD_ORDER_LE;
  if (in->flags & EMBD_FRAME_ZLIB) {
    r = inflate_payload(p, in, (uint8_t *)out, err);
    if (r != EMBD_OK) return r;
    embd_copy_elems_(out, out, in->value_bytes, size, swap);
  } else {
    embd_copy_elems_(out, p + HDR, in->value_bytes, size, swap);
  }
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_frame_decode(const void *buf, size_t len, const embd_frame_decode_options *opt,
                              float *out, size_t out_cap, embd_frame_info *info, embd_error *err) {
  const uint8_t *p = (const uint8_t *)buf;
  embd_frame_info in;
  embd_result r = check_header(p, len, opt, &in, err);
  if (r != EMBD_OK) return r;
  if (out_cap < in.dims && info) *info = in; /* output too small: info->dims is what it needs */
  r = decode_(p, &in, out, out_cap, 1, err);
  if (r == EMBD_OK && info) *info = in;
  return r;
}

embd_result embd_frame_decode_raw(const void *buf, size_t len, const embd_frame_decode_options *opt,
                                  void *out, size_t out_cap_bytes, embd_byte_order want,
                                  embd_frame_info *info, embd_error *err) {
  const uint8_t *p = (const uint8_t *)buf;
  embd_frame_info in;
  embd_result r = check_header(p, len, opt, &in, err);
  if (r != EMBD_OK) return r;
  if (out_cap_bytes < in.value_bytes && info) *info = in; /* the size it needs */
  r = decode_raw_(p, &in, out, out_cap_bytes, want, 1, err);
  if (r == EMBD_OK && info) *info = in;
  return r;
}

/* Both views: the whole frame validated, then whether its elements can be handed out as
 * they lie (f32_only: embd_frame_view's float32 rule). */
static embd_result view_(const uint8_t *p, size_t len, const embd_frame_decode_options *opt,
                         const void **data, int f32_only, embd_frame_info *info,
                         embd_error *err) {
  if (!data) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL values pointer");
  *data = NULL;
  /* Zeroed: gcc (-O2, UBSan) cannot see that check_header fills it on EMBD_OK and warns
   * (-Wmaybe-uninitialized) about in.flags below. */
  embd_frame_info in = {0};
  embd_result r = check_header(p, len, opt, &in, err);
  if (r != EMBD_OK) return r;
  r = check_payload_crc(p, &in, err);
  if (r != EMBD_OK) return r;
  if (info) *info = in;
  const embd_dtype dt = (embd_dtype)in.dtype;
  const size_t size = embd_dtype_bits(dt) / 8; /* 0 for packed bits: bytes, no order */
  if (f32_only && dt != EMBD_DTYPE_F32)
    return embd_fail(err, EMBD_ERR_FRAME_VIEW_UNAVAILABLE, 6,
                     "no float32 view: the frame carries %s (embd_frame_view_raw, or decode)",
                     embd_dtype_name(dt));
  if (in.flags & EMBD_FRAME_ZLIB)
    return embd_fail(err, EMBD_ERR_FRAME_VIEW_UNAVAILABLE, HDR,
                "no zero-copy view: the payload is zlib-compressed");
  if (size > 1 && !embd_host_le_())
    return embd_fail(err, EMBD_ERR_FRAME_VIEW_UNAVAILABLE, HDR,
                "no zero-copy view: the host is big-endian, the payload little-endian");
  if (size > 1 && (uintptr_t)(p + HDR) % size != 0)
    return embd_fail(err, EMBD_ERR_FRAME_VIEW_UNAVAILABLE, HDR,
                "no zero-copy view: the payload at %p is not %zu-byte aligned", (const void *)(p + HDR),
                size);
  *data = p + HDR;
  embd_no_error(err);
  return EMBD_OK;
}

embd_result embd_frame_view(const void *buf, size_t len, const embd_frame_decode_options *opt,
                            const float **values, embd_frame_info *info, embd_error *err) {
  if (!values) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL values pointer");
  const void *d = NULL;
  /* float's alignment is 4 on every supported host: the 4-byte check above is it */
  const embd_result r = view_((const uint8_t *)buf, len, opt, &d, 1, info, err);
  *values = (const float *)d;
  return r;
}

embd_result embd_frame_view_raw(const void *buf, size_t len, const embd_frame_decode_options *opt,
                                const void **data, embd_frame_info *info, embd_error *err) {
  return view_((const uint8_t *)buf, len, opt, data, 0, info, err);
}

embd_result embd_frame_check_(const uint8_t *p, size_t len, const embd_frame_decode_options *opt,
                              embd_frame_info *info, embd_error *err) {
  embd_result r = check_header(p, len, opt, info, err);
  if (r == EMBD_OK) r = check_payload_crc(p, info, err);
  return r;
}

embd_result embd_frame_payload_check_(const uint8_t *p, const embd_frame_info *info,
                                      embd_error *err) {
  return check_payload_crc(p, info, err);
}

embd_result embd_frame_decode_checked_(const uint8_t *p, const embd_frame_info *info, float *out,
                                       size_t out_cap, embd_error *err) {
  return decode_(p, info, out, out_cap, 0, err);
}

embd_result embd_frame_decode_raw_checked_(const uint8_t *p, const embd_frame_info *info, void *out,
                                           size_t out_cap, embd_byte_order want, embd_error *err) {
  return decode_raw_(p, info, out, out_cap, want, 0, err);
}
