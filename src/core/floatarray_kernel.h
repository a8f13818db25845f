/* The float-array kernel family (EMBD_KERNEL_FLOAT_ARRAY_ in internal.h, one slot): JSON
 * number arrays -> float32, for the OpenAI decoder's data[].embedding arrays
 * (src/json/openai.cc).
 *
 * An implementation reads the run of a JSON array's elements that starts at p (an
 * element's first byte): numbers, each taken with the ',' and JSON whitespace after it
 * and only when another number starts there ('-' or a digit), as far as it can decide
 * them alone and exactly (the float32 nearest each text, rounded once). It stops before a
 * number it leaves to the caller: a grammar fault in it or after it, a digit count or
 * exponent outside its exact conversion, a float32 midpoint, the array's last number
 * (nothing but another number after its ','), too few readable bytes left. It writes at
 * most n floats to out and returns how many; *past is the first byte of the number after
 * the last one taken (p when none), where the caller goes on as if it had parsed them.
 * It reads [p - EMBD_FLOATARRAY_BEHIND, end) at most, and returns 0 when p - base is
 * less than that.
 *
 * The caller parses whatever it was left with its own careful path (decimal.h), so every
 * error (its code, message and byte) and every hard number is the caller's: an
 * implementation only ever takes numbers it can prove, never reports anything.
 *
 * Implementations: scalar (src/json/floatarray.c) takes nothing, so the caller's own
 * loop (decimal.h's fast parser, then the careful one, one number at a time: what the
 * decoder did before the family) is the reference; sse42 and avx2
 * (src/arch/x86/floatarray_x86.h: 64 bytes classified at a time, four numbers converted
 * per step), opt-in: picked only when EMBD_ISA or embd_isa_set names a tier, because
 * on the CPU they were measured on they are not faster than the decoder's own loop
 * (src/core/dispatch.c, README "Measured"). Not installed; internal to the library. */
#ifndef EMBD_FLOATARRAY_KERNEL_H
#define EMBD_FLOATARRAY_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "fail.h" /* EMBD_INTERNAL */

#ifdef __cplusplus
extern "C" {
#endif

#define EMBD_FLOATARRAY_BEHIND 16
typedef size_t (*embd_floatarray_fn)(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                                     float *out, size_t n, const uint8_t **past);
#define EMBD_FA_DECLARE(isa)                                                                \
  EMBD_INTERNAL size_t embd_floatarray_##isa(const uint8_t *base, const uint8_t *p,         \
                                             const uint8_t *end, float *out, size_t n,      \
                                             const uint8_t **past);
EMBD_FA_DECLARE(scalar)
EMBD_FA_DECLARE(stub_)
/* The dispatched implementation as a function: EMBD_CALL is C only, the decoder is C++. */
EMBD_FA_DECLARE(run)
#if defined(EMBD_HAVE_X86_SSE42)
EMBD_FA_DECLARE(sse42)
#endif
#if defined(EMBD_HAVE_X86_AVX2)
EMBD_FA_DECLARE(avx2)
#endif
/* Non-zero when the active implementation may take numbers (not the scalar one, which
 * never does): the decoder asks once per array and calls none otherwise. */
EMBD_INTERNAL int embd_floatarray_takes_(void);
/* Implementation `index` of the family when it is runnable now, else NULL: the tests,
 * the differential fuzz target and the benchmark call each one directly. */
EMBD_INTERNAL embd_floatarray_fn embd_floatarray_impl_(size_t index);
/* The family is not in the public embd_kernel enum yet (internal.h: EMBD_KERNEL_FLOAT_ARRAY_),
 * so the tests list it here: implementations (index 0 the scalar reference), the name of
 * implementation `index` (NULL past the end), the one in use. */
EMBD_INTERNAL size_t embd_floatarray_count_(void);
EMBD_INTERNAL const char *embd_floatarray_name_(size_t index);
EMBD_INTERNAL const char *embd_floatarray_active_(void);

#ifdef __cplusplus
}
#endif

#endif
