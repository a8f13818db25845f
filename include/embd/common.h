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
#define EMBD_VERSION_MINOR 4
#define EMBD_VERSION_PATCH 0
#define EMBD_VERSION_STRING "0.4.0"
/* MAJOR*10000 + MINOR*100 + PATCH, for compile-time comparisons. */
#define EMBD_VERSION_NUMBER \
  (EMBD_VERSION_MAJOR * 10000 + EMBD_VERSION_MINOR * 100 + EMBD_VERSION_PATCH)

#include "export.h" /* EMBD_API */

#ifdef __cplusplus
extern "C" {
#endif

/* The one result type of the library. 0 is success. Every other code is positive, has a
 * message from embd_strerror() and is an error, except the two statuses EMBD_BATCH_END
 * (an iterator is done) and EMBD_STOPPED (a callback stopped a stream). Codes keep their
 * values: new ones are only ever appended, retired ones are never reused.
 *
 * Conventions every function follows:
 *   - Out of memory is always EMBD_ERR_OUT_OF_MEMORY, whatever failed to allocate (malloc,
 *     zlib's state).
 *   - Output too small: a function that writes into caller memory (out, cap) and reports
 *     what it wrote in an out-length (*written, *len, *n, *count) returns
 *     EMBD_ERR_OUTPUT_TOO_SMALL with the out-length set to the size needed, in the same
 *     unit as cap: calling again with that capacity succeeds. The size is exact where it
 *     does not depend on doing the work, and an upper bound where it does (zlib-compressed
 *     EMBD frames: the bound embd_frame_size / embd_batch_size give). Nothing usable is in
 *     the output then. embd_frame_decode has no out-length: it fills *info, whose dims is
 *     the float count needed (embd_batch_frame_decode: the frame's info.dims). The
 *     incremental batch encoder (embd_batch_append_*) has none either: size its buffer
 *     with embd_batch_size.
 *   - A callback (embd_stream_frame_fn, embd_codec_frame_fn, embd_codec_stream_frame_fn)
 *     stops its stream by returning anything but EMBD_OK; EMBD_STOPPED is the code for
 *     "stop, nothing is wrong". The stream then returns that code from the feed (sticky),
 *     err->offset at the frame.
 *
 * Growing the ABI (options structs). Every options struct (embd_frame_encode_options,
 * embd_frame_decode_options, embd_stream_options, embd_codec_decode_options,
 * embd_codec_reader_options, embd_codec_stream_options, embd_openai_options) ends in
 * reserved room: `uint64_t reserved_[4]` and `void *reserved_ptr_[2]`, which must be zero
 * (fewer once fields have taken some: embd_openai_options has `reserved_[2]` since 0.3).
 * Zero-initialize options (`embd_stream_options o = {0};`, designated initializers, memset,
 * or `{}` in C++) and set the fields you want: that is all it costs, and NULL still means
 * "all zero" wherever a function takes NULL. A later release adds a field by taking
 * reserved slots (an integer field one `reserved_` slot, a pointer one `reserved_ptr_`),
 * keeping the struct's size and every offset, with zero meaning "as before": programs
 * built against this header keep working unchanged against it. A library that finds a
 * reserved slot non-zero (garbage, or a field of a newer release it does not know)
 * returns EMBD_ERR_INVALID_ARGUMENT rather than guess.
 * The other public structs (what decoders fill in, the caller-allocated iterator and
 * encoder states, embd_error) have no such room: changing them changes the ABI, which
 * changes the SONAME (below). embd_error keeps its layout (offset is 64-bit).
 *
 * Versions and the SONAME. While the major version is 0, every minor release may change
 * the ABI and patch releases never do: the shared library's SONAME is
 * libembd.so.0.<minor> (libembd.so.0.2 for 0.2.x), and from 1.0 on libembd.so.<major>.
 * CI compares the built library with the ABI baseline abi/libembd.abi (abidiff, ctest
 * label abi); any difference fails unless the baseline moves with the version
 * (scripts/abi-baseline.sh, README "ABI").
 *
 * Thread safety (each header says it for its objects): functions without an object are
 * reentrant; an object made by a *_create / *_init (stream, reader, iterator, encoder,
 * detokenizer, embd_openai_embeddings) is used by one thread at a time, distinct objects
 * are independent; a loaded embd_tokmap is immutable and shared freely. */
typedef enum embd_result {
  EMBD_OK = 0,
  EMBD_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer with a non-zero length, a bad enum,
                                    non-zero reserved_ option fields... */
  EMBD_ERR_UNKNOWN_ISA = 2,      /* an EMBD_ISA / embd_isa_set() word that is not a tier or feature */
  EMBD_ERR_UNSUPPORTED_ISA = 3,  /* a tier this CPU (after masking) cannot run */
  EMBD_ERR_OUTPUT_TOO_SMALL = 4, /* the caller's output capacity is too small (the size
                                    needed is reported: see above) */
  EMBD_ERR_OUT_OF_MEMORY = 35,   /* an allocation failed (any allocation, anywhere) */
  EMBD_ERR_UNAVAILABLE = 50,     /* built without this part (EMBD_WITH_OPENAI=OFF,
                                    EMBD_WITH_CODEC_MODES=OFF, EMBD_WITH_TOKMAP=OFF) */
  /* Statuses, not errors (positive like the errors; see above). */
  EMBD_BATCH_END = 51,           /* embd_batch_next: past the last frame, all of them valid */
  EMBD_STOPPED = 52,             /* a callback's "stop": the stream stops, nothing is wrong */
  /* EMBD frames (embd/frame.h) */
  EMBD_ERR_FRAME_TOO_SMALL = 5,          /* fewer than the 16 header bytes */
  EMBD_ERR_FRAME_BAD_MAGIC = 6,          /* bytes 0-3 are not "EMBD" */
  EMBD_ERR_FRAME_BAD_VERSION = 7,        /* byte 4 is not 1 or 2 */
  EMBD_ERR_FRAME_BAD_PADDING = 8,        /* bytes 6-7 (version 2: byte 7) are not zero */
  EMBD_ERR_FRAME_UNKNOWN_FLAGS = 9,      /* flag bits other than 0 and 1 */
  EMBD_ERR_FRAME_HEADER_CRC = 10,        /* bytes 12-15 are not the CRC-32 of bytes 0-11 */
  EMBD_ERR_FRAME_TRUNCATED = 11,         /* the buffer ends before the frame does */
  EMBD_ERR_FRAME_DIMS_TOO_LARGE = 12,    /* dims above the caller's maximum (or size_t) */
  EMBD_ERR_FRAME_DIMS_MISMATCH = 13,     /* dims differ from the caller's expected dims */
  EMBD_ERR_FRAME_PAYLOAD_CRC = 14,       /* the payload CRC-32 trailer does not match */
  EMBD_ERR_FRAME_COMPRESSED_LENGTH = 15, /* the zlib stream does not end at its length */
  EMBD_ERR_FRAME_INFLATE = 16,           /* bad zlib data, or not exactly the values' bytes
                                            (dims*4 for float32) */
  EMBD_ERR_FRAME_TRAILING = 17,          /* bytes after the frame */
  EMBD_ERR_FRAME_VIEW_UNAVAILABLE = 18,  /* no zero-copy view possible: decode a copy */
  EMBD_ERR_FRAME_DEFLATE = 19,           /* zlib failed to compress (not memory: that is
                                            EMBD_ERR_OUT_OF_MEMORY) */
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
  /* 35 is EMBD_ERR_OUT_OF_MEMORY (above).
   * 36 is retired: it was EMBD_ERR_OPENAI_UNAVAILABLE, now EMBD_ERR_UNAVAILABLE (below). */
  /* Codec token transport: session frames and handshake (embd/codec.h) */
  EMBD_ERR_CODEC_UNKNOWN_TYPE = 37,   /* a frame type byte above 0x06 with EMBD_CODEC_STRICT_TYPES
                                         (default: an opaque frame), or given to an encoder */
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
  /* 50 EMBD_ERR_UNAVAILABLE, 51 EMBD_BATCH_END, 52 EMBD_STOPPED: above. */
  /* dtypes and byte orders (embd/convert.h) */
  EMBD_ERR_DTYPE_LENGTH = 53,         /* bytes that are not a whole number of elements of
                                         the dtype (or packed-bit dims not a multiple of 8) */
  EMBD_ERR_DTYPE_RANGE = 54,          /* a value the target dtype cannot hold exactly
                                         (int8/uint8: not an integer in range) */
  EMBD_ERR_FRAME_BAD_DTYPE = 55,      /* a version-2 EMBD frame with an unknown dtype code */
  EMBD_ERR_OPENAI_DTYPE = 56,         /* a response whose dtype or byte order is not what
                                         the caller asked for */
  EMBD_ERR_OPENAI_METADATA = 57,      /* a vLLM bytes body's metadata malformed, or its
                                         items out of range, overlapping or mismatched */
  /* database ingest writers (embd/pgcopy.h, embd/vecfile.h) */
  EMBD_ERR_VECTOR_DIMS = 58,          /* dims (or a sparse vector's non-zero count) the
                                         target type refuses, or not the column's */
  EMBD_ERR_VECTOR_VALUE = 59,         /* a value the target type refuses: NaN, an infinity,
                                         beyond binary16 (halfvec), a zero sparse value */
  EMBD_ERR_SPARSE_INDEX = 60          /* a sparse index out of range, repeated or not
                                         ascending */
  /* The next code is 61. */
} embd_result;

/* The old name of EMBD_ERR_UNAVAILABLE for the OpenAI decoder and the HELLO/READY parser
 * (it was its own code, 36, until 0.2). Same value: one unavailable code. */
#define EMBD_ERR_OPENAI_UNAVAILABLE EMBD_ERR_UNAVAILABLE

/* Filled by decoders on failure (and reset on success): the result, the byte offset in
 * the input the problem is at, and a message naming the values, e.g.
 * "header CRC mismatch: stored 0x12345678, computed 0x9abcdef0 (bytes 0-11)".
 * offset is 64-bit on every host: the streams count their bytes in uint64_t, so an error
 * past 4 GiB of a stream has its true offset on 32-bit hosts too. */
typedef struct embd_error {
  embd_result result;
  uint64_t offset;
  char message[160];
} embd_error;

/* A static, human-readable description of a result code ("unknown result" for others). */
EMBD_API const char *embd_strerror(embd_result r);

/* The enum name of a result code as it is spelled here, e.g. "EMBD_ERR_BASE64_CHAR"
 * ("EMBD_OK", "EMBD_BATCH_END"), for bindings that report errors by name; NULL for a
 * value that is not a code (a retired one included). Since 0.3.0 (added, same SONAME). */
EMBD_API const char *embd_result_name(embd_result r);

/* The library's version at run time, e.g. "0.4.0", and as EMBD_VERSION_NUMBER. */
EMBD_API const char *embd_version(void);
EMBD_API unsigned embd_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
