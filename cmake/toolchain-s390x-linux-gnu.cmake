# Cross toolchain for s390x Linux (Debian's gcc-s390x-linux-gnu); tests run under qemu-s390x.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x-linux-gnu.cmake -DEMBD_SYSROOT=<dir> ...
# scripts/cross-test.sh does all of it.
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(_embd_triple s390x-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
