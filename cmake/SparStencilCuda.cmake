# The CUDA sparse tensor-core executor has its own raw API (device pointers, strides,
# cudaStream_t) and needs no Kokkos, so it is built whenever a CUDA compiler is present,
# even against a host-only Kokkos: that is how CI, which has nvcc but no GPU, proves the
# CUDA code compiles. Asking for it without a CUDA compiler is an error.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
   AND EXISTS "/usr/local/cuda/bin/nvcc")
  set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc" CACHE FILEPATH "CUDA compiler")
endif()
check_language(CUDA)
set(_sparstencil_cuda_default OFF)
if(CMAKE_CUDA_COMPILER)
  set(_sparstencil_cuda_default ON)
endif()
option(SparStencil_ENABLE_CUDA_SPTC "Build the CUDA sparse tensor-core executor"
       ${_sparstencil_cuda_default})
if(SparStencil_ENABLE_CUDA_SPTC)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "SparStencil_ENABLE_CUDA_SPTC=ON but no CUDA compiler was found "
                        "(set CMAKE_CUDA_COMPILER or CUDACXX)")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Sparse tensor cores: Ampere (sm_80) and Hopper (sm_90).
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
endif()
message(STATUS "SparStencil: CUDA sparse tensor-core executor ${SparStencil_ENABLE_CUDA_SPTC}")
if(SparStencil_KOKKOS_HAS_CUDA AND NOT SparStencil_ENABLE_CUDA_SPTC)
  message(STATUS "SparStencil: Kokkos has CUDA but the sparse executor is off; "
                 "CUDA Views run on the generic executor")
endif()

# The dense matrix-core backend's executor, one source for both vendors: built with nvcc
# where CUDA is enabled; built with hipcc, the C++ compiler of a Kokkos with HIP, for
# Kokkos' AMD architecture where Kokkos has HIP (HIP Views then dispatch to it); and where
# neither, compiled for gfx90a wherever hipcc is (a check: the object is built, nothing
# links it).
include(CMakeDependentOption)
cmake_dependent_option(SparStencil_ENABLE_DENSE_HIP "Build the dense matrix-core executor with HIP (Kokkos with HIP)" ON
                       "SparStencil_KOKKOS_HAS_HIP" OFF)
cmake_dependent_option(SparStencil_ENABLE_DENSE_CUDA "Build the dense matrix-core executor with CUDA" ON
                       "SparStencil_ENABLE_CUDA_SPTC;NOT SparStencil_ENABLE_DENSE_HIP" OFF)
find_program(SparStencil_HIPCC hipcc)
set(_sparstencil_hip_default OFF)
if(SparStencil_HIPCC AND NOT SparStencil_ENABLE_DENSE_HIP)
  set(_sparstencil_hip_default ON)
endif()
option(SparStencil_HIP_COMPILE_CHECK "Compile the dense executor for AMD gfx90a with hipcc" ${_sparstencil_hip_default})
if(SparStencil_HIP_COMPILE_CHECK AND NOT SparStencil_HIPCC)
  message(FATAL_ERROR "SparStencil_HIP_COMPILE_CHECK=ON but hipcc was not found")
endif()
message(STATUS "SparStencil: dense executor CUDA ${SparStencil_ENABLE_DENSE_CUDA}, HIP ${SparStencil_ENABLE_DENSE_HIP}, "
               "HIP compile check ${SparStencil_HIP_COMPILE_CHECK}")
