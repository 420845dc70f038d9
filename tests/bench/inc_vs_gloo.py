#!/usr/bin/python3
"""inc_vs_gloo: EPIC through incd versus the Gloo ring baseline, side by side, interleaved.

One netns lab (deploy/netns/incd_lab.py): one incd switch namespace and N rank namespaces,
each rank joined to the switch by a veth pair; incd forwards between its af_packet ports.
Both tools run in the same rank namespaces over the same veths:

  gloo  tests/bench/gloo_bench (Gloo's TCP transport, ring AllReduce / dissemination Barrier)
        between the ranks' kernel addresses: rank-to-rank TCP crosses incd's L2 forwarding
        (the switch namespace has no addresses and the kernel there forwards nothing; the
        script checks that incd's forwarded-frame counter grows during the Gloo runs);
  epic  inc-bench (libinc's Communicator on the soft transport, EPIC's user-space RC
        endpoint) per rank, the collective aggregated by incd (Mode-II group of all ranks).

Cases: Barrier, AllReduce 4 KiB and 4 MiB, fp32 and int32 (--cases). Each round runs every
case with both tools, in alternating order (round 0: gloo then epic, round 1: epic then
gloo, ...). A round's figure for a tool is the median per-op latency on rank 0 over its timed
iterations (after a warm-up); the table gives the median of the per-round medians, their
min-max, and EPIC/gloo (> 1: EPIC slower): the ratio of the medians, and the min-max of the
per-round ratios. Results are checked by both tools every iteration.

  inc_vs_gloo.py [--build DIR] [--ranks 4] [--rounds 5] [--iters 30] [--warmup 5]
                 [--iters-large 10] [--warmup-large 2] [--idle-sleep-us 50] [--window 16]
                 [--cases barrier,ar4k_fp32,...] [--jsonl PATH] [--write-docs] [--quick]

DIR (default $EPIC_BENCH_BUILD or build/release) must hold daemon/incd,
tools/inc-bench/inc-bench and tests/bench/gloo_bench. Needs root; exits 77 (skip) without it
or without gloo_bench. Prints progress on stderr and a Markdown table on stdout;
--write-docs also puts it into docs/baselines.md between the marker comments of this
(idle_sleep_us, window) setting. Everything it creates is removed on exit, failure and
SIGINT/SIGTERM included; the whole run is bounded by --max-s (SIGALRM) and every process
by its own timeout.
"""
import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "deploy", "netns"))
import incd_lab  # noqa: E402
from lab_bench import (RunFailed, build_facts, cpu_model, json_lines, loadavg, log,  # noqa: E402
                       ping_rtt, proc_cpu_s, use_group)

KIB, MIB = 1 << 10, 1 << 20
DOC = os.path.join(ROOT, "docs", "baselines.md")

def markers(args):
    """docs/baselines.md holds one table per (idle_sleep_us, window) setting."""
    tag = f"idle_sleep_us={args.idle_sleep_us} window={args.window}"
    return f"<!-- inc_vs_gloo {tag} begin -->", f"<!-- inc_vs_gloo {tag} end -->"


class Case:
    def __init__(self, key, title, primitive, dtype, nbytes):
        self.key, self.title, self.primitive, self.dtype, self.bytes = (
            key, title, primitive, dtype, nbytes)

    @property
    def large(self):
        return self.bytes >= MIB


CASES = [
    Case("barrier", "Barrier", "barrier", None, 0),
    Case("ar4k_fp32", "AllReduce 4 KiB fp32", "allreduce", "fp32", 4 * KIB),
    Case("ar4k_int32", "AllReduce 4 KiB int32", "allreduce", "int32", 4 * KIB),
    Case("ar4m_fp32", "AllReduce 4 MiB fp32", "allreduce", "fp32", 4 * MIB),
    Case("ar4m_int32", "AllReduce 4 MiB int32", "allreduce", "int32", 4 * MIB),
]


def iters_of(case, args):
    return (args.iters_large, args.warmup_large) if case.large else (args.iters, args.warmup)


