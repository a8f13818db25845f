/* embd._embd: Codec token frames (embd/codec.h, embd/codec_stream.h, embd/tokmap.h). */
#include "common.h"

PyMethodDef embdpy_codec_methods[] = {{NULL, NULL, 0, NULL}};

int embdpy_codec_init(PyObject *m) {
  (void)m;
  return 0;
}
