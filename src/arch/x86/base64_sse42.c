/* base64 block kernels, sse42 tier (SSSE3/SSE4.1 instructions, 128-bit), after Muła and
 * Lemire, "Faster Base64 Encoding and Decoding Using AVX2 Instructions" (ACM TOWEB 2018).
 * Contract: src/core/base64_driver.h.
 *
 * Decode, 16 characters -> 12 bytes per block:
 *   validation and translation: two pshufb lookups, by low nibble (straight from the
 *     character: pshufb gives 0 for bytes >= 0x80) and by high nibble, added: the sum is
 *     in 0..15 exactly for the characters of the alphabet (a character is outside it
 *     iff sum & 0xf0 is non-zero: ptest against 0xf0) and is then the index of its
 *     offset in a third table, by pshufb (the tables: base64_x86_luts.h, found and
 *     checked on all 256 bytes by scripts/gen_base64_x86_luts.py);
 *   packing: pmaddubsw (a * 64 + b, c * 64 + d), pmaddwd (into 24 bits per dword),
 *     pshufb compaction of 4 x 3 bytes into the low 12.
 * Four blocks per iteration, each stored at once (16-byte stores, 12 useful), their sums
 * ORed and tested once per group; a group holding a bad character returns at its
 * start and the driver's scalar loop takes over there. The groups run only while the last
 * store ends inside dst[0 .. n / 4 * 3); the last blocks store exactly 8 + 4 bytes, the
 * very last being the one that ends at n (overlapping characters already decoded,
 * rewriting the same bytes).
 *
 * Encode, 12 bytes -> 16 characters per block: pshufb into (s1 s0 s2 s1) per dword,
 * pmulhuw / pmullw to move the four 6-bit fields into their bytes, then the offset
 * translation by pshufb (index: saturating v - 51, plus one for v >= 26). Loads are 16
 * bytes for 12 used: the first block loads from src, every later one from 4 bytes before
 * it (the used bytes at offset 4), so no load passes the block's end; the last block is
 * the one ending at n, rewriting characters already stored. n < 16 is the scalar loop's.
 *
 * The steps and loops are in base64_x86_template.h, shared with base64_avx2.c (which
 * runs them on 256 bits, and these 128-bit ones for its shortest inputs); this file
 * compiles them with the sse42 tier's flags. */
#define B64_W 128
#include "base64_x86_template.h"

B64_X86_IMPL(sse42, b64_dec_128, b64_enc_128)
