#!/usr/bin/python3
"""Report of a benchmark-suite run (sparstencil_bench_suite --json FILE): a Markdown page
and PNG plots (GStencil/s per kernel and executor against the roofline, predicted versus
measured time, the sweet-spot map). Needs Debian's python3-matplotlib:

    /usr/bin/python3 scripts/suite_report.py suite.json [more.json ...] --out DIR [--peers perf_tests/suite/peers.json]

Several JSON files (runs of parts of the suite on one device) are reported as one run.

Exits 1 when the run holds wrong results or errors, or no measurement at all."""
import argparse
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def ok(rows):
    return [r for r in rows if r["status"] == "ok"]


def key(r):
    return (r["kernel"], r["extents"], r["storage"])


def standard_table(rows, peers):
    """Per standard kernel, grid and format: each executor's best, ours against the others."""
    table, order = {}, []
    for r in ok(rows):
        if r["group"] != "standard":
            continue
        e = table.setdefault(key(r), {})
        if key(r) not in order:
            order.append(key(r))
        # Matrix-core executors: their single step and their best depth.
        best = {"sparse": "fused", "dense": "dense best", "generic-tb": "generic-tb"}.get(r["executor"])
        if r["executor"] in ("sparse", "dense") and r["steps"] == 1:
            e[r["executor"] + "1"] = r
        if best:
            if best not in e or r["gstencils"] > e[best]["gstencils"]:
                e[best] = r
        else:
            e[r["executor"]] = r
    lines = ["| kernel | grid | fmt | roofline | generic | cuDNN | sparse t=1 | sparse best (t) | generic temporal blocking best (t) | dense t=1 | dense best (t) | ours t=1 / cuDNN | sparse t=1 / generic | peer | ours t=1 / peer |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]

    def cell(r):
        return f"{r['gstencils']:.0f} ({r['percent_roofline']:.0f}%)" if r else "-"

    for k in order:
        e = table[k]
        # Ours at one step in the same precision: tf32 (sparse on f32 grids) is not f32.
        same = ("generic",) if k[2] == "f32" else ("generic", "sparse1", "dense1")
        single = max((e[n]["gstencils"] for n in same if n in e), default=0)
        roof = next(iter(e.values()))["roofline_gstencils"]
        ratio_c = f"{single / e['cudnn']['gstencils']:.2f}x" if "cudnn" in e and single else "-"
        ratio_g = (f"{e['sparse1']['gstencils'] / e['generic']['gstencils']:.2f}x"
                   if "generic" in e and "sparse1" in e and k[2] != "f32" else "-")
        def at_depth(name):
            return f"{e[name]['gstencils']:.0f} (t={e[name]['steps']})" if name in e else "-"
        fused, blocked, dense_best = at_depth("fused"), at_depth("generic-tb"), at_depth("dense best")
        peer_cells = []
        for p in peers:
            if p["kernel"] == k[0] and p["extents"] == k[1] and p["storage"] == k[2]:
                ours = single
                steps = f" (t={p['steps']})" if p.get("steps", 1) > 1 else ""
                peer_cells.append((f"{p['peer']} {p['gstencils']:g}{steps}", f"{ours / p['gstencils']:.2f}x"))
        peer_text = "; ".join(c[0] for c in peer_cells) or "-"
        peer_ratio = "; ".join(c[1] for c in peer_cells) or "-"
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {roof:.0f} | {cell(e.get('generic'))} | {cell(e.get('cudnn'))} | "
                     f"{cell(e.get('sparse1'))} | {fused} | {blocked} | {cell(e.get('dense1'))} | {dense_best} | {ratio_c} | {ratio_g} | {peer_text} | {peer_ratio} |")
    return lines, table, order


