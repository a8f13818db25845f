/* sha256 pins as read from a peer (READY's *_hash fields, the expected hash of a tokenizer
 * map): one reader for both, defined in codec_handshake.c. */
#ifndef EMBD_CODEC_PIN_H
#define EMBD_CODEC_PIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if s[len] is "sha256:" or "SHA256:" followed by 64 hex digits of any case (what the
 * peers' map loaders accept); then norm holds the one form embd writes and compares,
 * "sha256:" + 64 lower-case hex digits + NUL (72 bytes). Else 0, norm untouched. */
int embd_sha256_pin_norm_(const char *s, size_t len, char norm[72]);

#ifdef __cplusplus
}
#endif

#endif
