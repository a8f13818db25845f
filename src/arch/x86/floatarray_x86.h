/* The float-array kernels (src/core/floatarray_kernel.h) for x86: included by
 * floatarray_avx2.c (AVX2: 2 x 32-byte classification, 4-lane double conversion) and
 * floatarray_sse42.c (4 x 16 bytes, 2 x 2 lanes), with FA_FN naming the function.
 *
 * A window of 64 bytes, starting at a number, is classified at once into bit masks:
 * digits D, '-' M, '.' P, 'e'/'E' E, '+' PL, ',' C, whitespace W, '0' Z. Number
 * characters N = D|M|P|E|PL; a number is a maximal run of N (its starts S, the byte
 * after each T). One mask F collects every fault of the whole window at once:
 *   a run starting with neither '-' nor a digit, or '-' without a digit after it;
 *   '-' elsewhere than a start or right after 'e', '+' elsewhere than after 'e';
 *   '.' without a digit on both sides; 'e' without a digit before it, or without a
 *   digit or a sign and a digit after it;
 *   a leading zero (the integer part's first digit '0' with a digit after it);
 *   a run not followed by ',' (T & ~C), any other non-number byte not whitespace.
 * What the masks cannot say per window (two '.' or two 'e' in one number, '.' after 'e')
 * is three bit tests per number on its span. Together they are RFC 8259's number grammar
 * for the run (-? (0 | [1-9]D*) (. D+)? ([eE] [+-]? D+)?), and the separators ',' ws*.
 * The numbers before the first fault are taken; the one holding it (or followed by it) is
 * left to the caller's careful parser, which names the fault.
 *
 * Each number's significant digits (at most 16, or 15 with a point: 16 bytes) are
 * gathered into one 16-byte vector: the 16 bytes ending at the mantissa's end, the digits
 * before the point moved up one byte over it by a pshufb, the bytes before the first digit
 * masked to zero; pairwise multiply-adds (10,1), (100,1), (10000,1) give its two 8-digit
 * halves (decimal.h's embd_dec_fraction, without the point). Four numbers at a time are
 * then converted in double lanes: w = hi * 10^8 + lo (exact while w <= 2^53, checked),
 * times 10^e or divided by 10^-e for |e| <= 22 (both exact doubles: one correctly rounded
 * operation, Clinger), narrowed to float32 unless the double is a float32 midpoint (its
 * low 29 bits 1 << 28: decimal.h explains why narrowing is otherwise the one rounding of
 * the decimal), the sign ORed in. A lane outside that (w > 2^53, a midpoint) stops the
 * run at its number; a number with |e| > 22 or more digits stops it before conversion. */
#include <immintrin.h>
#include <string.h>

#include "floatarray_kernel.h"

#define FA_AI static inline __attribute__((always_inline))

typedef struct {
  uint64_t d, m, p, e, pl, c, w, z;
} fa_masks;

FA_AI uint64_t fa_bits16(__m128i x) { return (uint64_t)(unsigned)_mm_movemask_epi8(x); }

