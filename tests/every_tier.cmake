# Runs every test program (PROGS, a list) with EMBD_ISA set to each tier (TIERS) that this
# CPU cannot run, through EMULATOR (a list, optional: the cross builds' qemu, or the qemu
# -cpu Haswell / Westmere runs of scripts/test.sh), and requires exit 0 or 77 of each:
# a program must skip (tests/testutil.h, tu_isa_preflight) or not depend on the tier, and
# never let the library abort on the spec (issue 31: test_abi ended in SIGABRT under
# EMBD_ISA=avx512 on a CPU without AVX-512).
# Whether the CPU runs a tier is asked of PROBE (isa_report: 77 when it cannot). The tiers
# it runs are left out: the per-tier entries (<test>.isa.<tier>) run the suite in them,
# and here each run is one process start that skips at once.
foreach(_v PROGS TIERS PROBE)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "every_tier.cmake: -D${_v}=... missing")
  endif()
endforeach()
set(_bad "")
set(_runs 0)
set(_skipped 0)
set(_lacking "")
foreach(_tier IN LISTS TIERS)
  set(ENV{EMBD_ISA} "${_tier}")
  execute_process(COMMAND ${EMULATOR} "${PROBE}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err TIMEOUT 120)
  if("${_rc}" STREQUAL "0")
    continue() # this CPU runs the tier: the per-tier entries cover it
  elseif(NOT "${_rc}" STREQUAL "77")
    message(FATAL_ERROR "probe ${PROBE} with EMBD_ISA=${_tier}: exit \"${_rc}\"\n${_out}${_err}")
  endif()
  list(APPEND _lacking ${_tier})
  foreach(_prog IN LISTS PROGS)
    get_filename_component(_name "${_prog}" NAME)
    execute_process(COMMAND ${EMULATOR} "${_prog}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                    ERROR_VARIABLE _err TIMEOUT 120)
    math(EXPR _runs "${_runs} + 1")
    if("${_rc}" STREQUAL "77")
      math(EXPR _skipped "${_skipped} + 1")
    elseif(NOT "${_rc}" STREQUAL "0")
      string(REGEX REPLACE "\n+$" "" _err "${_err}")
      list(APPEND _bad "EMBD_ISA=${_tier} ${_name}: exit \"${_rc}\": ${_err}")
      message(STATUS "FAIL EMBD_ISA=${_tier} ${_name}: exit \"${_rc}\"\n${_err}")
    endif()
  endforeach()
endforeach()
unset(ENV{EMBD_ISA})
list(LENGTH PROGS _np)
message(STATUS "tiers this CPU lacks: ${_lacking}; ${_np} programs, ${_runs} runs, "
               "${_skipped} skipped (77), the rest exit 0")
if(_bad)
  list(LENGTH _bad _nb)
  string(REPLACE ";" "\n  " _bad "${_bad}")
  message(FATAL_ERROR "${_nb} runs neither passed nor skipped:\n  ${_bad}")
endif()
