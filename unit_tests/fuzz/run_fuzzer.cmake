# Runs a libFuzzer target for SECONDS over a scratch copy of its corpus (new inputs go
# there, not into the sources), with the seeds and DICTIONARY (if it exists). A crash
# input is left in WORK/ as crash-<hash> and named in the output, to be fixed and kept in
# the seeds (docs/TESTING.md). Arguments: FUZZER SEEDS WORK SECONDS DICTIONARY.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus")
set(options -max_total_time=${SECONDS} -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
            -artifact_prefix=${WORK}/)
# Inputs as long as the longest seed (libFuzzer's default, 4096 bytes, would cut plans).
set(longest 4096)
file(GLOB seed_files "${SEEDS}/*")
foreach(seed IN LISTS seed_files)
  file(SIZE "${seed}" size)
  if(size GREATER longest)
    set(longest ${size})
  endif()
endforeach()
list(APPEND options -max_len=${longest})
if(EXISTS "${DICTIONARY}")
  list(APPEND options -dict=${DICTIONARY})
endif()
execute_process(COMMAND "${FUZZER}" ${options} "${WORK}/corpus" "${SEEDS}" RESULT_VARIABLE status)
file(GLOB found "${WORK}/crash-*" "${WORK}/timeout-*" "${WORK}/oom-*" "${WORK}/leak-*")
if(NOT status EQUAL 0 OR found)
  message(FATAL_ERROR "fuzz: ${FUZZER} failed (${status}); inputs: ${found}")
endif()
message("fuzz: no crash in ${SECONDS} s")
