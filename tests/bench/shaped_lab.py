#!/usr/bin/python3
"""shaped_lab: EPIC through incd versus Gloo's ring, both bound by the same emulated per-host links.

The netns lab of inc_vs_gloo.py (deploy/netns/incd_lab.py: one incd switch namespace, N rank
namespaces, one veth pair per rank, MTU 4200 here), with every rank's link shaped by `tc tbf`
in BOTH directions: egress of the rank-side veth (rank -> switch) and egress of the
switch-side veth (switch -> rank). incd's af_packet ports are opened with qdisc_bypass=0 so
that incd's transmissions go through the switch-side qdisc (DPDK's af_packet PMD bypasses the
qdisc by default). Rates: --rate 1gbit,10gbit[,none] (none: no tc, the unshaped lab).

  gloo  tests/bench/gloo_bench: Gloo's ring AllReduce / Barrier over TCP between the ranks'
        kernel addresses (crossing incd's L2 forwarding);
  epic  tools/inc-bench: libinc on the soft transport, a Mode-II group of all ranks in incd,
        PMTU 4096 (INC_PMTU=4096, group pmtu 4096), window --window.

Cases: Barrier and fp32 AllReduce of 4 KiB, 16 KiB, ..., 64 MiB per rank (--sizes). Per
(rate, ranks) one lab; each round runs every case with both tools, alternating which goes
first. A round's figure is rank 0's median per-operation latency; the table gives the median
over rounds (min-max), algorithm bandwidth (bytes x 8 / time), the speed-up Gloo/EPIC and that
speed-up as a fraction of the traffic bound 2(n-1)/n (a ring moves 2(n-1)/n of the buffer over
each rank's link, in-network aggregation moves it once).

  shaped_lab.py [--build DIR] [--rate 1gbit,10gbit,none] [--ranks 4,8] [--rounds 3]
                [--sizes 4K,16K,...,64M] [--window 64] [--idle-sleep-us 50] [--retries 1]
                [--jsonl PATH] [--write-docs] [--no-perf] [--quick]

The figure (algorithm bandwidth vs size, both tools, the ideals drawn) is drawn from --jsonl
by tests/bench/plot_shaped_lab.py (matplotlib).

Needs root; exits 77 without it or without gloo_bench. Every name has a unique suffix; all
namespaces, veths (and with them the qdiscs) and processes it started are removed on exit,
failure and SIGINT/SIGTERM included; every tool run has a timeout, the whole run --max-s.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "deploy", "netns"))
import incd_lab  # noqa: E402
from lab_bench import (RunFailed, build_facts, cpu_model, json_lines, loadavg, log,  # noqa: E402
                       ping_rtt, proc_cpu_s, use_group)

KIB, MIB = 1 << 10, 1 << 20
DOC = os.path.join(ROOT, "docs", "baselines.md")
BEGIN, END = "<!-- shaped_lab begin -->", "<!-- shaped_lab end -->"
RATES = {"none": None}  # name -> bits/s; "1gbit", "10gbit", "2.5gbit", "100mbit" parse below


def parse_rate(text):
    t = text.strip().lower()
    if t in RATES:
        return RATES[t]
    for suffix, mul in (("gbit", 1e9), ("mbit", 1e6)):
        if t.endswith(suffix):
            return float(t[:-len(suffix)]) * mul
    raise ValueError(f"rate {text!r}: use e.g. 1gbit, 10gbit, 500mbit or none")


def parse_size(text):
    t = text.strip().upper()
    mul = {"K": KIB, "M": MIB, "G": 1 << 30}.get(t[-1:], 1)
    return int(t[:-1] if mul != 1 else t) * mul


def size_name(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // KIB} KiB" if b >= KIB else f"{b} B"


# --- the lab: incd ports through the qdisc; tc shaping on both ends of every rank link -------

class ShapedLab(incd_lab.Lab):
    def write_config(self, s, groups, **kw):
        path = super().write_config(s, groups, **kw)
        with open(path) as f:
            cfg = json.load(f)
        for p in cfg["ports"]:  # DPDK's af_packet PMD sets PACKET_QDISC_BYPASS unless told not to
            p["device"] += ",qdisc_bypass=0"
        cfg["eal"]["memory_mb"] = 512  # one window-64, PMTU-4096 group per run
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
        return path

    def links(self):
        """[(rank, rank ns, rank-side veth, switch ns, switch-side veth)]."""
        out = []
        for r in self.ranks:
            sw_if = dict(r.switch.ports)[r.port_name]
            out.append((r, r.ns, r.ifname, r.switch.ns, sw_if))
        return out


def tbf_params(rate_bps, mtu):
    """tbf burst and queue limit (bytes) for a link of rate_bps: burst = 0.5 ms of the rate
    (>= 32 KiB, several jumbo frames, so the timer's granularity does not cost rate); queue =
    10 ms of the rate (>= 2 MiB): deeper than an EPIC window and a TCP window, so the shaper
    delays rather than drops what the senders' windows let out."""
    burst = max(32 * KIB, int(rate_bps * 0.5e-3 / 8), 4 * mtu)
    limit = max(2 * MIB, int(rate_bps * 10e-3 / 8))
    return burst, limit


def shape(ns, dev, rate_bps, mtu):
    """Shapes egress of `dev` in namespace `ns` to rate_bps with a token bucket (tc tbf)."""
    burst, limit = tbf_params(rate_bps, mtu)
    incd_lab.sh("tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
                "rate", f"{int(rate_bps)}bit", "burst", str(burst), "limit", str(limit))


def shape_lab(lab, rate_bps):
    for _, rns, rif, sns, sif in lab.links():
        shape(rns, rif, rate_bps, lab.mtu)   # rank -> switch
        shape(sns, sif, rate_bps, lab.mtu)   # switch -> rank


def qdisc_stats(ns, dev):
    out = incd_lab.sh("tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev, quiet=True)
    try:
        q = json.loads(out)[0]
        return {"kind": q.get("kind"), "bytes": q.get("bytes", 0), "packets": q.get("packets", 0),
                "drops": q.get("drops", 0), "overlimits": q.get("overlimits", 0)}
    except (ValueError, IndexError):
        return {"kind": "?", "bytes": 0, "packets": 0, "drops": 0, "overlimits": 0}


def lab_qdiscs(lab):
    """Sums of the rank-side ("up") and switch-side ("down") qdisc counters."""
    tot = {}
    for _, rns, rif, sns, sif in lab.links():
        for side, ns, dev in (("up", rns, rif), ("down", sns, sif)):
            st = qdisc_stats(ns, dev)
            for k in ("bytes", "packets", "drops", "overlimits"):
                tot[f"{side}_{k}"] = tot.get(f"{side}_{k}", 0) + st[k]
    return tot


def delta(a, b):
    return {k: b[k] - a.get(k, 0) for k in b}


TCP_SINK = r"""
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(30); n = 0; t0 = t1 = None
while True:
    b = c.recv(1 << 20)
    if not b: break
    t1 = time.time(); t0 = t0 or t1; n += len(b)
print(n, t1 - t0 if t0 else 0)
"""
TCP_SOURCE = r"""
import socket, sys, time
for _ in range(100):
    try:
        s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); break
    except OSError: time.sleep(0.1)
buf = b"\0" * (1 << 20); end = time.time() + float(sys.argv[3])
while time.time() < end: s.sendall(buf)
s.close()
"""


def tcp_check(lab, seconds):
    """One TCP stream rank 0 -> rank 1 (kernel addresses, through incd) for `seconds`: the
    receiver's goodput, Gb/s, and the qdisc counters' change."""
    a, b = lab.ranks[0], lab.ranks[1]
    out = os.path.join(lab.tmp, "tcp-sink.out")
    q0 = lab_qdiscs(lab)
    f = open(out, "w")
    sink = subprocess.Popen(["ip", "netns", "exec", b.ns, "/usr/bin/python3", "-c", TCP_SINK,
                             b.kernel_ip, "5201"], stdout=f, stderr=subprocess.STDOUT)
    f.close()
    lab.procs.append(sink)
    time.sleep(0.3)
    src = subprocess.Popen(["ip", "netns", "exec", a.ns, "/usr/bin/python3", "-c", TCP_SOURCE,
                            b.kernel_ip, "5201", str(seconds)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.STDOUT)
    lab.procs.append(src)
    res = incd_lab.wait_procs([("src", src, os.devnull), ("sink", sink, out)], seconds + 40)
    q1 = lab_qdiscs(lab)
    try:
        n, dt = res[1][2].split()
        gbps = int(n) * 8 / float(dt) / 1e9 if float(dt) > 0 else 0.0
    except ValueError:
        gbps = 0.0
    return gbps, delta(q0, q1)


# --- the two tools -----------------------------------------------------------------------------

def iters_of(nbytes, args):
    """(timed, warm-up) iterations: 20 + 3 up to 1 MiB, then about args.bytes_budget bytes per
    run, at least 2 timed + 1 warm-up."""
    if nbytes <= MIB:
        return args.iters, args.warmup
    return max(2, min(args.iters, args.bytes_budget // nbytes)), 1


def op_timeout_s(nbytes, args):
    iters, warmup = iters_of(nbytes, args)
    per_op = max(1.0, nbytes * 8 / 20e6)  # a floor of 20 Mb/s: a loaded box, retransmissions
    return 40 + (iters + warmup) * per_op


def gloo_run(lab, case, args, tag):
    nbytes = case["bytes"]
    iters, warmup = iters_of(nbytes, args)
    store = os.path.join(lab.tmp, f"gloo-store-{tag}")
    os.mkdir(store)
    timeout_s = op_timeout_s(nbytes, args)
    procs = []
    for r in lab.ranks:
        out = os.path.join(lab.tmp, f"gloo-{tag}-rank{r.index}.out")
        cmd = ["ip", "netns", "exec", r.ns, args.gloo_bench, "--rank", str(r.index),
               "--ranks", str(len(lab.ranks)), "--iface", r.kernel_ip, "--store", store,
               "--primitive", case["primitive"], "--iters", str(iters), "--warmup", str(warmup),
               "--timeout-ms", str(int(timeout_s * 1000) - 5000), "--json"]
        if case["primitive"] == "allreduce":
            cmd += ["--dtype", "fp32", "--bytes", str(nbytes)]
        f = open(out, "w")
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        f.close()
        lab.procs.append(p)
        procs.append((f"gloo rank {r.index}", p, out))
    res = incd_lab.wait_procs(procs, timeout_s)
    bad = [f"{n} rc={rc}\n{t[-1500:]}" for n, rc, t in res if rc != 0]
    lines = [j for j in json_lines(res[0][2]) if j.get("tool") == "gloo"]
    if bad or not lines:
        raise RunFailed(f"gloo_bench failed ({case['key']}, {tag}):\n" +
                        "\n".join(bad or [res[0][2][-1500:]]),
                        wrong=any(rc == 1 for _, rc, _ in res))
    j = lines[-1]
    return {"p50_us": j["p50_us"], "min_us": j["min_us"], "max_us": j["max_us"],
            "n": j["iters"], "verified": j["verified"]}


def epic_groups(lab, n, args):
    groups = []
    for g in range(n):
        use_group(lab, g)
        groups.append(lab.group(1 + g, len(lab.ranks), [lab.rank_child(r) for r in lab.ranks],
                                window=args.window, pmtu=args.pmtu))
    return groups


def epic_run(lab, case, args, tag):
    nbytes = case["bytes"]
    iters, warmup = iters_of(nbytes, args)
    timeout_s = op_timeout_s(nbytes, args)
    if lab.next_group >= lab.n_groups:
        raise RuntimeError("out of EPIC groups (raise --retries' share)")
    use_group(lab, lab.next_group)
    lab.next_group += 1
    argv = [args.inc_bench, "--primitives", case["primitive"], "--iters", str(iters),
            "--warmup", str(warmup), "--seed", str(1 + zlib.crc32(tag.encode()) % 1000), "--json"]
    if case["primitive"] != "barrier":
        argv += ["--dtypes", "fp32", "--sizes", str(nbytes)]
    n = len(lab.ranks)
    res = lab.run_in_ranks(
        lab.ranks, lambda r: argv,
        lambda r: lab.rank_env(r, n, window=args.window, pmtu=args.pmtu,
                               extra={"INC_TIMEOUT_MS": str(int(timeout_s * 1000) - 5000)}),
        timeout_s)
    lines = [j for j in json_lines(res[0][2]) if j.get("tool") == "epic"]
    if any(rc != 0 for _, rc, _ in res) or len(lines) != 1 or lines[0]["iters"] != iters:
        texts = [f"rank {r.index} rc={rc}\n{out[-1500:]}" for r, rc, out in res]
        raise RunFailed(f"inc-bench failed ({case['key']}, {tag}):\n" + "\n".join(texts) +
                        f"\n--- incd log:\n{lab.log(lab.switches[0])[-1500:]}",
                        wrong=any(rc == 1 for _, rc, _ in res))
    j = lines[0]
    return {"p50_us": j["p50_us"], "min_us": j["min_us"], "max_us": j["max_us"],
            "n": j["iters"], "verified": j["verified"]}


TOOLS = {"gloo": gloo_run, "epic": epic_run}


def run_tool(lab, tool, case, args, tag, failures):
    for attempt in range(1 + args.retries):
        try:
            return TOOLS[tool](lab, case, args, f"{tag}-a{attempt}")
        except RunFailed as e:
            first = next((ln for ln in str(e).splitlines() if "inc-bench:" in ln or
                          "gloo_bench:" in ln), str(e).splitlines()[0])
            log(f"shaped_lab: {tool} {case['key']} attempt {attempt} FAILED: {first.strip()}")
            failures.append((lab.setting, tool, case["key"], first.strip()))
            if e.wrong or attempt == args.retries:
                if e.wrong:
                    raise
                return None  # reported as missing, the run goes on
            log(str(e)[-4000:])
    return None


# --- machine facts and CPU accounting ---------------------------------------------------------

def cpu_times():
    """(busy, softirq, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, v[6], sum(v)


def perf_profile(lab, tool, case, args, failures):
    """One extra run of `case` by `tool` under `perf record -e cpu-clock -a`: the share of CPU
    samples per command (comm), top 8. None if perf is missing or fails."""
    data = os.path.join(lab.tmp, f"perf-{tool}.data")
    try:
        p = subprocess.Popen(["timeout", "120", "perf", "record", "-q", "-e", "cpu-clock", "-a",
                              "-F", "499", "-o", data], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    except OSError:
        return None
    lab.procs.append(p)
    time.sleep(0.5)
    try:
        run_tool(lab, tool, case, args, f"perf-{tool}", failures)
    finally:
        p.send_signal(signal.SIGINT)  # `timeout` passes it on to perf, which writes the file
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "comm", "-q"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120)
    rows = []
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith("%"):
            try:
                rows.append((float(parts[0][:-1]), " ".join(parts[1:])))
            except ValueError:
                pass
    return rows[:8] or None


# --- one (rate, ranks) setting -----------------------------------------------------------------

def run_setting(args, rate_name, rate_bps, nranks, cases, failures, jsonl):
    setting = f"{rate_name}, {nranks} ranks"
    out = {"rate": rate_name, "rate_bps": rate_bps, "ranks": nranks, "rounds": {},
           "load_before": loadavg()}
    with ShapedLab(args.build, "shaped", mtu=args.mtu) as lab:
        lab.setting = setting
        sw = lab.add_switch("sw")
        for _ in range(nranks):
            lab.add_rank(sw)
        if rate_bps:
            shape_lab(lab, rate_bps)
        lab.n_groups = args.rounds * len(cases) * (1 + args.retries) + 2 * (1 + args.retries)
        lab.next_group = 0
        groups = epic_groups(lab, lab.n_groups, args)
        lab.write_config(sw, groups, extra={"idle_sleep_us": args.idle_sleep_us})
        lab.start_incd(sw, timeout=60)
        incd_pid = sw.proc.pid
        out["ping"] = ping_rtt(lab, count=30)
        tcp_s = 2.0 if args.quick else 3.0
        out["tcp_gbps"], out["tcp_qdisc"] = tcp_check(lab, tcp_s)
        if rate_bps:
            burst, limit = tbf_params(rate_bps, lab.mtu)
            out["tbf"] = f"tbf rate {rate_name} burst {burst} limit {limit}"
            log(f"shaped_lab: [{setting}] `{out['tbf']}` on {2 * nranks} veth ends; one TCP "
                f"stream rank 0 -> rank 1: {out['tcp_gbps']:.3f} Gb/s "
                f"({out['tcp_gbps'] * 1e9 / rate_bps * 100:.0f} % of the rate); qdisc counters "
                f"during it: {out['tcp_qdisc']}")
        else:
            log(f"shaped_lab: [{setting}] unshaped; one TCP stream rank 0 -> rank 1: "
                f"{out['tcp_gbps']:.3f} Gb/s")
        cpu0, t0, st0 = proc_cpu_s(incd_pid), time.time(), cpu_times()
        tool_cpu = {"gloo": [0, 0, 0.0], "epic": [0, 0, 0.0]}  # busy, total jiffies, wall s
        qdisc_tool = {"gloo": {}, "epic": {}}
        for k in range(args.rounds):
            order = ["gloo", "epic"] if k % 2 == 0 else ["epic", "gloo"]
            for case in cases:
                got = {}
                for tool in order:
                    q0, c0, w0 = lab_qdiscs(lab) if rate_bps else {}, cpu_times(), time.time()
                    got[tool] = run_tool(lab, tool, case, args, f"r{k}-{case['key']}-{tool}",
                                         failures)
                    c1 = cpu_times()
                    tool_cpu[tool][0] += c1[0] - c0[0]
                    tool_cpu[tool][1] += c1[2] - c0[2]
                    tool_cpu[tool][2] += time.time() - w0
                    if rate_bps:
                        for key, v in delta(q0, lab_qdiscs(lab)).items():
                            qdisc_tool[tool][key] = qdisc_tool[tool].get(key, 0) + v
                    if got[tool] is not None and not got[tool]["verified"]:
                        raise RuntimeError(f"{tool} reported a wrong result in {case['key']}")
                out["rounds"].setdefault(case["key"], []).append(got)
                line = {"bench": "shaped_lab", "rate": rate_name, "ranks": nranks, "round": k,
                        "case": case["key"], "bytes": case["bytes"], "order": order,
                        **{f"{t}_{f}": (got[t] or {}).get(f) for t in order
                           for f in ("p50_us", "min_us", "max_us", "n")}}
                log(json.dumps(line))
                if jsonl:
                    jsonl.write(json.dumps(line) + "\n")
                    jsonl.flush()
        cpu1, t1 = proc_cpu_s(incd_pid), time.time()
        st1 = cpu_times()
        out["incd_cpu"] = ((cpu1 - cpu0) / (t1 - t0) if cpu0 is not None and cpu1 is not None
                           else None)
        out["machine_busy"] = (st1[0] - st0[0]) / max(1, st1[2] - st0[2])
        out["machine_softirq"] = (st1[1] - st0[1]) / max(1, st1[2] - st0[2])
        out["tool_busy"] = {t: v[0] / max(1, v[1]) for t, v in tool_cpu.items()}
        out["qdisc"] = qdisc_tool
        if rate_bps is None and args.perf:
            big = max((c for c in cases if c["primitive"] == "allreduce"),
                      key=lambda c: c["bytes"], default=None)
            if big is not None:
                prof_case = dict(big)
                if prof_case["bytes"] > 16 * MIB:
                    prof_case.update(bytes=16 * MIB, key="ar16m")
                out["perf_case"] = size_name(prof_case["bytes"])
                out["perf"] = {t: perf_profile(lab, t, prof_case, args, failures)
                               for t in ("gloo", "epic")}
                log(f"shaped_lab: [{setting}] perf cpu-clock by comm: {out['perf']}")
        out["ping_after"] = ping_rtt(lab, count=30)
        lab.stop_incd(sw)
    out["load_after"] = loadavg()
    return out


# --- report ------------------------------------------------------------------------------------

def fmt_us(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} s"
    if x >= 1e3:
        return f"{x / 1e3:.1f} ms"
    return f"{x:.0f} µs"


def summarise(res, cases):
    n, rate = res["ranks"], res["rate_bps"]
    bound = 2 * (n - 1) / n
    rows = []
    for case in cases:
        rounds = [r for r in res["rounds"].get(case["key"], []) if r["gloo"] and r["epic"]]
        if not rounds:
            rows.append({"case": case, "missing": True})
            continue
        g = [r["gloo"]["p50_us"] for r in rounds]
        e = [r["epic"]["p50_us"] for r in rounds]
        sp = [r["gloo"]["p50_us"] / r["epic"]["p50_us"] for r in rounds]
        gm, em = statistics.median(g), statistics.median(e)
        row = {"case": case, "rounds": len(rounds), "gloo_us": gm, "gloo_min": min(g),
               "gloo_max": max(g), "epic_us": em, "epic_min": min(e), "epic_max": max(e),
               "speedup": gm / em, "speedup_min": min(sp), "speedup_max": max(sp)}
        if case["bytes"]:
            row["gloo_gbps"] = case["bytes"] * 8 / (gm * 1e3)
            row["epic_gbps"] = case["bytes"] * 8 / (em * 1e3)
            row["of_bound"] = row["speedup"] / bound
            if rate:
                row["epic_of_link"] = row["epic_gbps"] * 1e9 / rate
                row["gloo_of_ring"] = row["gloo_gbps"] * 1e9 / (rate * n / (2 * (n - 1)))
        rows.append(row)
    return rows


def setting_facts(res, args):
    n = res["ranks"]
    bound = 2 * (n - 1) / n
    s = [f"**{res['rate']}, {n} ranks.** "]
    if res["rate_bps"]:
        ring = res["rate_bps"] * n / (2 * (n - 1)) / 1e9
        s.append(f"`{res['tbf']}` on both ends of every rank's veth. Ideal algorithm bandwidth: "
                 f"EPIC {res['rate_bps'] / 1e9:g} Gb/s (the link), ring {ring:.3g} Gb/s "
                 f"(link·n/(2(n−1))); speed-up bound {bound:.2f}×. ")
        s.append(f"Shaping check: one TCP stream rank 0 → rank 1 through incd "
                 f"{res['tcp_gbps']:.3f} Gb/s ({res['tcp_gbps'] * 1e9 / res['rate_bps'] * 100:.0f} "
                 f"% of the rate). ")
        q = res["qdisc"]
        s.append("tbf counters over the rounds (rank→switch / switch→rank): Gloo "
                 f"{q['gloo'].get('up_bytes', 0) / MIB:,.0f} / "
                 f"{q['gloo'].get('down_bytes', 0) / MIB:,.0f} MiB, drops "
                 f"{q['gloo'].get('up_drops', 0)} / {q['gloo'].get('down_drops', 0)}; EPIC "
                 f"{q['epic'].get('up_bytes', 0) / MIB:,.0f} / "
                 f"{q['epic'].get('down_bytes', 0) / MIB:,.0f} MiB, drops "
                 f"{q['epic'].get('up_drops', 0)} / {q['epic'].get('down_drops', 0)}. ")
    else:
        s.append(f"No tc. One TCP stream rank 0 → rank 1 through incd {res['tcp_gbps']:.3f} Gb/s; "
                 f"speed-up bound {bound:.2f}×. ")
    ic = res.get("incd_cpu")
    s.append(f"Load average {res['load_before']} before, {res['load_after']} after. CPU busy "
             f"(all {os.cpu_count()} CPUs, /proc/stat) during the Gloo runs "
             f"{res['tool_busy']['gloo'] * 100:.0f} %, the EPIC runs "
             f"{res['tool_busy']['epic'] * 100:.0f} %; incd "
             f"{'?' if ic is None else f'{ic * 100:.0f} %'} of one CPU; softirq "
             f"{res['machine_softirq'] * 100:.0f} % of all CPU time. Ping rank 0 → 1 "
             f"min/avg/max µs {res['ping']} before, {res['ping_after']} after.")
    if res.get("perf"):
        for tool, rows in res["perf"].items():
            if rows:
                s.append(f" perf `cpu-clock -a`, one {res['perf_case']} {tool} run, samples by "
                         f"command: " + ", ".join(f"{c} {p:.0f} %" for p, c in rows[:6]) + ".")
    return "".join(s)


def markdown(results, cases, facts, args):
    out = [f"Machine: {facts['nproc']} CPUs ({facts['cpu']}), kernel {facts['kernel']}; "
           f"{facts['date']}; load average {facts['load_before']} at the start, "
           f"{facts['load_after']} at the end; {facts['elapsed_min']:.1f} min. Build: "
           f"{facts['build']} ({facts.get('CMAKE_BUILD_TYPE', '?')}, "
           f"{facts.get('CMAKE_CXX_COMPILER', '?')}). MTU {args.mtu} on every veth and incd port; "
           f"EPIC PMTU {args.pmtu}, group window {args.window}, incd `idle_sleep_us` "
           f"{args.idle_sleep_us} (one worker, EAL lcores 0-1); {args.rounds} rounds, tools "
           f"alternating; iterations per run {args.warmup} + {args.iters} up to 1 MiB, then "
           f"1 + max(2, {args.bytes_budget // MIB} MiB / size)."]
    if facts["failures"]:
        out.append("")
        out.append(f"Runs that failed ({len(facts['failures'])}; repeated up to --retries "
                   f"{args.retries}, a case missing from a table failed every attempt):")
        for setting, tool, key, first in facts["failures"]:
            out.append(f"- {setting}, {tool} {key}: `{first[:180]}`")
    for res in results:
        rows = summarise(res, cases)
        out.append("")
        out.append(setting_facts(res, args))
        out.append("")
        shaped = bool(res["rate_bps"])
        out.append("| case | Gloo ring (min–max) | EPIC (min–max) | Gloo algbw Gb/s | "
                   "EPIC algbw Gb/s | speed-up Gloo/EPIC (per-round min–max) | of the bound "
                   f"{2 * (res['ranks'] - 1) / res['ranks']:.2f}× |" +
                   (" EPIC of link | Gloo of ring ideal |" if shaped else ""))
        out.append("|---|---|---|---|---|---|---|" + ("---|---|" if shaped else ""))
        for r in rows:
            c = r["case"]
            if r.get("missing"):
                out.append(f"| {c['title']} | failed | | | | | |" + (" | |" if shaped else ""))
                continue
            bw = (lambda k: f"{r[k]:.3f}" if k in r else "–")
            pct = (lambda k: f"{r[k] * 100:.0f} %" if k in r else "–")
            out.append(f"| {c['title']} | {fmt_us(r['gloo_us'])} ({fmt_us(r['gloo_min'])}–"
                       f"{fmt_us(r['gloo_max'])}) | {fmt_us(r['epic_us'])} "
                       f"({fmt_us(r['epic_min'])}–{fmt_us(r['epic_max'])}) | {bw('gloo_gbps')} | "
                       f"{bw('epic_gbps')} | **{r['speedup']:.2f}×** ({r['speedup_min']:.2f}–"
                       f"{r['speedup_max']:.2f}) | {pct('of_bound')} |" +
                       (f" {pct('epic_of_link')} | {pct('gloo_of_ring')} |" if shaped else ""))
    return "\n".join(out) + "\n"


def write_docs(table, command):
    with open(DOC) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise RuntimeError(f"{DOC} lacks the markers {BEGIN} / {END}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = f"{BEGIN}\nCommand (as root): `{command}`\n\n{table}\n{END}"
    with open(DOC, "w") as f:
        f.write(head + block + tail)
    log(f"shaped_lab: wrote the tables into {DOC}")


# --- main --------------------------------------------------------------------------------------

def default_build():
    if os.environ.get("EPIC_BENCH_BUILD"):
        return os.environ["EPIC_BENCH_BUILD"]
    for d in ("rel", "release"):
        if os.path.exists(os.path.join(ROOT, "build", d, "daemon", "incd")):
            return os.path.join(ROOT, "build", d)
    return os.path.join(ROOT, "build", "release")


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Needs root; exit 77 without root or gloo_bench. Output: progress on stderr, "
               "Markdown tables on stdout; --jsonl every round; --write-docs the tables into "
               "docs/baselines.md (between <!-- shaped_lab begin/end -->); draw the figure "
               "from --jsonl with tests/bench/plot_shaped_lab.py.")
    ap.add_argument("--build", default=default_build(),
                    help="build tree with daemon/incd, tools/inc-bench/inc-bench, "
                         "tools/inc-rank/inc-rank, tests/bench/gloo_bench")
    ap.add_argument("--rate", default="1gbit,10gbit,none",
                    help="comma list of link rates (tc tbf), e.g. 1gbit,10gbit; none = no tc")
    ap.add_argument("--ranks", default="4,8", help="comma list of rank counts")
    ap.add_argument("--sizes", default="4K,16K,64K,256K,1M,4M,16M,64M",
                    help="fp32 AllReduce bytes per rank (suffix K, M)")
    ap.add_argument("--no-barrier", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20, help="timed iterations up to 1 MiB")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up iterations up to 1 MiB")
    ap.add_argument("--bytes-budget", default="32M",
                    help="above 1 MiB: max(2, this / size) timed iterations after 1 warm-up")
    ap.add_argument("--window", type=int, default=64,
                    help="EPIC group window MW in PMTU packets, a power of two (64 x 4 KiB = "
                         "256 KiB in flight per rank: the bandwidth-delay product of 10 Gb/s "
                         "at a 200 µs round trip; docs/baselines.md)")
    ap.add_argument("--pmtu", type=int, default=4096)
    ap.add_argument("--mtu", type=int, default=4200)
    ap.add_argument("--idle-sleep-us", type=int, default=50, help="incd's idle_sleep_us")
    ap.add_argument("--retries", type=int, default=1)
    ap.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the perf cpu-clock profile of the unshaped setting")
    ap.add_argument("--jsonl")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="smoke (1-2 min): 1gbit, 4 ranks, 1 round, Barrier, 4 KiB and 1 MiB, "
                         "2+1 iterations")
    ap.add_argument("--max-s", type=int, default=2400, help="wall-clock limit of the whole run")
    args = ap.parse_args()
    if args.quick:
        args.rate, args.ranks, args.sizes, args.rounds = "1gbit", "4", "4K,1M", 1
        args.iters, args.warmup, args.perf = 2, 1, False
        args.max_s = min(args.max_s, 240)
    try:
        args.rates = [(t.strip(), parse_rate(t)) for t in args.rate.split(",") if t.strip()]
        args.size_list = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
        args.rank_list = [int(x) for x in args.ranks.split(",") if x.strip()]
        args.bytes_budget = parse_size(args.bytes_budget)
    except ValueError as e:
        ap.error(str(e))
    if not args.rates or not args.rank_list or not 1 <= args.rounds <= 50 or args.iters < 1:
        ap.error("need a rate, a rank count, 1..50 rounds, --iters >= 1")
    if any(not 2 <= n <= 16 for n in args.rank_list):
        ap.error("--ranks: 2 .. 16")
    if any(s % 4 or s < 4 for s in args.size_list):
        ap.error("--sizes: multiples of 4 bytes")
    if args.window < 1 or args.window & (args.window - 1):
        ap.error("--window must be a power of two")
    if args.pmtu + 90 > args.mtu:
        ap.error("--pmtu + 90 must fit the --mtu")
    args.build = os.path.abspath(args.build)
    args.gloo_bench = os.path.join(args.build, "tests", "bench", "gloo_bench")
    args.inc_bench = os.path.join(args.build, "tools", "inc-bench", "inc-bench")
    return args


def main():
    args = parse_args()
    if os.geteuid() != 0:
        print('{"bench":"shaped_lab","skip":"needs root (network namespaces, tc)"}')
        return 77
    if not os.access(args.gloo_bench, os.X_OK):
        print('{"bench":"shaped_lab","skip":"no gloo_bench in the build (libgloo-dev)"}')
        return 77
    if not os.access(args.inc_bench, os.X_OK):
        log(f"shaped_lab: {args.inc_bench} is missing: build the inc-bench target")
        return 1
    command = "/usr/bin/python3 tests/bench/shaped_lab.py " + " ".join(
        a for a in sys.argv[1:] if a != "--write-docs")
    incd_lab.install_signal_exit()

    def on_alarm(signum, frame):
        raise SystemExit(f"shaped_lab: the run exceeded --max-s {args.max_s} s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(args.max_s)

    cases = ([] if args.no_barrier else
             [{"key": "barrier", "title": "Barrier", "primitive": "barrier", "bytes": 0}])
    cases += [{"key": f"ar{b}", "title": f"AllReduce {size_name(b)}", "primitive": "allreduce",
               "bytes": b} for b in args.size_list]
    t_start = time.time()
    facts = {"nproc": os.cpu_count(), "cpu": cpu_model(), "kernel": platform.release(),
             "load_before": loadavg(), "date": time.strftime("%Y-%m-%d %H:%M"),
             "build": os.path.relpath(args.build, ROOT), **build_facts(args.build)}
    log(f"shaped_lab: uptime before: {subprocess.run(['uptime'], stdout=subprocess.PIPE, text=True).stdout.strip()}")
    jsonl = open(args.jsonl, "w") if args.jsonl else None
    failures, results = [], []
    try:
        for rate_name, rate_bps in args.rates:
            for n in args.rank_list:
                log(f"shaped_lab: --- {rate_name}, {n} ranks ---")
                results.append(run_setting(args, rate_name, rate_bps, n, cases, failures, jsonl))
    finally:
        signal.alarm(0)
        if jsonl:
            jsonl.close()
    facts["load_after"] = loadavg()
    facts["elapsed_min"] = (time.time() - t_start) / 60
    facts["failures"] = failures
    log(f"shaped_lab: uptime after: {subprocess.run(['uptime'], stdout=subprocess.PIPE, text=True).stdout.strip()}")
    for res in results:
        for row in summarise(res, cases):
            if not row.get("missing"):
                log(json.dumps({"bench": "shaped_lab", "rate": res["rate"], "ranks": res["ranks"],
                                "case": row["case"]["key"],
                                **{k: v for k, v in row.items() if k != "case"}}))
    table = markdown(results, cases, facts, args)
    print(table, end="")
    if args.write_docs:
        write_docs(table, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
