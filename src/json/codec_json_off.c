/* Built with EMBD_WITH_OPENAI=OFF (no C++): the handshake parsers are unavailable. */
#include <string.h>

#include "embd/codec.h"
#include "internal.h"

embd_result embd_codec_hello_parse(const char *json, size_t len, embd_codec_hello *out,
                                   embd_error *err) {
  (void)json, (void)len;
  if (out) memset(out, 0, sizeof *out);
  return embd_fail(err, EMBD_ERR_UNAVAILABLE, 0,
                   "HELLO parsing needs EMBD_WITH_OPENAI: embd was built with EMBD_WITH_OPENAI=OFF");
}

embd_result embd_codec_ready_parse(const char *json, size_t len, embd_codec_ready *out,
                                   embd_error *err) {
  (void)json, (void)len;
  if (out) memset(out, 0, sizeof *out);
  return embd_fail(err, EMBD_ERR_UNAVAILABLE, 0,
                   "READY parsing needs EMBD_WITH_OPENAI: embd was built with EMBD_WITH_OPENAI=OFF");
}
