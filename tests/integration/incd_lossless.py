#!/usr/bin/python3
"""integration.incd_lossless — a lossless network carries each contribution once.

EPIC's counter identity for a lossless run: every contribution reaches the switch once, so the
uploads the engine sees again (retransmissions: `upward_duplicate`, `upward_done`,
`upward_stale`, `upward_slot_busy`) are at most 1 % of the contributions it took
(`upward_accepted`). Before the soft transport's adaptive retransmission timeout and its
RNR-probe resend (docs/soft-rc-endpoint.md, "Retransmission timeout"), the demo's lossless
8-rank run sent every packet about ten times.

For 4 and 8 ranks (soft transport, one incd, af_packet ports, no injected loss): every primitive
at 4 KiB and 1 MiB, and a 4 MiB fp32 AllReduce, each repeated; every result verified bit for bit
by the ranks; then the identity is checked from incd's /metrics. Then incd is stopped (SIGTERM)
while the ranks stream AllReduces: it must exit cleanly (a stop over 10 s counts as a hang);
the time and incd's own per-phase figures are printed. Prints the counters, the ranks' own
retransmission and timeout counts by cause, and "INCD_LOSSLESS PASS|FAIL".
  incd_lossless.py BUILD_DIR [--ranks 4,8] [--reps 3] [--window 16] [--max-dup-share 0.01]
(0.01 is the goal; CI passes 0.02, tests/integration/CMakeLists.txt says why)
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

MIB = 1 << 20
PLAN = ",".join([
    "barrier",
    "allreduce:int32:sum:1024", "allreduce:fp32:sum:262144",
    "reduce:fp32:sum:root=0:262144", "broadcast:int32:root=1:262144",
    "reduce_scatter:fp32:sum:{rs}", "allgather:int32:{rs}",
    "allreduce:fp32:sum:1048576",
])
STOP_HANG_S = 10  # a stop slower than this is a hang (the goal is < 2 s)
DUPLICATES = ("upward_duplicate", "upward_done", "upward_stale", "upward_slot_busy")


def run(build, ranks, reps, window, max_share):
    plan = PLAN.format(rs=(1 << 20) // 4 // ranks)
    with incd_lab.Lab(build, f"lossless{ranks}") as lab:
        sw = lab.add_switch("sw")
        for _ in range(ranks):
            lab.add_rank(sw)
        lab.write_config(sw, [lab.group(1, ranks, [lab.rank_child(r) for r in lab.ranks],
                                        window=window)])
        lab.start_incd(sw)
        started = lab.start_ranks(lab.ranks, plan, reps=reps, seed=7, window=window,
                                  timeout_ms=240000)
        ok, results, texts = lab.wait_ranks(started, 600)
        verified = sum(1 for lines in results for x in lines if "k" in x and x.get("ok") is True)
        want = ranks * reps * len(plan.split(","))
        rank_tx = {"retransmits": 0, "timeouts": 0, "rnr_naks": 0, "naks_seq": 0,
                   "resent_timeout": 0, "resent_nak_seq": 0, "resent_rnr_probe": 0,
                   "resent_rnr_window": 0, "resent_after_probe": 0}
        for lines in results:
            for x in lines:
                if "k" in x:
                    continue
                for key in rank_tx:
                    rank_tx[key] += int(x.get(key, 0) or 0)
        m = lab.metrics(sw)
        frames = {d: lab.metric(m, "incd_engine_frames_total", disposition=d) or 0
                  for d in ("upward_accepted",) + DUPLICATES}
        rnr = lab.metric(m, "incd_engine_events_total", event="rnr_naks_sent") or 0
        drops = lab.metric(m, "incd_port_tx_dropped_total") or 0
        accepted = frames["upward_accepted"]
        dups = sum(frames[d] for d in DUPLICATES)
        share = dups / accepted if accepted else 1.0
        print(f"ranks={ranks} collectives_verified={verified}/{want} "
              f"contributions={accepted:.0f} duplicates={dups:.0f} ({100 * share:.2f} %, "
              + ", ".join(f"{d}={frames[d]:.0f}" for d in DUPLICATES)
              + f") rnr_naks_sent={rnr:.0f}; ranks: " + ", ".join(f"{k}={v}" for k, v in
                                                                   rank_tx.items()))
        good = ok and verified == want and accepted > 0 and share <= max_share
        if not good:
            if not ok or verified != want:
                print("\n".join(texts))
            print(f"--- incd log:\n{lab.log(sw)}")
        if drops:
            print(f"note: incd counted {drops:.0f} frames its ports could not transmit")
        # Stopping under load: SIGTERM while every rank streams 1 MiB AllReduces. incd must exit
        # cleanly; the time is reported (docs/incd.md, "Stopping"), bounded only as a hang.
        lab.start_ranks(lab.ranks, "allreduce:fp32:sum:262144", reps=1000, seed=8, window=window,
                        timeout_ms=20000)
        time.sleep(2)
        t0 = time.time()
        try:
            rc = lab.stop_incd(sw, timeout=STOP_HANG_S)
        except RuntimeError as e:
            print(f"incd did not stop under load: {e}")
            return False
        took = time.time() - t0
        phases = [x for x in lab.log(sw).splitlines() if "stopped: ports closed" in x]
        print(f"incd stopped under load in {took:.2f} s, exit {rc}: "
              + (phases[-1].split("incd: ", 1)[-1] if phases else "no stop line in its log"))
        return good and rc == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", default="4,8")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--max-dup-share", type=float, default=0.01)
    a = ap.parse_args()
    incd_lab.install_signal_exit()
    ok = True
    for n in (int(x) for x in a.ranks.split(",")):
        ok &= run(os.path.abspath(a.build), n, a.reps, a.window, a.max_dup_share)
    print(f"INCD_LOSSLESS {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
