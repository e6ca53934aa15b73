#!/usr/bin/python3
"""Refit the sparse tensor-core cost model's row-run constants (docs/COST_MODEL.md) to
measured launches.

    sparstencil_bench_sparse --walls --depths --row-runs --json=run1.json   (on the GPU, 2-3 times)
    /usr/bin/python3 perf_tests/fit_sparse_model.py run1.json run2.json ...

Each row's measured GStencil/s is the median over the files (run in the same order). The
script first recomputes every row-run prediction from the row's model_terms with the
constants the library holds (CURRENT below, src/backends/cuda_sptc/SparStencil_SparseCostModel.cpp)
and stops if any differs from the row's model_seconds: the formula here must be the
library's. It then fits the constants (robust least squares on log time; periodic 16-bit
rows for the kernel's terms, rows with walls for the wall kernel's share, tf32 rows for its
two terms) and prints both sets' errors and the constants to copy into the model.
Needs python3-numpy and python3-scipy.
"""
import json
import math
import statistics
import sys

import numpy as np
from scipy.optimize import least_squares

CURRENT = dict(setup1=106.0, setup2=50.0, setup3=92.0, interleave=41.0, chunk_loop=4.2, pair_loop=3.2,
               distinct_loop=2.8, shifted_pair_loop=5.0, shifted_chunk_loop=5.8, warp_exponent=0.87,
               wall_exposed=0.27, tf32_setup=87.0, tf32_chunk=7.2)
# Held, not fitted: the row-run data path's share of the copy bandwidth, measured on both
# devices (an H200-only fit cannot tell it from the issue terms where both nearly bind).
MEMORY_SHARE = 0.77
LOOPS = {"chunk loop": "chunk_loop", "pipelined pair loop": "pair_loop", "pipelined distinct loop": "distinct_loop",
         "shifted pair loop": "shifted_pair_loop", "shifted chunk loop": "shifted_chunk_loop"}


def load(paths):
    files = [json.load(open(p)) for p in paths]
    rows = []
    for i, r in enumerate(files[0]["runs"]):
        same = [f["runs"][i] for f in files]
        if any((s["stencil"], s["steps"], s["boundary"], s["pairing"]) != (r["stencil"], r["steps"], r["boundary"], r["pairing"]) for s in same):
            sys.exit("the files' runs differ: give runs of the same command")
        if r["model_terms"]["loop"] not in LOOPS:
            continue  # the gather form is not refitted here
        r = dict(r, measured=r["model_terms"]["points"] * r["steps"] / (statistics.median(s["gstencils"] for s in same) * 1e9))
        rows.append(r)
    return files[0]["model_device"], rows


def seconds(r, c, device):
    t = r["model_terms"]
    issue_rate = device["multiprocessors"] * 4 * device["clock_ghz"] * 1e9 * 0.5
    slots = c["setup%d" % t["dims"]]
    if t["tf32"]:
        slots += c["tf32_setup"] + c["tf32_chunk"] * t["chunks"]
    else:
        slots += c["interleave"] * t["interleaved"] + c[LOOPS[t["loop"]]] * t["chunks"]
    slots *= (16.0 / t["resident_warps"]) ** c["warp_exponent"]
    compute = max(t["tensor_seconds"], t["groups"] * slots / issue_rate)
    memory = t["memory_bytes"] / (device["memory_bytes_per_s"] * MEMORY_SHARE)
    shared = t["shared_bytes"] / device["shared_bytes_per_s"]
    walls = 0.0
    if t["wall_point_steps"] > 0:
        walls = device["launch_seconds"] + c["wall_exposed"] * t["wall_point_steps"] * (4 * t["terms"] + 70) / 32 / issue_rate
    return max(compute, memory, shared) + device["launch_seconds"] + walls


def report(label, rows, c, device):
    e = np.array([abs(math.log(seconds(r, c, device) / r["measured"])) for r in rows])
    if len(e):
        print("  %-22s %3d rows: median error %5.1f%%, mean %5.1f%%, worst %5.1f%%, within 10%%: %d"
              % (label, len(e), 100 * (math.exp(np.median(e)) - 1), 100 * (math.exp(e.mean()) - 1),
                 100 * (math.exp(e.max()) - 1), int((e < math.log(1.1)).sum())))


def fit(rows, c, names, device):
    if not rows:
        return c
    def residuals(x):
        trial = dict(c, **dict(zip(names, x)))
        return [math.log(seconds(r, trial, device) / r["measured"]) for r in rows]
    x = least_squares(residuals, [c[n] for n in names], bounds=(0, np.inf), loss="soft_l1", f_scale=0.05).x
    return dict(c, **dict(zip(names, x)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    device, rows = load(sys.argv[1:])
    for r in rows:
        if abs(seconds(r, CURRENT, device) / r["model_seconds"] - 1) > 1e-3:
            sys.exit("%s t=%d %s: the library predicts %.4g s, this script %.4g s: update CURRENT or the formula"
                     % (r["stencil"], r["steps"], r["boundary"], r["model_seconds"], seconds(r, CURRENT, device)))
    periodic = [r for r in rows if not r["model_terms"]["tf32"] and r["boundary"] == "periodic"]
    walls = [r for r in rows if not r["model_terms"]["tf32"] and r["boundary"] != "periodic"]
    tf32 = [r for r in rows if r["model_terms"]["tf32"]]
    kernel_names = [n for n in CURRENT if n not in ("wall_exposed", "tf32_setup", "tf32_chunk")]
    fitted = fit(periodic, CURRENT, kernel_names, device)
    fitted = fit(walls, fitted, ["wall_exposed"], device)
    fitted = fit(tf32, fitted, ["tf32_setup", "tf32_chunk"], device)
    for label, c in (("library's constants", CURRENT), ("refitted", fitted)):
        print(label + ":")
        for name, subset in (("periodic 16-bit", periodic), ("walls", walls), ("tf32", tf32), ("all", rows)):
            report(name, subset, c, device)
    print("refitted constants:")
    for n in CURRENT:
        print("  %-20s %8.3f  (library: %g)" % (n, fitted[n], CURRENT[n]))


if __name__ == "__main__":
    main()
