# The ABI check: the built shared library against the baseline kept in the repository
# (abi/libembd.abi), with libabigail (Debian: abigail-tools).
#   cmake -DABIDW=... -DABIDIFF=... -DLIB=<libembd.so.X> -DINCLUDE_DIR=<include>
#         -DBASELINE=<abi/libembd.abi> -DOUT=<current .abi> [-DMODE=write] -P check_abi.cmake
# MODE=write (scripts/abi-baseline.sh) writes the baseline instead, refusing an
# incompatible change that keeps the SONAME. The abidw flags live here only, so the
# baseline and the check always describe the library the same way: public types only (those
# declared under include/), no paths, no source locations.
foreach(v ABIDW ABIDIFF LIB INCLUDE_DIR BASELINE OUT)
  if(NOT ${v})
    message(FATAL_ERROR "check_abi.cmake: ${v} not set")
  endif()
endforeach()
execute_process(COMMAND "${ABIDW}" --no-corpus-path --no-comp-dir-path --no-show-locs
                        --exported-interfaces-only --drop-private-types --headers-dir "${INCLUDE_DIR}"
                        --headers-dir "${INCLUDE_DIR}/embd" --out-file "${OUT}" "${LIB}"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "abidw ${LIB} failed (${rc}): ${err}")
endif()
file(READ "${OUT}" cur)
if(NOT cur MATCHES "<abi-instr")
  message(FATAL_ERROR "abidw found no DWARF in ${LIB}: the ABI check needs the library "
                      "built with -g (CMake adds it when EMBD_ABI_CHECK is on)")
endif()
string(REGEX MATCH "soname='([^']*)'" _m "${cur}")
set(cur_soname "${CMAKE_MATCH_1}")

if(MODE STREQUAL "write")
  if(EXISTS "${BASELINE}")
    file(READ "${BASELINE}" old)
    string(REGEX MATCH "soname='([^']*)'" _m "${old}")
    set(old_soname "${CMAKE_MATCH_1}")
    execute_process(COMMAND "${ABIDIFF}" "${BASELINE}" "${OUT}"
      RESULT_VARIABLE drc OUTPUT_VARIABLE dout ERROR_VARIABLE derr)
    # Within one SONAME only additions are allowed. abidiff's exit bit 3 (8) flags removed
    # symbols only; a struct whose layout changed is just "Changed" (bit 2, 4), so the
    # summary lines decide: anything removed or changed breaks old binaries.
    set(incompatible OFF)
    math(EXPR _removed_syms "${drc} & 8")
    if(_removed_syms OR dout MATCHES "[1-9][0-9]* (Removed|Changed)")
      set(incompatible ON)
    endif()
    if(old_soname STREQUAL cur_soname AND incompatible)
      message(FATAL_ERROR "${dout}${derr}\nThis is an incompatible ABI change, and the SONAME "
        "is still ${cur_soname}. Bump EMBD_VERSION_MINOR (0.x; the major from 1.0 on) in "
        "include/embd/common.h, rebuild, and run scripts/abi-baseline.sh again.")
    endif()
    if(drc EQUAL 0)
      message(STATUS "abi: ${BASELINE} already describes ${LIB} (${cur_soname})")
    else()
      message(STATUS "abi: changes from ${old_soname} to ${cur_soname}:\n${dout}")
    endif()
  endif()
  file(WRITE "${BASELINE}" "${cur}")
  message(STATUS "abi: wrote ${BASELINE} (${cur_soname})")
  return()
endif()

if(NOT EXISTS "${BASELINE}")
  message(FATAL_ERROR "no ABI baseline ${BASELINE}: run scripts/abi-baseline.sh <build-dir>")
endif()
execute_process(COMMAND "${ABIDIFF}" "${BASELINE}" "${OUT}"
  RESULT_VARIABLE drc OUTPUT_VARIABLE dout ERROR_VARIABLE derr)
if(NOT drc EQUAL 0)
  message(FATAL_ERROR "${dout}${derr}\nabidiff: ${LIB} (${cur_soname}) differs from the ABI "
    "baseline ${BASELINE} (exit ${drc}). A public struct, function, enum or the SONAME "
    "changed. If that is intended: for a change that breaks old binaries bump "
    "EMBD_VERSION_MINOR in include/embd/common.h (0.x: the SONAME follows it), then run "
    "scripts/abi-baseline.sh <build-dir> and commit abi/libembd.abi with the change "
    "(README, ABI).")
endif()
message(STATUS "abi: ${LIB} (${cur_soname}) matches ${BASELINE}")