def op_timeout_s(case, args):
    """Bound of one tool's run of one case (start, rendezvous, every iteration, exit)."""
    iters, warmup = iters_of(case, args)
    per_op = 2.0 if case.large else 0.5  # generous: seconds per operation on a loaded box
    return 30 + (iters + warmup) * per_op


# --- the two tools: each returns {"p50_us", "min_us", "max_us", "n", "verified"} -----------

def gloo_round(lab, case, args, tag):
    """One Gloo run of `case`: one gloo_bench per rank namespace, bound to the rank's kernel
    address, rendezvous in a fresh FileStore directory under the lab's temporary dir."""
    iters, warmup = iters_of(case, args)
    store = os.path.join(lab.tmp, f"gloo-store-{tag}")
    os.mkdir(store)
    timeout_s = op_timeout_s(case, args)
    procs = []
    for r in lab.ranks:
        out = os.path.join(lab.tmp, f"gloo-{tag}-rank{r.index}.out")
        cmd = ["ip", "netns", "exec", r.ns, args.gloo_bench, "--rank", str(r.index),
               "--ranks", str(len(lab.ranks)), "--iface", r.kernel_ip, "--store", store,
               "--primitive", case.primitive, "--iters", str(iters), "--warmup", str(warmup),
               "--timeout-ms", str(int(timeout_s * 1000) - 5000), "--json"]
        if case.primitive == "allreduce":
            cmd += ["--dtype", case.dtype, "--bytes", str(case.bytes)]
        f = open(out, "w")
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        f.close()
        lab.procs.append(p)
        procs.append((f"gloo rank {r.index}", p, out))
    res = incd_lab.wait_procs(procs, timeout_s)
    bad = [f"{n} rc={rc}\n{t[-2000:]}" for n, rc, t in res if rc != 0]
    lines = [j for j in json_lines(res[0][2]) if j.get("tool") == "gloo"]
    if bad or not lines:
        raise RunFailed(f"gloo_bench failed ({case.key}, {tag}):\n" +
                        "\n".join(bad or [res[0][2][-2000:]]),
                        wrong=any(rc == 1 for _, rc, _ in res))
    j = lines[-1]
    return {"p50_us": j["p50_us"], "min_us": j["min_us"], "max_us": j["max_us"], "n": j["iters"],
            "verified": j["verified"]}


def epic_groups(lab, n, window):
    """incd's configuration of groups 1..n, all of every rank, one per EPIC run."""
    groups = []
    for g in range(n):
        use_group(lab, g)
        groups.append(lab.group(1 + g, len(lab.ranks), [lab.rank_child(r) for r in lab.ranks],
                                window=window))
    return groups


def incd_trouble(lab):
    """incd's non-zero samples that speak of drops, errors, stalls or busy slots."""
    try:
        text = lab.metrics(lab.switches[0], quiet=True) or ""
    except Exception as e:  # diagnostics only
        return f"(cannot scrape: {e})"
    keep = []
    for line in text.splitlines():
        if line.startswith("#") or not any(w in line for w in ("drop", "error", "stall", "fail",
                                                                "busy", "missing", "progress")):
            continue
        try:
            if float(line.rsplit(" ", 1)[1]) != 0:
                keep.append(line)
        except (IndexError, ValueError):
            pass
    return "\n".join(keep[:60]) or "(none)"


