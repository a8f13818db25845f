/* msgpack mode for the WebAssembly build: msgpack-c (Debian ships it as a compiled
 * library only) is not in it, so its functions report EMBD_ERR_UNAVAILABLE as
 * src/codec/codec_stream_off.c does; protobuf mode (src/codec/codec_proto.c, no
 * dependency) is compiled in. Built by scripts/build-wasm.sh only. */
#include "embd/codec_stream.h"
#include "internal.h"

static embd_result off(embd_error *err) {
  return embd_fail(err, EMBD_ERR_UNAVAILABLE, 0,
                   "msgpack mode is not in embd's WebAssembly build (no msgpack-c)");
}
embd_result embd_codec_msgpack_create(const embd_codec_stream_options *opt,
                                      embd_codec_msgpack_reader **out) {
  (void)opt;
  if (out) *out = NULL;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_codec_msgpack_feed(embd_codec_msgpack_reader *r, const void *data, size_t len,
                                    embd_error *err) {
  (void)r, (void)data, (void)len;
  return off(err);
}
embd_result embd_codec_msgpack_finish(embd_codec_msgpack_reader *r, embd_error *err) {
  (void)r;
  return off(err);
}
void embd_codec_msgpack_destroy(embd_codec_msgpack_reader *r) { (void)r; }
uint64_t embd_codec_msgpack_frames(const embd_codec_msgpack_reader *r) { return (void)r, 0; }
uint64_t embd_codec_msgpack_offset(const embd_codec_msgpack_reader *r) { return (void)r, 0; }
embd_result embd_codec_msgpack_encoded_size(const embd_codec_stream_frame *f, size_t *size) {
  (void)f, (void)size;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_codec_msgpack_encode(const embd_codec_stream_frame *f, void *out, size_t cap,
                                      size_t *written) {
  (void)f, (void)out, (void)cap;
  if (written) *written = 0;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_codec_msgpack_delta_encoded_size(const embd_codec_stream_frame *f, uint32_t base_id,
                                                  size_t *size) {
  (void)f, (void)base_id, (void)size;
  return EMBD_ERR_UNAVAILABLE;
}
embd_result embd_codec_msgpack_delta_encode(const embd_codec_stream_frame *f, uint32_t base_id, void *out,
                                            size_t cap, size_t *written) {
  (void)f, (void)base_id, (void)out, (void)cap;
  if (written) *written = 0;
  return EMBD_ERR_UNAVAILABLE;
}
