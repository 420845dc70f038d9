#!/usr/bin/python3
"""integration.incd_ecn — congestion signals through an EPIC switch (docs/congestion.md).

4 ranks (inc-rank, soft transport) behind one incd, a static Mode-II group. incd's fault stage
marks CE on 5 % of the ECN-capable frames that rank 0 sends (the drill of a congested queue's
AQM; the lab kernel has no netem). Cases (each prints "CASE name PASS|FAIL ..."):
  ect       the ranks send ECT(0) (--traffic-class 2). The switch carries CE into the
            aggregated results, so every rank receives CE-marked results, not only rank 0.
            Every rank answers with CNPs, and the switch forwards each CNP to the group's
            other ranks. Identities (lossless): the switch's `cnps` = the CNPs the ranks
            sent; `cnps_forwarded` + `cnps_rate_limited` = 3 x `cnps`; the CNPs the ranks
            received = `cnps_forwarded`
  not_ect   the ranks send Not-ECT (the default): the stage marks nothing, no result
            carries CE, no CNP is sent
  depth     no fault stage: every port runs at 20 Mbit/s (incd's line rate, rate_mbps) with one
            traffic class that marks CE past 4 KiB of queue (docs/traffic-classes.md); the ranks
            send ECT(0). Results queue at each rank's port, incd marks them by depth, and the
            ranks answer with CNPs. Identity (lossless): the CE-marked frames the ranks
            received = the frames incd's class queues marked
Every rank verifies every result bit for bit. Prints "INCD_ECN PASS|FAIL". Removes everything it
created; needs root.
  incd_ecn.py BUILD_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "deploy", "netns"))
import incd_lab  # noqa: E402

RANKS = 4
PLAN = ",".join(["allreduce:int32:sum:20000", "allreduce:fp32:sum:3000",
                 "reduce:int32:max:root=2:5000", "broadcast:int32:root=1:5000", "barrier"] * 4)


def summaries(results):
    """Each rank's summary line (inc-rank --json)."""
    out = []
    for lines in results:
        s = [x for x in lines if x.get("summary")]
        out.append(s[-1] if s else {})
    return out


def run_case(lab, s, name, traffic_class, depth=False):
    group = lab.group(1, RANKS, [lab.rank_child(r) for r in lab.ranks])
    if depth:
        lab.write_config(s, [group], rate_mbps=20,
                         extra={"traffic_classes": [{"name": "all", "ecn_threshold_kb": 4}]})
    else:
        lab.write_config(s, [group], faults=[{"port": lab.ranks[0].port_name, "direction": "rx",
                                              "mark_ce": 0.05, "seed": 11}])
    lab.start_incd(s)
    started = lab.start_ranks(lab.ranks, PLAN, seed=3, timeout_ms=120000,
                              extra=["--traffic-class", str(traffic_class)])
    ok, results, texts = lab.wait_ranks(started, 150)
    m = lab.metrics(s)
    ok &= lab.stop_incd(s) == 0
    if not ok:
        for t in texts:
            print(t)
        print(f"--- incd log:\n{lab.log(s)}")

    def engine(kind, label):
        family = "incd_engine_events_total" if kind == "event" else "incd_engine_frames_total"
        return int(lab.metric(m, family, **{kind: label}) or 0)

    marked = int(lab.metric(m, "incd_port_faults_injected_total", fault="ce_marked") or 0)
    f = {"ce_marked_by_stage": marked,
         "ce_marked_by_depth": int(lab.metric(m, "incd_port_class_ce_marked_total") or 0),
         "queue_peak_bytes": int(max([lab.metric(m, "incd_port_class_queue_peak_bytes",
                                                 port=r.port_name) or 0 for r in lab.ranks])), "ecn_ce_in": engine("event", "ecn_ce_in"),
         "ecn_ce_out": engine("event", "ecn_ce_out"), "cnps": engine("disposition", "cnps"),
         "cnps_forwarded": engine("event", "cnps_forwarded"),
         "cnps_rate_limited": engine("event", "cnps_rate_limited")}
    ranks = summaries(results)
    rx_ce = [r.get("rx_ce_marked", 0) for r in ranks]
    tx_cnps = [r.get("tx_cnps", 0) for r in ranks]
    rx_cnps = [r.get("rx_cnps", 0) for r in ranks]
    detail = (" ".join(f"{k}={v}" for k, v in f.items()) +
              f" ranks_rx_ce={rx_ce} ranks_tx_cnps={tx_cnps} ranks_rx_cnps={rx_cnps}")
    return ok, f, rx_ce, tx_cnps, rx_cnps, detail


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(os.path.abspath(sys.argv[1]), "ecn") as lab:
        s = lab.add_switch("sw")
        for _ in range(RANKS):
            lab.add_rank(s)
        run_ok, f, rx_ce, tx_cnps, rx_cnps, detail = run_case(lab, s, "ect", 2)
        good = (run_ok and f["ce_marked_by_stage"] > 0 and f["ecn_ce_in"] > 0
                and f["ecn_ce_out"] > 0 and all(n > 0 for n in rx_ce)
                and all(n > 0 for n in tx_cnps) and f["cnps"] == sum(tx_cnps)
                and f["cnps_forwarded"] + f["cnps_rate_limited"] == (RANKS - 1) * f["cnps"]
                and sum(rx_cnps) == f["cnps_forwarded"])
        print(f"CASE ect {'PASS' if good else 'FAIL'} {detail}", flush=True)
        ok &= good
        run_ok, f, rx_ce, tx_cnps, rx_cnps, detail = run_case(lab, s, "not_ect", 0)
        good = (run_ok and f["ce_marked_by_stage"] == 0 and f["ecn_ce_out"] == 0
                and f["cnps"] == 0 and sum(rx_ce) == 0 and sum(tx_cnps) == 0)
        print(f"CASE not_ect {'PASS' if good else 'FAIL'} {detail}", flush=True)
        ok &= good
        run_ok, f, rx_ce, tx_cnps, rx_cnps, detail = run_case(lab, s, "depth", 2, depth=True)
        good = (run_ok and f["ce_marked_by_stage"] == 0 and f["ce_marked_by_depth"] > 0
                and f["queue_peak_bytes"] >= 4096 and sum(rx_ce) == f["ce_marked_by_depth"]
                and sum(tx_cnps) > 0 and f["cnps"] == sum(tx_cnps))
        print(f"CASE depth {'PASS' if good else 'FAIL'} {detail}", flush=True)
        ok &= good
    print(f"INCD_ECN {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