def model_section(report):
    rows = [r for r in ok(report["rows"]) if r["executor"] != "cudnn" and r.get("predicted_step_seconds", 0) > 0]
    lines = []
    if rows:
        err = lambda r: abs(r["predicted_step_seconds"] / r["step_seconds"] - 1)  # noqa: E731
        lines.append(f"Cost model: median |predicted - measured| / measured **{100 * statistics.median(map(err, rows)):.1f}%** "
                     f"over {len(rows)} measured cases.")
        for ex in sorted({r["executor"] for r in rows}):
            sub = [r for r in rows if r["executor"] == ex]
            lines.append(f"- {ex}: median {100 * statistics.median(map(err, sub)):.1f}% over {len(sub)}")
    choices = report["choices"]
    if choices:
        lines.append("")
        lines.append("Automatic choice within 10% of the fastest measured executor (f16 grids: generic, sparse, "
                     "dense; f64 grids: generic, dense):")
        groups = [("all", choices)] + [(f"{f} grids", [c for c in choices if c["storage"] == f]) for f in ("f16", "f64")]
        groups.append(("cases with the dense executor measured", [c for c in choices if "dense" in c["measured"]]))
        for label, sub in groups:
            if sub:
                within = sum(c["within_10"] for c in sub)
                lines.append(f"- {label}: **{within} of {len(sub)} ({100 * within / len(sub):.0f}%)**")
        misses = [c for c in choices if not c["within_10"]]
        if misses:
            lines += ["", "| kernel | grid | fmt | t | chosen | fastest | measured step (us) |",
                      "| --- | --- | --- | ---: | --- | --- | --- |"]
            for c in misses:
                m = ", ".join(f"{k} {v * 1e6:.0f}" for k, v in sorted(c["measured"].items()))
                lines.append(f"| {c['kernel']} | {c['extents']} | {c['storage']} | {c['steps']} | {c['chosen']} | "
                             f"{c['fastest']} | {m} |")
    return lines


