/* The SIMD conversion kernels' block driver and entry points, shared by the convert_*.c
 * files of src/arch. ISA-free (plain C macros), so every kernel file includes it under its
 * own flags; the file keeps only its vector code (the block functions) and says which
 * entry points it has:
 *
 *   #define CVT_ISA sse42            the suffix of its functions' names (embd_cvt_f16_sse42)
 *   #define CVT_END() ...            what ends a kernel (_mm256_zeroupper(), or nothing)
 *   CVT_DECODE(f16, 8, 2, CVT_ONE, f16_block, (const __m128i m0 = ...;), (, m0, m1))
 *
 * defines embd_cvt_f16_sse42(dst, src, n, be): below 8 elements the scalar reference,
 * otherwise the declarations of the sixth argument, then f16_block(dst + i, src + 2 * i,
 * m0, m1) over the blocks of 8 elements (DRIVE; 2: wire bytes an element, 1 or 2), then
 * CVT_END(). The last argument is the
 * block function's further arguments, each after a comma: (, m0, m1), or () for none.
 * CVT_BY_ORDER instead of CVT_ONE runs two loops, with the byte order a constant first
 * argument after the pointers in each (block(d, s, 1, ...) when be, else block(d, s, 0,
 * ...)), so that it is not tested per block. CVT_ENCODE is the same for float32 -> a
 * 16-bit dtype (block(dst + 2 * i, src + i ...)), CVT_BITS for the packed-bits loops. */
#ifndef EMBD_CONVERT_KERNEL_H
#define EMBD_CONVERT_KERNEL_H

#include <stddef.h>

#define AI static inline __attribute__((always_inline))

/* The block driver: STEP(i, ...) converts W elements starting at element i; n >= W. Four
 * blocks per iteration, then single blocks, then the last partial block as one more full
 * block ending at the last element: each output element depends on its own input only and
 * dst never overlaps src (embd/convert.h), so re-writing a few elements with the same
 * values is harmless and no scalar tail is needed. DRIVE(n, W, STEP) for a STEP(i). */
#define DRIVE_ARGS(n, W, STEP, ...)                           \
  do {                                                        \
    size_t i_ = 0;                                            \
    for (; i_ + 4 * (W) <= (n); i_ += 4 * (W)) {              \
      STEP(i_, __VA_ARGS__);                                  \
      STEP(i_ + (W), __VA_ARGS__);                            \
      STEP(i_ + 2 * (W), __VA_ARGS__);                        \
      STEP(i_ + 3 * (W), __VA_ARGS__);                        \
    }                                                         \
    for (; i_ + (W) <= (n); i_ += (W)) STEP(i_, __VA_ARGS__); \
    if (i_ < (n)) STEP((n) - (W), __VA_ARGS__);               \
  } while (0)
#define CVT_STEP1_(i, STEP) STEP(i)
#define DRIVE(n, W, STEP) DRIVE_ARGS(n, W, CVT_STEP1_, STEP)

#define CVT_UNPAREN_(...) __VA_ARGS__
#define CVT_CAT2_(a, b) a##b
#define CVT_CAT_(a, b) CVT_CAT2_(a, b)
/* embd_<kind>_<CVT_ISA>: CVT_NAME(cvt_f16) */
#define CVT_NAME(kind) CVT_CAT_(embd_##kind##_, CVT_ISA)

/* n < min as a function: a macro's `n < 0` would be a -Wtype-limits warning. */
AI int cvt_below_(size_t n, size_t min) { return n < min; }

/* One block: BLOCK(out_ + OS i, in_ + IS i ARGS), out_ and in_ the entry's pointers and
 * OS, IS each empty (one element a step) or `2 *`: written so, not as 1 * i, because
 * GCC 12 then folds the tail block's address differently (one more instruction). */
#define CVT_STEP_(i, BLOCK, OS, IS, ARGS) BLOCK(out_ + OS(i), in_ + IS(i) CVT_UNPAREN_ ARGS)
/* The loops of an entry: one, or one per byte order. */
#define CVT_ONE(n, W, BLOCK, OS, IS, ARGS) DRIVE_ARGS(n, W, CVT_STEP_, BLOCK, OS, IS, ARGS)
#define CVT_BY_ORDER(n, W, BLOCK, OS, IS, ARGS)              \
  do {                                                       \
    if (be)                                                  \
      CVT_ONE(n, W, BLOCK, OS, IS, (, 1 CVT_UNPAREN_ ARGS)); \
    else                                                     \
      CVT_ONE(n, W, BLOCK, OS, IS, (, 0 CVT_UNPAREN_ ARGS)); \
  } while (0)
#define CVT_X1_
#define CVT_X2_ 2 *

/* embd_cvt_<dt>_<CVT_ISA>: W elements a block, ES wire bytes an element (see the top). */
#define CVT_DECODE(dt, W, ES, LOOPS, BLOCK, SETUP, ARGS)                   \
  void CVT_NAME(cvt_##dt)(float *dst, const void *src, size_t n, int be) { \
    if (cvt_below_(n, W)) {                                                \
      embd_cvt_##dt##_scalar(dst, src, n, be);                             \
      return;                                                              \
    }                                                                      \
    float *const out_ = dst;                                               \
    const uint8_t *const in_ = (const uint8_t *)src;                       \
    CVT_UNPAREN_ SETUP                                                     \
    LOOPS(n, W, BLOCK, , CVT_X##ES##_, ARGS);                              \
    CVT_END();                                                             \
  }

/* embd_enc_<dt>_<CVT_ISA>: float32 -> a 16-bit dtype, W elements a block. */
#define CVT_ENCODE(dt, W, LOOPS, BLOCK, SETUP, ARGS)                       \
  void CVT_NAME(enc_##dt)(void *dst, const float *src, size_t n, int be) { \
    if (cvt_below_(n, W)) {                                                \
      embd_enc_##dt##_scalar(dst, src, n, be);                             \
      return;                                                              \
    }                                                                      \
    uint8_t *const out_ = (uint8_t *)dst;                                  \
    const float *const in_ = src;                                          \
    CVT_UNPAREN_ SETUP                                                     \
    LOOPS(n, W, BLOCK, 2 *, , ARGS);                                       \
    CVT_END();                                                             \
  }

/* embd_cvt_<dt>_<CVT_ISA> for packed bits (binary, ubinary): below MIN elements the
 * scalar reference, otherwise BITS(dst, src, n ARGS), the ISA's loop (which ends itself:
 * CVT_END is not added). */
#define CVT_BITS(dt, MIN, BITS, ARGS)                                      \
  void CVT_NAME(cvt_##dt)(float *dst, const void *src, size_t n, int be) { \
    if (cvt_below_(n, MIN)) {                                              \
      embd_cvt_##dt##_scalar(dst, src, n, be);                             \
      return;                                                              \
    }                                                                      \
    BITS(dst, (const uint8_t *)src, n CVT_UNPAREN_ ARGS);                  \
  }

#endif
