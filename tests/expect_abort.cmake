# Runs PROG (with ARGS, optional) with EMBD_ISA=SPEC (through EMULATOR, a list, when
# cross-compiling) and requires what embd/cpu.h promises for an invalid EMBD_ISA: the
# reason on stderr, matching EXPECT, and a failed (aborted) process. ctest itself counts any crashed test
# as failed regardless of WILL_FAIL or output regexes, hence this script.
foreach(_v PROG SPEC EXPECT)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "expect_abort.cmake: -D${_v}=... missing")
  endif()
endforeach()
set(ENV{EMBD_ISA} "${SPEC}")
execute_process(COMMAND ${EMULATOR} "${PROG}" ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "EMBD_ISA=${SPEC}: exit \"${rc}\"\nstdout: ${out}\nstderr: ${err}")
if("${rc}" STREQUAL "0")
  message(FATAL_ERROR "EMBD_ISA=${SPEC} was accepted (exit 0): an invalid spec must abort")
endif()
if("${rc}" STREQUAL "77")
  message(FATAL_ERROR "EMBD_ISA=${SPEC} was treated as an unsupported tier (77), not as invalid")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match \"${EXPECT}\"")
endif()
if(out MATCHES "isa_report: EMBD_ISA=")
  message(FATAL_ERROR "the program ran to the end instead of aborting")
endif()
message(STATUS "OK: rejected loudly")
