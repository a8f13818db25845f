/* An input at an odd address, for the targets that decode the same bytes aligned and not
 * (fuzz_frame, fuzz_batch): an exact-size copy one byte into a fresh block, so ASan sees a
 * read past the end and a load that assumes alignment meets an odd pointer. */
#ifndef EMBD_FUZZ_ODD_H
#define EMBD_FUZZ_ODD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The copy of data[0..size) at an odd address; *block is what to free. Aborts when out of
 * memory. */
static inline const uint8_t *fz_odd_copy(const uint8_t *data, size_t size, uint8_t **block) {
  *block = malloc(size + 1);
  if (!*block) abort();
  if (size) memcpy(*block + 1, data, size);
  return *block + 1;
}

#endif
