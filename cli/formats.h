/* embd CLI: the vector output formats of --to (cli/formats.c), one table row each over the
 * library's writers: JSON lines, .npy, raw little-endian elements, EMBD batches, PostgreSQL
 * binary COPY (embd/pgcopy.h), Elasticsearch/OpenSearch _bulk lines and FAISS .fvecs/.bvecs
 * (embd/vecfile.h). Rows come in as float32 (cli_sink_row, what every command has) or as
 * elements of a dtype as an EMBD frame carries them (cli_sink_row_raw: little-endian,
 * packed bits as bytes); a format that does not keep the wire dtype gets them as float32
 * (every dtype converts exactly).
 *   jsonl   numbers (integer dtypes print as integers); NaN and infinities as null with a
 *           warning
 *   npy     one array: the first row's dtype decides the descr (cli_npy_descr) and its dims
 *           the columns (packed bits: dims / 8 bytes); every row must agree
 *   raw     the rows' LE bytes back to back (float rows: float32); one dtype and dims
 *   embd    every row a frame: float rows in enc.dtype (converted; int8/uint8 values must be
 *           integers in range: a data error naming the row and element), raw rows in their
 *           own dtype; frames of any dims
 *   pgcopy  a COPY ... FROM STDIN (FORMAT binary) stream of --pg-type columns, an optional
 *           bigint id first (--pg-id START)
 *   es-bulk two _bulk NDJSON lines per row (--es-index, --es-field, --es-element,
 *           --es-byte-order, --es-id)
 *   fvecs   per row int32 dims + float32 values; bvecs: int32 dims + uint8 values (integers
 *           0..255)
 *
 * A row the format refuses (pgcopy: NaN for vector, |x| >= 65520 for halfvec...; es-bulk:
 * NaN; bvecs: not a byte) is a data error naming the row and element, nothing of that row
 * is written. What was written before it: an -o FILE or a redirected stdout file is taken
 * back by cli_out_close; to an output that cannot be taken back (a pipe, a device)
 * cli_sink_abort ends pgcopy, es-bulk, fvecs and bvecs with a record cut short, so that the
 * reader refuses the whole (PostgreSQL: "unexpected EOF in COPY data", nothing loaded;
 * _bulk: a last line without its newline; .fvecs/.bvecs: a record without its values). A
 * command that has every row in memory first (embd openai) checks them all with a sink
 * made over no output (cli_sink_begin with out NULL) before it writes the first byte. */
#ifndef EMBD_CLI_FORMATS_H
#define EMBD_CLI_FORMATS_H

#include <stdint.h>

#include "cli.h"

typedef enum cli_fmt {
  CLI_FMT_JSONL,
  CLI_FMT_NPY,
  CLI_FMT_RAW,
  CLI_FMT_EMBD,
  CLI_FMT_PGCOPY,
  CLI_FMT_ES_BULK,
  CLI_FMT_FVECS,
  CLI_FMT_BVECS,
  CLI_FMT_COUNT_
} cli_fmt;

/* Which commands offer a format (cli_format.offered). */
#define CLI_FOR_DECODE 1u
#define CLI_FOR_OPENAI 2u

/* cli_format.flags */
#define CLI_FMTF_BINARY 1u     /* never to a terminal */
#define CLI_FMTF_COUNT_FIRST 2u /* the row count is written first: unknown counts need a
                                   seekable output (the count patched at the end) */
#define CLI_FMTF_ONE_SHAPE 4u  /* every row has the first row's dims and dtype */
#define CLI_FMTF_RAW_ROWS 8u   /* takes rows in their wire dtype; others get float32 */
#define CLI_FMTF_REFUSES 16u   /* may refuse a row for its values (see cli_sink_may_refuse) */

/* The options of the formats (CLI_FORMAT_OPTIONS). */
typedef struct cli_fmt_opts {
  embd_frame_encode_options enc; /* embd: -z, -l, -c; enc.dtype for float rows */
  embd_pg_type pg_type;          /* --pg-type (default vector) */
  int pg_id;                     /* --pg-id START given: a bigint id column first */
  int pg_key;                    /* --pg-id custom: custom_id text and index int4 first
                                    (batch files; the rows' cli_sink.row_key) */
  int64_t pg_first_id;
  int pg_finite;                 /* --pg-finite: float4[] and bytea refuse NaN/infinity */
  const char *es_index, *es_field; /* --es-index (required), --es-field (default embedding) */
  embd_bulk_encoding es_encoding;  /* --es-element and --es-byte-order */
  int es_element_set, es_order_set;
  int es_id;                     /* --es-id START given: "_id" from START */
  int64_t es_first_id;
  unsigned given;                /* which format options were given (their fmt bits) */
} cli_fmt_opts;
void cli_fmt_opts_init(cli_fmt_opts *o);

