// Codec HELLO / READY JSON -> structs (embd/codec.h), with embd's own strict JSON reading
// (src/json/json_strict.h).
//
// Built like openai.cc: -fno-exceptions, hidden visibility. The whole document is validated
// first (RFC 8259, UTF-8, depth: the fault's byte in the error), then walked: known fields
// are type-checked and copied into one malloc'd block owned by the caller's struct
// (storage_, freed by embd_codec_*_free); unknown fields are ignored.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "embd/codec.h"
#include "fail.h"
#include "json_strict.h"

extern "C" embd_result embd_codec_ready_check_(const embd_codec_ready *r, int reading, embd_error *err);
extern "C" void embd_codec_ready_norm_pins_(embd_codec_ready *r);

namespace {

enum kind { STR, LIST };
struct field {
  const char *name;
  kind k;
  size_t off;  // of the const char * or the embd_codec_list in the struct
};

const field hello_fields[] = {
    {"codec_version", STR, offsetof(embd_codec_hello, codec_version)},
    {"accept_tokenizers", LIST, offsetof(embd_codec_hello, accept_tokenizers)},
    {"modalities", LIST, offsetof(embd_codec_hello, modalities)},
    {"accept_latent_spaces", LIST, offsetof(embd_codec_hello, accept_latent_spaces)},
    {"accept_decoders", LIST, offsetof(embd_codec_hello, accept_decoders)},
    {"accept_pipelines", LIST, offsetof(embd_codec_hello, accept_pipelines)},
    {"accept_safety_policies", LIST, offsetof(embd_codec_hello, accept_safety_policies)},
    {"accept_transports", LIST, offsetof(embd_codec_hello, accept_transports)},
    {"accept_encoding", LIST, offsetof(embd_codec_hello, accept_encoding)},
};

const field ready_fields[] = {
    {"codec_version", STR, offsetof(embd_codec_ready, codec_version)},
    {"modality", STR, offsetof(embd_codec_ready, modality)},
    {"tokenizer_id", STR, offsetof(embd_codec_ready, tokenizer_id)},
    {"map_url", STR, offsetof(embd_codec_ready, map_url)},
    {"map_hash", STR, offsetof(embd_codec_ready, map_hash)},
    {"min_codec_version", STR, offsetof(embd_codec_ready, min_codec_version)},
    {"required_features", LIST, offsetof(embd_codec_ready, required_features)},
    {"safety_policy_id", STR, offsetof(embd_codec_ready, safety_policy_id)},
    {"safety_policy_hash", STR, offsetof(embd_codec_ready, safety_policy_hash)},
    {"transport", STR, offsetof(embd_codec_ready, transport)},
    {"encoding", STR, offsetof(embd_codec_ready, encoding)},
    {"latent_space_id", STR, offsetof(embd_codec_ready, latent_space_id)},
    {"latent_map_url", STR, offsetof(embd_codec_ready, latent_map_url)},
    {"latent_map_hash", STR, offsetof(embd_codec_ready, latent_map_hash)},
    {"decoder_runtime", STR, offsetof(embd_codec_ready, decoder_runtime)},
    {"pipeline", STR, offsetof(embd_codec_ready, pipeline)},
};
constexpr size_t kMaxFields = 16;

// The type of the valid value at p, for messages.
const char *type_name(const uint8_t *p) {
  switch (*p) {
    case '[': return "an array";
    case '{': return "an object";
    case '"': return "a string";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
  }
}

// The string at p (its opening quote) unescaped into out (room for the text's length: an
// unescaped string is never longer than its source); its length.
size_t unescaped(const uint8_t *p, const uint8_t *end, char *out) {
  const uint8_t *q = embd_json_string_end(p, end, nullptr);
  return embd_json_unescape(p + 1, q - 1, reinterpret_cast<uint8_t *>(out), static_cast<size_t>(q - p));
}

// Where "name" first appears as a key in the text (best effort, for the error offset).
size_t key_offset(const char *json, size_t len, const char *name) {
  const size_t n = strlen(name);
  for (size_t i = 0; i + n + 2 <= len; i++)
    if (json[i] == '"' && json[i + n + 1] == '"' && memcmp(json + i + 1, name, n) == 0) return i;
  return 0;
}

embd_result parse(const char *what, const field *fields, size_t nfields, const char *json,
                  size_t len, void *out, void **storage, embd_error *err) {
  if (!json && len) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL json");
  // The strict pass first (it names the fault and its byte); the walk then reads a valid text.
  embd_json j;
  embd_json_init(&j, json ? json : "", len);
  if (embd_json_validate(&j, 0) != 0) {
    size_t at = embd_json_fault_offset(&j);
    return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: malformed JSON: %s (payload byte %zu)", what,
                     j.fault, at);
  }
  const uint8_t *end = j.end;
  const uint8_t *root = embd_json_ws(j.base, end);
  if (*root != '{')
    return embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, 0, "%s: the JSON is %s, not an object", what,
                     type_name(root));
  // Scratch for one unescaped string (keys are compared, values measured and checked).
  char *tmp = static_cast<char *>(malloc(len ? len : 1));
  if (!tmp) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%s: no memory for %zu bytes", what, len);
  // Pass 1: find and type-check the known fields; size the block.
  const uint8_t *found[kMaxFields];
  bool have[kMaxFields] = {};
  size_t items = 0, bytes = 0;
  embd_json_iter it;
  embd_json_iter_init(&it, root, end);
  const uint8_t *k = nullptr;
  embd_result r = EMBD_OK;
  while (r == EMBD_OK && embd_json_iter_next(&it, &k)) {
    const std::string_view key(tmp, unescaped(k, end, tmp));
    size_t f = 0;
    while (f < nfields && key != fields[f].name) f++;
    if (f == nfields) continue;  // unknown: ignored
    const char *name = fields[f].name;
    const size_t at = key_offset(json, len, name);
    const uint8_t *v = it.at;
    if (have[f]) {
      r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: duplicate field \"%s\"", what, name);
      break;
    }
    have[f] = true;
    found[f] = v;
    if (fields[f].k == STR) {
      if (*v != '"') {
        r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: field \"%s\" must be a string, not %s",
                      what, name, type_name(v));
        break;
      }
      size_t n = unescaped(v, end, tmp);
      if (memchr(tmp, 0, n)) {
        r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: field \"%s\" contains a NUL character",
                      what, name);
        break;
      }
      bytes += n + 1;
    } else {
      if (*v != '[') {
        r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at,
                      "%s: field \"%s\" must be an array of strings, not %s", what, name, type_name(v));
        break;
      }
      size_t i = 0;
      embd_json_iter ai;
      embd_json_iter_init(&ai, v, end);
      while (embd_json_iter_next(&ai, nullptr)) {
        const uint8_t *x = ai.at;
        if (*x != '"') {
          r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: %s[%zu] must be a string, not %s",
                        what, name, i, type_name(x));
          break;
        }
        size_t n = unescaped(x, end, tmp);
        if (memchr(tmp, 0, n)) {
          r = embd_fail(err, EMBD_ERR_CODEC_HANDSHAKE, at, "%s: %s[%zu] contains a NUL character",
                        what, name, i);
          break;
        }
        bytes += n + 1;
        i++;
      }
      items += i;
    }
  }
  free(tmp);
  if (r != EMBD_OK) return r;
  // Pass 2: one block: the pointer arrays, then the strings.
  const size_t total = items * sizeof(char *) + bytes;
  char *block = static_cast<char *>(malloc(total ? total : 1));
  if (!block) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "%s: no memory for %zu bytes", what, total);
  const char **ptrs = reinterpret_cast<const char **>(block);
  char *text = block + items * sizeof(char *);
  auto copy = [&](const uint8_t *p) {
    const size_t n = unescaped(p, end, text);
    text[n] = 0;
    const char *s = text;
    text += n + 1;
    return s;
  };
  char *base = static_cast<char *>(out);
  for (size_t f = 0; f < nfields; f++) {
    if (!have[f]) continue;
    if (fields[f].k == STR) {
      *reinterpret_cast<const char **>(base + fields[f].off) = copy(found[f]);
    } else {
      embd_codec_list *l = reinterpret_cast<embd_codec_list *>(base + fields[f].off);
      l->v = ptrs;
      l->n = 0;
      embd_json_iter ai;
      embd_json_iter_init(&ai, found[f], end);
      while (embd_json_iter_next(&ai, nullptr)) ptrs[l->n++] = copy(ai.at);
      ptrs += l->n;
    }
  }
  *storage = block;
  return EMBD_OK;
}


}  // namespace

