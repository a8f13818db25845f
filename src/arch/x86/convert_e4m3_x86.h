/* The e4m3fn step the avx2 and avx512 convert kernels share (each file includes this
 * header under its own -m flags; both have AVX2): 16 e4m3fn bytes -> 16 binary16 lanes
 * holding each value times 2^-8. (b & 0x7f) << 7 with the sign at bit 15 is that binary16,
 * subnormals included (e4m3's bias is 7, binary16's 15; an e4m3 subnormal m * 2^-9
 * becomes the half subnormal m * 2^-17). The caller's vcvtph2ps makes it a float32
 * exactly and a multiply by 256 restores the scale, exactly too (a power of two, every
 * result a normal float: MXCSR's rounding, DAZ and FTZ never matter). S.1111.111, the
 * only NaN, would be 480: it becomes the half quiet NaN of its sign here, which vcvtph2ps
 * and the multiply keep as 0x7fc00000 with the sign, the reference's NaN. */
#ifndef EMBD_CONVERT_E4M3_X86_H
#define EMBD_CONVERT_E4M3_X86_H

#include <immintrin.h>

#include "convert_kernel.h" /* AI */

AI __m256i e4m3_half_256(__m128i bytes) {
  const __m256i b = _mm256_cvtepu8_epi16(bytes);
  const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8);
  const __m256i mag = _mm256_and_si256(b, _mm256_set1_epi16(0x7f));
  const __m256i h = _mm256_or_si256(sign, _mm256_slli_epi16(mag, 7));
  const __m256i nan = _mm256_cmpeq_epi16(mag, _mm256_set1_epi16(0x7f));
  return _mm256_blendv_epi8(h, _mm256_or_si256(sign, _mm256_set1_epi16(0x7e00)), nan);
}

#endif
