#!/usr/bin/env bash
# The main job: install what is missing, build, and run the heat-diffusion demo.
# Arguments go to the demo (heat2d --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" heat2d > /dev/null
cd "$root"
exec "${SPARSTENCIL_BUILD_DIR:-$root/build}/examples/heat2d" "$@"