def catalogue_section(rows):
    by = {}
    for r in ok(rows):
        if r["group"] == "catalogue":
            by.setdefault(key(r), {})[(r["executor"], r["steps"])] = r
    if not by:
        return []
    lines = ["| stencil | grid | fmt | generic | cuDNN | sparse t=1 | sparse t=3 | dense t=1 | dense t=3 |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    columns = (("generic", 1), ("cudnn", 1), ("sparse", 1), ("sparse", 3), ("dense", 1), ("dense", 3))
    for k, e in by.items():
        cells = [f"{e[c]['gstencils']:.0f}" if c in e else "-" for c in columns]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    return lines


def plot_rates(table, order, path):
    formats = [f for f in ("f16", "bf16", "f32", "f64") if any(k[2] == f for k in order)]
    fig, axes = plt.subplots(len(formats), 1, figsize=(13, 3.6 * len(formats)), squeeze=False)
    series = [("generic", "generic"), ("cudnn", "cuDNN"), ("sparse1", "sparse t=1"), ("fused", "sparse best fused"),
              ("dense1", "dense t=1")]
    for ax, f in zip(axes[:, 0], formats):
        keys = [k for k in order if k[2] == f]
        width = 0.16
        for i, (name, label) in enumerate(series):
            values = [table[k][name]["gstencils"] if name in table[k] else 0 for k in keys]
            ax.bar([x + (i - 2) * width for x in range(len(keys))], values, width, label=label)
        roof = [next(iter(table[k].values()))["roofline_gstencils"] for k in keys]
        ax.plot(range(len(keys)), roof, "k_", markersize=28, mew=2, label="copy roofline (single step)")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{k[0]}\n{k[1]}" for k in keys], fontsize=7)
        ax.set_ylabel(f"{f}: GStencil/s")
        ax.set_yscale("log")
        ax.set_ylim(bottom=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8, ncol=5)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_model(rows, path):
    rows = [r for r in ok(rows) if r["executor"] != "cudnn" and r.get("predicted_step_seconds", 0) > 0]
    fig, ax = plt.subplots(figsize=(6, 6))
    for ex, marker in (("sparse", "o"), ("generic", "s"), ("generic-tb", "^"), ("dense", "D")):
        sub = [r for r in rows if r["executor"] == ex]
        ax.scatter([r["step_seconds"] * 1e6 for r in sub], [r["predicted_step_seconds"] * 1e6 for r in sub], s=10,
                   marker=marker, label=ex, alpha=0.6)
    if rows:
        lo = min(min(r["step_seconds"], r["predicted_step_seconds"]) for r in rows) * 1e6 / 1.5
        hi = max(max(r["step_seconds"], r["predicted_step_seconds"]) for r in rows) * 1e6 * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="predicted = measured")
        ax.plot([lo, hi], [lo * 1.25, hi * 1.25], "k:", lw=0.6, label="+-25%")
        ax.plot([lo, hi], [lo / 1.25, hi / 1.25], "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured us per original step")
    ax.set_ylabel("predicted us per original step")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(report, path):
    """Which executor is fastest per (shape, radius, fusion depth), and where the model disagrees."""
    choices = [c for c in report["choices"] if c["group"] == "sweep" and c["storage"] == "f16"]
    if not choices:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, shape in zip(axes, ("star2d", "box2d")):
        sub = [c for c in choices if c["kernel"].startswith(shape)]
        for c in sub:
            r = int(c["kernel"].split("r=")[1])
            t = c["steps"]
            colour = {"cuda_sptc": "tab:orange", "generic-tb": "tab:green", "dense": "tab:red"}.get(c["fastest"], "tab:blue")
            ax.add_patch(plt.Rectangle((r - 0.5, t - 0.5), 1, 1, color=colour, alpha=0.8))
            generic = min(v for k, v in c["measured"].items() if k.startswith("generic"))
            speed = generic / c["measured"]["cuda_sptc"] if "cuda_sptc" in c["measured"] else 0
            ax.text(r, t, f"{speed:.1f}x" if speed else "-", ha="center", va="center", fontsize=7)
            if c["chosen"] != c["fastest"]:
                ax.plot(r, t - 0.32, "kx", markersize=6)
        ax.set_xlim(0.5, 7.5)
        ax.set_ylim(0.5, 8.5)
        ax.set_xlabel("radius")
        ax.set_ylabel("fused steps t")
        ax.set_title(f"{shape}: fastest orange sparse, red dense, blue generic, green generic temporal\n"
                     "blocking; text: sparse over the better generic; x: the model picked another")
        ax.title.set_fontsize(8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def merged(reports):
    """One report of several runs' (parts of the suite on one device, one after another)."""
    devices = {r["device"] for r in reports}
    if len(devices) > 1:
        sys.exit(f"suite_report: the runs are from different devices: {', '.join(sorted(devices))}")
    report = dict(reports[0])
    for key in ("copies", "rows", "choices", "workloads"):
        report[key] = [item for r in reports for item in r[key]]
    report["seconds"] = sum(r["seconds"] for r in reports)
    report["stopped_early"] = "; ".join(r["stopped_early"] for r in reports if r["stopped_early"])
    report["date"] = ", ".join(sorted({r["date"] for r in reports}))
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+")
    parser.add_argument("--out", default=".")
    parser.add_argument("--peers", help="peer figures (JSON list: peer, commit, kernel, extents, storage, steps, gstencils)")
    args = parser.parse_args()
    report = merged([json.load(open(path)) for path in args.json])
    peers = json.load(open(args.peers))["figures"] if args.peers else []
    os.makedirs(args.out, exist_ok=True)
    rows = report["rows"]
    std_lines, table, order = standard_table(rows, peers)
    md = [f"# Benchmark suite: {report['device']}, {report['date']}", "",
          f"cuDNN {report['cudnn']}; planner device `{report['planner_device']}`; {len(rows)} measurements in "
          f"{report['seconds']:.0f} s{'; stopped early: ' + report['stopped_early'] if report['stopped_early'] else ''}.",
          "GStencil/s per original step (a fused launch counts its t steps); in brackets the % of the "
          "single-step roofline from the device-to-device copy measured in the same run. The sparse and dense "
          "executors run fused depths as one launch of the fused stencil; the generic executor as t single steps "
          "(column generic) or as one temporal-blocking launch (generic temporal blocking); cuDNN as t single steps.", "", "## Standard kernels", ""] + std_lines
    if order:
        plot_rates(table, order, os.path.join(args.out, "suite_rates.png"))
        md += ["", "![rates](suite_rates.png)"]
    md += ["", "## Cost model", ""] + model_section(report)
    plot_model(rows, os.path.join(args.out, "suite_model.png"))
    md += ["", "![model](suite_model.png)"]
    if plot_sweep(report, os.path.join(args.out, "suite_sweep.png")):
        md += ["", "## Sweet spot (2-D f16, star and box, radius 1-7, fusion 1-8)", "", "![sweep](suite_sweep.png)"]
    cat = catalogue_section(rows)
    if cat:
        md += ["", "## Catalogue", ""] + cat
    bad = [r for r in rows if r["status"] in ("wrong", "error")]
    refused = [r for r in rows if r["status"] == "refused"]
    md += ["", "## Failures", ""] + ([f"- {r['kernel']} {r['extents']} {r['storage']} t={r['steps']} {r['executor']}: "
                                        f"{r['status']} {r.get('detail', '')}" for r in bad] or ["none"])
    md += ["", f"{len(refused)} cases the planner cannot run on a matrix-core executor (fused radius too large, "
           "patch too dense, block past shared memory): listed in the JSON with the planner's reason."]
    with open(os.path.join(args.out, "suite.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md[: 8 + len(std_lines)]))
    measured = ok(rows)
    print(f"suite_report: {len(measured)} measurements, {len(bad)} wrong or failed; wrote suite.md and plots to {args.out}")
    return 1 if bad or not measured else 0


if __name__ == "__main__":
    sys.exit(main())
