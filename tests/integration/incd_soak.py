#!/usr/bin/python3
"""integration.incd_soak — 1,000 back-to-back 4 MiB AllReduces across 4 ranks through incd.

One incd, 4 rank namespaces (soft transport, af_packet ports, jumbo veths: MTU 4200, PMTU 4096,
window 64 — the large-message setting of tests/bench/shaped_lab.py), no injected loss. Each rank
runs --count AllReduces of 4 MiB back to back (half int32, half fp32, alternating), and
inc-rank verifies every result bit for bit against the reference reduction of all ranks'
seeded inputs. Passes when every rank verified every collective, none failed (a failure of the
QP — retry_exceeded — or a timeout fails the run), and incd exits cleanly. Bounded: every rank
has --timeout-s in all. Prints the ranks' retransmission counts, incd's duplicate-contribution
share and the wall time, and "INCD_SOAK PASS|FAIL".
  incd_soak.py BUILD_DIR [--count 1000] [--ranks 4] [--timeout-s 780] [--window 64]
                        [--pmtu 4096] [--mtu 4200]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402
from incd_lossless import DUPLICATES  # noqa: E402  (the dispositions of a resent upload)

COUNT_4MIB = (4 << 20) // 4  # elements of a 4 MiB fp32/int32 buffer


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--count", type=int, default=1000, help="AllReduces per rank (even)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--timeout-s", type=int, default=780)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--pmtu", type=int, default=4096)
    ap.add_argument("--mtu", type=int, default=4200, help="of every veth and incd port")
    a = ap.parse_args()
    if a.count < 2 or a.count % 2:
        ap.error("--count must be an even number >= 2")
    incd_lab.install_signal_exit()
    plan = f"allreduce:int32:sum:{COUNT_4MIB},allreduce:fp32:sum:{COUNT_4MIB}"
    ok = False
    with incd_lab.Lab(os.path.abspath(a.build), "soak", mtu=a.mtu) as lab:
        sw = lab.add_switch("sw")
        for _ in range(a.ranks):
            lab.add_rank(sw)
        lab.write_config(sw, [lab.group(1, a.ranks, [lab.rank_child(r) for r in lab.ranks],
                                        window=a.window, pmtu=a.pmtu)])
        lab.start_incd(sw)
        t0 = time.time()
        started = lab.start_ranks(lab.ranks, plan, reps=a.count // 2, seed=11, window=a.window,
                                  pmtu=a.pmtu, timeout_ms=60000)
        ranks_ok, results, texts = lab.wait_ranks(started, a.timeout_s)
        wall = time.time() - t0
        verified = sum(1 for lines in results for x in lines if "k" in x and x.get("ok") is True)
        wrong = sum(1 for lines in results for x in lines if "k" in x and x.get("ok") is False)
        summaries = [x for lines in results for x in lines if x.get("summary")]
        failed = sum(int(x.get("failed", 0) or 0) for x in summaries)
        def total(key):
            return sum(int(x.get(key, 0) or 0) for x in summaries)
        retransmits, timeouts = total("retransmits"), total("timeouts")
        causes = {k: total(k) for k in ("resent_timeout", "resent_nak_seq", "resent_rnr_probe",
                                        "resent_rnr_window", "resent_after_probe",
                                        "rx_out_of_sequence", "rx_duplicates", "rx_kernel_drops",
                                        "naks_seq")}
        m = lab.metrics(sw)
        accepted = lab.metric(m, "incd_engine_frames_total", disposition="upward_accepted") or 0
        dups = sum(lab.metric(m, "incd_engine_frames_total", disposition=d) or 0
                   for d in DUPLICATES)
        events = {e: lab.metric(m, "incd_engine_events_total", event=e) or 0
                  for e in ("results_resent", "upload_acks_sent", "rnr_naks_sent")}
        frames = {d: lab.metric(m, "incd_engine_frames_total", disposition=d) or 0
                  for d in DUPLICATES + ("acks_reflected",)}
        tx_dropped = lab.metric(m, "incd_port_tx_dropped_total") or 0
        rc = lab.stop_incd(sw)
        want = a.ranks * a.count
        print(f"ranks={a.ranks} allreduces_of_4MiB={a.count} verified={verified}/{want} "
              f"wrong={wrong} failed={failed} wall={wall:.1f}s "
              f"({a.count * 4 / wall if wall else 0:.1f} MiB/s per rank) "
              f"rank_retransmits={retransmits} rank_timeouts={timeouts} "
              f"duplicate_contributions={dups:.0f} of {accepted:.0f} incd_exit={rc}\n  ranks: "
              + " ".join(f"{k}={v}" for k, v in causes.items())
              + "\n  incd: " + " ".join(f"{k}={v:.0f}" for k, v in {**events, **frames}.items())
              + f" port_tx_dropped={tx_dropped:.0f}")
        ok = ranks_ok and verified == want and wrong == 0 and failed == 0 and rc == 0
        if not ok:
            print("\n".join(texts))
            print(f"--- incd log:\n{lab.log(sw)}")
    print(f"INCD_SOAK {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
