#!/usr/bin/env bash
# Runs a command with its GPU shared through NVIDIA's Multi-Process Service, so that MPI
# ranks sharing one GPU run their kernels at once instead of in turns (docs/DISTRIBUTED.md):
#   bash scripts/with_mps.sh mpirun -np 2 build/perf_tests/sparstencil_bench_distributed
# The control daemon is this user's own, in a private folder, and is stopped when the
# command ends; the GPU's settings (compute mode included) are left as they are.
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: with_mps.sh COMMAND [ARGUMENTS...]" >&2
  exit 2
fi
if ! command -v nvidia-cuda-mps-control >/dev/null; then
  echo "with_mps: nvidia-cuda-mps-control (the NVIDIA driver's MPS) is not installed" >&2
  exit 2
fi
dir=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
stop() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
  for _ in $(seq 50); do pgrep -f "nvidia-cuda-mps-control -d" >/dev/null || break; sleep 0.1; done
  rm -rf "$dir"
}
trap stop EXIT
nvidia-cuda-mps-control -d
status=0
"$@" || status=$?
# Evidence that the clients ran under MPS: the server the daemon started for them.
servers=$(echo get_server_list | nvidia-cuda-mps-control 2>/dev/null || true)
echo "with_mps: MPS server process(es): ${servers:-none (the command started no CUDA client)}"
if [ -s "$CUDA_MPS_LOG_DIRECTORY/control.log" ]; then
  grep -iE "error|fail" "$CUDA_MPS_LOG_DIRECTORY/control.log" "$CUDA_MPS_LOG_DIRECTORY/server.log" 2>/dev/null || true
fi
exit $status
