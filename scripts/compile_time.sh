#!/usr/bin/env bash
# Times what a user's translation unit costs to compile: perf_tests/compile_time.cpp (one
# StencilPlan for float 2-D Views, one for half_t 3-D Views, apply and iterate on both),
# compiled and linked in a configured build folder (default build/) after the libraries it
# links are built. Prints wall and CPU seconds and peak memory; figures: perf_tests/RESULTS.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build" --parallel "$jobs" --target sparstencil_generic > /dev/null 2>&1 || true  # absent without ETI
cmake --build "$build" --parallel "$jobs" --target sparstencil_planner > /dev/null
object=$(find "$build/perf_tests" -path "*sparstencil_compile_time.dir*" -name "compile_time.cpp.o" 2>/dev/null | head -1)
[ -n "$object" ] && rm -f "$object"
/usr/bin/time -f "compile_time.cpp: %e s wall, %U s user + %S s system, %M KB peak" \
  cmake --build "$build" --target sparstencil_compile_time > /dev/null
