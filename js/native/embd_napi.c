/* The optional Node-API addon (issue 34): the same decoders as the WebAssembly glue
 * (js/wasm/glue.c), run by the native library with its best kernels (AVX2/AVX-512/NEON
 * instead of SIMD128). js/src/embd.js loads it with load({backend: 'native'|'auto'}) and
 * routes to it only the functions js/bench.mjs shows at least 1.5x faster than the
 * WebAssembly path; everything else stays WebAssembly, so the JavaScript API, its checks
 * and its error class are one.
 *
 * Public C API only (the headers in include/embd), Node-API version 8 (Node 20 and 24 load the same
 * file). Built by scripts/build-napi.sh against the static libembd.a.
 *
 * Inputs: a Uint8Array is read in place (js/src/embd.js turns Buffers, ArrayBuffers and
 * other views into one, a view, not a copy); a string is written as UTF-8 into a buffer
 * reused across calls (UTF-8, not Latin-1: the offsets in errors are UTF-8 byte offsets, as
 * the WebAssembly path's TextEncoder gives them, and Node-API's Latin-1 conversion keeps only
 * the low byte of wider characters, which could turn an invalid character into a valid one).
 * Outputs: an ArrayBuffer allocated here, returned as a Float32Array.
 * Errors: the error factory js/src/embd.js registers (setup) builds the package's
 * EmbeddingCodecError from (message, result, offset): same code, offset and message as
 * the WebAssembly path, which reads the same embd_error. */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/base64.h"
#include "embd/convert.h"
#include "embd/openai.h"

/* Per Node environment (the main thread and each worker thread have their own). */
typedef struct addon {
  embd_openai_embeddings oa; /* parser and row storage, reused from call to call */
  char *text;                /* a string argument as UTF-8 */
  size_t text_cap;
  uint8_t *bytes;            /* decoded base64 of the non-f32 dtypes */
  size_t bytes_cap;
  napi_ref make_error;       /* (message, result, offset) => EmbeddingCodecError */
  napi_ref meta;             /* Float64Array: count, dims, has_usage, prompt, total */
} addon;

static void addon_free(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  addon *a = (addon *)data;
  embd_openai_free(&a->oa);
  free(a->text);
  free(a->bytes);
  free(a);
}

/* A Node-API call that failed: a plain Error (a bug here or out of memory, not a fault of
 * the input), unless one is already pending. */
#define NAPI(call)                                                         \
  do {                                                                     \
    if ((call) != napi_ok) return napi_fail(env, #call);                  \
  } while (0)
static napi_value napi_fail(napi_env env, const char *what) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) {
    const napi_extended_error_info *info = NULL;
    napi_get_last_error_info(env, &info);
    char msg[256];
    snprintf(msg, sizeof msg, "embd addon: %s: %s", what,
             info && info->error_message ? info->error_message : "failed");
    napi_throw_error(env, NULL, msg);
  }
  return NULL;
}

/* The package's error for err (message as the WebAssembly path makes it) into *out. */
static napi_status make_embd_error(napi_env env, addon *a, embd_result r, const embd_error *err,
                                   napi_value *out) {
  char fallback[32];
  const char *msg = err->message;
  if (!msg[0]) {
    snprintf(fallback, sizeof fallback, "embd error %d", (int)r);
    msg = fallback;
  }
  napi_value fn, args[3], undef;
  napi_status st;
  if ((st = napi_get_reference_value(env, a->make_error, &fn)) != napi_ok ||
      (st = napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &args[0])) != napi_ok ||
      (st = napi_create_int32(env, (int32_t)r, &args[1])) != napi_ok ||
      (st = napi_create_double(env, (double)err->offset, &args[2])) != napi_ok ||
      (st = napi_get_undefined(env, &undef)) != napi_ok)
    return st;
  return napi_call_function(env, undef, fn, 3, args, out);
}

static napi_value throw_embd(napi_env env, addon *a, embd_result r, const embd_error *err) {
  napi_value e;
  NAPI(make_embd_error(env, a, r, err, &e));
  napi_throw(env, e);
  return NULL;
}

static addon *get_addon(napi_env env) {
  void *d = NULL;
  if (napi_get_instance_data(env, &d) != napi_ok || !d || !((addon *)d)->make_error) {
    napi_throw_error(env, NULL, "embd addon: setup() was not called");
    return NULL;
  }
  return (addon *)d;
}

