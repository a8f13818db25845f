/* base64 block kernels, neon: TODO(kernel) vector blocks; the driver's scalar loop does
 * everything until then. Contract: src/base64_driver.h. */
#include "../../base64_driver.h"

static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  (void)dst, (void)src, (void)n, (void)url;
  return 0;
}

static size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  (void)dst, (void)src, (void)n, (void)url;
  return 0;
}

EMBD_B64_DEFINE_IMPL(neon, dec_block, enc_block)
