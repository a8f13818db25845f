/* embd: the stream modes the inference engines ship for Codec token ids (vLLM, SGLang,
 * llama.cpp forks): `stream_format: "msgpack"` and `stream_format: "protobuf"`.
 *
 * msgpack mode: msgpack maps concatenated without any delimiter,
 *     { "ids": [uint, ...], "done": bool, "finish_reason"?: str, "tool_calls"?: any }
 * protobuf mode: per frame a 4-byte big-endian length, then that many bytes of
 *     message CodecFrame { repeated uint32 ids = 1 [packed = true]; bool done = 2;
 *                          optional string finish_reason = 3;
 *                          repeated ToolCall tool_calls = 4; }
 * (proto/codec.proto in the source tree).
 *
 * Readers take the bytes in chunks of any size (1 byte included) and call on_frame once
 * per frame, as soon as its last byte is in. Memory is bounded: one buffer of at most
 * max_frame_bytes for a frame that spans chunks (grown on demand; frames wholly inside
 * the chunk being fed are decoded in place), the ids array (max_ids), and for msgpack
 * msgpack-c's zone for one frame's objects (a pre-scan bounds every container count by
 * the frame's remaining bytes before msgpack-c sees a header, so a 5-byte "array of 4
 * billion" header cannot make it allocate). Errors are sticky: once a feed fails, every
 * later feed/finish returns the same error. err->offset is the absolute byte offset in
 * the whole stream of the byte at fault; err->message names the frame and the problem,
 * e.g. "frame 2 at byte 77: ids[3] is a string, expected an unsigned integer".
 * Every msgpack-mode error is EMBD_ERR_MSGPACK, every protobuf-mode error
 * EMBD_ERR_PROTOBUF (frames above max_frame_bytes and a stream that ends inside a frame
 * included); a callback's own result is passed through.
 *
 * Shape rules, both modes:
 *   ids      uint32 values. msgpack: an array of unsigned integers <= UINT32_MAX (any
 *            msgpack int encoding of a non-negative value), required in every frame:
 *            every engine encoder writes it, as [] on a terminal frame without a token
 *            (vLLM's encode_msgpack always emits "ids" and "done"). protobuf: packed or
 *            unpacked field 1, varints <= UINT32_MAX; absent means none (proto3).
 *            More than max_ids ids in one frame is an error.
 *   done     msgpack: a bool, or absent (false), never another type. protobuf: field 2, a
 *            varint (non-zero = true); absent = false (a canonical proto3 encoder omits it
 *            on non-final frames; vLLM, the engine forks and libcodec write 0x10 0x00).
 *   finish_reason  msgpack: a string, or nil / absent (no reason). protobuf: field 3,
 *            length-delimited; the last one wins. Bytes as sent (not UTF-8 checked).
 *   tool_calls opaque, handed over raw. msgpack: the bytes of the one msgpack value of the
 *            "tool_calls" key (whatever its type). protobuf: the field-4 records (tag 0x22,
 *            length, ToolCall bytes) in stream order, back to back: itself a valid
 *            CodecFrame encoding holding only the tool calls, for protobuf-c's
 *            codec_frame__unpack or any parser.
 *   msgpack: the frame must be a map; keys other than the four (and non-string keys)
 *            are ignored; a duplicate of one of the four is an error; nesting deeper than
 *            32 containers is an error (msgpack-c's own limit).
 *   protobuf: unknown fields are skipped by wire type (varint, fixed64, length-delimited,
 *            fixed32); group wire types (3, 4) and the undefined 6, 7 are errors; varints
 *            longer than 10 bytes, tags above 5 bytes or field number 0 are errors; a
 *            length (prefix or field) is checked against the bytes that remain before
 *            anything is read or allocated. A zero-length frame (prefix 00 00 00 00) is
 *            a frame: no ids, not done (a generated proto3 encoder writes no byte for
 *            ids = [], done = false). Every step consumes at least one byte (an empty
 *            frame its 4 prefix bytes), so no input makes a reader loop.
 *
 * Encoders write one frame into caller memory; *_encoded_size says how much first.
 * msgpack: the vLLM key order ("ids", "done", then "finish_reason", "tool_calls" when
 * present), each value in its shortest encoding (what msgpack-c's packer writes).
 * protobuf: what vLLM's encoder and libcodec write (protobuf-c's pack with has_done set):
 * ids packed (omitted when none), then done always (10 00 for false, 10 01 for true), so a
 * capture from embd and from them compares equal; finish_reason when not NULL, then the
 * tool_calls records verbatim. One token per frame costs 4 + 1 + 1 + (1..5) + 2 bytes: at
 * most 13; the smallest frame (no ids, not done) is 6 bytes, 00 00 00 02 10 00.
 * Both formats are byte-order independent; ids are host uint32 on both sides.
 *
 * Thread safety: the encoders are reentrant. A msgpack or protobuf reader is used by one
 * thread at a time (on_frame runs inside its feed); distinct readers are independent.
 */
