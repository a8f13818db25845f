/* embd_tokmap_sha256 (src/core/sha256.c) against Python's hashlib: the FIPS 180-2 examples,
 * every length 0..200 (one and two padding blocks), larger and multi-MiB inputs
 * (tests/gen_sha256_oracle.py writes the cases at build time). Also: the same digest at
 * every start offset 0..7 (no alignment assumption), and the argument checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embd/tokmap.h"
#include "sha256_oracle.inc"

static uint8_t *message(const struct sha_case *c, size_t pad) {
  uint8_t *b = malloc(c->len + pad + 1);
  assert_non_null(b);
  uint8_t *m = b + pad;
  for (size_t i = 0; i < c->len; i++)
    m[i] = c->kind == 0 ? (uint8_t)c->text[i]
           : c->kind == 1 ? (uint8_t)c->byte
                          : (uint8_t)((i * 131 + c->len * 7 + 17) & 0xFF);
  return b;
}

static void test_oracle(void **state) {
  (void)state;
  size_t n = sizeof sha_cases / sizeof sha_cases[0];
  for (size_t i = 0; i < n; i++) {
    const struct sha_case *c = &sha_cases[i];
    uint8_t *b = message(c, 0);
    char got[EMBD_TOKMAP_SHA256_SIZE];
    assert_int_equal(embd_tokmap_sha256(b, c->len, got), EMBD_OK);
    char want[EMBD_TOKMAP_SHA256_SIZE];
    snprintf(want, sizeof want, "sha256:%s", c->hex);
    if (strcmp(got, want) != 0) fail_msg("case %zu (kind %d, %zu bytes): %s, hashlib %s", i, c->kind, c->len, got, want);
    free(b);
  }
}

static void test_offsets(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof sha_cases / sizeof sha_cases[0]; i++) {
    const struct sha_case *c = &sha_cases[i];
    if (c->kind != 2 || c->len < 50 || c->len > 140) continue;
    for (size_t pad = 0; pad < 8; pad++) {
      uint8_t *b = message(c, pad);
      char got[EMBD_TOKMAP_SHA256_SIZE];
      assert_int_equal(embd_tokmap_sha256(b + pad, c->len, got), EMBD_OK);
      assert_string_equal(got + 7, c->hex);
      free(b);
    }
  }
}

static void test_args(void **state) {
  (void)state;
  char got[EMBD_TOKMAP_SHA256_SIZE];
  assert_int_equal(embd_tokmap_sha256(NULL, 1, got), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_tokmap_sha256("x", 1, NULL), EMBD_ERR_INVALID_ARGUMENT);
  assert_int_equal(embd_tokmap_sha256(NULL, 0, got), EMBD_OK);
  assert_string_equal(got, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oracle),
      cmocka_unit_test(test_offsets),
      cmocka_unit_test(test_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
