/* embd CLI: the rows of decoded OpenAI responses into a --to sink, and batch output files
 * (OpenAI's Batch API, Azure OpenAI, Together, vLLM's run_batch: JSON Lines, one request a
 * line) streamed: each line read into one reused buffer (lines.h), decoded by
 * embd_openai_batch_line into storage reused line after line, its rows written at once.
 * Memory follows the largest line, never the file. cmd_openai.c parses the options and
 * calls in here. */
#ifndef EMBD_CLI_OPENAI_STREAM_H
#define EMBD_CLI_OPENAI_STREAM_H

#include "cli.h"
#include "formats.h"

/* Each vector of e into the sink, in order; keep: in the wire dtype (le: a row_bytes
 * buffer when the rows are big-endian multi-byte elements, else NULL). where: what comes
 * before "vector N" in messages ("" or "out.jsonl line 4 "). Returns an exit code. */
int openai_rows(cli_sink *sink, const embd_openai_embeddings *e, int keep, uint8_t *le,
                const char *where);

typedef struct openai_batch_args {
  char **files;          /* the inputs in order ("-": stdin) */
  int nfiles;
  cli_in *first;         /* files[0], opened (and peeked) by the caller; closed here */
  const char *output;    /* -o (NULL: stdout) */
  const char *ids;       /* --ids FILE or NULL */
  const char *failed;    /* --failed FILE or NULL */
  cli_fmt to;
  const cli_fmt_opts *fo;
  const embd_openai_options *oo;
  uint32_t want_dims;    /* --dims, 0: any */
  uint64_t max_record;   /* the longest line */
  int verbose, keep;
} openai_batch_args;

/* Streams the files' lines to the output. Returns an exit code: CLI_OK; CLI_EPEER (5) when
 * requests stayed failed (every row of the others written, the outputs kept, a summary on
 * stderr); else an error (printed; the outputs taken back). */
int openai_batch(const openai_batch_args *a);

#endif
