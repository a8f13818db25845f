/* Strict RFC 8259 JSON, piece by piece, over a byte range that is never read past.
 *
 * The decoders that walk a JSON text themselves (openai.cc) use these for everything they
 * do not consume, so a body is valid JSON wherever its fault sits; embd_json_validate
 * checks a whole text the same way. Every function takes the position of a token and
 * returns the position just past it, or NULL after recording the first fault (its byte
 * and a message naming what is wrong) in the embd_json. Not installed.
 *
 * What strict means here: the grammar of RFC 8259 exactly (no comments, no trailing
 * commas, no single quotes, no leading zeros or '+', no NaN/Infinity, only the six
 * two-character escapes and \uXXXX), strings of well-formed UTF-8 (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF) without raw control bytes, \u escapes
 * naming a surrogate only as a high-low pair (an unpaired one cannot become UTF-8), and
 * nesting at most EMBD_JSON_MAX_DEPTH deep. A leading UTF-8 byte order mark is the
 * caller's decision (RFC 8259 section 8.1 lets a parser ignore one). */
#ifndef EMBD_JSON_STRICT_H
#define EMBD_JSON_STRICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "fail.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_JSON_MAX_DEPTH 1024

typedef struct embd_json {
  const uint8_t *base, *end; /* the text; offsets are from base */
  const uint8_t *fault_at;   /* the first fault's byte (end: the text ended early) */
  char fault[96];            /* what is wrong there, e.g. "expected ',' or ']'" */
} embd_json;

static inline void embd_json_init(embd_json *j, const void *text, size_t len) {
  j->base = (const uint8_t *)text;
  j->end = j->base + len;
  j->fault_at = NULL;
  j->fault[0] = 0;
}

/* Records a fault at p (the first one wins) and returns NULL. */
EMBD_INTERNAL const uint8_t *embd_json_fault(embd_json *j, const uint8_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The byte offset of the recorded fault. */
static inline size_t embd_json_fault_offset(const embd_json *j) {
  return (size_t)((j->fault_at ? j->fault_at : j->end) - j->base);
}

/* Bit 7 of each byte of x set iff that byte is not b: exact per byte (no carry crosses a
 * byte: (x & 0x7F) + 0x7F <= 0xFE). */
static inline uint64_t embd_json_swar_ne(uint64_t x, uint8_t b) {
  const uint64_t lo7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
  x ^= UINT64_C(0x0101010101010101) * b;
  return (((x & lo7) + lo7) | x) & ~lo7;
}

/* Past JSON whitespace (space, tab, LF, CR). Sixteen bytes at a time while sixteen are
 * left (SSE2 and NEON are in every x86-64 and aarch64 baseline, SIMD128 in the wasm
 * module built with it; eight with SWAR elsewhere): a pretty-printed array puts a
 * newline and an indent (9+ bytes) before every number. */
static inline const uint8_t *embd_json_ws(const uint8_t *p, const uint8_t *end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i ws = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\t'))));
    const unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
    if (other) return p + __builtin_ctz(other);
    p += 16;
  }
#elif defined(__aarch64__) && defined(__ARM_NEON)
  while (end - p >= 16) {
    const uint8x16_t x = vld1q_u8(p);
    const uint8x16_t ws = vorrq_u8(vorrq_u8(vceqq_u8(x, vdupq_n_u8(' ')), vceqq_u8(x, vdupq_n_u8('\n'))),
                                   vorrq_u8(vceqq_u8(x, vdupq_n_u8('\r')), vceqq_u8(x, vdupq_n_u8('\t'))));
    /* Four bits per byte (the narrowing shift), set where the byte is not whitespace. */
    const uint64_t other =
        ~vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(ws), 4)), 0);
    if (other) return p + (__builtin_ctzll(other) >> 2);
    p += 16;
  }
#elif defined(__wasm_simd128__)
  while (end - p >= 16) {
    const v128_t x = wasm_v128_load(p);
    const v128_t ws = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(x, wasm_i8x16_splat(' ')), wasm_i8x16_eq(x, wasm_i8x16_splat('\n'))),
                                   wasm_v128_or(wasm_i8x16_eq(x, wasm_i8x16_splat('\r')), wasm_i8x16_eq(x, wasm_i8x16_splat('\t'))));
    const unsigned other = ~(unsigned)wasm_i8x16_bitmask(ws) & 0xFFFFu;
    if (other) return p + __builtin_ctz(other);
    p += 16;
  }
