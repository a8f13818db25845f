/* The parts of the x86 bswap32 kernels that differ only in vector width: the main loop
 * (SWAP_LOOP, for both the ordinary and the streaming-store path) and the streaming-store
 * path itself (swap_stream). Included by bswap_ssse3.c, bswap_avx2.c and bswap_avx512.c,
 * each compiled with its own flags, after defining:
 *   BS_VEC           the vector type
 *   BS_W             its width in bytes (16, 32, 64)
 *   BS_LOAD(p)       an unaligned load from the byte pointer p
 *   BS_PTR(p)        the byte pointer p as the stores' pointer type
 *   BS_STOREU        the unaligned store, BS_STREAM the streaming (non-temporal) one
 *   BS_SHUF(v, m)    the byte shuffle
 * (they stay defined: SWAP_LOOP expands in the including file). */

/* The main loop, from byte i up to the last whole vector: 4 x BS_W bytes an iteration,
 * then BS_W at a time, each vector stored with STORE (BS_STOREU, or BS_STREAM once d + i
 * is BS_W-aligned). Leaves bytes - i < BS_W. */
#define SWAP_LOOP(STORE, d, s, i, bytes, m)                                        \
  do {                                                                             \
    for (; (i) + 4 * BS_W <= (bytes); (i) += 4 * BS_W) {                           \
      BS_VEC a_ = BS_LOAD((s) + (i));                                              \
      BS_VEC b_ = BS_LOAD((s) + (i) + BS_W);                                       \
      BS_VEC c_ = BS_LOAD((s) + (i) + 2 * BS_W);                                   \
      BS_VEC e_ = BS_LOAD((s) + (i) + 3 * BS_W);                                   \
      STORE(BS_PTR((d) + (i)), BS_SHUF(a_, (m)));                                  \
      STORE(BS_PTR((d) + (i) + BS_W), BS_SHUF(b_, (m)));                           \
      STORE(BS_PTR((d) + (i) + 2 * BS_W), BS_SHUF(c_, (m)));                       \
      STORE(BS_PTR((d) + (i) + 3 * BS_W), BS_SHUF(e_, (m)));                       \
    }                                                                              \
    for (; (i) + BS_W <= (bytes); (i) += BS_W)                                     \
      STORE(BS_PTR((d) + (i)), BS_SHUF(BS_LOAD((s) + (i)), (m)));                  \
  } while (0)

/* Out of place, above embd_bswap32_nt_min (bytes >= 2 BS_W, d word-aligned): the first
 * BS_W bytes stored as usual, then streaming stores from d's first BS_W-byte boundary (a
 * whole number of words on, d being word-aligned), the last BS_W bytes as usual again, and
 * an sfence so that the streaming stores are ordered before whatever the caller stores
 * next. Bytes written twice get the same value both times (src does not overlap dst). */
static void swap_stream(uint8_t *d, const uint8_t *s, size_t bytes, BS_VEC m) {
  BS_STOREU(BS_PTR(d), BS_SHUF(BS_LOAD(s), m));
  size_t i = (size_t)(-(uintptr_t)d & (BS_W - 1));
  SWAP_LOOP(BS_STREAM, d, s, i, bytes, m);
  if (i < bytes) BS_STOREU(BS_PTR(d + bytes - BS_W), BS_SHUF(BS_LOAD(s + bytes - BS_W), m));
  _mm_sfence();
}