def epic_round(lab, case, args, tag):
    """One EPIC run of `case` through incd: libinc's inc-bench per rank (the Communicator on
    the soft transport) calling the case warmup + iters times, in a group of its own
    (args.next_group); rank 0's latency percentiles of the timed calls."""
    iters, warmup = iters_of(case, args)
    timeout_s = op_timeout_s(case, args)
    use_group(lab, args.next_group)
    args.next_group += 1
    argv = [args.inc_bench, "--primitives", case.primitive, "--iters", str(iters),
            "--warmup", str(warmup), "--seed", str(1 + zlib.crc32(tag.encode()) % 1000), "--json"]
    if case.primitive != "barrier":
        argv += ["--dtypes", case.dtype, "--sizes", str(case.bytes)]
    n = len(lab.ranks)
    res = lab.run_in_ranks(
        lab.ranks, lambda r: argv,
        lambda r: lab.rank_env(r, n, window=args.window,
                               extra={"INC_TIMEOUT_MS": str(int(timeout_s * 1000) - 5000)}),
        timeout_s)
    lines = [j for j in json_lines(res[0][2]) if j.get("tool") == "epic"]
    if any(rc != 0 for _, rc, _ in res) or len(lines) != 1 or lines[0]["iters"] != iters:
        texts = [f"rank {r.index} rc={rc}\n{out[-2000:]}" for r, rc, out in res]
        raise RunFailed(f"inc-bench failed ({case.key}, {tag}):\n" + "\n".join(texts) +
                        f"\n--- incd log:\n{lab.log(lab.switches[0])[-1500:]}"
                        f"\n--- incd counters (non-zero drops, errors):\n{incd_trouble(lab)}",
                        wrong=any(rc == 1 for _, rc, _ in res))
    j = lines[0]
    return {"p50_us": j["p50_us"], "min_us": j["min_us"], "max_us": j["max_us"], "n": j["iters"],
            "verified": j["verified"]}


TOOLS = {"gloo": gloo_round, "epic": epic_round}


def run_tool(lab, tool, case, args, tag, failures):
    """TOOLS[tool], repeated up to args.retries times after a failure that is not a wrong
    result; every failure is logged and kept in `failures` for the report."""
    for attempt in range(1 + args.retries):
        try:
            return TOOLS[tool](lab, case, args, f"{tag}-a{attempt}")
        except RunFailed as e:
            first = next((ln for ln in str(e).splitlines() if "inc-bench:" in ln or
                          "gloo_bench:" in ln), str(e).splitlines()[0])
            log(f"inc_vs_gloo: {tool} {case.key} attempt {attempt} FAILED: {first.strip()}")
            if e.wrong or attempt == args.retries:
                raise
            log(str(e)[-6000:])
            failures.append((tool, case.key, first.strip()))


# --- machine facts -----------------------------------------------------------------------------

# --- report ------------------------------------------------------------------------------------

def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def summarise(case, rounds):
    """rounds: [{"gloo": {...}, "epic": {...}}] -> table cells."""
    g = [r["gloo"]["p50_us"] for r in rounds]
    e = [r["epic"]["p50_us"] for r in rounds]
    ratios = [r["epic"]["p50_us"] / r["gloo"]["p50_us"] for r in rounds]
    gm, em = statistics.median(g), statistics.median(e)
    return {"case": case.key, "title": case.title, "bytes": case.bytes, "rounds": len(rounds),
            "gloo_p50_us": gm, "gloo_min_us": min(g), "gloo_max_us": max(g),
            "epic_p50_us": em, "epic_min_us": min(e), "epic_max_us": max(e),
            "ratio": em / gm, "ratio_min": min(ratios), "ratio_max": max(ratios)}


def markdown(summaries, facts, args):
    out = []
    out.append(f"Machine: {facts['nproc']} CPUs ({facts['cpu']}), kernel {facts['kernel']}; "
               f"load average {facts['load_before']} before, {facts['load_after']} after; "
               f"{facts['date']}. Build: {facts['build']} "
               f"({facts.get('CMAKE_BUILD_TYPE', '?')}, {facts.get('CMAKE_CXX_COMPILER', '?')}). "
               f"{args.ranks} ranks, one incd (`idle_sleep_us` {args.idle_sleep_us}, EAL lcores "
               f"0-1, one worker), group window {args.window}, PMTU 1024; {args.rounds} rounds; "
               f"per round {args.warmup} + {args.iters} iterations (4 MiB: {args.warmup_large} + "
               f"{args.iters_large}). incd used {facts['incd_cpu_share']} of one CPU over the "
               f"rounds. Kernel ping rank 0 → rank 1 through incd, min/avg/max µs: "
               f"{facts['ping_before']} before, {facts['ping_after']} after.")
    if facts["failures"]:
        out.append("")
        out.append(f"Runs that failed and were repeated ({len(facts['failures'])}):")
        for tool, key, first in facts["failures"]:
            out.append(f"- {tool} {key}: `{first[:200]}`")
    out.append("")
    out.append("| case | Gloo ring, µs (min–max) | EPIC via incd, µs (min–max) | "
               "EPIC / Gloo (per-round min–max) | Gloo algbw Gb/s | EPIC algbw Gb/s |")
    out.append("|---|---|---|---|---|---|")
    for s in summaries:
        def bw(us):
            return f"{s['bytes'] * 8 / (us * 1e3):.2f}" if s["bytes"] else "–"
        out.append(f"| {s['title']} | {fmt(s['gloo_p50_us'])} ({fmt(s['gloo_min_us'])}–"
                   f"{fmt(s['gloo_max_us'])}) | {fmt(s['epic_p50_us'])} ({fmt(s['epic_min_us'])}–"
                   f"{fmt(s['epic_max_us'])}) | **{s['ratio']:.2f}** ({s['ratio_min']:.2f}–"
                   f"{s['ratio_max']:.2f}) | {bw(s['gloo_p50_us'])} | {bw(s['epic_p50_us'])} |")
    return "\n".join(out) + "\n"


