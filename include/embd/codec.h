/* embd: Codec session frames (protocol v0.5) and the HELLO/READY handshake.
 *
 * A session frame is [type u8][payload_len u32 big-endian][payload]; payload_len counts the
 * payload only (docs/CODEC.md has the table and a hex example):
 *
 *   0x00 HELLO          UTF-8 JSON (embd_codec_hello_build / _parse)
 *   0x01 READY          UTF-8 JSON (embd_codec_ready_build / _parse)
 *   0x02 TOKENS         big-endian uint32 token ids (payload_len a multiple of 4)
 *   0x03 EOS            empty: exactly 03 00 00 00 00
 *   0x04 ERROR          a UTF-8 message
 *   0x05 LATENT_HEADER  opaque to this library (handed to the caller)
 *   0x06 LATENTS        opaque to this library
 *
 *   uint8_t out[64]; size_t n;
 *   const uint32_t ids[3] = {50001, 50002, 50003};
 *   embd_codec_encode_tokens(ids, 3, out, sizeof out, &n);
 *   // n == 17: 02 00 00 00 0C 00 00 C3 51 00 00 C3 52 00 00 C3 53
 *
 * Frame types from 0x07 up: the spec's versioning rules let a minor protocol version add
 * frame types there, so by default a frame of such a type is checked only for its header
 * (the maximum payload) and handed over opaque: `type` is the byte, `payload` its bytes,
 * no other rule applies (embd_codec_type_name says "unknown"); a caller that does not
 * know the type skips it. EMBD_CODEC_STRICT_TYPES in the options (flags) makes such a type
 * an error, EMBD_ERR_CODEC_UNKNOWN_TYPE, as in 0.2. Types 0x00-0x06 keep their rules.
 *
 * Decoding is strict otherwise: a TOKENS payload that is not a multiple of 4
 * bytes, an EOS with a payload, invalid UTF-8 (overlongs, surrogates, > U+10FFFF, truncated
 * sequences) in HELLO/READY/ERROR, and a payload above the caller's maximum are errors
 * (EMBD_ERR_CODEC_*), with the byte offset and a message naming the values, e.g.
 * "frame 3 at byte 120: TOKENS payload of 7 bytes is not a multiple of 4". Checks happen
 * as soon as the bytes they need are there: the type at byte 0, the length rules at byte 5,
 * UTF-8 when the payload is complete; an input ending inside a frame is
 * EMBD_ERR_CODEC_TRUNCATED at the end offset.
 *
 * Error offsets: unknown type: the type byte; length rules and too large: the length field
 * (frame offset + 1); UTF-8: the first byte of the bad sequence; truncated: the end of the
 * input.
 *
 * Thread safety: the frame, handshake and helper functions are reentrant. An
 * embd_codec_reader is used by one thread at a time (callbacks run inside its feed);
 * distinct readers are independent. A parsed embd_codec_hello / embd_codec_ready is plain
 * data: read it from any number of threads, free it once.
 */
#ifndef EMBD_CODEC_H
#define EMBD_CODEC_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum embd_codec_type {
  EMBD_CODEC_HELLO = 0x00,
  EMBD_CODEC_READY = 0x01,
  EMBD_CODEC_TOKENS = 0x02,
  EMBD_CODEC_EOS = 0x03,
  EMBD_CODEC_ERROR = 0x04,
  EMBD_CODEC_LATENT_HEADER = 0x05,
  EMBD_CODEC_LATENTS = 0x06
} embd_codec_type;

#define EMBD_CODEC_HEADER_SIZE 5
/* The maximum payload used when the options leave it 0 (16 MiB). */
#define EMBD_CODEC_DEFAULT_MAX_PAYLOAD ((size_t)16 << 20)

/* "HELLO", "READY", ..., or "unknown" for other bytes. */
EMBD_API const char *embd_codec_type_name(unsigned type);

/* One frame. `payload` points into the decoded buffer (or the stream reader's buffer or
 * chunk: valid during the callback only). In the reader's dest mode a TOKENS frame may have
 * been written straight to caller memory: then `ids` points there and `payload` may be
 * NULL. */
typedef struct embd_codec_frame {
  uint8_t type;            /* embd_codec_type, or 0x07..0xFF: a newer type (opaque) */
  uint32_t index;          /* frame number in the stream (0 for embd_codec_decode_frame) */
  uint64_t offset;         /* offset of the type byte in the stream (64-bit on every host) */
  const uint8_t *payload;  /* payload_len bytes (NULL: see above) */
  size_t payload_len;
  const uint32_t *ids;     /* reader dest mode: the host-order ids; else NULL */
} embd_codec_frame;

