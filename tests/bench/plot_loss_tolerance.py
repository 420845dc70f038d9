#!/usr/bin/python3
"""Draws loss_tolerance's JSON lines: goodput relative to the same mode loss-free, against the
loss rate, one panel per tree, Mode-II and Mode-III measured (median, with the min..max range
of the seeds) and EPIC's formulas (DESIGN.md §2) as lines.

  tests/bench/run.sh loss_tolerance > lt.jsonl
  tests/bench/plot_loss_tolerance.py lt.jsonl -o loss_tolerance   # writes .png and .svg

Needs matplotlib (Debian: apt-get install python3-matplotlib)."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", help="loss_tolerance's output (JSON lines)")
    ap.add_argument("-o", "--out", default="loss_tolerance",
                    help="output path without extension (default: loss_tolerance)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_loss_tolerance: needs matplotlib: apt-get install python3-matplotlib")

    points = {}  # tree -> mode -> [(loss, rel, rel_min, rel_max, formula)]
    lossless = {}
    with open(args.jsonl) as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    for r in rows:
        if r.get("bench") == "loss_tolerance" and r.get("metric") == "goodput" and r["loss"] == 0:
            lossless[(r["tree"], r["mode"])] = r["median"]
    for r in rows:
        if r.get("bench") != "loss_tolerance" or r.get("metric") != "goodput":
            continue
        base = lossless.get((r["tree"], r["mode"]))
        if not base:
            sys.exit(f"plot_loss_tolerance: no loss-free point for {r['tree']} Mode-{r['mode']}")
        points.setdefault(r["tree"], {}).setdefault(r["mode"], []).append(
            (r["loss"], r["median"] / base, r["min"] / base, r["max"] / base,
             r["epic_formula"]))
    if not points:
        sys.exit("plot_loss_tolerance: no loss_tolerance goodput lines in " + args.jsonl)

    trees = sorted(points)
    fig, axes = plt.subplots(1, len(trees), figsize=(4.2 * len(trees), 3.6), squeeze=False)
    colours = {"II": "tab:red", "III": "tab:blue"}
    for ax, tree in zip(axes[0], trees):
        for mode, pts in sorted(points[tree].items()):
            pts.sort()
            x = [100 * p[0] for p in pts]
            ax.errorbar(x, [p[1] for p in pts],
                        yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                        marker="o", color=colours.get(mode), capsize=3,
                        label=f"Mode-{mode} measured")
            ax.plot(x, [p[4] for p in pts], linestyle="--", color=colours.get(mode),
                    label=f"Mode-{mode} EPIC formula")
        ax.set_title(tree)
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel("loss per link and direction (%)")
        ax.set_ylim(0, 1.1)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("goodput / loss-free goodput")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    fig.suptitle("AllReduce goodput under loss (packet-level simulation of the engine)")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{args.out}.{ext}")
        print(f"wrote {args.out}.{ext}")


if __name__ == "__main__":
    main()
