/* embd bench: what each wire format costs on this machine, and how fast every kernel
 * implementation the CPU runs is, beside memcpy. Built-in, seeded data only: the same
 * numbers come out on every run of the same build on the same machine (up to noise).
 *
 * Timing: each case runs back to back for at least `min_ms`, in `rounds` rounds; the
 * median round counts (the fastest one rewards a lucky round, and a swing between runs
 * hides in it). One thread, no pinning: for stable numbers run it as
 * `taskset -c 1 embd bench`.
 *
 * Placement: every buffer a timed call reads or writes comes from place(): page-aligned
 * plus a phase, sources at phase 0 and destinations at phase 2048, so that
 * (dst - src) mod 4096 = 2048 for every pair, on every run whatever the heap did before.
 * That keeps memcpy (the denominator of every "vs memcpy" ratio) off glibc's rep-movsb
 * cliff on AMD CPUs (0 < (dst - src) mod 4096 < 32: about 15x slower, glibc bug 30994)
 * and off 4 KiB aliasing; malloc placed two 64 KiB buffers 16 bytes apart modulo 4096 in
 * one run and elsewhere in the next (1.9 vs 32 GB/s on one machine). */
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "embd/convert.h"
#include "embd.h"

/* ---- timing ---------------------------------------------------------------------------- */

typedef struct bench_cfg {
  double min_ns; /* per round */
  int rounds;
} bench_cfg;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ---- placement ------------------------------------------------------------------------- */

enum { PLACE_SRC = 0, PLACE_DST = 2048 };

/* n bytes at a page boundary + phase; the allocation's start is kept in the page before
 * (freed by unplace). NULL when out of memory. */
static void *place(size_t n, size_t phase) {
  if (n > SIZE_MAX - 3 * 4096) return NULL;
  const size_t total = (n + phase + 2 * 4096 + 4095) & ~(size_t)4095;
  uint8_t *base = aligned_alloc(4096, total);
  if (!base) return NULL;
  uint8_t *p = base + 4096 + phase;
  memcpy(p - sizeof base, &base, sizeof base);
  return p;
}

static void unplace(void *p) {
  if (!p) return;
  void *base;
  memcpy(&base, (uint8_t *)p - sizeof base, sizeof base);
  free(base);
}

/* Median nanoseconds per call of fn(ctx) over the rounds. fn returns non-zero on failure
 * (then -1). */
static double time_it(const bench_cfg *c, int (*fn)(void *), void *ctx) {
  double per_round[64];
  const int rounds = c->rounds < 64 ? c->rounds : 64;
  if (fn(ctx)) return -1; /* warm-up, and the check that it works */
  for (int r = 0; r < rounds; r++) {
    long n = 0;
    const double t0 = now_ns();
    double t;
    do {
      if (fn(ctx)) return -1;
      n++;
      t = now_ns() - t0;
    } while (t < c->min_ns);
    per_round[r] = t / (double)n;
  }
  qsort(per_round, (size_t)rounds, sizeof *per_round, cmp_double);
  return rounds % 2 ? per_round[rounds / 2] : (per_round[rounds / 2 - 1] + per_round[rounds / 2]) / 2;
}

/* ---- data ------------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Embedding-like values: roughly normal, scale 0.03 (unit-norm 1536-dim vectors). */
static void fill_vectors(float *v, size_t n, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    double a = 0;
    for (int k = 0; k < 4; k++) a += (double)(rng_next(&s) >> 11) * 0x1.0p-53 - 0.5;
    v[i] = (float)(a * 0.05);
  }
}

/* The CPU's name (and x86 family/model) from /proc/cpuinfo, "unknown" elsewhere: every
 * benchmark says which machine made it. */
static void cpu_model(char *out, size_t cap) {
  char name[128] = "unknown", family[16] = "", model[16] = "", line[256];
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f) && line[0] != '\n') { /* the first processor */
    char *c = strchr(line, ':');
    if (!c) continue;
    c += c[1] == ' ' ? 2 : 1;
    c[strcspn(c, "\n")] = 0;
    if (!strncmp(line, "model name", 10)) snprintf(name, sizeof name, "%s", c);
    else if (!strncmp(line, "cpu family", 10)) snprintf(family, sizeof family, "%s", c);
    else if (!strncmp(line, "model\t", 6)) snprintf(model, sizeof model, "%s", c);
  }
  if (f) fclose(f);
  if (family[0]) snprintf(out, cap, "%s (family %s model %s)", name, family, model);
  else snprintf(out, cap, "%s", name);
}

/* The features the library may use, by name. */
static void cpu_features(char *out, size_t cap) {
  const uint64_t en = embd_cpu_features_enabled();
  size_t n = 0;
  out[0] = 0;
  for (int b = 0; b < 63; b++) {
    const char *nm = embd_cpu_feature_name(UINT64_C(1) << b);
    if (nm && (en & (UINT64_C(1) << b)) && n + strlen(nm) + 2 < cap)
      n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? " " : "", nm);
  }
  if (!n) snprintf(out, cap, "none");
}

typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

static int buf_put(buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 4096;
    while (c < b->len + n + 1) c *= 2;
    char *q = realloc(b->p, c);
    if (!q) return -1;
    b->p = q, b->cap = c;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
  return 0;
}

static int buf_str(buf *b, const char *s) { return buf_put(b, s, strlen(s)); }

/* x as the shortest "%.*g" text that reads back as x (6 to 9 significant digits: 9
 * always round-trips a float32), as servers print float32 values ("0.0105335",
 * "-5.1e-05"); returns its length. */
static int shortest_g(char *out, size_t cap, const char *sep, float x) {
  int n = 0;
  for (int prec = 6; prec <= 9; prec++) {
    n = snprintf(out, cap, "%s%.*g", sep, prec, (double)x);
    if (strtof(out + strlen(sep), NULL) == x) break;
  }
  return n;
}

/* An OpenAI /v1/embeddings response for count x dims floats: numbers as JSON (shortest
 * round-trip text, shortest_g), or base64 of the vectors in `dtype`
 * (little-endian; vLLM's embed_dtype), each converted by embd_from_f32. */
static int make_response(buf *b, const float *v, size_t count, size_t dims, int base64,
                         embd_dtype dtype) {
  b->len = 0;
  if (buf_str(b, "{\"object\":\"list\",\"data\":[")) return -1;
  char num[48];
  char *b64 = NULL;
  uint8_t *raw = NULL;
  size_t b64cap = 0, row = 0;
  if (base64 && (embd_dtype_bytes(dtype, dims, &row) != EMBD_OK ||
                 embd_base64_encoded_size(row, 0, &b64cap) != EMBD_OK))
    return -1;
  if (base64 && (!(b64 = malloc(b64cap)) || !(raw = malloc(row ? row : 1)))) goto fail;
  for (size_t i = 0; i < count; i++) {
    snprintf(num, sizeof num, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":",
             i ? "," : "", i);
    if (buf_str(b, num)) goto fail;
    const float *x = v + i * dims;
    if (base64) {
      size_t w;
      if (embd_from_f32(raw, x, dims, dtype, EMBD_ORDER_LE, NULL) != EMBD_OK ||
          embd_base64_encode(raw, row, 0, b64, b64cap, &w) != EMBD_OK)
        goto fail;
      if (buf_str(b, "\"") || buf_put(b, b64, w) || buf_str(b, "\"")) goto fail;
    } else {
      if (buf_str(b, "[")) goto fail;
      for (size_t k = 0; k < dims; k++) {
        int n = shortest_g(num, sizeof num, k ? "," : "", x[k]);
        if (buf_put(b, num, (size_t)n)) goto fail;
      }
      if (buf_str(b, "]")) goto fail;
    }
    if (buf_str(b, "}")) goto fail;
  }
  if (buf_str(b, "],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":8,"
                 "\"total_tokens\":8}}"))
    goto fail;
  free(b64);
  free(raw);
  return 0;
fail:
  free(b64);
  free(raw);
  return -1;
}

/* ---- embeddings: wire formats ------------------------------------------------------------ */

typedef struct emb_ctx {
  const char *data;
  size_t len, count, dims;
  float *out;
  embd_openai_embeddings oe;
  embd_openai_options oo; /* the asked dtype */
} emb_ctx;

static int run_openai(void *p) {
  emb_ctx *c = p;
  if (embd_openai_decode(&c->oe, c->data, c->len, &c->oo, NULL) != EMBD_OK) return 1;
  return c->oe.count != c->count;
}

static int run_batch(void *p) {
  emb_ctx *c = p;
  embd_batch_iter it;
  embd_batch_frame f;
  embd_result r = embd_batch_iter_init(&it, c->data, c->len, NULL, NULL);
  size_t n = 0;
  while (r == EMBD_OK && (r = embd_batch_next(&it, &f, NULL)) == EMBD_OK) {
    r = embd_batch_frame_decode(&f, c->out + (size_t)f.index * c->dims, c->dims, NULL);
    n++;
  }
  return r != EMBD_BATCH_END || n != c->count;
}

/* The values a dtype's row encodes: the vectors themselves, or for the integer dtypes
 * (which hold integers, not a scale) the vectors quantized into q (x 1000, clamped). */
static const float *dtype_values(const float *v, float *q, size_t n, embd_dtype d) {
  if (d != EMBD_DTYPE_INT8 && d != EMBD_DTYPE_UINT8) return v;
  const float lo = d == EMBD_DTYPE_UINT8 ? 0.0f : -128.0f;
  for (size_t i = 0; i < n; i++) {
    /* round half away from zero by hand: no libm for the tool (the minimal build) */
    const float x = v[i] * 1000.0f;
    const float t = (float)(long)(x + (x < 0 ? -0.5f : 0.5f)) + (d == EMBD_DTYPE_UINT8 ? 128.0f : 0.0f);
    q[i] = t < lo ? lo : t > lo + 255.0f ? lo + 255.0f : t;
  }
  return q;
}

