/* 32-bit byte swaps: the portable scalar kernel and the public entry points. */
#include "internal.h"

/* Below this many words the inline loop beats loading the dispatch pointer and the SIMD
 * kernels' setup. */
#define EMBD_BSWAP32_DISPATCH_MIN 16

size_t embd_bswap32_nt_bytes_ = 0;

size_t embd_bswap32_nt_measure_(void) {
  const size_t llc = embd_cpu_llc_bytes();
  const size_t t = llc ? llc : (size_t)64 << 20;
  /* the same value from every thread that gets here first */
  __atomic_store_n(&embd_bswap32_nt_bytes_, t, __ATOMIC_RELAXED);
  return t;
}

void embd_bswap32_scalar(void *dst, const void *src, size_t n) {
  embd_bswap32_words((uint8_t *)dst, (const uint8_t *)src, n);
}

void embd_bswap32(void *dst, const void *src, size_t n) {
  if (n < EMBD_BSWAP32_DISPATCH_MIN) {
    embd_bswap32_words((uint8_t *)dst, (const uint8_t *)src, n);
    return;
  }
  EMBD_CALL(EMBD_KERNEL_BSWAP32, 0, embd_bswap32_fn)(dst, src, n);
}

embd_bswap32_fn embd_bswap32_impl(size_t index) {
  return (embd_bswap32_fn)embd_impl_fn_(EMBD_KERNEL_BSWAP32, index, 0);
}

/* The copy kernel is the bswap32 family's second function. */
embd_copy_fn embd_copy_impl_(size_t index) {
  return (embd_copy_fn)embd_impl_fn_(EMBD_KERNEL_BSWAP32, index, EMBD_BSWAP32_FN_COPY);
}

void embd_copy_dispatch_(void *dst, const void *src, size_t n) {
  EMBD_CALL(EMBD_KERNEL_BSWAP32, EMBD_BSWAP32_FN_COPY, embd_copy_fn)(dst, src, n);
}

/* The slots' values until the first call resolves every family. */
void embd_bswap32_stub_(void *dst, const void *src, size_t n) {
  embd_dispatch_init_();
  embd_bswap32(dst, src, n);
}

void embd_copy_stub_(void *dst, const void *src, size_t n) {
  embd_dispatch_init_();
  embd_copy_dispatch_(dst, src, n);
}

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
#elif defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_LE 0
#else
#error "embd: unknown host byte order"
#endif

/* Host order equals the wire order: a copy (never glibc's memcpy for payload sizes, see
 * copy_kernel.h), or nothing in place. */
static void copy_words(void *dst, const void *src, size_t n) { embd_copy(dst, src, 4 * n); }

/* The portable copy kernel: 8-byte words. The empty asm makes each loaded word opaque to
 * the compiler, so that GCC's -ftree-loop-distribute-patterns (and clang's loop idiom
 * pass) cannot turn the loop back into a memcpy call, which would bring the cliff back. */
static inline uint64_t copy_ld64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__GNUC__)
  __asm__("" : "+r"(v));
#endif
  return v;
}
static inline void copy_st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
#define CP_NAME embd_copy_scalar
#define CP_VEC uint64_t
#define CP_W 8
#define CP_LOAD(p) copy_ld64(p)
#define CP_STORE(p, v) copy_st64((p), (v))
#define CP_STORE_A(p, v) copy_st64((p), (v))
#include "copy_kernel.h"

void embd_f32_from_le(float *dst, const void *src, size_t n) {
  if (HOST_LE)
    copy_words(dst, src, n);
  else
    embd_bswap32(dst, src, n);
}

void embd_f32_to_le(void *dst, const float *src, size_t n) {
  if (HOST_LE)
    copy_words(dst, src, n);
  else
    embd_bswap32(dst, src, n);
}

void embd_u32_from_be(uint32_t *dst, const void *src, size_t n) {
  if (HOST_LE)
    embd_bswap32(dst, src, n);
  else
    copy_words(dst, src, n);
}

void embd_u32_to_be(void *dst, const uint32_t *src, size_t n) {
  if (HOST_LE)
    embd_bswap32(dst, src, n);
  else
    copy_words(dst, src, n);
}
