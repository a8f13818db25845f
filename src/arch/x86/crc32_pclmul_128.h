/* The 128-bit (PCLMULQDQ) instantiation of crc32_pclmul_template.h, shared by the sse42
 * kernel (crc32_pclmul.c) and its VEX-encoded build in the avx2 tier
 * (crc32_pclmul_avx2.c): the includer defines FUNC, and its file's -m flags decide the
 * encoding. */
#include "crc32_x86_common.h"

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
#define KLANES klanes_128
#define DIRECT direct_128
#define DIRECTK directk_128
#define LONGMSG long_128
#define CAST_FROM128(v) (v)
#define ZERO() _mm_setzero_si128()
#define FOLDV fold_128
#include "crc32_pclmul_template.h"
