/* The body of the 256- and 512-bit ceilings (clmul_ceiling.h), included by
 * clmul_ceiling_ymm.c and clmul_ceiling_zmm.c, each compiled with its own -m flags. The
 * including file defines:
 *   CC_NAME        the function
 *   CC_VEC, CC_W   the vector type and its width in bytes (32 or 64)
 *   CC_CLMUL       the VPCLMULQDQ intrinsic at that width
 *   CC_SET1(x)     a vector of 64-bit lanes x
 *   CC_K           the constant multiplier (lanes: x^a mod G, x^b mod G, repeated)
 *   CC_XOR         the vector XOR
 *   CC_FOLD(s)     a 64-bit value of s, so the products cannot be discarded
 *   CC_REG(v)      the asm operand that keeps v in a register ("+x" ymm, "+v" zmm)
 * and they are #undef'd at the end. W bytes = W / 8 products = two instructions of
 * W / 16 lanes each; eight per round covers 4 W bytes. */

#define CHAINS(F, K)                                                                        \
  a0 = F(a0, K, 0x00), a1 = F(a1, K, 0x11), a2 = F(a2, K, 0x00), a3 = F(a3, K, 0x11),       \
  a4 = F(a4, K, 0x00), a5 = F(a5, K, 0x11), a6 = F(a6, K, 0x00), a7 = F(a7, K, 0x11)

uint64_t CC_NAME(size_t n) {
  const CC_VEC k = CC_K;
  CC_VEC a0 = CC_SET1(1), a1 = CC_SET1(2), a2 = CC_SET1(3), a3 = CC_SET1(4), a4 = CC_SET1(5),
         a5 = CC_SET1(6), a6 = CC_SET1(7), a7 = CC_SET1(8);
  size_t i = 0;
  for (; i + 4 * CC_W <= n; i += 4 * CC_W) {
    CHAINS(CC_CLMUL, k);
    __asm__ volatile("" : CC_REG(a0), CC_REG(a1), CC_REG(a2), CC_REG(a3), CC_REG(a4), CC_REG(a5),
                     CC_REG(a6), CC_REG(a7));
  }
  for (; i + CC_W <= n; i += CC_W) {
    a0 = CC_CLMUL(a0, k, 0x00), a1 = CC_CLMUL(a1, k, 0x11);
    __asm__ volatile("" : CC_REG(a0), CC_REG(a1));
  }
  const CC_VEC s = CC_XOR(CC_XOR(CC_XOR(a0, a1), CC_XOR(a2, a3)), CC_XOR(CC_XOR(a4, a5), CC_XOR(a6, a7)));
  return CC_FOLD(s);
}

#undef CHAINS
#undef CC_NAME
#undef CC_VEC
#undef CC_W
#undef CC_CLMUL
#undef CC_SET1
#undef CC_K
#undef CC_XOR
#undef CC_FOLD
#undef CC_REG
