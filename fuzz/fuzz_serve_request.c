/* Fuzz target for embd serve's request parsing (serve/request.c): the bodies clients send
 * to POST /v1/embed, /v1/embed/batch and /v1/embeddings, and the upstream body built from
 * them. Properties:
 *   - no crash, no read outside the body (an exact-size copy: ASan sees every overread);
 *   - a refusal is specific: the offset is inside the body (or its length: it ended too
 *     early), the message printable and NUL-terminated, naming the body byte;
 *   - the parser accepts only valid JSON: accepted => serve_json_validate accepts too;
 *   - accepted: count >= 1, the input, model and passed-through spans lie in the body; the
 *     upstream body (both with base64 and with the client's encoding) is itself valid JSON,
 *     sized exactly by the size-only call, and read back as an OpenAI request it has the
 *     same input bytes and count, "encoding_format" as asked, and no "dtype";
 *   - a body cut before its last non-blank byte is refused (JSON cannot end early).
 * Input layout: byte 0 % 3 the route (embed, batch, embeddings), the rest the body.
 * Built twice by fuzz/CMakeLists.txt: libFuzzer (fuzz_serve_request) and corpus replay. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what) {
  fprintf(stderr, "fuzz_serve_request: %s\n", what);
  abort();
}

static void check_fault(const serve_fault *f, size_t len) {
  if (f->offset > len) die("fault offset past the body");
  const size_t n = strnlen(f->message, sizeof f->message);
  if (n == 0 || n == sizeof f->message) die("fault message empty or not terminated");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)f->message[i] < 0x20) die("fault message not printable");
  if (!strstr(f->message, "body byte")) die("fault message does not name the byte");
}

static void in_body(serve_span s, size_t len) {
  if (s.off > len || s.len > len - s.off) die("span outside the body");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const serve_route route = (serve_route)(data[0] % 3);
  const size_t len = size - 1;
  char *body = malloc(len ? len : 1);
  if (!body) die("malloc");
  memcpy(body, data + 1, len);
  serve_request req;
  serve_fault fault;
  memset(&fault, 0, sizeof fault);
  if (serve_request_parse(&req, route, body, len, &fault)) {
    check_fault(&fault, len);
    free(body);
    return 0;
  }
  if (serve_json_validate(body, len, &fault)) die("accepted a body that is not valid JSON");
  if (req.count < 1) die("accepted with no input");
  in_body(req.input, len);
  in_body(req.model, len);
  for (size_t i = 0; i < req.npass; i++) {
    in_body(req.pass_key[i], len);
    in_body(req.pass_value[i], len);
  }
  for (int keep = 0; keep < 2; keep++) {
    size_t need = 0, got = 0;
    if (serve_request_upstream(&req, body, keep ? NULL : "m\"\x01\\", keep, NULL, 0, &need) != (need ? -1 : 0))
      die("size-only call");
    char *up = malloc(need);
    if (!up) die("malloc");
    if (serve_request_upstream(&req, body, keep ? NULL : "m\"\x01\\", keep, up, need, &got) || got != need)
      die("upstream body not the size announced");
    if (serve_json_validate(up, got, &fault)) die("upstream body is not valid JSON");
    serve_request back;
    if (serve_request_parse(&back, SERVE_ROUTE_OPENAI, up, got, &fault)) {
      /* the client's other members may hold a key the upstream reads too ("input" twice,
       * a second "model"): the front passes them as they came; only a duplicate may fail */
      if (!strstr(fault.message, "duplicate")) die("upstream body refused as a request");
    } else {
      if (back.count != req.count) die("upstream body: another input count");
      if (back.input.len != req.input.len || memcmp(up + back.input.off, body + req.input.off, req.input.len))
        die("upstream body: input bytes changed");
      if (back.has_dtype) die("upstream body carries dtype");
      if (!keep && !back.encoding_base64) die("upstream body: not base64");
    }
    free(up);
  }
  /* cut before the last non-blank byte: refused */
  size_t last = len;
  while (last && (body[last - 1] == ' ' || body[last - 1] == '\t' || body[last - 1] == '\n' ||
                  body[last - 1] == '\r'))
    last--;
  if (last) {
    char *cut = malloc(last - 1 ? last - 1 : 1);
    if (!cut) die("malloc");
    memcpy(cut, body, last - 1);
    if (!serve_request_parse(&req, route, cut, last - 1, &fault)) die("a cut body was accepted");
    check_fault(&fault, last - 1);
    free(cut);
  }
  free(body);
  return 0;
}
