#!/usr/bin/python3
"""Draws shaped_lab's JSON lines (--jsonl): algorithm bandwidth (bytes·8 / median latency)
against the AllReduce size, Gloo's ring and EPIC through incd, one panel per (link rate, ranks),
with the link-bound ideals drawn: EPIC moves the buffer once over each rank's link (ideal: the
link rate), a ring moves 2(n-1)/n of it (ideal: rate·n/(2(n-1))). The figure of a tool at a size
is the median over rounds of each round's median latency; bars show the rounds' min..max.

  tests/bench/shaped_lab.py --jsonl shaped.jsonl ...
  tests/bench/plot_shaped_lab.py shaped.jsonl -o docs/img/shaped_lab --note "machine, load"

Writes OUT.png and OUT.svg. Needs matplotlib (Debian: apt-get install python3-matplotlib)."""
import argparse
import json
import statistics
import sys

KIB, MIB = 1 << 10, 1 << 20


def size_name(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // KIB} KiB" if b >= KIB else f"{b} B"


def rate_bps(name):
    t = name.lower()
    for suffix, mul in (("gbit", 1e9), ("mbit", 1e6)):
        if t.endswith(suffix):
            return float(t[:-len(suffix)]) * mul
    return None  # "none": unshaped


def load(path):
    """{(rate, ranks): {bytes: {"gloo": [gbps per round], "epic": [...]}}} from the round lines."""
    out = {}
    with open(path) as f:
        for line in f:
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("bench") != "shaped_lab" or "round" not in j or not j.get("bytes"):
                continue
            cell = out.setdefault((j["rate"], j["ranks"]), {}).setdefault(
                j["bytes"], {"gloo": [], "epic": []})
            for tool in ("gloo", "epic"):
                us = j.get(f"{tool}_p50_us")
                if us:
                    cell[tool].append(j["bytes"] * 8 / (us * 1e-6) / 1e9)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", help="shaped_lab's --jsonl output")
    ap.add_argument("-o", "--out", default="shaped_lab", help="output path without extension")
    ap.add_argument("--note", default="", help="a line under the title (machine, load, date)")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_shaped_lab: needs matplotlib (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 2
    data = load(a.jsonl)
    if not data:
        print(f"plot_shaped_lab: no round lines in {a.jsonl}", file=sys.stderr)
        return 1
    rates = sorted({r for r, _ in data}, key=lambda r: rate_bps(r) or float("inf"))
    ranks = sorted({n for _, n in data})
    fig, axes = plt.subplots(len(ranks), len(rates), figsize=(4.6 * len(rates), 3.6 * len(ranks)),
                             squeeze=False, sharex=True)
    for i, n in enumerate(ranks):
        for k, rate in enumerate(rates):
            ax = axes[i][k]
            cells = data.get((rate, n), {})
            sizes = sorted(cells)
            for tool, colour, label in (("gloo", "tab:blue", "Gloo ring"),
                                        ("epic", "tab:red", "EPIC via incd")):
                pts = [(s, cells[s][tool]) for s in sizes if cells[s][tool]]
                if not pts:
                    continue
                xs = [s for s, _ in pts]
                med = [statistics.median(v) for _, v in pts]
                lo = [m - min(v) for m, (_, v) in zip(med, pts)]
                hi = [max(v) - m for m, (_, v) in zip(med, pts)]
                ax.errorbar(xs, med, yerr=[lo, hi], color=colour, marker="o", ms=3,
                            capsize=2, label=label)
            bps = rate_bps(rate)
            if bps:
                ax.axhline(bps / 1e9, color="tab:red", ls="--", lw=0.8,
                           label=f"EPIC ideal (link {bps / 1e9:g} Gb/s)")
                ax.axhline(bps * n / (2 * (n - 1)) / 1e9, color="tab:blue", ls="--", lw=0.8,
                           label=f"ring ideal (link·{n}/{2 * (n - 1)})")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{n} ranks, " + (f"links shaped to {rate}" if bps
                                           else "unshaped veths (CPU-bound)"), fontsize=9)
            if sizes:
                ax.set_xticks(sizes)
                ax.set_xticklabels([size_name(s) for s in sizes], rotation=45, fontsize=7)
            ax.grid(True, which="both", lw=0.3)
            if k == 0:
                ax.set_ylabel("algorithm bandwidth, Gb/s")
            if i == len(ranks) - 1:
                ax.set_xlabel("AllReduce fp32, bytes per rank")
            ax.legend(fontsize=6, loc="lower right")
    fig.suptitle("EPIC vs Gloo's ring on the same per-rank links (tests/bench/shaped_lab.py)"
                 + (f"\n{a.note}" if a.note else ""), fontsize=10)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{a.out}.{ext}", dpi=110)
        print(f"plot_shaped_lab: wrote {a.out}.{ext}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
