#!/usr/bin/env python3
"""Prints the Markdown table of docs/PLANS.md: for each preset, what the planner chooses on
the H100 description in f16 (single step and fused), and the best sparse tensor-core plan
(forced with --backend cuda_sptc) with its tile, patch, K, S, MMAs and predicted bound.
Usage: python3 scripts/plan_table.py build/src/sparstencil"""
import json
import subprocess
import sys

cli = sys.argv[1]
presets = [("heat1d", "10240000"), ("1d5p", "10240000"), ("heat2d", "10240x10240"),
           ("box2d9p", "10240x10240"), ("star2d13p", "10240x10240"), ("box2d49p", "10240x10240"),
           ("heat3d", "512x512x512"), ("box3d27p", "512x512x512")]


def plan(name, grid, steps, executor):
    out = subprocess.run([cli, "plan", name, "--grid", grid, "--precision", "f16", "--device", "h100",
                          "--steps", str(steps), "--backend", executor, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


print("| preset | steps | chosen | best sparse tile | patch | K (zero columns) | S | MMAs / 8 tiles |"
      " bound | sparse GStencil/s | generic GStencil/s |")
print("| --- | ---: | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: |")
for name, grid in presets:
    for steps in (1, 3):
        auto = plan(name, grid, steps, "auto")
        sparse = plan(name, grid, steps, "cuda_sptc")
        generic = plan(name, grid, steps, "generic")
        k = len(sparse["order"]["columns"])
        print(f"| {auto['original']['name']} | {steps} | {auto['backend']} | "
              f"{' x '.join(map(str, sparse['tile']))} | {' x '.join(map(str, sparse['patch']))} | "
              f"{k} ({sparse['order']['zero_columns']}) | {sparse['sparsity']:.2f} | "
              f"{sparse['mmas_per_tile_group']} | {sparse['predicted']['bound']} | "
              f"{sparse['predicted']['gstencils']:.0f} | {generic['predicted']['gstencils']:.0f} |")
