/* embd command-line tool: helpers shared by the subcommands (cli/util.c). */
#ifndef EMBD_CLI_H
#define EMBD_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "embd.h"

/* Exit codes (documented in `embd --help` and doc/embd.1). */
enum {
  CLI_OK = 0,
  CLI_EDATA = 1,  /* invalid input data */
  CLI_EUSAGE = 2, /* usage error */
  CLI_EIO = 3,    /* cannot open/read/write */
  CLI_EINTERNAL = 4 /* out of memory / internal */
};

/* The subcommand name for messages ("embd <cmd>: ..."). */
extern const char *cli_cmd;

/* "embd <cmd>: <fmt>\n" on stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_msg + "Try 'embd <cmd> --help'."; returns CLI_EUSAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Maps a library result to an exit code (OUT_OF_MEMORY -> 4, argument bugs -> 4, else 1). */
int cli_exit_for(embd_result r);

/* Number parsing for options: whole string, range checked. 0 ok, -1 bad. */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* ---- input ---------------------------------------------------------------------------- */
typedef struct cli_in {
  const char *name; /* as given; "-" is stdin (named "<stdin>" in messages) */
  int fd;
  int regular;      /* a regular file: size is known */
  uint64_t size;
  uint64_t pos;     /* bytes handed out so far */
  uint8_t peek[4096]; /* bytes read ahead by cli_in_peek, handed out first */
  size_t peek_len, peek_pos;
} cli_in;

const char *cli_in_label(const cli_in *in);
/* Opens path ("-": stdin). On failure prints the error and returns CLI_EIO. */
int cli_in_open(cli_in *in, const char *path);
void cli_in_close(cli_in *in);
/* Reads up to n bytes (fewer only at end of input) into *got. CLI_EIO on a read error
 * (printed). */
int cli_in_read(cli_in *in, void *dst, size_t n, size_t *got);
/* Reads ahead up to n (<= 4096) bytes without consuming them; *p points at them. */
int cli_in_peek(cli_in *in, size_t n, const uint8_t **p, size_t *got);
/* Reads everything left, NUL-terminated (the NUL not counted in *len). */
int cli_in_read_all(cli_in *in, char **data, size_t *len);

/* ---- output --------------------------------------------------------------------------- */
typedef struct cli_out {
  const char *name; /* "-" is stdout */
  FILE *f;
  int created;      /* a file we created: removed again on failure */
  int failed;
  int trunc_on_fail; /* a regular file we did not create: cut back to trunc_at on failure */
  int64_t trunc_at;
} cli_out;

const char *cli_out_label(const cli_out *o);
/* Opens path for writing ("-" or NULL: stdout). binary: refuse a terminal on stdout. */
int cli_out_open(cli_out *o, const char *path, int binary);
int cli_out_write(cli_out *o, const void *p, size_t n);
/* Flushes and closes; ok = 0 removes a created file (or cuts a seekable stdout back to
 * where the sink began, see cli_sink_begin). Returns CLI_EIO on a write error. */
int cli_out_close(cli_out *o, int ok);
/* A regular file, not in append mode (fseek then works for writes). */
int cli_out_seekable(const cli_out *o);

/* ---- progress bar on stderr (only when stderr is a terminal, after one second) --------- */
typedef struct cli_progress {
  uint64_t total; /* 0 = unknown */
  double start, last;
  int tty, shown;
} cli_progress;
void cli_progress_start(cli_progress *p, uint64_t total);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);

/* ---- floats ----------------------------------------------------------------------------- */
/* Shortest "%.{1..9}g" text that reads back (strtof) as the same float. Finite only.
 * Returns the length; buf holds at least 32 bytes. */
int cli_fmt_f32(char *buf, float v);

/* ---- vector sinks: JSON lines, .npy, raw float32 LE, EMBD batch ------------------------- */
typedef enum cli_fmt { CLI_FMT_JSONL, CLI_FMT_NPY, CLI_FMT_RAW, CLI_FMT_EMBD } cli_fmt;
int cli_parse_fmt(const char *s, cli_fmt *out); /* jsonl|json|npy|raw|embd */

typedef struct cli_sink {
  cli_fmt fmt;
  cli_out *out;
  uint64_t count;      /* announced rows; UINT64_MAX = unknown (npy, EMBD: fixed at end) */
  int64_t count_at;    /* EMBD with an unknown count: the output offset of the count */
  uint64_t rows;
  uint32_t dims;       /* of the first row (npy/raw: all rows) */
  int have_dims;
  uint64_t nonfinite;  /* JSON: values written as null */
  embd_frame_encode_options enc;
  uint8_t *scratch;
  size_t scratch_cap;
  char *line;
  size_t line_cap;
} cli_sink;

/* count: rows that will come (UINT64_MAX if unknown; npy and EMBD then need a seekable
 * output: EMBD writes a placeholder count, patched by cli_sink_finish). Returns an exit
 * code. */
int cli_sink_begin(cli_sink *s, cli_fmt fmt, cli_out *out, uint64_t count,
                   const embd_frame_encode_options *enc);
/* label: where the row came from for messages ("frame 3 at byte 120", "line 4"). */
int cli_sink_row(cli_sink *s, const float *v, uint32_t dims, const char *what);
int cli_sink_finish(cli_sink *s);
void cli_sink_free(cli_sink *s);

#endif