#if defined(__AVX2__)
FA_AI uint64_t fa_bits32(__m256i x) { return (uint64_t)(uint32_t)_mm256_movemask_epi8(x); }
FA_AI void fa_classify(const uint8_t *p, fa_masks *k) {
  const __m256i wtab = _mm256_setr_epi8(' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0,
                                        ' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0);
  memset(k, 0, sizeof *k);
  for (int h = 0; h < 2; h++) {
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * h));
    const __m256i t = _mm256_sub_epi8(x, _mm256_set1_epi8('0'));
    const __m256i dig = _mm256_cmpeq_epi8(_mm256_min_epu8(t, _mm256_set1_epi8(9)), t);
    const unsigned s = 32u * (unsigned)h;
    k->d |= fa_bits32(dig) << s;
    k->m |= fa_bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('-'))) << s;
    k->p |= fa_bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('.'))) << s;
    k->e |= fa_bits32(_mm256_cmpeq_epi8(_mm256_or_si256(x, _mm256_set1_epi8(0x20)), _mm256_set1_epi8('e'))) << s;
    k->pl |= fa_bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('+'))) << s;
    k->c |= fa_bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(','))) << s;
    /* whitespace: the table's byte at x's low nibble is x itself only for the four (a
     * byte >= 0x80 looks up 0; 0 is in the table only where the nibble is not 0) */
    k->w |= fa_bits32(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(wtab, x), x)) << s;
    k->z |= fa_bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('0'))) << s;
  }
}
#else
FA_AI void fa_classify(const uint8_t *p, fa_masks *k) {
  const __m128i wtab = _mm_setr_epi8(' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0);
  memset(k, 0, sizeof *k);
  for (int h = 0; h < 4; h++) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * h));
    const __m128i t = _mm_sub_epi8(x, _mm_set1_epi8('0'));
    const __m128i dig = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);
    const unsigned s = 16u * (unsigned)h;
    k->d |= fa_bits16(dig) << s;
    k->m |= fa_bits16(_mm_cmpeq_epi8(x, _mm_set1_epi8('-'))) << s;
    k->p |= fa_bits16(_mm_cmpeq_epi8(x, _mm_set1_epi8('.'))) << s;
    k->e |= fa_bits16(_mm_cmpeq_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('e'))) << s;
    k->pl |= fa_bits16(_mm_cmpeq_epi8(x, _mm_set1_epi8('+'))) << s;
    k->c |= fa_bits16(_mm_cmpeq_epi8(x, _mm_set1_epi8(','))) << s;
    k->w |= fa_bits16(_mm_cmpeq_epi8(_mm_shuffle_epi8(wtab, x), x)) << s;
    k->z |= fa_bits16(_mm_cmpeq_epi8(x, _mm_set1_epi8('0'))) << s;
  }
}
#endif

/* The low n (1..64) bits of x. */
FA_AI uint64_t fa_low(uint64_t x, unsigned n) {
#if defined(__BMI2__)
  return _bzhi_u64(x, n);
#else
  return x & (((UINT64_C(2) << (n - 1)) - 1));
#endif
}

/* Sliding window over it: the 16 bytes at fa_keep + n keep a vector's last n bytes. */
static const uint8_t fa_keep[32] = {0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                                    0,    0,    0,    0,    0,    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
/* 10^(e+22) for e >= 0, else 1 (the multiplier) and 10^-e for e < 0, else 1 (the
 * divisor), e in -22..22: every entry an exact double. */
static const double fa_mul[45] = {1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,
                                  1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1e0,  1e1,
                                  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                  1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const double fa_div[45] = {1e22, 1e21, 1e20, 1e19, 1e18, 1e17, 1e16, 1e15, 1e14, 1e13, 1e12, 1e11,
                                  1e10, 1e9,  1e8,  1e7,  1e6,  1e5,  1e4,  1e3,  1e2,  1e1,  1,    1,
                                  1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,
                                  1,    1,    1,    1,    1,    1,    1,    1,    1};

/* Numbers valued and waiting for their conversion, four at a time. */
typedef struct {
  uint64_t x[4];     /* the first 8 digits' value in the low half, the last 8's in the high */
  double mul[4], dv[4];
  uint32_t sign[4];  /* 0 or 0x80000000 */
  const uint8_t *next[4]; /* the next number's first byte */
  unsigned n;
} fa_pending;

/* The significant digits of [p + mend - nb, p + mend) (nb <= 16 bytes: nd digits and, at
 * relative position dr of the 16-byte window, a point; dr = -1: none) as two 8-digit
 * halves: low 32 bits the more significant. */
FA_AI uint64_t fa_digits(const uint8_t *q, int dr, unsigned nd) {
  const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q - 16));
  /* output byte t takes input t - 1 where t <= dr: the digits before the point move over it */
  v = _mm_shuffle_epi8(v, _mm_add_epi8(iota, _mm_cmpgt_epi8(_mm_set1_epi8((char)(dr + 1)), iota)));
  v = _mm_and_si128(_mm_sub_epi8(v, _mm_set1_epi8('0')),
                    _mm_loadu_si128((const __m128i *)(const void *)(fa_keep + nd)));
  const __m128i zero = _mm_setzero_si128();
  const __m128i m10 = _mm_set1_epi32((1 << 16) | 10), m100 = _mm_set1_epi32((1 << 16) | 100);
  const __m128i m10k = _mm_set1_epi32((1 << 16) | 10000);
  __m128i a = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(v, zero), m10),
                              _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), m10)); /* 8 x 0..99 */
  a = _mm_madd_epi16(a, m100);                                                  /* 4 x 0..9999 */
  a = _mm_madd_epi16(_mm_packs_epi32(a, a), m10k);                              /* 2 x 8 digits */
  return (uint64_t)_mm_cvtsi128_si64(a);
}

