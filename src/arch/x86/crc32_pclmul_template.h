/* One CRC-32 folding kernel body for 128-bit (PCLMULQDQ) and 256-bit (VPCLMULQDQ)
 * vectors (libdeflate's approach: one template, instantiated per ISA by a file compiled
 * with that ISA's flags). The AVX-512 kernel has its own body because it replaces the
 * unaligned head and the scalar-ish tail with masked loads.
 *
 * Parameters, #undef'd at the end:
 *   FUNC        name of the kernel
 *   VL          vector length in bytes: 16 or 32
 *   NACC        independent accumulators in the main loop; NACC * VL bytes per step
 *   VEC, LOADU(p), XOR3(a, b, c), CLMUL(a, k, imm), BCAST(k128)
 *   K_MAIN      the 128-bit multiplier pair for distance NACC * VL (EMBD_K128(n))
 *   KLANES, DIRECT, DIRECTK, LONGMSG  names for this instantiation's helpers
 *   TO128X(v, t)  XOR of t and the VL / 16 lanes of v (lanes already moved to the same
 *               place), t first: the lane extraction is the longer path
 *   LASTVEC_TO128(v)  one VL-byte register reduced to 16 bytes ending where it ends
 *
 * Why several accumulators: a fold is a carry-less multiply (latency 4-7 cycles) and an
 * XOR; with one accumulator the loop runs at the latency, with NACC of them the
 * multipliers' throughput becomes the limit.
 */

/* The longest message DIRECT folds in one step. 256-bit: 511 bytes, whose first chunk is
 * 495 bytes from the end (embd_crc32_fold_y has every distance below 512); from 257 to
 * 511 bytes this skips the long path's call, its realigned frame and the accumulators'
 * fold to one register before the rest (Intel Xeon, family 6 model 207, avx2 tier:
 * independent calls 1.09-1.26x, chained 1.10-1.67x faster). At 512 bytes the long path,
 * two whole steps and no tail, was 1.03-1.05x faster than this one.
 * 128-bit: the long path's first step, NACC * VL. */
#if VL == 32
#define DIRECT_MAX 511
#else
#define DIRECT_MAX (NACC * VL)
#endif

static inline VEC FOLDV(VEC a, VEC k, VEC data) {
  return XOR3(CLMUL(a, k, 0x00), CLMUL(a, k, 0x11), data);
}

/* The multipliers for the VL / 16 lanes of a vector whose first lane is `d` bytes from
 * its destination (the next lanes 16, 32, ... bytes less): the table keeps them
 * consecutive (see crc32_tables.h), so this is one load. */
static inline VEC KLANES(const uint64_t *k) {
  VEC v = LOADU(k);
  /* In a register: left to itself the compiler made the load a memory operand of both
   * multiplies, and 256 bytes took 33.2 rather than 30.3 TSC ticks (Zen 3). */
  __asm__("" : "+x"(v));
  return v;
}

/* Everything from `p` to `end` (n = end - p bytes, 1 <= n <= DIRECT_MAX) folded straight
 * to the end in one step, XORed with `init` (16 bytes that end at p) moved forward by n,
 * and reduced to the CRC: every multiply is independent, so the latency is one fold and
 * Barrett's two multiplies whatever n is (a fold tree would add a level per doubling, a
 * chain one per 16 bytes). Every chunk, the last one included, is folded into the Barrett
 * frame (embd_crc32_fold_y, see scripts/gen_crc32_tables.py), so Barrett's first step (the
 * last chunk's first 8 bytes times x^95) is one of the parallel multiplies instead of a
 * third dependent one. The grid of 16-byte chunks starts at p; the last chunk is the 16
 * bytes ending at end with the bytes the grid already covers masked off, so no distance
 * needs to be a multiple of 16 (embd_crc32_fold_y has them all). `init_is_crc`: init is
 * only the inverted CRC (the message is short), in its low 4 bytes. */
