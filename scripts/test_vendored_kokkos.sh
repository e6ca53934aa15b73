#!/usr/bin/env bash
# The host suite on today's Kokkos: builds Kokkos 4.6.01 from ../shared/vendor (a host
# parallel backend and Serial, C++20, Kokkos_ENABLE_DEPRECATED_CODE_4=OFF: the API Kokkos 5
# keeps) once, then SparStencil against it as C++20 and runs its ctest suite with two
# threads: the unit, MPI and fuzz-replay tests and the examples. The backend is
# SPARSTENCIL_VENDORED_BACKEND: OpenMP (default; Kokkos in build-kokkos-4.6/, SparStencil in
# build-openmp/) or Threads (build-kokkos-4.6-threads/, build-threads/); Kokkos allows one
# host parallel backend a build.
# The main build covers the rest once (the CUDA and HIP code, the benchmarks' smoke runs,
# the compile-fail, install and layering checks). Where ../shared/vendor is absent (a
# user's clone) it says so and skips.
# Overrides: SPARSTENCIL_VENDOR_DIR, SPARSTENCIL_OPENMP_BUILD_DIR (the SparStencil build, either
# backend), OMP_NUM_THREADS / KOKKOS_NUM_THREADS (the main build's SPARSTENCIL_CMAKE_ARGS are
# not passed on: they name its own Kokkos).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor=${SPARSTENCIL_VENDOR_DIR:-$root/../shared/vendor}
tarball=$vendor/kokkos-4.6.01.tar.xz
if [ ! -f "$tarball" ]; then
  echo "vendored Kokkos: $tarball not found (it comes with ../shared beside the repository): stage skipped"
  exit 0
fi
backend=${SPARSTENCIL_VENDORED_BACKEND:-OpenMP}
case $backend in
  OpenMP) kokkos=$root/build-kokkos-4.6 default_build=$root/build-openmp ;;
  Threads) kokkos=$root/build-kokkos-4.6-threads default_build=$root/build-threads ;;
  *) echo "vendored Kokkos: SPARSTENCIL_VENDORED_BACKEND=$backend is neither OpenMP nor Threads" >&2; exit 1 ;;
esac
backend_upper=$(echo "$backend" | tr '[:lower:]' '[:upper:]')
jobs=$(nproc 2>/dev/null || echo 2)
install=$kokkos/install
if [ ! -f "$install/.complete" ]; then
  echo "== Kokkos 4.6.01 ($backend, Serial, C++20, deprecated code off) into $install"
  rm -rf "$kokkos"
  mkdir -p "$kokkos"
  tar -xJf "$tarball" -C "$kokkos"
  cmake -S "$kokkos/kokkos-4.6.01" -B "$kokkos/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
    -DCMAKE_INSTALL_PREFIX="$install" "-DKokkos_ENABLE_$backend_upper=ON" -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_DEPRECATED_CODE_4=OFF -DKokkos_ENABLE_TESTS=OFF > "$kokkos/configure.log" 2>&1 \
    || { cat "$kokkos/configure.log"; echo "vendored Kokkos: configuration failed" >&2; exit 1; }
  cmake --build "$kokkos/build" --parallel "$jobs" > "$kokkos/build.log" 2>&1 \
    || { tail -50 "$kokkos/build.log"; echo "vendored Kokkos: build failed" >&2; exit 1; }
  cmake --install "$kokkos/build" > /dev/null
  rm -rf "$kokkos/build" "$kokkos/kokkos-4.6.01"
  touch "$install/.complete"
fi

build=${SPARSTENCIL_OPENMP_BUILD_DIR:-$default_build}
echo "== SparStencil on Kokkos 4.6.01 ($backend, C++20) in $build"
# The generic executor prebuilt for the parallel backend alone: the tests' spaces here
# (default and default host) are that backend's; the main build covers Serial's instances.
SPARSTENCIL_BUILD_DIR=$build SPARSTENCIL_CMAKE_ARGS="-DKokkos_ROOT=$install -DCMAKE_CXX_STANDARD=20 \
  -DSparStencil_ETI_SPACES=$backend -DSparStencil_ENABLE_CUDA_SPTC=OFF -DSparStencil_HIP_COMPILE_CHECK=OFF -DSparStencil_ENABLE_PERFTESTS=OFF \
  -DSparStencil_ENABLE_BUILD_TESTS=OFF" \
  "$root/scripts/build.sh"
cd "$build"
# Two threads a test process, two processes at once on CI's two cores: passive waiting, so
# that a process whose threads lost their core sleeps instead of spinning.
# (Kokkos::Threads: two threads a process through KOKKOS_NUM_THREADS; its threads spin
# while waiting, so they are at most the cores.)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
export KOKKOS_NUM_THREADS=${KOKKOS_NUM_THREADS:-2}
ctest --output-on-failure --parallel "$jobs"
