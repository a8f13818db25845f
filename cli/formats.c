/* embd CLI: the vector output formats of --to, one row each in cli_formats (formats.h). */
#include "formats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static int grow(uint8_t **p, size_t *cap, size_t need) {
  if (*cap >= need) return 0;
  uint8_t *n = realloc(*p, need);
  if (!n) return -1;
  *p = n;
  *cap = need;
  return 0;
}

static int oom(void) {
  cli_msg("out of memory");
  return CLI_EINTERNAL;
}

int cli_sink_put(cli_sink *s, const void *p, size_t n) {
  s->bytes += n;
  return s->out ? cli_out_write(s->out, p, n) : CLI_OK;
}

/* A writer's message without its leading "row N: " or "row N " (the CLI names the row its
 * own way: "vector 3", "frame 3 at byte 120"). */
static const char *unrow(const char *m) {
  if (strncmp(m, "row ", 4)) return m;
  const char *p = m + 4;
  while (*p >= '0' && *p <= '9') p++;
  if (p == m + 4) return m;
  if (p[0] == ':' && p[1] == ' ') return p + 2;
  if (p[0] == ' ') return p + 1;
  return m;
}

static int writer_error(const char *what, embd_result r, const embd_error *err) {
  cli_msg("%s: %s", what, err->message[0] ? unrow(err->message) : embd_strerror(r));
  return cli_exit_for(r);
}

const char *cli_npy_descr(embd_dtype dt) {
  switch (dt) {
    case EMBD_DTYPE_F32: return "<f4";
    case EMBD_DTYPE_F16: return "<f2";
    case EMBD_DTYPE_BF16: return "<u2";
    case EMBD_DTYPE_INT8: return "|i1";
    default: return "|u1"; /* uint8, fp8-e4m3, fp8-e5m2, binary, ubinary: the wire bytes */
  }
}

static int packed_dims_error(const char *what, uint32_t dims, embd_dtype dt) {
  cli_msg("%s: %lu dims: %s packs 8 values a byte, the dims must be a multiple of 8", what,
          (unsigned long)dims, embd_dtype_name(dt));
  return CLI_EDATA;
}

int cli_row_to_dtype(const float *v, uint32_t dims, embd_dtype dt, uint8_t **buf, size_t *cap,
                     const char *what) {
  size_t vb;
  embd_result r = embd_dtype_bytes(dt, dims, &vb);
  if (r == EMBD_ERR_DTYPE_LENGTH) return packed_dims_error(what, dims, dt);
  if (r || grow(buf, cap, vb + 1)) return oom();
  embd_error err;
  r = embd_from_f32(*buf, v, dims, dt, EMBD_ORDER_LE, &err);
  if (r) {
    cli_msg("%s: %s", what, err.message);
    return cli_exit_for(r);
  }
  return CLI_OK;
}

/* ---- jsonl ------------------------------------------------------------------------------- */

static int jsonl_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                     const char *what) {
  (void)raw, (void)dt;
  if (grow((uint8_t **)&s->line, &s->line_cap, (size_t)dims * 18 + 4)) return oom();
  char *p = s->line;
  *p++ = '[';
  for (uint32_t i = 0; i < dims; i++) {
    if (i) *p++ = ',';
    if (isfinite(v[i])) {
      p += cli_fmt_f32(p, v[i]);
    } else {
      memcpy(p, "null", 4);
      p += 4;
      if (!s->nonfinite++)
        cli_msg("warning: %s holds NaN or infinity (not JSON numbers): written as null; "
                "use --to raw or --to npy to keep them", what);
    }
  }
  *p++ = ']';
  *p++ = '\n';
  return cli_sink_put(s, s->line, (size_t)(p - s->line));
}

static int jsonl_finish(cli_sink *s) {
  if (s->nonfinite > 1)
    cli_msg("warning: %llu NaN/infinite values written as null in all",
            (unsigned long long)s->nonfinite);
  return CLI_OK;
}

/* ---- npy and raw ------------------------------------------------------------------------- */

