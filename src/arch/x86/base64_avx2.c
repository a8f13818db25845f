/* base64 block kernels, avx2 tier, after Muła and Lemire, "Faster Base64 Encoding and
 * Decoding Using AVX2 Instructions" (ACM TOWEB 2018). Contract: src/core/base64_driver.h.
 * The same steps as base64_sse42.c on 256-bit vectors (pshufb works per 128-bit lane):
 *
 * Decode, 32 characters -> 24 bytes per block: two nibble lookups, added, validate (the
 * sum is in 0..15 exactly for the alphabet) and index an offset table that translates
 * (the tables: base64_x86_luts.h, from scripts/gen_base64_x86_luts.py), vpmaddubsw +
 * vpmaddwd pack, vpshufb to 12 bytes per lane. Four blocks per iteration (with two groups
 * or more, each block's load issued before the block ahead of it is decoded), each stored as
 * soon as decoded (16 bytes per lane, 12 useful: two 16-byte stores measured faster here
 * than vpermd and one 32-byte store), their sums ORed and tested once (a group holding a
 * bad character returns at its start: the scalar loop finds it); the loop runs only while
 * the last store ends inside dst[0 .. n / 4 * 3). Single blocks then put the lanes together with
 * vpermd and store exactly 16 + 8 bytes; the last block is the one ending at n
 * (overlapping characters already decoded, rewriting the same bytes), or for n under 32
 * a 128-bit block with 8 + 4.
 *
 * Encode, 24 bytes -> 32 characters per block: one 32-byte load from 4 bytes before the
 * block puts its first 12 bytes in lane 0 at offset 4 and the next 12 in lane 1 at offset
 * 0 (the first block, with nothing before it, is two 16-byte loads); vpshufb, vpmulhuw /
 * vpmullw field extraction and the vpshufb offset translation. Blocks run, in software-
 * pipelined groups of four and then pairs, while the loads stay inside src[0 .. n); the
 * last block (or 128-bit block, for n under 28) is the one ending at n, loaded from 4
 * bytes early, rewriting characters already stored: the scalar loop gets nothing unless
 * n < 16. Inputs under one block (32 characters, 28
 * bytes) take base64_sse42.c's 128-bit loops.
 *
 * The steps and loops, for both widths, are in base64_x86_template.h, shared with
 * base64_sse42.c; this file compiles them with the avx2 tier's flags. */
#define B64_W 128
#include "base64_x86_template.h"
#define B64_W 256
#include "base64_x86_template.h"

B64_X86_IMPL(avx2, b64_dec_256, b64_enc_256)