static inline __attribute__((always_inline)) uint32_t DIRECTK(__m128i init, int init_is_crc,
                                                              const uint8_t *p, size_t n,
                                                              const size_t k) {
  const uint8_t *end = p + n;
  size_t keep = n - 16 * k;          /* 1..16 */
  __m128i last = embd_crc32_x86_last(end, keep);
  VEC a0 = ZERO(), a1 = ZERO();
  __m128i t = _mm_setzero_si128(); /* 16-byte terms already in the Barrett frame */
  size_t i = 0;
  if (init_is_crc) {
    /* n == 16: the whole message is one chunk (no mask needed). */
    if (k == 0)
      return embd_crc32_x86_finish_barrett(
          _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), init));
  } else {
    __m128i ki = embd_crc32_x86_ky(n);
    t = _mm_xor_si128(_mm_clmulepi64_si128(init, ki, 0x00), _mm_clmulepi64_si128(init, ki, 0x11));
    if (k == 0) return embd_crc32_x86_finish_y(_mm_xor_si128(t, embd_crc32_x86_to_y(last)));
  }
  /* Chunk i is n - 16 - 16 i bytes from the end; its multipliers are kp[i]. */
  const uint64_t(*kp)[2] = (const uint64_t(*)[2])(const void *)embd_crc32_x86_kaddr_y(n - 16);
#if VL == 32
  if (k == 1) {
    /* 17..32 bytes: 128-bit multiplies only, so no lane insert or extract lies on the
     * path from the initial CRC. One multiply more than sharing a 256-bit pair with the
     * last chunk, but chained 32-byte CRCs went from 26 to 19 TSC ticks, throughput
     * unchanged (Zen 3). The CRC is XORed into the first chunk: as a term of its own
     * (below) it cost one multiply more, and chained CRCs of these lengths run at the
     * throughput limit, not the latency (Intel Xeon, family 6 model 207: 0.85-0.92x). */
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)p);
    if (init_is_crc) c = _mm_xor_si128(c, init);
    __m128i kc = _mm_loadu_si128((const __m128i *)(const void *)kp[0]);
    t = _mm_xor_si128(t, _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(c, kc, 0x00),
                                                     _mm_clmulepi64_si128(c, kc, 0x11)),
                                       embd_crc32_x86_to_y(last)));
    return embd_crc32_x86_finish_y(t);
  }
#endif
  /* The inverted CRC XORed into the first chunk (whole in the first vector), not a term
   * of its own (one 128-bit multiply more, off the fold chain). On AMD Zen 5, where a
   * 256-bit multiply issues as fast as a 128-bit one and short CRCs are bound by the
   * multiplies' throughput, the extra multiply made independent CRCs of 33..256 bytes
   * 1.03-1.24x slower (256-bit; 128-bit, 17..128 bytes: 1.03-1.15x) and put the 256-bit
   * kernel 0.94-0.97x behind libdeflate 1.25 at 64..160 bytes. The price is latency:
   * chained CRCs of 33..256 bytes take 1.16-1.46x as long as with the separate term
   * (128-bit, 17..128 bytes: 1.06-1.37x), the CRC now waiting for the fold and the lane
   * reduction, and stay 1.13-1.62x faster than libdeflate's chain. */
  const VEC crc0 = init_is_crc ? CAST_FROM128(init) : ZERO();
  /* Two accumulators split the XOR chain. */
  for (; i + 2 * (VL / 16) <= k; i += 2 * (VL / 16)) {
    VEC v0 = LOADU(p + 16 * i);
    if (i == 0) v0 = XOR3(v0, crc0, ZERO());
    VEC k0 = KLANES(kp[i]);
    VEC v1 = LOADU(p + 16 * i + VL);
    VEC k1 = KLANES(kp[i + VL / 16]);
    a0 = XOR3(a0, CLMUL(v0, k0, 0x00), CLMUL(v0, k0, 0x11));
    a1 = XOR3(a1, CLMUL(v1, k1, 0x00), CLMUL(v1, k1, 0x11));
    /* Keeps the unrolled steps in order: hoisting every load and multiply to the top ran
     * out of registers at the largest k, and the one spill gave the kernel a realigned
     * stack frame on every path. */
    __asm__("" : "+x"(a0), "+x"(a1));
  }
  if (i + VL / 16 <= k) {
    VEC v0 = LOADU(p + 16 * i);
    if (i == 0) v0 = XOR3(v0, crc0, ZERO());
    VEC k0 = KLANES(kp[i]);
    a0 = XOR3(a0, CLMUL(v0, k0, 0x00), CLMUL(v0, k0, 0x11));
    i += VL / 16;
  }