static int npy_header(cli_sink *s, uint64_t rows) {
  uint8_t h[NPY_WRITE_HEADER_SIZE];
  uint64_t cols = s->have_dims ? s->dims : 0;
  if (embd_dtype_bits(s->dtype) == 1) cols /= 8; /* packed bits: a row is dims / 8 bytes */
  npy_header_write_descr(h, rows, cols, cli_npy_descr(s->dtype));
  return cli_sink_put(s, h, sizeof h);
}

static int npy_begin(cli_sink *s) {
  if (s->out && s->count == UINT64_MAX && !cli_out_seekable(s->out)) {
    cli_msg("%s: --to npy with an unknown vector count (--stream, batch files) needs a seekable output file (-o FILE): the count comes last",
            cli_out_label(s->out));
    return CLI_EUSAGE;
  }
  return CLI_OK;
}

/* npy and raw: the elements as they come (float rows as float32 LE). */
static int elements_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                        const char *what) {
  int rc;
  if (s->fmt == CLI_FMT_NPY && s->rows == 1 &&
      (rc = npy_header(s, s->count == UINT64_MAX ? 0 : s->count)))
    return rc;
  if (raw) {
    size_t vb = 0;
    if (embd_dtype_bytes(dt, dims, &vb)) { /* a frame's own data: cannot fail */
      cli_msg("internal error: %s: %lu dims of %s", what, (unsigned long)dims, embd_dtype_name(dt));
      return CLI_EINTERNAL;
    }
    return cli_sink_put(s, raw, vb);
  }
  if (grow(&s->scratch, &s->scratch_cap, (size_t)dims * 4 + 1)) return oom();
  embd_f32_to_le(s->scratch, v, dims);
  return cli_sink_put(s, s->scratch, (size_t)dims * 4);
}

static int npy_finish(cli_sink *s) {
  if (!s->have_dims) return npy_header(s, s->rows);
  if (s->count != UINT64_MAX || !s->out) return CLI_OK;
  /* unknown count: rewrite the header */
  if (fflush(s->out->f) || fseek(s->out->f, 0, SEEK_SET)) {
    cli_msg("%s: cannot rewrite the .npy header: %s", cli_out_label(s->out), strerror(errno));
    return CLI_EIO;
  }
  const int rc = npy_header(s, s->rows);
  if (rc) return rc;
  fseek(s->out->f, 0, SEEK_END);
  return CLI_OK;
}

/* ---- embd ---------------------------------------------------------------------------------- */

static int embd_begin(cli_sink *s) {
  uint64_t count = s->count;
  if (count > UINT32_MAX && count != UINT64_MAX) {
    cli_msg("%llu vectors: an EMBD batch holds at most 4294967295", (unsigned long long)count);
    return CLI_EDATA;
  }
  if (count == UINT64_MAX) { /* a placeholder, patched by cli_sink_finish */
    if (s->out && !cli_out_seekable(s->out)) {
      cli_msg("%s: an EMBD batch of unknown count needs a seekable output file",
              cli_out_label(s->out));
      return CLI_EINTERNAL;
    }
    s->count_at = s->out ? (int64_t)ftello(s->out->f) : 0;
    count = 0;
  }
  const uint8_t c[4] = {(uint8_t)count, (uint8_t)(count >> 8), (uint8_t)(count >> 16),
                        (uint8_t)(count >> 24)};
  return cli_sink_put(s, c, 4);
}