typedef struct cli_sink cli_sink;

typedef struct cli_format {
  const char *name, *alias; /* alias may be NULL */
  unsigned offered;         /* CLI_FOR_* */
  unsigned flags;           /* CLI_FMTF_* */
  int (*begin)(cli_sink *s);
  /* one row: v (float32) or, with CLI_FMTF_RAW_ROWS, raw elements of dt; writes through
   * cli_sink_put; returns an exit code (the message printed, naming `what`) */
  int (*row)(cli_sink *s, const float *v, const void *raw, embd_dtype dt, uint32_t dims,
             const char *what);
  int (*finish)(cli_sink *s); /* NULL: nothing to add */
  /* bytes that make a cut output unreadable as a whole (see above); NULL: none */
  int (*poison)(cli_sink *s);
} cli_format;

extern const cli_format cli_formats[CLI_FMT_COUNT_];

/* --to NAME among the formats `offered` (CLI_FOR_*): 0 ok, else CLI_EUSAGE with the
 * message listing them. */
int cli_parse_to(const char *s, unsigned offered, cli_fmt *out);

/* The formats' options, for getopt_long (codes 0x100 and up: long options only), shared by
 * decode and openai; cli_format_opt's result as cli_frame_opt's. */
#define CLI_FORMAT_OPTIONS                                                                 \
  {"pg-type", required_argument, 0, 0x100}, {"pg-id", required_argument, 0, 0x101},        \
      {"pg-finite", no_argument, 0, 0x102}, {"es-index", required_argument, 0, 0x110},     \
      {"es-field", required_argument, 0, 0x111}, {"es-element", required_argument, 0, 0x112}, \
      {"es-byte-order", required_argument, 0, 0x113}, {"es-id", required_argument, 0, 0x114}
int cli_format_opt(int c, const char *arg, cli_fmt_opts *o);

/* What the commands that write the formats (decode, openai) parse alike: -o FILE, --to NAME
 * among `offered` (CLI_FOR_*) and the formats' options. CLI_OUTPUT_OPTIONS in the
 * getopt_long table; cli_output_opt for every option the command does not handle itself:
 * CLI_OK when it was one of these, else an exit code (its message printed, an unknown
 * option's included). */
#define CLI_OUTPUT_OPTIONS \
  {"output", required_argument, 0, 'o'}, {"to", required_argument, 0, 't'}, CLI_FORMAT_OPTIONS
int cli_output_opt(int c, const char *arg, unsigned offered, const char **output, cli_fmt *to, cli_fmt_opts *fo);
/* After parsing: the options fit --to (a --pg-* option needs --to pgcopy...). 0 ok, else
 * CLI_EUSAGE (printed). */
int cli_format_opts_check(cli_fmt to, const cli_fmt_opts *o);
/* The options' lines of --help (decode and openai). */
#define CLI_FORMAT_HELP                                                                      \
  "  --to pgcopy: PostgreSQL COPY ... FROM STDIN (FORMAT binary) rows\n"                     \
  "      --pg-type TYPE  the column: vector (pgvector, the default), halfvec, sparsevec\n"   \
  "                     (zeros dropped), bit (bit j = value > 0; bit(n) and pgvector),\n"    \
  "                     float4[] (real[]), bytea (the float32 little-endian bytes)\n"        \
  "      --pg-id START  a bigint id column first, START for the first row, + 1 each\n"       \
  "      --pg-id custom batch files: custom_id (text) and index (int4) columns first\n"     \
  "      --pg-finite    float4[] and bytea refuse NaN and infinities too\n"                  \
  "                     (vector, halfvec, sparsevec always do; halfvec also |x| >= 65520)\n" \
  "  --to es-bulk: Elasticsearch/OpenSearch _bulk lines (index action, then the document)\n" \
  "      --es-index NAME     the _index (required)\n"                                        \
  "      --es-field NAME     the vector field (default embedding)\n"                         \
  "      --es-element TYPE   float: base64 of float32 (the default); byte: hex of int8\n"    \
  "                          (integers -128..127); bit: hex of bits value > 0\n"             \
  "      --es-byte-order big|little  of float base64: big for Elasticsearch 9.3+ (the\n"     \
  "                          default), little for OpenSearch k-NN\n"                         \
  "      --es-id START       an \"_id\" for each document, START for the first, + 1 each\n"  \
  "  --to fvecs | bvecs: FAISS/TEXMEX records, int32 dims then float32 (fvecs) or uint8\n"   \
  "                     (bvecs: values must be integers 0..255), little-endian\n"            \
  "  A row the format refuses is an error naming the vector and element (exit 1). -o FILE\n" \
  "  and a redirected stdout file are then left as they were; into a pipe, embd openai\n"    \
  "  writes nothing (every row is checked first), embd decode ends pgcopy, es-bulk,\n"      \
  "  fvecs and bvecs with a record cut short, so PostgreSQL refuses the whole COPY\n"        \
  "  (nothing is loaded), _bulk the whole request, a .fvecs reader the file.\n"