typedef struct wire_row {
  const char *name;
  double bytes, ns; /* per vector (or per token) */
} wire_row;

static int bench_embeddings(const bench_cfg *cfg, size_t count, size_t dims, wire_row *rows,
                            int *nrows) {
  float *v = malloc(count * dims * sizeof *v), *q = NULL;
  char *src = NULL;
  emb_ctx c;
  memset(&c, 0, sizeof c);
  c.count = count, c.dims = dims;
  c.out = place(count * dims * sizeof *c.out, PLACE_DST);
  buf b = {0};
  int rc = -1;
  if (!v || !c.out) goto done;
  fill_vectors(v, count * dims, 42);
  embd_openai_init(&c.oe);
  int n = 0;
  /* Row 0 is the JSON float arrays (the ratios' base), then each dtype as base64 (what
   * vLLM's embed_dtype sends) and as EMBD frames (dtype_values: what each encodes). */
  static const struct {
    embd_dtype dtype;
    const char *b64, *frames;
  } forms[] = {
      {EMBD_DTYPE_F32, "OpenAI JSON, base64 f32", "EMBD frames, f32"},
      {EMBD_DTYPE_F16, "OpenAI JSON, base64 f16", "EMBD frames, f16"},
      {EMBD_DTYPE_BF16, "OpenAI JSON, base64 bf16", "EMBD frames, bf16"},
      {EMBD_DTYPE_FP8_E4M3, "OpenAI JSON, base64 fp8-e4m3", "EMBD frames, fp8-e4m3"},
      {EMBD_DTYPE_FP8_E5M2, "OpenAI JSON, base64 fp8-e5m2", "EMBD frames, fp8-e5m2"},
      {EMBD_DTYPE_INT8, "OpenAI JSON, base64 int8", "EMBD frames, int8"},
      {EMBD_DTYPE_UINT8, "OpenAI JSON, base64 uint8", "EMBD frames, uint8"},
      {EMBD_DTYPE_UBINARY, "OpenAI JSON, base64 ubinary", "EMBD frames, ubinary"},
  };
  if (!(q = malloc(count * dims * sizeof *q))) goto done;
  int have_json = 1;
  for (int k = -1; k < (int)(sizeof forms / sizeof forms[0]) && have_json; k++) {
    const embd_dtype d = k < 0 ? EMBD_DTYPE_F32 : forms[k].dtype;
    const float *x = dtype_values(v, q, count * dims, d);
    if (make_response(&b, x, count, dims, k >= 0, d)) goto done;
    unplace(src);
    if (!(src = place(b.len, PLACE_SRC))) goto done;
    memcpy(src, b.p, b.len);
    c.data = src, c.len = b.len;
    memset(&c.oo, 0, sizeof c.oo);
    c.oo.dtype = d;
    if (embd_openai_decode(&c.oe, c.data, c.len, &c.oo, NULL) == EMBD_ERR_OPENAI_UNAVAILABLE) {
      have_json = 0; /* built without EMBD_WITH_OPENAI: no JSON rows */
      break;
    }
    const double ns = time_it(cfg, run_openai, &c);
    if (ns < 0) goto done;
    rows[n].name = k < 0 ? "OpenAI JSON, float arrays" : forms[k].b64;
    rows[n].bytes = (double)b.len / (double)count;
    rows[n].ns = ns / (double)count;
    n++;
  }
  for (int k = 0; k <= (int)(sizeof forms / sizeof forms[0]); k++) {
    /* k == count of forms: float32 again, zlib-compressed */
    const int z = k == (int)(sizeof forms / sizeof forms[0]);
    const embd_dtype d = z ? EMBD_DTYPE_F32 : forms[k].dtype;
    const float *x = dtype_values(v, q, count * dims, d);
    size_t cap, w;
    const unsigned flags = z ? EMBD_FRAME_ZLIB : 0;
    if (embd_batch_size_dtype(count, dims, d, flags, &cap) != EMBD_OK) goto done;
    char *f = place(cap, PLACE_SRC);
    if (!f) goto done;
    embd_frame_encode_options eo = {.flags = flags, .level = 6, .dtype = d};
    if (embd_batch_encode_f32(x, count, dims, &eo, f, cap, &w) != EMBD_OK) {
      unplace(f);
      goto done;
    }
    c.data = f, c.len = w;
    const double ns = time_it(cfg, run_batch, &c);
    unplace(f);
    if (ns < 0) goto done;
    rows[n].name = z ? "EMBD frames, f32, zlib level 6" : forms[k].frames;
    rows[n].bytes = (double)w / (double)count;
    rows[n].ns = ns / (double)count;
    n++;
  }
  *nrows = n;
  rc = 0;
done:
  embd_openai_free(&c.oe);
  free(b.p);
  free(v);
  free(q);
  unplace(src);
  unplace(c.out);
  return rc;
}

/* ---- tokens: wire formats ------------------------------------------------------------------ */