static int embd_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                    const char *what) {
  int rc;
  size_t cap, n;
  if (s->rows > UINT32_MAX) {
    cli_msg("%s: more than 4294967295 vectors: an EMBD batch holds at most 4294967295", what);
    return CLI_EDATA;
  }
  /* float rows take the options' dtype: converted here, so that a value the dtype cannot
   * hold is named (embd_from_f32's element), then written as it is */
  const embd_dtype fdt = raw ? dt : (embd_dtype)s->o.enc.dtype;
  embd_result r = embd_frame_size_dtype(dims, fdt, s->o.enc.flags, &cap);
  if (r == EMBD_ERR_DTYPE_LENGTH) return packed_dims_error(what, dims, fdt);
  if (r) {
    cli_msg("%s: %s", what, embd_strerror(r));
    return cli_exit_for(r);
  }
  if (!raw && fdt != EMBD_DTYPE_F32) {
    if ((rc = cli_row_to_dtype(v, dims, fdt, &s->conv8, &s->conv8_cap, what))) return rc;
    raw = s->conv8;
  }
  if (grow(&s->scratch, &s->scratch_cap, cap)) return oom();
  embd_frame_encode_options o = s->o.enc;
  o.dtype = 0;
  r = raw ? embd_frame_encode_raw(raw, dims, fdt, EMBD_ORDER_LE, &o, s->scratch, cap, &n)
          : embd_frame_encode_f32(v, dims, &o, s->scratch, cap, &n);
  if (r) {
    cli_msg("%s: encoding the frame: %s", what, embd_strerror(r));
    return cli_exit_for(r);
  }
  return cli_sink_put(s, s->scratch, n);
}

static int embd_finish(cli_sink *s) {
  if (s->count != UINT64_MAX || !s->out) return CLI_OK;
  /* patch the count */
  const uint8_t c[4] = {(uint8_t)s->rows, (uint8_t)(s->rows >> 8), (uint8_t)(s->rows >> 16),
                        (uint8_t)(s->rows >> 24)};
  if (fflush(s->out->f) || fseeko(s->out->f, (off_t)s->count_at, SEEK_SET)) {
    cli_msg("%s: cannot write the batch count: %s", cli_out_label(s->out), strerror(errno));
    return CLI_EIO;
  }
  int rc = cli_out_write(s->out, c, 4);
  if (rc) return rc;
  if (fflush(s->out->f) || fseeko(s->out->f, 0, SEEK_END)) {
    cli_msg("%s: cannot write the batch count: %s", cli_out_label(s->out), strerror(errno));
    return CLI_EIO;
  }
  return CLI_OK;
}

/* ---- pgcopy (embd/pgcopy.h) ----------------------------------------------------------------- */

static int pgcopy_begin(cli_sink *s) {
  embd_pgcopy_options po;
  memset(&po, 0, sizeof po);
  po.type = s->o.pg_type;
  po.columns = s->o.pg_key ? EMBD_PGCOPY_KEY : s->o.pg_id ? EMBD_PGCOPY_ID : 0;
  po.flags = s->o.pg_finite ? EMBD_PGCOPY_FINITE : 0;
  po.first_id = s->o.pg_first_id;
  if (embd_pgcopy_init(&s->pg, &po)) {
    cli_msg("internal error: pgcopy options refused");
    return CLI_EINTERNAL;
  }
  uint8_t h[EMBD_PGCOPY_HEADER_SIZE];
  size_t n;
  if (embd_pgcopy_header(&s->pg, h, sizeof h, &n)) return oom();
  return cli_sink_put(s, h, n);
}

static int pgcopy_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                      const char *what) {
  (void)raw, (void)dt;
  embd_error err;
  size_t need, n;
  embd_pgcopy_keys keys, *kp = NULL;
  if (s->o.pg_key) { /* --pg-id custom: the row's custom_id and index (cli_sink.row_key) */
    memset(&keys, 0, sizeof keys);
    keys.key = s->row_key;
    keys.key_len = s->row_key_len;
    keys.first_index = s->row_index;
    kp = &keys;
  }
  embd_result r = embd_pgcopy_rows_size(&s->pg, v, 1, dims, &need);
  if (r == EMBD_OK) need += s->o.pg_key ? s->row_key_len : 0; /* sizes leave the key's text out */
  if (r == EMBD_OK && grow(&s->scratch, &s->scratch_cap, need + 1)) return oom();
  /* a size the writer refuses (dims): the write call names it */
  r = embd_pgcopy_write_f32(&s->pg, v, 1, dims, kp, s->scratch, r ? 0 : need, &n, &err);
  if (r) return writer_error(what, r, &err);
  return cli_sink_put(s, s->scratch, n);
}