/* The .npy descr a dtype's rows get: f32 '<f4', f16 '<f2', int8 '|i1', bf16 '<u2' (its
 * bits: numpy has no bfloat16; ml_dtypes' view recovers it), and '|u1' (the wire bytes)
 * for uint8, the fp8s and the packed-bit types. */
const char *cli_npy_descr(embd_dtype dt);

struct cli_sink {
  const cli_format *f;
  cli_fmt fmt;
  cli_out *out;        /* NULL: a checking sink, nothing is written */
  cli_fmt_opts o;
  uint64_t count;      /* announced rows; UINT64_MAX = unknown (npy, EMBD: fixed at end) */
  int64_t count_at;    /* EMBD with an unknown count: the output offset of the count */
  uint64_t rows;
  uint64_t bytes;      /* written so far */
  uint32_t dims;       /* of the first row (npy/raw: all rows) */
  int have_dims;
  embd_dtype dtype;    /* of the first row (npy/raw: all rows) */
  uint64_t nonfinite;  /* JSON: values written as null */
  embd_pgcopy pg;      /* pgcopy's writer */
  const char *row_key; /* --pg-id custom: the next row's custom_id (row_key_len bytes) and */
  size_t row_key_len;  /* data[].index, set by the command before each row */
  int64_t row_index;
  embd_bulk_options bulk;
  uint8_t *scratch;
  size_t scratch_cap;
  char *line;
  size_t line_cap;
  float *conv;         /* a raw row as floats */
  size_t conv_cap;
  uint8_t *conv8;      /* a float row in enc.dtype (EMBD), as uint8 (bvecs) */
  size_t conv8_cap;
};

/* count: rows that will come (UINT64_MAX if unknown; npy and EMBD then need a seekable
 * output: EMBD writes a placeholder count, patched by cli_sink_finish). out NULL: a
 * checking sink (rows are made and refused as they would be, nothing written). Returns an
 * exit code. */
int cli_sink_begin(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                   const embd_frame_encode_options *enc);
int cli_sink_begin_opts(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                        const cli_fmt_opts *o);
/* Whether a row can be refused for its values with these options (pgcopy vector, halfvec,
 * sparsevec, or --pg-finite; es-bulk; bvecs; embd into an integer dtype). */
int cli_sink_may_refuse(const cli_sink *s);
/* what: where the row came from for messages ("frame 3 at byte 120", "vector 4"). */
int cli_sink_row(cli_sink *s, const float *v, uint32_t dims, const char *what);
/* A row of dims elements of dtype at data (embd_dtype_bytes(dtype, dims) bytes, LE). */
int cli_sink_row_raw(cli_sink *s, const void *data, uint32_t dims, embd_dtype dtype,
                     const char *what);
int cli_sink_finish(cli_sink *s);
/* The command failed after cli_sink_begin: to an output that cannot be taken back, the
 * format's poison (above). Call it before cli_out_close(out, 0). */
void cli_sink_abort(cli_sink *s);
void cli_sink_free(cli_sink *s);
/* Writes n bytes to the sink's output (none for a checking sink). */
int cli_sink_put(cli_sink *s, const void *p, size_t n);

/* dims floats -> elements of dt, LE, in *buf (grown, *cap bytes): the sink's conversion
 * of float rows, for a command that checks rows before it writes any. A value dt cannot
 * hold (int8/uint8: not an integer in range), or packed bits with dims not a multiple of
 * 8, is CLI_EDATA with "<what>: <the element and why>" printed. */
int cli_row_to_dtype(const float *v, uint32_t dims, embd_dtype dt, uint8_t **buf, size_t *cap,
                     const char *what);

#endif
