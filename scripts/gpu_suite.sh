#!/usr/bin/env bash
# The GPU test suite and the benchmark suite in one call on a CUDA machine:
#   bash scripts/gpu_suite.sh [BUILD_DIR]        (default: build-cuda)
#   SUITE_ONLY=1 bash scripts/gpu_suite.sh ...   (the benchmark suite alone)
#   SUITE_ARGS="--groups standard" ...           (arguments for sparstencil_bench_suite)
#   GPU_SUITE_PARTS="unit cuda" ...              (only these parts, space-separated: unit,
#                                                cuda, sanitizers, examples, benchmarks, mpi
#                                                (its sanitizer runs too), suite; a call each
#                                                on the H200: unit; cuda sanitizers examples;
#                                                benchmarks mpi; suite)
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
# cuDNN for the baseline: the system's, else the one a Python wheel (nvidia-cudnn) installed.
if ! ldconfig -p | grep -q libcudnn.so.9; then
  cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
  [ -n "$cudnn_lib" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$cudnn_lib"
fi
unit="$build/unit_tests/sparstencil_unit_tests"
# The unit tests' data where the build was carried with it (scripts/gpu_carry.sh); the
# catalogue is found beside the binaries (share/sparstencil).
[ -d "$build/unit_tests/data" ] && export SPARSTENCIL_TEST_DATA="$build/unit_tests/data"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
summary=()
failed=0
# The part a step belongs to (GPU_SUITE_PARTS), by its name.
part_of() {
  case $1 in
    unit | cuda | suite) echo "$1" ;;
    mpi* | dist* | heat-mpi) echo mpi ;;
    *memcheck | *racecheck) echo sanitizers ;;
    demo | gray-scott | wave) echo examples ;;
    *) echo benchmarks ;;
  esac
}
wanted() { [ -z "${GPU_SUITE_PARTS:-}" ] || [[ " $GPU_SUITE_PARTS " == *" $1 "* ]]; }
for part in ${GPU_SUITE_PARTS:-}; do
  case $part in
    unit | cuda | sanitizers | examples | benchmarks | mpi | suite) ;;
    *)
      echo "gpu_suite: GPU_SUITE_PARTS names '$part'; the parts are unit, cuda, sanitizers, examples, benchmarks, mpi, suite" >&2
      exit 2
      ;;
  esac
done
step() {  # step NAME COMMAND...: runs, logs to $out/NAME.log, shows its last lines
  local name=$1
  shift
  wanted "$(part_of "$name")" || return 0
  echo "== $name: $*"
  local start=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$out/$name.log"
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - start))")")
  [ "$rc" -eq 0 ] || failed=1
}

if [ -z "${SUITE_ONLY:-}" ]; then
# Every unit test (GPU configurations included when Kokkos has CUDA); compile-fail and
# install tests need the compilers and run on the development machine instead.
# (The command-line tests are host tests: they find the CLI by its build path. CI runs them.)
step unit "$unit" --gtest_filter='-Cli.*'
# Kokkos dispatch to the sparse and dense executors, under memcheck too.
step dispatch-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$unit" --gtest_filter='SparseDispatch.*:DenseDispatch.*' 
step cuda "$build/unit_tests/sparstencil_cuda_tests"
# compute-sanitizer on a reduced set: the Cuda configurations of the executor tests.
reduced='GenericExecutor/0.EveryPreset*:GenericExecutor/0.Strided*:GenericExecutor/1.Fused*:GenericExecutor/2.Iterate*:GenericExecutor/2.EveryVariant*:GenericExecutor/3.Temporal*:GenericExecutor/4.StreamingTemporal*:GenericExecutor/5.StreamingTemporal*'
step memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$unit" --gtest_filter="$reduced"
step racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$unit" --gtest_filter="$reduced"
# ... and of the exchanging kernel (float, LayoutLeft), only that kernel instrumented.
exchange_only=(--kernel-name kns=exchange_kernel "$unit" --gtest_filter='GenericExecutor/2.ExchangingTemporal*')
step ex-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "${exchange_only[@]}"
step ex-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "${exchange_only[@]}"
# ... and of the sparse executor: strided and odd grids, the catalogue, fused presets.
sparse_reduced='SparseExecutor.StridedGrids:SparseExecutor.CatalogueStencils:SparseExecutor.FusedPresets:SparseExecutor.ClearErrors:SparseExecutor.InterleavedRowsOnAlignedGrids'
step sp-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$sparse_reduced"
step sp-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$sparse_reduced"
# ... and of the dense executor (where the build has it).
dense_reduced='DenseExecutor.StridedGridsAndAFusedPlan:DenseExecutor.ClearErrors:DenseExecutor.AlignedGridsOfThePresets'
step de-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$dense_reduced"
step de-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$build/unit_tests/sparstencil_cuda_tests" \
  --gtest_filter="$dense_reduced"