static int pgcopy_finish(cli_sink *s) {
  uint8_t t[EMBD_PGCOPY_TRAILER_SIZE];
  size_t n;
  if (embd_pgcopy_trailer(&s->pg, t, sizeof t, &n)) return oom();
  return cli_sink_put(s, t, n);
}

/* A row's field count and no field: PostgreSQL stops with "unexpected EOF in COPY data"
 * and the COPY loads nothing (a cut on a row boundary would load the rows before it). */
static int pgcopy_poison(cli_sink *s) {
  const uint16_t fields = s->o.pg_key ? 3 : s->o.pg_id ? 2 : 1;
  const uint8_t b[2] = {(uint8_t)(fields >> 8), (uint8_t)fields};
  return cli_sink_put(s, b, 2);
}

/* ---- es-bulk (embd/vecfile.h) ------------------------------------------------------------- */

static int bulk_begin(cli_sink *s) {
  memset(&s->bulk, 0, sizeof s->bulk);
  s->bulk.index = s->o.es_index;
  s->bulk.field = s->o.es_field;
  s->bulk.encoding = s->o.es_encoding;
  return CLI_OK;
}

static int bulk_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                    const char *what) {
  (void)raw, (void)dt;
  embd_error err;
  size_t need = 0, n;
  const int64_t id = s->o.es_first_id + (int64_t)(s->rows - 1);
  const int64_t *ids = s->o.es_id ? &id : NULL;
  embd_result r = embd_bulk_size(&s->bulk, 1, dims, ids, &need);
  if (r == EMBD_OK && grow(&s->scratch, &s->scratch_cap, need + 1)) return oom();
  r = embd_bulk_write_f32(&s->bulk, v, 1, dims, ids, (char *)s->scratch, r ? 0 : need, &n, &err);
  if (r) return writer_error(what, r, &err);
  return cli_sink_put(s, s->scratch, n);
}

/* A last line without its newline: _bulk refuses the whole request ("The bulk request must
 * be terminated by a newline"). */
static int bulk_poison(cli_sink *s) {
  static const char cut[] = "{\"error\":\"embd: output cut short\"}";
  return cli_sink_put(s, cut, sizeof cut - 1);
}

/* ---- fvecs, bvecs (embd/vecfile.h) ------------------------------------------------------- */

static int vecs_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                    const char *what) {
  (void)raw, (void)dt;
  int rc;
  size_t need, n;
  const int b = s->fmt == CLI_FMT_BVECS;
  embd_result r = b ? embd_bvecs_size(1, dims, &need) : embd_fvecs_size(1, dims, &need);
  if (r) {
    cli_msg("%s: %lu dims: a .%s record holds 1..2147483647", what, (unsigned long)dims,
            b ? "bvecs" : "fvecs");
    return CLI_EDATA;
  }
  if (grow(&s->scratch, &s->scratch_cap, need + 1)) return oom();
  if (b) {
    if ((rc = cli_row_to_dtype(v, dims, EMBD_DTYPE_UINT8, &s->conv8, &s->conv8_cap, what))) return rc;
    r = embd_bvecs_write(s->conv8, 1, dims, s->scratch, need, &n);
  } else {
    r = embd_fvecs_write(v, 1, dims, s->scratch, need, &n);
  }
  if (r) {
    cli_msg("internal error: %s: %s", what, embd_strerror(r));
    return CLI_EINTERNAL;
  }
  return cli_sink_put(s, s->scratch, n);
}

/* A record's dims and no values: a reader of whole records refuses the file. */
static int vecs_poison(cli_sink *s) {
  const uint32_t d = s->have_dims ? s->dims : 1;
  const uint8_t b[4] = {(uint8_t)d, (uint8_t)(d >> 8), (uint8_t)(d >> 16), (uint8_t)(d >> 24)};
  return cli_sink_put(s, b, 4);
}

/* ---- the table ---------------------------------------------------------------------------- */

