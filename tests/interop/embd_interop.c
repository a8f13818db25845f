/* embd <-> seed TypeScript codec interop, the C side (tests/interop/run_interop.cmake).
 *
 *   embd_interop <dir>
 *
 * For every "<name> <kind>" line of <dir>/manifest.txt (written by seed_codec.mjs gen):
 *  - <name>.seed.frame (the seed encoder's frame) must decode in embd (embd_frame_decode
 *    and embd_frame_view) to exactly the float32 bits in <name>.f32 (little-endian);
 *  - embd encodes the same input (kind f32: the floats of <name>.f32 with
 *    embd_frame_encode_f32; kind f64: the doubles of <name>.f64 with embd_frame_encode_f64)
 *    with flags 0, writes it to <name>.embd.frame for seed_codec.mjs check, and the bytes
 *    must equal the seed encoder's frame.
 * Then the dtype frames: for every dtype but f32 and every flags value 0-3, embd writes a
 * version-2 frame (v2_<dtype>_<flags>.embd.frame) and a batch of a version-1 frame then
 * that one (v2_<dtype>_<flags>.embd.batch), listed in <dir>/v2manifest.txt; seed_codec.mjs
 * check must refuse every one of them ("Unsupported codec version: 2": the seed never
 * misreads a dtype frame as float32) and read the batch's version-1 frame first.
 * Exit status 0 when all match, 1 otherwise, 2 on I/O trouble.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/batch.h"
#include "embd/frame.h"

static int failures;

#define FAIL(...)                \
  do {                           \
    printf("FAIL ");             \
    printf(__VA_ARGS__);         \
    printf("\n");                \
    failures++;                  \
  } while (0)

static unsigned char *read_file(const char *dir, const char *name, const char *ext, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "embd_interop: cannot open %s\n", path);
    exit(2);
  }
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  for (;;) {
    if (!b) exit(2);
    n += fread(b + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    b = realloc(b, cap);
  }
  fclose(f);
  *len = n;
  return b;
}

static void write_file(const char *dir, const char *name, const char *ext, const void *p,
                       size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "embd_interop: cannot write %s\n", path);
    exit(2);
  }
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* out[0..n) against the expected LE bits; reports the first difference. */
static void compare_bits(const char *name, const char *what, const float *out, size_t n,
                         const unsigned char *expect) {
  for (size_t i = 0; i < n; i++) {
    const uint32_t got = bits_of(out[i]), want = le32(expect + 4 * i);
    if (got != want) {
      FAIL("%s: %s: value %zu is 0x%08lx, expected 0x%08lx", name, what, i, (unsigned long)got,
           (unsigned long)want);
      return;
    }
  }
}

static void one(const char *dir, const char *name, const char *kind) {
  size_t elen, slen;
  unsigned char *expect = read_file(dir, name, ".f32", &elen);
  unsigned char *seed = read_file(dir, name, ".seed.frame", &slen);
  const size_t dims = elen / 4;
  embd_frame_info info;
  embd_error err;

  /* 1. the seed's frame in embd's decoder */
  float *out = malloc((dims ? dims : 1) * sizeof *out);
  if (!out) exit(2);
  embd_result r = embd_frame_decode(seed, slen, NULL, out, dims, &info, &err);
  if (r != EMBD_OK) {
    FAIL("%s: embd_frame_decode of the seed frame: %s (offset %zu)", name, err.message, err.offset);
  } else {
    if (info.dims != dims || info.flags != 0 || info.version != 1 || info.frame_size != slen)
      FAIL("%s: info dims %lu flags %u version %u frame_size %zu; expected %zu dims, %zu bytes",
           name, (unsigned long)info.dims, info.flags, info.version, info.frame_size, dims, slen);
    else
      compare_bits(name, "embd_frame_decode(seed frame)", out, dims, expect);
  }
  /* the zero-copy view, from a 4-byte aligned copy (malloc'd, + 16 stays aligned) */
  const float *view = NULL;
  r = embd_frame_view(seed, slen, NULL, &view, &info, &err);
  if (r == EMBD_OK)
    compare_bits(name, "embd_frame_view(seed frame)", view, dims, expect);
  else if (r != EMBD_ERR_FRAME_VIEW_UNAVAILABLE)
    FAIL("%s: embd_frame_view of the seed frame: %s", name, err.message);

  /* 2. embd's frame for the same input: byte-identical to the seed's */
  size_t cap, n = 0;
  if (embd_frame_size(dims, 0, &cap) != EMBD_OK) exit(2);
  unsigned char *mine = malloc(cap);
  if (!mine) exit(2);
  if (strcmp(kind, "f64") == 0) {
    size_t dlen;
    unsigned char *d = read_file(dir, name, ".f64", &dlen);
    if (dlen != dims * 8) {
      FAIL("%s: %zu bytes of doubles for %zu dims", name, dlen, dims);
      free(d);
      free(mine);
      free(out);
      free(seed);
      free(expect);
      return;
    }
    double *v = malloc((dims ? dims : 1) * sizeof *v);
    if (!v) exit(2);
    for (size_t i = 0; i < dims; i++) {
      uint64_t u = (uint64_t)le32(d + 8 * i) | (uint64_t)le32(d + 8 * i + 4) << 32;
      memcpy(&v[i], &u, 8);
    }
    r = embd_frame_encode_f64(v, dims, NULL, mine, cap, &n);
    free(v);
    free(d);
  } else {
    for (size_t i = 0; i < dims; i++) out[i] = float_of(le32(expect + 4 * i));
    r = embd_frame_encode_f32(out, dims, NULL, mine, cap, &n);
  }
  if (r != EMBD_OK) {
    FAIL("%s: embd encode: %s", name, embd_strerror(r));
  } else {
    write_file(dir, name, ".embd.frame", mine, n);
    if (n != slen) {
      FAIL("%s: embd frame is %zu bytes, the seed's %zu", name, n, slen);
    } else {
      for (size_t i = 0; i < n; i++) {
        if (mine[i] != seed[i]) {
          FAIL("%s: embd and seed frames differ at byte %zu: 0x%02x vs 0x%02x", name, i, mine[i],
               seed[i]);
          break;
        }
      }
    }
  }
  free(mine);
  free(out);
  free(seed);
  free(expect);
}

