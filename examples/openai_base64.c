/* examples/openai_base64.c: OpenAI-compatible embeddings with base64 vectors.
 *
 * What a /v1/embeddings call with "encoding_format": "base64" returns: each data[] item's
 * "embedding" is the base64 of the vector's little-endian float32 bytes. This program
 *   1. plays the server: encodes three small vectors with embd_base64_encode_f32 and
 *      builds a response body around them (items deliberately out of index order);
 *   2. plays the client: decodes the body with embd_openai_decode (vectors placed by
 *      data[].index, model and usage read) and checks the floats are bit-identical;
 *   3. decodes one base64 string on its own with embd_base64_decode_f32;
 *   4. corrupts that string and the body and prints the error messages.
 * Exits 0 on success, 1 on any failure (77 if the library was built without simdjson).
 * Public API only: #include <embd.h>.
 */
#include <embd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 3
#define DIMS 8

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "openai_base64: FAILED: " __VA_ARGS__);  \
      fprintf(stderr, "\n");                                   \
      exit(1);                                                 \
    }                                                          \
  } while (0)

int main(void) {
  static const float vecs[COUNT][DIMS] = {
      {0.0023064255f, -0.009327292f, 0.015797347f, -0.0077780345f, 0.5f, -0.25f, 1e-20f, 3.0f},
      {-0.0f, 1.0f, -1.0f, 0.33333334f, 65504.0f, -2.5e-8f, 0.1f, 0.2f},
      {0.7071068f, 0.7071068f, 0.0f, 0.0f, -0.125f, 0.875f, 1.5e10f, -3.25f}};

  /* ---- server: base64 of each vector (32 bytes -> 44 characters) ---- */
  size_t b64_len;
  CHECK(embd_base64_encoded_size(DIMS * 4, 0, &b64_len) == EMBD_OK, "encoded_size");
  char b64[COUNT][64];
  for (int i = 0; i < COUNT; i++) {
    size_t n;
    embd_result r = embd_base64_encode_f32(vecs[i], DIMS, 0, b64[i], sizeof b64[i] - 1, &n);
    CHECK(r == EMBD_OK && n == b64_len, "encode: %s", embd_strerror(r));
    b64[i][n] = '\0'; /* the encoder writes no NUL */
  }
  char body[1024];
  int body_len = snprintf(body, sizeof body,
      "{\"object\":\"list\",\"data\":["
      "{\"object\":\"embedding\",\"index\":2,\"embedding\":\"%s\"},"
      "{\"object\":\"embedding\",\"index\":0,\"embedding\":\"%s\"},"
      "{\"object\":\"embedding\",\"index\":1,\"embedding\":\"%s\"}],"
      "\"model\":\"text-embedding-3-small\","
      "\"usage\":{\"prompt_tokens\":9,\"total_tokens\":9}}",
      b64[2], b64[0], b64[1]);
  CHECK(body_len > 0 && (size_t)body_len < sizeof body, "body too long");
  printf("openai_base64: response body, %d bytes:\n  %.120s...\n", body_len, body);

  /* ---- client: the whole response -> a COUNT x DIMS matrix ---- */
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_error err;
  embd_openai_options opt = {.expected_count = COUNT, .max_dims = 4096};
  embd_result r = embd_openai_decode(&e, body, (size_t)body_len, &opt, &err);
  if (r == EMBD_ERR_UNAVAILABLE) {
    printf("openai_base64: skipped: %s\n", embd_strerror(r));
    return 77;
  }
  CHECK(r == EMBD_OK, "embd_openai_decode: %s", err.message);
  CHECK(e.count == COUNT && e.dims == DIMS, "decoded %zu x %zu", e.count, e.dims);
  CHECK(strcmp(e.model, "text-embedding-3-small") == 0, "model \"%s\"", e.model);
  CHECK(e.has_usage && e.prompt_tokens == 9, "usage");
  /* row i is data[].index i, whatever the array order was */
  CHECK(memcmp(e.values, vecs, sizeof vecs) == 0, "decoded vectors differ from the input");
  printf("openai_base64: %zu vectors of %zu dims from model %s, %llu prompt tokens: "
         "bit-identical\n", e.count, e.dims, e.model, (unsigned long long)e.prompt_tokens);

  /* ---- one base64 string on its own ---- */
  float v[DIMS];
  size_t dims;
  r = embd_base64_decode_f32(b64[1], strlen(b64[1]), 0, v, DIMS, &dims, &err);
  CHECK(r == EMBD_OK, "embd_base64_decode_f32: %s", err.message);
  CHECK(dims == DIMS && memcmp(v, vecs[1], sizeof v) == 0, "single string differs");
  printf("openai_base64: \"%s\" -> %zu floats, v[1] = %g\n", b64[1], dims, (double)v[1]);

  /* ---- corrupted input: an error with its position, never a wrong vector ---- */
  char bad[64];
  memcpy(bad, b64[1], b64_len + 1);
  bad[17] = '*';
  r = embd_base64_decode_f32(bad, b64_len, 0, v, DIMS, &dims, &err);
  CHECK(r == EMBD_ERR_BASE64_CHAR && err.offset == 17, "corrupted string: got %s",
        embd_strerror(r));
  printf("openai_base64: corrupted string rejected: %s\n", err.message);

  bad[17] = b64[1][17];
  bad[b64_len - 1] = 'A'; /* '=' -> 'A': 33 bytes, not a whole number of float32s */
  r = embd_base64_decode_f32(bad, b64_len, 0, v, DIMS, &dims, &err);
  CHECK(r != EMBD_OK, "damaged padding accepted");
  printf("openai_base64: damaged padding rejected: %s\n", err.message);

  char *p = strstr(body, b64[0]);
  CHECK(p != NULL, "vector 0 not in the body");
  p[5] = ' '; /* whitespace is not base64 either */
  r = embd_openai_decode(&e, body, (size_t)body_len, &opt, &err);
  CHECK(r == EMBD_ERR_BASE64_CHAR && e.count == 0, "corrupted body: got %s", embd_strerror(r));
  printf("openai_base64: corrupted body rejected: %s\n", err.message);

  embd_openai_free(&e);
  return 0;
}
