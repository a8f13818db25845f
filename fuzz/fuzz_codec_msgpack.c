/* Fuzz target for the msgpack-mode reader (embd/codec_stream.h): one feed against
 * fuzzer-chosen chunks, and every decoded frame re-encoded and decoded again
 * (fuzz/codec_modes_fuzz.h has the input layout). Seeds: fuzz/gen_codec_modes_corpus.py. */
#include "codec_modes_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return cmf_run(0, data, size); }
