/* Internal declarations shared by the portable core and the kernels (the kernel layer:
 * src/core, src/arch). Compiled at the baseline ISA: nothing here may need a -m flag.
 * Nothing here knows a wire format: those internals are in src/wire/wire.h, and the
 * build refuses a kernel-layer file that includes one (cmake/EmbdLayerCheck.cmake). */
#ifndef EMBD_INTERNAL_H
#define EMBD_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "embd/bswap.h"
#include "embd/cpu.h"
#include "embd/crc32.h"

#if defined(__AVX__) || defined(__AVX2__) || defined(__AVX512F__) || defined(__SSSE3__)
#ifndef EMBD_KERNEL_FILE
/* xxHash's guard: if the baseline code were compiled with -mavx the dispatcher itself
 * could execute AVX instructions on a CPU without them. Only src/arch files, which
 * define EMBD_KERNEL_FILE, may be built with ISA flags. */
#error "embd's portable core must be compiled for the baseline ISA (no -mavx/-mssse3)"
#endif
#endif

#include "fail.h" /* embd_fail, embd_vfail_frame, EMBD_INTERNAL */

/* v > UINT32_MAX for a size_t (or any narrower) value. A function, not an inline
 * comparison: with a 32-bit size_t `(uint64_t)n > UINT32_MAX` is always false and the
 * compiler warns (-Wtype-limits). */
static inline int embd_above_u32(uint64_t v) { return v > UINT32_MAX; }

/* ---- CPU features (cpu.c) ---- */
EMBD_INTERNAL uint64_t embd_cpu_detect(void);
/* Number of tiers (embd_tier values 0 .. EMBD_TIER_COUNT - 1). */
#define EMBD_TIER_COUNT 6
/* Features a tier needs (the one table, in cpu.c); 0 for scalar and unknown tiers. */
EMBD_INTERNAL uint64_t embd_tier_required(embd_tier tier);
/* The tier named `name` (length len), or -1. */
EMBD_INTERNAL int embd_tier_by_name(const char *name, size_t len);
/* Feature bit for a name ("avx2"), 0 if unknown. */
EMBD_INTERNAL uint64_t embd_cpu_feature_by_name(const char *name, size_t len);

/* ---- implementation registry and the one call mechanism (dispatch.c) ---- */
typedef void (*embd_any_fn)(void);
/* Families resolved like the others (EMBD_ISA, embd_isa_set) but not listed through the
 * public API yet, numbered after the public ones: an embd_kernel value for them changes
 * the public enum, which abidiff calls incompatible, so it waits for a minor version.
 * The float-array family (floatarray_kernel.h). */
#define EMBD_KERNEL_FLOAT_ARRAY_ ((embd_kernel)EMBD_KERNEL_COUNT_)
#define EMBD_FAMILY_COUNT_ (EMBD_KERNEL_COUNT_ + 1)
/* The active implementation's name of any family, internal ones included. */
EMBD_INTERNAL const char *embd_family_active_(embd_kernel kernel);

/* Most implementations are one function; bswap32's are two (the swap, and the copy
 * kernel beside it: EMBD_BSWAP32_FN_COPY); the convert families' one per dtype (slot
 * dtype - 1, EMBD_CONVERT_SLOTS). */
#define EMBD_IMPL_FNS 8
#define EMBD_BSWAP32_FN_COPY 1
struct embd_impl_desc {
  const char *name;
  embd_tier tier;
  /* Features needed beyond the tier's own (embd_tier_required), e.g. VPCLMULQDQ. */
  uint64_t extra;
  /* The implementation's functions, one per slot of its family (NULL: slot unused). */
  embd_any_fn fn[EMBD_IMPL_FNS];
  /* 0: listed (embd_impl_get, embd_<kernel>_impl) but never picked by the dispatcher:
   * only for emulations, another ISA's source built through simde (the NEON kernel on
   * x86), which is what embd_impl_emulated reports of it. */
  int selectable;
};

/* Returns the descriptor of implementation `index` of `kernel` (any family, internal ones
 * included), or NULL. */
EMBD_INTERNAL const struct embd_impl_desc *embd_impl_desc(embd_kernel kernel, size_t index);
/* Function `fn` of implementation `index` of `kernel` when it is runnable now, else NULL:
 * what the public embd_<kernel>_impl(index) return. */