#if VL == 32
  if (i < k) {
    /* One 16-byte chunk left: it and the last chunk's new bytes are the message's last 32
     * bytes with the 16 - keep that the grid already covers masked off, so one 256-bit
     * load at distances 16 and 0 from the end, whatever n is (the second lane's
     * multipliers are { x^95, 1 }, Barrett's first step). Built from the 16-byte chunk and
     * `last` instead, the pair took two lane inserts and a length-dependent multiplier
     * load: independent CRCs of 96..160 bytes 1.04-1.06x slower (AMD Zen 5). */
    __m256i cv = _mm256_and_si256(LOADU(end - 32), LOADU(embd_crc32_x86_keep_mask + keep));
    __m256i kv = KLANES(EMBD_CRC32_FOLD_Y(16));
    a1 = XOR3(a1, CLMUL(cv, kv, 0x00), CLMUL(cv, kv, 0x11));
  } else {
    t = _mm_xor_si128(t, embd_crc32_x86_to_y(last));
  }
#else
  t = _mm_xor_si128(t, embd_crc32_x86_to_y(last));
#endif
  /* The 16-byte terms first: the wide accumulators' lane reduction is the longest path. */
  __m128i y = TO128X(XOR3(a0, a1, ZERO()), t);
  return embd_crc32_x86_finish_y(y);
}

/* k = (n - 1) / 16, the whole chunks before the last one's new bytes, is a constant in
 * each case: DIRECTK's loops become straight-line code with fixed offsets and no zero
 * accumulators to carry (with a variable k the branches, index arithmetic and register
 * moves were a third of the instructions at 32 bytes). */
static inline __attribute__((always_inline)) uint32_t DIRECT(__m128i init, int init_is_crc,
                                                             const uint8_t *p, size_t n) {
#define DK(c) \
  case c: return DIRECTK(init, init_is_crc, p, n, c)
  switch ((n - 1) / 16) {
    DK(0); DK(1); DK(2); DK(3); DK(4); DK(5); DK(6);
#if VL == 32
    DK(7); DK(8); DK(9); DK(10); DK(11); DK(12); DK(13); DK(14); DK(15); DK(16); DK(17);
    DK(18); DK(19); DK(20); DK(21); DK(22); DK(23); DK(24); DK(25); DK(26); DK(27); DK(28);
    DK(29); DK(30);
#endif
    default: return DIRECTK(init, init_is_crc, p, n, (DIRECT_MAX - 1) / 16);
  }
}
#undef DK

/* More than DIRECT_MAX bytes. Out of line so that its register pressure (spills, a
 * realigned stack frame) stays out of the short-message path's prologue. */
