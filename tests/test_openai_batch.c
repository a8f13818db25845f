/* Batch output lines (embd_openai_batch_line, embd/openai.h): the line shapes of OpenAI's
 * Batch API, Azure, Together and vLLM's run_batch, written out here; float and base64
 * bodies, vLLM dtypes and byte orders through the options, shuffled data[], keys in any
 * order at every level, unknown keys, both kinds of failed request (a status >= 400 with
 * an error body; "response": null with an "error"), vLLM's error forms, custom_ids with
 * escapes and non-ASCII, every cut of a line, trailing content, strict JSON everywhere,
 * a malformed body's fault at its byte of the line, and the storage reuse: a stream of
 * lines of one shape keeps e's rows and info's strings where the first line put them.
 * Expected values are float32 bit patterns (exact values written in the test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "testutil.h"

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The four values every fixture holds: exact in f32, f16 and bf16. */
static const float V4[4] = {1.0f, -2.0f, 0.5f, 0.15625f};

static void expect_row(const embd_openai_embeddings *e, size_t row, const float *want, size_t dims) {
  assert_non_null(e->values);
  assert_int_equal(e->dims, dims);
  for (size_t j = 0; j < dims; j++) assert_int_equal(f_bits(e->values[row * dims + j]), f_bits(want[j]));
}

static embd_result line_c(embd_openai_embeddings *e, const char *s, const embd_openai_options *o,
                          embd_openai_batch_info *info, embd_error *err) {
  return embd_openai_batch_line(e, s, strlen(s), o, info, err);
}

static void expect_str(const char *got, size_t got_len, const char *want, size_t want_len) {
  assert_non_null(got);
  assert_int_equal(got_len, want_len);
  assert_memory_equal(got, want, want_len ? want_len : 1);
  assert_int_equal(got[got_len], 0);
}
#define EXPECT_STR(got, len, lit) expect_str((got), (len), (lit), sizeof(lit) - 1)

/* The offset of the first occurrence of needle in the line (it must be there). */
static size_t at_of(const char *line, const char *needle) {
  const char *p = strstr(line, needle);
  assert_non_null(p);
  return (size_t)(p - line);
}

/* The documented OpenAI shape, float body, trailing "\n". */
static const char OPENAI_FLOAT[] =
    "{\"id\":\"batch_req_123\",\"custom_id\":\"doc-17\",\"response\":{\"status_code\":200,"
    "\"request_id\":\"req_abc\",\"body\":{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,"
    "\"embedding\":[1.0,-2,0.5,0.15625]}],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":5,"
    "\"total_tokens\":5}}},\"error\":null}\n";

