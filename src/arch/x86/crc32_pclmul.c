/* CRC-32 (zlib) for the sse42 tier: 128-bit PCLMULQDQ folding. Compiled with
 * -mssse3 -msse4.2 -mpclmul. (SSE4.2's own crc32 instruction is CRC-32C, a different
 * polynomial: it cannot be used here.) */
#include "crc32_x86_common.h"

#define FUNC embd_crc32_pclmul
#define VL 16
#define NACC 8
#define VEC __m128i
#define LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define XOR3(a, b, c) _mm_xor_si128(_mm_xor_si128(a, b), c)
#define CLMUL(a, k, imm) _mm_clmulepi64_si128(a, k, imm)
#define BCAST(k) (k)
#define K_MAIN EMBD_K128(128)
#define TO128X(v, t) _mm_xor_si128(v, t)
#define LASTVEC_TO128(v) (v)
#define KLANES klanes_sse
#define DIRECT direct_sse
#define DIRECTK directk_sse
#define LONGMSG long_sse
#define CAST_FROM128(v) (v)
#define ZERO() _mm_setzero_si128()
#define FOLDV fold_sse
#include "crc32_pclmul_template.h"
