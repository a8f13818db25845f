/* Version and result-code strings. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "embd/common.h"
#include "internal.h"

embd_result embd_fail(embd_error *err, embd_result r, uint64_t off, const char *fmt, ...) {
  if (err) {
    err->result = r;
    err->offset = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return r;
}

embd_result embd_vfail_frame(embd_error *err, embd_result r, uint64_t at, uint64_t frame,
                             uint64_t start, const char *fmt, va_list ap) {
  if (err) {
    char m[sizeof err->message];
    vsnprintf(m, sizeof m, fmt, ap);
    embd_fail(err, r, at, "frame %llu at byte %llu: %s", (unsigned long long)frame,
              (unsigned long long)start, m);
  }
  return r;
}

const char *embd_version(void) { return EMBD_VERSION_STRING; }

unsigned embd_version_number(void) { return EMBD_VERSION_NUMBER; }

/* Every result: its enum name and its description, one row each (embd_strerror and
 * embd_result_name read the same table, so a new code cannot get one and miss the other). */
static const struct {
  embd_result code;
  const char *name, *text;
} results[] = {
#define R(code, text) {code, #code, text}
    R(EMBD_OK, "success"),
    R(EMBD_ERR_INVALID_ARGUMENT, "invalid argument"),
    R(EMBD_ERR_UNKNOWN_ISA, "unknown tier or CPU feature name"),
    R(EMBD_ERR_UNSUPPORTED_ISA, "tier not supported by this CPU"),
    R(EMBD_ERR_OUTPUT_TOO_SMALL, "output buffer too small"),
    R(EMBD_ERR_FRAME_TOO_SMALL, "frame shorter than its 16-byte header"),
    R(EMBD_ERR_FRAME_BAD_MAGIC, "frame magic is not \"EMBD\""),
    R(EMBD_ERR_FRAME_BAD_VERSION, "unsupported frame version"),
    R(EMBD_ERR_FRAME_BAD_PADDING, "frame header padding is not zero"),
    R(EMBD_ERR_FRAME_UNKNOWN_FLAGS, "unknown frame flag bits"),
    R(EMBD_ERR_FRAME_HEADER_CRC, "frame header CRC mismatch"),
    R(EMBD_ERR_FRAME_TRUNCATED, "frame truncated"),
    R(EMBD_ERR_FRAME_DIMS_TOO_LARGE, "frame dims above the maximum"),
    R(EMBD_ERR_FRAME_DIMS_MISMATCH, "frame dims differ from the expected dims"),
    R(EMBD_ERR_FRAME_PAYLOAD_CRC, "frame payload CRC mismatch"),
    R(EMBD_ERR_FRAME_COMPRESSED_LENGTH, "zlib stream does not end at the compressed length"),
    R(EMBD_ERR_FRAME_INFLATE, "zlib payload invalid or not the values' size"),
    R(EMBD_ERR_FRAME_TRAILING, "bytes after the end of the frame"),
    R(EMBD_ERR_FRAME_VIEW_UNAVAILABLE, "zero-copy view unavailable: decode a copy"),
    R(EMBD_ERR_FRAME_DEFLATE, "zlib compression failed"),
    R(EMBD_ERR_BATCH_TOO_SMALL, "batch shorter than its 4-byte frame count"),
    R(EMBD_ERR_BATCH_COUNT, "batch frame count does not match the frames"),
    R(EMBD_ERR_BATCH_TRAILING, "bytes after the last frame of the batch"),
    R(EMBD_ERR_STREAM_FRAME_TOO_LARGE, "frame larger than the stream decoder's buffer"),
    R(EMBD_ERR_BASE64_LENGTH, "base64 length not a multiple of 4"),
    R(EMBD_ERR_BASE64_CHAR, "character outside the base64 alphabet"),
    R(EMBD_ERR_BASE64_PADDING, "misplaced, partial or excessive base64 padding"),
    R(EMBD_ERR_BASE64_TRAILING_BITS, "non-zero trailing bits in the last base64 character"),
    R(EMBD_ERR_BASE64_F32_LENGTH, "decoded length not a multiple of 4 bytes (float32)"),
    R(EMBD_ERR_OPENAI_JSON, "malformed JSON"),
    R(EMBD_ERR_OPENAI_SHAPE, "invalid embeddings response (missing or ill-typed field)"),
    R(EMBD_ERR_OPENAI_INDEX, "data[].index missing, duplicate or out of range"),
    R(EMBD_ERR_OPENAI_DIMS, "embeddings of different dimensionality or above the maximum"),
    R(EMBD_ERR_OPENAI_COUNT, "embedding count differs from the expected count"),
    R(EMBD_ERR_OPENAI_MODEL, "appended responses name different models"),
    R(EMBD_ERR_OUT_OF_MEMORY, "out of memory"),
    R(EMBD_ERR_CODEC_UNKNOWN_TYPE, "unknown Codec frame type"),
    R(EMBD_ERR_CODEC_TOKENS_LENGTH, "TOKENS payload not a multiple of 4 bytes"),
    R(EMBD_ERR_CODEC_EOS_PAYLOAD, "EOS frame with a payload"),
    R(EMBD_ERR_CODEC_UTF8, "invalid UTF-8 in a HELLO, READY or ERROR frame"),
    R(EMBD_ERR_CODEC_FRAME_TOO_LARGE, "Codec frame larger than the caller's maximum"),
    R(EMBD_ERR_CODEC_TRUNCATED, "input ends inside a Codec frame"),
    R(EMBD_ERR_CODEC_HANDSHAKE, "malformed HELLO or READY"),
    R(EMBD_ERR_CODEC_NO_TOKENIZER, "no tokenizer in common"),
    R(EMBD_ERR_MSGPACK, "malformed msgpack stream frame"),
    R(EMBD_ERR_PROTOBUF, "malformed protobuf stream frame"),
    R(EMBD_ERR_MAP_SCHEMA, "tokenizer map breaks the schema"),
    R(EMBD_ERR_MAP_HASH, "tokenizer map sha256 mismatch"),
    R(EMBD_ERR_UNKNOWN_TOKEN, "token id not in the tokenizer map"),
    R(EMBD_ERR_DTYPE_LENGTH, "not a whole number of elements of the dtype"),
    R(EMBD_ERR_DTYPE_RANGE, "value not representable in the dtype"),
    R(EMBD_ERR_FRAME_BAD_DTYPE, "unknown dtype code in the frame header"),
    R(EMBD_ERR_OPENAI_DTYPE, "response dtype or byte order differs from the one asked for"),
    R(EMBD_ERR_OPENAI_METADATA, "bytes-body metadata malformed or inconsistent with the body"),
    R(EMBD_ERR_VECTOR_DIMS, "vector dims or non-zero count the target type refuses"),
    R(EMBD_ERR_VECTOR_VALUE, "vector value the target type refuses (NaN, infinity, out of range, zero)"),
    R(EMBD_ERR_SPARSE_INDEX, "sparse index out of range, repeated or not ascending"),
    R(EMBD_ERR_UNAVAILABLE, "embd was built without this part"),
    R(EMBD_BATCH_END, "end of batch (not an error)"),
    R(EMBD_STOPPED, "stopped by a callback (not an error)"),
#undef R
};

static size_t result_row(embd_result r) {
  for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
    if (results[i].code == r) return i;
  return SIZE_MAX;
}

const char *embd_strerror(embd_result r) {
  size_t i = result_row(r);
  return i == SIZE_MAX ? "unknown result" : results[i].text;
}

const char *embd_result_name(embd_result r) {
  size_t i = result_row(r);
  return i == SIZE_MAX ? NULL : results[i].name;
}
