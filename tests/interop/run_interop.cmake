# Runs the seed-codec interop test: NODE, PROG (embd_interop), SCRIPT (seed_codec.mjs),
# DIR (a scratch directory). Prints "SKIP: ..." (the test's SKIP_REGULAR_EXPRESSION) when
# node has gone missing since configure time.
if(NOT NODE OR NOT EXISTS "${NODE}")
  message(STATUS "SKIP: node not found (${NODE})")
  return()
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")

# Every step runs (embd_interop writes its frames even when they differ, so the seed
# decoder still gets to report); the test fails at the end if any step did.
set(failed "")
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    set(failed "${failed}\n  ${what}: exit status ${rc}" PARENT_SCOPE)
  endif()
endfunction()

# 1. the seed encoder writes frames and the expected float32 bits
run("seed encoder (node)" "${NODE}" "${SCRIPT}" gen "${DIR}")
if(failed)
  message(FATAL_ERROR "seed-codec interop failed:${failed}")
endif()
# 2. embd decodes the seed's frames, encodes the same vectors, compares bytes
run("embd_interop" "${PROG}" "${DIR}")
# 3. the seed decoder decodes embd's frames; they must equal the seed encoder's
run("seed decoder (node)" "${NODE}" "${SCRIPT}" check "${DIR}")
if(failed)
  message(FATAL_ERROR "seed-codec interop failed:${failed}")
endif()
