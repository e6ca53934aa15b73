cmake_minimum_required(VERSION 3.20)
# Every tracked C++ source is as .clang-format lays it out. clang-format's layout differs
# from one major version to the next, so the check runs with the version the style was
# applied with (14, Debian bookworm's: scripts/setup.sh installs it) and otherwise says it
# skipped, as it does outside a git checkout. Fails naming each file to reformat
# (`clang-format -i FILE`, CONTRIBUTING.md). Where the environment sets
# SPARSTENCIL_REQUIRE_FORMAT_CHECK=1 (scripts/test.sh, which installs clang-format 14 first),
# a reason to skip is a failure instead.
# Run: cmake -DSOURCE_DIR=<repo> -P check_format.cmake
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "format: pass -DSOURCE_DIR=<repository root>")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)
set(wanted_major 14)
# Says why the check cannot run: skipped, or where it must run, failed.
function(cannot_check why)
  if("$ENV{SPARSTENCIL_REQUIRE_FORMAT_CHECK}" STREQUAL "1")
    message(FATAL_ERROR "format: cannot check (SPARSTENCIL_REQUIRE_FORMAT_CHECK=1): ${why}")
  endif()
  message("format: skipped: ${why}")
endfunction()

if(NOT EXISTS "${SOURCE_DIR}/.git")
  cannot_check("not a git checkout (${SOURCE_DIR}/.git absent)")
  return()
endif()
find_package(Git QUIET)
if(NOT GIT_FOUND)
  cannot_check("git not found")
  return()
endif()
find_program(CLANG_FORMAT NAMES clang-format-${wanted_major} clang-format)
if(NOT CLANG_FORMAT)
  cannot_check("clang-format ${wanted_major} not found (apt-get install clang-format)")
  return()
endif()
execute_process(COMMAND "${CLANG_FORMAT}" --version OUTPUT_VARIABLE version RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT version MATCHES "version ${wanted_major}\\.")
  cannot_check("${CLANG_FORMAT} is '${version}', not version ${wanted_major} (layouts differ by version)")
  return()
endif()

execute_process(
  COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" ls-files -- "*.hpp" "*.cpp" "*.h" "*.cu" "*.cuh"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE files
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "format: git ls-files failed in ${SOURCE_DIR} (exit ${rc}): ${err}")
endif()
string(STRIP "${files}" files)
string(REPLACE "\n" ";" files "${files}")
set(unformatted "")
set(checked 0)
foreach(file IN LISTS files)
  # A file deleted but not yet committed is still listed.
  if(NOT EXISTS "${SOURCE_DIR}/${file}")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  execute_process(COMMAND "${CLANG_FORMAT}" --style=file --dry-run --Werror "${file}"
                  WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND unformatted "${file}")
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "format: git ls-files listed no C++ source in ${SOURCE_DIR}")
endif()
if(unformatted)
  list(LENGTH unformatted count)
  list(JOIN unformatted "\n  " shown)
  message(FATAL_ERROR "format: ${count} of ${checked} file(s) are not as .clang-format lays them out "
                      "(run clang-format -i on each):\n  ${shown}")
endif()
message("format: ok (${checked} files as .clang-format lays them out, ${version})")
