/* embd: element types (dtypes) and byte orders of embedding values, and the conversion
 * kernels between them and float32.
 *
 *   float v[1536];
 *   embd_to_f32(v, wire, 1536, EMBD_DTYPE_F16, EMBD_ORDER_LE);   // 3,072 bytes in
 *
 *   uint8_t out[1536 * 2];
 *   embd_error err;
 *   embd_from_f32(out, v, 1536, EMBD_DTYPE_BF16, EMBD_ORDER_BE, &err);
 *
 * The dtypes are what embedding servers send (vLLM embed_dtype, Cohere/Voyage/Mistral/
 * Jina output types) and what EMBD frames carry (docs/FORMAT.md, which also fixes their
 * numeric codes: they never change). Element sizes: f32 4 bytes, f16 and bf16 2, the
 * fp8s, int8 and uint8 1, the packed-bit types 1/8 (one byte per 8 dims, so their dims
 * must be a multiple of 8).
 *
 * Values, to float32 (embd_to_f32; exact: every value of every dtype is a float32):
 *   f16       IEEE 754 binary16; infinities and NaNs stay so (a NaN keeps its payload,
 *             shifted into the float's upper mantissa bits, and its sign)
 *   bf16      the upper 16 bits of a binary32 (NaNs kept bit for bit)
 *   fp8-e4m3  OCP FP8 E4M3 in the "fn" variant torch (float8_e4m3fn) and vLLM use: bias 7,
 *             no infinities, S.1111.111 (0x7f, 0xff) the only NaNs, max +-448
 *   fp8-e5m2  OCP FP8 E5M2: bias 15 with IEEE infinities and NaNs (the upper byte of a
 *             binary16)
 *   int8      two's complement -128..127 -> that value
 *   uint8     0..255 -> that value
 *   ubinary   packed bits, most significant bit first within each byte (numpy packbits'
 *             order): bit 1 -> 1.0f, bit 0 -> 0.0f
 *   binary    the same bits stored as int8 "offset binary" (Cohere's signed form: each
 *             byte is the packed byte minus 128, i.e. the packed byte XOR 0x80):
 *             bit 1 -> +1.0f, bit 0 -> -1.0f
 * From float32 (embd_from_f32), rounding to nearest, ties to even, as IEEE 754 says:
 *   f16, bf16 a NaN stays a NaN of the same sign (quieted, upper payload bits kept); a
 *             value beyond the largest finite one rounds to infinity; subnormals are
 *             produced, not flushed
 *   fp8-e4m3  as torch's float8_e4m3fn conversion: a magnitude at or above 480 (it would
 *             round past 448), an infinity or a NaN becomes NaN (0x7f with the sign)
 *   fp8-e5m2  overflow rounds to infinity; a NaN stays a (quiet) NaN
 *   int8, uint8 each value must be an integer in the type's range (these are exact types,
 *             not a quantizer: scale first yourself): anything else is
 *             EMBD_ERR_DTYPE_RANGE with err->offset = the element's index
 *   ubinary, binary  bit = (value > 0), Cohere's rule (a NaN gives 0)
 *   f32       the bit patterns, in the requested order
 * Byte order applies to the multi-byte dtypes (f32, f16, bf16); the others ignore it.
 *
 * Any alignment. `dst` must not overlap `src`. n = 0 does nothing (pointers may be NULL).
 * The kernels behind embd_to_f32 / embd_from_f32 form the families EMBD_KERNEL_CONVERT
 * and EMBD_KERNEL_CONVERT_ENCODE (embd/cpu.h): scalar reference, SIMD tiers, EMBD_ISA
 * forcing, as every kernel family.
 *
 * Thread safety: reentrant; any thread, any time.
 */
#ifndef EMBD_CONVERT_H
#define EMBD_CONVERT_H

#include "common.h"
#include "cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. The values are the dtype codes of EMBD frames (docs/FORMAT.md): fixed. */
typedef enum embd_dtype {
  EMBD_DTYPE_F32 = 0,
  EMBD_DTYPE_F16 = 1,
  EMBD_DTYPE_BF16 = 2,
  EMBD_DTYPE_FP8_E4M3 = 3,
  EMBD_DTYPE_FP8_E5M2 = 4,
  EMBD_DTYPE_INT8 = 5,
  EMBD_DTYPE_UINT8 = 6,
  EMBD_DTYPE_BINARY = 7,
  EMBD_DTYPE_UBINARY = 8,
  EMBD_DTYPE_COUNT_ /* number of dtypes; not a dtype */
} embd_dtype;

