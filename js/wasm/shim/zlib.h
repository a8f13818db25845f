/* zlib for the WebAssembly build: the frames' zlib payloads (flag bit 0) are not in it
 * (Debian ships zlib as binaries only, and nothing is downloaded at build time). The
 * calls frame.c makes fail at once: inflateInit / deflateInit return Z_STREAM_ERROR with
 * a message saying so, which the library reports as EMBD_ERR_FRAME_INFLATE /
 * EMBD_ERR_FRAME_DEFLATE at the payload. js/src decodes such frames itself where the
 * platform has zlib (node:zlib) before they reach the module. */
#ifndef EMBD_WASM_ZLIB_SHIM_H
#define EMBD_WASM_ZLIB_SHIM_H
typedef unsigned char Bytef;
typedef unsigned int uInt;
typedef unsigned long uLong;
typedef struct z_stream_s {
  Bytef *next_in;
  uInt avail_in;
  uLong total_in;
  Bytef *next_out;
  uInt avail_out;
  uLong total_out;
  const char *msg;
} z_stream;
#define Z_OK 0
#define Z_STREAM_END 1
#define Z_NEED_DICT 2
#define Z_STREAM_ERROR (-2)
#define Z_DATA_ERROR (-3)
#define Z_MEM_ERROR (-4)
#define Z_BUF_ERROR (-5)
#define Z_NO_FLUSH 0
#define Z_FINISH 4
#define Z_DEFAULT_COMPRESSION (-1)
#define EMBD_WASM_NO_ZLIB "zlib is not in embd's WebAssembly build"
static inline int inflateInit(z_stream *z) { z->msg = EMBD_WASM_NO_ZLIB; return Z_STREAM_ERROR; }
static inline int inflate(z_stream *z, int f) { (void)f; z->msg = EMBD_WASM_NO_ZLIB; return Z_STREAM_ERROR; }
static inline int inflateEnd(z_stream *z) { (void)z; return Z_OK; }
static inline int deflateInit(z_stream *z, int l) { (void)l; z->msg = EMBD_WASM_NO_ZLIB; return Z_STREAM_ERROR; }
static inline int deflate(z_stream *z, int f) { (void)z; (void)f; return Z_STREAM_ERROR; }
static inline int deflateEnd(z_stream *z) { (void)z; return Z_OK; }
#endif
