/* base64 block kernels, AVX-512 VBMI (compiled with -mavx512f/bw/vl/vbmi), after the
 * published method of W. Mula and D. Lemire, "Base64 encoding and decoding at almost the
 * speed of a memory copy" (Software: Practice and Experience, 2019). Contract:
 * src/core/base64_driver.h.
 *
 * Decode, 64 characters -> 48 bytes per block:
 *   1. vpermi2b looks each character up in a 128-entry table (two zmm halves, chosen by
 *      bit 6 of the character); characters outside the alphabet ('=' included) map to
 *      0x80. The permute ignores bit 7 of the character, so (character | value) has bit 7
 *      set exactly for the characters outside the alphabet.
 *   2. vpmaddubsw joins the 6-bit pairs into 12-bit words and vpmaddwd the word pairs into
 *      24-bit dwords; a byte permute keeps bytes 2, 1, 0 of each dword.
 *   3. One vpermb packs the 48 bytes into the bottom of the vector. On Intel (measured
 *      on a Xeon, family 6 model 207) the two-source permutes vpermi2b / vpermt2b take two
 *      cycles of port 5 each and vpermb one, and the 512-bit ALUs are ports 0 and 5 only,
 *      so the translation's vpermi2b is the one two-source permute per block: step 1
 *      and 3 give port 5 three cycles per block, the two multiplies and the check port 0
 *      three. Packing 4 blocks into 3 stores with vpermt2b, as before, cost port 5 six
 *      cycles per 4 blocks where one vpermb each costs four.
 *   The main loop decodes 4 blocks (256 characters) at a time (from 280 characters on)
 *   and writes each block as a full 64-byte store, 48 bytes apart: the next store
 *   overwrites the 16 spare bytes, and the loop stops while at least 24 characters
 *   (18 bytes) follow its last block, so no store reaches past dst[0 .. n / 4 * 3). The
 *   error bits of the whole loop accumulate and are tested once after it: when one is
 *   set, the single blocks start again from the beginning and stop at the bad block,
 *   whose start is returned (the groups stored after it are the scratch the driver's
 *   contract allows). How they accumulate decides the loop's speed on Zen 5 (family 26):
 *   one vpternlogd per block chained through the accumulator made the chain the
 *   critical path; a tree (b64_dec_group) that ORs the characters before their lookup
 *   and the values after it lets the lookup overwrite its index (vpermi2b, no register
 *   copies) and leaves two operations per group on the chain: 1 KiB to 16 KiB
 *   1.12-1.17x faster, 64 KiB (in L2) 0.95x, where issuing the loads a group ahead, as
 *   this loop did before, had helped; with the tree, it made 1-16 KiB 0.8-0.9x. (The
 *   loads went ahead after an Intel Xeon, family 6 model 207, ran 64 KiB 1.13x slower
 *   with them after the stores when dst sat 1,024 bytes past a 4 KiB multiple of src;
 *   on Zen 5 that layout measures as the others do. Not re-measured on that Xeon.)
 *   Single blocks store 64 bytes where 24 characters follow them and 48 (masked)
 *   otherwise; the last partial block (4..60 characters) is read with a masked load and
 *   written with a masked store.
 *
 * Encode, 48 bytes -> 64 characters per block: vpermb spreads each 3-byte group s0 s1 s2
 * into a dword [s1 s0 s2 s1]; vpmultishiftqb copies the four 6-bit fields (bit offsets 10,
 * 4, 22, 16 of each dword) into bytes; vpermb, which uses the low 6 bits of its index,
 * maps them through the 64-character alphabet. Up to 20 KiB a step of four blocks reads
 * three aligned vectors and picks each block's 48 bytes with vpermb or vpermt2b (see
 * enc_blocks); on the Intel Xeon above, where vpermt2b takes port 5 two cycles, that is
 * two port-5 cycles more per step than four vpermb, traded for one load instead of three
 * that cross a cache line: not measured there. From 4 KiB to 20 KiB a misaligned output
 * is first brought to a 64-byte boundary and the steps read four aligned vectors
 * wherever the input then sits (enc_realigned): three vpermt2b a step, one more than the
 * aligned-input steps, for stores that no longer cross lines. From 64 bytes up the tail
 * is one load of the input's last 64 bytes and blocks that overlap characters already
 * stored; only inputs under 64 bytes use masked loads and stores. */