/* Decode option flags (embd_codec_decode_options.flags, embd_codec_reader_options.flags). */
#define EMBD_CODEC_STRICT_TYPES 1u /* a type byte from 0x07 up is EMBD_ERR_CODEC_UNKNOWN_TYPE
                                      (default: an opaque frame, handed over) */
#define EMBD_CODEC_KNOWN_FLAGS EMBD_CODEC_STRICT_TYPES

typedef struct embd_codec_decode_options {
  size_t max_payload; /* payloads above it are EMBD_ERR_CODEC_FRAME_TOO_LARGE; 0: default */
  /* 0.3: EMBD_CODEC_* flags (zero: 0x07 and up are opaque frames). Took one reserved_
   * slot; other bits are EMBD_ERR_INVALID_ARGUMENT. */
  uint64_t flags;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[3];
  void *reserved_ptr_[2];
} embd_codec_decode_options;

/* ---- frames --------------------------------------------------------------------------- */

/* 5 + payload_len in *size. EMBD_ERR_INVALID_ARGUMENT for a type above 0x06 or a length
 * that does not fit the u32 field (or size_t). The encoders write the types embd knows
 * only: an opaque frame of a newer type is passed on with embd_codec_forward, unchanged. */
EMBD_API embd_result embd_codec_frame_size(unsigned type, size_t payload_len, size_t *size);

/* One frame of `type` around `len` payload bytes, into out[cap]; *written = bytes.
 * The payload must obey the frame's rules (TOKENS a multiple of 4 bytes, EOS empty,
 * HELLO/READY/ERROR valid UTF-8: else the EMBD_ERR_CODEC_* code the decoder would give).
 * EMBD_ERR_OUTPUT_TOO_SMALL (with *written = the size needed) when cap is short. */
EMBD_API embd_result embd_codec_encode_frame(unsigned type, const void *payload, size_t len,
                                             void *out, size_t cap, size_t *written);

/* One TOKENS frame of n host-order ids (4n + 5 bytes; n <= 0x3FFFFFFF). */
EMBD_API embd_result embd_codec_encode_tokens(const uint32_t *ids, size_t n, void *out,
                                              size_t cap, size_t *written);

/* Re-framing: n ids as TOKENS frames of at most per_frame ids each (the last may be
 * shorter; n == 0 gives no frame). *size / *written: the bytes. */
EMBD_API embd_result embd_codec_tokens_frames_size(size_t n, size_t per_frame, size_t *size);
EMBD_API embd_result embd_codec_encode_tokens_frames(const uint32_t *ids, size_t n,
                                                     size_t per_frame, void *out, size_t cap,
                                                     size_t *written);

/* The frame at the front of buf[len]: validates it (all the rules above), fills *frame
 * (payload pointing into buf) and *consumed (5 + payload_len). `opt` and `err` may be NULL.
 * Offsets count from buf. */
EMBD_API embd_result embd_codec_decode_frame(const void *buf, size_t len,
                                             const embd_codec_decode_options *opt,
                                             embd_codec_frame *frame, size_t *consumed,
                                             embd_error *err);

/* Iterates a buffer of frames: decodes the frame at *pos (< len), numbering it *index;
 * on success advances *pos and *index. Offsets and messages are those of the stream reader
 * over the same bytes ("frame 2 at byte 34: ..."), absolute in buf. */
EMBD_API embd_result embd_codec_next(const void *buf, size_t len, size_t *pos, uint32_t *index,
                                     const embd_codec_decode_options *opt,
                                     embd_codec_frame *frame, embd_error *err);

/* How many bytes the frame starting at buf needs, from its first len bytes (any, 0
 * included): 5 until its header is in, then the whole frame's size (5 + payload length).
 * For a loop that reads a socket itself: read until len >= *need, call again; once
 * *need <= len the frame is buf[0 .. *need). The type byte and the header's length rules
 * (opt->max_payload) are checked as soon as their bytes are there, with
 * embd_codec_decode_frame's codes and messages; the UTF-8 rule needs the whole frame
 * (embd_codec_decode_frame). `opt` and `err` may be NULL. */
EMBD_API embd_result embd_codec_frame_need(const void *buf, size_t len,
                                           const embd_codec_decode_options *opt, uint64_t *need,
                                           embd_error *err);

/* A TOKENS frame's ids in host order: *n = payload_len / 4; copies them into ids[cap].
 * EMBD_ERR_INVALID_ARGUMENT if the frame is not TOKENS (or its length is not a multiple
 * of 4); EMBD_ERR_OUTPUT_TOO_SMALL if cap < *n (nothing written). */
