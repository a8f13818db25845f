# Per-ISA kernel files: each src/arch/<arch>/ file is compiled with its own -m flags
# (simde and the intrinsics headers only emit native instructions when the compiler's
# flags say so; a target attribute silently gives the portable emulation). Each flag set
# is probed with a small compile test and skipped, loudly, when the compiler cannot
# build it. Everything else stays at the baseline ISA (src/core/internal.h enforces that).
include(CheckCSourceCompiles)

set(EMBD_KERNEL_CFLAGS -falign-functions=64 -falign-loops=64)

function(_embd_probe var flags code)
  set(CMAKE_REQUIRED_FLAGS "${flags}")
  check_c_source_compiles("${code}" ${var})
endfunction()

# embd_kernel_family(NAME <def> FLAGS <flags> SOURCES <files>): one ISA family.
macro(_embd_family target def flags)
  set(_srcs ${ARGN})
  set(_f ${flags})
  separate_arguments(_f)
  list(APPEND _f ${EMBD_KERNEL_CFLAGS})
  set_source_files_properties(${_srcs} PROPERTIES
    COMPILE_OPTIONS "${_f}"
    COMPILE_DEFINITIONS "EMBD_KERNEL_FILE")
  target_sources(${target} PRIVATE ${_srcs})
  target_compile_definitions(${target} PRIVATE ${def})
  list(APPEND EMBD_KERNELS_BUILT ${def})
endmacro()

# simde (header-only, architecture-independent) for the NEON kernels written against its
# API. A cross compiler does not search the host's /usr/include, and putting all of it on
# a cross compile's path would mix in host headers: the kernel files get a directory that
# holds only a link to simde.
function(_embd_find_simde out)
  find_path(EMBD_SIMDE_INCLUDE simde/arm/neon.h NO_CMAKE_FIND_ROOT_PATH)
  if(NOT EMBD_SIMDE_INCLUDE)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  set(_dir ${CMAKE_BINARY_DIR}/embd-simde-include)
  if(NOT EXISTS ${_dir}/simde)
    file(MAKE_DIRECTORY ${_dir})
    file(CREATE_LINK ${EMBD_SIMDE_INCLUDE}/simde ${_dir}/simde SYMBOLIC)
  endif()
  set(${out} ${_dir} PARENT_SCOPE)
endfunction()