extern "C" {

EMBD_API embd_result embd_codec_hello_parse(const char *json, size_t len, embd_codec_hello *out,
                                            embd_error *err) {
  if (!out) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL out");
  memset(out, 0, sizeof *out);
  embd_codec_hello h;
  memset(&h, 0, sizeof h);
  embd_result r = parse("HELLO", hello_fields, sizeof hello_fields / sizeof hello_fields[0], json,
                        len, &h, &h.storage_, err);
  if (r != EMBD_OK) return r;
  *out = h;
  embd_no_error(err);
  return EMBD_OK;
}

EMBD_API embd_result embd_codec_ready_parse(const char *json, size_t len, embd_codec_ready *out,
                                            embd_error *err) {
  if (!out) return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL out");
  memset(out, 0, sizeof *out);
  embd_codec_ready rd;
  memset(&rd, 0, sizeof rd);
  embd_result r = parse("READY", ready_fields, sizeof ready_fields / sizeof ready_fields[0], json,
                        len, &rd, &rd.storage_, err);
  if (r != EMBD_OK) return r;
  embd_codec_ready_norm_pins_(&rd); // SHA256: / upper-case hex read as sha256: + lower case
  r = embd_codec_ready_check_(&rd, 1, err);
  if (r != EMBD_OK) {
    embd_codec_ready_free(&rd);
    return r;
  }
  *out = rd;
  embd_no_error(err);
  return EMBD_OK;
}

}  // extern "C"
