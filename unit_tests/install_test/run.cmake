# Installs the build into a scratch prefix, configures and builds the consumer project
# against it, and runs the consumer. Arguments: BUILD_DIR WORK_DIR SOURCE_DIR Kokkos_DIR CXX,
# and HIDE_CUDA: configure the consumer as on a machine without the CUDA toolkit (a build on a
# host-only Kokkos must not need it, whatever executors it built for their raw APIs).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "install test step failed (${status}): ${ARGN}")
  endif()
endfunction()
run_step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
set(hide "")
if(HIDE_CUDA)
  set(hide -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE)
  message(STATUS "install test: the consumer configured without a CUDA toolkit")
endif()
run_step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -DCMAKE_BUILD_TYPE=Release
         "-DCMAKE_PREFIX_PATH=${prefix}" "-DKokkos_DIR=${Kokkos_DIR}" "-DCMAKE_CXX_COMPILER=${CXX}" ${hide})
run_step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("${WORK_DIR}/build/consumer")
