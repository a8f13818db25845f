/* CRC-32 (zlib) for the sse42 tier: 128-bit PCLMULQDQ folding. Compiled with
 * -mssse3 -msse4.2 -mpclmul. (SSE4.2's own crc32 instruction is CRC-32C, a different
 * polynomial: it cannot be used here.) */
#define FUNC embd_crc32_pclmul
#include "crc32_pclmul_128.h"
