#!/usr/bin/env bash
# The host test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (any
# finding fails its test), the fuzz targets fuzzed SPARSTENCIL_FUZZ_SECONDS (default 60)
# each, and its ctest (docs/TESTING.md). Clang with libFuzzer where installed, else GCC
# and the fuzz driver's random mutations. No CUDA executor, benchmarks, MPI tests (the MPI
# library's own allocations at exit would be LeakSanitizer findings) or build checks
# (compile-fail, install, layering: the normal build runs them). Builds in
# build-sanitize/ (override with SPARSTENCIL_SANITIZE_BUILD_DIR); arguments go to ctest
# (for example -R Catalogue).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SPARSTENCIL_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=$(nproc 2>/dev/null || echo 2)
cc=gcc cxx=g++
debug=-g1  # line tables: findings' stacks name files and lines, at a fraction of -g's build time
for version in "" -14 -15 -16; do
  if command -v "clang++$version" > /dev/null && command -v "clang$version" > /dev/null; then
    cc=clang$version cxx=clang++$version debug=-gline-tables-only
    break
  fi
done
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 $debug" \
      -DSparStencil_ENABLE_CUDA_SPTC=OFF -DSparStencil_ENABLE_PERFTESTS=OFF -DSparStencil_ENABLE_BUILD_TESTS=OFF \
      -DSparStencil_ENABLE_MPI=OFF -DSparStencil_HIP_COMPILE_CHECK=OFF \
      -DSparStencil_SANITIZE=address,undefined -DSparStencil_ENABLE_FUZZING=ON \
      -DSparStencil_FUZZ_SECONDS="${SPARSTENCIL_FUZZ_SECONDS:-60}" > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; echo "sanitize: CMake configuration failed" >&2; exit 1; }
grep -E "^-- SparStencil" "$build.configure.log" || true
cmake --build "$build" --parallel "$jobs"
cd "$build"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# The random-stencil test at 2,000 cases (the normal build runs 10,000): the same code paths,
# in a fifth of the time the instrumented build needs.
export SPARSTENCIL_RANDOM_CASES=${SPARSTENCIL_RANDOM_CASES:-2000}
ctest --output-on-failure --parallel "$jobs" "$@"
