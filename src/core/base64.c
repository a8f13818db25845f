/* base64: the scalar implementation, the public entry points and the float32 helpers.
 * The rules and messages are in base64_driver.h, shared by every implementation. */
#include "base64_driver.h"

EMBD_B64_DEFINE_IMPL(scalar, embd_b64_dec_scalar, embd_b64_enc_scalar)

size_t embd_base64_decoded_max(size_t len) { return len / 4 * 3 + (len % 4 ? 3 : 0); }

embd_result embd_base64_encoded_size(size_t n, unsigned flags, size_t *size) {
  if (!size) return EMBD_ERR_INVALID_ARGUMENT;
  return embd_b64_encoded_size(n, flags, size);
}

embd_result embd_base64_decode(const char *src, size_t len, unsigned flags, void *dst,
                               size_t cap, size_t *written, embd_error *err) {
  return EMBD_CALL(EMBD_KERNEL_BASE64_DECODE, 0, embd_base64_decode_fn)(src, len, flags, dst,
                                                                      cap, written, err);
}

embd_result embd_base64_encode(const void *src, size_t n, unsigned flags, char *dst, size_t cap,
                               size_t *written) {
  return EMBD_CALL(EMBD_KERNEL_BASE64_ENCODE, 0, embd_base64_encode_fn)(src, n, flags, dst,
                                                                      cap, written);
}

/* The slots' values until the first call resolves every family. */
embd_result embd_base64_decode_stub_(const char *src, size_t len, unsigned flags, void *dst,
                                     size_t cap, size_t *written, embd_error *err) {
  embd_dispatch_init_();
  return embd_base64_decode(src, len, flags, dst, cap, written, err);
}

embd_result embd_base64_encode_stub_(const void *src, size_t n, unsigned flags, char *dst,
                                     size_t cap, size_t *written) {
  embd_dispatch_init_();
  return embd_base64_encode(src, n, flags, dst, cap, written);
}

embd_base64_decode_fn embd_base64_decode_impl(size_t index) {
  return (embd_base64_decode_fn)embd_impl_fn_(EMBD_KERNEL_BASE64_DECODE, index, 0);
}

embd_base64_encode_fn embd_base64_encode_impl(size_t index) {
  return (embd_base64_encode_fn)embd_impl_fn_(EMBD_KERNEL_BASE64_ENCODE, index, 0);
}

embd_result embd_base64_decode_f32(const char *src, size_t len, unsigned flags, float *dst,
                                   size_t cap, size_t *count, embd_error *err) {
  if (count) *count = 0;
  if ((!src && len) || (flags & ~EMBD_BASE64_KNOWN_FLAGS))
    return embd_base64_decode(src, len, flags, dst, 0, NULL, err); /* its argument error */
  size_t size = 0, body = 0;
  embd_result r = embd_b64_size((const uint8_t *)src, len, flags, &size, &body, err);
  if (r != EMBD_OK) return r;
  if (size % 4)
    return embd_fail(err, EMBD_ERR_BASE64_F32_LENGTH, 0,
                     "%zu base64 characters decode to %zu bytes: not a whole number of "
                     "float32 values (%zu + %zu bytes)",
                     len, size, size / 4 * 4, size % 4);
  const size_t bytes_cap = cap > SIZE_MAX / 4 ? SIZE_MAX : cap * 4;
  size_t n;
  r = embd_base64_decode(src, len, flags, dst, bytes_cap, &n, err);
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL && count) *count = size / 4; /* the floats needed */
  if (r != EMBD_OK) return r;
  embd_f32_from_le(dst, dst, n / 4); /* in place: a swap on big-endian hosts only */
  if (count) *count = n / 4;
  return EMBD_OK;
}

embd_result embd_base64_encode_f32(const float *v, size_t n, unsigned flags, char *dst,
                                   size_t cap, size_t *written) {
  if (written) *written = 0;
  if ((!v && n) || n > SIZE_MAX / 4) return EMBD_ERR_INVALID_ARGUMENT;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return embd_base64_encode(v, n * 4, flags, dst, cap, written);
#else
  /* Big-endian: encode from little-endian copies, a block at a time (no allocation). */
  size_t size;
  if (embd_b64_encoded_size(n * 4, flags, &size) != EMBD_OK) return EMBD_ERR_INVALID_ARGUMENT;
  if (size > cap || (!dst && size)) {
    if (written) *written = size; /* the characters needed */
    return EMBD_ERR_OUTPUT_TOO_SMALL;
  }
  enum { BLOCK = 768 }; /* floats: 3072 bytes, a multiple of 3 -> 4096 characters */
  uint8_t tmp[BLOCK * 4];
  size_t out = 0;
  for (size_t i = 0; i < n; i += BLOCK) {
    const size_t k = n - i < BLOCK ? n - i : BLOCK;
    embd_f32_to_le(tmp, v + i, k);
    size_t w;
    embd_result r = embd_base64_encode(tmp, k * 4, flags, dst + out, cap - out, &w);
    if (r != EMBD_OK) return r;
    out += w;
  }
  if (written) *written = out;
  return EMBD_OK;
#endif
}