def write_docs(table, command, args):
    begin, end = markers(args)
    with open(DOC) as f:
        text = f.read()
    if begin not in text or end not in text:
        raise RuntimeError(f"{DOC} lacks the markers {begin} / {end}: add them where this "
                           "setting's table belongs")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    block = f"{begin}\nCommand (as root): `{command}`\n\n{table}{end}"
    with open(DOC, "w") as f:
        f.write(head + block + tail)
    log(f"inc_vs_gloo: wrote the table into {DOC}")


# --- main --------------------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("EPIC_BENCH_BUILD",
                                                      os.path.join(ROOT, "build", "release")))
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters-large", type=int, default=10)
    ap.add_argument("--warmup-large", type=int, default=2)
    ap.add_argument("--idle-sleep-us", type=int, default=50,
                    help="incd's idle_sleep_us (0 = busy polling; 50 = the lab's default)")
    ap.add_argument("--window", type=int, default=16,
                    help="EPIC group window MW, a power of two (16: the lab's default)")
    ap.add_argument("--cases", default=",".join(c.key for c in CASES))
    ap.add_argument("--retries", type=int, default=1,
                    help="repeat a run that failed (timeout, QP error; never a wrong result) "
                         "up to this many times; each repeat is reported")
    ap.add_argument("--jsonl", help="also write every round's figures as JSON lines here")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="smoke: 2 rounds, 3+1 iterations, Barrier and 4 KiB fp32")
    ap.add_argument("--max-s", type=int, default=1800, help="wall-clock limit of the whole run")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.iters, args.warmup = 2, 3, 1
        args.iters_large, args.warmup_large = 2, 1
        args.cases = "barrier,ar4k_fp32"
        args.max_s = min(args.max_s, 300)
    if not 2 <= args.ranks <= 32:
        ap.error("--ranks must be 2 .. 32")
    if args.rounds < 1 or args.iters < 1 or args.iters_large < 1:
        ap.error("--rounds, --iters and --iters-large must be >= 1")
    if args.window < 1 or args.window & (args.window - 1):
        ap.error("--window must be a power of two")
    keys = {c.key: c for c in CASES}
    try:
        args.case_list = [keys[k] for k in args.cases.split(",") if k]
    except KeyError as e:
        ap.error(f"unknown case {e}; cases: {', '.join(keys)}")
    args.build = os.path.abspath(args.build)
    args.gloo_bench = os.path.join(args.build, "tests", "bench", "gloo_bench")
    args.inc_bench = os.path.join(args.build, "tools", "inc-bench", "inc-bench")
    return args


