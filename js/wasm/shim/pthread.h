/* The WebAssembly build is one thread (no shared memory, no workers inside a module):
 * wasi-libc without threads has no <pthread.h>, so the few calls the library makes
 * (dispatch.c's mutex, frame.c's per-thread decompressor key) get these single-threaded
 * equivalents. Only scripts/build-wasm.sh puts this directory on the include path. */
#ifndef EMBD_WASM_PTHREAD_SHIM_H
#define EMBD_WASM_PTHREAD_SHIM_H
typedef int pthread_mutex_t;
typedef int pthread_once_t;
typedef void *pthread_key_t;
#define PTHREAD_MUTEX_INITIALIZER 0
#define PTHREAD_ONCE_INIT 0
static inline int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_once(pthread_once_t *o, void (*f)(void)) {
  if (!*o) { *o = 1; f(); }
  return 0;
}
static inline int pthread_key_create(pthread_key_t *k, void (*d)(void *)) { (void)d; *k = 0; return 0; }
static inline void *pthread_getspecific(pthread_key_t k) { return k; }
static inline int pthread_setspecific(pthread_key_t k, const void *v) { (void)k; (void)v; return 1; }
static inline int pthread_key_delete(pthread_key_t k) { (void)k; return 0; }
#endif
