/* The base64 steps the sse42 and avx2 kernels share (after Muła and Lemire, "Faster Base64
 * Encoding and Decoding Using AVX2 Instructions", ACM TOWEB 2018), written once for a
 * vector width. pshufb and the multiplies work per 128-bit lane, so every step is the
 * same on 128 and 256 bits with its 16-byte tables repeated in each lane.
 *
 * Included by the kernel files, each compiled with its own -m flags (the intrinsics
 * emit native code only under the file's flags), with B64_W defined as 128 or 256; a
 * file may include it once per width, 128 first (base64_avx2.c: the 128-bit kernels take
 * inputs under one 256-bit block). Defines, for width W (names suffixed _128 or _256):
 *   b64_dec_consts_W, b64_dec_setup_W(url)   the decode tables for an alphabet
 *   b64_dec_translate_W(x, k, &sum)          characters -> 6-bit values; sum has a bit
 *                                            of 0xf0 set exactly where a character is bad
 *   b64_dec_pack_W(v)                        values -> 12 bytes at the bottom of each lane
 *   b64_enc_lut_W(url), b64_enc_split_W(in, shuffle), b64_enc_translate_W(v, lut)
 * and the block kernels b64_dec_W and b64_enc_W (contract: src/core/base64_driver.h; their
 * loops are described in base64_sse42.c and base64_avx2.c); the 256-bit ones hand inputs
 * under one block to the 128-bit ones. B64_X86_IMPL turns block kernels into the
 * implementation's public-contract functions. */
#include <immintrin.h>

#include "base64_driver.h"
#include "base64_x86_luts.h"

#ifndef EMBD_BASE64_X86_SHARED
#define EMBD_BASE64_X86_SHARED
#define B64_INLINE static inline __attribute__((always_inline))
#define B64_PASTE_(a, b) a##_##b
#define B64_PASTE(a, b) B64_PASTE_(a, b)
/* Encode shuffles: the 12 bytes of a lane at offset 0 or 4 -> (s1 s0 s2 s1) per dword. */
#define B64_ENC_AT0 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10
#define B64_ENC_AT4 5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14
/* Decode compaction: the 3 bytes of each dword, in order, to the bottom of the lane. */
#define B64_DEC_COMPACT 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1
/* embd_base64_{decode,encode}_<name> from block kernels dec(dst, src, n, url) and enc,
 * each inlined twice, for a constant url (the alphabet's tables become immediates). The
 * encoder's pair is also inlined into its driver: without the call (and the registers
 * saved around it) 100 characters encode about 10% faster here; the decoder's gained
 * nothing measurable that way and stays a call. */
#define B64_X86_IMPL(name, dec, enc)                                                      \
  static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {          \
    return url ? dec(dst, src, n, 1) : dec(dst, src, n, 0);                               \
  }                                                                                       \
  B64_INLINE size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {         \
    return url ? enc(dst, src, n, 1) : enc(dst, src, n, 0);                               \
  }                                                                                       \
  EMBD_B64_DEFINE_IMPL(name, dec_block, enc_block)
#endif

#if B64_W == 128
#define V __m128i
#define V_(op) _mm_##op
#define VSI(op) _mm_##op##_si128
#define ROW(...) _mm_setr_epi8(__VA_ARGS__)
#elif B64_W == 256
#define V __m256i
#define V_(op) _mm256_##op
#define VSI(op) _mm256_##op##_si256
#define ROW(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)
#else
#error "B64_W must be 128 or 256"
#endif
#define N_(name) B64_PASTE(name, B64_W)

/* ---- decode ---- */

typedef struct {
  V lut_lo, lut_hi, lut_roll;
} N_(b64_dec_consts);

/* The tables and the method: scripts/gen_base64_x86_luts.py (base64_x86_luts.h). */
B64_INLINE N_(b64_dec_consts) N_(b64_dec_setup)(int url) {
  N_(b64_dec_consts) k;
  if (!url) {
    k.lut_lo = ROW(B64_LUT_LO_STD);
    k.lut_hi = ROW(B64_LUT_HI_STD);
    k.lut_roll = ROW(B64_LUT_ROLL_STD);
  } else {
    k.lut_lo = ROW(B64_LUT_LO_URL);
    k.lut_hi = ROW(B64_LUT_HI_URL);
    k.lut_roll = ROW(B64_LUT_ROLL_URL);
  }
  return k;
}

