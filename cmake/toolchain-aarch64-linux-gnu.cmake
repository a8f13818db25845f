# Cross toolchain for aarch64 Linux (Debian's gcc-aarch64-linux-gnu); tests run under qemu-aarch64.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake -DEMBD_SYSROOT=<dir> ...
# scripts/cross-test.sh does all of it.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(_embd_triple aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