#define BOTH (CLI_FOR_DECODE | CLI_FOR_OPENAI)
const cli_format cli_formats[CLI_FMT_COUNT_] = {
    [CLI_FMT_JSONL] = {"jsonl", "json", BOTH, 0, NULL, jsonl_row, jsonl_finish, NULL},
    [CLI_FMT_NPY] = {"npy", NULL, BOTH,
                     CLI_FMTF_BINARY | CLI_FMTF_COUNT_FIRST | CLI_FMTF_ONE_SHAPE | CLI_FMTF_RAW_ROWS,
                     npy_begin, elements_row, npy_finish, NULL},
    [CLI_FMT_RAW] = {"raw", NULL, BOTH, CLI_FMTF_BINARY | CLI_FMTF_ONE_SHAPE | CLI_FMTF_RAW_ROWS, NULL,
                     elements_row, NULL, NULL},
    [CLI_FMT_EMBD] = {"embd", NULL, CLI_FOR_OPENAI,
                      CLI_FMTF_BINARY | CLI_FMTF_COUNT_FIRST | CLI_FMTF_RAW_ROWS | CLI_FMTF_REFUSES,
                      embd_begin, embd_row, embd_finish, NULL},
    [CLI_FMT_PGCOPY] = {"pgcopy", NULL, BOTH, CLI_FMTF_BINARY | CLI_FMTF_REFUSES, pgcopy_begin,
                        pgcopy_row, pgcopy_finish, pgcopy_poison},
    [CLI_FMT_ES_BULK] = {"es-bulk", NULL, BOTH, CLI_FMTF_REFUSES, bulk_begin, bulk_row, NULL,
                         bulk_poison},
    [CLI_FMT_FVECS] = {"fvecs", NULL, BOTH, CLI_FMTF_BINARY, NULL, vecs_row, NULL, vecs_poison},
    [CLI_FMT_BVECS] = {"bvecs", NULL, BOTH, CLI_FMTF_BINARY | CLI_FMTF_REFUSES, NULL, vecs_row, NULL,
                       vecs_poison},
};

int cli_parse_to(const char *s, unsigned offered, cli_fmt *out) {
  char names[160];
  size_t at = 0;
  for (int i = 0; i < CLI_FMT_COUNT_; i++) {
    const cli_format *f = &cli_formats[i];
    if (!(f->offered & offered)) continue;
    if (!strcmp(s, f->name) || (f->alias && !strcmp(s, f->alias))) {
      *out = (cli_fmt)i;
      return 0;
    }
    at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", f->name);
  }
  return cli_usage("--to: '%s' is not one of %s", cli_esc(s), names);
}

/* ---- options ------------------------------------------------------------------------------- */

void cli_fmt_opts_init(cli_fmt_opts *o) {
  memset(o, 0, sizeof *o);
  o->pg_type = EMBD_PG_VECTOR;
  o->es_field = "embedding";
  o->es_encoding = EMBD_BULK_F32_BASE64_BE;
}

static int parse_i64(const char *s, int64_t *out) {
  if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9'))) return -1;
  errno = 0;
  char *e;
  const long long v = strtoll(s, &e, 10);
  if (errno || *e) return -1;
  *out = v;
  return 0;
}

#define GIVEN(f) (1u << (f))

int cli_output_opt(int c, const char *arg, unsigned offered, const char **output, cli_fmt *to, cli_fmt_opts *fo) {
  if (c == 'o') {
    *output = arg;
    return CLI_OK;
  }
  if (c == 't') return cli_parse_to(arg, offered, to) ? CLI_EUSAGE : CLI_OK;
  const int f = cli_format_opt(c, arg, fo);
  if (f == 1) return CLI_OK;
  if (f) return f;
  return cli_usage("unknown or incomplete option");
}