/* A token stream as each format ships it, one token per frame (per event): how streaming
 * servers emit them. Decoding feeds one frame (event) at a time, as a network would. */
typedef struct tok_ctx {
  const char *data;
  const size_t *ends; /* end of each frame */
  size_t frames;
  uint32_t *ids;
  size_t n, cap;
} tok_ctx;

static uint32_t *tok_dest(void *user, uint32_t index, size_t n) {
  tok_ctx *c = user;
  (void)index;
  if (c->n + n > c->cap) return NULL;
  uint32_t *d = c->ids + c->n;
  c->n += n;
  return d;
}

static embd_result tok_frame(void *user, const embd_codec_stream_frame *f) {
  tok_ctx *c = user;
  if (c->n + f->n_ids > c->cap) return EMBD_ERR_OUTPUT_TOO_SMALL;
  memcpy(c->ids + c->n, f->ids, f->n_ids * sizeof *f->ids);
  c->n += f->n_ids;
  return EMBD_OK;
}

static int run_session(void *p) {
  tok_ctx *c = p;
  embd_codec_reader_options o = {0};
  o.max_payload = 4096;
  o.tokens_dest = tok_dest;
  o.user = c;
  embd_codec_reader *r;
  if (embd_codec_reader_create(&o, &r) != EMBD_OK) return 1;
  c->n = 0;
  size_t at = 0;
  embd_result res = EMBD_OK;
  for (size_t i = 0; i < c->frames && res == EMBD_OK; at = c->ends[i++])
    res = embd_codec_reader_feed(r, c->data + at, c->ends[i] - at, NULL);
  if (res == EMBD_OK) res = embd_codec_reader_finish(r, NULL);
  embd_codec_reader_destroy(r);
  return res != EMBD_OK || c->n != c->cap;
}

static int run_mode(tok_ctx *c, int proto) {
  embd_codec_stream_options o = {0};
  o.max_frame_bytes = 4096;
  o.on_frame = tok_frame;
  o.user = c;
  embd_codec_msgpack_reader *m = NULL;
  embd_codec_proto_reader *pr = NULL;
  if ((proto ? embd_codec_proto_create(&o, &pr) : embd_codec_msgpack_create(&o, &m)) != EMBD_OK)
    return 1;
  c->n = 0;
  size_t at = 0;
  embd_result res = EMBD_OK;
  for (size_t i = 0; i < c->frames && res == EMBD_OK; at = c->ends[i++])
    res = proto ? embd_codec_proto_feed(pr, c->data + at, c->ends[i] - at, NULL)
                : embd_codec_msgpack_feed(m, c->data + at, c->ends[i] - at, NULL);
  if (res == EMBD_OK)
    res = proto ? embd_codec_proto_finish(pr, NULL) : embd_codec_msgpack_finish(m, NULL);
  embd_codec_proto_destroy(pr);
  embd_codec_msgpack_destroy(m);
  return res != EMBD_OK || c->n != c->cap;
}

static int run_msgpack(void *p) { return run_mode(p, 0); }
static int run_proto(void *p) { return run_mode(p, 1); }

#ifdef EMBD_CLI_HAVE_CJSON
#include <cjson/cJSON.h>
/* OpenAI chat.completion.chunk SSE events, one token each, parsed to the token's text the
 * way a C client would (cJSON). */
static int run_sse(void *p) {
  tok_ctx *c = p;
  size_t at = 0, chars = 0;
  for (size_t i = 0; i < c->frames; at = c->ends[i++]) {
    cJSON *doc = cJSON_ParseWithLength(c->data + at + 6, c->ends[i] - at - 8);
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "choices"), 0);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ch, "delta"), "content");
    if (!cJSON_IsString(t)) {
      cJSON_Delete(doc);
      return 1;
    }
    chars += strlen(t->valuestring);
    cJSON_Delete(doc);
  }
  return chars == 0;
}
#endif