static void test_openai_float(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  assert_int_equal(line_c(&e, OPENAI_FLOAT, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.custom_id, info.custom_id_len, "doc-17");
  assert_int_equal(info.status_code, 200);
  assert_int_equal(info.failed, 0);
  EXPECT_STR(info.error_code, info.error_code_len, "");
  EXPECT_STR(info.error_message, info.error_message_len, "");
  EXPECT_STR(info.error_type, info.error_type_len, "");
  assert_int_equal(e.count, 1);
  expect_row(&e, 0, V4, 4);
  assert_string_equal(e.model, "text-embedding-3-small");
  assert_int_equal(e.has_usage, 1);
  assert_int_equal(e.prompt_tokens, 5);
  /* "\r\n", no newline, spaces/tabs before and after: the same */
  const size_t n = strlen(OPENAI_FLOAT);
  char buf[1024];
  memcpy(buf, OPENAI_FLOAT, n - 1);
  memcpy(buf + n - 1, "\r\n", 2);
  assert_int_equal(embd_openai_batch_line(&e, buf, n + 1, NULL, &info, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  assert_int_equal(embd_openai_batch_line(&e, buf, n - 1, NULL, &info, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  buf[0] = ' ';
  buf[1] = '\t';
  memcpy(buf + 2, OPENAI_FLOAT, n - 1);
  memcpy(buf + 2 + n - 1, " \t\n", 3);
  assert_int_equal(embd_openai_batch_line(&e, buf, n + 4, NULL, &info, &err), EMBD_OK);
  expect_row(&e, 0, V4, 4);
  /* a UTF-8 byte order mark before it (a file's first line) */
  memcpy(buf, "\xEF\xBB\xBF", 3);
  memcpy(buf + 3, OPENAI_FLOAT, n);
  assert_int_equal(embd_openai_batch_line(&e, buf, n + 3, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.custom_id, info.custom_id_len, "doc-17");
  assert_int_equal(embd_openai_is_batch_line(OPENAI_FLOAT, n), 1);
  assert_int_equal(embd_openai_is_batch_line(buf, n + 3), 1);
  embd_openai_free(&e);
}

static void test_base64_and_dtypes(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  /* default base64: float32 little-endian */
  const char *b64 =
      "{\"custom_id\":\"r1\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,"
      "\"embedding\":\"AACAPwAAAMAAAAA/AAAgPg==\"}]}},\"error\":null}";
  assert_int_equal(line_c(&e, b64, NULL, &info, &err), EMBD_OK);
  expect_row(&e, 0, V4, 4);
  /* vLLM embed_dtype / endianness: told through the options */
  struct {
    uint64_t dtype;
    uint32_t order;
    const char *text;
  } cases[] = {
      {EMBD_DTYPE_F32, EMBD_ORDER_BE, "P4AAAMAAAAA/AAAAPiAAAA=="},
      {EMBD_DTYPE_F16, EMBD_ORDER_BE, "PADAADgAMQA="},
      {EMBD_DTYPE_F16, EMBD_ORDER_LE, "ADwAwAA4ADE="},
      {EMBD_DTYPE_BF16, EMBD_ORDER_LE, "gD8AwAA/ID4="},
      {EMBD_DTYPE_BF16, EMBD_ORDER_BE, "P4DAAD8APiA="},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char line[512];
    snprintf(line, sizeof line,
             "{\"id\":\"vllm-1\",\"custom_id\":\"v%zu\",\"response\":{\"status_code\":200,\"request_id\":\"vllm-batch-1\","
             "\"body\":{\"id\":\"embd-1\",\"object\":\"list\",\"created\":1,\"model\":\"m\",\"data\":[{\"index\":0,"
             "\"object\":\"embedding\",\"embedding\":\"%s\"}],\"usage\":{\"prompt_tokens\":3,\"total_tokens\":3,"
             "\"completion_tokens\":0,\"prompt_tokens_details\":null}}},\"error\":null}\n",
             c, cases[c].text);
    embd_openai_options o;
    memset(&o, 0, sizeof o);
    o.dtype = cases[c].dtype;
    o.byte_order = cases[c].order;
    assert_int_equal(line_c(&e, line, &o, &info, &err), EMBD_OK);
    expect_row(&e, 0, V4, 4);
    assert_int_equal(info.custom_id_len, 2);
    /* kept in the wire dtype: the bytes as they came */
    o.flags = EMBD_OPENAI_KEEP_DTYPE;
    assert_int_equal(line_c(&e, line, &o, &info, &err), EMBD_OK);
    assert_null(e.values);
    assert_non_null(e.data);
    assert_int_equal(e.dtype, cases[c].dtype);
    assert_int_equal(e.byte_order, cases[c].order);
    if (cases[c].dtype == EMBD_DTYPE_F16 && cases[c].order == EMBD_ORDER_BE)
      assert_memory_equal(e.data, "\x3c\x00\xc0\x00\x38\x00\x31\x00", 8);
    /* another dtype told: its own reading of the bytes (8 bytes = 8 int8 dims) */
    if (cases[c].dtype == EMBD_DTYPE_F32) continue;
    o.flags = 0;
    o.dtype = EMBD_DTYPE_INT8;
    o.byte_order = 0;
    assert_int_equal(line_c(&e, line, &o, &info, &err), EMBD_OK);
    assert_int_equal(e.dims, 8);
  }
  /* a length that is not whole elements: the body's error, inside its string */
  {
    const char *six =
        "{\"custom_id\":\"s\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,"
        "\"embedding\":\"AAAAAAAA\"}]}}}";
    assert_int_equal(line_c(&e, six, NULL, &info, &err), EMBD_ERR_BASE64_F32_LENGTH);
    assert_int_equal(e.count, 0);
    assert_true(err.offset >= at_of(six, "\"AAAAAAAA") && err.offset <= at_of(six, "\"}]}}}"));
    embd_openai_options o;
    memset(&o, 0, sizeof o);
    o.dtype = EMBD_DTYPE_F16;
    assert_int_equal(line_c(&e, six, &o, &info, &err), EMBD_OK); /* 3 f16 values */
    assert_int_equal(e.dims, 3);
    o.dtype = EMBD_DTYPE_F32;
    o.byte_order = EMBD_ORDER_BE;
    assert_int_equal(line_c(&e, six, &o, &info, &err), EMBD_ERR_BASE64_F32_LENGTH);
    assert_int_equal(err.offset, at_of(six, "\"AAAAAAAA"));
  }
  /* a number array with embed_dtype float16 kept: each value must be an f16 value */
  {
    const char *nums =
        "{\"custom_id\":\"n\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,"
        "\"embedding\":[1,-2,0.5,0.1]}]}}}";
    embd_openai_options o;
    memset(&o, 0, sizeof o);
    o.dtype = EMBD_DTYPE_F16;
    o.flags = EMBD_OPENAI_KEEP_DTYPE;
    assert_int_equal(line_c(&e, nums, &o, &info, &err), EMBD_ERR_OPENAI_DTYPE);
    assert_non_null(strstr(err.message, "line byte"));
  }
  /* Cohere-shaped body inside a batch line (the same body reader) */
  {
    const char *co =
        "{\"custom_id\":\"c\",\"response\":{\"status_code\":200,\"body\":{\"id\":\"x\",\"embeddings\":{\"float\":"
        "[[1,-2,0.5,0.15625]]},\"texts\":[\"a\"]}}}";
    assert_int_equal(line_c(&e, co, NULL, &info, &err), EMBD_OK);
    expect_row(&e, 0, V4, 4);
  }
  embd_openai_free(&e);
}

static void test_shuffled_and_key_orders(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  static const float R0[2] = {0.25f, -0.5f}, R1[2] = {3.0f, 4.5f}, R2[2] = {-1.0f, 0.0f};
  const char *lines[] = {
      /* data[] shuffled, index after embedding */
      "{\"custom_id\":\"k\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"embedding\":[3,4.5],\"index\":1},"
      "{\"index\":2,\"embedding\":[-1,0]},{\"index\":0,\"embedding\":[0.25,-0.5]}]}},\"error\":null}",
      /* custom_id last, error first, response keys reversed, body before status_code */
      "{\"error\":null,\"response\":{\"body\":{\"usage\":{\"total_tokens\":2,\"prompt_tokens\":2},\"data\":[{\"index\":2,"
      "\"embedding\":[-1,0]},{\"index\":0,\"embedding\":[0.25,-0.5]},{\"index\":1,\"embedding\":[3,4.5]}],\"model\":"
      "\"m\"},\"request_id\":\"q\",\"status_code\":200},\"id\":\"batch_req_9\",\"custom_id\":\"k\"}",
      /* unknown keys everywhere, nested values in them, whitespace, escaped key names */
      "{ \"x-extra\" : {\"a\":[1,{\"b\":null}],\"custom_id\":\"not this\"} , \"custom_\\u0069d\" : \"k\" ,\n"
      " \"response\" : { \"status_code\" : 200 , \"headers\": {\"x\": \"y\"}, \"b\\u006fdy\" : {\"object\":\"list\","
      "\"data\":[{\"index\":1,\"embedding\":[3,4.5],\"object\":\"embedding\",\"extra\":[true,false]},{\"index\":0,"
      "\"embedding\":[0.25,-0.5]},{\"embedding\":[-1,0],\"index\":2}]} } , \"error\" : null , \"z\" : 1e5 }",
      /* no "error" key at all (Together omits nothing, but a minimal writer may) */
      "{\"custom_id\":\"k\",\"response\":{\"status_code\":201,\"body\":{\"data\":[{\"index\":0,\"embedding\":[0.25,-0.5]},"
      "{\"index\":1,\"embedding\":[3,4.5]},{\"index\":2,\"embedding\":[-1,0]}]}}}",
  };
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    assert_int_equal(line_c(&e, lines[i], NULL, &info, &err), EMBD_OK);
    EXPECT_STR(info.custom_id, info.custom_id_len, "k");
    assert_int_equal(info.failed, 0);
    assert_int_equal(e.count, 3);
    expect_row(&e, 0, R0, 2);
    expect_row(&e, 1, R1, 2);
    expect_row(&e, 2, R2, 2);
    assert_int_equal(embd_openai_is_batch_line(lines[i], strlen(lines[i])), 1);
  }
  assert_int_equal(info.status_code, 201);
  embd_openai_free(&e);
}

static void test_failures(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  /* fill e first: a failed line must leave it empty */
  assert_int_equal(line_c(&e, OPENAI_FLOAT, NULL, &info, &err), EMBD_OK);
  assert_int_equal(e.count, 1);
  /* status >= 400 with the OpenAI error body */
  const char *e400 =
      "{\"id\":\"batch_req_2\",\"custom_id\":\"doc-18\",\"response\":{\"status_code\":400,\"request_id\":\"req_2\","
      "\"body\":{\"error\":{\"message\":\"This model's maximum context length is 8192 tokens.\",\"type\":"
      "\"invalid_request_error\",\"param\":null,\"code\":\"context_length_exceeded\"}}},\"error\":null}\n";
  assert_int_equal(line_c(&e, e400, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.custom_id, info.custom_id_len, "doc-18");
  assert_int_equal(info.status_code, 400);
  assert_int_equal(info.failed, 1);
  EXPECT_STR(info.error_code, info.error_code_len, "context_length_exceeded");
  EXPECT_STR(info.error_message, info.error_message_len, "This model's maximum context length is 8192 tokens.");
  EXPECT_STR(info.error_type, info.error_type_len, "invalid_request_error");
  assert_int_equal(e.count, 0);
  assert_null(e.values);
  assert_int_equal(e.model[0], 0);
  /* the same with the body before the status, and code null */
  const char *e429 =
      "{\"response\":{\"body\":{\"error\":{\"code\":null,\"message\":\"Rate limit\",\"type\":\"rate_limit_exceeded\"}},"
      "\"status_code\":429},\"custom_id\":\"doc-19\",\"error\":null}";
  assert_int_equal(line_c(&e, e429, NULL, &info, &err), EMBD_OK);
  assert_int_equal(info.status_code, 429);
  assert_int_equal(info.failed, 1);
  EXPECT_STR(info.error_code, info.error_code_len, "");
  EXPECT_STR(info.error_message, info.error_message_len, "Rate limit");
  EXPECT_STR(info.error_type, info.error_type_len, "rate_limit_exceeded");
  /* "response": null and an "error" (an expired batch) */
  const char *expired =
      "{\"id\":\"batch_req_3\",\"custom_id\":\"doc-20\",\"response\":null,\"error\":{\"code\":\"batch_expired\","
      "\"message\":\"This request could not be executed before the completion window expired.\"}}\n";
  assert_int_equal(line_c(&e, expired, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.custom_id, info.custom_id_len, "doc-20");
  assert_int_equal(info.status_code, 0);
  assert_int_equal(info.failed, 1);
  EXPECT_STR(info.error_code, info.error_code_len, "batch_expired");
  EXPECT_STR(info.error_message, info.error_message_len,
             "This request could not be executed before the completion window expired.");
  EXPECT_STR(info.error_type, info.error_type_len, "");
  assert_int_equal(e.count, 0);
  /* an error and no response key at all */
  assert_int_equal(line_c(&e, "{\"custom_id\":\"a\",\"error\":{\"code\":\"batch_cancelled\",\"message\":\"m\"}}", NULL,
                          &info, &err),
                   EMBD_OK);
  assert_int_equal(info.failed, 1);
  EXPECT_STR(info.error_code, info.error_code_len, "batch_cancelled");
  /* vLLM run_batch: a 400 response without a body and the error as a string */
  const char *vs =
      "{\"id\":\"vllm-abc\",\"custom_id\":\"v1\",\"response\":{\"status_code\":400,\"request_id\":\"vllm-batch-abc\","
      "\"body\":null},\"error\":\"Request must have a model\"}";
  assert_int_equal(line_c(&e, vs, NULL, &info, &err), EMBD_OK);
  assert_int_equal(info.status_code, 400);
  assert_int_equal(info.failed, 1);
  EXPECT_STR(info.error_message, info.error_message_len, "Request must have a model");
  EXPECT_STR(info.error_code, info.error_code_len, "");
  /* vLLM's ErrorResponse as the error: old flat form (numeric code), new nested form */
  const char *vo =
      "{\"id\":\"vllm-abc\",\"custom_id\":\"v2\",\"response\":{\"status_code\":400,\"request_id\":\"r\",\"body\":null},"
      "\"error\":{\"object\":\"error\",\"message\":\"bad dims\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}";
  assert_int_equal(line_c(&e, vo, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.error_code, info.error_code_len, "400");
  EXPECT_STR(info.error_message, info.error_message_len, "bad dims");
  EXPECT_STR(info.error_type, info.error_type_len, "BadRequestError");
  const char *vn =
      "{\"id\":\"vllm-abc\",\"custom_id\":\"v3\",\"response\":{\"status_code\":404,\"request_id\":\"r\"},"
      "\"error\":{\"error\":{\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,"
      "\"code\":404}}}";
  assert_int_equal(line_c(&e, vn, NULL, &info, &err), EMBD_OK);
  assert_int_equal(info.status_code, 404);
  EXPECT_STR(info.error_code, info.error_code_len, "404");
  EXPECT_STR(info.error_message, info.error_message_len, "The model `x` does not exist.");
  EXPECT_STR(info.error_type, info.error_type_len, "NotFoundError");
  /* a 200 status but a non-null error: failed, no vectors (whatever the body held) */
  const char *both =
      "{\"custom_id\":\"b\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[1]}],"
      "\"model\":\"m\"}},\"error\":{\"code\":\"x\",\"message\":\"y\"}}";
  assert_int_equal(line_c(&e, both, NULL, &info, &err), EMBD_OK);
  assert_int_equal(info.failed, 1);
  assert_int_equal(e.count, 0);
  assert_int_equal(e.model[0], 0);
  /* the line's error wins over the body's, field by field */
  const char *mix =
      "{\"custom_id\":\"m\",\"response\":{\"status_code\":500,\"body\":{\"error\":{\"message\":\"body msg\",\"code\":"
      "\"body_code\",\"type\":\"server_error\"}}},\"error\":{\"message\":\"line msg\"}}";
  assert_int_equal(line_c(&e, mix, NULL, &info, &err), EMBD_OK);
  EXPECT_STR(info.error_message, info.error_message_len, "line msg");
  EXPECT_STR(info.error_code, info.error_code_len, "body_code");
  EXPECT_STR(info.error_type, info.error_type_len, "server_error");
  /* a failed request's body is still strict JSON */
  const char *badjson =
      "{\"custom_id\":\"m\",\"response\":{\"status_code\":500,\"body\":{\"error\":{\"message\":\"x\",}}}}";
  assert_int_equal(line_c(&e, badjson, NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
  assert_int_equal(err.offset, at_of(badjson, ",}}}}") + 1);
  /* and the success path again after failures */
  assert_int_equal(line_c(&e, OPENAI_FLOAT, NULL, &info, &err), EMBD_OK);
  assert_int_equal(info.failed, 0);
  expect_row(&e, 0, V4, 4);
  embd_openai_free(&e);
}

static void test_custom_ids(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  struct {
    const char *json; /* the custom_id as JSON text */
    const char *want;
    size_t want_len;
  } cases[] = {
      {"\"a\\tb\"", "a\tb", 3},
      {"\"C:\\\\data\\\\f.txt\"", "C:\\data\\f.txt", 13},
      {"\"q\\\"uote\\/s\\b\\f\\n\\r\"", "q\"uote/s\b\f\n\r", 12},
      {"\"\\u00e9t\\u00e9\"", "\xC3\xA9t\xC3\xA9", 5},
      {"\"\xE6\x97\xA5\xE6\x9C\xAC-7\"", "\xE6\x97\xA5\xE6\x9C\xAC-7", 8},
      {"\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80", 4},
      {"\"a\\u0000b\"", "a\0b", 3},
      {"\"\"", "", 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char line[512];
    snprintf(line, sizeof line,
             "{\"custom_id\":%s,\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":"
             "[1,-2,0.5,0.15625]}]}},\"error\":null}\n",
             cases[c].json);
    assert_int_equal(line_c(&e, line, NULL, &info, &err), EMBD_OK);
    expect_str(info.custom_id, info.custom_id_len, cases[c].want, cases[c].want_len);
    expect_row(&e, 0, V4, 4);
    /* an error message with the same escapes */
    snprintf(line, sizeof line, "{\"custom_id\":%s,\"response\":null,\"error\":{\"message\":%s,\"code\":%s}}",
             cases[c].json, cases[c].json, cases[c].json);
    assert_int_equal(line_c(&e, line, NULL, &info, &err), EMBD_OK);
    expect_str(info.custom_id, info.custom_id_len, cases[c].want, cases[c].want_len);
    expect_str(info.error_message, info.error_message_len, cases[c].want, cases[c].want_len);
    expect_str(info.error_code, info.error_code_len, cases[c].want, cases[c].want_len);
  }
  /* invalid strings: a raw tab, a bad escape, an unpaired surrogate, invalid UTF-8 */
  const char *bad[] = {"\"a\tb\"", "\"a\\xb\"", "\"\\ud800\"", "\"\xC3\x28\"", "\"\xED\xA0\x80\""};
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    char line[256];
    snprintf(line, sizeof line, "{\"custom_id\":%s,\"response\":null,\"error\":\"x\"}", bad[c]);
    assert_int_equal(line_c(&e, line, NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
    assert_true(err.offset > 13 && err.offset < 13 + strlen(bad[c]));
    EXPECT_STR(info.custom_id, info.custom_id_len, "");
  }
  /* custom_id not a string */
  assert_int_equal(line_c(&e, "{\"custom_id\":17,\"response\":null,\"error\":\"x\"}", NULL, &info, &err),
                   EMBD_ERR_OPENAI_SHAPE);
  assert_int_equal(err.offset, 13);
  assert_non_null(strstr(err.message, "custom_id"));
  embd_openai_free(&e);
}

static void test_not_batch_lines(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  /* a plain response body */
  const char *plain = "{\"data\":[{\"index\":0,\"embedding\":[1,2]}],\"model\":\"m\"}";
  assert_int_equal(line_c(&e, plain, NULL, &info, &err), EMBD_ERR_OPENAI_SHAPE);
  assert_non_null(strstr(err.message, "not a batch output line: no \"custom_id\""));
  assert_int_equal(e.count, 0);
  assert_int_equal(embd_openai_is_batch_line(plain, strlen(plain)), 0);
  /* custom_id only */
  assert_int_equal(line_c(&e, "{\"custom_id\":\"a\"}", NULL, &info, &err), EMBD_ERR_OPENAI_SHAPE);
  assert_non_null(strstr(err.message, "no \"response\" and no \"error\""));
  EXPECT_STR(info.custom_id, info.custom_id_len, "a"); /* read before the fault */
  assert_int_equal(line_c(&e, "{\"custom_id\":\"a\",\"response\":null,\"error\":null}", NULL, &info, &err),
                   EMBD_ERR_OPENAI_SHAPE);
  /* not an object */
  assert_int_equal(line_c(&e, "[1,2]", NULL, &info, &err), EMBD_ERR_OPENAI_SHAPE);
  assert_int_equal(line_c(&e, "\"custom_id\"", NULL, &info, &err), EMBD_ERR_OPENAI_SHAPE);
  assert_int_equal(embd_openai_is_batch_line("[1,2]", 5), 0);
  /* empty lines */
  assert_int_equal(embd_openai_batch_line(&e, "", 0, NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
  assert_int_equal(line_c(&e, "\n", NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
  assert_int_equal(line_c(&e, "  \r\n", NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
  /* shape faults of a batch line */
  struct {
    const char *line;
    embd_result r;
    const char *at; /* the fault's text in the line */
  } cases[] = {
      {"{\"custom_id\":\"a\",\"custom_id\":\"b\",\"response\":null,\"error\":\"x\"}", EMBD_ERR_OPENAI_SHAPE,
       "\"b\",\"response"},
      {"{\"custom_id\":\"a\",\"response\":[],\"error\":\"x\"}", EMBD_ERR_OPENAI_SHAPE, "[]"},
      {"{\"custom_id\":\"a\",\"response\":{\"body\":{}}}", EMBD_ERR_OPENAI_SHAPE, "{\"body"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":\"200\",\"body\":{}}}", EMBD_ERR_OPENAI_SHAPE, "\"200\""},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200.0,\"body\":{}}}", EMBD_ERR_OPENAI_SHAPE, "200.0"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":99,\"body\":{}}}", EMBD_ERR_OPENAI_SHAPE, "99"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":600,\"body\":{}}}", EMBD_ERR_OPENAI_SHAPE, "600"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"status_code\":200}}", EMBD_ERR_OPENAI_SHAPE,
       "200}}"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[]},\"body\":{}}}",
       EMBD_ERR_OPENAI_SHAPE, "{}}}"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200}}", EMBD_ERR_OPENAI_SHAPE, NULL},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":null}}", EMBD_ERR_OPENAI_SHAPE, NULL},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":\"x\"}}", EMBD_ERR_OPENAI_SHAPE, "\"x\""},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"object\":\"list\"}}}", EMBD_ERR_OPENAI_SHAPE,
       "{\"object"},
      {"{\"custom_id\":\"a\",\"response\":null,\"error\":\"x\",\"error\":null}", EMBD_ERR_OPENAI_SHAPE, "null}"},
      {"{\"custom_id\":\"a\",\"response\":null,\"response\":null,\"error\":\"x\"}", EMBD_ERR_OPENAI_SHAPE,
       "null,\"error"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    assert_int_equal(line_c(&e, cases[c].line, NULL, &info, &err), cases[c].r);
    assert_int_equal(err.result, cases[c].r);
    assert_int_equal(e.count, 0);
    assert_int_equal(info.failed, 0);
    assert_int_equal(info.status_code, 0);
    if (cases[c].at) assert_int_equal(err.offset, at_of(cases[c].line, cases[c].at));
  }
  /* arguments */
  assert_int_equal(embd_openai_batch_line(&e, OPENAI_FLOAT, strlen(OPENAI_FLOAT), NULL, NULL, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_openai_batch_line(NULL, OPENAI_FLOAT, strlen(OPENAI_FLOAT), NULL, &info, &err),
                   EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_openai_batch_line(&e, NULL, 5, NULL, &info, &err), EMBD_ERR_INVALID_ARGUMENT);
  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.dtype = 99;
  assert_int_equal(line_c(&e, OPENAI_FLOAT, &o, &info, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_openai_is_batch_line(NULL, 0), 0);
  embd_openai_free(&e);
}

/* A malformed body in a successful line: the body's own errors, at their byte of the line. */
static void test_body_faults(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  struct {
    const char *line;
    embd_result r;
    const char *at;
  } cases[] = {
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[1,\"x\"]}]}}}",
       EMBD_ERR_OPENAI_SHAPE, "\"x\""},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":\"AAAAAAA*AAAAAAAA\"}]}}}",
       EMBD_ERR_BASE64_CHAR, "*"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":1,\"embedding\":[1]}]}}}",
       EMBD_ERR_OPENAI_INDEX, "1,\"emb"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[1]},"
       "{\"index\":1,\"embedding\":[1,2]}]}}}",
       EMBD_ERR_OPENAI_DIMS, "[1,2]"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[1e39]}]}}}",
       EMBD_ERR_OPENAI_SHAPE, "1e39"},
      /* strict JSON inside the body and around it */
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[1,]}]}}}",
       EMBD_ERR_OPENAI_JSON, "]}]}}}"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[{\"index\":0,\"embedding\":[01]}]}}}",
       EMBD_ERR_OPENAI_JSON, "01]"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[],\"model\":tru}}}",
       EMBD_ERR_OPENAI_JSON, "tru"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"request_id\":NaN,\"body\":{\"data\":[]}}}",
       EMBD_ERR_OPENAI_JSON, "NaN"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[]},}}", EMBD_ERR_OPENAI_JSON,
       "}}"},
      {"{\"custom_id\":\"a\",\"response\":{\"status_code\":200,\"body\":{\"data\":[]}},\"id\" \"x\"}",
       EMBD_ERR_OPENAI_JSON, "\"x\"}"},
      /* the body before the status: checked as JSON where it is, decoded after */
      {"{\"custom_id\":\"a\",\"response\":{\"body\":{\"data\":[{\"index\":0,\"embedding\":[true]}]},\"status_code\":200}}",
       EMBD_ERR_OPENAI_SHAPE, "true"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    assert_int_equal(line_c(&e, cases[c].line, NULL, &info, &err), cases[c].r);
    assert_int_equal(e.count, 0);
    assert_null(e.values);
    if (err.offset != at_of(cases[c].line, cases[c].at)) print_message("case %zu: %s\n", c, err.message);
    assert_int_equal(err.offset, at_of(cases[c].line, cases[c].at));
    assert_non_null(strstr(err.message, "line byte"));
    EXPECT_STR(info.custom_id, info.custom_id_len, "a"); /* came first */
  }
  /* the options' counts and dims apply to the body */
  embd_openai_options o;
  memset(&o, 0, sizeof o);
  o.expected_dims = 3;
  assert_int_equal(line_c(&e, OPENAI_FLOAT, &o, &info, &err), EMBD_ERR_OPENAI_DIMS);
  o.expected_dims = 4;
  o.expected_count = 2;
  assert_int_equal(line_c(&e, OPENAI_FLOAT, &o, &info, &err), EMBD_ERR_OPENAI_COUNT);
  o.expected_count = 1;
  assert_int_equal(line_c(&e, OPENAI_FLOAT, &o, &info, &err), EMBD_OK);
  /* ... but not to a failed request (no body to count) */
  o.expected_count = 5;
  assert_int_equal(line_c(&e, "{\"custom_id\":\"a\",\"response\":null,\"error\":\"x\"}", &o, &info, &err), EMBD_OK);
  assert_int_equal(info.failed, 1);
  embd_openai_free(&e);
}

/* Every cut of a line is an error with no vectors; so is anything after it. */
static void test_cuts_and_trailing(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  const char *lines[] = {
      OPENAI_FLOAT,
      "{\"id\":\"batch_req_3\",\"custom_id\":\"d\\u00e9\",\"response\":null,\"error\":{\"code\":\"batch_expired\","
      "\"message\":\"expired\"}}\n",
      "{\"response\":{\"body\":{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAAMAAAAA/AAAgPg==\"}]},\"status_code\":200},"
      "\"custom_id\":\"x\"}\n",
  };
  for (size_t l = 0; l < sizeof lines / sizeof lines[0]; l++) {
    const size_t n = strlen(lines[l]);
    assert_int_equal(embd_openai_batch_line(&e, lines[l], n, NULL, &info, &err), EMBD_OK);
    char *buf = malloc(n + 8);
    assert_non_null(buf);
    /* n - 1: the line without its "\n" is still whole */
    for (size_t k = 0; k < n - 1; k++) {
      memcpy(buf, lines[l], k); /* exact-size prefix: nothing past it is read */
      embd_result r = embd_openai_batch_line(&e, buf, k, NULL, &info, &err);
      assert_int_not_equal(r, EMBD_OK);
      assert_int_equal(e.count, 0);
      assert_int_equal(info.failed, 0);
      assert_true(err.offset <= k);
    }
    static const char *const tails[] = {"x", "\n\n", "\n{}", "\r", "\n ", ",", "}", "\r\r\n", "\v"};
    for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
      size_t tl = strlen(tails[t]);
      memcpy(buf, lines[l], n - 1);
      memcpy(buf + n - 1, tails[t], tl);
      assert_int_equal(embd_openai_batch_line(&e, buf, n - 1 + tl, NULL, &info, &err), EMBD_ERR_OPENAI_JSON);
      assert_int_equal(err.offset, n - 1 + (tails[t][0] == '\n' ? 1 : 0));
      assert_int_equal(e.count, 0);
    }
    free(buf);
  }
  embd_openai_free(&e);
}

