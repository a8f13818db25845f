/* embd CLI: JSON lines input (one JSON array of numbers per line), read in bounded memory.
 * Separate from the commands so that the fuzz target fuzz/fuzz_jsonl.c drives the very
 * code `embd encode` runs. */
#ifndef EMBD_CLI_JSONL_H
#define EMBD_CLI_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* A data error: where (line and column from 1, the column a byte offset into the line)
 * and what. The caller prints it as "NAME:LINE:COL: MSG". */
typedef struct jsonl_error {
  unsigned long line, col;
  char msg[160];
} jsonl_error;

/* One line [ls, le) (no '\n'): *k = its number of values, UINT64_MAX for a blank line.
 * v NULL: validate only; else the values are stored in *v (grown, *vcap floats).
 * Returns CLI_OK, CLI_EDATA (*e filled; e->line is left alone) or CLI_EINTERNAL (out of
 * memory, printed). */
int jsonl_line(const char *ls, const char *le, float **v, size_t *vcap, uint64_t *k,
               jsonl_error *e);

/* Where the rows of a pass go: an exit code (its message printed) or CLI_OK. line: the
 * row's line number (from 1), for messages. */
typedef int (*jsonl_row_fn)(void *ctx, const float *v, uint32_t dims, uint64_t index,
                            unsigned long line);

/* One pass over the JSON lines of `in`: every line checked, every vector the same dims
 * (want_dims, when not 0) unless `ragged` (each vector its own dims; want_dims must then
 * be 0), each line at most max_record bytes; a line whose first byte that
 * is not white space is not '[' fails as soon as that byte is read (not at its end).
 * emit NULL: validate and count only. On CLI_EDATA from the data, e->msg is set (and the
 * caller prints it); an error from emit or from reading is printed already (e->msg "").
 * *rows and *dims: the vectors passed (or checked) and the dims of the first. */
int jsonl_pass(cli_in *in, uint32_t want_dims, int ragged, uint64_t max_record,
               jsonl_row_fn emit, void *ctx, uint64_t *rows, uint32_t *dims, jsonl_error *e);

#endif
