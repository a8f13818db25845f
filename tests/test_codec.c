/* Codec session frames (embd/codec.h): every frame type and error (codes, offsets, message
 * substrings), the spec's worked example as byte constants (so big-endian hosts check
 * byte order), random id arrays, the stream reader against the one-shot decoder for every
 * 2- and 3-chunk split of a small stream, 1-byte chunks, random chunkings of a large one
 * (with and without the dest mode), every truncation and single-byte corruption, UTF-8
 * edge cases, forwarding and re-framing, and the HELLO/READY handshake.
 *
 * Environment: EMBD_TEST_SCALE, EMBD_TEST_SEED, EMBD_ISA.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>
#include <stdio.h>

#include "codecutil.h"
#include "testutil.h"

static tu_rng g_rng;

#define OK(x) assert_int_equal((x), EMBD_OK)

static void expect_err(const embd_error *e, embd_result r, size_t off, const char *sub) {
  if (e->result != r || e->offset != off || !strstr(e->message, sub))
    fail_msg("want %d at %zu with \"%s\", got %d at %zu: %s", (int)r, off, sub, (int)e->result,
             e->offset, e->message);
}

/* ---- the spec's examples ------------------------------------------------------------ */

static void test_worked_example(void **state) {
  (void)state;
  static const uint8_t want[17] = {0x02, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0xC3, 0x51,
                                   0x00, 0x00, 0xC3, 0x52, 0x00, 0x00, 0xC3, 0x53};
  const uint32_t ids[3] = {50001, 50002, 50003};
  uint8_t out[32];
  size_t n;
  OK(embd_codec_encode_tokens(ids, 3, out, sizeof out, &n));
  assert_int_equal(n, 17);
  assert_memory_equal(out, want, 17);
  /* The same through encode_frame with the payload. */
  OK(embd_codec_encode_frame(EMBD_CODEC_TOKENS, want + 5, 12, out, sizeof out, &n));
  assert_memory_equal(out, want, 17);
  embd_codec_frame f;
  size_t used;
  embd_error err;
  OK(embd_codec_decode_frame(want, 17, NULL, &f, &used, &err));
  assert_int_equal(used, 17);
  assert_int_equal(f.type, EMBD_CODEC_TOKENS);
  assert_int_equal(f.payload_len, 12);
  assert_ptr_equal(f.payload, want + 5);
  uint32_t got[3];
  OK(embd_codec_tokens(&f, got, 3, &n));
  assert_int_equal(n, 3);
  assert_int_equal(got[0], 50001);
  assert_int_equal(got[1], 50002);
  assert_int_equal(got[2], 50003);
  assert_int_equal(embd_codec_tokens(&f, got, 2, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 3);
  /* EOS is exactly 03 00 00 00 00. */
  static const uint8_t eos[5] = {3, 0, 0, 0, 0};
  OK(embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, out, sizeof out, &n));
  assert_int_equal(n, 5);
  assert_memory_equal(out, eos, 5);
  OK(embd_codec_decode_frame(eos, 5, NULL, &f, &used, &err));
  assert_int_equal(f.type, EMBD_CODEC_EOS);
  assert_int_equal(f.payload_len, 0);
  /* Sizes and names. */
  OK(embd_codec_frame_size(EMBD_CODEC_TOKENS, 12, &n));
  assert_int_equal(n, 17);
  assert_int_equal(embd_codec_frame_size(7, 0, &n), EMBD_ERR_INVALID_ARGUMENT);
  assert_string_equal(embd_codec_type_name(0), "HELLO");
  assert_string_equal(embd_codec_type_name(6), "LATENTS");
  assert_string_equal(embd_codec_type_name(7), "unknown");
}

/* Every type: header bytes as constants, payload through, decode back. */
static void test_every_type(void **state) {
  (void)state;
  static const struct {
    unsigned type;
    const char *payload;
    size_t len;
  } cases[] = {
      {EMBD_CODEC_HELLO, "{\"codec_version\":\"0.5\"}", 23},
      {EMBD_CODEC_READY, "{}", 2},
      {EMBD_CODEC_TOKENS, "\x00\x00\x00\x01\xFF\xFF\xFF\xFF", 8},
      {EMBD_CODEC_EOS, "", 0},
      {EMBD_CODEC_ERROR, "no tokenizer \xE2\x9C\x93", 16},
      {EMBD_CODEC_LATENT_HEADER, "\xFF\xFE\x00\xC0", 4}, /* opaque: not UTF-8, fine */
      {EMBD_CODEC_LATENTS, "\x80\x81\x82", 3},
      {EMBD_CODEC_HELLO, "", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t out[64];
    size_t n, used;
    OK(embd_codec_encode_frame(cases[i].type, cases[i].payload, cases[i].len, out, sizeof out, &n));
    assert_int_equal(n, 5 + cases[i].len);
    assert_int_equal(out[0], cases[i].type);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 0);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], cases[i].len);
    assert_memory_equal(out + 5, cases[i].payload, cases[i].len);
    embd_codec_frame f;
    embd_error err;
    OK(embd_codec_decode_frame(out, n, NULL, &f, &used, &err));
    assert_int_equal(used, n);
    assert_int_equal(f.type, cases[i].type);
    assert_int_equal(f.payload_len, cases[i].len);
    assert_ptr_equal(f.payload, out + 5);
    assert_string_equal(err.message, "");
    /* Too small an output: the size needed. */
    assert_int_equal(embd_codec_encode_frame(cases[i].type, cases[i].payload, cases[i].len, out,
                                             n - 1, &used),
                     EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(used, n);
  }
  /* A 300-byte payload: the length field's bytes. */
  uint8_t big[305], pay[300];
  memset(pay, 'a', sizeof pay);
  size_t n;
  OK(embd_codec_encode_frame(EMBD_CODEC_ERROR, pay, 300, big, sizeof big, &n));
  static const uint8_t hdr[5] = {0x04, 0x00, 0x00, 0x01, 0x2C};
  assert_memory_equal(big, hdr, 5);
}

/* ---- errors ------------------------------------------------------------------------- */