/* A stream of lines of one shape: after the first, e's rows and the info strings stay
 * where they are (the storage is reused, nothing grows), mixed with failed lines too. */
static void test_storage_reuse(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  const float *rows = NULL;
  const char *cid = NULL;
  for (int i = 0; i < 1000; i++) {
    char line[512];
    const float a = (float)(i % 64) / 8.0f, b = -(float)(i % 32) / 4.0f;
    snprintf(line, sizeof line,
             "{\"id\":\"batch_req_%04d\",\"custom_id\":\"doc-%04d\",\"response\":{\"status_code\":200,\"request_id\":"
             "\"req_%04d\",\"body\":{\"object\":\"list\",\"data\":[{\"index\":1,\"embedding\":[%.9g,%.9g,1]},{\"index\":0,"
             "\"embedding\":[%.9g,0.5,%.9g]}],\"model\":\"m\"}},\"error\":null}\n",
             i, i, i, (double)b, (double)a, (double)a, (double)b);
    assert_int_equal(line_c(&e, line, NULL, &info, &err), EMBD_OK);
    char want[16];
    snprintf(want, sizeof want, "doc-%04d", i);
    assert_int_equal(info.custom_id_len, 8);
    assert_memory_equal(info.custom_id, want, 8);
    const float r0[3] = {a, 0.5f, b}, r1[3] = {b, a, 1.0f};
    expect_row(&e, 0, r0, 3);
    expect_row(&e, 1, r1, 3);
    if (i == 0) {
      rows = e.values;
      cid = info.custom_id;
    } else {
      assert_ptr_equal(e.values, rows);
      assert_ptr_equal(info.custom_id, cid);
    }
    if (i % 10 == 5) { /* a failed line between: the storage stays too */
      snprintf(line, sizeof line,
               "{\"id\":\"batch_req_x\",\"custom_id\":\"doc-%04d\",\"response\":{\"status_code\":500,\"body\":"
               "{\"error\":{\"message\":\"m\",\"code\":\"c\"}}},\"error\":null}",
               i);
      assert_int_equal(line_c(&e, line, NULL, &info, &err), EMBD_OK);
      assert_int_equal(info.failed, 1);
      assert_ptr_equal(info.custom_id, cid);
    }
  }
  embd_openai_free(&e);
}

