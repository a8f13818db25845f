/* embd CLI: names in messages (cli/escape.c). File names and other strings from the
 * command line or the input are printed escaped, so that a newline or an escape sequence
 * in a name can neither forge a message line nor drive the terminal: control characters,
 * DEL, C1 controls, backslash and bytes that are not UTF-8 become \n \t \r \\ or \xNN;
 * printable ASCII and valid UTF-8 pass.
 *
 * A leaf of the CLI: it calls only the library, so that the format files (npy.c) and the
 * shared helpers (util.c, which writes .npy headers) both use it without calling into
 * each other (tests/cli/check_calls.py). */
#ifndef EMBD_CLI_ESCAPE_H
#define EMBD_CLI_ESCAPE_H

#include <stddef.h>

/* Writes the escaped form of s[0..n) into dst (NUL-terminated, cut to cap - 1 bytes);
 * returns the full escaped length (as snprintf). */
size_t cli_escape(char *dst, size_t cap, const void *s, size_t n);
/* The escaped form of the string s, in one of 4 static buffers used in turn: for a message
 * being formatted now, not to keep. */
const char *cli_esc(const char *s);

/* The other escapes the tool writes into outputs (not messages). Each writes the escaped
 * form of s[0..n) at o when o is not NULL and returns its length (call once with NULL to
 * size the buffer: at most 6 * n bytes).
 * cli_json_escape: the inside of a JSON string (RFC 8259): '"' and backslash escaped, control
 * characters as \n \r \t \b \f or \u00XX; every other byte as it is (the caller's
 * strings are UTF-8: the library's decoded JSON strings are checked).
 * cli_copy_text_escape: a field of PostgreSQL's text COPY format: backslash, tab, newline and
 * carriage return as two bytes each: \\ \t \n \r (a NUL byte cannot be in PostgreSQL text: the
 * caller refuses it). */
size_t cli_json_escape(char *o, const char *s, size_t n);
size_t cli_copy_text_escape(char *o, const char *s, size_t n);

#endif