/* The version-2 frames of every dtype for the seed decoder to refuse. */
static void dtype_frames(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/v2manifest.txt", dir);
  FILE *m = fopen(path, "w");
  if (!m) exit(2);
  /* integers in int8/uint8 range, so every dtype takes them; 16 dims (packed bits) */
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = (float)((i * 5) % 11); /* 0..10 */
  for (int dt = 1; dt < EMBD_DTYPE_COUNT_; dt++) {
    for (unsigned flags = 0; flags < 4; flags++) {
      embd_frame_encode_options o = {0};
      o.flags = flags;
      o.dtype = (uint64_t)dt;
      unsigned char frame[256], batch[512];
      size_t n = 0, bn = 0;
      embd_result r = embd_frame_encode_f32(v, 16, &o, frame, sizeof frame, &n);
      if (r != EMBD_OK) {
        FAIL("v2 %s flags %u: encode: %s", embd_dtype_name((embd_dtype)dt), flags, embd_strerror(r));
        continue;
      }
      if (frame[4] != 2 || frame[6] != dt) FAIL("v2 %s: header bytes 4, 6 are %u %u", embd_dtype_name((embd_dtype)dt), frame[4], frame[6]);
      /* embd reads its own frame back (the seed cannot) */
      float back[16];
      embd_frame_info info;
      embd_error err;
      if (embd_frame_decode(frame, n, NULL, back, 16, &info, &err) != EMBD_OK || info.dtype != dt)
        FAIL("v2 %s flags %u: embd decode: %s", embd_dtype_name((embd_dtype)dt), flags, err.message);
      /* a batch: a float32 (version 1) frame, then the dtype frame (the encoder's
       * options change between appends: frames of their own dtype and flags) */
      embd_batch_encoder e;
      r = embd_batch_begin(&e, 2, NULL, batch, sizeof batch);
      if (r == EMBD_OK) r = embd_batch_append_f32(&e, v, 16);
      e.opt = o;
      if (r == EMBD_OK) r = embd_batch_append_f32(&e, v, 16);
      if (r == EMBD_OK) r = embd_batch_finish(&e, &bn);
      if (r != EMBD_OK) {
        FAIL("v2 %s flags %u: batch: %s", embd_dtype_name((embd_dtype)dt), flags, embd_strerror(r));
        continue;
      }
      if (bn != 4 + 16 + 64 + n || memcmp(batch + 4 + 16 + 64, frame, n) != 0)
        FAIL("v2 %s flags %u: the batch's second frame is not the frame", embd_dtype_name((embd_dtype)dt), flags);
      char name[64];
      snprintf(name, sizeof name, "v2_%s_%u", embd_dtype_name((embd_dtype)dt), flags);
      write_file(dir, name, ".embd.frame", frame, n);
      write_file(dir, name, ".embd.batch", batch, bn);
      fprintf(m, "%s %s\n", name, embd_dtype_name((embd_dtype)dt));
    }
  }
  fclose(m);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: embd_interop <dir>\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.txt", argv[1]);
  FILE *m = fopen(path, "r");
  if (!m) {
    fprintf(stderr, "embd_interop: cannot open %s\n", path);
    return 2;
  }
  char name[256], kind[16];
  int cases = 0;
  while (fscanf(m, "%255s %15s", name, kind) == 2) {
    one(argv[1], name, kind);
    cases++;
  }
  fclose(m);
  dtype_frames(argv[1]);
  if (cases == 0) {
    fprintf(stderr, "embd_interop: no cases in %s\n", path);
    return 2;
  }
  if (failures) {
    printf("embd_interop: %d failure(s) in %d cases\n", failures, cases);
    return 1;
  }
  printf("embd_interop: %d seed frames decode in embd bit for bit; embd's frames are "
         "byte-identical to the seed's\n",
         cases);
  return 0;
}
