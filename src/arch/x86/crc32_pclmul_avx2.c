/* CRC-32 (zlib) for the avx2 tier on CPUs without VPCLMULQDQ (Haswell to Skylake, Zen 1
 * and 2): the sse42 kernel's 128-bit folding compiled with the avx2 tier's flags, so every
 * instruction is VEX-encoded with three operands (no register copies before the
 * destructive SSE forms) and unaligned loads fold into the multiplies and XORs, as
 * libdeflate does with its AVX variant of the same fold. Against the sse42 build of the
 * same code, both from one library on an AMD Zen 5 (embd_crc32_impl, 15 interleaved
 * rounds, offsets 0 and 16): independent CRCs of 48..200 bytes 1.02-1.10x faster (17 B
 * 0.92-0.97, 256 B up level), chained ones of 17..200 bytes 1.04-1.13x. Only 128-bit
 * multiplies (PCLMULQDQ), whatever the file's flags allow: the registry row needs no
 * VPCLMULQDQ. */
#define FUNC embd_crc32_pclmul_avx2
#include "crc32_pclmul_128.h"
