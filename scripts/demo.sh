#!/usr/bin/env bash
# The main job: install what is missing, build, and run the heat-diffusion demo.
# Arguments go to the demo (heat2d --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
build=${SPARSTENCIL_BUILD_DIR:-$root/build}
log="$build.demo-build.log"
if ! "$root/scripts/build.sh" heat2d > "$log" 2>&1; then
  cat "$log"
  echo "demo: the build failed (log above, also in $log)" >&2
  exit 1
fi
cd "$root"
exec "$build/examples/heat2d" "$@"
