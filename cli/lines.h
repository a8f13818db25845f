/* embd CLI: a line reader over cli_in in bounded memory: reads `chunk` bytes at a time into
 * one buffer that grows only for a longer line, up to a bound. JSON lines (jsonl.c) and
 * batch output files (openai_stream.c) both read through it. */
#ifndef EMBD_CLI_LINES_H
#define EMBD_CLI_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

typedef struct cli_lines {
  cli_in *in;
  char *buf; /* cap + 1 bytes: buf[end] is NUL (strtof stops there on a last line) */
  size_t cap, beg, end, scan;
  uint64_t max;
  char first; /* every line's first byte that is not white space, or 0: see cli_lines_init */
  int eof;
} cli_lines;

/* max: the longest line accepted. first: when not 0, a partial line whose first byte that
 * is not white space (spaces, tabs, CR; an UTF-8 byte order mark too) is something else
 * is handed out as soon as that byte is in, so the caller's check fails on it at once
 * (`embd encode /dev/zero` must not read until memory runs out). chunk: bytes read at a
 * time (a small regular file gets a buffer of its size). CLI_OK or CLI_EINTERNAL
 * (printed). */
int cli_lines_init(cli_lines *r, cli_in *in, uint64_t max, char first, size_t chunk);
/* 1: a line [*ls, *le) (without its '\n'), valid until the next call; 0: the end; -1: an
 * error, its exit code in *rc (CLI_EDATA: the line is longer than max, *ls..*le its
 * start; else printed). */
int cli_lines_next(cli_lines *r, const char **ls, const char **le, int *rc);
void cli_lines_free(cli_lines *r);

#endif
