cmake_minimum_required(VERSION 3.20)
# History in the repository is keyed by date and commit id (perf_tests/RESULTS.md,
# CHANGELOG.md), never by a count of working periods. Fails printing every tracked line that
# names one with the forbidden word (whole word, any case, singular or plural); the word is
# built from pieces so that this script does not hold it. Outside a git checkout (a source
# tarball) or without git it says it skipped and succeeds.
# Run: cmake -DSOURCE_DIR=<repo> -P check_history_words.cmake
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "history words: pass -DSOURCE_DIR=<repository root>")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)

# .git is a directory in a clone, a file in a worktree or submodule.
if(NOT EXISTS "${SOURCE_DIR}/.git")
  message("history words: skipped: not a git checkout (${SOURCE_DIR}/.git absent)")
  return()
endif()
find_package(Git QUIET)
if(NOT GIT_FOUND)
  message("history words: skipped: not a git checkout (git not found)")
  return()
endif()

set(stem "sess")
set(pattern "${stem}ion|${stem}ions")
# This script, the one file left out (it holds the word's pieces, not the word).
set(self_path "unit_tests/check_history_words.cmake")

execute_process(
  COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" grep -n -i -w -E "${pattern}"
          -- . ":(exclude)${self_path}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE found
  ERROR_VARIABLE err)

# git grep: 0 = lines found, 1 = none, anything else = git could not search.
if(rc EQUAL 1)
  message("history words: ok (no tracked line names one; history goes by date and commit)")
elseif(rc EQUAL 0)
  string(STRIP "${found}" found)
  string(REGEX MATCHALL "\n" newlines "${found}")
  list(LENGTH newlines count)
  math(EXPR count "${count} + 1")
  message("${found}")
  message(FATAL_ERROR
    "history words: ${count} tracked line(s) above name a period of work by the word "
    "matching '${pattern}'; name the date and the commit instead (CONTRIBUTING.md)")
else()
  message(FATAL_ERROR "history words: git grep failed in ${SOURCE_DIR} (exit ${rc}): ${err}")
endif()
