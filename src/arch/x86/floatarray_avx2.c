/* The float-array kernel, avx2 tier (floatarray_x86.h: two 32-byte classifications per
 * 64-byte window, four numbers converted per ymm of doubles). */
#define FA_FN embd_floatarray_avx2
#include "floatarray_x86.h"