/* Converts the pending numbers (1..4) and stores them at out; returns how many were
 * exact (all, or up to the first lane that is not: the run stops there). */
FA_AI unsigned fa_convert(fa_pending *q, float *out) {
  for (unsigned i = q->n; i < 4; i++) q->x[i] = 0, q->mul[i] = 1, q->dv[i] = 1, q->sign[i] = 0;
  const __m128i sign = _mm_loadu_si128((const __m128i *)(const void *)q->sign);
  unsigned bad;
  __m128 f;
#if defined(__AVX2__)
  const __m256i x = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(const void *)q->x),
                                                _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
  const __m256d w = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x)), _mm256_set1_pd(1e8)),
                                  _mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1)));
  const __m256d r = _mm256_div_pd(_mm256_mul_pd(w, _mm256_loadu_pd(q->mul)), _mm256_loadu_pd(q->dv));
  const __m256i mid = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(r), _mm256_set1_epi64x(0x1FFFFFFF)),
                                         _mm256_set1_epi64x(0x10000000));
  bad = (unsigned)_mm256_movemask_pd(_mm256_or_pd(_mm256_castsi256_pd(mid),
                                                   _mm256_cmp_pd(w, _mm256_set1_pd(9007199254740992.0), _CMP_GT_OQ)));
  f = _mm256_cvtpd_ps(r);
#else
  __m128d r2[2];
  bad = 0;
  for (int h = 0; h < 2; h++) {
    const __m128i x = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q->x + 2 * h)),
                                        _MM_SHUFFLE(3, 1, 2, 0)); /* hi0 hi1 lo0 lo1 */
    const __m128d w = _mm_add_pd(_mm_mul_pd(_mm_cvtepi32_pd(x), _mm_set1_pd(1e8)),
                                 _mm_cvtepi32_pd(_mm_srli_si128(x, 8)));
    const __m128d r = _mm_div_pd(_mm_mul_pd(w, _mm_loadu_pd(q->mul + 2 * h)), _mm_loadu_pd(q->dv + 2 * h));
    const __m128i mid = _mm_cmpeq_epi64(_mm_and_si128(_mm_castpd_si128(r), _mm_set1_epi64x(0x1FFFFFFF)),
                                        _mm_set1_epi64x(0x10000000));
    bad |= (unsigned)_mm_movemask_pd(_mm_or_pd(_mm_castsi128_pd(mid), _mm_cmpgt_pd(w, _mm_set1_pd(9007199254740992.0))))
           << (2 * h);
    r2[h] = r;
  }
  f = _mm_movelh_ps(_mm_cvtpd_ps(r2[0]), _mm_cvtpd_ps(r2[1]));
#endif
  f = _mm_or_ps(f, _mm_castsi128_ps(sign));
  const unsigned ok = bad ? (unsigned)__builtin_ctz(bad) : 4;
  const unsigned m = ok < q->n ? ok : q->n;
  if (m == 4) {
    _mm_storeu_ps(out, f);
  } else {
    float t[4];
    _mm_storeu_ps(t, f);
    memcpy(out, t, 4 * m);
  }
  return m;
}

