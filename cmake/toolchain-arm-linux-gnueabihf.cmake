# Cross toolchain for 32-bit ARM Linux, hard-float ABI (Debian's armhf:
# gcc-arm-linux-gnueabihf, ARMv7-A + VFPv3-D16, Thumb-2); tests run under qemu-arm. The
# 32-bit target: size_t is 32 bits here, which the frame and batch size arithmetic must
# survive. No NEON or CRC kernels (those are aarch64-only): the library is scalar here.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-arm-linux-gnueabihf.cmake -DEMBD_SYSROOT=<dir> ...
# scripts/cross-test.sh armhf does all of it.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(_embd_triple arm-linux-gnueabihf)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)

# 64-bit off_t/ino_t (glibc's getdents64): under qemu-arm on a 64-bit host, ext4 hands
# out 64-bit directory offsets, and a 32-bit readdir() then fails with EOVERFLOW (the fuzz
# corpus replay found no inputs). No embd API has off_t, so the ABI is the same.
set(CMAKE_C_FLAGS_INIT "-D_FILE_OFFSET_BITS=64")
set(CMAKE_CXX_FLAGS_INIT "-D_FILE_OFFSET_BITS=64")
