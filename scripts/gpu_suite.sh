#!/usr/bin/env bash
# The GPU test suite and the benchmarks in one call on a CUDA machine:
#   bash scripts/gpu_suite.sh [BUILD_DIR]        (default: build-cuda)
# BUILD_DIR is a build configured against a Kokkos with CUDA (docs/GPU.md), made on the
# development machine and carried to the GPU machine. Shared libraries that machine
# lacks (Debian's libbenchmark, libpng) may travel in .devlibs/. Logs, the benchmark
# JSON and the demo's image go to $OUT (or /tmp/sparstencil-gpu); a table comes last.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-cuda}
out=${OUT:-/tmp/sparstencil-gpu}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unit="$build/unit_tests/sparstencil_unit_tests"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
summary=()
failed=0
step() {  # step NAME COMMAND...: runs, logs to $out/NAME.log, shows its last lines
  local name=$1
  shift
  echo "== $name: $*"
  local start=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$out/$name.log"
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - start))")")
  [ "$rc" -eq 0 ] || failed=1
}

# Every unit test (GPU configurations included when Kokkos has CUDA); compile-fail and
# install tests need the compilers and run on the development machine instead.
# (The command-line tests are host tests: they find the CLI by its build path. CI runs them.)
step unit "$unit" --gtest_filter='-Cli.*'
# Kokkos dispatch to the sparse executor, under memcheck too.
step dispatch-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$unit" --gtest_filter='SparseDispatch.*' 
step cuda "$build/unit_tests/sparstencil_cuda_tests"
# compute-sanitizer on a reduced set: the Cuda configurations of the executor tests.
reduced='GenericExecutor/0.EveryPreset*:GenericExecutor/0.Strided*:GenericExecutor/1.Fused*:GenericExecutor/2.Iterate*:GenericExecutor/2.EveryVariant*'
step memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$unit" --gtest_filter="$reduced"
step racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$unit" --gtest_filter="$reduced"
# ... and of the sparse executor: strided and odd grids, the catalogue, fused presets.
sparse_reduced='SparseExecutor.StridedGrids:SparseExecutor.CatalogueStencils:SparseExecutor.FusedPresets:SparseExecutor.ClearErrors'
step sp-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$sparse_reduced"
step sp-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$sparse_reduced"
step demo "$build/examples/heat2d" --n 8192 --steps 200 --png "$out/heat2d.png"
step sparse-bench "$build/perf_tests/sparstencil_bench_sparse" --sizes=paper ${SPARSE_BENCH_ARGS:-} \
  --json="$out/bench_sparse.json"
step bench "$build/perf_tests/sparstencil_bench_generic" --sizes=paper --benchmark_min_time=0.2 \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if [ -f "$out/bench.json" ]; then
  echo "== sparse executor"
  grep -E "GStencil/s|roofline:" "$out/sparse-bench.log"
  echo "== generic executor"
  python3 - "$out/bench.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
print(f"{'benchmark':<26}{'ms':>9}{'GStencil/s':>12}{'roofline':>10}{'%':>7}  variant")
for r in runs:
    name = r["name"].replace("/manual_time", "")
    if name.startswith("Copy/"):
        print(f"{name:<26}{r['real_time']:>9.3f}   copy {r['TB/s']:.3f} TB/s (read + write)")
        continue
    print(f"{name:<26}{r['real_time']:>9.3f}{r['GStencil/s']:>12.1f}"
          f"{r.get('roofline GStencil/s', 0):>10.1f}{r.get('% roofline', 0):>7.1f}"
          f"  {r.get('label', '').split('generic: ')[-1]}")
PY
fi
exit $failed
