/* Version and result-code strings. */
#include <stdarg.h>
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

const char *embd_strerror(embd_result r) {
  switch (r) {
    case EMBD_OK: return "success";
    case EMBD_ERR_INVALID_ARGUMENT: return "invalid argument";
    case EMBD_ERR_UNKNOWN_ISA: return "unknown tier or CPU feature name";
    case EMBD_ERR_UNSUPPORTED_ISA: return "tier not supported by this CPU";
    case EMBD_ERR_OUTPUT_TOO_SMALL: return "output buffer too small";
    case EMBD_ERR_FRAME_TOO_SMALL: return "frame shorter than its 16-byte header";
    case EMBD_ERR_FRAME_BAD_MAGIC: return "frame magic is not \"EMBD\"";
    case EMBD_ERR_FRAME_BAD_VERSION: return "unsupported frame version";
    case EMBD_ERR_FRAME_BAD_PADDING: return "frame header padding is not zero";
    case EMBD_ERR_FRAME_UNKNOWN_FLAGS: return "unknown frame flag bits";
    case EMBD_ERR_FRAME_HEADER_CRC: return "frame header CRC mismatch";
    case EMBD_ERR_FRAME_TRUNCATED: return "frame truncated";
    case EMBD_ERR_FRAME_DIMS_TOO_LARGE: return "frame dims above the maximum";
    case EMBD_ERR_FRAME_DIMS_MISMATCH: return "frame dims differ from the expected dims";
    case EMBD_ERR_FRAME_PAYLOAD_CRC: return "frame payload CRC mismatch";
    case EMBD_ERR_FRAME_COMPRESSED_LENGTH: return "zlib stream does not end at the compressed length";
    case EMBD_ERR_FRAME_INFLATE: return "zlib payload invalid or not the values' size";
    case EMBD_ERR_FRAME_TRAILING: return "bytes after the end of the frame";
    case EMBD_ERR_FRAME_VIEW_UNAVAILABLE: return "zero-copy view unavailable: decode a copy";
    case EMBD_ERR_FRAME_DEFLATE: return "zlib compression failed";
    case EMBD_ERR_BATCH_TOO_SMALL: return "batch shorter than its 4-byte frame count";
    case EMBD_ERR_BATCH_COUNT: return "batch frame count does not match the frames";
    case EMBD_ERR_BATCH_TRAILING: return "bytes after the last frame of the batch";
    case EMBD_ERR_STREAM_FRAME_TOO_LARGE: return "frame larger than the stream decoder's buffer";
    case EMBD_ERR_BASE64_LENGTH: return "base64 length not a multiple of 4";
    case EMBD_ERR_BASE64_CHAR: return "character outside the base64 alphabet";
    case EMBD_ERR_BASE64_PADDING: return "misplaced, partial or excessive base64 padding";
    case EMBD_ERR_BASE64_TRAILING_BITS: return "non-zero trailing bits in the last base64 character";
    case EMBD_ERR_BASE64_F32_LENGTH: return "decoded length not a multiple of 4 bytes (float32)";
    case EMBD_ERR_OPENAI_JSON: return "malformed JSON";
    case EMBD_ERR_OPENAI_SHAPE: return "invalid embeddings response (missing or ill-typed field)";
    case EMBD_ERR_OPENAI_INDEX: return "data[].index missing, duplicate or out of range";
    case EMBD_ERR_OPENAI_DIMS: return "embeddings of different dimensionality or above the maximum";
    case EMBD_ERR_OPENAI_COUNT: return "embedding count differs from the expected count";
    case EMBD_ERR_OPENAI_MODEL: return "appended responses name different models";
    case EMBD_ERR_OUT_OF_MEMORY: return "out of memory";
    case EMBD_ERR_CODEC_UNKNOWN_TYPE: return "unknown Codec frame type";
    case EMBD_ERR_CODEC_TOKENS_LENGTH: return "TOKENS payload not a multiple of 4 bytes";
    case EMBD_ERR_CODEC_EOS_PAYLOAD: return "EOS frame with a payload";
    case EMBD_ERR_CODEC_UTF8: return "invalid UTF-8 in a HELLO, READY or ERROR frame";
    case EMBD_ERR_CODEC_FRAME_TOO_LARGE: return "Codec frame larger than the caller's maximum";
    case EMBD_ERR_CODEC_TRUNCATED: return "input ends inside a Codec frame";
    case EMBD_ERR_CODEC_HANDSHAKE: return "malformed HELLO or READY";
    case EMBD_ERR_CODEC_NO_TOKENIZER: return "no tokenizer in common";
    case EMBD_ERR_MSGPACK: return "malformed msgpack stream frame";
    case EMBD_ERR_PROTOBUF: return "malformed protobuf stream frame";
    case EMBD_ERR_MAP_SCHEMA: return "tokenizer map breaks the schema";
    case EMBD_ERR_MAP_HASH: return "tokenizer map sha256 mismatch";
    case EMBD_ERR_UNKNOWN_TOKEN: return "token id not in the tokenizer map";
    case EMBD_ERR_DTYPE_LENGTH: return "not a whole number of elements of the dtype";
    case EMBD_ERR_DTYPE_RANGE: return "value not representable in the dtype";
    case EMBD_ERR_FRAME_BAD_DTYPE: return "unknown dtype code in the frame header";
    case EMBD_ERR_OPENAI_DTYPE: return "response dtype or byte order differs from the one asked for";
    case EMBD_ERR_OPENAI_METADATA: return "bytes-body metadata malformed or inconsistent with the body";
    case EMBD_ERR_UNAVAILABLE: return "embd was built without this part";
    case EMBD_BATCH_END: return "end of batch (not an error)";
    case EMBD_STOPPED: return "stopped by a callback (not an error)";
  }
  return "unknown result";
}
