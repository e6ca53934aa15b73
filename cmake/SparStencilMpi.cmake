# The MPI front-end (src/mpi): SparStencil_ENABLE_MPI, on where an MPI is found; and how
# tests start ranks: SPARSTENCIL_MPIEXEC (a command prefix before the rank count's value)
# and SPARSTENCIL_MPIEXEC_ENVIRONMENT. OpenMPI refuses more ranks than cores without
# --oversubscribe, and root (CI runs as root) without its two variables.
find_package(MPI COMPONENTS CXX)
option(SparStencil_ENABLE_MPI "Build the MPI front-end, its tests and example" ${MPI_CXX_FOUND})
if(SparStencil_ENABLE_MPI AND NOT MPI_CXX_FOUND)
  message(FATAL_ERROR "SparStencil_ENABLE_MPI is on but no MPI was found")
endif()
message(STATUS "SparStencil: MPI front-end ${SparStencil_ENABLE_MPI}")
if(SparStencil_ENABLE_MPI)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _sparstencil_mpiexec_version ERROR_QUIET)
  set(SPARSTENCIL_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
  set(SPARSTENCIL_MPIEXEC_ENVIRONMENT "")
  if(_sparstencil_mpiexec_version MATCHES "Open MPI|OpenRTE")
    list(APPEND SPARSTENCIL_MPIEXEC_FLAGS --oversubscribe)
    set(SPARSTENCIL_MPIEXEC_ENVIRONMENT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  endif()
endif()
