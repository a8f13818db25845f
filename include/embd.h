/* embd: moves the numbers of AI services over the wire in binary, fast and safely.
 *
 * Umbrella header. Each face of the library has its own header under embd/:
 *   embd/common.h  version, export macro, result codes, embd_strerror
 *   embd/cpu.h     CPU features, tiers, implementation registry, EMBD_ISA
 *   embd/crc32.h   CRC-32 (zlib polynomial)
 */
#ifndef EMBD_H
#define EMBD_H

#include "embd/common.h"
#include "embd/cpu.h"
#include "embd/crc32.h"

#endif
