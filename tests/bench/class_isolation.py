#!/usr/bin/python3
"""class_isolation — does a bulk flood through the same incd port slow a latency-bound job?
(issue 19; docs/traffic-classes.md, Slingshot's measurement: 2.85x slowdown in one class,
1.15x with separate classes).

One incd, 5 rank namespaces on veths; every port runs at --rate-mbps (incd's line rate, so the
transmit queue builds in incd). Ranks 0-3 run a static Mode-II group with traffic class DSCP 46
(the group's context: the switch's frames carry it; inc-rank --traffic-class 184: the ranks'
own frames do) and a latency-bound plan: Barrier and a 1 KiB fp32 AllReduce, --reps times.
Rank 4's namespace sends a bulk TCP transfer (DSCP 0, iperf3-style) to rank 0's kernel address,
so rank 0's port queue fills. Four runs, side by side in one invocation:

  one class    (no traffic_classes: one FIFO per port)   without flood | with flood
  two classes  (collectives: DSCP 46, priority 0; bulk: the rest, priority 1)  without | with

The figure is each configuration's slowdown: the median collective latency (rank 0's, which
waits behind its port's queue) with the flood over without. Also printed: p99, the bulk bytes
rank 0 received (the flood still gets the rest of the port), and each class's queue peak and
drops from incd's metrics. A benchmark, not a test: nothing is asserted on time
(BENCHMARKING.md). Needs root; removes everything it created.

  class_isolation.py --build BUILD_DIR [--quick] [--reps N] [--rate-mbps R] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "deploy", "netns"))
import incd_lab  # noqa: E402

GROUP = 4
DSCP = 46
PLAN_ITEM = "barrier,allreduce:fp32:sum:256"
FLOOD_PORT = 5009

TWO_CLASSES = [
    {"name": "collectives", "dscp": [DSCP], "priority": 0},
    {"name": "bulk", "priority": 1, "queue_kb": 512},
]

# The flood is a bulk TCP transfer, as iperf3 makes: it fills whatever queue it shares, backs off
# on loss and fills it again. Each side runs until SIGTERM (sent once the ranks are done) or its
# time bound, then prints the bytes it moved.
RECEIVER = r"""
import signal, socket, sys, time
n = 0
signal.signal(signal.SIGTERM, lambda *a: (print(n, flush=True), sys.exit(0)))
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", %d))
ls.listen(1)
ls.settimeout(float(sys.argv[1]))
c, _ = ls.accept()
c.settimeout(1.0)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    try:
        d = c.recv(1 << 16)
    except socket.timeout:
        continue
    if not d:
        break
    n += len(d)
print(n, flush=True)
""" % FLOOD_PORT

SENDER = r"""
import signal, socket, sys, time
sent = 0
signal.signal(signal.SIGTERM, lambda *a: (print(sent, flush=True), sys.exit(0)))
dst, seconds = sys.argv[1], float(sys.argv[2])
s = socket.create_connection((dst, %d), timeout=10)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0)
chunk = bytes(1 << 16)
end = time.time() + seconds
while time.time() < end:
    sent += s.send(chunk)
