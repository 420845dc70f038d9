#!/usr/bin/env python3
"""Before/after: the engine and incd loop benchmarks of an older commit and of this tree, built
side by side (Release, no sanitizers) and run interleaved on the same machine, so that one
run's noise hits both sides alike (BENCHMARKING habits: ratios in one run, never absolutes).

  tests/bench/compare.py OLD_REV [--rounds N] [--bench engine_bench,incd_loop_bench] [--json]

OLD_REV is exported with `git archive` into build/bench-old/src and built in
build/bench-old/build; this tree builds in build/release (tests/bench/run.sh's). Each round
runs every benchmark once per side, alternating which side goes first. Printed per metric: the
median over rounds of each side's own median, and new/old (Mpps: higher is better). Exit 1 when
a throughput ratio is below --floor (default 0.95), 0 otherwise."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(src, build_dir, targets):
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        sh(["cmake", "-S", src, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
           stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", build_dir, "--target"] + targets, stdout=subprocess.DEVNULL)


def run(build_dir, bench, reps):
    exe = os.path.join(build_dir, "tests", "bench", bench)
    out = subprocess.run([exe, "--json", "--reps", str(reps)], check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "median" not in r or r.get("unit") != "Mpps":
            continue
        key = " ".join(str(r[k]) for k in ("bench", "metric", "dtype", "payload_bytes", "lap_stat")
                       if k in r)
        rows[key] = r["median"]
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old_rev")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="reps inside each benchmark run")
    p.add_argument("--bench", default="engine_bench,incd_loop_bench")
    p.add_argument("--floor", type=float, default=0.95)
    p.add_argument("--json", action="store_true", help="one JSON line per metric")
    a = p.parse_args()
    benches = a.bench.split(",")
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", a.old_rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    old_src = os.path.join(ROOT, "build", "bench-old", "src")
    old_build = os.path.join(ROOT, "build", "bench-old", "build")
    stamp = os.path.join(old_src, ".epic-rev")
    if not os.path.exists(stamp) or open(stamp).read() != rev:
        shutil.rmtree(os.path.join(ROOT, "build", "bench-old"), ignore_errors=True)
        os.makedirs(old_src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", rev], check=True,
                                 capture_output=True).stdout
        sh(["tar", "-x", "-C", old_src], input=archive)
        open(stamp, "w").write(rev)
    new_build = os.environ.get("EPIC_BENCH_BUILD", os.path.join(ROOT, "build", "release"))
    print(f"compare: building {rev} in {old_build} and this tree in {new_build}", file=sys.stderr)
    build(old_src, old_build, benches)
    build(ROOT, new_build, benches)
    samples = {}  # key -> {"old": [...], "new": [...]}
    for rnd in range(a.rounds):
        for bench in benches:
            order = [("old", old_build), ("new", new_build)]
            if rnd % 2:
                order.reverse()
            for side, d in order:
                for key, v in run(d, bench, a.reps).items():
                    samples.setdefault(key, {"old": [], "new": []})[side].append(v)
        print(f"compare: round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    worst = None
    print(f"{'metric':58} {'old ' + rev:>12} {'new':>10} {'new/old':>8}")
    for key in sorted(samples):
        s = samples[key]
        if not s["old"] or not s["new"]:
            continue
        old, new = statistics.median(s["old"]), statistics.median(s["new"])
        ratio = new / old if old else float("nan")
        worst = ratio if worst is None else min(worst, ratio)
        if a.json:
            print(json.dumps({"metric": key, "old_rev": rev, "old_mpps": old, "new_mpps": new,
                              "ratio": round(ratio, 3), "rounds": a.rounds}))
        else:
            print(f"{key:58} {old:12.3f} {new:10.3f} {ratio:8.3f}")
    if worst is None:  # --rounds 0: both sides built, nothing measured
        print("compare: no rounds run, nothing measured", file=sys.stderr)
        return 0 if a.rounds == 0 else 1
    print(f"compare: worst new/old {worst:.3f} (floor {a.floor}) over {a.rounds} rounds",
          file=sys.stderr)
    return 0 if worst >= a.floor else 1


if __name__ == "__main__":
    sys.exit(main())
