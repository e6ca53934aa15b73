#!/usr/bin/env bash
# Installs what SparStencil needs on Debian bookworm that is not there yet. Idempotent:
# when every package is present it changes nothing and needs no network.
set -euo pipefail

packages=(
  cmake g++ make
  libtrilinos-kokkos-dev   # Kokkos 3.4 (Serial); bring your own Kokkos 4.x for GPUs
  googletest libgtest-dev  # unit tests
  libbenchmark-dev         # perf_tests
  nlohmann-json3-dev       # stencil catalogues
  libboost-graph-dev       # maximum-cardinality matching for sparsity conversion
  libcli11-dev             # the sparstencil command line
  libpng-dev               # the demo's image
  imagemagick              # the examples' animations (gray_scott, wave: --gif)
  libopenmpi-dev openmpi-bin  # grids decomposed over MPI ranks (src/mpi) and their tests
  python3-matplotlib       # the benchmark report's plots (scripts/suite_report.py)
  clang-format             # the layout check (.clang-format, unit_tests/check_format.cmake)
  clang-14 libclang-rt-14-dev  # the sanitizer build's compiler, with libFuzzer (scripts/sanitize.sh)
  hipcc libamdhip64-dev   # the dense executor's HIP build, compiled for AMD gfx90a (no AMD GPU here)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: need root to install packages (run as root or with sudo)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