print(sent, flush=True)
""" % FLOOD_PORT


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def run(lab, sw, name, classes, flood, args, reps):
    extra = {"traffic_classes": classes} if classes else None
    group = lab.group(1, GROUP, [lab.rank_child(r) for r in lab.ranks[:GROUP]])
    group["dscp"] = DSCP
    lab.write_config(sw, [group], extra=extra, rate_mbps=args.rate_mbps)
    lab.start_incd(sw)
    src, dst = lab.ranks[GROUP], lab.ranks[0]
    flood_procs = []
    seconds = 300  # the bound; the flood is stopped once the ranks are done
    if flood:
        rx = subprocess.Popen(["ip", "netns", "exec", dst.ns, "/usr/bin/python3", "-c", RECEIVER,
                               str(seconds + 2)], stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        tx = subprocess.Popen(["ip", "netns", "exec", src.ns, "/usr/bin/python3", "-c", SENDER,
                               dst.kernel_ip, str(seconds)],
                              stdout=subprocess.PIPE, text=True)
        flood_procs = [rx, tx]
        lab.procs += flood_procs
        time.sleep(1.0)  # the queue fills
    plan = ",".join([PLAN_ITEM] * reps)
    started = lab.start_ranks(lab.ranks[:GROUP], plan, seed=5, timeout_ms=120000,
                              extra=["--traffic-class", str(DSCP << 2)])
    ok, results, texts = lab.wait_ranks(started, 180)
    m = lab.metrics(sw, quiet=True) or ""
    if not m:
        print(f"(could not scrape incd's metrics after run {name})")
    bulk_rx = bulk_tx = None
    for p in reversed(flood_procs):  # the sender first
        if p.poll() is None:
            p.terminate()
        try:
            out = p.communicate(timeout=10)[0].strip()
        except subprocess.TimeoutExpired:
            p.kill()
            out = ""
        if p is flood_procs[0]:
            bulk_rx = int(out) if out.isdigit() else None
        else:
            bulk_tx = int(out) if out.isdigit() else None
    ok &= lab.stop_incd(sw) == 0
    if not ok:
        for t in texts:
            print(t)
        print(f"--- incd log:\n{lab.log(sw)}")
    lat = [x["latency_us"] for x in results[0] if x.get("ok") is True and "latency_us" in x]
    port = dst.port_name
    queues = {}
    for cname in ([c["name"] for c in classes] if classes else ["default"]):
        queues[cname] = {
            "peak_kb": (lab.metric(m, "incd_port_class_queue_peak_bytes", port=port,
                                   **{"class": cname}) or 0) / 1024,
            "dropped": int(lab.metric(m, "incd_port_class_dropped_total", port=port,
                                      **{"class": cname}) or 0)}
    r = {"config": name, "flood": flood, "ok": ok, "collectives": len(lat),
         "median_us": statistics.median(lat) if lat else float("nan"),
         "p99_us": percentile(lat, 0.99), "bulk_rx_bytes": bulk_rx, "bulk_tx_bytes": bulk_tx,
         "queues": queues}
    print(f"RUN {name:11s} flood={'yes' if flood else 'no '} ok={ok} collectives={len(lat)} "
          f"median={r['median_us']:.0f}us p99={r['p99_us']:.0f}us bulk_rx={bulk_rx} "
          f"queues={queues}", flush=True)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="build directory (incd, inc-rank)")
    ap.add_argument("--quick", action="store_true", help="few collectives (the ctest smoke run)")
    ap.add_argument("--reps", type=int, default=300, help="plan repetitions per run (300)")
    ap.add_argument("--rate-mbps", type=int, default=50, help="every port's line rate (50)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    reps = 20 if args.quick else args.reps
    incd_lab.install_signal_exit()
    rows = []
    with incd_lab.Lab(os.path.abspath(args.build), "cls") as lab:
        sw = lab.add_switch("sw")
        for _ in range(GROUP + 1):
            lab.add_rank(sw)
        for name, classes in (("one class", None), ("two classes", TWO_CLASSES)):
            for flood in (False, True):
                rows.append(run(lab, sw, name, classes, flood, args, reps))
    by = {(r["config"], r["flood"]): r for r in rows}
    print(f"\nclass_isolation: {GROUP} ranks, Barrier + 1 KiB AllReduce x {reps}, ports at "
          f"{args.rate_mbps} Mbit/s, a bulk TCP transfer into rank 0's port "
          f"(host: {os.uname().nodename}, {os.cpu_count()} CPUs)")
    summary = {}
    for name in ("one class", "two classes"):
        base, loaded = by[(name, False)], by[(name, True)]
        slow = loaded["median_us"] / base["median_us"] if base["median_us"] else float("nan")
        slow99 = loaded["p99_us"] / base["p99_us"] if base["p99_us"] else float("nan")
        summary[name] = slow
        print(f"  {name:11s}: median {base['median_us']:.0f} -> {loaded['median_us']:.0f} us "
              f"(slowdown {slow:.2f}x), p99 {base['p99_us']:.0f} -> {loaded['p99_us']:.0f} us "
              f"({slow99:.2f}x)")
    print(f"CLASS_ISOLATION same class {summary['one class']:.2f}x, "
          f"separate classes {summary['two classes']:.2f}x (goal <= 1.1x; Slingshot 2.85x / "
          f"1.15x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": rows, "slowdown": summary, "rate_mbps": args.rate_mbps,
                       "reps": reps}, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
