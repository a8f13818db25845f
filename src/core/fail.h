/* The library's error formatter (common.c), on its own so that the C++ sources
 * (openai.cc, codec_json.cc, tokmap_json.cc) share it with the C ones. Not installed. */
#ifndef EMBD_FAIL_H
#define EMBD_FAIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "embd/common.h"

#define EMBD_INTERNAL __attribute__((visibility("hidden")))

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when an options struct's reserved room (reserved_[], reserved_ptr_[]: embd/common.h,
 * "Growing the ABI") is all zero. A non-zero slot is garbage or a field of a newer
 * release: the caller gets EMBD_ERR_INVALID_ARGUMENT. */
#define EMBD_RESERVED_OK(o)                                                                 \
  embd_reserved_zero_((o)->reserved_, sizeof (o)->reserved_ / sizeof (o)->reserved_[0],     \
                      (const void *const *)(o)->reserved_ptr_,                               \
                      sizeof (o)->reserved_ptr_ / sizeof (o)->reserved_ptr_[0])
static inline int embd_reserved_zero_(const uint64_t *r, size_t n, const void *const *p,
                                      size_t np) {
  for (size_t i = 0; i < n; i++)
    if (r[i]) return 0;
  for (size_t i = 0; i < np; i++)
    if (p[i]) return 0;
  return 1;
}

/* Marks *err (when not NULL) as no error: result EMBD_OK, offset 0, an empty message (what
 * every entry point leaves on success). Returns EMBD_OK. */
static inline embd_result embd_no_error(embd_error *err) {
  if (err) {
    err->result = EMBD_OK;
    err->offset = 0;
    err->message[0] = 0;
  }
  return EMBD_OK;
}

/* Fills *err (when not NULL) with r, the byte offset and a formatted message; returns r. */
EMBD_INTERNAL embd_result embd_fail(embd_error *err, embd_result r, uint64_t off,
                                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same for an error at byte `at` inside frame `frame` of a stream, which starts at
 * byte `start`: the message reads "frame <frame> at byte <start>: <fmt...>" (the stream
 * readers' shared shape); err->offset = at. */
EMBD_INTERNAL embd_result embd_vfail_frame(embd_error *err, embd_result r, uint64_t at,
                                           uint64_t frame, uint64_t start, const char *fmt,
                                           va_list ap) __attribute__((format(printf, 6, 0)));

#ifdef __cplusplus
}
#endif

#endif
