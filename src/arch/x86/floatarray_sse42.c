/* The float-array kernel, sse42 tier (floatarray_x86.h: four 16-byte classifications per
 * 64-byte window, four numbers converted as two pairs of doubles; SSSE3 pshufb, SSE4.1
 * pcmpeqq). */
#define FA_FN embd_floatarray_sse42
#include "floatarray_x86.h"