#else
  while (end - p >= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x); /* byte 0 (the first) in the low bits, as ctz reads it */
#endif
    const uint64_t other = embd_json_swar_ne(x, ' ') & embd_json_swar_ne(x, '\n') &
                           embd_json_swar_ne(x, '\r') & embd_json_swar_ne(x, '\t');
    if (other) return p + (__builtin_ctzll(other) >> 3);
    p += 8;
  }
#endif
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

/* A string; p at its opening '"'. *escapes (may be NULL) tells whether it holds a '\\'. */
EMBD_INTERNAL const uint8_t *embd_json_string(embd_json *j, const uint8_t *p, int *escapes);

/* A number's grammar; p at its first byte. */
EMBD_INTERNAL const uint8_t *embd_json_number(embd_json *j, const uint8_t *p);

/* Any value, containers included (each nesting level counts towards the depth limit);
 * p at its first byte (not whitespace). */
EMBD_INTERNAL const uint8_t *embd_json_value(embd_json *j, const uint8_t *p);

/* The value at p and, when it is valid, a word for its type ("null", "a boolean", "a
 * number", "a string", "an array", "an object"); NULL (fault recorded) when not valid.
 * For the shape errors of a decoder: a valid value of the wrong type is a shape error, an
 * invalid one a JSON error. *past (may be NULL) gets the position after it. */
EMBD_INTERNAL const char *embd_json_type_of(embd_json *j, const uint8_t *p, const uint8_t **past);

/* The content of a valid string (between its quotes, [p, q)) with escapes decoded to
 * UTF-8: writes at most cap bytes to out and returns the whole decoded length. */
EMBD_INTERNAL size_t embd_json_unescape(const uint8_t *p, const uint8_t *q, uint8_t *out, size_t cap);

/* A whole text: whitespace, one value, whitespace, the end. allow_bom: a leading UTF-8
 * byte order mark (EF BB BF) is skipped. Returns 0, or -1 with the fault recorded. */
EMBD_INTERNAL int embd_json_validate(embd_json *j, int allow_bom);

/* ---- Walking a text embd_json_validate accepted -------------------------------------
 * The decoders of whole documents (tokenizer maps, the Codec handshake) validate first (the
 * fault and its byte come from the pieces above), then walk the text with these: they
 * check nothing again, cannot fail, and never read past end. */

/* Past the closing quote of the valid string whose opening '"' is at p. *escapes (may be
 * NULL): whether it holds a '\\' (then its content needs embd_json_unescape). */
EMBD_INTERNAL const uint8_t *embd_json_string_end(const uint8_t *p, const uint8_t *end, int *escapes);

/* Past the valid value at p (not whitespace), containers included. */
EMBD_INTERNAL const uint8_t *embd_json_skip(const uint8_t *p, const uint8_t *end);

/* The members of an object or the elements of an array, in order. */
typedef struct embd_json_iter {
  const uint8_t *at;   /* the current member's value or element (after a 1 from _next) */
  const uint8_t *past; /* just past it, when the reader sets it; NULL: _next skips it */
  const uint8_t *end;
  int obj, started;
} embd_json_iter;

/* p at the container's '{' or '['. */
static inline void embd_json_iter_init(embd_json_iter *it, const uint8_t *p, const uint8_t *end) {
  it->at = p + 1;
  it->past = NULL;
  it->end = end;
  it->obj = *p == '{';
  it->started = 0;
}

/* The next member or element: 1, it->at at its value and (objects; key may be NULL for
 * arrays) *key at its key's opening quote; 0 at the end, it->past then just past the
 * container's '}' or ']'. */
EMBD_INTERNAL int embd_json_iter_next(embd_json_iter *it, const uint8_t **key);

/* The number at p (valid grammar) as an integer, as a JSON reader that keeps 64-bit
 * integers exactly sees it: EMBD_JSON_UINT (*u: 0..2^64-1 written without a fraction or an
 * exponent; -0 is 0), EMBD_JSON_NEG (*neg: -2^63..-1, likewise), else EMBD_JSON_NOT_INT (a
 * fraction, an exponent, or outside both ranges). */
enum { EMBD_JSON_NOT_INT = 0, EMBD_JSON_UINT = 1, EMBD_JSON_NEG = 2 };
EMBD_INTERNAL int embd_json_int(const uint8_t *p, const uint8_t *end, uint64_t *u, int64_t *neg);

#ifdef __cplusplus
}
#endif

#endif
