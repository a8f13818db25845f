/* dtype -> float32 and float32 -> f16/bf16 of the wasm-simd128 tier: convert_neon.c
 * through simde. Not aarch64, so the file's integer f16 path runs (NaN payloads kept,
 * like the scalar reference), never simde's portable vcvt emulation. */
#include "simd128_neon.h"
#define embd_cvt_f16_neon embd_cvt_f16_wasm
#define embd_cvt_bf16_neon embd_cvt_bf16_wasm
#define embd_cvt_e4m3_neon embd_cvt_e4m3_wasm
#define embd_cvt_e5m2_neon embd_cvt_e5m2_wasm
#define embd_cvt_i8_neon embd_cvt_i8_wasm
#define embd_cvt_u8_neon embd_cvt_u8_wasm
#define embd_cvt_binary_neon embd_cvt_binary_wasm
#define embd_cvt_ubinary_neon embd_cvt_ubinary_wasm
#define embd_enc_f16_neon embd_enc_f16_wasm
#define embd_enc_bf16_neon embd_enc_bf16_wasm
#include "../arm/convert_neon.c"
