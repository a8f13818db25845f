/* embd serve: the upstream's decoded vectors -> the client's answer (no HTTP here). */
#ifndef EMBD_SERVE_ANSWER_H
#define EMBD_SERVE_ANSWER_H

#include <stddef.h>

#include <embd.h>

#include "request.h"

/* A growable byte buffer (malloc'd; the front hands it to libmicrohttpd, which frees it). */
typedef struct serve_buf {
  char *data;
  size_t len, cap;
} serve_buf;

int serve_buf_reserve(serve_buf *b, size_t extra); /* 0, or -1 out of memory */
int serve_buf_put(serve_buf *b, const void *s, size_t n);
void serve_buf_free(serve_buf *b);

/* What the client gets for e (the upstream's vectors, in input order):
 *   binary: /v1/embed one EMBD frame, the other routes an EMBD batch; version 1 float32
 *           flags 0 (the seed codec's frames), or version-2 frames of req->dtype;
 *   JSON:   /v1/embed {"embedding": [...]}, /v1/embed/batch {"embeddings": [[...]]}
 *           (float32 values printed with 9 significant digits: each reads back as the same
 *           float32; NaN and infinities, which JSON has no numbers for, as null).
 * 0, or -1 with *err (out of memory; a value the asked dtype cannot hold: the message
 * names the vector and element). */
int serve_answer_binary(const serve_request *req, const embd_openai_embeddings *e, serve_buf *out,
                        embd_error *err);
int serve_answer_json(const serve_request *req, const embd_openai_embeddings *e, serve_buf *out);

/* An OpenAI-shaped error body {"error": {"message", "type", "code"}} (message escaped). */
int serve_error_json(serve_buf *out, const char *message, const char *type, const char *code);

#endif
