#!/usr/bin/python3
"""incd_demo: the README's main job — incd and eight ranks in network namespaces.

Brings up one incd switch namespace with eight rank namespaces (veth, af_packet ports), runs
every primitive at a few sizes on all eight ranks (each rank verifies its results bit for bit
against the reference reduction of all inputs), prints a table (primitive, type, size, result
check, latency = the slowest rank's, median over repetitions), shows a few of incd's /metrics,
and tears everything down.

Then the same ranks run libinc's inc-bench (the rank library's Communicator: AllReduce and
Barrier, verified, timed) through a restarted incd.

Ranks in network namespaces use the user-space RoCEv2 RC endpoint (the "soft" transport over
AF_PACKET): one RDMA device cannot be shared by ranks in several namespaces, and this lab's
machines have none. Real verbs ranks (Linux rdma_rxe in qemu guests through incd) are
deploy/lab/incd_rxe.sh, which deploy/demo.sh runs after this unless --real-ranks no.
  incd_demo.py BUILD_DIR [--ranks N] [--reps K]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import incd_lab  # noqa: E402

CASES = [  # (primitive spec without count, element bytes, sizes in bytes)
    ("barrier", 0, [0]),
    ("allreduce:int32:sum", 4, [4, 4096, 65536, 1 << 20]),
    ("allreduce:fp32:sum", 4, [4096, 1 << 20]),
    ("allreduce:bf16:max", 2, [4096, 1 << 20]),
    ("reduce:fp32:sum:root=0", 4, [4096, 1 << 20]),
    ("broadcast:int32:root=3", 4, [4096, 1 << 20]),
    ("reduce_scatter:fp32:sum", 4, [4096, 1 << 20]),
    ("allgather:int32", 4, [4096, 1 << 20]),
]


def spec(case, esz, size, ranks):
    if esz == 0:
        return case
    count = size // esz
    if case.startswith(("reduce_scatter", "allgather")):
        count = max(1, count // ranks)  # per-rank chunk; the buffer is `size`
    return f"{case}:{count}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    incd_lab.install_signal_exit()
    items = [spec(c, e, s, a.ranks) for c, e, sizes in CASES for s in sizes]
    with incd_lab.Lab(a.build, "demo") as lab:
        print(f"== lab: incd + {a.ranks} ranks in network namespaces ({lab.sfx})")
        sw = lab.add_switch("sw")
        for _ in range(a.ranks):
            lab.add_rank(sw)
        lab.write_config(sw, [lab.group(1, a.ranks, [lab.rank_child(r) for r in lab.ranks])])
        lab.start_incd(sw)
        print(f"   incd up: ports {', '.join(p for p, _ in sw.ports)}; INC address {sw.ip}")
        devs = incd_lab.rdma_devices()
        print("   transport: soft (user-space RoCEv2 RC endpoint over AF_PACKET; "
              + (f"RDMA devices {', '.join(devs)} exist but cannot be shared by namespaces)"
                 if devs else "no RDMA device on this host)"))
        t0 = time.time()
        started = lab.start_ranks(lab.ranks, ",".join(items), reps=a.reps, seed=2026,
                                  timeout_ms=120000)
        ok, results, texts = lab.wait_ranks(started, 600)
        if not ok:
            print("\n".join(texts))
        rows = {}
        for lines in results:
            for x in lines:
                if "k" not in x:
                    continue
                key = x["k"] % len(items)
                row = rows.setdefault(key, {"x": x, "ok": True, "lat": {}})
                row["ok"] &= bool(x.get("ok"))
                rep = x["k"] // len(items)
                row["lat"][rep] = max(row["lat"].get(rep, 0), x.get("latency_us", 0))
        print()
        print(f"{'primitive':<15}{'type':<7}{'op':<5}{'bytes':>10}  {'check':<9}{'latency p50':>12}"
              f"{'min':>10}{'max':>10}")
        for k in sorted(rows):
            r = rows[k]
            x = r["x"]
            lats = list(r["lat"].values())
            print(f"{x.get('primitive', '?'):<15}{x.get('dtype', '-'):<7}{x.get('op', '-'):<5}"
                  f"{x.get('bytes', 0):>10}  {'bit-exact' if r['ok'] else 'MISMATCH':<9}"
                  f"{statistics.median(lats):>10.0f}us{min(lats):>8.0f}us{max(lats):>8.0f}us")
        n = sum(len(v["lat"]) for v in rows.values())
        print(f"\n{n} collectives x {a.ranks} ranks verified in {time.time() - t0:.1f} s "
              f"({'all bit-exact' if ok else 'FAILURES above'}); latency = slowest rank, "
              "this 2-core VM shares its cores between incd and every rank")
        m = lab.metrics(sw)
        print("\n== incd /metrics (excerpt)")
        for name, labels in (("incd_group_aggregations_completed_total", {"group": "1"}),
                             ("incd_group_results_replicated_total", {"group": "1"}),
                             ("incd_group_retransmissions_total", {"group": "1"}),
                             ("incd_engine_events_total", {"event": "upload_acks_sent"}),
                             ("incd_switch_frames_total", {"disposition": "to_engine"}),
                             ("incd_switch_frames_total", {"disposition": "arp_replies"})):
            v = lab.metric(m, name, **labels)
            print(f"   {name}{labels} = {v:.0f}" if v is not None else f"   {name} missing")
        # libinc: the rank library's own benchmark, on a fresh incd (the group restarts at its PSN)
        rc = lab.stop_incd(sw)
        lab.start_incd(sw)
        bench = os.path.join(a.build, "tools", "inc-bench", "inc-bench")
        print(f"\n== libinc: inc-bench on {a.ranks} ranks (rank 0's report; every rank verifies)")
        res = lab.run_in_ranks(
            lab.ranks, lambda r: [bench, "--primitives", "barrier,allreduce", "--dtypes", "fp32",
                                  "--sizes", "4K,1M", "--iters", "10", "--warmup", "2"],
            lambda r: lab.rank_env(r, a.ranks, extra={"INC_TIMEOUT_MS": "60000"}), 300)
        bench_ok = all(code == 0 for _, code, _ in res)
        for line in res[0][2].splitlines():
            print("   " + line)
        if not bench_ok:
            for r, code, out in res:
                if code != 0:
                    print(f"--- rank {r.index} exit {code}\n{out[-2000:]}")
        rc2 = lab.stop_incd(sw)
        print(f"\n== incd stopped (exit {rc}, {rc2}); tearing the lab down")
    return 0 if ok and bench_ok and rc == 0 and rc2 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
