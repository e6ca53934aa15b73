# Sanitizers and fuzzing (docs/TESTING.md).
#
# SparStencil_SANITIZE: a -fsanitize= list (for example address,undefined) for every C++
# target of the build; any finding stops the program (-fno-sanitize-recover), so a test
# that meets undefined behaviour fails.
#
# SparStencil_ENABLE_FUZZING: fuzz the parsers (unit_tests/fuzz) for SparStencil_FUZZ_SECONDS
# each as ctest tests: with libFuzzer where the compiler is Clang and has it, else with the
# seeded random driver (unit_tests/fuzz/fuzz_driver.cpp). SparStencil_FUZZ_LIBFUZZER says
# which.
set(SparStencil_SANITIZE "" CACHE STRING "Sanitizers to build with (-fsanitize=...), e.g. address,undefined")
option(SparStencil_ENABLE_FUZZING "Fuzz the parsers as ctest tests (unit_tests/fuzz)" OFF)
set(SparStencil_FUZZ_SECONDS 60 CACHE STRING "Seconds each fuzz test runs")

if(SparStencil_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "SparStencil_SANITIZE needs GCC or Clang (found ${CMAKE_CXX_COMPILER_ID})")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${SparStencil_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=${SparStencil_SANITIZE})
  message(STATUS "SparStencil: sanitizers ${SparStencil_SANITIZE} (findings fatal)")
endif()

set(SparStencil_FUZZ_LIBFUZZER OFF)
if(SparStencil_ENABLE_FUZZING AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer")
  check_cxx_source_compiles([=[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
  ]=] SparStencil_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  set(SparStencil_FUZZ_LIBFUZZER ${SparStencil_HAVE_LIBFUZZER})
endif()
if(SparStencil_ENABLE_FUZZING)
  if(SparStencil_FUZZ_LIBFUZZER)
    message(STATUS "SparStencil: fuzzing with libFuzzer, ${SparStencil_FUZZ_SECONDS} s a target")
  else()
    message(STATUS "SparStencil: fuzzing with the random driver (no Clang with libFuzzer), "
                   "${SparStencil_FUZZ_SECONDS} s a target")
  endif()
endif()
