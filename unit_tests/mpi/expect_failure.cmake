# Runs COMMAND (a list) with ENVIRONMENT (NAME=value list), which must fail within 60 s
# having printed the failing rank's line. cmake -DCOMMAND=... -DENVIRONMENT=... -P this
set(limit 60)
string(TIMESTAMP begin "%s")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENVIRONMENT} ${COMMAND}
                TIMEOUT ${limit} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${begin}")
message("${out}${err}")
if(result MATCHES "timeout|Timeout")
  message(FATAL_ERROR "rank failure: the job hung (still running after ${limit} s)")
elseif(result EQUAL 0)
  message(FATAL_ERROR "rank failure: the job succeeded although a rank exited")
elseif(NOT "${out}${err}" MATCHES "stops here, the others in iterate")
  message(FATAL_ERROR "rank failure: the failing rank's line is missing (exit ${result})")
endif()
message("rank failure: the job ended with exit ${result} after ${seconds} s")
