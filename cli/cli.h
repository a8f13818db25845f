/* embd command-line tool: helpers shared by the subcommands (cli/util.c; the output
 * formats: formats.h). */
#ifndef EMBD_CLI_H
#define EMBD_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "embd.h"
#include "escape.h"

/* Exit codes (documented in `embd --help` and doc/embd.1). */
enum {
  CLI_OK = 0,
  CLI_EDATA = 1,  /* invalid input data */
  CLI_EUSAGE = 2, /* usage error */
  CLI_EIO = 3,    /* cannot open/read/write */
  CLI_EINTERNAL = 4, /* out of memory / internal */
  CLI_EPEER = 5      /* embd tokens: the stream was valid and carried an ERROR frame (the
                        peer reported a failure); distinct from 1, which is a broken stream.
                        embd openai: batch requests that stayed failed (the rest written) */
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
/* A vector length option (--dims, --max-dims): 1 .. 2^32 - 1. 0 ok, else CLI_EUSAGE
 * (with the message printed). */
int cli_parse_dims(const char *s, const char *opt, uint32_t *out);
/* The frame-encoding options that encode and openai share: -z (zlib), -l N (level 1..9,
 * implies -z), -c (payload CRC). 1: c was one of them, applied to *enc; 0: it was not;
 * CLI_EUSAGE: a bad value (message printed). */
int cli_frame_opt(int c, const char *arg, embd_frame_encode_options *enc);
/* Their getopt_long rows (the same letters in every command that has them). */
#define CLI_FRAME_OPTIONS                                                  \
  {"compress", no_argument, 0, 'z'}, {"level", required_argument, 0, 'l'}, \
      {"payload-crc", no_argument, 0, 'c'}
/* The frame-reading options that decode and verify share: -s (frames back to back, no
 * batch count), -d N (every frame N dims), -m N (reject frames above N dims), and their
 * getopt_long rows. cli_read_opt's result as cli_frame_opt's. */
typedef struct cli_read_opts {
  int stream;
  uint32_t dims, max_dims;
} cli_read_opts;
#define CLI_READ_OPTS_INIT {0, 0, CLI_DEFAULT_MAX_DIMS}
#define CLI_READ_OPTIONS                                                \
  {"stream", no_argument, 0, 's'}, {"dims", required_argument, 0, 'd'}, \
      {"max-dims", required_argument, 0, 'm'}
int cli_read_opt(int c, const char *arg, cli_read_opts *r);
/* The bound the reader gets: --max-dims, raised to --dims when that is larger. */
static inline uint32_t cli_read_max_dims(const cli_read_opts *r) {
  return r->dims > r->max_dims ? r->dims : r->max_dims;
}
/* --max-record BYTES (cli_parse_size's forms). 0 ok, else CLI_EUSAGE (message printed). */
int cli_parse_max_record(const char *arg, uint64_t *out);
/* A little-endian uint32 at p (the batch count, header fields). */
static inline uint32_t cli_rd32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/* How much input the commands read at a time. */
#define CLI_CHUNK (1u << 20)
/* A byte count: digits with an optional K, M or G suffix (binary: 1K = 1024), 1 or more.
 * 0 ok, -1 bad. */
int cli_parse_size(const char *s, uint64_t *out);

/* ---- names in messages: escape.h (cli_escape, cli_esc) ------------------------------- */

/* Default of --max-record: the most bytes one JSON line or one JSON response may take. */
#define CLI_DEFAULT_MAX_RECORD ((uint64_t)256 << 20)

/* ---- input ---------------------------------------------------------------------------- */
typedef struct cli_in {
  const char *name; /* as given; "-" is stdin (named "<stdin>" in messages) */
  char *label;      /* the name escaped for messages (cli_in_label) */
  int fd;
  int regular;      /* a regular file: size is known */
  uint64_t size;
  uint64_t dev, ino; /* identity of a regular file (cli_out_check_input) */
  uint64_t pos;     /* bytes handed out so far */
  uint8_t peek[4096]; /* bytes read ahead by cli_in_peek, handed out first */
  size_t peek_len, peek_pos;
  void *map;          /* cli_in_load_json_object's mapping, or NULL */
  size_t map_len;
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
/* Reads everything left, NUL-terminated (the NUL not counted in *len). More than max bytes
 * is an input error (CLI_EDATA) naming opt, the option that raises the limit (NULL: none). */
int cli_in_read_all(cli_in *in, char **data, size_t *len, uint64_t max, const char *opt);
/* cli_in_read_all for a JSON object (an OpenAI response): judges the first byte that is not
 * JSON white space (after an optional UTF-8 BOM) as soon as it arrives, and refuses what
 * cannot start an object before reading on. The bound is --max-record. */
int cli_in_read_json_object(cli_in *in, char **data, size_t *len, uint64_t max);
/* cli_in_read_json_object for a reader that only reads the bytes: a named regular file
 * of at least CLI_MAP_MIN bytes is mapped read-only instead of read (no NUL after it then);
 * give the data back with cli_in_release. */
int cli_in_load_json_object(cli_in *in, const char **data, size_t *len, uint64_t max);
void cli_in_release(cli_in *in, const char *data);
#define CLI_MAP_MIN ((uint64_t)1 << 20)

/* ---- output ---------------------------------------------------------------------------
 * The command loses nothing it did not make:
 *   -o FILE, a new or an existing regular file (also through a symlink: the link's target
 *     is replaced, the link stays): the output goes to a new temporary file .NAME.XXXXXX
 *     beside it, renamed over FILE only on success; on an error, SIGINT, SIGTERM or SIGHUP
 *     the temporary file is removed and FILE is as it was. An existing file's mode is kept
 *     (a new one gets 0666 less the umask); other hard links to it keep the old content.
 *   -o a device, FIFO or other non-regular file: written in place, never truncated or
 *     removed; what was written before an error stays written.
 *   stdout: written in place; when it is a regular file, an error cuts it back to the
 *     size it had (bytes past its end at the start are taken away again; bytes overwritten
 *     inside it, possible only with `1<>FILE`, are not restored). To a pipe or a device,
 *     what was written stays written. */
typedef enum cli_out_kind { CLI_OUT_STDOUT, CLI_OUT_TEMP, CLI_OUT_DIRECT } cli_out_kind;

typedef struct cli_out {
  const char *name;   /* as given; "-" is stdout */
  char *label;        /* the name escaped for messages (cli_out_label) */
  FILE *f;
  cli_out_kind kind;
  char *final_path;   /* CLI_OUT_TEMP: the file renamed over on success */
  char *temp_path;    /* CLI_OUT_TEMP: the temporary file */
  int failed;
  int cut_on_fail;    /* stdout, a regular file: cut back to cut_at on failure */
  int64_t cut_at;
  char *vbuf;         /* the stream's buffer (CLI_OUT_BUFFER bytes), freed at close */
} cli_out;
#define CLI_OUT_BUFFER (1u << 20)

const char *cli_out_label(const cli_out *o);
/* CLI_EUSAGE (printed) when output (a path, or NULL or "-": stdout) is the same regular file
 * (device and inode) as the input `in`: writing would destroy the input. Call it before
 * cli_out_open, for every input. Non-regular files (/dev/null in and out) pass. */
int cli_out_check_input(const char *output, const cli_in *in);
/* Opens path for writing ("-" or NULL: stdout), as described above. binary: refuse a
 * terminal on stdout. */
int cli_out_open(cli_out *o, const char *path, int binary);
int cli_out_write(cli_out *o, const void *p, size_t n);
/* Flushes and closes. ok != 0 and no write error: a temporary file is renamed into place.
 * Otherwise the temporary file is removed, a regular stdout cut back; devices, FIFOs and
 * pipes are left as they are. Returns CLI_EIO on a write or rename error (printed). */
int cli_out_close(cli_out *o, int ok);
/* Whether cli_out_close(o, 0) takes back what was written: a temporary file, a regular
 * stdout file (not a pipe, device or FIFO). */
int cli_out_can_take_back(const cli_out *o);
/* A regular file, not in append mode (fseek then works for writes). */
int cli_out_seekable(const cli_out *o);
/* Flushes stdout; CLI_EIO with the errno text on a write error (CLI_OK otherwise). For the
 * commands that print to stdout (help, cpu, inspect, verify, bench). */
int cli_flush_stdout(void);

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

/* --dtype NAME (embd_dtype_parse's names: f32 f16 bf16 fp8-e4m3 fp8-e5m2 int8 uint8 binary
 * ubinary and the servers' spellings). 0 ok, else CLI_EUSAGE (message printed, naming opt). */
int cli_parse_dtype(const char *s, const char *opt, embd_dtype *out);

/* ---- vector sinks, the --to formats: formats.h ------------------------------------------ */

#endif
