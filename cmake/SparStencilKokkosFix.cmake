# Debian's Kokkos 3.4 (libtrilinos-kokkos-dev) declares Kokkos::kokkos with the include
# directory <prefix>/include, which does not exist (the headers live in include/trilinos),
# and CMake rejects a missing include directory at generate time. Point it at
# Kokkos_INCLUDE_DIRS instead. Used by the build and by the installed package config.
if(TARGET Kokkos::kokkos)
  get_target_property(_sparstencil_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_sparstencil_kokkos_inc_ok TRUE)
  foreach(_dir IN LISTS _sparstencil_kokkos_inc)
    if(NOT _dir MATCHES "^\\$<" AND NOT EXISTS "${_dir}")
      set(_sparstencil_kokkos_inc_ok FALSE)
    endif()
  endforeach()
  if(NOT _sparstencil_kokkos_inc_ok AND Kokkos_INCLUDE_DIRS)
    set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                 "${Kokkos_INCLUDE_DIRS}")
  endif()
endif()
