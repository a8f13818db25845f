/* embd: 32-bit byte-order swaps, and host-order conversions for the two wire orders.
 *
 *   float v[256];
 *   embd_f32_from_le(v, wire, 256);     // little-endian float32 on the wire -> host floats
 *   embd_u32_to_be(wire, ids, n);       // host uint32 -> big-endian on the wire
 *
 * Any alignment. `dst` and `src` must either be the same pointer (the swap is then done
 * in place) or not overlap at all: any other overlap is not allowed (the result is
 * undefined). A length of 0 does nothing (the pointers may then be NULL).
 *
 * Thread safety: reentrant; any thread, any time (the kernel dispatcher is atomic).
 */
#ifndef EMBD_BSWAP_H
#define EMBD_BSWAP_H

#include "common.h"
#include "cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reverses the byte order of each of the `n` 32-bit words at `src` into `dst`
 * (4 * n bytes each). In place when dst == src. Inputs shorter than 16 words take an
 * inline path that does not go through the dispatch table. */
EMBD_API void embd_bswap32(void *dst, const void *src, size_t n);

/* Host-order helpers: each calls the swap kernel only when the host's byte order differs
 * from the wire order; otherwise it copies (nothing at all when dst == src). The copy is
 * the library's own vector loop from 192 bytes on, not memcpy: glibc's memcpy on AMD
 * Zen 3 slows down about 20x when 0 < (dst - src) mod 4096 < 32 (rep movsb). */
/* `n` little-endian IEEE-754 binary32 values at `src` -> host floats. */
EMBD_API void embd_f32_from_le(float *dst, const void *src, size_t n);
/* `n` host floats -> little-endian binary32 at `dst`. */
EMBD_API void embd_f32_to_le(void *dst, const float *src, size_t n);
/* `n` big-endian 32-bit unsigned integers at `src` -> host uint32_t. */
EMBD_API void embd_u32_from_be(uint32_t *dst, const void *src, size_t n);
/* `n` host uint32_t -> big-endian at `dst`. */
EMBD_API void embd_u32_to_be(void *dst, const uint32_t *src, size_t n);

/* One bswap32 implementation, callable directly (same contract as embd_bswap32). */
typedef void (*embd_bswap32_fn)(void *dst, const void *src, size_t n);

/* Implementation `index` of EMBD_KERNEL_BSWAP32 (see embd_impl_get), or NULL when the
 * index is out of range or the enabled CPU features cannot run it. Some registered
 * implementations are never picked by the dispatcher (on x86, "neon-simde": the NEON
 * kernel compiled through simde, there for tests and benchmarks); they are still
 * returned here. */
EMBD_API embd_bswap32_fn embd_bswap32_impl(size_t index);

#ifdef __cplusplus
}
#endif

#endif
