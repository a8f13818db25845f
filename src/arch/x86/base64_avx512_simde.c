/* The avx512 base64 kernels (base64_avx512.c, the same source) compiled through simde's
 * AVX-512 emulation in the avx2 family (its flags), registered as "avx512-simde": tier
 * avx2, never picked by the dispatcher. It exists so that tests/test_base64.c runs the
 * avx512 kernels' own logic (the 4-block groups and their packing permutes, the fallback
 * to single blocks at a bad group, the masked last block, the encoder's masked tail) on
 * machines without AVX-512, this project's CI included. It does not test the zmm
 * instructions themselves. simde 0.7.4 has no _mm512_maskz_loadu_epi8 or
 * _mm512_mask_storeu_epi8: the shims below supply them element by element, touching
 * only the bytes the mask selects (as the hardware's fault suppression does), so the
 * tests' guard pages and ASan still catch a mask that reaches past a buffer. Its native
 * alias for _mm512_madd_epi16 takes four arguments (a slip in simde's madd.h): the
 * two-argument form is mapped to simde's function again. */
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <stdint.h>

#define SHIM static inline __attribute__((always_inline))

SHIM simde__m512i shim_mm512_maskz_loadu_epi8(simde__mmask64 k, const void *p) {
  const uint8_t *s = (const uint8_t *)p;
  uint8_t v[64];
  for (int i = 0; i < 64; i++) v[i] = (k >> i & 1) ? s[i] : 0;
  return simde_mm512_loadu_si512(v);
}

SHIM void shim_mm512_mask_storeu_epi8(void *p, simde__mmask64 k, simde__m512i a) {
  uint8_t *d = (uint8_t *)p, v[64];
  simde_mm512_storeu_si512(v, a);
  for (int i = 0; i < 64; i++)
    if (k >> i & 1) d[i] = v[i];
}

#define _mm512_maskz_loadu_epi8 shim_mm512_maskz_loadu_epi8
#define _mm512_mask_storeu_epi8 shim_mm512_mask_storeu_epi8
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)

#define B64_ISA avx512simde
#include "base64_avx512.c"
