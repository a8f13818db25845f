/* The SIMD conversion kernels' block driver, shared by the convert_*.c files of
 * src/arch. ISA-free (plain C macros), so every kernel file includes it under its own flags. */
#ifndef EMBD_CONVERT_KERNEL_H
#define EMBD_CONVERT_KERNEL_H

#include <stddef.h>

#define AI static inline __attribute__((always_inline))

/* The block driver: STEP(i) converts W elements starting at element i; n >= W. Four
 * blocks per iteration, then single blocks, then the last partial block as one more full
 * block ending at the last element: each output element depends on its own input only and
 * dst never overlaps src (embd/convert.h), so re-writing a few elements with the same
 * values is harmless and no scalar tail is needed. */
#define DRIVE(n, W, STEP)                        \
  do {                                           \
    size_t i_ = 0;                               \
    for (; i_ + 4 * (W) <= (n); i_ += 4 * (W)) { \
      STEP(i_);                                  \
      STEP(i_ + (W));                            \
      STEP(i_ + 2 * (W));                        \
      STEP(i_ + 3 * (W));                        \
    }                                            \
    for (; i_ + (W) <= (n); i_ += (W)) STEP(i_); \
    if (i_ < (n)) STEP((n) - (W));               \
  } while (0)

#endif
