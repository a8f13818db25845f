/* CRC-32 (zlib) for aarch64 CPUs with the ARMv8 CRC32 extension but no PMULL (the
 * Raspberry Pi 4's Cortex-A72, for one), and the reference the PMULL kernel's short
 * inputs share. Compiled with -march=armv8-a+crc. The body is in crc32_arm_common.h:
 * 8-byte alignment, three independent crc32d streams per block joined by a shift, then
 * one chain for the rest. */
#include "crc32_arm_common.h"

uint32_t embd_crc32_armv8(uint32_t crc, const void *buf, size_t len) {
  return ~embd_crc32_arm_raw(~crc, (const uint8_t *)buf, len);
}