EMBD_INTERNAL embd_any_fn embd_impl_fn_(embd_kernel kernel, size_t index, int fn);
/* Detects the CPU, reads EMBD_ISA and fills every family's slots, once (the stubs). */
EMBD_INTERNAL void embd_dispatch_init_(void);

#ifndef __cplusplus
#include <stdatomic.h>
/* One row per kernel family (dispatch.c), indexed by embd_kernel. The slots are what the
 * public entry points call (EMBD_CALL): until the first call, the family's resolving
 * stubs (each calls embd_dispatch_init_ and forwards; zlib-ng's scheme without GNU
 * ifunc), then the chosen implementation's functions (embd_isa_set re-stores them).
 * Stores are release and loads acquire, so a caller sees a stub or a complete choice. */
struct embd_family {
  _Atomic(embd_any_fn) slot[EMBD_IMPL_FNS];
  _Atomic(size_t) active; /* index into impls */
  const char *name;
  const struct embd_impl_desc *impls;
  size_t count;
};
EMBD_INTERNAL extern struct embd_family embd_families_[EMBD_FAMILY_COUNT_];
/* Slot `fn` of family `kernel` as the family's function type: one acquire load (a plain
 * load on x86), so that a public entry point is a load and an indirect tail jump, e.g.
 * EMBD_CALL(EMBD_KERNEL_CRC32, 0, embd_crc32_fn)(crc, buf, len). */
#define EMBD_CALL(kernel, fn, type) \
  ((type)atomic_load_explicit(&embd_families_[kernel].slot[fn], memory_order_acquire))
#endif