int cli_format_opt(int c, const char *arg, cli_fmt_opts *o) {
  switch (c) {
    case 0x100: {
      for (int t = 0; t < EMBD_PG_TYPE_COUNT_; t++) {
        const char *n = embd_pg_type_name((embd_pg_type)t);
        if (n && (!strcmp(arg, n) || (t == EMBD_PG_FLOAT4_ARRAY && !strcmp(arg, "real[]")))) {
          o->pg_type = (embd_pg_type)t;
          o->given |= GIVEN(CLI_FMT_PGCOPY);
          return 1;
        }
      }
      return cli_usage("--pg-type: '%s' is not one of vector, halfvec, sparsevec, bit, float4[], bytea",
                       cli_esc(arg));
    }
    case 0x101:
      if (!strcmp(arg, "custom")) { /* batch files: custom_id text, index int4 */
        o->pg_key = 1;
        o->pg_id = 0;
      } else if (parse_i64(arg, &o->pg_first_id)) {
        return cli_usage("--pg-id: '%s' is not a bigint (the first row's id) or custom", cli_esc(arg));
      } else {
        o->pg_id = 1;
        o->pg_key = 0;
      }
      o->given |= GIVEN(CLI_FMT_PGCOPY);
      return 1;
    case 0x102: o->pg_finite = 1, o->given |= GIVEN(CLI_FMT_PGCOPY); return 1;
    case 0x110:
      if (!*arg) return cli_usage("--es-index: an empty name");
      o->es_index = arg, o->given |= GIVEN(CLI_FMT_ES_BULK);
      return 1;
    case 0x111:
      if (!*arg) return cli_usage("--es-field: an empty name");
      o->es_field = arg, o->given |= GIVEN(CLI_FMT_ES_BULK);
      return 1;
    case 0x112:
      if (!strcmp(arg, "float")) o->es_element_set = 1;
      else if (!strcmp(arg, "byte")) o->es_element_set = 2;
      else if (!strcmp(arg, "bit")) o->es_element_set = 3;
      else return cli_usage("--es-element: '%s' is not float, byte or bit", cli_esc(arg));
      o->given |= GIVEN(CLI_FMT_ES_BULK);
      break;
    case 0x113:
      if (!strcmp(arg, "big")) o->es_order_set = 1;
      else if (!strcmp(arg, "little")) o->es_order_set = 2;
      else return cli_usage("--es-byte-order: '%s' is not big or little", cli_esc(arg));
      o->given |= GIVEN(CLI_FMT_ES_BULK);
      break;
    case 0x114:
      if (parse_i64(arg, &o->es_first_id))
        return cli_usage("--es-id: '%s' is not an integer (the first document's _id)", cli_esc(arg));
      o->es_id = 1;
      o->given |= GIVEN(CLI_FMT_ES_BULK);
      return 1;
    default: return 0;
  }
  /* --es-element / --es-byte-order: the encoding from both */
  if (o->es_element_set == 2) o->es_encoding = EMBD_BULK_INT8_HEX;
  else if (o->es_element_set == 3) o->es_encoding = EMBD_BULK_BIT_HEX;
  else o->es_encoding = o->es_order_set == 2 ? EMBD_BULK_F32_BASE64_LE : EMBD_BULK_F32_BASE64_BE;
  return 1;
}

int cli_format_opts_check(cli_fmt to, const cli_fmt_opts *o) {
  if ((o->given & GIVEN(CLI_FMT_PGCOPY)) && to != CLI_FMT_PGCOPY)
    return cli_usage("--pg-type, --pg-id and --pg-finite need --to pgcopy");
  if ((o->given & GIVEN(CLI_FMT_ES_BULK)) && to != CLI_FMT_ES_BULK)
    return cli_usage("--es-index, --es-field, --es-element, --es-byte-order and --es-id need --to es-bulk");
  if (to == CLI_FMT_ES_BULK && !o->es_index) return cli_usage("--to es-bulk needs --es-index NAME");
  if (o->es_order_set && o->es_element_set > 1)
    return cli_usage("--es-byte-order is for --es-element float (byte and bit are hex)");
  if (o->pg_finite && o->pg_type != EMBD_PG_FLOAT4_ARRAY && o->pg_type != EMBD_PG_BYTEA)
    return cli_usage("--pg-finite is for --pg-type float4[] and bytea (the pgvector types refuse "
                     "NaN and infinities always)");
  return CLI_OK;
}

/* ---- the sink ------------------------------------------------------------------------------ */