#include <immintrin.h>

#include "avx512_masked_mem.h"
#include "base64_driver.h"

/* The functions' names: embd_base64_{decode,encode}_avx512, or _<B64_ISA> when another
 * file compiles this one (base64_avx512_simde.c). */
#ifndef B64_ISA
#define B64_ISA avx512
#endif

/* Decode tables for ASCII 0..127: 6-bit value, or 0x80 outside the alphabet. `p` and `s`
 * are the positions of the 62 and 63 characters: 0x2B '+' 0x2F '/' or 0x2D '-' 0x5F '_'. */
#define X_ 0x80
#define V_(c, v, p, s) ((c) == (p) ? 62 : (c) == (s) ? 63 : (v))
#define B64_ROW2(p, s)                                                                        \
  X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, V_(0x2B, X_, p, s), X_, V_(0x2D, X_, p, s), X_, \
      V_(0x2F, X_, p, s)
#define B64_DEC_TABLE(p, s)                                                                   \
  {                                                                                           \
    X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_,     /* 0x00 */            \
        X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, X_, /* 0x10 */            \
        B64_ROW2(p, s),                                                 /* 0x20 */            \
        52, 53, 54, 55, 56, 57, 58, 59, 60, 61, X_, X_, X_, X_, X_, X_, /* 0x30 '0'-'9' */    \
        X_, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,           /* 0x40 'A'-'O' */    \
        15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, X_, X_, X_, X_,     /* 0x50 'P'-'Z' */    \
        V_(0x5F, X_, p, s),                                                                   \
        X_, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, /* 0x60 'a'-'o' */    \
        41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, X_, X_, X_, X_, X_  /* 0x70 'p'-'z' */    \
  }
static const uint8_t b64_dec_table[2][128] __attribute__((aligned(64))) = {
    B64_DEC_TABLE(0x2B, 0x2F), B64_DEC_TABLE(0x2D, 0x5F)};
#undef B64_DEC_TABLE
#undef B64_ROW2
#undef V_
#undef X_