def main():
    args = parse_args()
    if os.geteuid() != 0:
        print('{"bench":"inc_vs_gloo","skip":"needs root (network namespaces)"}')
        return 77
    if not os.access(args.gloo_bench, os.X_OK):
        print('{"bench":"inc_vs_gloo","skip":"no gloo_bench in the build (libgloo-dev)"}')
        return 77
    if not os.access(args.inc_bench, os.X_OK):
        print(f"inc_vs_gloo: {args.inc_bench} is missing: build the inc-bench target",
              file=sys.stderr)
        return 1
    command = "/usr/bin/python3 tests/bench/inc_vs_gloo.py " + " ".join(
        a for a in sys.argv[1:] if a != "--write-docs")
    incd_lab.install_signal_exit()

    def on_alarm(signum, frame):
        raise SystemExit(f"inc_vs_gloo: the run exceeded --max-s {args.max_s} s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(args.max_s)

    facts = {"nproc": os.cpu_count(), "cpu": cpu_model(), "kernel": platform.release(),
             "load_before": loadavg(), "date": time.strftime("%Y-%m-%d %H:%M"),
             "build": os.path.relpath(args.build, ROOT), **build_facts(args.build)}
    jsonl = open(args.jsonl, "w") if args.jsonl else None
    rounds = {c.key: [] for c in args.case_list}
    failures = []  # (tool, case, first line of the error) of each repeated run
    with incd_lab.Lab(args.build, "gloo") as lab:
        sw = lab.add_switch("sw")
        for _ in range(args.ranks):
            lab.add_rank(sw)
        groups = epic_groups(lab, args.rounds * len(args.case_list) * (1 + args.retries),
                             args.window)
        args.next_group = 0
        lab.write_config(sw, groups, extra={"idle_sleep_us": args.idle_sleep_us})
        lab.start_incd(sw, timeout=60)  # a loaded 2-CPU box can take 20 s
        incd_pid = sw.proc.pid  # `ip netns exec` execs incd in place: the same PID
        facts["ping_before"] = ping_rtt(lab)
        cpu0, t0 = proc_cpu_s(incd_pid), time.time()
        fwd_checked = False
        for k in range(args.rounds):
            order = ["gloo", "epic"] if k % 2 == 0 else ["epic", "gloo"]
            for case in args.case_list:
                got = {}
                for tool in order:
                    before = (lab.metric(lab.metrics(sw), "incd_switch_frames_total",
                                         disposition="forwarded")
                              if tool == "gloo" and not fwd_checked else None)
                    got[tool] = run_tool(lab, tool, case, args, f"r{k}-{case.key}-{tool}",
                                         failures)
                    if before is not None:
                        after = lab.metric(lab.metrics(sw), "incd_switch_frames_total",
                                           disposition="forwarded")
                        log(f"inc_vs_gloo: incd forwarded {after - before:.0f} frames during "
                            f"the first Gloo run")
                        if after - before <= 0:
                            raise RuntimeError("Gloo's TCP traffic did not cross incd")
                        fwd_checked = True
                    if not got[tool]["verified"]:
                        raise RuntimeError(f"{tool} reported a wrong result in {case.key}")
                rounds[case.key].append(got)
                line = {"round": k, "case": case.key, "order": order,
                        **{f"{t}_{f}": got[t][f] for t in order for f in ("p50_us", "min_us",
                                                                          "max_us")}}
                log(json.dumps(line))
                if jsonl:
                    jsonl.write(json.dumps(line) + "\n")
        cpu1, t1 = proc_cpu_s(incd_pid), time.time()
        facts["incd_cpu_share"] = (f"{(cpu1 - cpu0) / (t1 - t0) * 100:.0f} %"
                                   if cpu0 is not None and cpu1 is not None else "?")
        facts["ping_after"] = ping_rtt(lab)
        rc = lab.stop_incd(sw)
        if rc != 0:
            raise RuntimeError(f"incd exited {rc} on SIGTERM:\n{lab.log(sw)}")
    signal.alarm(0)
    if jsonl:
        jsonl.close()
    facts["load_after"] = loadavg()
    summaries = [summarise(c, rounds[c.key]) for c in args.case_list]
    for s in summaries:
        log(json.dumps({"bench": "inc_vs_gloo", **s}))
    facts["failures"] = failures
    table = markdown(summaries, facts, args)
    print(table, end="")
    if args.write_docs:
        write_docs(table, command, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
