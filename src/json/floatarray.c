/* The float-array family's scalar reference and front end (src/core/floatarray_kernel.h).
 * Here, beside the JSON decoders, because the kernel layer (src/core, src/arch) may not
 * include JSON headers; the SIMD implementations (src/arch/x86/floatarray_x86.h) are
 * self-contained. */
#include "floatarray_kernel.h"
#include "internal.h"

/* Takes nothing: the caller's own loop (decimal.h's fast parser, then its careful one,
 * one number at a time) is the reference, exactly what the decoder did before the
 * family. A scalar run of the same fast parser here measured 1.5x slower on Zen 1 than
 * that loop inlined in the decoder, so the scalar tier keeps the loop where it was. */
size_t embd_floatarray_scalar(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                              float *out, size_t n, const uint8_t **past) {
  (void)base, (void)end, (void)out, (void)n;
  *past = p;
  return 0;
}

size_t embd_floatarray_stub_(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                             float *out, size_t n, const uint8_t **past) {
  embd_dispatch_init_();
  return EMBD_CALL(EMBD_KERNEL_FLOAT_ARRAY_, 0, embd_floatarray_fn)(base, p, end, out, n, past);
}

size_t embd_floatarray_run(const uint8_t *base, const uint8_t *p, const uint8_t *end, float *out,
                           size_t n, const uint8_t **past) {
  return EMBD_CALL(EMBD_KERNEL_FLOAT_ARRAY_, 0, embd_floatarray_fn)(base, p, end, out, n, past);
}

int embd_floatarray_takes_(void) {
  embd_floatarray_fn f = EMBD_CALL(EMBD_KERNEL_FLOAT_ARRAY_, 0, embd_floatarray_fn);
  if (f == embd_floatarray_stub_) {
    embd_dispatch_init_();
    f = EMBD_CALL(EMBD_KERNEL_FLOAT_ARRAY_, 0, embd_floatarray_fn);
  }
  return f != embd_floatarray_scalar;
}

embd_floatarray_fn embd_floatarray_impl_(size_t index) {
  return (embd_floatarray_fn)embd_impl_fn_(EMBD_KERNEL_FLOAT_ARRAY_, index, 0);
}

size_t embd_floatarray_count_(void) { return embd_families_[EMBD_KERNEL_FLOAT_ARRAY_].count; }

const char *embd_floatarray_name_(size_t index) {
  const struct embd_impl_desc *d = embd_impl_desc(EMBD_KERNEL_FLOAT_ARRAY_, index);
  return d ? d->name : NULL;
}

const char *embd_floatarray_active_(void) { return embd_family_active_(EMBD_KERNEL_FLOAT_ARRAY_); }