/* Byte order of multi-byte elements on the wire. */
typedef enum embd_byte_order {
  EMBD_ORDER_LE = 0, /* little-endian: EMBD frames, most servers (x86/ARM "native") */
  EMBD_ORDER_BE = 1  /* big-endian: vLLM endianness=big, pgvector, Elasticsearch */
} embd_byte_order;

/* Canonical names: "f32", "f16", "bf16", "fp8-e4m3", "fp8-e5m2", "int8", "uint8",
 * "binary", "ubinary"; NULL for anything else. */
EMBD_API const char *embd_dtype_name(embd_dtype dtype);

/* The dtype a name stands for, name[0 .. len) (not NUL-terminated), case-sensitive:
 * the canonical names and the servers' spellings: "float32", "float", "float16", "half",
 * "bfloat16", "fp8_e4m3", "float8_e4m3fn", "e4m3", "fp8_e5m2", "float8_e5m2", "e5m2".
 * EMBD_ERR_INVALID_ARGUMENT for anything else (*out untouched). */
EMBD_API embd_result embd_dtype_parse(const char *name, size_t len, embd_dtype *out);

/* Bits per element: 32, 16, 8, or 1 for the packed-bit types; 0 for an unknown dtype. */
EMBD_API unsigned embd_dtype_bits(embd_dtype dtype);

/* Bytes that `n` elements take: n * bits / 8. EMBD_ERR_DTYPE_LENGTH when n is not a
 * multiple of 8 for a packed-bit type, EMBD_ERR_INVALID_ARGUMENT for an unknown dtype or
 * a size that does not fit in size_t. */
EMBD_API embd_result embd_dtype_bytes(embd_dtype dtype, size_t n, size_t *bytes);

/* Elements in `bytes` bytes: the inverse. EMBD_ERR_DTYPE_LENGTH when the bytes are not a
 * whole number of elements (a 3,071-byte float16 vector), EMBD_ERR_INVALID_ARGUMENT for an
 * unknown dtype. */
EMBD_API embd_result embd_dtype_count(embd_dtype dtype, size_t bytes, size_t *n);

/* n elements of `dtype` in `order` at src (embd_dtype_bytes(dtype, n) bytes) -> n host
 * floats at dst. EMBD_ERR_DTYPE_LENGTH for packed bits with n not a multiple of 8;
 * EMBD_ERR_INVALID_ARGUMENT for an unknown dtype or order, or NULL with n > 0. */
EMBD_API embd_result embd_to_f32(float *dst, const void *src, size_t n, embd_dtype dtype,
                                 embd_byte_order order);

/* n host floats -> n elements of `dtype` in `order` at dst (embd_dtype_bytes bytes), by
 * the rules above. On EMBD_ERR_DTYPE_RANGE (int8/uint8 only) dst holds nothing usable and
 * err names the element. `err` may be NULL. */
EMBD_API embd_result embd_from_f32(void *dst, const float *src, size_t n, embd_dtype dtype,
                                   embd_byte_order order, embd_error *err);

/* One implementation, callable directly (tests, benchmarks). big_endian: non-zero for
 * EMBD_ORDER_BE (ignored by single-byte dtypes). n is in elements; packed-bit kernels need
 * n to be a multiple of 8 (they convert n / 8 bytes). */
typedef void (*embd_to_f32_fn)(float *dst, const void *src, size_t n, int big_endian);
typedef void (*embd_from_f32_fn)(void *dst, const float *src, size_t n, int big_endian);

/* Implementation `index` of EMBD_KERNEL_CONVERT (embd_impl_get) for `dtype` (any dtype
 * but f32, which is the bswap32 family's), or NULL when the index or dtype is out of
 * range or the enabled CPU features cannot run it. */
EMBD_API embd_to_f32_fn embd_to_f32_impl(size_t index, embd_dtype dtype);
/* Implementation `index` of EMBD_KERNEL_CONVERT_ENCODE for EMBD_DTYPE_F16 or
 * EMBD_DTYPE_BF16 (the other dtypes are encoded by the scalar code only), or NULL. */
EMBD_API embd_from_f32_fn embd_from_f32_impl(size_t index, embd_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
