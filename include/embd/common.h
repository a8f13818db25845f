/* embd: binary wire formats for AI services. Common definitions.
 *
 * Every public function returns `embd_result` (or a plain value where it cannot fail).
 * Thread safety: every function here may be called from any thread at any time.
 */
#ifndef EMBD_COMMON_H
#define EMBD_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define EMBD_VERSION_MAJOR 0
#define EMBD_VERSION_MINOR 1
#define EMBD_VERSION_PATCH 0
#define EMBD_VERSION_STRING "0.1.0"
/* MAJOR*10000 + MINOR*100 + PATCH, for compile-time comparisons. */
#define EMBD_VERSION_NUMBER \
  (EMBD_VERSION_MAJOR * 10000 + EMBD_VERSION_MINOR * 100 + EMBD_VERSION_PATCH)

#if defined(EMBD_STATIC_DEFINE) || !defined(__GNUC__)
#define EMBD_API
#elif defined(_WIN32)
#ifdef EMBD_BUILDING_LIBRARY
#define EMBD_API __declspec(dllexport)
#else
#define EMBD_API __declspec(dllimport)
#endif
#else
#define EMBD_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The one result type of the library. 0 is success; every error is positive and has a
 * message from embd_strerror(). New codes are only ever appended. */
typedef enum embd_result {
  EMBD_OK = 0,
  EMBD_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer with a non-zero length, a bad enum... */
  EMBD_ERR_UNKNOWN_ISA = 2,      /* an EMBD_ISA / embd_isa_set() word that is not a tier or feature */
  EMBD_ERR_UNSUPPORTED_ISA = 3,  /* a tier this CPU (after masking) cannot run */
  EMBD_ERR_OUTPUT_TOO_SMALL = 4, /* the caller's output capacity is too small */
  /* EMBD frames (embd/frame.h) */
  EMBD_ERR_FRAME_TOO_SMALL = 5,          /* fewer than the 16 header bytes */
  EMBD_ERR_FRAME_BAD_MAGIC = 6,          /* bytes 0-3 are not "EMBD" */
  EMBD_ERR_FRAME_BAD_VERSION = 7,        /* byte 4 is not 1 */
  EMBD_ERR_FRAME_BAD_PADDING = 8,        /* bytes 6-7 are not zero */
  EMBD_ERR_FRAME_UNKNOWN_FLAGS = 9,      /* flag bits other than 0 and 1 */
  EMBD_ERR_FRAME_HEADER_CRC = 10,        /* bytes 12-15 are not the CRC-32 of bytes 0-11 */
  EMBD_ERR_FRAME_TRUNCATED = 11,         /* the buffer ends before the frame does */
  EMBD_ERR_FRAME_DIMS_TOO_LARGE = 12,    /* dims above the caller's maximum (or memory) */
  EMBD_ERR_FRAME_DIMS_MISMATCH = 13,     /* dims differ from the caller's expected dims */
  EMBD_ERR_FRAME_PAYLOAD_CRC = 14,       /* the payload CRC-32 trailer does not match */
  EMBD_ERR_FRAME_COMPRESSED_LENGTH = 15, /* the zlib stream does not end at its length */
  EMBD_ERR_FRAME_INFLATE = 16,           /* bad zlib data, or not exactly dims*4 bytes */
  EMBD_ERR_FRAME_TRAILING = 17,          /* bytes after the frame */
  EMBD_ERR_FRAME_VIEW_UNAVAILABLE = 18,  /* no zero-copy view possible: decode a copy */
  EMBD_ERR_FRAME_DEFLATE = 19,           /* zlib failed to compress (e.g. out of memory) */
  /* batch envelopes (embd/batch.h) and the stream decoder (embd/stream.h) */
  EMBD_ERR_BATCH_TOO_SMALL = 20,         /* fewer than the 4 bytes of the frame count */
  EMBD_ERR_BATCH_COUNT = 21,             /* count * 16 exceeds the bytes, or frames != count */
  EMBD_ERR_BATCH_TRAILING = 22,          /* bytes after the last of the count frames */
  EMBD_ERR_STREAM_FRAME_TOO_LARGE = 23,  /* a frame larger than the stream's buffer */
  /* base64 (embd/base64.h) */
  EMBD_ERR_BASE64_LENGTH = 24,       /* length not a multiple of 4 (unpadded: 1 mod 4) */
  EMBD_ERR_BASE64_CHAR = 25,         /* a character outside the alphabet (whitespace too) */
  EMBD_ERR_BASE64_PADDING = 26,      /* '=' misplaced, partial or excessive */
  EMBD_ERR_BASE64_TRAILING_BITS = 27, /* the last character carries non-zero unused bits */
  EMBD_ERR_BASE64_F32_LENGTH = 28,   /* decoded byte length not a multiple of 4 (float32) */
  /* OpenAI-compatible embeddings responses (embd/openai.h) */
  EMBD_ERR_OPENAI_JSON = 29,        /* malformed JSON */
  EMBD_ERR_OPENAI_SHAPE = 30,       /* invalid response: a missing or ill-typed field, an
                                       embedding of the wrong shape */
  EMBD_ERR_OPENAI_INDEX = 31,       /* data[].index missing, not an integer, duplicate or
                                       out of range */
  EMBD_ERR_OPENAI_DIMS = 32,        /* vectors of different dimensionality, or above max_dims */
  EMBD_ERR_OPENAI_COUNT = 33,       /* vector count differs from expected_count */
  EMBD_ERR_OPENAI_MODEL = 34,       /* appended responses name different models */
  EMBD_ERR_OUT_OF_MEMORY = 35,      /* an allocation failed */
  EMBD_ERR_OPENAI_UNAVAILABLE = 36, /* built without EMBD_WITH_OPENAI (simdjson) */
  /* Codec token transport: session frames and handshake (embd/codec.h) */
  EMBD_ERR_CODEC_UNKNOWN_TYPE = 37,   /* a frame type byte outside 0x00..0x06 */
  EMBD_ERR_CODEC_TOKENS_LENGTH = 38,  /* a TOKENS payload that is not a multiple of 4 bytes */
  EMBD_ERR_CODEC_EOS_PAYLOAD = 39,    /* an EOS frame with a payload */
  EMBD_ERR_CODEC_UTF8 = 40,           /* invalid UTF-8 in HELLO, READY or ERROR */
  EMBD_ERR_CODEC_FRAME_TOO_LARGE = 41, /* payload_len above the caller's maximum */
  EMBD_ERR_CODEC_TRUNCATED = 42,      /* the input ends inside a frame */
  EMBD_ERR_CODEC_HANDSHAKE = 43,      /* HELLO/READY JSON malformed or a field ill-typed */
  EMBD_ERR_CODEC_NO_TOKENIZER = 44,   /* none of the client's tokenizers is supported */
  /* the engines' stream modes (embd/codec_stream.h) */
  EMBD_ERR_MSGPACK = 45,              /* malformed msgpack, or not the frame map's shape */
  EMBD_ERR_PROTOBUF = 46,             /* malformed protobuf, or not CodecFrame's shape */
  /* tokenizer maps and detokenization (embd/tokmap.h) */
  EMBD_ERR_MAP_SCHEMA = 47,           /* a map that breaks the schema (the field is named) */
  EMBD_ERR_MAP_HASH = 48,             /* the map's bytes do not have the expected sha256 */
  EMBD_ERR_UNKNOWN_TOKEN = 49,        /* an id the map does not have */
  EMBD_ERR_UNAVAILABLE = 50           /* built without this part (EMBD_WITH_CODEC_MODES=OFF,
                                         EMBD_WITH_TOKMAP=OFF) */
} embd_result;

/* Filled by decoders on failure (and reset on success): the result, the byte offset in
 * the input the problem is at, and a message naming the values, e.g.
 * "header CRC mismatch: stored 0x12345678, computed 0x9abcdef0 (bytes 0-11)". */
typedef struct embd_error {
  embd_result result;
  size_t offset;
  char message[160];
} embd_error;

/* A static, human-readable description of a result code ("unknown result" for others). */
EMBD_API const char *embd_strerror(embd_result r);

/* The library's version at run time, e.g. "0.1.0", and as EMBD_VERSION_NUMBER. */
EMBD_API const char *embd_version(void);
EMBD_API unsigned embd_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