static int bench_tokens(const bench_cfg *cfg, size_t count, wire_row *rows, int *nrows) {
  uint32_t *ids = malloc(count * sizeof *ids), *out = place(count * sizeof *out, PLACE_DST);
  char *src = NULL;
  size_t *ends = malloc(count * sizeof *ends);
  buf b = {0};
  int n = 0, rc = -1;
  if (!ids || !out || !ends) goto done;
  uint64_t s = 5;
  for (size_t i = 0; i < count; i++) ids[i] = (uint32_t)(rng_next(&s) % 151000);
  tok_ctx c = {0};
  c.ids = out, c.cap = count, c.frames = count, c.ends = ends;
  for (int fmt = 0; fmt < 4; fmt++) {
    b.len = 0;
    static const char *const words[] = {" the", " of", "ing", " and", " model", " token", "s",
                                        " embed", "ding", " vector", ",", "."};
    for (size_t i = 0; i < count; i++) {
      uint8_t f[64];
      size_t w = 0;
      embd_codec_stream_frame sf;
      memset(&sf, 0, sizeof sf);
      sf.ids = ids + i;
      sf.n_ids = 1;
      sf.done = i + 1 == count;
      embd_result r = EMBD_OK;
      if (fmt == 0) {
#ifndef EMBD_CLI_HAVE_CJSON
        break;
#endif
        char ev[512];
        int k = snprintf(ev, sizeof ev,
                         "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":"
                         "\"chat.completion.chunk\",\"created\":1764547200,\"model\":"
                         "\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\","
                         "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},"
                         "\"logprobs\":null,\"finish_reason\":null}]}\n\n",
                         words[ids[i] % (sizeof words / sizeof *words)]);
        if (buf_put(&b, ev, (size_t)k)) goto done;
        ends[i] = b.len;
        continue;
      }
      if (fmt == 1) r = embd_codec_encode_tokens(ids + i, 1, f, sizeof f, &w);
      if (fmt == 2) r = embd_codec_msgpack_encode(&sf, f, sizeof f, &w);
      if (fmt == 3) r = embd_codec_proto_encode(&sf, f, sizeof f, &w);
      if (r == EMBD_ERR_UNAVAILABLE) break; /* built without the stream modes: no row */
      if (r != EMBD_OK || buf_put(&b, (const char *)f, w)) goto done;
      ends[i] = b.len;
    }
    if (b.len == 0 && count) continue; /* built without cJSON / the stream modes */
    unplace(src);
    if (!(src = place(b.len + 1, PLACE_SRC))) goto done;
    memcpy(src, b.p, b.len);
    src[b.len] = 0;
    c.data = src;
    static const char *const names[] = {"JSON-SSE events (cJSON)", "Codec TOKENS frames",
                                        "msgpack stream mode", "protobuf stream mode"};
    int (*const fns[])(void *) = {
#ifdef EMBD_CLI_HAVE_CJSON
        run_sse,
#else
        NULL,
#endif
        run_session, run_msgpack, run_proto};
    const double ns = time_it(cfg, fns[fmt], &c);
    if (ns < 0) goto done;
    if (fmt && memcmp(out, ids, count * sizeof *ids) != 0) goto done;
    rows[n].name = names[fmt];
    rows[n].bytes = (double)b.len / (double)count;
    rows[n].ns = ns / (double)count;
    n++;
  }
  *nrows = n;
  rc = 0;
done:
  free(ids);
  unplace(out);
  unplace(src);
  free(ends);
  free(b.p);
  return rc;
}

/* ---- kernels ------------------------------------------------------------------------------ */

enum { KBYTES = 64 * 1024 };

typedef struct k_ctx {
  embd_kernel kernel;
  size_t index;
  const uint8_t *in;
  uint8_t *out;
  const char *text;
  size_t text_len;
  union {
    embd_crc32_fn crc;
    embd_bswap32_fn bswap;
    embd_base64_decode_fn dec;
    embd_base64_encode_fn enc;
    embd_to_f32_fn cvt;
    embd_from_f32_fn cvt_enc;
  } fn;
  const float *fin; /* the conversion rows' float32 input (encode) */
  volatile uint32_t sink;
} k_ctx;

/* The conversion rows: KBYTES of float32 (CVT_N elements) out of, or into, each dtype. */
enum { CVT_N = KBYTES / 4 };

static int run_kernel(void *p) {
  k_ctx *c = p;
  size_t w;
  switch (c->kernel) {
    case EMBD_KERNEL_CRC32: c->sink = c->fn.crc(0, c->in, KBYTES); return 0;
    case EMBD_KERNEL_BSWAP32: c->fn.bswap(c->out, c->in, KBYTES / 4); return 0;
    case EMBD_KERNEL_BASE64_DECODE:
      return c->fn.dec(c->text, c->text_len, 0, c->out, KBYTES, &w, NULL) != EMBD_OK;
    case EMBD_KERNEL_BASE64_ENCODE:
      return c->fn.enc(c->in, KBYTES, 0, (char *)c->out, 2 * KBYTES, &w) != EMBD_OK;
    case EMBD_KERNEL_CONVERT: c->fn.cvt((float *)(void *)c->out, c->in, CVT_N, 0); return 0;
    case EMBD_KERNEL_CONVERT_ENCODE: c->fn.cvt_enc(c->out, c->fin, CVT_N, 0); return 0;
    default: return 1;
  }
}

static int run_memcpy(void *p) {
  k_ctx *c = p;
  memcpy(c->out, c->in, KBYTES);
  c->sink = c->out[7];
  return 0;
}

typedef struct kernel_row {
  const char *kernel, *impl, *tier;
  double gbps;
  int emulated; /* embd_impl_emulated: measured only with --emulated */
} kernel_row;

/* Every implementation the CPU runs; the emulations (another ISA's kernel through simde,
 * there for the tests) only when `emulated` is set. */