#ifndef EMBD_CODEC_STREAM_H
#define EMBD_CODEC_STREAM_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One frame. Decoded: every pointer is valid during the on_frame call only (ids in the
 * reader's array; finish_reason and tool_calls into the frame's bytes). Encoded: the
 * caller's values; offset, index and size are ignored. */
typedef struct embd_codec_stream_frame {
  const uint32_t *ids; /* n_ids host-order ids (may be NULL when n_ids is 0) */
  size_t n_ids;
  int done;                  /* 0 or 1 */
  const char *finish_reason; /* NULL when absent; not NUL-terminated */
  size_t finish_reason_len;
  const uint8_t *tool_calls; /* NULL when absent; raw bytes (above) */
  size_t tool_calls_len;
  /* decoded frames only: */
  uint64_t index;  /* 0 for the stream's first frame */
  uint64_t offset; /* absolute offset of the frame's first byte (protobuf: its prefix) */
  size_t size;     /* the frame's bytes on the wire (protobuf: prefix included) */
} embd_codec_stream_frame;

/* Anything but EMBD_OK stops the stream with that result (sticky, at the frame's offset):
 * EMBD_STOPPED to stop without an error, an error code to fail the stream with it. */
typedef embd_result (*embd_codec_stream_frame_fn)(void *user, const embd_codec_stream_frame *frame);

typedef struct embd_codec_stream_options {
  size_t max_frame_bytes; /* required (non-zero): msgpack, the whole map; protobuf, the
                             length prefix's value (the 4 prefix bytes not counted) */
  size_t max_ids;         /* ids per frame; 0 = max_frame_bytes (each id takes >= 1 byte) */
  embd_codec_stream_frame_fn on_frame; /* required */
  void *user;
  /* 0.3: EMBD_CODEC_STREAM_* flags (zero: the plain modes, as before). Took one reserved_
   * slot; unknown bits, and EMBD_CODEC_STREAM_BASE_ID_4 without EMBD_CODEC_STREAM_DELTA
   * or on a msgpack reader, are EMBD_ERR_INVALID_ARGUMENT. */
  uint64_t flags;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[3];
  void *reserved_ptr_[2];
} embd_codec_stream_options;

/* The delta variants (stream_format "msgpack-delta" / "protobuf-delta", Codec v0.5-1):
 * frames carry base_id (the last id of the previous frame, 0 for the first) and zigzag
 * chained deltas, d[0] = zigzag(ids[0] - base_id), d[k] = zigzag(ids[k] - ids[k-1]).
 * Readers rebuild the absolute ids from each frame alone (no state across frames: a
 * dropped frame does not desynchronise) and deliver them in frame->ids as in the plain
 * modes. Shapes, in the reader with EMBD_CODEC_STREAM_DELTA:
 *   msgpack-delta: { "base_id": uint, "ids_delta": [uint, ...], "done": bool,
 *                    "finish_reason": str | nil, "tool_calls"?: any }
 *     base_id (<= UINT32_MAX) and ids_delta (unsigned integers, zigzag values) are
 *     required; an "ids" key is an error (a server MUST NOT mix the shapes: draft
 *     "Liberal/Conservative Acceptance"); done, finish_reason, tool_calls as in msgpack
 *     mode; other keys are ignored (spec v0.5's summary mentions a "delta" flag: ignored).
 *   protobuf-delta: the CodecFrame of protobuf mode, field 1 holding the zigzag deltas
 *     (packed or not, each <= UINT32_MAX: the field is uint32), base_id a varint in field
 *     5 (the Internet-Draft's `optional uint32 base_id = 5`, the default) or, with
 *     EMBD_CODEC_STREAM_BASE_ID_4, in field 4 (spec v0.5's `int32 base_id = 4`: a varint
 *     in field 4 is base_id, at most INT32_MAX; length-delimited field-4 records stay
 *     tool_calls). base_id is required (the draft: "Required when delta-varint encoding
 *     is in use"); the last one wins, as for any proto3 scalar. With base_id in field 5,
 *     field 4 stays tool_calls only and field 5 is no longer skipped as unknown.
 *   Both: every rebuilt id must lie in 0..UINT32_MAX, else an error naming the delta
 *     ("ids_delta[2] = 7 (a step of -4 from 3) takes the id out of 0..UINT32_MAX",
 *     err->offset at that delta).
 *   More than max_ids deltas is an error, as for ids. */
#define EMBD_CODEC_STREAM_DELTA 1u     /* the reader decodes msgpack-delta / protobuf-delta */
#define EMBD_CODEC_STREAM_BASE_ID_4 2u /* protobuf-delta: base_id in field 4 (spec v0.5), not 5 (draft) */
#define EMBD_CODEC_STREAM_KNOWN_FLAGS (EMBD_CODEC_STREAM_DELTA | EMBD_CODEC_STREAM_BASE_ID_4)

typedef struct embd_codec_msgpack_reader embd_codec_msgpack_reader;
typedef struct embd_codec_proto_reader embd_codec_proto_reader;