size_t FA_FN(const uint8_t *base, const uint8_t *p, const uint8_t *end, float *out, size_t n,
             const uint8_t **past) {
  size_t k = 0;            /* floats stored */
  const uint8_t *last = p; /* the next number after the last one taken */
  fa_pending q;
  q.n = 0;
  if (p - base < EMBD_FLOATARRAY_BEHIND || n == 0) goto done;
  while (end - p >= 64) {
    /* p: a number's first byte (or what the caller takes for one) */
    fa_masks c;
    fa_classify(p, &c);
    const uint64_t N = c.d | c.m | c.p | c.e | c.pl;
    if (!(N & 1)) goto done;
    const uint64_t S = N & ~(N << 1), T = ~N & (N << 1), sm = S & c.m;
    const uint64_t lead = (S & c.d) | (sm << 1), e1 = c.e << 1;
    const uint64_t F = (S & ~(c.d | c.m)) | ((sm << 1) & ~c.d) | (c.m & ~S & ~e1) | (c.pl & ~e1) |
                       (c.p & ~(c.d << 1)) | (c.p & ~(c.d >> 1)) | (c.e & ~(c.d << 1)) |
                       (e1 & ~(c.d | c.m | c.pl)) | (((e1 & (c.m | c.pl)) << 1) & ~c.d) |
                       (((lead & c.z) << 1) & c.d) | (T & ~c.c) | (~N & ~T & ~c.w);
    const unsigned f = F ? (unsigned)__builtin_ctzll(F) : 64;
    /* Bits that make a number other than the usual "0.ddd" / "-0.ddd" (an integer part
     * that is not one '0', a point elsewhere, an exponent): such numbers take the
     * general route below. */
    const uint64_t slow = (lead & ~c.z) | ((lead << 1) & ~c.p) | c.e | (c.p & ~(lead << 1));
    unsigned s = 0;
    for (;;) {
      /* the number at s, its gap before it clean */
      const uint64_t after = ~N & (~UINT64_C(0) << s);
      if (!after) {
        if (s == 0) goto done; /* 64 number bytes in a row: not ours */
        p += s;                /* its end is in the next window */
        break;
      }
      const unsigned t = (unsigned)__builtin_ctzll(after);
      if (t >= f) goto done; /* a fault in it or right after it */
      const unsigned i = q.n;
      const unsigned neg = (unsigned)(c.m >> s) & 1u, ds = s + neg;
      const unsigned nf = t - ds - 2; /* fraction digits if it is "0.ddd" or "-0.ddd" */
      if (fa_low(slow >> s, t - s + 1) == 0 && nf <= 16u) {
        /* The usual embedding number, |x| < 1 without an exponent: its value is the
         * fraction's digits over 10^nf, the "0." before them masked off like any byte
         * before the digits (the grammar masks already hold a digit after the point). */
        q.x[i] = fa_digits(p + t, -1, nf);
        q.mul[i] = 1;
        q.dv[i] = fa_div[22 - nf];
      } else {
      const uint64_t span = (UINT64_C(1) << t) - (UINT64_C(1) << s);
      const uint64_t pm = c.p & span, em = c.e & span;
      if ((pm & (pm - 1)) | (em & (em - 1)) || (em && pm > em)) goto done;
      const unsigned mend = em ? (unsigned)__builtin_ctzll(em) : t;
      if (mend - ds > 16) goto done; /* more digits than one vector */
      const unsigned dot = pm ? (unsigned)__builtin_ctzll(pm) : 0;
      int e10 = pm ? -(int)(mend - dot - 1) : 0;
      if (em) {
        const uint8_t *x = p + mend + 1;
        const int eneg = *x == '-';
        x += *x == '-' || *x == '+';
        const unsigned ne = (unsigned)(p + t - x);
        if (ne > 3) goto done;
        int v = 0;
        for (unsigned d = 0; d < ne; d++) v = v * 10 + (x[d] - '0');
        e10 += eneg ? -v : v;
      }
      if (e10 < -22 || e10 > 22) goto done;
      q.x[i] = fa_digits(p + mend, pm ? (int)dot - (int)mend + 16 : -1, mend - ds - (pm != 0));
      q.mul[i] = fa_mul[e10 + 22];
      q.dv[i] = fa_div[e10 + 22];
      }
      q.sign[i] = neg << 31;
      /* The next number: its start in this window, or past whitespace beyond it. A
       * number is taken only with the next one's start: the caller resumes there. */
      const uint64_t nx = S & (~UINT64_C(0) << t);
      const uint8_t *next;
      if (!nx) {
        if (f < 64) goto done; /* a fault in the gap */
        const uint8_t *g = p + 64; /* ',' at t, whitespace up to here */
        while (g < end && (*g == ' ' || *g == '\n' || *g == '\r' || *g == '\t')) g++;
        if (g >= end || (*g != '-' && (unsigned)(*g - '0') >= 10u)) goto done;
        next = g;
      } else {
        s = (unsigned)__builtin_ctzll(nx);
        if (s >= f) goto done;
        next = p + s;
      }
      q.next[i] = next;
      q.n = i + 1;
      if (q.n == 4) {
        const unsigned m = fa_convert(&q, out + k);
        k += m;
        if (m) last = q.next[m - 1];
        q.n = 0;
        if (m < 4) goto stored;
      }
      if (k + q.n >= n) goto done;
      if (!nx) {
        p = next;
        break;
      }
    }
  }
done:
  if (q.n) {
    const unsigned m = fa_convert(&q, out + k);
    k += m;
    if (m) last = q.next[m - 1];
  }
stored:
  *past = last;
  return k;
}
