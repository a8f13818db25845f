/* bswap32 and the copy kernel of the wasm-simd128 tier: bswap_neon.c through simde
 * (vrev32q_u8 is one i8x16.shuffle; the copy is 16-byte v128 loads and stores). */
#include "simd128_neon.h"
#define embd_bswap32_neon embd_bswap32_wasm
#define embd_copy_neon embd_copy_wasm
#include "../arm/bswap_neon.c"