static void test_decode_errors(void **state) {
  (void)state;
  embd_codec_frame f;
  embd_error err;
  size_t used;
  /* Unknown types with EMBD_CODEC_STRICT_TYPES: at the type byte, even alone. */
  const embd_codec_decode_options strict = {.flags = EMBD_CODEC_STRICT_TYPES};
  for (unsigned t = 7; t < 256; t += 31) {
    const uint8_t b[5] = {(uint8_t)t, 0, 0, 0, 0};
    assert_int_equal(embd_codec_decode_frame(b, 1, &strict, &f, &used, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
    expect_err(&err, EMBD_ERR_CODEC_UNKNOWN_TYPE, 0, "unknown frame type 0x");
    assert_int_equal(embd_codec_decode_frame(b, 5, &strict, &f, &used, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  }
  const uint8_t ff[5] = {0xFF, 0, 0, 0, 0};
  embd_codec_decode_frame(ff, 5, &strict, &f, &used, &err);
  expect_err(&err, EMBD_ERR_CODEC_UNKNOWN_TYPE, 0, "frame 0 at byte 0: unknown frame type 0xff");
  /* The strict flag leaves the known types alone. */
  const uint8_t eos[5] = {3, 0, 0, 0, 0};
  OK(embd_codec_decode_frame(eos, 5, &strict, &f, &used, &err));
  /* TOKENS of 7 bytes. */
  const uint8_t t7[12] = {2, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7};
  assert_int_equal(embd_codec_decode_frame(t7, 12, NULL, &f, &used, &err), EMBD_ERR_CODEC_TOKENS_LENGTH);
  expect_err(&err, EMBD_ERR_CODEC_TOKENS_LENGTH, 1, "TOKENS payload of 7 bytes is not a multiple of 4");
  /* Found from the header alone. */
  assert_int_equal(embd_codec_decode_frame(t7, 5, NULL, &f, &used, &err), EMBD_ERR_CODEC_TOKENS_LENGTH);
  /* EOS with a payload. */
  const uint8_t e1[6] = {3, 0, 0, 0, 1, 0};
  assert_int_equal(embd_codec_decode_frame(e1, 6, NULL, &f, &used, &err), EMBD_ERR_CODEC_EOS_PAYLOAD);
  expect_err(&err, EMBD_ERR_CODEC_EOS_PAYLOAD, 1, "EOS with a payload of 1 bytes");
  /* Above the maximum: 9 bytes with max 8, and a 4 GiB length with the default. */
  uint8_t h9[14] = {4, 0, 0, 0, 9, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'};
  embd_codec_decode_options o = {.max_payload = 8};
  assert_int_equal(embd_codec_decode_frame(h9, 14, &o, &f, &used, &err), EMBD_ERR_CODEC_FRAME_TOO_LARGE);
  expect_err(&err, EMBD_ERR_CODEC_FRAME_TOO_LARGE, 1, "ERROR payload of 9 bytes is above the maximum of 8");
  o.max_payload = 9;
  OK(embd_codec_decode_frame(h9, 14, &o, &f, &used, &err));
  const uint8_t huge[5] = {6, 0xFF, 0xFF, 0xFF, 0xFF};
  assert_int_equal(embd_codec_decode_frame(huge, 5, NULL, &f, &used, &err), EMBD_ERR_CODEC_FRAME_TOO_LARGE);
  expect_err(&err, EMBD_ERR_CODEC_FRAME_TOO_LARGE, 1, "LATENTS payload of 4294967295 bytes");
  /* Truncation at every byte of a frame. */
  static const uint8_t w[17] = {0x02, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0xC3, 0x51,
                                0x00, 0x00, 0xC3, 0x52, 0x00, 0x00, 0xC3, 0x53};
  for (size_t k = 1; k < 17; k++) {
    assert_int_equal(embd_codec_decode_frame(w, k, NULL, &f, &used, &err), EMBD_ERR_CODEC_TRUNCATED);
    expect_err(&err, EMBD_ERR_CODEC_TRUNCATED, k, k < 5 ? "header bytes" : "TOKENS frame of 17 bytes");
  }
  assert_int_equal(embd_codec_decode_frame(w, 0, NULL, &f, &used, &err), EMBD_ERR_CODEC_TRUNCATED);
  /* Invalid UTF-8 in HELLO / READY / ERROR, at the bad byte; fine in LATENTS. */
  for (unsigned t = 0; t < 7; t++) {
    uint8_t b[9] = {(uint8_t)t, 0, 0, 0, 4, 'o', 'k', 0xC0, 0x80};
    embd_result r = embd_codec_decode_frame(b, 9, NULL, &f, &used, &err);
    if (t == 0 || t == 1 || t == 4) {
      assert_int_equal(r, EMBD_ERR_CODEC_UTF8);
      expect_err(&err, EMBD_ERR_CODEC_UTF8, 7, "invalid UTF-8 at payload byte 2 (0xc0: overlong");
    } else if (t == 5 || t == 6) {
      OK(r);
    }
  }
  /* Iterating: absolute offsets and frame numbers in messages. */
  uint8_t s[64];
  size_t n = 0, k;
  const uint32_t one = 7;
  OK(embd_codec_encode_tokens(&one, 1, s, sizeof s, &k)), n += k;           /* 0: 9 bytes */
  OK(embd_codec_encode_frame(EMBD_CODEC_ERROR, "x", 1, s + n, 64 - n, &k)), n += k; /* 1: 6 */
  OK(embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, s + n, 64 - n, &k)), n += k;  /* 2: 5 */
  memcpy(s + n, t7, 12), n += 12;                                            /* 3 at 20 */
  size_t pos = 0;
  uint32_t idx = 0;
  for (int i = 0; i < 3; i++) OK(embd_codec_next(s, n, &pos, &idx, NULL, &f, &err));
  assert_int_equal(pos, 20);
  assert_int_equal(idx, 3);
  assert_int_equal(embd_codec_next(s, n, &pos, &idx, NULL, &f, &err), EMBD_ERR_CODEC_TOKENS_LENGTH);
  expect_err(&err, EMBD_ERR_CODEC_TOKENS_LENGTH, 21,
             "frame 3 at byte 20: TOKENS payload of 7 bytes is not a multiple of 4");
  assert_int_equal(pos, 20);
  /* Arguments. */
  assert_int_equal(embd_codec_decode_frame(NULL, 3, NULL, &f, &used, &err), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_codec_next(s, n, &n, &idx, NULL, &f, &err), EMBD_ERR_INVALID_ARGUMENT);
}

/* Types from 0x07 up by default: opaque frames, header rules only (max payload, truncation). */
static void test_newer_types(void **state) {
  (void)state;
  embd_codec_frame f;
  embd_error err;
  size_t used;
  /* 0x07 with 7 bytes (not a multiple of 4), 0xFF with invalid UTF-8: no TOKENS or text rule. */
  const uint8_t b7[12] = {0x07, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7};
  OK(embd_codec_decode_frame(b7, 12, NULL, &f, &used, &err));
  assert_int_equal(f.type, 0x07);
  assert_int_equal(used, 12);
  assert_int_equal(f.payload_len, 7);
  assert_ptr_equal(f.payload, b7 + 5);
  assert_null(f.ids);
  assert_string_equal(embd_codec_type_name(f.type), "unknown");
  const uint8_t bff[7] = {0xFF, 0, 0, 0, 2, 0xC0, 0x80};
  OK(embd_codec_decode_frame(bff, 7, NULL, &f, &used, &err));
  assert_int_equal(f.type, 0xFF);
  /* The header rules still apply, naming the type. */
  embd_codec_decode_options o = {.max_payload = 6};
  assert_int_equal(embd_codec_decode_frame(b7, 12, &o, &f, &used, &err), EMBD_ERR_CODEC_FRAME_TOO_LARGE);
  expect_err(&err, EMBD_ERR_CODEC_FRAME_TOO_LARGE, 1,
             "frame 0 at byte 0: type 0x07 payload of 7 bytes is above the maximum of 6");
  assert_int_equal(embd_codec_decode_frame(b7, 9, NULL, &f, &used, &err), EMBD_ERR_CODEC_TRUNCATED);
  expect_err(&err, EMBD_ERR_CODEC_TRUNCATED, 9, "truncated: type 0x07 frame of 12 bytes, the input ends after 9");
  /* Unknown flag bits are refused (a flag of a newer release is not guessed at). */
  o.max_payload = 0;
  o.flags = 2;
  assert_int_equal(embd_codec_decode_frame(b7, 12, &o, &f, &used, &err), EMBD_ERR_INVALID_ARGUMENT);
  expect_err(&err, EMBD_ERR_INVALID_ARGUMENT, 0, "options: unknown flags 0x2");
  uint64_t need;
  assert_int_equal(embd_codec_frame_need(b7, 1, &o, &need, &err), EMBD_ERR_INVALID_ARGUMENT);
  /* frame_need: a newer type needs its whole frame; strict refuses it at byte 0. */
  OK(embd_codec_frame_need(b7, 5, NULL, &need, &err));
  assert_int_equal(need, 12);
  o.flags = EMBD_CODEC_STRICT_TYPES;
  assert_int_equal(embd_codec_frame_need(b7, 1, &o, &need, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  expect_err(&err, EMBD_ERR_CODEC_UNKNOWN_TYPE, 0, "unknown frame type 0x07 (known: 0x00-0x06)");
  /* A stream: TOKENS, 0x07, 0x40, TOKENS, EOS. The iterator hands over every frame in order;
   * forwarding copies only selected types (0x40 has no bit; 0x07 has bit 7). */
  uint8_t s[64];
  size_t n = 0, k;
  const uint32_t id = 42;
  OK(embd_codec_encode_tokens(&id, 1, s, sizeof s, &k)), n += k;
  memcpy(s + n, b7, 12), n += 12;
  const uint8_t b40[6] = {0x40, 0, 0, 0, 1, 'z'};
  memcpy(s + n, b40, 6), n += 6;
  OK(embd_codec_encode_tokens(&id, 1, s + n, sizeof s - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, s + n, sizeof s - n, &k)), n += k;
  static const uint8_t types[5] = {2, 7, 0x40, 2, 3};
  size_t pos = 0;
  uint32_t idx = 0;
  for (int i = 0; i < 5; i++) {
    OK(embd_codec_next(s, n, &pos, &idx, NULL, &f, &err));
    assert_int_equal(f.type, types[i]);
    assert_int_equal(f.index, i);
  }
  assert_int_equal(pos, n);
  uint8_t out[64];
  size_t w, nf;
  OK(embd_codec_forward(s, n, NULL, 0, out, sizeof out, &w, &nf, &err));
  assert_int_equal(nf, 3); /* TOKENS, TOKENS, EOS */
  assert_int_equal(w, 9 + 9 + 5);
  OK(embd_codec_forward(s, n, NULL, 1u << 7, out, sizeof out, &w, &nf, &err));
  assert_int_equal(nf, 1);
  assert_memory_equal(out, b7, 12);
  OK(embd_codec_forward(s, n, NULL, ~0u, out, sizeof out, &w, &nf, &err));
  assert_int_equal(nf, 4); /* all but 0x40 */
  /* Strict: the iterator stops at frame 1. */
  pos = 0, idx = 0;
  OK(embd_codec_next(s, n, &pos, &idx, &o, &f, &err));
  assert_int_equal(embd_codec_next(s, n, &pos, &idx, &o, &f, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  expect_err(&err, EMBD_ERR_CODEC_UNKNOWN_TYPE, 9, "frame 1 at byte 9: unknown frame type 0x07");
  /* The encoder writes the known types only. */
  assert_int_equal(embd_codec_encode_frame(0x07, "", 0, out, sizeof out, &w), EMBD_ERR_CODEC_UNKNOWN_TYPE);
}

static void test_encode_errors(void **state) {
  (void)state;
  uint8_t out[32];
  size_t n;
  assert_int_equal(embd_codec_encode_frame(7, "", 0, out, sizeof out, &n), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_TOKENS, "abcdefg", 7, out, sizeof out, &n),
                   EMBD_ERR_CODEC_TOKENS_LENGTH);
  assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_EOS, "a", 1, out, sizeof out, &n),
                   EMBD_ERR_CODEC_EOS_PAYLOAD);
  assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_READY, "\xED\xA0\x80", 3, out, sizeof out, &n),
                   EMBD_ERR_CODEC_UTF8);
  assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_HELLO, NULL, 3, out, sizeof out, &n),
                   EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_codec_encode_frame(EMBD_CODEC_LATENTS, "\xED\xA0\x80", 3, out, sizeof out, &n));
  const uint32_t ids[2] = {1, 2};
  assert_int_equal(embd_codec_encode_tokens(ids, 2, out, 12, &n), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(n, 13);
  assert_int_equal(embd_codec_encode_tokens(NULL, 2, out, 32, &n), EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_codec_encode_tokens(NULL, 0, out, 32, &n));
  assert_int_equal(n, 5);
  static const uint8_t empty_tokens[5] = {2, 0, 0, 0, 0};
  assert_memory_equal(out, empty_tokens, 5);
}

/* ---- UTF-8 edge cases ----------------------------------------------------------------- */

static void test_utf8(void **state) {
  (void)state;
  static const struct {
    const char *s;
    size_t len;
    size_t bad; /* 0: valid, else 1 + offset */
    const char *why;
  } cases[] = {
      {"", 0, 0, NULL},
      {"plain ascii", 11, 0, NULL},
      {"\xC2\x80", 2, 0, NULL},                    /* U+0080 */
      {"\xDF\xBF", 2, 0, NULL},                    /* U+07FF */
      {"\xE0\xA0\x80", 3, 0, NULL},                /* U+0800 */
      {"\xED\x9F\xBF", 3, 0, NULL},                /* U+D7FF */
      {"\xEE\x80\x80", 3, 0, NULL},                /* U+E000 */
      {"\xEF\xBF\xBF", 3, 0, NULL},                /* U+FFFF */
      {"\xF0\x90\x80\x80", 4, 0, NULL},            /* U+10000 */
      {"\xF4\x8F\xBF\xBF", 4, 0, NULL},            /* U+10FFFF */
      {"a\xC0\x80", 3, 2, "overlong"},             /* overlong NUL */
      {"\xC1\xBF", 2, 1, "overlong"},
      {"ab\xE0\x80\xAF", 5, 3, "overlong"},        /* overlong '/' */
      {"\xF0\x8F\xBF\xBF", 4, 1, "overlong"},
      {"\xED\xA0\x80", 3, 1, "surrogate"},         /* U+D800 */
      {"x\xED\xBF\xBF", 4, 2, "surrogate"},        /* U+DFFF */
      {"\xF4\x90\x80\x80", 4, 1, "above U+10FFFF"}, /* U+110000 */
      {"\xF5\x80\x80\x80", 4, 1, "above"},
      {"\xFF", 1, 1, "above"},
      {"\x80", 1, 1, "continuation"},
      {"abc\xE2\x82", 5, 4, "truncated"},          /* cut euro sign */
      {"\xF0\x9F\x98", 3, 1, "truncated"},
      {"\xC3", 1, 1, "truncated"},
      {"\xE2\x28\xA1", 3, 1, "truncated"},         /* bad second byte */
      {"\xE2\x82\x28", 3, 1, "truncated"},         /* bad third byte */
      {"\xF0\x9F\x98\x41", 4, 1, "truncated"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(embd_codec_utf8_check(cases[i].s, cases[i].len), cases[i].bad);
    uint8_t frame[16];
    size_t n, used;
    embd_codec_frame f;
    embd_error err;
    frame[0] = EMBD_CODEC_ERROR;
    frame[1] = frame[2] = frame[3] = 0;
    frame[4] = (uint8_t)cases[i].len;
    memcpy(frame + 5, cases[i].s, cases[i].len);
    embd_result r = embd_codec_decode_frame(frame, 5 + cases[i].len, NULL, &f, &used, &err);
    if (!cases[i].bad) {
      OK(r);
      OK(embd_codec_encode_frame(EMBD_CODEC_HELLO, cases[i].s, cases[i].len, frame, 16, &n));
    } else {
      assert_int_equal(r, EMBD_ERR_CODEC_UTF8);
      expect_err(&err, EMBD_ERR_CODEC_UTF8, 5 + cases[i].bad - 1, cases[i].why);
      assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_HELLO, cases[i].s, cases[i].len, frame, 16, &n),
                       EMBD_ERR_CODEC_UTF8);
    }
  }
  /* Every 3-byte and 4-byte lead with every second byte: only the RFC 3629 ranges pass. */
  for (unsigned a = 0xE0; a <= 0xF4; a++)
    for (unsigned b = 0; b < 256; b++) {
      const uint8_t s[4] = {(uint8_t)a, (uint8_t)b, 0x80, 0x80};
      const size_t len = a < 0xF0 ? 3 : 4;
      unsigned lo = 0x80, hi = 0xBF;
      if (a == 0xE0) lo = 0xA0;
      if (a == 0xED) hi = 0x9F;
      if (a == 0xF0) lo = 0x90;
      if (a == 0xF4) hi = 0x8F;
      assert_int_equal(embd_codec_utf8_check(s, len) == 0, b >= lo && b <= hi);
    }
}

/* ---- random id arrays ------------------------------------------------------------------ */

static void test_random_ids(void **state) {
  (void)state;
  const size_t rounds = tu_scaled(60, 12);
  uint32_t *ids = malloc(10001 * 4), *back = malloc(10001 * 4);
  uint8_t *out = malloc(5 + 10001 * 4);
  for (size_t r = 0; r < rounds; r++) {
    const size_t n = r == 0 ? 0 : r == 1 ? 10000 : tu_range(&g_rng, 0, r % 4 ? 64 : 10000);
    for (size_t i = 0; i < n; i++) {
      const unsigned k = (unsigned)(tu_u32(&g_rng) % 4);
      ids[i] = k == 0 ? tu_u32(&g_rng) : k == 1 ? (uint32_t)(tu_u32(&g_rng) % 200000)
               : k == 2 ? UINT32_MAX - (tu_u32(&g_rng) % 3) : (tu_u32(&g_rng) % 3);
    }
    size_t w, used, m;
    OK(embd_codec_encode_tokens(ids, n, out, 5 + 10001 * 4, &w));
    assert_int_equal(w, 5 + 4 * n);
    /* The bytes, by shifts. */
    assert_int_equal(out[0], 2);
    assert_int_equal(((size_t)out[1] << 24 | (size_t)out[2] << 16 | (size_t)out[3] << 8 | out[4]), 4 * n);
    for (size_t i = 0; i < n; i++) {
      const uint8_t *p = out + 5 + 4 * i;
      assert_int_equal((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3], ids[i]);
    }
    embd_codec_frame f;
    embd_error err;
    OK(embd_codec_decode_frame(out, w, NULL, &f, &used, &err));
    OK(embd_codec_tokens(&f, back, 10001, &m));
    assert_int_equal(m, n);
    if (n) assert_memory_equal(back, ids, 4 * n);
    /* Re-framing into frames of k ids, and back through the reader with dest. */
    const size_t per = tu_range(&g_rng, 1, 70);
    size_t need;
    OK(embd_codec_tokens_frames_size(n, per, &need));
    uint8_t *fr = malloc(need + 1);
    OK(embd_codec_encode_tokens_frames(ids, n, per, fr, need, &w));
    assert_int_equal(w, need);
    assert_int_equal(w, 4 * n + 5 * ((n + per - 1) / per));
    size_t pos = 0, got = 0;
    uint32_t idx = 0;
    while (pos < w) {
      OK(embd_codec_next(fr, w, &pos, &idx, NULL, &f, &err));
      assert_true(f.payload_len / 4 == per || pos == w);
      OK(embd_codec_tokens(&f, back + got, 10001 - got, &m));
      got += m;
    }
    assert_int_equal(got, n);
    if (n) assert_memory_equal(back, ids, 4 * n);
    free(fr);
  }
  free(ids);
  free(back);
  free(out);
}

/* ---- the reader against the one-shot decoder ------------------------------------------ */

/* Both type policies: the default (newer types opaque) and EMBD_CODEC_STRICT_TYPES. */
static void same(const uint8_t *b, size_t len, size_t maxp, const size_t *cuts, size_t ncuts) {
  for (uint64_t flags = 0; flags <= EMBD_CODEC_STRICT_TYPES; flags++) {
    cu_rec a, s;
    cu_oneshot(b, len, maxp, flags, &a);
    for (int mode = 0; mode < 3; mode++) {
      cu_reader(b, len, maxp, flags, cuts, ncuts, mode, &s);
      const int c = cu_cmp(&a, &s);
      if (c)
        fail_msg("reader != one-shot (%d), flags %d, mode %d, %zu cuts: one-shot %zu frames %d at "
                 "%zu: %s; reader %zu frames %d at %zu: %s",
                 c, (int)flags, mode, ncuts, a.nframes, a.result, a.err_offset, a.message,
                 s.nframes, s.result, s.err_offset, s.message);
      cu_free(&s);
    }
    cu_free(&a);
  }
}

static void every_chunking(const uint8_t *b, size_t len, size_t maxp) {
  size_t cuts[2];
  same(b, len, maxp, NULL, 0);
  for (size_t i = 0; i <= len; i++) {
    cuts[0] = i;
    same(b, len, maxp, cuts, 1);
    for (size_t j = i; j <= len; j++) {
      cuts[1] = j;
      same(b, len, maxp, cuts, 2);
    }
  }
  size_t *ones = calloc(len + 1, sizeof *ones);
  assert_non_null(ones);
  for (size_t i = 0; i < len; i++) ones[i] = i + 1;
  same(b, len, maxp, ones, len);
  free(ones);
}

/* HELLO, READY, TOKENS x2 (one empty), LATENT_HEADER, LATENTS, ERROR, EOS. */
static size_t small_stream(uint8_t *s, size_t cap) {
  size_t n = 0, k;
  const uint32_t ids[3] = {50001, 0xDEADBEEF, 7};
  OK(embd_codec_encode_frame(EMBD_CODEC_HELLO, "{\"a\":1}", 7, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_READY, "{}", 2, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_tokens(ids, 3, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_tokens(ids, 0, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_LATENT_HEADER, "\x01", 1, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_LATENTS, "\xFF\x00", 2, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_tokens(ids + 1, 1, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_ERROR, "\xC3\xA9", 2, s + n, cap - n, &k)), n += k;
  OK(embd_codec_encode_frame(EMBD_CODEC_EOS, NULL, 0, s + n, cap - n, &k)), n += k;
  return n;
}

static void test_small_chunkings(void **state) {
  (void)state;
  uint8_t s[128];
  const size_t n = small_stream(s, sizeof s);
  assert_int_equal(n, 12 + 7 + 17 + 5 + 6 + 7 + 9 + 7 + 5);
  every_chunking(s, n, 0);
  every_chunking(s, n, 12); /* the 3-id TOKENS frame is exactly at the limit */
  every_chunking(s, n, 11); /* ... and above it: FRAME_TOO_LARGE at frame 2 */
  cu_rec a;
  cu_oneshot(s, n, 11, 0, &a);
  assert_int_equal(a.result, EMBD_ERR_CODEC_FRAME_TOO_LARGE);
  assert_int_equal(a.err_offset, 20);
  assert_non_null(strstr(a.message, "frame 2 at byte 19: TOKENS payload of 12 bytes is above the maximum of 11"));
  cu_free(&a);
  cu_oneshot(s, n, 0, 0, &a);
  assert_int_equal(a.nframes, 9);
  OK(a.result);
  cu_free(&a);
  every_chunking(s, 0, 0);
}

/* Every truncation and every single-byte corruption of the small stream. */
static void test_corruptions(void **state) {
  (void)state;
  uint8_t s[128], c[128];
  const size_t n = small_stream(s, sizeof s);
  for (size_t k = 0; k < n; k++) {
    size_t cut[3] = {k / 2, k / 2 + 1 < k ? k / 2 + 1 : k, k};
    same(s, k, 0, NULL, 0);
    same(s, k, 0, cut, 3);
    cu_rec a;
    cu_oneshot(s, k, 0, 0, &a);
    if (k == 0 || k == 12 || k == 19 || k == 36 || k == 41 || k == 47 || k == 54 || k == 63 || k == 70)
      OK(a.result); /* frame boundaries */
    else
      assert_int_equal(a.result, EMBD_ERR_CODEC_TRUNCATED), assert_int_equal(a.err_offset, k);
    cu_free(&a);
  }
  const uint8_t vals[] = {0x00, 0x01, 0x02, 0x03, 0x07, 0x80, 0xC0, 0xFF};
  for (size_t i = 0; i < n; i++)
    for (size_t v = 0; v < sizeof vals; v++) {
      memcpy(c, s, n);
      c[i] = (uint8_t)(c[i] ^ vals[v]) == c[i] ? (uint8_t)~c[i] : (uint8_t)(c[i] ^ vals[v]);
      size_t cut[2] = {i, i + 1};
      same(c, n, 64, NULL, 0);
      same(c, n, 64, cut, 2);
    }
}

static void test_large_random(void **state) {
  (void)state;
  const size_t nframes = tu_scaled(400, 100);
  size_t cap = 1 << 20, n = 0;
  uint8_t *s = malloc(cap);
  uint32_t ids[300];
  for (size_t f = 0; f < nframes; f++) {
    size_t k;
    const unsigned t = (unsigned)(tu_u32(&g_rng) % 10);
    if (t < 6) {
      const size_t m = tu_range(&g_rng, 0, 300);
      for (size_t i = 0; i < m; i++) ids[i] = tu_u32(&g_rng);
      OK(embd_codec_encode_tokens(ids, m, s + n, cap - n, &k));
    } else if (t < 8) {
      char txt[200];
      const size_t m = tu_range(&g_rng, 0, 199);
      for (size_t i = 0; i < m; i++) txt[i] = (char)('a' + i % 26);
      OK(embd_codec_encode_frame(t == 6 ? EMBD_CODEC_HELLO : EMBD_CODEC_ERROR, txt, m, s + n, cap - n, &k));
    } else {
      uint8_t raw[500];
      const size_t m = tu_range(&g_rng, 0, 500);
      tu_fill(&g_rng, raw, m);
      OK(embd_codec_encode_frame(EMBD_CODEC_LATENTS, raw, m, s + n, cap - n, &k));
    }
    n += k;
  }
  const size_t rounds = tu_scaled(40, 10);
  size_t *cuts = malloc((n + 1) * sizeof *cuts);
  for (size_t r = 0; r < rounds; r++) {
    size_t m = 0, at = 0;
    const size_t span = (size_t)1 << (r % 12);
    for (;;) {
      at += tu_range(&g_rng, 1, span);
      if (at >= n) break;
      cuts[m++] = at;
    }
    same(s, n, 0, cuts, m);
    /* And a truncated copy. */
    size_t mt = m;
    while (mt && cuts[mt - 1] > n - 1 - r) mt--;
    same(s, n - 1 - r, 0, cuts, mt);
  }
  cu_rec a;
  cu_oneshot(s, n, 0, 0, &a);
  OK(a.result);
  assert_int_equal(a.nframes, nframes);
  cu_free(&a);
  free(cuts);
  free(s);
}

/* ---- reader behaviour ------------------------------------------------------------------ */

typedef struct cb_state {
  int calls;
  embd_result ret;
  uint32_t ids[8];
  int dest_calls;
} cb_state;

static embd_result cb_stop(void *user, const embd_codec_frame *f) {
  cb_state *c = (cb_state *)user;
  (void)f;
  return ++c->calls == 2 ? c->ret : EMBD_OK;
}

static uint32_t *cb_dest(void *user, uint32_t index, size_t n) {
  cb_state *c = (cb_state *)user;
  (void)index;
  c->dest_calls++;
  return n <= 8 ? c->ids : NULL;
}

static void test_reader_behaviour(void **state) {
  (void)state;
  embd_codec_reader *r;
  embd_codec_reader_options o;
  memset(&o, 0, sizeof o);
  assert_int_equal(embd_codec_reader_create(&o, &r), EMBD_ERR_INVALID_ARGUMENT);
  assert_null(r);
  assert_int_equal(embd_codec_reader_create(NULL, &r), EMBD_ERR_INVALID_ARGUMENT);
  cb_state c;
  memset(&c, 0, sizeof c);
  c.ret = EMBD_ERR_UNKNOWN_TOKEN;
  o.on_frame = cb_stop;
  o.user = &c;
  OK(embd_codec_reader_create(&o, &r));
  uint8_t s[128];
  const size_t n = small_stream(s, sizeof s);
  embd_error err;
  /* The callback's error stops the stream at frame 1 (byte 12); sticky. */
  assert_int_equal(embd_codec_reader_feed(r, s, n, &err), EMBD_ERR_UNKNOWN_TOKEN);
  expect_err(&err, EMBD_ERR_UNKNOWN_TOKEN, 12, "frame 1 at byte 12: the callback returned 49");
  assert_int_equal(embd_codec_reader_frames(r), 1);
  assert_int_equal(embd_codec_reader_feed(r, s, 1, &err), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(embd_codec_reader_finish(r, &err), EMBD_ERR_UNKNOWN_TOKEN);
  assert_int_equal(err.offset, 12);
  embd_codec_reader_destroy(r);
  /* Counters, finish, empty feeds, NULL data. */
  memset(&c, 0, sizeof c);
  OK(embd_codec_reader_create(&o, &r));
  OK(embd_codec_reader_feed(r, NULL, 0, &err));
  assert_int_equal(embd_codec_reader_feed(r, NULL, 1, &err), EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_codec_reader_feed(r, s, 3, &err));
  assert_int_equal(embd_codec_reader_offset(r), 3);
  assert_int_equal(embd_codec_reader_finish(r, &err), EMBD_ERR_CODEC_TRUNCATED);
  expect_err(&err, EMBD_ERR_CODEC_TRUNCATED, 3, "frame 0 at byte 0: truncated: the input ends after 3 of the 5 header bytes");
  embd_codec_reader_destroy(r);
  /* Strict: an unknown type is found at its first byte, before the rest arrives. */
  o.flags = EMBD_CODEC_STRICT_TYPES;
  OK(embd_codec_reader_create(&o, &r));
  OK(embd_codec_reader_feed(r, s, 12, &err));
  const uint8_t bad = 0x09;
  assert_int_equal(embd_codec_reader_feed(r, &bad, 1, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  expect_err(&err, EMBD_ERR_CODEC_UNKNOWN_TYPE, 12, "frame 1 at byte 12: unknown frame type 0x09");
  embd_codec_reader_destroy(r);
  /* Unknown flag bits: refused at create. */
  o.flags = 4;
  assert_int_equal(embd_codec_reader_create(&o, &r), EMBD_ERR_INVALID_ARGUMENT);
  /* Default: the 0x09 frame (split over feeds) reaches the callback, then the stream goes on. */
  o.flags = 0;
  memset(&c, 0, sizeof c);
  c.ret = EMBD_OK;
  OK(embd_codec_reader_create(&o, &r));
  OK(embd_codec_reader_feed(r, s, 12, &err));
  const uint8_t b9[8] = {0x09, 0, 0, 0, 3, 'a', 'b', 'c'};
  OK(embd_codec_reader_feed(r, b9, 2, &err));
  OK(embd_codec_reader_feed(r, b9 + 2, 6, &err));
  OK(embd_codec_reader_feed(r, s + 12, n - 12, &err));
  OK(embd_codec_reader_finish(r, &err));
  assert_int_equal(embd_codec_reader_frames(r), 10); /* the 9 of s and the 0x09 one */
  assert_int_equal(c.calls, 10);
  embd_codec_reader_destroy(r);
  /* max_payload above the u32 field. */
  o.max_payload = (size_t)UINT32_MAX + (sizeof(size_t) > 4 ? 1 : 0);
  if (sizeof(size_t) > 4) assert_int_equal(embd_codec_reader_create(&o, &r), EMBD_ERR_INVALID_ARGUMENT);
  o.max_payload = 0;
  /* Dest without on_frame: TOKENS ids land in caller memory, other frames are checked and
   * skipped; the 3-id frame split in the middle of an id. */
  memset(&c, 0, sizeof c);
  o.on_frame = NULL;
  o.tokens_dest = cb_dest;
  OK(embd_codec_reader_create(&o, &r));
  OK(embd_codec_reader_feed(r, s, 19 + 7, &err)); /* header + 2 bytes of the TOKENS frame */
  OK(embd_codec_reader_feed(r, s + 26, n - 26, &err));
  OK(embd_codec_reader_finish(r, &err));
  assert_int_equal(c.dest_calls, 3);
  assert_int_equal(c.ids[0], 0xDEADBEEF); /* the last TOKENS frame's one id */
  assert_int_equal(c.ids[1], 0xDEADBEEF);
  assert_int_equal(c.ids[2], 7);
  assert_int_equal(embd_codec_reader_frames(r), 9);
  embd_codec_reader_destroy(r);
  /* A frame split into 1-byte feeds into dest: the ids' bytes in host order. */
  memset(&c, 0, sizeof c);
  OK(embd_codec_reader_create(&o, &r));
  static const uint8_t w[17] = {0x02, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0xC3, 0x51,
                                0x00, 0x00, 0xC3, 0x52, 0x00, 0x00, 0xC3, 0x53};
  for (size_t i = 0; i < 17; i++) OK(embd_codec_reader_feed(r, w + i, 1, &err));
  OK(embd_codec_reader_finish(r, &err));
  assert_int_equal(c.ids[0], 50001);
  assert_int_equal(c.ids[1], 50002);
  assert_int_equal(c.ids[2], 50003);
  embd_codec_reader_destroy(r);
  /* Truncated inside a dest frame. */
  memset(&c, 0, sizeof c);
  OK(embd_codec_reader_create(&o, &r));
  OK(embd_codec_reader_feed(r, w, 10, &err));
  assert_int_equal(embd_codec_reader_finish(r, &err), EMBD_ERR_CODEC_TRUNCATED);
  expect_err(&err, EMBD_ERR_CODEC_TRUNCATED, 10, "TOKENS frame of 17 bytes, the input ends after 10");
  embd_codec_reader_destroy(r);
  /* Zero-copy: a frame wholly inside a chunk is delivered in place. */
  cu_rec a;
  cu_reader(s, n, 0, 0, NULL, 0, 0, &a);
  assert_true(a.zero_copy_seen);
  cu_free(&a);
}

/* ---- forwarding ------------------------------------------------------------------------- */

static void test_forward(void **state) {
  (void)state;
  uint8_t s[128], out[128];
  const size_t n = small_stream(s, sizeof s);
  size_t w, nf;
  embd_error err;
  /* Default: TOKENS and EOS, bytes unchanged. */
  OK(embd_codec_forward(s, n, NULL, 0, out, sizeof out, &w, &nf, &err));
  assert_int_equal(nf, 4);
  assert_int_equal(w, 17 + 5 + 9 + 5);
  assert_memory_equal(out, s + 19, 22);
  assert_memory_equal(out + 22, s + 54, 9);
  assert_memory_equal(out + 31, s + 70, 5);
  /* Only TOKENS; too small an output gives the size. */
  OK(embd_codec_forward(s, n, NULL, 1u << EMBD_CODEC_TOKENS, out, sizeof out, &w, &nf, &err));
  assert_int_equal(w, 31);
  assert_int_equal(embd_codec_forward(s, n, NULL, 0, out, 30, &w, &nf, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 36);
  /* Everything: the stream itself. */
  OK(embd_codec_forward(s, n, NULL, 0x7F, out, sizeof out, &w, &nf, &err));
  assert_int_equal(w, n);
  assert_memory_equal(out, s, n);
  /* A bad frame stops it with the decoder's error. */
  s[19 + 4] = 7;
  assert_int_equal(embd_codec_forward(s, n, NULL, 0, out, sizeof out, &w, &nf, &err),
                   EMBD_ERR_CODEC_TOKENS_LENGTH);
  expect_err(&err, EMBD_ERR_CODEC_TOKENS_LENGTH, 20, "frame 2 at byte 19");
}

/* ---- handshake -------------------------------------------------------------------------- */

static int have_parser(void) {
  embd_codec_hello h;
  const int have = embd_codec_hello_parse("{}", 2, &h, NULL) != EMBD_ERR_OPENAI_UNAVAILABLE;
  embd_codec_hello_free(&h);
  return have;
}

static const char *const k_hash =
    "sha256:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04";

static void test_hello(void **state) {
  (void)state;
  const char *const toks[] = {"meta-llama/llama-3", "qwen/qwen2", "q\"uote\\back\n\x01 \xE2\x9C\x93"};
  const char *const mods[] = {"text-tokens"};
  const char *const pol[] = {"acme/strict-v3", "*"};
  embd_codec_hello h;
  memset(&h, 0, sizeof h);
  h.codec_version = "0.5";
  h.accept_tokenizers.v = toks;
  h.accept_tokenizers.n = 3;
  h.modalities.v = mods;
  h.modalities.n = 1;
  h.accept_safety_policies.v = pol;
  h.accept_safety_policies.n = 2;
  char json[512];
  size_t len, need;
  embd_error err;
  assert_int_equal(embd_codec_hello_build(&h, NULL, 0, &need, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  OK(embd_codec_hello_build(&h, json, sizeof json, &len, &err));
  assert_int_equal(len, need);
  assert_int_equal(strlen(json), len);
  assert_string_equal(json,
                      "{\"codec_version\":\"0.5\",\"modalities\":[\"text-tokens\"],"
                      "\"accept_tokenizers\":[\"meta-llama/llama-3\",\"qwen/qwen2\","
                      "\"q\\\"uote\\\\back\\n\\u0001 \xE2\x9C\x93\"],"
                      "\"accept_safety_policies\":[\"acme/strict-v3\",\"*\"]}");
  assert_int_equal(embd_codec_hello_build(&h, json, len - 1, &need, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  /* Invalid UTF-8 in a string; missing codec_version. */
  const char *const badu[] = {"ok", "\xC0\xAF"};
  embd_codec_hello hb = h;
  hb.accept_tokenizers.v = badu;
  hb.accept_tokenizers.n = 2;
  assert_int_equal(embd_codec_hello_build(&hb, json, sizeof json, &len, &err), EMBD_ERR_CODEC_UTF8);
  assert_non_null(strstr(err.message, "accept_tokenizers"));
  hb = h;
  hb.codec_version = NULL;
  assert_int_equal(embd_codec_hello_build(&hb, json, sizeof json, &len, &err), EMBD_ERR_CODEC_HANDSHAKE);
  assert_non_null(strstr(err.message, "codec_version"));
  OK(embd_codec_hello_build(&h, json, sizeof json, &len, &err));

  /* pick_tokenizer: the client's order wins. */
  const char *const srv[] = {"qwen/qwen2", "meta-llama/llama-3"};
  size_t idx = 99;
  OK(embd_codec_pick_tokenizer(&h, srv, 2, &idx, &err));
  assert_int_equal(idx, 0);
  OK(embd_codec_pick_tokenizer(&h, srv, 1, &idx, &err));
  assert_int_equal(idx, 1);
  const char *const none[] = {"cl100k_base"};
  assert_int_equal(embd_codec_pick_tokenizer(&h, none, 1, &idx, &err), EMBD_ERR_CODEC_NO_TOKENIZER);
  assert_non_null(strstr(err.message, "client accepts [\"meta-llama/llama-3\", \"qwen/qwen2\""));
  assert_non_null(strstr(err.message, "server supports [\"cl100k_base\"]"));
  embd_codec_hello empty;
  memset(&empty, 0, sizeof empty);
  assert_int_equal(embd_codec_pick_tokenizer(&empty, srv, 2, &idx, &err), EMBD_ERR_CODEC_NO_TOKENIZER);
  assert_non_null(strstr(err.message, "client accepts []"));

  if (!have_parser()) {
    embd_codec_hello p;
    assert_int_equal(embd_codec_hello_parse(json, len, &p, &err), EMBD_ERR_OPENAI_UNAVAILABLE);
    return;
  }
  embd_codec_hello p;
  OK(embd_codec_hello_parse(json, len, &p, &err));
  assert_string_equal(p.codec_version, "0.5");
  assert_int_equal(p.accept_tokenizers.n, 3);
  for (size_t i = 0; i < 3; i++) assert_string_equal(p.accept_tokenizers.v[i], toks[i]);
  assert_int_equal(p.modalities.n, 1);
  assert_string_equal(p.modalities.v[0], "text-tokens");
  assert_int_equal(p.accept_safety_policies.n, 2);
  assert_string_equal(p.accept_safety_policies.v[1], "*");
  assert_int_equal(p.accept_pipelines.n, 0);
  OK(embd_codec_pick_tokenizer(&p, srv + 1, 1, &idx, &err));
  assert_int_equal(idx, 0);
  embd_codec_hello_free(&p);
  assert_null(p.storage_);
  assert_null(p.codec_version);

  /* The spec's v0.3 HELLO, unknown fields (objects, numbers) ignored. */
  static const char spec[] =
      "{\n  \"codec_version\": \"0.3\",\n  \"modalities\": [\"text-tokens\", \"image-latents\"],\n"
      "  \"accept_tokenizers\": [\"claude-sonnet-4-6-v1\", \"cl100k_base\"],\n"
      "  \"accept_decoders\": [\"onnx-web\", \"torch\"],\n  \"accept_pipelines\": [\"raw\"],\n"
      "  \"accept_transports\": [\"http\", \"ws\"],\n  \"accept_encoding\": [\"zstd\", \"br\", \"gzip\"],\n"
      "  \"future\": {\"x\": [1, 2, {\"y\": null}]}, \"n\": 3.5, \"accept_latent_spaces\": []\n}";
  OK(embd_codec_hello_parse(spec, sizeof spec - 1, &p, &err));
  assert_string_equal(p.codec_version, "0.3");
  assert_int_equal(p.accept_tokenizers.n, 2);
  assert_string_equal(p.accept_tokenizers.v[1], "cl100k_base");
  assert_int_equal(p.accept_encoding.n, 3);
  assert_string_equal(p.accept_encoding.v[2], "gzip");
  assert_int_equal(p.accept_latent_spaces.n, 0);
  embd_codec_hello_free(&p);
  /* Malformed JSON anywhere, unknown fields included: the fault's byte and what it is. */
  static const struct {
    const char *json;
    size_t at;
    const char *msg;
  } bad_json[] = {
      {"{\"codec_version\":\"0.5\",\"future\":[1,,2]}", 35, "expected a value, found ','"},
      {"{\"codec_version\":\"0.5\",\"x\":tru}", 27, "invalid literal"},
      {"{\"codec_version\":\"0.5\"} x", 24, "content after the end"},
      {"{\"codec_version\":\"0.5\"", 22, "the text ends inside an object"},
      {"{\"codec_version\":\"0.\x01\"}", 20, "raw control byte 0x01"},
  };
  for (size_t i = 0; i < sizeof bad_json / sizeof *bad_json; i++) {
    assert_int_equal(embd_codec_hello_parse(bad_json[i].json, strlen(bad_json[i].json), &p, &err),
                     EMBD_ERR_CODEC_HANDSHAKE);
    if (err.offset != bad_json[i].at || !strstr(err.message, bad_json[i].msg)) {
      fprintf(stderr, "%s: got %zu %s\n", bad_json[i].json, err.offset, err.message);
      fail();
    }
  }
  /* Absent codec_version is allowed (a pre-0.4 client); an empty object too. */
  OK(embd_codec_hello_parse("{\"accept_tokenizers\":[\"a\"]}", 27, &p, &err));
  assert_null(p.codec_version);
  embd_codec_hello_free(&p);

  /* Wrong types, named. */
  static const struct {
    const char *json;
    const char *sub;
  } bad[] = {
      {"{\"codec_version\":5}", "field \"codec_version\" must be a string, not a number"},
      {"{\"accept_tokenizers\":\"a\"}", "field \"accept_tokenizers\" must be an array of strings, not a string"},
      {"{\"accept_tokenizers\":[\"a\",1]}", "accept_tokenizers[1] must be a string, not a number"},
      {"{\"modalities\":null}", "field \"modalities\" must be an array of strings, not null"},
      {"{\"accept_encoding\":[[\"x\"]]}", "accept_encoding[0] must be a string, not an array"},
      {"{\"codec_version\":\"a\\u0000b\"}", "contains a NUL character"},
      {"{\"codec_version\":\"1\",\"codec_version\":\"2\"}", "duplicate field \"codec_version\""},
      {"[1,2]", "not an object"},
      {"{\"codec_version\":\"0.5\"", "malformed JSON"},
      {"{\"codec_version\":\"\xC0\xAF\"}", "malformed JSON"},
      {"", "malformed JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&p, 0x55, sizeof p);
    assert_int_equal(embd_codec_hello_parse(bad[i].json, strlen(bad[i].json), &p, &err),
                     EMBD_ERR_CODEC_HANDSHAKE);
    if (!strstr(err.message, bad[i].sub)) fail_msg("%s: %s", bad[i].json, err.message);
    assert_null(p.storage_);
    embd_codec_hello_free(&p);
  }
}

static void test_ready(void **state) {
  (void)state;
  const char *const feats[] = {"safety-policy-enforcement"};
  embd_codec_ready r;
  memset(&r, 0, sizeof r);
  r.codec_version = "0.5";
  r.tokenizer_id = "meta-llama/llama-3";
  r.map_url = "https://cdn.example/maps/llama-3.json?a=\"b\"";
  r.map_hash = k_hash;
  r.min_codec_version = "0.4";
  r.required_features.v = feats;
  r.required_features.n = 1;
  r.transport = "http";
  char json[1024];
  size_t len;
  embd_error err;
  OK(embd_codec_ready_build(&r, json, sizeof json, &len, &err));
  assert_non_null(strstr(json, "\"map_url\":\"https://cdn.example/maps/llama-3.json?a=\\\"b\\\"\""));
  assert_non_null(strstr(json, "\"required_features\":[\"safety-policy-enforcement\"]"));
  assert_null(strstr(json, "modality"));
  /* Required fields and hash format. */
  embd_codec_ready b = r;
  b.map_hash = NULL;
  assert_int_equal(embd_codec_ready_build(&b, json, sizeof json, &len, &err), EMBD_ERR_CODEC_HANDSHAKE);
  assert_non_null(strstr(err.message, "map_hash is required"));
  static const char *const bad_hashes[] = {
      "sha256:79B707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04", /* upper */
      "sha256:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db0",  /* 63 */
      "sha256:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db045", /* 65 */
      "sha512:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04",
      "79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92db04",
      "sha256:79b707aea8c2b41c2883ec7913b0c4a0c880044ac844d89a9a03e779eb92dbg4",
  };
  for (size_t i = 0; i < sizeof bad_hashes / sizeof bad_hashes[0]; i++) {
    assert_false(embd_codec_is_sha256_ref(bad_hashes[i], strlen(bad_hashes[i])));
    b = r;
    b.map_hash = bad_hashes[i];
    assert_int_equal(embd_codec_ready_build(&b, json, sizeof json, &len, &err), EMBD_ERR_CODEC_HANDSHAKE);
    assert_non_null(strstr(err.message, "map_hash"));
  }
  assert_true(embd_codec_is_sha256_ref(k_hash, strlen(k_hash)));
  /* A latents READY needs no tokenizer. */
  b = r;
  b.tokenizer_id = b.map_url = b.map_hash = NULL;
  b.modality = "image-latents";
  b.latent_space_id = "stabilityai/sd-vae-ft-mse";
  b.pipeline = "int8";
  OK(embd_codec_ready_build(&b, json, sizeof json, &len, &err));
  b.modality = "text-tokens";
  assert_int_equal(embd_codec_ready_build(&b, json, sizeof json, &len, &err), EMBD_ERR_CODEC_HANDSHAKE);
  assert_non_null(strstr(err.message, "tokenizer_id is required"));

  if (!have_parser()) return;
  OK(embd_codec_ready_build(&r, json, sizeof json, &len, &err));
  embd_codec_ready p;
  OK(embd_codec_ready_parse(json, len, &p, &err));
  assert_string_equal(p.codec_version, "0.5");
  assert_string_equal(p.tokenizer_id, r.tokenizer_id);
  assert_string_equal(p.map_url, r.map_url);
  assert_string_equal(p.map_hash, k_hash);
  assert_string_equal(p.min_codec_version, "0.4");
  assert_int_equal(p.required_features.n, 1);
  assert_string_equal(p.required_features.v[0], feats[0]);
  assert_string_equal(p.transport, "http");
  assert_null(p.modality);
  assert_null(p.safety_policy_id);
  embd_codec_ready_free(&p);
  /* Pins as the peers write them: SHA256: and upper/mixed-case hex are read and normalised
   * to sha256: + lower case (what embd_tokmap_hash gives); the builder writes lower only. */
  {
    char upper[72], mixed[72];
    strcpy(upper, k_hash);
    memcpy(upper, "SHA256:", 7);
    for (char *q = upper + 7; *q; q++)
      if (*q >= 'a' && *q <= 'f') *q = (char)(*q - 32);
    strcpy(mixed, upper);
    memcpy(mixed, "sha256:", 7);
    for (char *q = mixed + 7; *q; q += 2)
      if (*q >= 'A' && *q <= 'F') *q = (char)(*q + 32);
    const char *const reads[2] = {upper, mixed};
    for (int i = 0; i < 2; i++) {
      char rj[512];
      snprintf(rj, sizeof rj,
               "{\"codec_version\":\"0.5\",\"tokenizer_id\":\"t\",\"map_url\":\"u\",\"map_hash\":\"%s\","
               "\"safety_policy_hash\":\"%s\",\"latent_map_hash\":\"%s\"}",
               reads[i], reads[1 - i], reads[i]);
      OK(embd_codec_ready_parse(rj, strlen(rj), &p, &err));
      assert_string_equal(p.map_hash, k_hash);
      assert_string_equal(p.safety_policy_hash, k_hash);
      assert_string_equal(p.latent_map_hash, k_hash);
      embd_codec_ready_free(&p);
    }
    embd_codec_ready wb = r;
    wb.map_hash = upper; /* writing: lower case only */
    assert_int_equal(embd_codec_ready_build(&wb, json, sizeof json, &len, &err), EMBD_ERR_CODEC_HANDSHAKE);
    assert_non_null(strstr(err.message, "is not sha256: + 64 lowercase hex digits"));
    char rj[256];
    snprintf(rj, sizeof rj,
             "{\"codec_version\":\"0.5\",\"tokenizer_id\":\"t\",\"map_url\":\"u\",\"map_hash\":\"Sha256:%s\"}",
             k_hash + 7);
    assert_int_equal(embd_codec_ready_parse(rj, strlen(rj), &p, &err), EMBD_ERR_CODEC_HANDSHAKE);
    assert_int_equal(err.offset, 0);
    assert_non_null(strstr(err.message, "READY: map_hash \"Sha256:79b7"));
    assert_non_null(strstr(err.message, "is not a sha256 pin (sha256: or SHA256: + 64 hex digits)"));
  }
  /* The spec's READY (text-tokens), with an unknown object field. */
  char spec[1024];
  snprintf(spec, sizeof spec,
           "{\"codec_version\":\"0.3\",\"modality\":\"text-tokens\",\"tokenizer_id\":\"meta-llama/llama-3\","
           "\"map_url\":\"https://cdn.jsdelivr.net/gh/wdunn001/codec-maps/maps/meta-llama/llama-3.json\","
           "\"map_hash\":\"%s\",\"safety_policy_id\":\"acme/strict-v3\",\"transport\":\"http\","
           "\"encoding\":\"zstd\",\"upgrade\":{\"ice_servers\":[{\"urls\":\"stun:x\"}]}}",
           k_hash);
  OK(embd_codec_ready_parse(spec, strlen(spec), &p, &err));
  assert_string_equal(p.encoding, "zstd");
  assert_string_equal(p.safety_policy_id, "acme/strict-v3");
  embd_codec_ready_free(&p);
  /* Errors. */
  static const struct {
    const char *json;
    const char *sub;
  } bad[] = {
      {"{\"codec_version\":\"0.5\",\"tokenizer_id\":\"t\",\"map_url\":\"u\",\"map_hash\":\"sha256:abc\"}",
       "map_hash \"sha256:abc\" is not a sha256 pin (sha256: or SHA256: + 64 hex digits)"},
      {"{\"codec_version\":\"0.5\",\"tokenizer_id\":\"t\",\"map_url\":\"u\"}", "map_hash is required"},
      {"{\"tokenizer_id\":\"t\"}", "codec_version is required"},
      {"{\"codec_version\":\"0.5\",\"tokenizer_id\":7}", "field \"tokenizer_id\" must be a string, not a number"},
      {"{\"codec_version\":\"0.5\",\"required_features\":{}}", "field \"required_features\" must be an array of strings, not an object"},
      {"{\"codec_version\":true}", "must be a string, not a boolean"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(embd_codec_ready_parse(bad[i].json, strlen(bad[i].json), &p, &err),
                     EMBD_ERR_CODEC_HANDSHAKE);
    if (!strstr(err.message, bad[i].sub)) fail_msg("%s: %s", bad[i].json, err.message);
    assert_null(p.storage_);
  }
  /* HELLO -> frame -> reader -> parse: the whole path. */
  embd_codec_hello h;
  memset(&h, 0, sizeof h);
  const char *const toks[] = {"cl100k_base"};
  h.codec_version = "0.5";
  h.accept_tokenizers.v = toks;
  h.accept_tokenizers.n = 1;
  OK(embd_codec_hello_build(&h, json, sizeof json, &len, &err));
  uint8_t fr[1100];
  size_t w, used;
  OK(embd_codec_encode_frame(EMBD_CODEC_HELLO, json, len, fr, sizeof fr, &w));
  embd_codec_frame f;
  OK(embd_codec_decode_frame(fr, w, NULL, &f, &used, &err));
  embd_codec_hello ph;
  OK(embd_codec_hello_parse((const char *)f.payload, f.payload_len, &ph, &err));
  assert_string_equal(ph.accept_tokenizers.v[0], "cl100k_base");
  embd_codec_hello_free(&ph);
}

int main(void) {
  int s = tu_isa_preflight("test_codec");
  if (s) return s;
  g_rng.s = tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worked_example), cmocka_unit_test(test_every_type),
      cmocka_unit_test(test_decode_errors),  cmocka_unit_test(test_encode_errors),
      cmocka_unit_test(test_newer_types),
      cmocka_unit_test(test_utf8),           cmocka_unit_test(test_random_ids),
      cmocka_unit_test(test_small_chunkings), cmocka_unit_test(test_corruptions),
      cmocka_unit_test(test_large_random),   cmocka_unit_test(test_reader_behaviour),
      cmocka_unit_test(test_forward),        cmocka_unit_test(test_hello),
      cmocka_unit_test(test_ready),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