static int bench_kernels(const bench_cfg *cfg, int emulated, kernel_row *rows, int max,
                         int *nrows) {
  k_ctx c;
  memset(&c, 0, sizeof c);
  uint8_t *in = place(KBYTES, PLACE_SRC), *out = place(2 * KBYTES, PLACE_DST);
  char *text = place(2 * KBYTES, PLACE_SRC);
  float *fin = place(KBYTES, PLACE_SRC);
  uint8_t *wire = place(KBYTES, PLACE_SRC);
  int n = 0, rc = -1;
  if (!in || !out || !text || !fin || !wire) goto done;
  uint64_t s = 7;
  for (size_t i = 0; i < KBYTES; i++) in[i] = (uint8_t)rng_next(&s);
  size_t tl;
  if (embd_base64_encode(in, KBYTES, 0, text, 2 * KBYTES, &tl) != EMBD_OK) goto done;
  c.in = in, c.out = out, c.text = text, c.text_len = tl;
  /* memcpy is the denominator of every row: one round of it before each kernel as well,
   * and the median of all of them, so that a slow stretch of the machine (on a VM,
   * seconds at a time) moves it no more than it moves the kernels it is compared with. */
  double mc[128];
  int nmc = 0;
  const bench_cfg one = {cfg->min_ns, 1};
  for (int r = 0; r < cfg->rounds && nmc < 128; r++) {
    if ((mc[nmc] = time_it(&one, run_memcpy, &c)) < 0) goto done;
    nmc++;
  }
  const int memcpy_row = n++;
  const embd_kernel ks[] = {EMBD_KERNEL_CRC32, EMBD_KERNEL_BSWAP32, EMBD_KERNEL_BASE64_DECODE,
                            EMBD_KERNEL_BASE64_ENCODE};
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
    for (size_t i = 0; i < embd_impl_count(ks[k]) && n < max; i++) {
      embd_impl_info info;
      if (embd_impl_get(ks[k], i, &info) != EMBD_OK || !info.runnable) continue;
      const int emu = embd_impl_emulated(ks[k], i);
      if (emu && !emulated) continue;
      c.kernel = ks[k], c.index = i;
      switch (ks[k]) {
        case EMBD_KERNEL_CRC32: c.fn.crc = embd_crc32_impl(i); break;
        case EMBD_KERNEL_BSWAP32: c.fn.bswap = embd_bswap32_impl(i); break;
        case EMBD_KERNEL_BASE64_DECODE: c.fn.dec = embd_base64_decode_impl(i); break;
        default: c.fn.enc = embd_base64_encode_impl(i); break;
      }
      if (!c.fn.crc) continue;
      if (nmc < 128 && (mc[nmc++] = time_it(&one, run_memcpy, &c)) < 0) goto done;
      const double t = time_it(cfg, run_kernel, &c);
      if (t < 0) goto done;
      /* Bytes of binary data per second: what the kernel checks, swaps, decodes to or
       * encodes from (64 KiB each). */
      rows[n++] = (kernel_row){embd_kernel_name(ks[k]), info.name, embd_tier_name(info.tier),
                               KBYTES / t, emu};
    }
  }
  qsort(mc, (size_t)nmc, sizeof *mc, cmp_double);
  /* Conversions, per dtype: embedding-like values (the floating types encoded from them,
   * so that the scalar kernels see the value mix of real data), random bytes for int8
   * and the packed bits. GB/s of float32 (64 KiB out of to-f32, into f32-to), directly
   * comparable with the memcpy row. */
  fill_vectors(fin, CVT_N, 11);
  static const struct {
    const char *row;
    embd_kernel kernel;
    embd_dtype dtype;
  } cv[] = {{"f16->f32", EMBD_KERNEL_CONVERT, EMBD_DTYPE_F16},
            {"bf16->f32", EMBD_KERNEL_CONVERT, EMBD_DTYPE_BF16},
            {"fp8-e4m3->f32", EMBD_KERNEL_CONVERT, EMBD_DTYPE_FP8_E4M3},
            {"int8->f32", EMBD_KERNEL_CONVERT, EMBD_DTYPE_INT8},
            {"ubinary->f32", EMBD_KERNEL_CONVERT, EMBD_DTYPE_UBINARY},
            {"f32->f16", EMBD_KERNEL_CONVERT_ENCODE, EMBD_DTYPE_F16},
            {"f32->bf16", EMBD_KERNEL_CONVERT_ENCODE, EMBD_DTYPE_BF16}};
  for (size_t k = 0; k < sizeof cv / sizeof cv[0]; k++) {
    const embd_dtype d = cv[k].dtype;
    if (d == EMBD_DTYPE_INT8 || d == EMBD_DTYPE_UBINARY)
      memcpy(wire, in, KBYTES / 4);
    else if (embd_from_f32(wire, fin, CVT_N, d, EMBD_ORDER_LE, NULL) != EMBD_OK)
      goto done;
    c.in = wire, c.fin = fin, c.kernel = cv[k].kernel;
    for (size_t i = 0; i < embd_impl_count(cv[k].kernel) && n < max; i++) {
      embd_impl_info info;
      if (embd_impl_get(cv[k].kernel, i, &info) != EMBD_OK || !info.runnable) continue;
      const int emu = embd_impl_emulated(cv[k].kernel, i);
      if (emu && !emulated) continue;
      c.index = i;
      if (cv[k].kernel == EMBD_KERNEL_CONVERT) {
        if (!(c.fn.cvt = embd_to_f32_impl(i, d))) continue;
      } else if (!(c.fn.cvt_enc = embd_from_f32_impl(i, d))) {
        continue;
      }
      if (nmc < 128 && (mc[nmc++] = time_it(&one, run_memcpy, &c)) < 0) goto done;
      const double t = time_it(cfg, run_kernel, &c);
      if (t < 0) goto done;
      rows[n++] = (kernel_row){cv[k].row, info.name, embd_tier_name(info.tier), KBYTES / t, emu};
    }
  }
  c.in = in;
  qsort(mc, (size_t)nmc, sizeof *mc, cmp_double);
  rows[memcpy_row] = (kernel_row){"memcpy", "libc", "-",
                                  KBYTES / (nmc % 2 ? mc[nmc / 2] : (mc[nmc / 2 - 1] + mc[nmc / 2]) / 2),
                                  0};
  *nrows = n;
  rc = 0;