/* ---- CRC-32 kernels: all take and return zlib-style (finalised) CRC values ---- */
EMBD_INTERNAL uint32_t embd_crc32_scalar(uint32_t crc, const void *buf, size_t len);
EMBD_INTERNAL uint32_t embd_crc32_stub_(uint32_t crc, const void *buf, size_t len);
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_INTERNAL uint32_t embd_crc32_pclmul(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(EMBD_HAVE_X86_AVX2)
EMBD_INTERNAL uint32_t embd_crc32_pclmul_avx2(uint32_t crc, const void *buf, size_t len);
EMBD_INTERNAL uint32_t embd_crc32_vpclmul_avx2(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(EMBD_HAVE_X86_AVX512)
EMBD_INTERNAL uint32_t embd_crc32_vpclmul_avx512(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(EMBD_HAVE_CRC32_AVX512_SIMDE)
/* crc32_vpclmul_avx512.c through simde: AVX2 + VPCLMULQDQ code, never dispatched to. */
EMBD_INTERNAL uint32_t embd_crc32_vpclmul_avx512_simde(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(EMBD_HAVE_ARM_CRC32)
EMBD_INTERNAL uint32_t embd_crc32_armv8(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(EMBD_HAVE_ARM_PMULL)
EMBD_INTERNAL uint32_t embd_crc32_armv8_pmull(uint32_t crc, const void *buf, size_t len);
#endif

/* ---- bswap32 kernels ---- */
/* The portable word loop, shared by the scalar kernel and the SIMD kernels' short tails.
 * memcpy keeps it alignment- and aliasing-safe, and works in place. */
static inline void embd_bswap32_words(uint8_t *d, const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t w;
    memcpy(&w, s + 4 * i, 4);
    w = __builtin_bswap32(w);
    memcpy(d + 4 * i, &w, 4);
  }
}
EMBD_INTERNAL void embd_bswap32_scalar(void *dst, const void *src, size_t n);
EMBD_INTERNAL void embd_bswap32_stub_(void *dst, const void *src, size_t n);
/* Out-of-place swaps of at least this many bytes store around the caches (streaming
 * stores, then sfence: the x86 kernels): the destination is larger than the last-level
 * cache, so ordinary stores would only evict the source to make room for lines written
 * once (bench_bswap, 64 MiB). The last-level cache's size (embd_cpu_llc_bytes), measured
 * on first use; 64 MiB when the CPU does not say. 0 until then; tests set it lower to
 * reach that path with small buffers. */
EMBD_INTERNAL extern size_t embd_bswap32_nt_bytes_; /* __atomic_* only */
EMBD_INTERNAL size_t embd_bswap32_nt_measure_(void);
static inline size_t embd_bswap32_nt_min(void) {
  const size_t t = __atomic_load_n(&embd_bswap32_nt_bytes_, __ATOMIC_RELAXED);
  return t ? t : embd_bswap32_nt_measure_();
}
/* Bytes of the largest cache the CPU reports (x86: cpuid leaf 4, AMD 0x8000001D), or 0. */
EMBD_INTERNAL size_t embd_cpu_llc_bytes(void);
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_INTERNAL void embd_bswap32_ssse3(void *dst, const void *src, size_t n);
#endif
#if defined(EMBD_HAVE_X86_AVX2)
EMBD_INTERNAL void embd_bswap32_avx2(void *dst, const void *src, size_t n);
#endif
#if defined(EMBD_HAVE_X86_AVX512)
EMBD_INTERNAL void embd_bswap32_avx512(void *dst, const void *src, size_t n);
#endif
#if defined(EMBD_HAVE_ARM_NEON) || defined(EMBD_HAVE_NEON_SIMDE)
EMBD_INTERNAL void embd_bswap32_neon(void *dst, const void *src, size_t n);
#endif

/* ---- copy kernels (copy_kernel.h): the identity beside each bswap32 kernel ---- */
/* n bytes, any alignment; dst == src or no overlap at all. Payload-sized copies go
 * through embd_copy instead of memcpy: see copy_kernel.h for glibc's rep-movsb cliff. */
typedef void (*embd_copy_fn)(void *dst, const void *src, size_t n);
/* Below this many bytes memcpy is faster (its inline call, no dispatch load; on Zen 3
 * with glibc 2.36, mean over alignments and distances: 128 B 5.9 ns vs the AVX2 kernel's
 * 6.7, 200 B 8.9 vs 6.7, 256 B 8.5 vs 7.3, 2 KiB 28 vs 26) and glibc takes no slow path
 * (vector moves below 2,112 bytes there). */
#define EMBD_COPY_DISPATCH_MIN 192
/* The dispatched copy as a function (bswap.c), for the tests. */
EMBD_INTERNAL void embd_copy_dispatch_(void *dst, const void *src, size_t n);
EMBD_INTERNAL void embd_copy_stub_(void *dst, const void *src, size_t n);
#ifndef __cplusplus
static inline void embd_copy(void *dst, const void *src, size_t n) {
  if (n < EMBD_COPY_DISPATCH_MIN) {
    if (n && dst != src) memcpy(dst, src, n);
    return;
  }
  if (dst != src) EMBD_CALL(EMBD_KERNEL_BSWAP32, EMBD_BSWAP32_FN_COPY, embd_copy_fn)(dst, src, n);
}
#endif
/* The copy kernel paired with bswap32 implementation `index` (same tier and CPU
 * requirements, selected with it), or NULL when embd_bswap32_impl(index) is NULL. */
EMBD_INTERNAL embd_copy_fn embd_copy_impl_(size_t index);
EMBD_INTERNAL void embd_copy_scalar(void *dst, const void *src, size_t n);
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_INTERNAL void embd_copy_sse2(void *dst, const void *src, size_t n);
#endif
#if defined(EMBD_HAVE_X86_AVX2)
EMBD_INTERNAL void embd_copy_avx2(void *dst, const void *src, size_t n);
#endif
#if defined(EMBD_HAVE_ARM_NEON) || defined(EMBD_HAVE_NEON_SIMDE)
EMBD_INTERNAL void embd_copy_neon(void *dst, const void *src, size_t n);
#endif

/* ---- base64: full-contract implementations (base64_driver.h) ---- */
#include "embd/base64.h"
#define EMBD_B64_DECLARE(name)                                                                \
  EMBD_INTERNAL embd_result embd_base64_decode_##name(const char *src, size_t len,            \
                                                      unsigned flags, void *dst, size_t cap,  \
                                                      size_t *written, embd_error *err);      \
  EMBD_INTERNAL embd_result embd_base64_encode_##name(const void *src, size_t n,              \
                                                      unsigned flags, char *dst, size_t cap,  \
                                                      size_t *written);
EMBD_B64_DECLARE(scalar)
EMBD_B64_DECLARE(stub_)
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_B64_DECLARE(sse42)
#endif
#if defined(EMBD_HAVE_X86_AVX2)
EMBD_B64_DECLARE(avx2)
#endif
#if defined(EMBD_HAVE_X86_AVX512)
EMBD_B64_DECLARE(avx512)
#endif
#if defined(EMBD_HAVE_B64_AVX512_SIMDE)
EMBD_B64_DECLARE(avx512simde) /* base64_avx512.c through simde, AVX2 code */
#endif
#if defined(EMBD_HAVE_ARM_NEON) || defined(EMBD_HAVE_NEON_SIMDE)
EMBD_B64_DECLARE(neon)
#endif

/* ---- dtype conversions (convert.c; embd/convert.h) ---- */
#include "embd/convert.h"
/* Family EMBD_KERNEL_CONVERT: slot dtype - 1 for f16 .. ubinary (8 slots);
 * EMBD_KERNEL_CONVERT_ENCODE: slots 0 (f16) and 1 (bf16). Every implementation fills
 * every slot of its family (a SIMD row names the scalar kernel for a dtype it does not
 * speed up). */
#define EMBD_CONVERT_SLOTS 8
/* The scalar element conversions, for the SIMD kernels' tails and the tests. */
EMBD_INTERNAL uint32_t embd_f16_to_f32_bits(uint16_t h);
EMBD_INTERNAL uint32_t embd_e4m3_to_f32_bits(uint8_t b);
EMBD_INTERNAL uint16_t embd_f32_to_f16_bits(uint32_t x);
EMBD_INTERNAL uint16_t embd_f32_to_bf16_bits(uint32_t x);
#define EMBD_CVT_DECLARE(isa)                                                                \
  EMBD_INTERNAL void embd_cvt_f16_##isa(float *dst, const void *src, size_t n, int be);      \
  EMBD_INTERNAL void embd_cvt_bf16_##isa(float *dst, const void *src, size_t n, int be);     \
  EMBD_INTERNAL void embd_cvt_e4m3_##isa(float *dst, const void *src, size_t n, int be);     \
  EMBD_INTERNAL void embd_cvt_e5m2_##isa(float *dst, const void *src, size_t n, int be);     \
  EMBD_INTERNAL void embd_cvt_i8_##isa(float *dst, const void *src, size_t n, int be);       \
  EMBD_INTERNAL void embd_cvt_u8_##isa(float *dst, const void *src, size_t n, int be);       \
  EMBD_INTERNAL void embd_cvt_binary_##isa(float *dst, const void *src, size_t n, int be);   \
  EMBD_INTERNAL void embd_cvt_ubinary_##isa(float *dst, const void *src, size_t n, int be);  \
  EMBD_INTERNAL void embd_enc_f16_##isa(void *dst, const float *src, size_t n, int be);      \
  EMBD_INTERNAL void embd_enc_bf16_##isa(void *dst, const float *src, size_t n, int be);
EMBD_CVT_DECLARE(scalar)
EMBD_CVT_DECLARE(stub_)
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_CVT_DECLARE(sse42)
#endif
#if defined(EMBD_HAVE_X86_AVX2_F16C)
EMBD_CVT_DECLARE(avx2) /* AVX2 + F16C (the file's own -mf16c) */
#endif
#if defined(EMBD_HAVE_X86_AVX512)
EMBD_CVT_DECLARE(avx512)
#endif
#if defined(EMBD_HAVE_AVX512_SIMDE)
EMBD_CVT_DECLARE(avx512simde) /* convert_avx512.c through simde, AVX2 + F16C code */
#endif
#if defined(EMBD_HAVE_ARM_NEON) || defined(EMBD_HAVE_NEON_SIMDE)
EMBD_CVT_DECLARE(neon)
#endif

/* ---- the wasm-simd128 tier (src/arch/wasm; only scripts/build-wasm.sh builds it) ---- */
#if defined(EMBD_HAVE_WASM_SIMD128)
EMBD_INTERNAL uint32_t embd_crc32_wasm(uint32_t crc, const void *buf, size_t len);
EMBD_INTERNAL void embd_bswap32_wasm(void *dst, const void *src, size_t n);
EMBD_INTERNAL void embd_copy_wasm(void *dst, const void *src, size_t n);
EMBD_B64_DECLARE(wasm)
EMBD_CVT_DECLARE(wasm)
#endif

#endif