/* The line is never written to. */
static void test_input_untouched(void **state) {
  (void)state;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  embd_openai_batch_info info;
  embd_error err;
  const size_t n = strlen(OPENAI_FLOAT);
  char *a = malloc(n), *b = malloc(n);
  assert_non_null(a);
  assert_non_null(b);
  memcpy(a, OPENAI_FLOAT, n);
  memcpy(b, a, n);
  assert_int_equal(embd_openai_batch_line(&e, a, n, NULL, &info, &err), EMBD_OK);
  assert_memory_equal(a, b, n);
  free(a);
  free(b);
  embd_openai_free(&e);
}

int main(void) {
  int s = tu_isa_preflight("test_openai_batch");
  if (s) return s;
  {
    embd_openai_embeddings e;
    embd_openai_init(&e);
    embd_openai_batch_info info;
    embd_error err;
    if (embd_openai_batch_line(&e, "{}", 2, NULL, &info, &err) == EMBD_ERR_UNAVAILABLE) {
      printf("test_openai_batch: SKIP: built without EMBD_WITH_OPENAI\n");
      return TU_SKIP;
    }
    embd_openai_free(&e);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_openai_float),   cmocka_unit_test(test_base64_and_dtypes),
      cmocka_unit_test(test_shuffled_and_key_orders), cmocka_unit_test(test_failures),
      cmocka_unit_test(test_custom_ids),     cmocka_unit_test(test_not_batch_lines),
      cmocka_unit_test(test_body_faults),    cmocka_unit_test(test_cuts_and_trailing),
      cmocka_unit_test(test_storage_reuse),  cmocka_unit_test(test_input_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