done:
  unplace(in);
  unplace(out);
  unplace(text);
  unplace(fin);
  unplace(wire);
  return rc;
}

/* ---- output ------------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* Through cli_out: a new file replaces FILE only when the whole chart is written. Returns
 * an exit code (the error printed). */
static int write_svg(const char *path, const kernel_row *k, int nk) {
  cli_out o;
  const int rc = cli_out_open(&o, path, 0);
  if (rc) return rc;
  FILE *f = o.f;
  double max = 0;
  for (int i = 0; i < nk; i++) max = k[i].gbps > max ? k[i].gbps : max;
  const int bar = 18, gap = 6, left = 260, width = 520, top = 40;
  const int h = top + nk * (bar + gap) + 30;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "font-family=\"sans-serif\" font-size=\"12\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
          "<text x=\"10\" y=\"22\" font-size=\"15\">embd %s: kernel throughput, GB/s "
          "(64 KiB, one core)</text>\n",
          left + width + 90, h, embd_version());
  for (int i = 0; i < nk; i++) {
    const int y = top + i * (bar + gap);
    const double w = max > 0 ? k[i].gbps / max * width : 0;
    const char *color = !strcmp(k[i].tier, "avx512") ? "#5b3cc4"
                        : !strcmp(k[i].tier, "avx2") ? "#2a7fd4"
                        : !strcmp(k[i].tier, "sse42") ? "#32a88c"
                        : !strcmp(k[i].tier, "neon") ? "#d4882a"
                        : !strcmp(k[i].tier, "-")    ? "#888888"
                                                     : "#c44b3c";
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s / %s%s</text>\n"
            "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n"
            "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n",
            left - 8, y + 13, k[i].kernel, k[i].impl, k[i].emulated ? " (emulated)" : "", left,
            y, w, bar, color,
            left + w + 6, y + 13, k[i].gbps);
  }
  fprintf(f, "</svg>\n");
  return cli_out_close(&o, 1);
}

static void usage(FILE *f) {
  fputs(
      "Usage: embd bench [--json] [--svg FILE] [--quick] [--emulated]\n"
      "\n"
      "Measures, on built-in seeded data, what each wire format costs per 1536-dim\n"
      "embedding and per streamed token (bytes, decode time), and the throughput of every\n"
      "CRC-32, byte-swap, base64 and dtype conversion implementation the library can pick\n"
      "on this CPU, beside memcpy (conversions: GB/s of the float32 side, 64 KiB of it).\n"
      "\n"
      "  --json       print the results as one JSON object (for machines)\n"
      "  --svg FILE   also draw the kernel throughput per implementation as an SVG chart\n"
      "  --quick      short runs (for tests; numbers are rougher)\n"
      "  --emulated   also measure the emulations compiled in for the tests (another ISA's\n"
      "               kernel built through simde, e.g. avx512-simde: never picked), marked\n"
      "               emulated (JSON: \"emulated\": true)\n"
      "  -h, --help   this text\n"
      "\n"
      "Respects EMBD_ISA (e.g. EMBD_ISA=avx2 hides the avx512 implementations).\n"
      "For stable numbers: taskset -c 1 embd bench\n"
      "\n"
      "Example:\n"
      "  embd bench --svg kernels.svg\n",
      f);
}

