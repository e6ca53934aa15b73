#!/usr/bin/env bash
# Nsight Compute profile of one kernel launch of a benchmark, on a CUDA machine:
#   bash scripts/ncu_profile.sh NAME KERNEL_REGEX COMMAND...
# Profiles the 4th launch whose demangled name matches KERNEL_REGEX (the first ones are
# warm-ups; NCU_SKIP=N profiles launch N + 1 instead) with the full section set, then writes to $OUT (or /tmp/sparstencil-ncu):
# NAME.ncu-rep (open in the Nsight Compute GUI), NAME.txt (every section's tables) and
# NAME-sass.csv (per-instruction counts and stall samples), and prints the lines that explain where
# the time went: throughput, occupancy, issue rate and the largest stall reasons.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 NAME KERNEL_REGEX COMMAND..." >&2; exit 2; }
name=$1 kernel=$2
shift 2
out=${OUT:-/tmp/sparstencil-ncu}
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LD_LIBRARY_PATH="$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$ncu" --set full --import-source no --kernel-name-base demangled --kernel-name "regex:$kernel" \
  --launch-skip "${NCU_SKIP:-3}" --launch-count 1 -f -o "$out/$name" "$@" > "$out/$name-run.log" 2>&1 \
  || { echo "ncu failed:"; tail -n 20 "$out/$name-run.log"; exit 1; }
"$ncu" -i "$out/$name.ncu-rep" --page details --print-details all > "$out/$name.txt" 2>&1
"$ncu" -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>&1
echo "== $name"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issue Slots Busy|Issued Ipc|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps|Bank Conflicts|Executed Ipc|Local" \
  "$out/$name.txt" | sed 's/  */ /g' | head -n 40
# Stall reasons: cycles a warp spends in each per issued instruction, largest first.
"$ncu" -i "$out/$name.ncu-rep" --page raw --csv > "$out/$name-raw.csv" 2>&1
/usr/bin/python3 - "$out/$name-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, units, values = rows[0], rows[1], rows[2]
pairs = [(h, v) for h, v in zip(head, values) if "issue_stalled" in h and h.endswith("per_issue_active.ratio")]
def number(v):
    try: return float(v.replace(",", ""))
    except ValueError: return 0.0
for h, v in sorted(pairs, key=lambda p: -number(p[1]))[:12]:
    print(f"  {h.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', ''):28s} {v}")
PY
rm -f "$out/$name-raw.csv" "$out/$name-run.log"
