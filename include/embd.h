/* embd: moves the numbers of AI services over the wire in binary, fast and safely.
 *
 * Umbrella header. Each face of the library has its own header under embd/:
 *   embd/common.h  version, export macro, result codes, embd_strerror
 *   embd/cpu.h     CPU features, tiers, implementation registry, EMBD_ISA
 *   embd/crc32.h   CRC-32 (zlib polynomial)
 *   embd/bswap.h   32-bit byte swaps, host <-> wire order (f32 LE, u32 BE)
 *   embd/frame.h   EMBD frames: encode, validate, decode (copy or zero-copy view)
 *   embd/base64.h  base64 (RFC 4648) decode/encode, float32 embeddings in base64
 *   embd/openai.h  OpenAI-compatible /v1/embeddings responses (float or base64) -> vectors
 *   embd/codec_stream.h  the engines' stream modes: msgpack and protobuf token frames
 *   embd/codec.h   Codec session frames (HELLO/READY/TOKENS/EOS...), stream reader, handshake
 *   embd/tokmap.h  Codec tokenizer maps (sha256-checked) and lazy detokenization to UTF-8
 *   embd/pgcopy.h  PostgreSQL binary COPY rows: pgvector vector/halfvec/sparsevec/bit, float4[], bytea
 *   embd/vecfile.h Elasticsearch/OpenSearch _bulk lines with binary vectors, FAISS .fvecs/.bvecs
 */
#ifndef EMBD_H
#define EMBD_H

#include "embd/common.h"
#include "embd/cpu.h"
#include "embd/crc32.h"
#include "embd/bswap.h"
#include "embd/convert.h"
#include "embd/frame.h"
#include "embd/batch.h"
#include "embd/stream.h"
#include "embd/base64.h"
#include "embd/openai.h"
#include "embd/codec.h"
#include "embd/codec_stream.h"
#include "embd/tokmap.h"
#include "embd/pgcopy.h"
#include "embd/vecfile.h"
#include "embd/arrow.h"

#endif