int cli_sink_begin(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                   const embd_frame_encode_options *enc) {
  cli_fmt_opts o;
  cli_fmt_opts_init(&o);
  if (enc) o.enc = *enc;
  return cli_sink_begin_opts(s, fmt, out, count, &o);
}

int cli_sink_begin_opts(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                        const cli_fmt_opts *o) {
  memset(s, 0, sizeof *s);
  s->fmt = fmt;
  s->f = &cli_formats[fmt];
  s->out = out;
  s->count = count;
  s->o = *o;
  return s->f->begin ? s->f->begin(s) : CLI_OK;
}

int cli_sink_may_refuse(const cli_sink *s) {
  if (!(s->f->flags & CLI_FMTF_REFUSES)) return 0;
  if (s->fmt == CLI_FMT_EMBD) return s->o.enc.dtype != EMBD_DTYPE_F32;
  if (s->fmt == CLI_FMT_PGCOPY)
    return s->o.pg_finite || (s->o.pg_type != EMBD_PG_FLOAT4_ARRAY && s->o.pg_type != EMBD_PG_BYTEA &&
                              s->o.pg_type != EMBD_PG_BIT);
  return 1;
}

/* One row: floats v (raw NULL) or elements of dt at raw. */
static int sink_row(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
                    const char *what) {
  if (!s->have_dims) {
    s->dims = dims;
    s->dtype = dt;
    s->have_dims = 1;
  } else if (s->f->flags & CLI_FMTF_ONE_SHAPE) {
    if (dims != s->dims) {
      cli_msg("%s has %lu dims, the first vector had %lu: %s output needs one dims for all", what,
              (unsigned long)dims, (unsigned long)s->dims, s->f->name);
      return CLI_EDATA;
    }
    if (dt != s->dtype) {
      cli_msg("%s is %s, the first vector was %s: %s output needs one dtype for all (--as f32 "
              "converts every vector to float32)", what, embd_dtype_name(dt),
              embd_dtype_name(s->dtype), s->f->name);
      return CLI_EDATA;
    }
  }
  if (raw && !(s->f->flags & CLI_FMTF_RAW_ROWS)) { /* every value of every dtype is a float32: exact */
    if (s->conv_cap < (size_t)dims + 1) {
      float *c = realloc(s->conv, ((size_t)dims + 1) * sizeof *c);
      if (!c) return oom();
      s->conv = c;
      s->conv_cap = (size_t)dims + 1;
    }
    if (embd_to_f32(s->conv, raw, dims, dt, EMBD_ORDER_LE)) return oom();
    v = s->conv;
    raw = NULL;
  }
  s->rows++;
  return s->f->row(s, v, raw, dt, dims, what);
}

int cli_sink_row(cli_sink *s, const float *v, uint32_t dims, const char *what) {
  return sink_row(s, v, NULL, EMBD_DTYPE_F32, dims, what);
}

int cli_sink_row_raw(cli_sink *s, const void *data, uint32_t dims, embd_dtype dtype,
                     const char *what) {
  static const uint8_t none[1] = {0}; /* 0 dims: a row with no bytes is still a raw row */
  return sink_row(s, NULL, data ? data : none, dtype, dims, what);
}

int cli_sink_finish(cli_sink *s) {
  if (s->f->finish) {
    const int rc = s->f->finish(s);
    if (rc) return rc;
  }
  if (s->count != UINT64_MAX && s->rows != s->count) {
    cli_msg("internal error: %llu vectors announced, %llu written", (unsigned long long)s->count,
            (unsigned long long)s->rows);
    return CLI_EINTERNAL;
  }
  return CLI_OK;
}

void cli_sink_abort(cli_sink *s) {
  if (!s->f || !s->out || !s->f->poison || cli_out_can_take_back(s->out) || s->out->failed) return;
  s->f->poison(s);
}

void cli_sink_free(cli_sink *s) {
  free(s->scratch);
  free(s->line);
  free(s->conv);
  free(s->conv8);
  s->scratch = NULL;
  s->line = NULL;
  s->conv = NULL;
  s->conv8 = NULL;
}
