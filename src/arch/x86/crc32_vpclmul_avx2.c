/* CRC-32 (zlib) for the avx2 tier: 256-bit VPCLMULQDQ folding (CPUs with AVX2 but no
 * VPCLMULQDQ use the sse42 kernel instead; see the registry in src/core/dispatch.c). */
#include "crc32_x86_common.h"

static inline __m128i ymm_to128(__m256i v) {
  return _mm_xor_si128(embd_fold128(_mm256_castsi256_si128(v), EMBD_K128(16)),
                       _mm256_extracti128_si256(v, 1));
}

#define FUNC embd_crc32_vpclmul_avx2
#define VL 32
#define NACC 8
#define VEC __m256i
#define LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define XOR3(a, b, c) _mm256_xor_si256(_mm256_xor_si256(a, b), c)
#define CLMUL(a, k, imm) _mm256_clmulepi64_epi128(a, k, imm)
#define BCAST(k) _mm256_broadcastsi128_si256(k)
#define K_MAIN EMBD_K128(256)
#define TO128X(v, t) \
  _mm_xor_si128(_mm_xor_si128(_mm256_castsi256_si128(v), t), _mm256_extracti128_si256(v, 1))
#define LASTVEC_TO128(v) ymm_to128(v)
#define KLANES klanes_avx2
#define DIRECT direct_avx2
#define DIRECTK directk_avx2
#define LONGMSG long_avx2
#define CAST_FROM128(v) _mm256_zextsi128_si256(v)
#define ZERO() _mm256_setzero_si256()
#define FOLDV fold_avx2
#include "crc32_pclmul_template.h"
