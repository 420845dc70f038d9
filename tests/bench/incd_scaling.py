#!/usr/bin/env python3
"""Multi-worker scaling of incd's DPDK loop: incd_loop_bench at 1, 2, 4 ... workers.

  tests/bench/incd_scaling.py [--build DIR] [--workers 1,2,4] [--rounds N] [--payload 1024]
                              [--reps N] [--laps N] [--jsonl FILE]

Each worker count is its own process (DPDK's EAL starts once per process). With W workers
incd_loop_bench sends W streams at once, stream w on RX queue w of the port (what RSS or a
flow table gives a NIC): forward-only stream w is learned on worker w, aggregation stream w is
group w, which the Datapath places on worker w; the benchmark checks that no frame was handed
off between workers. A round runs every worker count once, in ascending order on even rounds
and descending on odd ones, so the machine's drift hits every count alike; per round and
variant the speed-up is Mpps(W) / Mpps(1) of that round (best lap), and the scaling ratio is
speed-up / W (the issue's goal: >= 0.8 where cores allow). Printed: a table of the median over
rounds (min-max), and JSON lines with --jsonl.

A figure is a scaling figure only when every worker has a CPU of its own beside the generator
(W + 1 <= CPUs); otherwise the workers share CPUs (incd_loop_bench maps them round robin and
gives the generator a real-time priority) and the table says so: on a 2-CPU machine, 2 workers
measure the cost of sharing, not scaling."""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(exe, workers, a):
    cmd = [exe, "--json", "--workers", str(workers), "--payload", a.payload, "--reps",
           str(a.reps), "--laps", str(a.laps)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"incd_scaling: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    rows = {}
    for line in r.stdout.splitlines():
        if not line.startswith("{"):
            continue
        j = json.loads(line)
        if j.get("metric") != "incd_loop_summary":
            continue
        b = j["best_lap"]
        rows[("forward_only", j["payload_bytes"])] = b["forward_only_mpps"]
        rows[(f"aggregation {j['dtype']}", j["payload_bytes"])] = b["aggregation_mpps"]
        meta = {"cpus": j["cpus"], "lcores": j["lcores"]}
    return rows, meta


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("EPIC_BENCH_BUILD",
                                                     os.path.join(ROOT, "build", "release")))
    p.add_argument("--workers", default="1,2", help="worker counts, comma-separated (1 first)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--payload", default="1024", help="path MTUs, as incd_loop_bench --payload")
    p.add_argument("--reps", type=int, default=3, help="reps inside each benchmark run")
    p.add_argument("--laps", type=int, default=9, help="laps per variant and rep")
    p.add_argument("--jsonl", help="write one JSON line per variant and worker count here")
    a = p.parse_args()
    counts = [int(x) for x in a.workers.split(",")]
    if not counts or counts[0] != 1 or any(c < 1 for c in counts):
        sys.exit("incd_scaling: --workers must start with 1 (the baseline), e.g. 1,2,4")
    exe = os.path.join(a.build, "tests", "bench", "incd_loop_bench")
    if not os.access(exe, os.X_OK):
        sys.exit(f"incd_scaling: {exe} is missing: cmake --build {a.build} --target incd_loop_bench")

    per_round = []  # [{workers: {(variant, payload): Mpps}}]
    meta = {}  # workers -> {"cpus", "lcores"}
    for rnd in range(a.rounds):
        order = counts if rnd % 2 == 0 else list(reversed(counts))
        res = {}
        for w in order:
            print(f"round {rnd + 1}/{a.rounds}: {w} worker(s)", file=sys.stderr)
            res[w], meta[w] = run(exe, w, a)
        per_round.append(res)

    cpus = meta[1]["cpus"]
    variants = list(per_round[0][1])
    out = open(a.jsonl, "w") if a.jsonl else None
    print(f"incd_loop_bench scaling, {a.rounds} rounds, {cpus} CPUs, build {a.build}")
    print("| variant | payload | workers | lcores | Mpps (best lap) | speed-up vs 1 | "
          "scaling ratio (speed-up / workers) |")
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        for w in counts:
            mpps = [r[w][v] for r in per_round]
            speed = [r[w][v] / r[1][v] for r in per_round]
            eff = [s / w for s in speed]
            shared = w + 1 > cpus
            med = statistics.median
            print(f"| {v[0]} | {v[1]} | {w} | {meta[w]['lcores']}"
                  f"{' (CPUs shared)' if shared else ''} | {med(mpps):.2f} "
                  f"({min(mpps):.2f}-{max(mpps):.2f}) | {med(speed):.2f} "
                  f"({min(speed):.2f}-{max(speed):.2f}) | {med(eff):.2f} |")
            if out:
                out.write(json.dumps({
                    "bench": "incd_scaling", "variant": v[0], "payload_bytes": v[1],
                    "workers": w, "cpus": cpus, "cpus_shared": shared,
                    "lcores": meta[w]["lcores"], "mpps_per_round": mpps,
                    "speedup_per_round": speed, "speedup_median": med(speed),
                    "scaling_ratio_median": med(eff)}) + "\n")
    if any(w + 1 > cpus for w in counts):
        print(f"note: counts above {cpus - 1} worker(s) share CPUs with each other or the "
              "generator on this machine: not a scaling figure")
    if out:
        out.close()


if __name__ == "__main__":
    main()
