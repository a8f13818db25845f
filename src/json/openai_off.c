/* embd/openai.h when the library is built without EMBD_WITH_OPENAI (no C++): the
 * functions exist, decode and append report EMBD_ERR_UNAVAILABLE. */
#include <string.h>

#include "embd/openai.h"
#include "internal.h"

void embd_openai_init(embd_openai_embeddings *e) {
  if (e) memset(e, 0, sizeof *e);
}

void embd_openai_free(embd_openai_embeddings *e) {
  if (e) memset(e, 0, sizeof *e);
}

static embd_result unavailable(embd_openai_embeddings *e, embd_error *err) {
  if (e) embd_openai_free(e);
  return embd_fail(err, EMBD_ERR_UNAVAILABLE, 0,
                   "embd was built without EMBD_WITH_OPENAI (C++)");
}

embd_result embd_openai_decode(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  (void)json, (void)len, (void)opt;
  return unavailable(e, err);
}

embd_result embd_openai_append(embd_openai_embeddings *e, const char *json, size_t len,
                               const embd_openai_options *opt, embd_error *err) {
  (void)json, (void)len, (void)opt;
  return unavailable(e, err);
}

embd_result embd_openai_decode_bytes(embd_openai_embeddings *e, const void *body, size_t len,
                                     const char *metadata, size_t mlen,
                                     const embd_openai_options *opt, embd_error *err) {
  (void)body, (void)len, (void)metadata, (void)mlen, (void)opt;
  return unavailable(e, err);
}

embd_result embd_openai_decode_bytes_only(embd_openai_embeddings *e, const void *body, size_t len,
                                          size_t dims, const embd_openai_options *opt,
                                          embd_error *err) {
  (void)body, (void)len, (void)dims, (void)opt;
  return unavailable(e, err);
}

embd_result embd_openai_batch_line(embd_openai_embeddings *e, const char *line, size_t len,
                                   const embd_openai_options *opt, embd_openai_batch_info *info,
                                   embd_error *err) {
  (void)line, (void)len, (void)opt;
  if (info) {
    memset(info, 0, sizeof *info);
    info->custom_id = info->error_code = info->error_message = info->error_type = "";
  }
  return unavailable(e, err);
}

int embd_openai_is_batch_line(const char *buf, size_t len) {
  (void)buf, (void)len;
  return 0;
}