/* Characters -> 6-bit values (for valid characters) in 7 operations, validation included:
 * sum = pshufb(HI, hi) + pshufb(LO, x) (LO by the low nibble, straight from x: bit 7
 * zeroes it). The tables are chosen so that sum is in 0..15 exactly for the characters
 * of the alphabet, its value then the index of the character's offset in ROLL; any
 * other character has a bit of 0xf0 set in sum (tested by ptest against 0xf0, or ORed
 * for a group first). One addition thus both validates and indexes the offsets, where a
 * separate check would take an andnot per block. */
B64_INLINE V N_(b64_dec_translate)(V x, const N_(b64_dec_consts) *k, V *sum) {
  const V hi = VSI(and)(V_(srli_epi32)(x, 4), V_(set1_epi8)(0x0f));
  *sum = V_(add_epi8)(V_(shuffle_epi8)(k->lut_lo, x), V_(shuffle_epi8)(k->lut_hi, hi));
  return V_(add_epi8)(x, V_(shuffle_epi8)(k->lut_roll, *sum));
}

/* Non-zero when a sum of b64_dec_translate (or an OR of sums) flags a bad character. */
B64_INLINE int N_(b64_dec_bad)(V sum) { return !VSI(testz)(sum, V_(set1_epi8)((char)0xf0)); }

/* 16 values per lane (4 per dword, first character first) -> 12 bytes at the bottom of
 * each lane: pmaddubsw (a * 64 + b, c * 64 + d), pmaddwd (24 bits per dword), pshufb. */
B64_INLINE V N_(b64_dec_pack)(V v) {
  const V w = V_(maddubs_epi16)(v, V_(set1_epi32)(0x01400140));
  const V d = V_(madd_epi16)(w, V_(set1_epi32)(0x00011000));
  return V_(shuffle_epi8)(d, ROW(B64_DEC_COMPACT));
}

/* Stores the 12 useful bytes of each 128-bit lane of p at d, d + 12, ...: each as a 16-byte
 * store, so 4 bytes past the last lane's 12 are written too. */
B64_INLINE void N_(b64_dec_store_lanes)(uint8_t *d, V p) {
#if B64_W == 128
  _mm_storeu_si128((__m128i *)d, p);
#else
  _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(p));
  _mm_storeu_si128((__m128i *)(d + 12), _mm256_extracti128_si256(p, 1));
#endif
}

/* One block of the main loop: translated, packed and stored at once; returns its sums,
 * ORed by the caller for the group's single test. */
B64_INLINE V N_(b64_dec_stepv)(uint8_t *d, V x, const N_(b64_dec_consts) *k) {
  V sum;
  const V v = N_(b64_dec_translate)(x, k, &sum);
  N_(b64_dec_store_lanes)(d, N_(b64_dec_pack)(v));
  return sum;
}
B64_INLINE V N_(b64_dec_step)(uint8_t *d, const uint8_t *s, const N_(b64_dec_consts) *k) {
  return N_(b64_dec_stepv)(d, VSI(loadu)((const V *)s), k);
}

/* The main decode loop: four blocks (4 * W / 8 characters) per iteration, each stored as
 * soon as it is decoded, their error masks ORed and tested once per group: one branch
 * per group, none per block, and nothing kept live across blocks (the translation's
 * registers die at each store). A group holding a bad character has been stored anyway,
 * which the contract allows (bytes past the characters consumed are scratch); the loop
 * returns its start and the driver's scalar loop finds the character, at most one group
 * on. The lane stores spill 4 bytes, so groups run only while the last one ends inside
 * dst[0 .. n / 4 * 3): n - i >= 4 blocks + 8 characters. *bad is set when it stopped at
 * a bad group. */
