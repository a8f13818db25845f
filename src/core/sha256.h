/* SHA-256 (FIPS 180-4), one-shot. embd hashes a tokenizer map once per load (the pin a
 * READY names), so a plain portable C implementation is enough: it needs no libcrypto, and
 * it builds for every target, WebAssembly included. Not installed. */
#ifndef EMBD_SHA256_H
#define EMBD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "fail.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 32-byte digest of len bytes at data (data may be NULL when len is 0). */
EMBD_INTERNAL void embd_sha256(const void *data, size_t len, uint8_t digest[32]);

#ifdef __cplusplus
}
#endif

#endif