/* The input bytes of a string (as UTF-8, into a->text) or a Uint8Array (in place). */
static int input_of(napi_env env, addon *a, napi_value v, const char **p, size_t *len) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return 0;
  if (t == napi_string) {
    size_t units = 0;
    /* The UTF-16 length is O(1); UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate
     * pair, 2 units, becomes 4 bytes), so no second pass to measure. */
    if (napi_get_value_string_utf16(env, v, NULL, 0, &units) != napi_ok) return 0;
    size_t need = units * 3 + 1;
    if (need > a->text_cap) {
      char *n = (char *)malloc(need);
      if (!n) {
        napi_throw_error(env, NULL, "embd addon: out of memory");
        return 0;
      }
      free(a->text);
      a->text = n;
      a->text_cap = need;
    }
    if (napi_get_value_string_utf8(env, v, a->text, a->text_cap, len) != napi_ok) return 0;
    *p = a->text;
    return 1;
  }
  bool is_ta = false;
  if (napi_is_typedarray(env, v, &is_ta) != napi_ok || !is_ta) {
    napi_throw_type_error(env, NULL, "embd addon: expected a string or a Uint8Array");
    return 0;
  }
  napi_typedarray_type tt;
  void *data = NULL;
  if (napi_get_typedarray_info(env, v, &tt, len, &data, NULL, NULL) != napi_ok) return 0;
  if (tt != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "embd addon: expected a Uint8Array");
    return 0;
  }
  *p = data ? (const char *)data : "";
  return 1;
}

static napi_value new_f32(napi_env env, size_t n, float **data) {
  napi_value ab, ta;
  void *d = NULL;
  NAPI(napi_create_arraybuffer(env, n * sizeof(float), &d, &ab));
  NAPI(napi_create_typedarray(env, napi_float32_array, n, ab, 0, &ta));
  *data = (float *)d;
  return ta;
}

/* The type is asked first: Deno's Node-API (2.9) answers napi_get_value_uint32 on a
 * string with napi_ok instead of napi_number_expected. */
static int arg_u32(napi_env env, napi_value v, uint32_t *out) {
  napi_valuetype t;
  return napi_typeof(env, v, &t) == napi_ok && t == napi_number &&
         napi_get_value_uint32(env, v, out) == napi_ok;
}

/* The arguments openai() and openaiAsync() share, (body, dtype, order, dims, ...): argv
 * gets all `want` of them, *p / *len the body's bytes (see input_of), *o the decode
 * options. NULL with an exception pending if they are not all there and well typed. */
static addon *openai_args(napi_env env, napi_callback_info info, const char *who, size_t want,
                          napi_value *argv, const char **p, size_t *len, embd_openai_options *o) {
  addon *a = get_addon(env);
  if (!a) return NULL;
  size_t argc = want;
  uint32_t dtype, order, dims;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    napi_fail(env, "napi_get_cb_info");
    return NULL;
  }
  if (argc < want) {
    napi_throw_type_error(env, NULL, "embd addon: too few arguments");
    return NULL;
  }
  if (!input_of(env, a, argv[0], p, len)) return NULL;
  if (!arg_u32(env, argv[1], &dtype) || !arg_u32(env, argv[2], &order) ||
      !arg_u32(env, argv[3], &dims)) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s: dtype, order and dims are numbers", who);
    napi_fail(env, msg);
    return NULL;
  }
  memset(o, 0, sizeof *o);
  o->dtype = dtype;
  o->byte_order = order;
  o->expected_dims = dims;
  return a;
}

/* The decoded matrix as a Float32Array of its own (one copy: the decoder owns its row
 * storage), and [count, dims, has_usage, prompt_tokens, total_tokens] into nums. */
static napi_value openai_matrix(napi_env env, const embd_openai_embeddings *oa, double nums[5]) {
  const size_t n = oa->count * oa->dims;
  float *out;
  napi_value m = new_f32(env, n, &out);
  if (!m) return NULL;
  if (n) memcpy(out, oa->values, n * sizeof(float));
  nums[0] = (double)oa->count;
  nums[1] = (double)oa->dims;
  nums[2] = oa->has_usage;
  nums[3] = (double)oa->prompt_tokens;
  nums[4] = (double)oa->total_tokens;
  return m;
}

/* setup(makeError, meta): makeError(message, result, offset) returns the error to throw;
 * meta is a Float64Array(5) that openai() fills. */
static napi_value js_setup(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *d = NULL;
  NAPI(napi_get_instance_data(env, &d));
  addon *a = (addon *)d;
  if (a->make_error) napi_delete_reference(env, a->make_error);
  if (a->meta) napi_delete_reference(env, a->meta);
  a->make_error = a->meta = NULL;
  NAPI(napi_create_reference(env, argv[0], 1, &a->make_error));
  NAPI(napi_create_reference(env, argv[1], 1, &a->meta));
  return NULL;
}

