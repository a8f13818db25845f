/* Version and result-code strings. */
#include "embd/common.h"

const char *embd_version(void) { return EMBD_VERSION_STRING; }

unsigned embd_version_number(void) { return EMBD_VERSION_NUMBER; }

const char *embd_strerror(embd_result r) {
  switch (r) {
    case EMBD_OK: return "success";
    case EMBD_ERR_INVALID_ARGUMENT: return "invalid argument";
    case EMBD_ERR_UNKNOWN_ISA: return "unknown tier or CPU feature name";
    case EMBD_ERR_UNSUPPORTED_ISA: return "tier not supported by this CPU";
    case EMBD_ERR_OUTPUT_TOO_SMALL: return "output buffer too small";
  }
  return "unknown result";
}