EMBD_API embd_result embd_codec_tokens(const embd_codec_frame *frame, uint32_t *ids, size_t cap,
                                       size_t *n);

/* The agent-to-agent path: validates every frame of in[len] and copies those whose type
 * bit is set in `types` ((1u << type), types 0x00-0x1F; 0 means TOKENS and EOS; a frame of
 * type 0x20 or above is never copied) unchanged to out[cap],
 * without touching the ids. *written = bytes copied (the size needed with
 * EMBD_ERR_OUTPUT_TOO_SMALL), *frames (may be NULL) = frames copied. A decode error stops
 * it (out then holds the frames before). */
EMBD_API embd_result embd_codec_forward(const void *in, size_t len,
                                        const embd_codec_decode_options *opt, unsigned types,
                                        void *out, size_t cap, size_t *written, size_t *frames,
                                        embd_error *err);

/* ---- the stream reader ----------------------------------------------------------------
 *
 *   embd_codec_reader_options o = {0};
 *   o.max_payload = 1 << 20;  // bounds the one buffer
 *   o.on_frame = cb;          // once per frame, as soon as its bytes are in
 *   embd_codec_reader *r;
 *   embd_codec_reader_create(&o, &r);
 *   while (more) if (embd_codec_reader_feed(r, chunk, n, &err) != EMBD_OK) break;
 *   embd_codec_reader_finish(r, &err);   // EMBD_ERR_CODEC_TRUNCATED for a partial frame
 *   embd_codec_reader_destroy(r);
 *
 * Chunks of any size. A frame wholly inside the chunk being fed is handed to on_frame in
 * place (no copy); others are assembled in one buffer that grows up to 5 + max_payload
 * bytes and never beyond (nothing else is allocated). The callback's frame is valid during
 * the call only.
 *
 * Dest mode (tokens_dest): once a TOKENS frame's header is in, tokens_dest(user, index, n)
 * names where its n ids go (room for n uint32_t, not inside any chunk fed) or returns NULL
 * (that frame takes the path above). The ids are written there in host order while the
 * bytes arrive (each byte copied once, never assembled); on_frame (optional with
 * tokens_dest) then gets the frame with `ids` set and `payload` NULL. If the stream fails
 * inside such a frame its destination holds an unspecified part of the ids.
 *
 * Same codes, offsets and messages as embd_codec_next over the whole input, with
 * truncation found by finish. Errors are sticky: every later feed/finish returns the same
 * error. Offsets are absolute byte offsets in the whole stream. */

typedef embd_result (*embd_codec_frame_fn)(void *user, const embd_codec_frame *frame);
typedef uint32_t *(*embd_codec_tokens_dest_fn)(void *user, uint32_t index, size_t n_ids);

typedef struct embd_codec_reader_options {
  size_t max_payload;             /* 0: EMBD_CODEC_DEFAULT_MAX_PAYLOAD */
  embd_codec_frame_fn on_frame;   /* required unless tokens_dest is set; non-OK stops the
                                     stream with that code (EMBD_STOPPED: no error) */
  void *user;
  embd_codec_tokens_dest_fn tokens_dest; /* optional: TOKENS ids into caller memory */
  /* 0.3: EMBD_CODEC_* flags, as in embd_codec_decode_options. Took one reserved_ slot. */
  uint64_t flags;
  /* Room for later fields: must be zero (embd/common.h, "Growing the ABI"). */
  uint64_t reserved_[3];
  void *reserved_ptr_[2];
} embd_codec_reader_options;

typedef struct embd_codec_reader embd_codec_reader;

/* EMBD_ERR_INVALID_ARGUMENT with neither on_frame nor tokens_dest, a max_payload above
 * the u32 field, or unknown flag bits; EMBD_ERR_OUT_OF_MEMORY if malloc fails. */
EMBD_API embd_result embd_codec_reader_create(const embd_codec_reader_options *opt,
                                              embd_codec_reader **out);
EMBD_API void embd_codec_reader_destroy(embd_codec_reader *r);
/* Feeds len bytes (0 included). `err` may be NULL. */
EMBD_API embd_result embd_codec_reader_feed(embd_codec_reader *r, const void *data, size_t len,
                                            embd_error *err);
/* End of input: EMBD_ERR_CODEC_TRUNCATED (at the end offset) inside a frame. */
EMBD_API embd_result embd_codec_reader_finish(embd_codec_reader *r, embd_error *err);
/* Frames delivered and bytes consumed so far. */
EMBD_API uint32_t embd_codec_reader_frames(const embd_codec_reader *r);
EMBD_API uint64_t embd_codec_reader_offset(const embd_codec_reader *r);

