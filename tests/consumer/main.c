/* A program outside the tree, built against an installed embd (scripts/check-install.sh). */
#include <embd.h>
#include <stdio.h>
#include <string.h>
/* embd_openai_decode: links the C++ runtime into C programs (static too). */
static int openai_ok(void){ embd_openai_embeddings e; embd_error err; embd_openai_init(&e); const char *j="{\"data\":[{\"index\":0,\"embedding\":\"AACAPw==\"}]}"; embd_result r=embd_openai_decode(&e,j,strlen(j),NULL,&err); int ok=r==EMBD_ERR_OPENAI_UNAVAILABLE||(r==EMBD_OK&&e.count==1&&e.values[0]==1.0f); embd_openai_free(&e); return ok; }
int main(void){ if(!openai_ok()) return 2; printf("%s %08x %s\n", embd_version(), embd_crc32(0,"123456789",9), embd_impl_active(EMBD_KERNEL_CRC32)); return embd_crc32(0,"123456789",9)!=0xCBF43926u; }