B64_INLINE size_t N_(b64_dec_quads)(uint8_t *dst, const uint8_t *src, size_t n,
                                    const N_(b64_dec_consts) *k, int *bad) {
  enum { BLK = B64_W / 8, OUT = BLK / 4 * 3 };
  size_t i = 0;
  *bad = 0;
  if (n < 4 * BLK + 8) return 0;
  const size_t last = n - (4 * BLK + 8); /* the last start of a group */
  uint8_t *d = dst;
  if (last >= 4 * BLK) {
    /* Two groups or more: each block's load is issued before the block ahead of it is
     * decoded and stored (one register more; a whole group ahead spills here), for every
     * group but the last. */
    V x = VSI(loadu)((const V *)src);
    for (; i + 4 * BLK <= last; i += 4 * BLK, d += 4 * OUT) {
      const uint8_t *s = src + i;
      V y = VSI(loadu)((const V *)(s + BLK));
      const V e0 = N_(b64_dec_stepv)(d, x, k);
      x = VSI(loadu)((const V *)(s + 2 * BLK));
      const V e1 = N_(b64_dec_stepv)(d + OUT, y, k);
      y = VSI(loadu)((const V *)(s + 3 * BLK));
      const V e2 = N_(b64_dec_stepv)(d + 2 * OUT, x, k);
      x = VSI(loadu)((const V *)(s + 4 * BLK));
      const V e3 = N_(b64_dec_stepv)(d + 3 * OUT, y, k);
      if (N_(b64_dec_bad)(VSI(or)(VSI(or)(e0, e1), VSI(or)(e2, e3)))) {
        *bad = 1;
        return i;
      }
    }
    /* the last group (i <= last) is the plain loop's: it loads its first block again */
  }
  for (; i <= last; i += 4 * BLK, d += 4 * OUT) {
    const uint8_t *s = src + i;
    const V e0 = N_(b64_dec_step)(d, s, k);
    const V e1 = N_(b64_dec_step)(d + OUT, s + BLK, k);
    const V e2 = N_(b64_dec_step)(d + 2 * OUT, s + 2 * BLK, k);
    const V e3 = N_(b64_dec_step)(d + 3 * OUT, s + 3 * BLK, k);
    if (N_(b64_dec_bad)(VSI(or)(VSI(or)(e0, e1), VSI(or)(e2, e3)))) {
      *bad = 1;
      break;
    }
  }
  return i;
}

/* ---- encode ---- */

/* The offset table of b64_enc_translate: [0] 0..25, [1] 26..51, [2..11] digits, [12] 62,
 * [13] 63. */
B64_INLINE V N_(b64_enc_lut)(int url) {
  return url ? ROW(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -17, 32, 0, 0)
             : ROW(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
}

/* Per lane: 12 bytes (where `shuffle` takes them from: B64_ENC_AT0 or B64_ENC_AT4) -> 16
 * values, one per byte: pshufb into (s1 s0 s2 s1) per dword, then pmulhuw / pmullw move
 * the four 6-bit fields into their bytes. */
B64_INLINE V N_(b64_enc_split)(V in, V shuffle) {
  const V x = V_(shuffle_epi8)(in, shuffle);
  const V ac = V_(mulhi_epu16)(VSI(and)(x, V_(set1_epi32)(0x0FC0FC00)),
                               V_(set1_epi32)(0x04000040));
  const V bd = V_(mullo_epi16)(VSI(and)(x, V_(set1_epi32)(0x003F03F0)),
                               V_(set1_epi32)(0x01000010));
  return VSI(or)(ac, bd);
}

/* Values -> characters: the offset table by pshufb (index: saturating v - 51, plus one
 * for v >= 26). */
B64_INLINE V N_(b64_enc_translate)(V v, V lut) {
  const V idx = V_(sub_epi8)(V_(subs_epu8)(v, V_(set1_epi8)(51)),
                             V_(cmpgt_epi8)(v, V_(set1_epi8)(25)));
  return V_(add_epi8)(v, V_(shuffle_epi8)(lut, idx));
}

/* ---- the block kernels (contract: src/core/base64_driver.h) ---- */

enum {
  N_(B64_DEC_BLK) = B64_W / 8,                    /* characters per decode block */
  N_(B64_DEC_OUT) = B64_W / 8 / 4 * 3,            /* bytes it decodes to */
  N_(B64_ENC_BLK) = B64_W / 8 / 4 * 3,            /* bytes per encode block */
  N_(B64_ENC_SPILL) = B64_W == 128 ? 0 : 4,       /* its fast load reads past its end */
  N_(B64_ENC_MIN) = B64_W == 128 ? 16 : 28,       /* input the first block loads */
};

/* Decodes one block at s into exactly its bytes at d; 0 (nothing stored) when it holds
 * a character outside the alphabet. */
B64_INLINE int N_(b64_dec_exact)(uint8_t *d, const uint8_t *s, const N_(b64_dec_consts) *k) {
  V sum;
  const V v = N_(b64_dec_translate)(VSI(loadu)((const V *)s), k, &sum);
  if (N_(b64_dec_bad)(sum)) return 0;
#if B64_W == 128
  const __m128i p = b64_dec_pack_128(v); /* 8 + 4 bytes */
  _mm_storel_epi64((__m128i *)d, p);
  const uint32_t w = (uint32_t)_mm_extract_epi32(p, 2);
  memcpy(d + 8, &w, 4);
#else
  /* the lanes put together by vpermd: 16 + 8 bytes */
  const __m256i p = _mm256_permutevar8x32_epi32(b64_dec_pack_256(v),
                                                _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
  _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(p));
  _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(p, 1));
#endif
  return 1;
}

