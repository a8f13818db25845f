/* The avx512 base64 kernels (base64_avx512.c, the same source) compiled through simde's
 * AVX-512 emulation in the avx2 family (its flags), registered as "avx512-simde": tier
 * avx2, never picked by the dispatcher. It exists so that tests/test_base64.c runs the
 * avx512 kernels' own logic (the 4-block groups and their packing permutes, the fallback
 * to single blocks at a bad group, the masked last block, the encoder's masked tail) on
 * machines without AVX-512, this project's CI included. It does not test the zmm
 * instructions themselves. The byte-masked loads and stores come from
 * simde_avx512_shims.h. simde's native alias for _mm512_madd_epi16 takes four arguments
 * (a slip in simde's madd.h): the two-argument form is mapped to simde's function again. */
#include "simde_avx512_shims.h"

#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)

#define B64_ISA avx512simde
#include "base64_avx512.c"
