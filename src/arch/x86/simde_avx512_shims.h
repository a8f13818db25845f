/* What the "avx512-simde" rows share: the avx512 kernels' sources compiled through
 * simde's AVX-512 emulation in the avx2 family, so that the tests run their logic on
 * CPUs without AVX-512. Included first by each *_avx512_simde.c, which then adds the
 * shims only its kernel needs and includes the avx512 source.
 *
 * simde 0.7.4 has no byte-masked load or store. These are element by element and touch
 * only the bytes the mask selects, as the hardware's fault suppression does: the kernels
 * load blocks that start before a buffer or end after it under a mask, and a full load
 * with a blend would read there, so the tests' guard pages and ASan still catch a mask
 * that reaches past a buffer. (C forbids the compiler to add the unselected reads.) */
#ifndef EMBD_SIMDE_AVX512_SHIMS_H
#define EMBD_SIMDE_AVX512_SHIMS_H

/* simde's 512-bit type is a vector type here, and clang notes that passing one without
 * AVX-512 changes the ABI: every such function is static in these files, so no ABI is
 * crossed. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <stdint.h>

#define SHIM static inline __attribute__((always_inline))

SHIM simde__m512i shim_mm512_maskz_loadu_epi8(uint64_t k, const void *p) {
  const uint8_t *s = (const uint8_t *)p;
  uint8_t v[64];
  for (int i = 0; i < 64; i++) v[i] = (k >> i & 1) ? s[i] : 0;
  return simde_mm512_loadu_si512(v);
}

SHIM void shim_mm512_mask_storeu_epi8(void *p, uint64_t k, simde__m512i a) {
  uint8_t *d = (uint8_t *)p, v[64];
  simde_mm512_storeu_si512(v, a);
  for (int i = 0; i < 64; i++)
    if (k >> i & 1) d[i] = v[i];
}

#define _mm512_maskz_loadu_epi8 shim_mm512_maskz_loadu_epi8
#define _mm512_mask_storeu_epi8 shim_mm512_mask_storeu_epi8

#endif