B64_INLINE size_t N_(b64_dec)(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  enum { BLK = N_(B64_DEC_BLK), OUT = N_(B64_DEC_OUT) };
#if B64_W == 256
  if (n < BLK) return b64_dec_128(dst, src, n, url);
#endif
  const N_(b64_dec_consts) k = N_(b64_dec_setup)(url);
  const size_t out = n / 4 * 3;
  int bad;
  size_t i = N_(b64_dec_quads)(dst, src, n, &k, &bad), o = i / 4 * 3;
  if (bad) return i;
  for (; i + BLK <= n; i += BLK, o += OUT)
    if (!N_(b64_dec_exact)(dst + o, src + i, &k)) return i;
  /* under a block left: the block ending at n, over characters already decoded (it
   * rewrites the same bytes); when it holds a bad character, the scalar loop takes the
   * characters before it */
  if (i < n && n >= BLK && N_(b64_dec_exact)(dst + out - OUT, src + n - BLK, &k)) i = n;
  return i;
}

/* Loads of one encode block at s (its bytes at offset 4 of each lane, or 0: AT0):
 *   first: the first block, with nothing before it (reads s[0 .. MIN));
 *   exact: loads from 4 bytes early that end where the block ends (reads s[-4 .. BLK));
 *   fast:  one load from 4 bytes early (reads s[-4 .. BLK + SPILL)). */
B64_INLINE V N_(b64_enc_first)(const uint8_t *s, V lut) {
#if B64_W == 128
  const __m128i in = _mm_loadu_si128((const __m128i *)s);
#else
  const __m256i in =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)s)),
                              _mm_loadu_si128((const __m128i *)(s + 12)), 1);
#endif
  return N_(b64_enc_translate)(N_(b64_enc_split)(in, ROW(B64_ENC_AT0)), lut);
}

B64_INLINE V N_(b64_enc_exact)(const uint8_t *s, V lut) {
#if B64_W == 128
  const __m128i in = _mm_loadu_si128((const __m128i *)(s - 4));
#else
  const __m256i in =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s - 4))),
                              _mm_loadu_si128((const __m128i *)(s + 8)), 1);
#endif
  return N_(b64_enc_translate)(N_(b64_enc_split)(in, ROW(B64_ENC_AT4)), lut);
}

#if B64_W == 256
/* The characters of a fast load's 32 bytes: lane 0 holds the block's first 12 bytes at
 * offset 4, lane 1 the next 12 at offset 0. */
B64_INLINE __m256i b64_enc_loaded_256(__m256i in, __m256i lut) {
  return b64_enc_translate_256(
      b64_enc_split_256(in, _mm256_setr_epi8(B64_ENC_AT4, B64_ENC_AT0)), lut);
}
#endif