/* ---- handshake ------------------------------------------------------------------------
 *
 * A list of strings: v[0..n). */
typedef struct embd_codec_list {
  const char *const *v;
  size_t n;
} embd_codec_list;

/* HELLO. Build: codec_version is required; empty lists (n == 0) are left out. Parse:
 * every field is optional (an absent codec_version is NULL: the spec treats that client
 * as "0.0"; absent lists have n == 0); unknown fields are ignored; a known field of the
 * wrong type is EMBD_ERR_CODEC_HANDSHAKE naming it. */
typedef struct embd_codec_hello {
  const char *codec_version;
  embd_codec_list accept_tokenizers; /* in preference order */
  embd_codec_list modalities;
  embd_codec_list accept_latent_spaces;
  embd_codec_list accept_decoders;
  embd_codec_list accept_pipelines;
  embd_codec_list accept_safety_policies;
  embd_codec_list accept_transports;
  embd_codec_list accept_encoding;
  void *storage_; /* parse: the one block all strings live in (embd_codec_hello_free) */
} embd_codec_hello;

/* READY. Strings NULL = absent (build leaves them out). Required (build and parse):
 * codec_version; and, unless modality is present and not "text-tokens", tokenizer_id,
 * map_url and map_hash. The *_hash fields (pins): build writes "sha256:" + 64 lowercase hex
 * digits only (anything else is EMBD_ERR_CODEC_HANDSHAKE); parse reads "sha256:" or
 * "SHA256:" + 64 hex digits of any case, as the peers write them, and hands them over
 * normalised to "sha256:" + lower case (comparable with embd_tokmap_hash). */
typedef struct embd_codec_ready {
  const char *codec_version;
  const char *modality;
  const char *tokenizer_id;
  const char *map_url;
  const char *map_hash;
  const char *min_codec_version;
  embd_codec_list required_features;
  const char *safety_policy_id;
  const char *safety_policy_hash;
  const char *transport;
  const char *encoding;
  const char *latent_space_id;
  const char *latent_map_url;
  const char *latent_map_hash;
  const char *decoder_runtime;
  const char *pipeline;
  void *storage_;
} embd_codec_ready;

/* JSON into json[cap] (no NUL counted; one is added when there is room); *len = bytes (the
 * size needed with EMBD_ERR_OUTPUT_TOO_SMALL: call with cap 0 to size). Strings are escaped
 * (quote, backslash, control characters) and must be valid UTF-8 (EMBD_ERR_CODEC_UTF8);
 * a missing required field is EMBD_ERR_CODEC_HANDSHAKE. */
EMBD_API embd_result embd_codec_hello_build(const embd_codec_hello *h, char *json, size_t cap,
                                            size_t *len, embd_error *err);
EMBD_API embd_result embd_codec_ready_build(const embd_codec_ready *r, char *json, size_t cap,
                                            size_t *len, embd_error *err);

/* Parses a HELLO/READY payload (not NUL-terminated; any alignment). On success *out's
 * strings live in one block owned by *out: release it with embd_codec_hello_free /
 * embd_codec_ready_free (which also zero *out). On failure *out is zeroed and owns
 * nothing. Strings with a NUL character (\u0000) are rejected. Needs
 * EMBD_WITH_OPENAI (a C++ compiler): otherwise EMBD_ERR_UNAVAILABLE. */
EMBD_API embd_result embd_codec_hello_parse(const char *json, size_t len, embd_codec_hello *out,
                                            embd_error *err);
EMBD_API embd_result embd_codec_ready_parse(const char *json, size_t len, embd_codec_ready *out,
                                            embd_error *err);
EMBD_API void embd_codec_hello_free(embd_codec_hello *h);
EMBD_API void embd_codec_ready_free(embd_codec_ready *r);

/* Server side: the first of the client's accept_tokenizers that is one of supported[n];
 * *index = its position in the client's list. None: EMBD_ERR_CODEC_NO_TOKENIZER with a
 * message listing both sides. */
EMBD_API embd_result embd_codec_pick_tokenizer(const embd_codec_hello *hello,
                                               const char *const *supported, size_t n,
                                               size_t *index, embd_error *err);

/* 1 if s[len] is "sha256:" followed by 64 lowercase hex digits: the canonical form embd
 * writes (the readers also accept "SHA256:" and upper case: see embd_codec_ready). */
EMBD_API int embd_codec_is_sha256_ref(const char *s, size_t len);
/* 0 if p[len] is valid UTF-8, else 1 + the offset of the first bad sequence. */
EMBD_API size_t embd_codec_utf8_check(const void *p, size_t len);

#ifdef __cplusplus
}
#endif

#endif