function(embd_add_kernels target)
  set(EMBD_KERNELS_BUILT "")
  if(NOT EMBD_SIMD)
    set(EMBD_KERNELS_BUILT "scalar only (EMBD_SIMD=OFF)" PARENT_SCOPE)
    return()
  endif()
  set(_p ${PROJECT_SOURCE_DIR}/src/arch)
  _embd_find_simde(_simde)
  if(NOT _simde)
    message(WARNING "embd: simde (simde/arm/neon.h) not found: the NEON bswap kernel is skipped")
  endif()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(EMBD_FLAGS_SSE42 "-mssse3 -msse4.2 -mpclmul")
    set(EMBD_FLAGS_AVX2 "-mssse3 -msse4.2 -mpclmul -mavx2 -mbmi2 -mvpclmulqdq")
    set(EMBD_FLAGS_AVX512 "-mssse3 -msse4.2 -mpclmul -mavx2 -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512vbmi -mvpclmulqdq")
    _embd_probe(EMBD_CC_SSE42 "${EMBD_FLAGS_SSE42}"
      "#include <immintrin.h>\nint main(void){__m128i a=_mm_setzero_si128();a=_mm_clmulepi64_si128(a,a,0);a=_mm_shuffle_epi8(a,a);return _mm_extract_epi32(a,0);}")
    _embd_probe(EMBD_CC_AVX2 "${EMBD_FLAGS_AVX2}"
      "#include <immintrin.h>\nint main(void){__m256i a=_mm256_setzero_si256();a=_mm256_clmulepi64_epi128(a,a,0);a=_mm256_shuffle_epi8(a,a);return _mm256_extract_epi32(a,0);}")
    _embd_probe(EMBD_CC_AVX512 "${EMBD_FLAGS_AVX512}"
      "#include <immintrin.h>\nint main(void){__m512i a=_mm512_setzero_si512();a=_mm512_clmulepi64_epi128(a,a,0);a=_mm512_permutexvar_epi8(a,a);return _mm_cvtsi128_si32(_mm512_castsi512_si128(a));}")
    if(EMBD_CC_SSE42)
      set(_sse42_srcs ${_p}/x86/crc32_pclmul.c ${_p}/x86/bswap_ssse3.c ${_p}/x86/base64_sse42.c
        ${_p}/x86/convert_sse42.c ${_p}/x86/floatarray_sse42.c)
      if(_simde)
        # The NEON kernels through simde: SSSE3 code, registered as "neon-simde".
        list(APPEND _sse42_srcs ${_p}/arm/bswap_neon.c ${_p}/arm/base64_neon.c
          ${_p}/arm/convert_neon.c)
        set_source_files_properties(${_p}/arm/bswap_neon.c ${_p}/arm/base64_neon.c
          ${_p}/arm/convert_neon.c PROPERTIES INCLUDE_DIRECTORIES ${_simde})
        target_compile_definitions(${target} PRIVATE EMBD_HAVE_NEON_SIMDE)
      endif()
      _embd_family(${target} EMBD_HAVE_X86_SSE42 "${EMBD_FLAGS_SSE42}" ${_sse42_srcs})
    else()
      message(WARNING "embd: compiler cannot build the sse42 tier; skipped")
    endif()
    if(EMBD_CC_AVX2)
      set(_avx2_srcs ${_p}/x86/crc32_vpclmul_avx2.c ${_p}/x86/crc32_pclmul_avx2.c
        ${_p}/x86/bswap_avx2.c ${_p}/x86/base64_avx2.c ${_p}/x86/floatarray_avx2.c)
      if(_simde)
        # The avx512 CRC-32 and base64 kernels through simde's AVX-512 emulation (AVX2 code,
        # the CRC one with VPCLMULQDQ), registered as "avx512-simde" and never picked: the
        # tests run the avx512 kernels' logic on CPUs without AVX-512.
        foreach(_sim crc32_vpclmul_avx512_simde:CRC32 base64_avx512_simde:B64)
          string(REPLACE ":" ";" _sim "${_sim}")
          list(GET _sim 0 _sim_file)
          list(GET _sim 1 _sim_def)
          list(APPEND _avx2_srcs ${_p}/x86/${_sim_file}.c)
          set_source_files_properties(${_p}/x86/${_sim_file}.c PROPERTIES INCLUDE_DIRECTORIES ${_simde})
          target_compile_definitions(${target} PRIVATE EMBD_HAVE_${_sim_def}_AVX512_SIMDE)
        endforeach()
      endif()
      _embd_family(${target} EMBD_HAVE_X86_AVX2 "${EMBD_FLAGS_AVX2}" ${_avx2_srcs})
      # The avx2 conversion kernel also needs F16C (vcvtph2ps / vcvtps2ph). Not in the
      # avx2 tier's flags: every file of a tier may use every flag of the tier anywhere
      # (src/core/cpu.c), and the tier must stay runnable on an AVX2 CPU or EMBD_ISA
      # spec without F16C. So -mf16c goes to this one file, and its registry row lists
      # EMBD_CPU_F16C as an extra feature (src/core/dispatch.c): without F16C the
      # sse42 conversion kernel runs instead.
      _embd_probe(EMBD_CC_AVX2_F16C "${EMBD_FLAGS_AVX2} -mf16c"
        "#include <immintrin.h>\nint main(void){__m256 f=_mm256_cvtph_ps(_mm_setzero_si128());return _mm_extract_epi16(_mm256_cvtps_ph(f,0),0);}")
      if(EMBD_CC_AVX2_F16C)
        set(_f16c_srcs ${_p}/x86/convert_avx2.c)
        if(_simde)
          # The avx512 conversion kernels through simde's AVX-512 emulation (AVX2 + F16C
          # code), registered as "avx512-simde" and never picked: the tests run the
          # avx512 kernels' logic on CPUs without AVX-512 (convert_avx512_simde.c).
          list(APPEND _f16c_srcs ${_p}/x86/convert_avx512_simde.c)
          set_source_files_properties(${_p}/x86/convert_avx512_simde.c
            PROPERTIES INCLUDE_DIRECTORIES ${_simde})
          target_compile_definitions(${target} PRIVATE EMBD_HAVE_AVX512_SIMDE)
        endif()
        _embd_family(${target} EMBD_HAVE_X86_AVX2_F16C "${EMBD_FLAGS_AVX2} -mf16c" ${_f16c_srcs})
      else()
        message(WARNING "embd: compiler cannot build -mf16c; the avx2 convert kernel is skipped")
      endif()
    else()
      message(WARNING "embd: compiler cannot build the avx2 tier; skipped")
    endif()
    if(EMBD_CC_AVX512)
      _embd_family(${target} EMBD_HAVE_X86_AVX512 "${EMBD_FLAGS_AVX512}"
        ${_p}/x86/crc32_vpclmul_avx512.c ${_p}/x86/bswap_avx512.c ${_p}/x86/base64_avx512.c
        ${_p}/x86/convert_avx512.c)
    else()
      message(WARNING "embd: compiler cannot build the avx512 tier; skipped")
    endif()
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(EMBD_FLAGS_ARM_CRC "-march=armv8-a+crc")
    set(EMBD_FLAGS_ARM_PMULL "-march=armv8-a+crc+crypto")
    _embd_probe(EMBD_CC_ARM_CRC "${EMBD_FLAGS_ARM_CRC}"
      "#include <arm_acle.h>\nint main(void){return (int)__crc32d(0,1);}")
    _embd_probe(EMBD_CC_ARM_PMULL "${EMBD_FLAGS_ARM_PMULL}"
      "#include <arm_neon.h>\n#include <arm_acle.h>\nint main(void){poly128_t p=vmull_p64(1,2);return (int)__crc32d(0,(uint64_t)vgetq_lane_u64(vreinterpretq_u64_p128(p),0));}")
    # NEON (ASIMD) is part of the aarch64 baseline: this family needs no flags and is
    # always built (given simde).
    if(_simde)
      set_source_files_properties(${_p}/arm/bswap_neon.c ${_p}/arm/base64_neon.c
        ${_p}/arm/convert_neon.c PROPERTIES INCLUDE_DIRECTORIES ${_simde})
      _embd_family(${target} EMBD_HAVE_ARM_NEON "" ${_p}/arm/bswap_neon.c ${_p}/arm/base64_neon.c
        ${_p}/arm/convert_neon.c)
    endif()
    if(EMBD_CC_ARM_CRC)
      _embd_family(${target} EMBD_HAVE_ARM_CRC32 "${EMBD_FLAGS_ARM_CRC}"
        ${_p}/arm/crc32_armv8.c)
    endif()
    if(EMBD_CC_ARM_PMULL)
      _embd_family(${target} EMBD_HAVE_ARM_PMULL "${EMBD_FLAGS_ARM_PMULL}"
        ${_p}/arm/crc32_pmull.c)
    endif()
  endif()
  # Any other processor (32-bit ARM "arm"/"armv7l" included, s390x, ...) gets no kernels:
  # the library is scalar there. The ARM kernels are AArch64-only (vmull_p64, __crc32d, and
  # NEON taken for granted), so armhf must not match the aarch64 branch above.
  set(EMBD_KERNELS_BUILT "${EMBD_KERNELS_BUILT}" PARENT_SCOPE)
endfunction()
