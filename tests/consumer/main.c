/* A program outside the tree, built against an installed embd (scripts/check-install.sh). */
#include <embd.h>
#include <stdio.h>
int main(void){ printf("%s %08x %s\n", embd_version(), embd_crc32(0,"123456789",9), embd_impl_active(EMBD_KERNEL_CRC32)); return embd_crc32(0,"123456789",9)!=0xCBF43926u; }
