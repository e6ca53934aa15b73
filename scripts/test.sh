#!/usr/bin/env bash
# The whole test suite: install what is missing, build everything, run ctest.
# GPU tests skip, saying why, on machines without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SPARSTENCIL_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)"
