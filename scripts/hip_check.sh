#!/usr/bin/env bash
# Builds SparStencil against a Kokkos with HIP and runs its dense dispatch tests: the dense
# executor built with hipcc for Kokkos' AMD architecture, the front-end's dispatch of
# Kokkos::HIP Views to it compiled and linked (docs/DENSE.md). The tests run where the
# machine has an AMD GPU (they skip, saying why, on one other than gfx90a); without one
# (no /dev/kfd) Kokkos cannot start, and the script says they were built, not run.
#   bash scripts/hip_check.sh KOKKOS_HIP_ROOT [BUILD_DIR]
# KOKKOS_HIP_ROOT: a Kokkos 4.x install built with Kokkos_ENABLE_HIP (hipcc as its compiler).
set -euo pipefail
kokkos=${1:?usage: hip_check.sh KOKKOS_HIP_ROOT [BUILD_DIR]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${2:-$root/build-hip}
command -v hipcc > /dev/null || { echo "hip_check: hipcc not found" >&2; exit 1; }
# Sources Kokkos' flags do not reach (core, planner) are compiled as HIP too: name their
# architecture, or hipcc probes for a GPU.
export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-gfx90a}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=hipcc -DKokkos_ROOT="$kokkos" \
      -DSparStencil_ENABLE_CUDA_SPTC=OFF > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; echo "hip_check: CMake configuration failed" >&2; exit 1; }
grep -E "^-- SparStencil" "$build.configure.log"
grep -q "^#define SPARSTENCIL_ENABLE_DENSE_HIP" "$build/include/SparStencil_Config.hpp" \
  || { echo "hip_check: $kokkos is not a Kokkos with HIP (the dense executor's HIP build is off)" >&2; exit 1; }
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)" --target sparstencil_dense_dispatch_tests
tests="$build/unit_tests/sparstencil_dense_dispatch_tests"
if [ -e /dev/kfd ]; then
  "$tests"
else
  echo "hip_check: built $tests; not run: no AMD GPU here (/dev/kfd missing)"
fi
