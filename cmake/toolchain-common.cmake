# Shared body of the cross toolchain files: each sets CMAKE_SYSTEM_PROCESSOR and
# _embd_triple, then includes this. cmocka and zlib for the target come from a private
# sysroot made by scripts/cross-sysroot.sh (never multiarch-installed: see TOOLCHAIN.md),
# given as -DEMBD_SYSROOT=<dir> or EMBD_SYSROOT in the environment.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${_embd_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_embd_triple}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${_embd_triple})

# The toolchain file is read again for every try_compile: pass the sysroot on.
if(NOT DEFINED EMBD_SYSROOT AND DEFINED ENV{EMBD_SYSROOT})
  set(EMBD_SYSROOT "$ENV{EMBD_SYSROOT}")
endif()
set(EMBD_SYSROOT "${EMBD_SYSROOT}" CACHE PATH "Unpacked target packages (cmocka, zlib)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBD_SYSROOT)

set(CMAKE_FIND_ROOT_PATH /usr/${_embd_triple})
if(EMBD_SYSROOT)
  list(APPEND CMAKE_FIND_ROOT_PATH "${EMBD_SYSROOT}")
  # Debian's multiarch include directory (e.g. openssl/opensslconf.h lives there): a native
  # compiler searches /usr/include/<triple> by itself, the cross compiler does not know the
  # private sysroot. Only that directory, not the sysroot's whole /usr/include.
  if(EXISTS "${EMBD_SYSROOT}/usr/include/${_embd_triple}")
    set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${EMBD_SYSROOT}/usr/include/${_embd_triple}")
    set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${EMBD_SYSROOT}/usr/include/${_embd_triple}")
  endif()
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and add_test run target binaries through the emulator; -L gives it the target's
# dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR};-L;/usr/${_embd_triple})