/* openai(body, dtype, order, dims, box): the count x dims matrix as a Float32Array; meta =
 * [count, dims, has_usage, prompt_tokens, total_tokens], box[0] = the model name. */
static napi_value js_openai(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  const char *p;
  size_t len;
  embd_openai_options o;
  addon *a = openai_args(env, info, "openai", 5, argv, &p, &len, &o);
  if (!a) return NULL;
  embd_error err;
  embd_result r = embd_openai_decode(&a->oa, p, len, &o, &err);
  if (r != EMBD_OK) return throw_embd(env, a, r, &err);
  double nums[5];
  napi_value m = openai_matrix(env, &a->oa, nums);
  if (!m) return NULL;
  napi_value metav, model;
  NAPI(napi_get_reference_value(env, a->meta, &metav));
  void *md = NULL;
  size_t mlen = 0;
  NAPI(napi_get_typedarray_info(env, metav, NULL, &mlen, &md, NULL, NULL));
  if (mlen >= 5) memcpy(md, nums, sizeof nums);
  NAPI(napi_create_string_utf8(env, a->oa.model, NAPI_AUTO_LENGTH, &model));
  NAPI(napi_set_element(env, argv[4], 0, model));
  return m;
}

/* base64(s, dtype, order): one base64 embedding string -> Float32Array (as
 * embd_js_b64_embedding in js/wasm/glue.c: f32 little-endian straight into the result,
 * the other dtypes decoded to bytes, then converted). */
static napi_value js_base64(napi_env env, napi_callback_info info) {
  addon *a = get_addon(env);
  if (!a) return NULL;
  size_t argc = 3;
  napi_value argv[3];
  NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  const char *p;
  size_t len;
  uint32_t dtype, order;
  if (argc < 3 || !input_of(env, a, argv[0], &p, &len)) return NULL;
  if (!arg_u32(env, argv[1], &dtype) || !arg_u32(env, argv[2], &order))
    return napi_fail(env, "base64: dtype and order are numbers");
  embd_error err;
  memset(&err, 0, sizeof err);
  size_t n = 0;
  embd_result r;
  float *out;
  napi_value v;
  if (dtype == EMBD_DTYPE_F32 && order == EMBD_ORDER_LE) {
    /* A size query first: the length checks come before the capacity check, so the
     * errors are those of a decode with room, and the result is allocated exact. */
    r = embd_base64_decode_f32(p, len, 0, NULL, 0, &n, &err);
    if (r != EMBD_OK && r != EMBD_ERR_OUTPUT_TOO_SMALL) return throw_embd(env, a, r, &err);
    v = new_f32(env, n, &out);
    if (!v) return NULL;
    if (n) {
      size_t got = 0;
      r = embd_base64_decode_f32(p, len, 0, out, n, &got, &err);
      if (r != EMBD_OK) return throw_embd(env, a, r, &err);
    }
    return v;
  }
  const size_t max = embd_base64_decoded_max(len);
  if (max > a->bytes_cap) {
    uint8_t *b = (uint8_t *)malloc(max ? max : 1);
    if (!b) {
      err.offset = 0;
      snprintf(err.message, sizeof err.message, "out of memory");
      return throw_embd(env, a, EMBD_ERR_OUT_OF_MEMORY, &err);
    }
    free(a->bytes);
    a->bytes = b;
    a->bytes_cap = max;
  }
  size_t bytes = 0;
  r = embd_base64_decode(p, len, 0, a->bytes, a->bytes_cap ? a->bytes_cap : 0, &bytes, &err);
  if (r != EMBD_OK) return throw_embd(env, a, r, &err);
  r = embd_dtype_count((embd_dtype)dtype, bytes, &n);
  if (r != EMBD_OK) {
    /* The WebAssembly glue's message, word for word (both paths report the same). */
    err.offset = 0;
    snprintf(err.message, sizeof err.message,
             "base64: %zu bytes, not a whole number of %s elements", bytes,
             embd_dtype_name((embd_dtype)dtype));
    return throw_embd(env, a, r, &err);
  }
  v = new_f32(env, n, &out);
  if (!v) return NULL;
  r = embd_to_f32(out, a->bytes, n, (embd_dtype)dtype, (embd_byte_order)order);
  if (r != EMBD_OK) {
    memset(&err, 0, sizeof err);
    return throw_embd(env, a, r, &err);
  }
  return v;
}

/* ---- openaiAsync: the same decode on libuv's thread pool (the event loop keeps running).
 * The input is copied first (a string must be converted on this thread anyway; bytes are
 * copied so that the caller may reuse its buffer at once and the decoder never sees them
 * change under it: about 0.1 ms per MB, small beside the decode). Each call has its own
 * decoder state, so calls may overlap. */
