/* embd serve: the client's request body -> what the front asks its upstream.
 *
 * No HTTP and no allocation here, so that fuzz/fuzz_serve_request.c drives the same code
 * the server runs. A body is read as RFC 8259 JSON, all of it, with the first fault
 * reported at its byte; its top level must be an object. What each route reads:
 *   /v1/embed        {"text": <string>, "model"?: <string>, ...}           one input
 *   /v1/embed/batch  {"texts": [<string>, ...], "model"?: <string>, ...}    one per text
 *   /v1/embeddings   {"input": <string | [string] | [int] | [[int]]>, "model"?,
 *                     "encoding_format"?: "float" | "base64", "dtype"?, ...} (OpenAI's)
 * "dtype" (any route) names the element type of the EMBD frames answered (embd's
 * version-2 frames: f16, bf16, int8, ...; embd_dtype_parse's names); it is the front's
 * field, never sent upstream. Every other member is passed upstream as its bytes came.
 * The upstream body is {"input": ..., "model": ..., "encoding_format": "base64", <the
 * client's other members>} (serve_request_upstream), or for a JSON answer on
 * /v1/embeddings the client's own encoding_format (the upstream's JSON is then answered as
 * it came). */
#ifndef EMBD_SERVE_REQUEST_H
#define EMBD_SERVE_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <embd.h>

typedef enum serve_route {
  SERVE_ROUTE_EMBED = 0,   /* POST /v1/embed */
  SERVE_ROUTE_BATCH = 1,   /* POST /v1/embed/batch */
  SERVE_ROUTE_OPENAI = 2,  /* POST /v1/embeddings */
} serve_route;

/* A span of the body: bytes [off, off + len). */
typedef struct serve_span {
  size_t off, len;
} serve_span;

#define SERVE_MAX_PASSTHROUGH 32 /* other members of the request object (more: a 400) */

typedef struct serve_request {
  serve_route route;
  size_t count;            /* inputs: the vectors the answer holds */
  serve_span input;        /* the JSON value sent upstream as "input" */
  serve_span model;        /* the client's "model" value (a JSON string); len 0: none */
  int encoding_base64;     /* /v1/embeddings: the client asked encoding_format "base64" */
  int has_dtype;           /* "dtype" given */
  embd_dtype dtype;        /* the frames' dtype (EMBD_DTYPE_F32 without "dtype") */
  size_t npass;            /* members passed through as they came (key and value) */
  serve_span pass_key[SERVE_MAX_PASSTHROUGH], pass_value[SERVE_MAX_PASSTHROUGH];
} serve_request;

/* A refusal: the message names the byte of the body (offset) where it applies. */
typedef struct serve_fault {
  size_t offset;
  char message[200];
} serve_fault;

/* Reads body[0 .. len) for `route` into *req. 0 on success; -1 with *fault filled (a
 * malformed request: the front answers 400 with the message). */
int serve_request_parse(serve_request *req, serve_route route, const char *body, size_t len,
                        serve_fault *fault);

/* The upstream request body into out[0 .. cap): *written bytes (returns 0), or -1 when cap
 * is too small (*written is then the size needed). default_model (a plain string, may be
 * NULL) replaces a missing model or the seed client's placeholder "default".
 * keep_encoding: /v1/embeddings answered as JSON: the client's encoding_format (if any) is
 * kept instead of "base64". */
int serve_request_upstream(const serve_request *req, const char *body, const char *default_model,
                           int keep_encoding, char *out, size_t cap, size_t *written);

/* Validates json[0 .. len) as one RFC 8259 value with nothing after it (whitespace
 * allowed); 0, or -1 with *fault at the byte. Exposed for the tests and the fuzz target. */
int serve_json_validate(const char *json, size_t len, serve_fault *fault);

#endif
