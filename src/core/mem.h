/* Growing big buffers: the library's decoded rows, and the embd tool's whole-input reads
 * (cli/util.c includes this header; its code is static inline). Not installed.
 *
 * A first touch of a 4 KiB page costs ~15 us on the VMs this runs on: rows of 20,000 x
 * 1536 float32 (123 MB) pay ~30,000 faults, ~0.45 s, thirty times their decode. Asking for
 * transparent huge pages on a buffer that large (Linux: madvise MADV_HUGEPAGE, honoured in
 * the kernel's default "madvise" mode) turns them into ~60 faults of 2 MiB. Not through
 * realloc: the advice splits the mapping, glibc's mremap then fails and realloc copies
 * into fresh 4 KiB pages before anyone could advise them. A big buffer is allocated anew,
 * advised, then filled. Where the advice is not available this is realloc. */
#ifndef EMBD_MEM_H
#define EMBD_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define EMBD_HUGE_PAGE ((size_t)2 << 20)
#define EMBD_HUGE_MIN ((size_t)8 << 20) /* below this, 4 KiB pages cost little */

static inline void *embd_realloc_big(void *p, size_t old_n, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (n >= EMBD_HUGE_MIN) {
    void *q = malloc(n);
    if (!q) return NULL;
    const uintptr_t a = ((uintptr_t)q + EMBD_HUGE_PAGE - 1) & ~(uintptr_t)(EMBD_HUGE_PAGE - 1);
    const uintptr_t e = ((uintptr_t)q + n) & ~(uintptr_t)(EMBD_HUGE_PAGE - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice: failure is harmless */
    if (p) {
      memcpy(q, p, old_n < n ? old_n : n);
      free(p);
    }
    return q;
  }
#else
  (void)old_n;
#endif
  return realloc(p, n);
}

#endif