typedef struct async_call {
  napi_async_work work;
  napi_deferred deferred;
  char *body;
  size_t len;
  embd_openai_options opt;
  embd_openai_embeddings oa;
  embd_error err;
  embd_result r;
} async_call;

static void async_free(async_call *c) {
  embd_openai_free(&c->oa);
  free(c->body);
  free(c);
}

static void async_execute(napi_env env, void *data) {
  (void)env;
  async_call *c = (async_call *)data;
  c->r = embd_openai_decode(&c->oa, c->body, c->len, &c->opt, &c->err);
}

/* Settles the promise: [matrix, count, dims, has_usage, prompt, total, model], or the
 * package's error. */
static napi_value async_settle(napi_env env, async_call *c) {
  void *d = NULL;
  NAPI(napi_get_instance_data(env, &d));
  addon *a = (addon *)d;
  if (c->r != EMBD_OK) {
    napi_value e;
    NAPI(make_embd_error(env, a, c->r, &c->err, &e));
    NAPI(napi_reject_deferred(env, c->deferred, e));
    return NULL;
  }
  double nums[5];
  napi_value m = openai_matrix(env, &c->oa, nums), arr, x;
  if (!m) return NULL;
  NAPI(napi_create_array_with_length(env, 7, &arr));
  NAPI(napi_set_element(env, arr, 0, m));
  for (uint32_t i = 0; i < 5; i++) {
    NAPI(napi_create_double(env, nums[i], &x));
    NAPI(napi_set_element(env, arr, i + 1, x));
  }
  NAPI(napi_create_string_utf8(env, c->oa.model, NAPI_AUTO_LENGTH, &x));
  NAPI(napi_set_element(env, arr, 6, x));
  NAPI(napi_resolve_deferred(env, c->deferred, arr));
  return NULL;
}

static void async_complete(napi_env env, napi_status status, void *data) {
  async_call *c = (async_call *)data;
  if (status == napi_ok) {
    async_settle(env, c);
  } else {
    /* Cancelled (never queued work is not cancelled here) or the environment is going:
     * reject if there is still someone to tell. */
    napi_value e, msg;
    if (napi_create_string_utf8(env, "embd addon: decode cancelled", NAPI_AUTO_LENGTH, &msg) == napi_ok &&
        napi_create_error(env, NULL, msg, &e) == napi_ok)
      napi_reject_deferred(env, c->deferred, e);
  }
  /* A failure inside settle leaves a pending exception on this callback: Node reports it
   * (uncaught), the promise stays pending; it only happens when V8 is out of memory. */
  napi_delete_async_work(env, c->work);
  async_free(c);
}

/* openaiAsync(body, dtype, order, dims) -> Promise<[matrix, count, dims, has_usage,
 * prompt_tokens, total_tokens, model]>. */
static napi_value js_openai_async(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  const char *p;
  size_t len;
  embd_openai_options o;
  if (!openai_args(env, info, "openaiAsync", 4, argv, &p, &len, &o)) return NULL;
  async_call *c = (async_call *)calloc(1, sizeof *c);
  char *body = (char *)malloc(len ? len : 1);
  if (!c || !body) {
    free(c);
    free(body);
    napi_throw_error(env, NULL, "embd addon: out of memory");
    return NULL;
  }
  memcpy(body, p, len);
  c->body = body;
  c->len = len;
  c->opt = o;
  embd_openai_init(&c->oa);
  napi_value promise, name;
  if (napi_create_promise(env, &c->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "embd.decodeOpenAIAsync", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, async_execute, async_complete, c, &c->work) != napi_ok) {
    async_free(c);
    return napi_fail(env, "openaiAsync: cannot queue the work");
  }
  if (napi_queue_async_work(env, c->work) != napi_ok) {
    napi_delete_async_work(env, c->work);
    async_free(c);
    return napi_fail(env, "openaiAsync: cannot queue the work");
  }
  return promise;
}

NAPI_MODULE_INIT() {
  addon *a = (addon *)calloc(1, sizeof *a);
  if (!a) return NULL;
  embd_openai_init(&a->oa);
  if (napi_set_instance_data(env, a, addon_free, NULL) != napi_ok) {
    free(a);
    return NULL;
  }
  napi_property_descriptor props[] = {
      {"setup", NULL, js_setup, NULL, NULL, NULL, napi_default, NULL},
      {"openai", NULL, js_openai, NULL, NULL, NULL, napi_default, NULL},
      {"base64", NULL, js_base64, NULL, NULL, NULL, napi_default, NULL},
      {"openaiAsync", NULL, js_openai_async, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok)
    return NULL;
  return exports;
}
