#!/usr/bin/env bash
# The whole test suite: install what is missing, build everything, run ctest; then the
# host suite on Kokkos 4.6.01 with OpenMP, and again with Threads, C++20 and deprecated
# code off, where ../shared/vendor has its source (scripts/test_vendored_kokkos.sh;
# SPARSTENCIL_VENDORED=0 skips both); then the host suite again under AddressSanitizer and UndefinedBehaviorSanitizer,
# with the fuzz targets (scripts/sanitize.sh, docs/TESTING.md; SPARSTENCIL_SANITIZE=0 skips
# it). GPU tests skip, saying why, on machines without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SPARSTENCIL_BUILD_DIR:-$root/build}
stage_start=$SECONDS
took() { echo "== $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }  # CI's time, a stage at a time
"$root/scripts/setup.sh"
export SPARSTENCIL_REQUIRE_FORMAT_CHECK=1  # setup installed clang-format 14: the layout check runs
"$root/scripts/build.sh"
took "setup and the main build"
cd "$build"
ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)"
took "the main ctest"
total() { ctest --test-dir "$1" -N | sed -n 's/^Total Tests: //p'; }
openmp_build=${SPARSTENCIL_OPENMP_BUILD_DIR:-$root/build-openmp}
threads_build=${SPARSTENCIL_THREADS_BUILD_DIR:-$root/build-threads}
vendored=""
if [ "${SPARSTENCIL_VENDORED:-1}" != 0 ]; then
  echo "== the host suite on Kokkos 4.6.01, OpenMP, C++20 (scripts/test_vendored_kokkos.sh)"
  SPARSTENCIL_VENDORED_BACKEND=OpenMP SPARSTENCIL_OPENMP_BUILD_DIR=$openmp_build "$root/scripts/test_vendored_kokkos.sh"
  took "the vendored-Kokkos OpenMP stage"
  [ -f "$openmp_build/CTestTestfile.cmake" ] && vendored=", $(total "$openmp_build") on Kokkos 4.6 OpenMP in $openmp_build"
  echo "== the host suite on Kokkos 4.6.01, Threads, C++20 (scripts/test_vendored_kokkos.sh)"
  SPARSTENCIL_VENDORED_BACKEND=Threads SPARSTENCIL_OPENMP_BUILD_DIR=$threads_build "$root/scripts/test_vendored_kokkos.sh"
  took "the vendored-Kokkos Threads stage"
  [ -f "$threads_build/CTestTestfile.cmake" ] &&
    vendored+=", $(total "$threads_build") on Kokkos 4.6 Threads in $threads_build"
fi
if [ "${SPARSTENCIL_SANITIZE:-1}" = 0 ]; then exit 0; fi
echo "== the sanitizer build (scripts/sanitize.sh)"
"$root/scripts/sanitize.sh"
took "the sanitizer stage"
sanitize_build=${SPARSTENCIL_SANITIZE_BUILD_DIR:-$root/build-sanitize}
echo "test.sh: all passed: $(total "$build") tests in $build$vendored, $(total "$sanitize_build") in $sanitize_build"
