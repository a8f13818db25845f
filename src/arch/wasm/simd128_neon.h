/* Included first by every file of the wasm-simd128 tier (it marks them kernel files).
 * bswap32, copy and the dtype conversions are the NEON kernels of src/arch/arm, compiled
 * for wasm32 with -msimd128 through simde, whose NEON calls become WebAssembly SIMD128
 * instructions there (SIMDE_WASM_SIMD128_NATIVE: vqtbl -> i8x16.swizzle, vrev ->
 * i8x16.shuffle, ...). One source for both targets: the NEON files are already checked bit
 * for bit against the scalar reference (natively under qemu-aarch64, and through simde on
 * x86 as "neon-simde"), and js/test runs the same comparison inside the WebAssembly module
 * (every kernel of the wasm-simd128 row against the scalar row, embd_isa_set). This header
 * file's includers rename the NEON entry points to the tier's, so the registry rows name
 * wasm functions. base64 (base64_wasm.c) and CRC-32 (crc32_wasm.c) are written here.
 * Built only by scripts/build-wasm.sh (never by CMake: no native compiler targets wasm). */
#ifndef EMBD_SIMD128_NEON_H
#define EMBD_SIMD128_NEON_H
#if !defined(__wasm_simd128__)
#error "src/arch/wasm is built for wasm32 with -msimd128 (scripts/build-wasm.sh)"
#endif
#define EMBD_KERNEL_FILE 1
#endif
