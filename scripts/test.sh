#!/usr/bin/env bash
# The whole test suite: install what is missing, build everything, run ctest; then the
# host suite again under AddressSanitizer and UndefinedBehaviorSanitizer, with the fuzz
# targets (scripts/sanitize.sh, docs/TESTING.md; SPARSTENCIL_SANITIZE=0 skips it). GPU
# tests skip, saying why, on machines without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SPARSTENCIL_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)"
if [ "${SPARSTENCIL_SANITIZE:-1}" = 0 ]; then exit 0; fi
total() { ctest --test-dir "$1" -N | sed -n 's/^Total Tests: //p'; }
echo "== the sanitizer build (scripts/sanitize.sh)"
"$root/scripts/sanitize.sh"
sanitize_build=${SPARSTENCIL_SANITIZE_BUILD_DIR:-$root/build-sanitize}
echo "test.sh: all passed: $(total "$build") tests in $build, $(total "$sanitize_build") in $sanitize_build"
