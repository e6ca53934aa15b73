#!/usr/bin/env bash
# Copies what scripts/gpu_suite.sh runs from a CUDA build into a small folder of the same
# layout, stripped, to carry to the GPU machine (docs/GPU.md):
#   bash scripts/gpu_carry.sh BUILD_DIR DEST      then there: bash scripts/gpu_suite.sh DEST
set -euo pipefail
build=${1:?usage: gpu_carry.sh BUILD_DIR DEST}
dest=${2:?usage: gpu_carry.sh BUILD_DIR DEST}
programs=(unit_tests/sparstencil_unit_tests unit_tests/sparstencil_cuda_tests examples/heat2d
          examples/gray_scott examples/wave perf_tests/sparstencil_bench_gray_scott
          perf_tests/sparstencil_bench_calls perf_tests/sparstencil_bench_suite
          perf_tests/sparstencil_bench_generic perf_tests/sparstencil_bench_sparse
          perf_tests/sparstencil_bench_compute_bound perf_tests/sparstencil_bench_temporal)
# The MPI programs, where the build has them (SparStencil_ENABLE_MPI).
for program in unit_tests/mpi/sparstencil_mpi_tests perf_tests/sparstencil_bench_distributed examples/heat_mpi; do
  [ -x "$build/$program" ] && programs+=("$program")
done
rm -rf "$dest"
for program in "${programs[@]}"; do
  if [ ! -x "$build/$program" ]; then
    echo "gpu_carry: $build/$program is not built" >&2
    exit 1
  fi
  mkdir -p "$dest/$(dirname "$program")"
  strip -o "$dest/$program" "$build/$program"
done
mkdir -p "$dest/share/sparstencil"
cp "$build/share/sparstencil/stencils.json" "$dest/share/sparstencil/"
# The unit tests' data (SPARSTENCIL_TEST_DATA, which gpu_suite.sh sets).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cp -r "$root/unit_tests/data" "$dest/unit_tests/"
du -sh "$dest"