static __attribute__((noinline)) uint32_t LONGMSG(uint32_t x, const uint8_t *p, size_t len) {
  VEC acc[NACC];
#pragma GCC unroll 8
  for (int i = 0; i < NACC; i++) acc[i] = LOADU(p + i * VL);
  acc[0] = XOR3(acc[0], CAST_FROM128(_mm_cvtsi32_si128((int)x)), ZERO());
  p += NACC * VL;
  len -= NACC * VL;

  const VEC kmain = BCAST(K_MAIN);
  while (len >= NACC * VL) {
#pragma GCC unroll 8
    for (int i = 0; i < NACC; i++) acc[i] = FOLDV(acc[i], kmain, LOADU(p + i * VL));
    p += NACC * VL;
    len -= NACC * VL;
  }

  /* Every lane of every accumulator moved to end at p in one step (the lanes of acc[i]
   * sit (NACC - i) * VL - 16 ... bytes before p). With nothing after p, straight into the
   * Barrett frame, the last lane included (distance 0). */
  VEC s0 = ZERO(), s1 = ZERO();
  if (len == 0) {
#pragma GCC unroll 8
    for (int i = 0; i < NACC; i += 2) {
      VEC k0 = KLANES(EMBD_CRC32_FOLD_Y((size_t)(NACC - i) * VL - 16));
      VEC k1 = KLANES(EMBD_CRC32_FOLD_Y((size_t)(NACC - i - 1) * VL - 16));
      s0 = XOR3(s0, CLMUL(acc[i], k0, 0x00), CLMUL(acc[i], k0, 0x11));
      s1 = XOR3(s1, CLMUL(acc[i + 1], k1, 0x00), CLMUL(acc[i + 1], k1, 0x11));
    }
    return embd_crc32_x86_finish_y(TO128X(XOR3(s0, s1, ZERO()), _mm_setzero_si128()));
  }
  /* Otherwise to one register that ends at p (the last lane stays), which the short
   * path folds forward over the rest. */
#pragma GCC unroll 8
  for (int i = 0; i < NACC - 1; i += 2) {
    VEC k0 = KLANES(EMBD_CRC32_FOLD_BY((size_t)(NACC - i) * VL - 16));
    s0 = XOR3(s0, CLMUL(acc[i], k0, 0x00), CLMUL(acc[i], k0, 0x11));
    if (i + 1 < NACC - 1) {
      VEC k1 = KLANES(EMBD_CRC32_FOLD_BY((size_t)(NACC - i - 1) * VL - 16));
      s1 = XOR3(s1, CLMUL(acc[i + 1], k1, 0x00), CLMUL(acc[i + 1], k1, 0x11));
    }
  }
  __m128i r = TO128X(XOR3(s0, s1, ZERO()), LASTVEC_TO128(acc[NACC - 1]));
  return DIRECT(r, 0, p, len);
}

uint32_t FUNC(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t x = ~crc;
  /* The scalar reference out of line: its register needs would give this function a
   * frame that every short message pays for. */
  if (len < 16) return embd_crc32_scalar(crc, buf, len);
#if VL == 32 || defined(__AVX2__)
  /* 17..48 bytes by two compares instead of DIRECT's jump table: with the jump table's
   * indirect branch on the path, independent CRCs of 17..32 bytes took 1.27-1.42x and of
   * 33..48 bytes 1.08-1.15x this path's time; other lengths unchanged (Intel Xeon,
   * family 6 model 207, avx2 tier, three runs). The 128-bit kernel in the avx2 tier
   * (crc32_pclmul_avx2.c), AMD Zen 5: 17..32 bytes 1.11-1.20x faster, 48 B 1.03x, and
   * 128 B 0.94-0.95x (a path the change does not touch: the code moved); in the sse42
   * build the same change measured 0.92-0.93x at 17..32 bytes, so that one keeps the
   * jump table. */
  if (len - 17 < 32) {
    if (len <= 32) return ~DIRECTK(_mm_cvtsi32_si128((int)x), 1, p, len, 1);
    return ~DIRECTK(_mm_cvtsi32_si128((int)x), 1, p, len, 2);
  }
#endif
  /* Up to DIRECT_MAX bytes inclusive: at exactly that length (the default case of
   * DIRECT) the one-step fold avoids the call and the long path's frame. */
  if (len <= DIRECT_MAX) return ~DIRECT(_mm_cvtsi32_si128((int)x), 1, p, len);
  return ~LONGMSG(x, p, len);
}

#undef FUNC
#undef VL
#undef NACC
#undef VEC
#undef LOADU
#undef XOR3
#undef CLMUL
#undef BCAST
#undef K_MAIN
#undef CAST_FROM128
#undef ZERO
#undef FOLDV
#undef KLANES
#undef DIRECT
#undef DIRECTK
#undef LONGMSG
#undef DIRECT_MAX
#undef TO128X
#undef LASTVEC_TO128