/* EMBD_ERR_INVALID_ARGUMENT without max_frame_bytes or on_frame (or, protobuf, with
 * max_frame_bytes above UINT32_MAX: the prefix cannot say more), EMBD_ERR_OUT_OF_MEMORY. */
EMBD_API embd_result embd_codec_msgpack_create(const embd_codec_stream_options *opt,
                                               embd_codec_msgpack_reader **out);
/* Feeds len bytes (any length, 0 included; data may be NULL when len is 0). err may be NULL. */
EMBD_API embd_result embd_codec_msgpack_feed(embd_codec_msgpack_reader *r, const void *data,
                                             size_t len, embd_error *err);
/* End of input: an error if the stream ends inside a frame (offset: the end). */
EMBD_API embd_result embd_codec_msgpack_finish(embd_codec_msgpack_reader *r, embd_error *err);
EMBD_API void embd_codec_msgpack_destroy(embd_codec_msgpack_reader *r);
EMBD_API uint64_t embd_codec_msgpack_frames(const embd_codec_msgpack_reader *r);
EMBD_API uint64_t embd_codec_msgpack_offset(const embd_codec_msgpack_reader *r);

EMBD_API embd_result embd_codec_proto_create(const embd_codec_stream_options *opt,
                                             embd_codec_proto_reader **out);
EMBD_API embd_result embd_codec_proto_feed(embd_codec_proto_reader *r, const void *data,
                                           size_t len, embd_error *err);
EMBD_API embd_result embd_codec_proto_finish(embd_codec_proto_reader *r, embd_error *err);
EMBD_API void embd_codec_proto_destroy(embd_codec_proto_reader *r);
EMBD_API uint64_t embd_codec_proto_frames(const embd_codec_proto_reader *r);
EMBD_API uint64_t embd_codec_proto_offset(const embd_codec_proto_reader *r);

/* Bytes embd_codec_*_encode writes for f. EMBD_ERR_INVALID_ARGUMENT for a NULL f, NULL
 * pointers with non-zero lengths, tool_calls that are not one msgpack value (msgpack) /
 * a run of field-4 length-delimited records (protobuf), a protobuf frame larger than
 * UINT32_MAX, or a size that does not fit size_t. */
EMBD_API embd_result embd_codec_msgpack_encoded_size(const embd_codec_stream_frame *f, size_t *size);
EMBD_API embd_result embd_codec_proto_encoded_size(const embd_codec_stream_frame *f, size_t *size);
/* Writes the frame (protobuf: with its length prefix) to out; EMBD_ERR_OUTPUT_TOO_SMALL
 * (nothing written, *written = the size needed) when cap is short. written may be NULL. */
EMBD_API embd_result embd_codec_msgpack_encode(const embd_codec_stream_frame *f, void *out, size_t cap,
                                               size_t *written);
EMBD_API embd_result embd_codec_proto_encode(const embd_codec_stream_frame *f, void *out, size_t cap,
                                             size_t *written);

/* The delta variants' encoders: one frame of f's ids as deltas against base_id (the last
 * id of the previous frame the caller sent, 0 for the stream's first; the caller keeps it
 * across frames, leaving it unchanged after a frame without ids, as the reference encoder
 * does). msgpack-delta writes what the Codec repository's Python reference
 * (codecai/stream_delta.py, msgspec) writes: a map of "base_id", "ids_delta", "done",
 * "finish_reason" (nil when NULL) in that order, then "tool_calls" when present, each
 * value in its shortest encoding. protobuf-delta: field 1 the packed zigzag deltas
 * (omitted when none), done always, finish_reason when not NULL, then base_id always, in
 * field-number order (field 5, or field 4 before the tool_calls records with flags =
 * EMBD_CODEC_STREAM_BASE_ID_4; 0 otherwise), then tool_calls. EMBD_ERR_INVALID_ARGUMENT
 * as for the plain encoders, for unknown flags, and (protobuf) for a delta whose zigzag
 * value does not fit field 1's uint32 (a jump of 2^31 or more between neighbouring ids)
 * or, in field 4 (int32), a base_id above INT32_MAX. */
EMBD_API embd_result embd_codec_msgpack_delta_encoded_size(const embd_codec_stream_frame *f, uint32_t base_id,
                                                           size_t *size);
EMBD_API embd_result embd_codec_msgpack_delta_encode(const embd_codec_stream_frame *f, uint32_t base_id,
                                                     void *out, size_t cap, size_t *written);
EMBD_API embd_result embd_codec_proto_delta_encoded_size(const embd_codec_stream_frame *f, uint32_t base_id,
                                                         uint64_t flags, size_t *size);
EMBD_API embd_result embd_codec_proto_delta_encode(const embd_codec_stream_frame *f, uint32_t base_id,
                                                   uint64_t flags, void *out, size_t cap, size_t *written);

#ifdef __cplusplus
}
#endif

#endif