int embd_cli_bench(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                       {"svg", required_argument, 0, 's'},
                                       {"quick", no_argument, 0, 'q'},
                                       {"emulated", no_argument, 0, 'e'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int json = 0, quick = 0, emulated = 0, o;
  const char *svg = NULL;
  optind = 1;
  while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (o) {
      case 'j': json = 1; break;
      case 's': svg = optarg; break;
      case 'q': quick = 1; break;
      case 'e': emulated = 1; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "embd bench: unexpected argument '%s'\n", cli_esc(argv[optind]));
    usage(stderr);
    return 2;
  }
  const bench_cfg cfg = {quick ? 2e6 : 100e6, quick ? 1 : 5};
  const size_t count = quick ? 8 : 100, dims = 1536;
  wire_row emb[24];
  int nemb = 0;
  kernel_row ker[128];
  int nker = 0;
  if (bench_embeddings(&cfg, count, dims, emb, &nemb) != 0) {
    fprintf(stderr, "embd bench: the embeddings benchmark failed (out of memory or a decode "
                    "error)\n");
    return 4;
  }
  wire_row tok[4];
  int ntok = 0;
  const size_t ntokens = quick ? 256 : 4096;
  if (bench_tokens(&cfg, ntokens, tok, &ntok) != 0) {
    fprintf(stderr, "embd bench: the token benchmark failed\n");
    return 4;
  }
  if (bench_kernels(&cfg, emulated, ker, 128, &nker) != 0) {
    fprintf(stderr, "embd bench: the kernel benchmark failed\n");
    return 4;
  }
  char cpu[200], feats[256];
  cpu_model(cpu, sizeof cpu);
  cpu_features(feats, sizeof feats);
  if (json) {
    printf("{\"embd_version\":");
    json_str(stdout, embd_version());
    printf(",\"cpu\":{\"model\":");
    json_str(stdout, cpu);
    printf(",\"features\":");
    json_str(stdout, feats);
    printf("}");
    printf(",\"embeddings\":{\"count\":%zu,\"dims\":%zu,\"formats\":[", count, dims);
    for (int i = 0; i < nemb; i++) {
      printf("%s{\"format\":", i ? "," : "");
      json_str(stdout, emb[i].name);
      printf(",\"bytes_per_vector\":%.1f,\"ns_per_vector\":%.1f}", emb[i].bytes, emb[i].ns);
    }
    printf("]},\"tokens\":{\"count\":%zu,\"tokens_per_frame\":1,\"formats\":[", ntokens);
    for (int i = 0; i < ntok; i++) {
      printf("%s{\"format\":", i ? "," : "");
      json_str(stdout, tok[i].name);
      printf(",\"bytes_per_token\":%.2f,\"ns_per_token\":%.2f}", tok[i].bytes, tok[i].ns);
    }
    printf("]},\"kernels\":[");
    for (int i = 0; i < nker; i++) {
      printf("%s{\"kernel\":", i ? "," : "");
      json_str(stdout, ker[i].kernel);
      printf(",\"implementation\":");
      json_str(stdout, ker[i].impl);
      printf(",\"tier\":");
      json_str(stdout, ker[i].tier);
      printf(",\"gb_per_s\":%.2f,\"emulated\":%s}", ker[i].gbps,
             ker[i].emulated ? "true" : "false");
    }
    printf("]}\n");
  } else {
    printf("embd %s bench%s: %zu embeddings of %zu dims, seeded; median of %d rounds\n",
           embd_version(), quick ? " --quick" : "", count, dims, cfg.rounds);
    printf("CPU: %s; features: %s\n\n", cpu, feats);
    const int json_base = nemb && emb[0].name[0] == 'O'; /* the JSON float row is first */
    printf("%-30s %14s %10s %14s %10s\n", "embeddings on the wire", "bytes/vector",
           json_base ? "vs JSON" : "", "decode ns/vec", json_base ? "vs JSON" : "");
    for (int i = 0; i < nemb; i++) {
      if (json_base)
        printf("%-30s %14.0f %9.2fx %14.0f %9.1fx\n", emb[i].name, emb[i].bytes,
               emb[0].bytes / emb[i].bytes, emb[i].ns, emb[0].ns / emb[i].ns);
      else
        printf("%-30s %14.0f %10s %14.0f\n", emb[i].name, emb[i].bytes, "", emb[i].ns);
    }
    printf("\n%-30s %14s %10s %14s %10s\n", "tokens, one per frame", "bytes/token",
           ntok && tok[0].name[0] == 'J' ? "vs JSON" : "", "decode ns/tok",
           ntok && tok[0].name[0] == 'J' ? "vs JSON" : "");
    for (int i = 0; i < ntok; i++) {
      if (tok[0].name[0] == 'J')
        printf("%-30s %14.1f %9.1fx %14.1f %9.0fx\n", tok[i].name, tok[i].bytes,
               tok[0].bytes / tok[i].bytes, tok[i].ns, tok[0].ns / tok[i].ns);
      else
        printf("%-30s %14.1f %10s %14.1f\n", tok[i].name, tok[i].bytes, "", tok[i].ns);
    }
    printf("\n%-16s %-16s %-8s %10s %10s\n", "kernel (64 KiB)", "implementation", "tier",
           "GB/s", "vs memcpy");
    for (int i = 0; i < nker; i++)
      printf("%-16s %-16s %-8s %10.2f %9.2fx%s\n", ker[i].kernel, ker[i].impl, ker[i].tier,
             ker[i].gbps, ker[i].gbps / ker[0].gbps, ker[i].emulated ? "  emulated" : "");
  }
  if (svg) return write_svg(svg, ker, nker);
  return 0;
}