step demo "$build/examples/heat2d" --n 8192 --steps 200 --png "$out/heat2d.png"
# Field updates (docs/UPDATES.md): the tests under the sanitizers, the fused Gray-Scott
# update against a copy and a straightforward Kokkos form, and the two examples.
step update-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$unit" --gtest_filter='FieldUpdate*'
step update-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 "$unit" --gtest_filter='FieldUpdate*'
step gray-scott-bench "$build/perf_tests/sparstencil_bench_gray_scott" --n 8192 --launches 100 --repeats 7
step gray-scott "$build/examples/gray_scott" --n 2048 --steps 4000 --png "$out/gray_scott.png"
step wave "$build/examples/wave" --n 2048 --steps 5600 --png "$out/wave.png"
# Compute-bound single steps (15 x 15, 5 x 5 x 5 boxes) against the FMA peak (docs/GENERIC.md).
step compute-bound "$build/perf_tests/sparstencil_bench_compute_bound"
step dense "$build/perf_tests/sparstencil_bench_compute_bound" --dense
# Temporal blocking against single steps on issue 25's cases (docs/GENERIC.md).
step temporal "$build/perf_tests/sparstencil_bench_temporal"
# Host work per call and iterate's wall time against its device time (docs/BENCHMARKS.md).
step calls "$build/perf_tests/sparstencil_bench_calls"
# Grids decomposed over MPI ranks (docs/DISTRIBUTED.md): two ranks sharing the GPU, the MPI
# tests (bit for bit against one domain), under memcheck too, and the overlap benchmark.
if [ -x "$build/unit_tests/mpi/sparstencil_mpi_tests" ] && command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  step mpi mpirun -np 2 "$build/unit_tests/mpi/sparstencil_mpi_tests"
  step mpi-memcheck mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$build/unit_tests/mpi/sparstencil_mpi_tests" --gtest_filter='Distributed.TwoDimensions*:Distributed.Explain*'
  step mpi-racecheck mpirun -np 2 compute-sanitizer --tool racecheck --error-exitcode 3 \
    "$build/unit_tests/mpi/sparstencil_mpi_tests" --gtest_filter='Distributed.Explain*'
  step dist-check mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" --n 8192 --steps 50 --fusion 1 --check
  step dist-check4 mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" --n 8192 --steps 50 --fusion 4 --check
  step distributed mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" --n 8192 --steps 200 --fusion 1
  step distributed4 mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" --n 8192 --steps 200 --fusion 4
  step distributed1 mpirun -np 1 "$build/perf_tests/sparstencil_bench_distributed" --n 8192 --steps 200 --fusion 1
  # The two ranks' kernels at once through MPS (without it the GPU runs them in turns).
  if command -v nvidia-cuda-mps-control > /dev/null; then
    step dist-mps bash "$root/scripts/with_mps.sh" mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" \
      --n 8192 --steps 200 --fusion 1
    step dist-mps-p bash "$root/scripts/with_mps.sh" mpirun -np 2 "$build/perf_tests/sparstencil_bench_distributed" \
      --n 8192 --steps 200 --fusion 1 --boundary periodic
  fi
  step heat-mpi mpirun -np 4 "$build/examples/heat_mpi" --n 4096 --steps 400 --png "$out/heat_mpi.png"
elif wanted mpi; then
  echo "== mpi: skipped (no MPI build or no mpirun here)"
fi

fi
# The benchmark suite (docs/BENCHMARKS.md): every executor and cuDNN, JSON, report, plots.
# With the tests before it, the suite gets what is left of a 10-minute call.
# (300 s where other parts share the call; the suite's own limit where it runs alone.)
alone=$([ -n "${SUITE_ONLY:-}" ] || [ "${GPU_SUITE_PARTS:-}" = suite ] && echo 1)
default_args=$([ -z "$alone" ] && echo "--time-limit 300")
if wanted suite; then
  step suite "$build/perf_tests/sparstencil_bench_suite" --json "$out/suite.json" ${SUITE_ARGS:-$default_args}
  python3 "$root/scripts/suite_report.py" "$out/suite.json" --out "$out" \
    --peers "$root/perf_tests/suite/peers.json" > "$out/suite-report.log" 2>&1 || failed=1
fi
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if wanted suite; then
  # The suite's own summary table and model figures: the last lines of its log.
  sed -n '/^== summary/,$p' "$out/suite.log"
  tail -n 1 "$out/suite-report.log"
fi
exit $failed
