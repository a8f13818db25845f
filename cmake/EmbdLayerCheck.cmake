# The layer rule, checked at configure time: the kernel layer (src/core, src/arch) never
# includes a wire, codec or JSON header, public or internal, so a SIMD kernel cannot come
# to depend on a frame format. Every #include of every file there is read; one that names
# a header of src/wire, src/codec or src/json, or a public header of those faces, stops
# the configuration with the file and line.
function(embd_check_layers)
  set(_forbidden_public embd.h embd/frame.h embd/batch.h embd/stream.h embd/codec.h
                        embd/codec_stream.h embd/openai.h embd/tokmap.h)
  set(_upper "")
  foreach(_d wire codec json)
    file(GLOB _h RELATIVE ${PROJECT_SOURCE_DIR}/src/${_d} ${PROJECT_SOURCE_DIR}/src/${_d}/*.h)
    list(APPEND _upper ${_h})
  endforeach()
  file(GLOB_RECURSE _files ${PROJECT_SOURCE_DIR}/src/core/*.[ch] ${PROJECT_SOURCE_DIR}/src/arch/*.[ch])
  foreach(_f IN LISTS _files)
    file(STRINGS ${_f} _incs REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(_i IN LISTS _incs)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*" "\\1" _name "${_i}")
      get_filename_component(_base "${_name}" NAME)
      if(_name IN_LIST _forbidden_public OR _base IN_LIST _upper)
        file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${_f})
        message(FATAL_ERROR "embd layers: ${_rel} includes ${_name}: the kernel layer "
                            "(src/core, src/arch) must not see wire, codec or JSON headers")
      endif()
    endforeach()
  endforeach()
endfunction()
