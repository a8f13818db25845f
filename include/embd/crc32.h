/* embd: CRC-32 with zlib's polynomial and semantics.
 *
 *   uint32_t crc = embd_crc32(0, NULL, 0);         // 0
 *   crc = embd_crc32(crc, "1234", 4);
 *   crc = embd_crc32(crc, "56789", 5);              // 0xCBF43926, as zlib's crc32()
 *
 * Thread safety: reentrant; any thread, any time (the kernel dispatcher is atomic).
 */
#ifndef EMBD_CRC32_H
#define EMBD_CRC32_H

#include "common.h"
#include "cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Updates `crc` (0 to start) with `len` bytes at `buf`; exactly zlib's crc32(): the
 * reflected polynomial 0xEDB88320, pre- and post-inverted, and, as in zlib, a NULL `buf`
 * returns 0 (the initial value) whatever `crc` and `len` are. Any alignment. Inputs
 * shorter than 16 bytes take an inline table path that does not go through the dispatch
 * table. */
EMBD_API uint32_t embd_crc32(uint32_t crc, const void *buf, size_t len);

/* The CRC of A followed by B, given crc1 = CRC(A), crc2 = CRC(B) and len2 = length of
 * B, as zlib's crc32_combine(). len2 is 64-bit because the streams being combined need
 * not fit in memory. */
EMBD_API uint32_t embd_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* One CRC-32 implementation, callable directly (same semantics as embd_crc32, except
 * that `buf` must not be NULL unless `len` is 0, which returns `crc` unchanged). */
typedef uint32_t (*embd_crc32_fn)(uint32_t crc, const void *buf, size_t len);

/* Implementation `index` of EMBD_KERNEL_CRC32 (see embd_impl_get), or NULL when the
 * index is out of range or the enabled CPU features cannot run it. */
EMBD_API embd_crc32_fn embd_crc32_impl(size_t index);

#ifdef __cplusplus
}
#endif

#endif