static const char b64_enc_alpha[2][64] __attribute__((aligned(64))) = {
    {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P',
     'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f',
     'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v',
     'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', '/'},
    {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P',
     'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f',
     'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v',
     'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '_'}};

/* The decoder's pack: bytes 2, 1, 0 of each dword to the bottom 48 bytes (the top 16
 * are don't-care). */
static const uint8_t b64_dec_pack[64] __attribute__((aligned(64))) = {
    2,  1,  0,  6,  5,  4,  10, 9,  8,  14, 13, 12, 18, 17, 16, 22, 21, 20, 26, 25, 24, 30,
    29, 28, 34, 33, 32, 38, 37, 36, 42, 41, 40, 46, 45, 44, 50, 49, 48, 54, 53, 52, 58, 57,
    56, 62, 61, 60};

/* Encoder spread: dword g = bytes [3g+1, 3g, 3g+2, 3g+1] of the 48 input bytes. */
static const uint8_t b64_enc_spread[64] __attribute__((aligned(64))) = {
    1,  0,  2,  1,  4,  3,  5,  4,  7,  6,  8,  7,  10, 9,  11, 10, 13, 12, 14, 13, 16, 15,
    17, 16, 19, 18, 20, 19, 22, 21, 23, 22, 25, 24, 26, 25, 28, 27, 29, 28, 31, 30, 32, 31,
    34, 33, 35, 34, 37, 36, 38, 37, 40, 39, 41, 40, 43, 42, 44, 43, 46, 45, 47, 46};

/* The lowest k lanes, k < 64. */
static inline __mmask64 b64_low_mask(size_t k) { return (__mmask64)((1ull << k) - 1); }

#define B64_AVX512_INLINE static inline __attribute__((always_inline))

/* The 6-bit values of 64 characters, joined: 16 dwords (a << 18 | b << 12 | c << 6 | d). */
B64_AVX512_INLINE __m512i b64_dec_join(__m512i v) {
  const __m512i w = _mm512_maddubs_epi16(v, _mm512_set1_epi32(0x01400140));
  return _mm512_madd_epi16(w, _mm512_set1_epi32(0x00011000));
}

/* 64 characters -> 16 joined dwords; bit 7 of a byte of *bad is set (and stays set)
 * where a character is outside the alphabet. */
B64_AVX512_INLINE __m512i b64_dec_values(__m512i in, __m512i lo, __m512i hi, __m512i *bad) {
  const __m512i v = _mm512_permutex2var_epi8(lo, in, hi);
  *bad = _mm512_ternarylogic_epi32(*bad, in, v, 0xFE); /* bad | in | v */
  return b64_dec_join(v);
}

/* One group, 4 blocks: in[k] -> 48 bytes at dst + 48 k (64-byte stores). The error bits
 * of the 8 vectors (4 of characters, 4 of values) and *bad are ORed by four vpternlogd,
 * one per block as before, arranged as a tree: the characters' two before the lookups
 * (which may then overwrite them), the values' two after; only two are on the chain
 * through *bad. */
B64_AVX512_INLINE void b64_dec_group(uint8_t *dst, const __m512i in[4], __m512i lo, __m512i hi,
                                     __m512i pack, __m512i *bad) {
  const __m512i a = _mm512_ternarylogic_epi32(in[0], in[1], in[2], 0xFE);
  const __m512i b = _mm512_ternarylogic_epi32(*bad, in[3], a, 0xFE);
  __m512i v[4];
  for (int k = 0; k < 4; k++) {
    v[k] = _mm512_permutex2var_epi8(lo, in[k], hi);
    _mm512_storeu_si512((void *)(dst + 48 * k), _mm512_permutexvar_epi8(pack, b64_dec_join(v[k])));
  }
  const __m512i c = _mm512_ternarylogic_epi32(v[0], v[1], v[2], 0xFE);
  *bad = _mm512_ternarylogic_epi32(b, v[3], c, 0xFE);
}

B64_AVX512_INLINE size_t dec_blocks(uint8_t *dst, const uint8_t *src, size_t n, int url,
                                    const int edge) {
  const __m512i lo = _mm512_load_si512((const void *)b64_dec_table[url != 0]);
  const __m512i hi = _mm512_load_si512((const void *)(b64_dec_table[url != 0] + 64));
  const __m512i pack = _mm512_load_si512((const void *)b64_dec_pack);
  const __mmask64 m48 = 0xFFFFFFFFFFFFull;
  size_t i = 0;
  if (n >= 256 + 24) {
    __m512i e = _mm512_setzero_si512();
    for (; i + 256 + 24 <= n; i += 256) {
      __m512i in[4];
      for (int k = 0; k < 4; k++) in[k] = _mm512_loadu_si512((const void *)(src + i + 64 * k));
      b64_dec_group(dst + i / 4 * 3, in, lo, hi, pack, &e);
    }
    if (_mm512_movepi8_mask(e)) i = 0;
  }
  for (; i + 64 <= n; i += 64) {
    __m512i e = _mm512_setzero_si512();
    const __m512i p = _mm512_permutexvar_epi8(
        pack, b64_dec_values(_mm512_loadu_si512((const void *)(src + i)), lo, hi, &e));
    if (_mm512_movepi8_mask(e)) return i;
    if (i + 64 + 24 <= n)
      _mm512_storeu_si512((void *)(dst + i / 4 * 3), p);
    else
      EMBD_AVX512_MASK_STOREU(edge, dst + i / 4 * 3, m48, p);
  }
  if (i < n) { /* 4..60 characters left (n is a multiple of 4) */
    const size_t r = n - i;
    const __mmask64 m = b64_low_mask(r);
    __m512i e = _mm512_setzero_si512();
    const __m512i p = b64_dec_values(EMBD_AVX512_MASKZ_LOADU(edge, m, src + i), lo, hi, &e);
    if (_mm512_movepi8_mask(e) & m) return i;
    EMBD_AVX512_MASK_STOREU(edge, dst + i / 4 * 3, b64_low_mask(r / 4 * 3),
                            _mm512_permutexvar_epi8(pack, p));
    i = n;
  }
  return i;
}

/* 48 input bytes (in the low 48 lanes) -> 64 characters, and the same from bytes already
 * spread into dwords [s1 s0 s2 s1]. (The helpers are always
 * inlined: the simde build, base64_avx512_simde.c, would otherwise pass zmm-sized vectors
 * between functions compiled without AVX-512.) */
B64_AVX512_INLINE __m512i b64_enc_spread_chars(__m512i s, __m512i alpha) {
  const __m512i f = _mm512_multishift_epi64_epi8(_mm512_set1_epi64(0x3036242A1016040All), s);
  return _mm512_permutexvar_epi8(f, alpha);
}
B64_AVX512_INLINE __m512i b64_enc_chars(__m512i in, __m512i spread, __m512i alpha) {
  return b64_enc_spread_chars(_mm512_permutexvar_epi8(spread, in), alpha);
}
/* One block from a 64-byte load at s: 64 characters at d. */
B64_AVX512_INLINE void b64_enc_block_at(char *d, const uint8_t *s, __m512i spread,
                                        __m512i alpha) {
  _mm512_storeu_si512((void *)d, b64_enc_chars(_mm512_loadu_si512((const void *)s), spread, alpha));
}

/* 3..63 bytes (a multiple of 3): one block of up to 48, masked, then the rest; `edge`
 * as in avx512_masked_mem.h. */
B64_AVX512_INLINE size_t enc_short(char *dst, const uint8_t *src, size_t n, int url,
                                   const int edge) {
  const __m512i alpha = _mm512_load_si512((const void *)b64_enc_alpha[url != 0]);
  const __m512i spread = _mm512_load_si512((const void *)b64_enc_spread);
  size_t i = 0;
  char *d = dst;
  if (n >= 48) {
    const __m512i in = EMBD_AVX512_MASKZ_LOADU(edge, 0xFFFFFFFFFFFFull, src);
    _mm512_storeu_si512((void *)d, b64_enc_chars(in, spread, alpha));
    i = 48, d += 64;
  }
  if (i < n) {
    const size_t r = n - i;
    const __m512i in = EMBD_AVX512_MASKZ_LOADU(edge, b64_low_mask(r), src + i);
    EMBD_AVX512_MASK_STOREU(edge, d, b64_low_mask(r / 3 * 4), b64_enc_chars(in, spread, alpha));
  }
  return n;
}

/* The last bytes after the steps (i of n encoded, their characters ending at d): single
 * blocks while a 64-byte load fits, then the rest from one load of the input's last 64
 * bytes. */
B64_AVX512_INLINE size_t enc_finish(char *dst, char *d, const uint8_t *src, size_t i, size_t n,
                                    __m512i spread, __m512i alpha) {
  for (; i + 64 <= n; i += 48, d += 64)
    b64_enc_block_at(d, src + i, spread, alpha);
  if (i < n) {
    /* r = n - i, 3..63 bytes, all inside the last 64 of the input: a block starting at i
     * (its bytes 64 - r.. of that load) when r > 48, and the block ending at n (bytes
     * 16..63), over characters already stored where the two overlap. */
    const size_t r = n - i;
    const __m512i last = _mm512_loadu_si512((const void *)(src + n - 64));
    if (r > 48)
      _mm512_storeu_si512(
          (void *)d,
          b64_enc_chars(last, _mm512_add_epi8(spread, _mm512_set1_epi8((char)(64 - r))), alpha));
    _mm512_storeu_si512((void *)(dst + (n - 48) / 3 * 4),
                        b64_enc_chars(last, _mm512_add_epi8(spread, _mm512_set1_epi8(16)), alpha));
  }
  return n;
}

/* Steps of four blocks (192 bytes) from 64-byte-aligned loads. The step's input starts
 * o = (src + i) mod 64 bytes into its first vector v[0], block k at o + 48 k: in v[j_k]
 * and, unless it fits in that one, v[j_k + 1], picked by vpermt2b, or by vpermb where it
 * fits. `shape` is a constant per copy: 0..3 is o / 16, and block `shape` is the one
 * that fits (j_k = k for k <= shape, k - 1 above); 4 is o = 0, where blocks 0 and 3 fit
 * (j_k = 0, 0, 1, 2) and a step reads three vectors instead of four. Every load is
 * inside src[i - o .. n): the caller has i >= o. */
enum { B64_STEP_AT0 = 4 };
/* The aligned steps' range: the realigned path from B64_ENC_REALIGN_MIN bytes, both up to
 * B64_ENC_ALIGNED_MAX (where input and output still fit the L1 together). */
enum { B64_ENC_REALIGN_MIN = 4096, B64_ENC_ALIGNED_MAX = 20480 };
typedef struct {
  size_t i; /* bytes encoded */
  char *d;  /* where their characters end */
} b64_enc_pos;
B64_AVX512_INLINE b64_enc_pos enc_steps(char *d, const uint8_t *src, size_t i, size_t n,
                                        __m512i spread, __m512i alpha, const int shape) {
  const size_t o = shape == B64_STEP_AT0 ? 0 : (uintptr_t)(src + i) & 63;
  const size_t vecs = shape == B64_STEP_AT0 ? 3 : 4;
  const int one = shape & 3; /* the block that fits in one vector (and block 3 for AT0) */
  const uint8_t *a = src + i - o;
  __m512i idx[4];
  for (int k = 0; k < 4; k++)
    idx[k] = _mm512_add_epi8(spread, _mm512_set1_epi8((char)((o + 48 * (size_t)k) & 63)));
  for (; i - o + 64 * vecs <= n; i += 4 * 48, a += 4 * 48, d += 4 * 64) {
    __m512i v[5]; /* v[vecs..4] are never read (the blocks there fit in one vector) */
    for (size_t j = 0; j < vecs; j++) v[j] = _mm512_load_si512((const void *)(a + 64 * j));
    for (int k = 0; k < 4; k++) {
      const int j = k > one ? k - 1 : k;
      const __m512i x = k == one || (shape == B64_STEP_AT0 && k == 3)
                            ? _mm512_permutexvar_epi8(idx[k], v[j])
                            : _mm512_permutex2var_epi8(v[j], idx[k], v[j + 1]);
      _mm512_storeu_si512((void *)(d + 64 * k), b64_enc_spread_chars(x, alpha));
    }
  }
  const b64_enc_pos at = {i, d};
  return at;
}

/* From 4 KiB to 20 KiB, where the output is 4-byte but not 64-byte aligned or the input
 * not 16-byte aligned: the output to a 64-byte boundary by one block, of which the
 * characters up to the boundary count (the steps rewrite the rest), then at most two
 * blocks so that the steps' first vector starts inside the input, then the steps for
 * where the input then sits: every store aligned, every load too but the first few.
 * A store that crosses a cache line is what a misaligned output cost (AMD Zen 5: 16 KiB
 * from an aligned input took 1.25x as long into an output 16 bytes past a 64-byte
 * boundary as into an aligned one). Against the paths before (the aligned-input steps
 * with those stores, or four unaligned loads a step), Zen 5, old time / new time, output
 * 16, 32 or 48 bytes past a 4 KiB multiple of the input, or the input 8 bytes past one:
 * 4.5-6 KiB 1.06-1.21, 8 KiB 1.04-1.10, 12 KiB 0.99-1.11, 16 KiB 1.05-1.16, 20 KiB
 * 1.09-1.28; at 3 KiB, where the call and the peeled blocks weigh more, 0.89-1.05, so it
 * starts at 4 KiB; above 20 KiB (input and output no longer fit the L1 together) level.
 * Encodes all n bytes. Out of line, and called before enc_blocks loads anything:
 * inlined (five copies of the steps), or called with the alphabet live across the call,
 * it made the short inputs 0.93-0.97x (99 B-1 KiB). */
static __attribute__((noinline)) size_t enc_realigned(char *dst, const uint8_t *src, size_t n,
                                                     int url) {
  const __m512i alpha = _mm512_load_si512((const void *)b64_enc_alpha[url != 0]);
  const __m512i spread = _mm512_load_si512((const void *)b64_enc_spread);
  size_t i = 0;
  char *d = dst;
  if ((uintptr_t)d & 63) {
    const size_t c = 64 - ((uintptr_t)d & 63);
    b64_enc_block_at(d, src, spread, alpha);
    i = c / 4 * 3, d += c;
  }
  for (; ((uintptr_t)(src + i) & 63) > i; i += 48, d += 64)
    b64_enc_block_at(d, src + i, spread, alpha);
  const size_t o = (uintptr_t)(src + i) & 63;
  b64_enc_pos at;
  switch (o ? (int)(o >> 4) : B64_STEP_AT0) {
  case 0: at = enc_steps(d, src, i, n, spread, alpha, 0); break;
  case 1: at = enc_steps(d, src, i, n, spread, alpha, 1); break;
  case 2: at = enc_steps(d, src, i, n, spread, alpha, 2); break;
  case 3: at = enc_steps(d, src, i, n, spread, alpha, 3); break;
  default: at = enc_steps(d, src, i, n, spread, alpha, B64_STEP_AT0); break;
  }
  return enc_finish(dst, at.d, src, at.i, n, spread, alpha);
}

/* Inlined into the driver, as the avx2 encoder is (base64_x86_template.h): the call and
 * the six registers saved around it cost 100 characters about 5% (simdutf's icelake
 * encoder, which does the same work, is still 1.35-1.45x faster there).
 *
 * From 64 bytes no masked access, so only shorter inputs check the page ends. Up to
 * 20 KiB from an input that is 16-byte aligned (as malloc's are): single blocks until it
 * is 64-byte aligned (at most three, 48 bytes a block), then 192 bytes a step from three
 * aligned loads, the four blocks' bytes picked by vpermb / vpermt2b / vpermt2b / vpermb
 * (as many shuffles as four unaligned loads, three of which cross a cache line). Then
 * single blocks while a 64-byte load fits, and the last 1..63 bytes from one load of the
 * input's last 64 bytes: the block ending at n (and, for more than 48, the one starting
 * where the blocks stopped), rewriting characters already stored where they overlap.
 * AMD Zen 5, against the loop before (four unaligned loads a step, masked tails), old
 * time / new time, output 0, 16, 64, 1024 and 3072 bytes past a 4 KiB multiple of the
 * input: 99 bytes 1.12-1.13, 1 KiB 1.15-1.41, 6 KiB 1.06-1.24, 8 KiB 1.06-1.21, 16 KiB
 * 1.00-1.10; the input at 16, 32 or 48 past a 64-byte boundary about the same. Above
 * 20 KiB the aligned step measured 0.89-0.96x the unaligned one (24-64 KiB, where the
 * input and output no longer fit the L1 together; from 16 to 20 KiB, where they still
 * do, it is 1.02-1.24x faster, a later session), and from an input that is not 16-byte
 * aligned (every step's three loads then cross lines) 0.98x: those keep it.
 * From 4 KiB to 20 KiB a misaligned output, or input, goes to enc_realigned instead.
 * Under 64 bytes: enc_short. This is the path for 64 bytes or more. */
B64_AVX512_INLINE size_t enc_blocks(char *dst, const uint8_t *src, size_t n, int url) {
  if (n - B64_ENC_REALIGN_MIN <= B64_ENC_ALIGNED_MAX - B64_ENC_REALIGN_MIN &&
      !((uintptr_t)dst & 3) && (((uintptr_t)dst & 63) || ((uintptr_t)src & 15)))
    return enc_realigned(dst, src, n, url);
  const __m512i alpha = _mm512_load_si512((const void *)b64_enc_alpha[url != 0]);
  const __m512i spread = _mm512_load_si512((const void *)b64_enc_spread);
  size_t i = 0;
  char *d = dst;
  if (n >= 4 * 48 + 3 * 48 && n <= B64_ENC_ALIGNED_MAX && ((uintptr_t)src & 15) == 0) {
    for (; ((uintptr_t)src + i) & 63; i += 48, d += 64) /* at most three blocks */
      b64_enc_block_at(d, src + i, spread, alpha);
    const b64_enc_pos at = enc_steps(d, src, i, n, spread, alpha, B64_STEP_AT0);
    i = at.i, d = at.d;
  } else if (n >= 4 * 48 + 64) {
    /* Larger, or an input not 16-byte aligned outside enc_realigned's range (or with an
     * output not 4-byte aligned): four unaligned loads a step, each block's issued a
     * block ahead, before the store of the block before it (Intel Xeon, family 6 model
     * 207, against one block a step: 8 KiB 1.0-1.2x faster, 1 KiB 1.0-1.15x). The last
     * step's load of the next block is unused when the loop ends. */
    __m512i x = _mm512_loadu_si512((const void *)src);
    for (; i + 4 * 48 + 64 <= n; i += 4 * 48, d += 4 * 64) {
      const uint8_t *s = src + i;
      __m512i y = _mm512_loadu_si512((const void *)(s + 48));
      _mm512_storeu_si512((void *)d, b64_enc_chars(x, spread, alpha));
      x = _mm512_loadu_si512((const void *)(s + 96));
      _mm512_storeu_si512((void *)(d + 64), b64_enc_chars(y, spread, alpha));
      y = _mm512_loadu_si512((const void *)(s + 144));
      _mm512_storeu_si512((void *)(d + 128), b64_enc_chars(x, spread, alpha));
      x = _mm512_loadu_si512((const void *)(s + 192));
      _mm512_storeu_si512((void *)(d + 192), b64_enc_chars(y, spread, alpha));
    }
  }
  return enc_finish(dst, d, src, i, n, spread, alpha);
}

/* The masked accesses sit at the ends of src and dst; where one of them ends near a page
 * boundary, the copies with page-keeping accesses run (avx512_masked_mem.h). */
static __attribute__((noinline)) size_t dec_block_edge(uint8_t *dst, const uint8_t *src,
                                                       size_t n, int url) {
  return dec_blocks(dst, src, n, url, 1);
}
static size_t dec_block(uint8_t *dst, const uint8_t *src, size_t n, int url) {
  if (embd_avx512_near_page_ends(src + n, dst + n / 4 * 3)) return dec_block_edge(dst, src, n, url);
  return dec_blocks(dst, src, n, url, 0);
}
static __attribute__((noinline)) size_t enc_block_edge(char *dst, const uint8_t *src, size_t n,
                                                       int url) {
  return enc_short(dst, src, n, url, 1);
}
B64_AVX512_INLINE size_t enc_block(char *dst, const uint8_t *src, size_t n, int url) {
  if (n < 64) {
    if (embd_avx512_near_page_ends(src + n, dst + n / 3 * 4)) return enc_block_edge(dst, src, n, url);
    return enc_short(dst, src, n, url, 0);
  }
  return enc_blocks(dst, src, n, url);
}

/* one expansion step more, so that B64_ISA is replaced before the names are pasted */
#define B64_DEFINE_IMPL_(isa) EMBD_B64_DEFINE_IMPL(isa, dec_block, enc_block)
B64_DEFINE_IMPL_(B64_ISA)
