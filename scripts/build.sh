#!/usr/bin/env bash
# Configures (once) and builds SparStencil in build/ (override with SPARSTENCIL_BUILD_DIR).
# Arguments are build targets; none builds everything. Extra CMake options can be given
# in SPARSTENCIL_CMAKE_ARGS (for example -DKokkos_ROOT=/path/to/kokkos).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SPARSTENCIL_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${SPARSTENCIL_CMAKE_ARGS:-} > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; echo "build: CMake configuration failed" >&2; exit 1; }
grep -E "^-- SparStencil" "$build.configure.log" || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" --parallel "$jobs" "${targets[@]}"
