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
 *   TO128(v)    reduce one VL-byte register to 16 bytes ending where it ends
 *
 * Why several accumulators: a fold is a carry-less multiply (latency 4-7 cycles) and an
 * XOR; with one accumulator the loop runs at the latency, with NACC of them the
 * multipliers' throughput becomes the limit.
 */

static inline VEC FOLDV(VEC a, VEC k, VEC data) {
  return XOR3(CLMUL(a, k, 0x00), CLMUL(a, k, 0x11), data);
}

uint32_t FUNC(uint32_t crc, const void *buf, size_t len) {
  const uint8_t *p = (const uint8_t *)buf;
  uint32_t x = ~crc;
  if (len < 16) return ~embd_crc32_raw(x, p, len);
  if (len < NACC * VL) {
    __m128i r = embd_crc32_x86_first(p, x);
    return ~embd_crc32_x86_rest(r, p + 16, len - 16, 1);
  }

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

  /* Tree reduction: halves the accumulators each round, the distance doubling. */
  const VEC k1 = BCAST(K_1);
  VEC v;
#if NACC == 8
  const VEC k2 = BCAST(K_2);
  const VEC k4 = BCAST(K_4);
  acc[0] = FOLDV(acc[0], k1, acc[1]);
  acc[2] = FOLDV(acc[2], k1, acc[3]);
  acc[4] = FOLDV(acc[4], k1, acc[5]);
  acc[6] = FOLDV(acc[6], k1, acc[7]);
  acc[0] = FOLDV(acc[0], k2, acc[2]);
  acc[4] = FOLDV(acc[4], k2, acc[6]);
  v = FOLDV(acc[0], k4, acc[4]);
#elif NACC == 4
  const VEC k2 = BCAST(K_2);
  acc[0] = FOLDV(acc[0], k1, acc[1]);
  acc[2] = FOLDV(acc[2], k1, acc[3]);
  v = FOLDV(acc[0], k2, acc[2]);
#else
#error "NACC must be 4 or 8"
#endif
  const VEC k_vl = k1;
  while (len >= VL) {
    v = FOLDV(v, k_vl, LOADU(p));
    p += VL;
    len -= VL;
  }
  return ~embd_crc32_x86_rest(TO128(v), p, len, 0);
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
#undef K_1
#undef K_2
#undef K_4
#undef TO128
#undef CAST_FROM128
#undef ZERO
#undef FOLDV
