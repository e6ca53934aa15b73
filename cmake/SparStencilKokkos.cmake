# Kokkos is the user's to provide (Kokkos_ROOT). Debian bookworm ships 3.4.01, whose
# version file only accepts requests of the same major version, so a plain
# find_package(Kokkos 3.4) would reject every 4.x and a 4.x request would reject Debian's.
# Ask for any version and check the floor ourselves.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "SparStencil needs Kokkos 3.4 or newer, found ${Kokkos_VERSION}")
endif()
if(Kokkos_VERSION VERSION_GREATER_EQUAL 5.0)
  message(WARNING "Kokkos ${Kokkos_VERSION} requires C++20; SparStencil is tested with 3.4 and 4.x")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/SparStencilKokkosFix.cmake")
kokkos_check(DEVICES CUDA RETURN_VALUE SparStencil_KOKKOS_HAS_CUDA)
kokkos_check(DEVICES HIP RETURN_VALUE SparStencil_KOKKOS_HAS_HIP)
message(STATUS "SparStencil: Kokkos ${Kokkos_VERSION}, devices: ${Kokkos_DEVICES}")