B64_INLINE V N_(b64_enc_fast)(const uint8_t *s, V lut) {
#if B64_W == 128
  return b64_enc_exact_128(s, lut);
#else
  return b64_enc_loaded_256(_mm256_loadu_si256((const __m256i *)(s - 4)), lut);
#endif
}

B64_INLINE size_t N_(b64_enc)(char *dst, const uint8_t *src, size_t n, int url) {
  enum { BLK = N_(B64_ENC_BLK), CHARS = B64_W / 8, SPILL = N_(B64_ENC_SPILL) };
  if (n < N_(B64_ENC_MIN)) {
#if B64_W == 256
    return b64_enc_128(dst, src, n, url);
#else
    return 0; /* the scalar loop's */
#endif
  }
  const V lut = N_(b64_enc_lut)(url);
  const size_t out = n / 3 * 4;
  VSI(storeu)((V *)dst, N_(b64_enc_first)(src, lut));
  size_t i = BLK, o = CHARS; /* every later block is loaded from 4 bytes early */
#if B64_W == 256
  /* Groups of four blocks, software-pipelined: each block's 32-byte load (from 4 bytes
   * early, as in b64_enc_fast) is issued for the next group as soon as the register is
   * free, one pointer step per group. Measured 7-9% faster than the two-block loop below
   * from 8 KiB up here; it runs while a whole group's loads stay inside src[0 .. n). */
  if (i + 4 * BLK + SPILL <= n) {
    const uint8_t *s = src + i, *const end = src + n - (4 * BLK + SPILL);
    char *d = dst + o;
    V x0 = VSI(loadu)((const V *)(s - 4)), x1 = VSI(loadu)((const V *)(s + BLK - 4));
    V x2 = VSI(loadu)((const V *)(s + 2 * BLK - 4)), x3 = VSI(loadu)((const V *)(s + 3 * BLK - 4));
    for (; s + 4 * BLK <= end; s += 4 * BLK, d += 4 * CHARS) {
      const uint8_t *t = s + 4 * BLK;
      const V y0 = b64_enc_loaded_256(x0, lut);
      x0 = VSI(loadu)((const V *)(t - 4));
      VSI(storeu)((V *)d, y0);
      const V y1 = b64_enc_loaded_256(x1, lut);
      x1 = VSI(loadu)((const V *)(t + BLK - 4));
      VSI(storeu)((V *)(d + CHARS), y1);
      const V y2 = b64_enc_loaded_256(x2, lut);
      x2 = VSI(loadu)((const V *)(t + 2 * BLK - 4));
      VSI(storeu)((V *)(d + 2 * CHARS), y2);
      const V y3 = b64_enc_loaded_256(x3, lut);
      x3 = VSI(loadu)((const V *)(t + 3 * BLK - 4));
      VSI(storeu)((V *)(d + 3 * CHARS), y3);
    }
    VSI(storeu)((V *)d, b64_enc_loaded_256(x0, lut));
    VSI(storeu)((V *)(d + CHARS), b64_enc_loaded_256(x1, lut));
    VSI(storeu)((V *)(d + 2 * CHARS), b64_enc_loaded_256(x2, lut));
    VSI(storeu)((V *)(d + 3 * CHARS), b64_enc_loaded_256(x3, lut));
    i = (size_t)(s - src) + 4 * BLK, o = (size_t)(d - dst) + 4 * CHARS;
  }
#endif
  for (; i + 2 * BLK + SPILL <= n; i += 2 * BLK, o += 2 * CHARS) {
    const V a = N_(b64_enc_fast)(src + i, lut), b = N_(b64_enc_fast)(src + i + BLK, lut);
    VSI(storeu)((V *)(dst + o), a);
    VSI(storeu)((V *)(dst + o + CHARS), b);
  }
  for (; i + BLK <= n; i += BLK, o += CHARS)
    VSI(storeu)((V *)(dst + o), N_(b64_enc_exact)(src + i, lut));
  /* under a block left: the block ending at n, over groups already encoded */
  if (i < n) VSI(storeu)((V *)(dst + out - CHARS), N_(b64_enc_exact)(src + n - BLK, lut));
  return n;
}

#undef V
#undef V_
#undef VSI
#undef ROW
#undef N_
#undef B64_W
