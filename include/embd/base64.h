/* embd: base64 (RFC 4648) decode and encode, strict by default, and the float32 form
 * OpenAI-compatible services use for embeddings (little-endian float32 bytes, base64).
 *
 *   size_t cap = embd_base64_decoded_max(len);
 *   uint8_t *bytes = malloc(cap);
 *   size_t n;
 *   embd_error err;
 *   if (embd_base64_decode(text, len, 0, bytes, cap, &n, &err) != EMBD_OK)
 *     fprintf(stderr, "%s\n", err.message);   // e.g. "invalid character ' ' at 17"
 *
 *   float v[1536];
 *   size_t dims;
 *   embd_base64_decode_f32(text, len, 0, v, 1536, &dims, &err);  // host floats, any host
 *
 * Strict decoding (flags 0) accepts exactly RFC 4648 §4 with padding: the length is a
 * multiple of 4, every character is in the alphabet (whitespace is not), '=' appears only
 * as "xx==" or "xxx=" at the very end, and the unused bits of the last character are zero.
 * Checks run in this order, so every implementation reports the same error:
 *   1. the length rule                        EMBD_ERR_BASE64_LENGTH, offset = len
 *   2. the output capacity (exact size from the length and the trailing '=')
 *                                             EMBD_ERR_OUTPUT_TOO_SMALL, offset 0
 *      (embd_base64_decode_f32 first: that size a multiple of 4, EMBD_ERR_BASE64_F32_LENGTH)
 *   3. the characters, first to last: the first offending one is reported with its offset:
 *      EMBD_ERR_BASE64_CHAR (outside the alphabet), EMBD_ERR_BASE64_PADDING (a '=' anywhere
 *      but the allowed end positions: the offset of that '='), EMBD_ERR_BASE64_TRAILING_BITS.
 * On any error *written is 0 and the output holds nothing usable (never a truncated or
 * padded result), except EMBD_ERR_OUTPUT_TOO_SMALL: *written (*count for _f32) is then the
 * size needed, exact (a size query: dst NULL, cap 0). The encoders do the same. Nothing is written past `cap`, nothing read past `len`.
 *
 * Thread safety: every function here is reentrant (the kernel dispatcher is atomic).
 */
#ifndef EMBD_BASE64_H
#define EMBD_BASE64_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RFC 4648 §5 URL-safe alphabet: '-' and '_' in place of '+' and '/'. */
#define EMBD_BASE64_URL 0x1u
/* Decode: padding optional: "xx==", "xxx=" or "xx", "xxx" at the end (a length of 1 mod 4
 * stays an error; so does partial padding such as "xx="). Encode: no '=' written. */
#define EMBD_BASE64_NOPAD 0x2u
#define EMBD_BASE64_KNOWN_FLAGS 0x3u

/* An upper bound of the decoded size of `len` characters (exact for valid padded input
 * without '='): ceil(len / 4) * 3, computed without overflow. */
EMBD_API size_t embd_base64_decoded_max(size_t len);
/* The exact encoded length of `n` bytes with `flags`; EMBD_ERR_INVALID_ARGUMENT on
 * overflow or unknown flags. */
EMBD_API embd_result embd_base64_encoded_size(size_t n, unsigned flags, size_t *size);

/* Decodes src[0 .. len) into dst[0 .. cap); the byte count in *written. `err` may be NULL.
 * `dst` must not overlap `src`. */
EMBD_API embd_result embd_base64_decode(const char *src, size_t len, unsigned flags, void *dst,
                                        size_t cap, size_t *written, embd_error *err);
/* Encodes src[0 .. n) into dst[0 .. cap) (no terminating NUL); the length in *written.
 * EMBD_ERR_OUTPUT_TOO_SMALL (nothing written, *written = the length needed) when it does
 * not fit. */
EMBD_API embd_result embd_base64_encode(const void *src, size_t n, unsigned flags, char *dst,
                                        size_t cap, size_t *written);

/* base64 of little-endian float32 bytes -> host floats (dst has room for cap floats); the
 * float count in *count. A decoded length that is not a multiple of 4 is
 * EMBD_ERR_BASE64_F32_LENGTH and no vector comes out. */
EMBD_API embd_result embd_base64_decode_f32(const char *src, size_t len, unsigned flags,
                                            float *dst, size_t cap, size_t *count,
                                            embd_error *err);
/* Host floats -> base64 of their little-endian float32 bytes. */
EMBD_API embd_result embd_base64_encode_f32(const float *v, size_t n, unsigned flags, char *dst,
                                            size_t cap, size_t *written);

/* One implementation, callable directly, with the full contract of the functions above
 * (the tests and benchmarks compare them): implementation `index` of
 * EMBD_KERNEL_BASE64_DECODE / _ENCODE (see embd_impl_get), or NULL when this CPU cannot
 * run it or the index is out of range. */
typedef embd_result (*embd_base64_decode_fn)(const char *src, size_t len, unsigned flags,
                                             void *dst, size_t cap, size_t *written,
                                             embd_error *err);
typedef embd_result (*embd_base64_encode_fn)(const void *src, size_t n, unsigned flags,
                                             char *dst, size_t cap, size_t *written);
EMBD_API embd_base64_decode_fn embd_base64_decode_impl(size_t index);
EMBD_API embd_base64_encode_fn embd_base64_encode_impl(size_t index);

#ifdef __cplusplus
}
#endif

#endif
