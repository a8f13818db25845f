# Every dynamic symbol the shared library defines carries the embd_ prefix (hidden
# visibility by default, EMBD_API on the public functions). Needs NM and LIB.
if(NOT NM OR NOT EXISTS "${NM}")
  message(STATUS "SKIP: nm not found")
  return()
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(good 0)
set(bad "")
foreach(l IN LISTS lines)
  # "<address> <type> <name>[@@version]"
  if(NOT l MATCHES "^[0-9a-fA-F]+ +([A-Za-z]) +([^ @]+)")
    continue()
  endif()
  set(type "${CMAKE_MATCH_1}")
  set(name "${CMAKE_MATCH_2}")
  if(type STREQUAL "A")  # absolute symbols: version nodes, not code or data
    continue()
  endif()
  if(name MATCHES "^embd_")
    math(EXPR good "${good} + 1")
  else()
    list(APPEND bad "${type} ${name}")
  endif()
endforeach()
message(STATUS "${good} embd_ symbols exported by ${LIB}")
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "symbols without the embd_ prefix exported:\n  ${bad}")
endif()
foreach(sym embd_crc32 embd_crc32_combine embd_crc32_impl embd_version embd_strerror
            embd_bswap32 embd_bswap32_impl embd_f32_from_le embd_f32_to_le
            embd_u32_from_be embd_u32_to_be
            embd_isa_set embd_isa_check embd_impl_active embd_cpu_features
            embd_frame_size embd_frame_encode_f32 embd_frame_encode_f64 embd_frame_header
            embd_frame_decode embd_frame_view embd_frame_need embd_codec_frame_need
            embd_batch_encode_f32 embd_batch_next embd_stream_feed embd_stream_finish)
  if(NOT out MATCHES "[ \t]${sym}(@|\n|$)")
    message(FATAL_ERROR "public function ${sym} is not exported")
  endif()
endforeach()
