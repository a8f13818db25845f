/* The avx512 CRC-32 kernel (crc32_vpclmul_avx512.c, the same source) compiled through
 * simde's AVX-512 emulation in the avx2 family (its flags: AVX2 + VPCLMULQDQ, so simde
 * builds each 512-bit carry-less multiply from two native ymm ones), registered as
 * "avx512-simde": tier avx2 with VPCLMULQDQ, never picked by the dispatcher. It exists
 * so that tests/test_crc32.c runs the avx512 kernel's own logic (block layouts, masked
 * heads and tails, the CRC placed inside a block, the short-message pieces) on machines
 * without AVX-512, this project's CI included; it does not test the zmm instructions
 * themselves. simde 0.7.4 lacks the byte-masked load (simde_avx512_shims.h) and the two
 * below. */
#include "simde_avx512_shims.h"
#include <simde/x86/clmul.h>

/* simde 0.7.4 maps its _mm512_clmulepi64_epi128 to the native zmm instruction whenever
 * VPCLMULQDQ is enabled, AVX-512 or not: two ymm multiplies instead. */
#undef simde_mm512_clmulepi64_epi128
#undef _mm512_clmulepi64_epi128
#define _mm512_clmulepi64_epi128(a, b, imm)                                                \
  simde_mm512_inserti64x4(                                                                 \
      simde_mm512_castsi256_si512(_mm256_clmulepi64_epi128(                                \
          simde_mm512_castsi512_si256(a), simde_mm512_castsi512_si256(b), imm)),           \
      _mm256_clmulepi64_epi128(simde_mm512_extracti64x4_epi64(a, 1),                       \
                               simde_mm512_extracti64x4_epi64(b, 1), imm),                 \
      1)

#define _mm512_zextsi128_si512(a) simde_mm512_inserti32x4(simde_mm512_setzero_si512(), a, 0)

#define EMBD_CRC32_AVX512_FN embd_crc32_vpclmul_avx512_simde
#include "crc32_vpclmul_avx512.c"
