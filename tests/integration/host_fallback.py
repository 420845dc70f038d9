#!/usr/bin/python3
"""integration.host_fallback — host-based collectives (host/fallback) through a real incd.

One incd in a switch namespace started with NO groups, so it only L2-switches the ranks'
RoCEv2 frames (MAC learning); rank namespaces run tests/integration/host_fallback_check
(soft transport, two RC QPs per rank on a ring), first 3 ranks, then 4. Every rank verifies
every primitive (int32 sum, fp32 sum/max; 1 element, odd counts, >= 1 MiB) against the
reference. Checks incd forwarded the frames at L2 and aggregated nothing.
Prints "HOST_FALLBACK PASS|FAIL".
  host_fallback.py BUILD_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

QPN_BASE = 0x200  # rank r's ring QPs: QPN_BASE + 2r (left) and + 1 (right)
RUN_TIMEOUT_S = 300


def run_ring(lab, check, ranks, env_of=lambda r: {}, name=None):
    members = ",".join(f"{r.ip}/{QPN_BASE + 2 * r.index}" for r in ranks)
    t0 = time.time()
    res = lab.run_in_ranks(
        ranks, lambda r: [check, r.ifname, r.mac, r.ip, str(r.index), members, "60000"],
        env_of, RUN_TIMEOUT_S)
    ok = True
    for r, rc, text in res:
        passed = rc == 0 and "PASS" in text
        ok = ok and passed
        lines = [ln for ln in text.splitlines() if ln.startswith("HOST_FALLBACK_CHECK")]
        print(lines[-1] if lines else f"rank {r.index} rc={rc} (no result line)")
        if not passed:
            print(f"--- rank {r.index} rc={rc} output:\n{text[-3000:]}")
    print(f"CASE {name or f'ring_{len(ranks)}_ranks'} {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.1f}s")
    return ok


def stuck_ring(lab, check, ranks):
    """The last rank goes away after 3 collectives: the others must fail within their timeout
    with a report naming rank, step, direction and PSNs, not hang or pass."""
    members = ",".join(f"{r.ip}/{QPN_BASE + 2 * r.index}" for r in ranks)
    last = ranks[-1].index
    t0 = time.time()
    res = lab.run_in_ranks(
        ranks, lambda r: [check, r.ifname, r.mac, r.ip, str(r.index), members, "3000",
                          *(["3"] if r.index == last else [])],
        lambda r: {}, 120)
    ok = True
    for r, rc, text in res:
        if r.index == last:
            good = rc == 0 and "STOPPED" in text
        else:
            good = rc == 1 and "FAIL" in text and f"rank {r.index}/{len(ranks)}" in text and \
                "psn=" in text and ("to right rank" in text or "from left rank" in text)
        ok = ok and good
        lines = [ln for ln in text.splitlines() if ln.startswith("HOST_FALLBACK_CHECK")]
        print((lines[-1] if lines else f"rank {r.index} rc={rc} (no result line)")[:600])
        if not good:
            print(f"--- rank {r.index} rc={rc} output:\n{text[-3000:]}")
    print(f"CASE departed_rank_reported {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.1f}s")
    return ok


def main():
    build = os.path.abspath(sys.argv[1])
    check = os.path.join(build, "tests", "integration", "host_fallback_check")
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "fallback") as lab:
        sw = lab.add_switch("sw")
        for _ in range(4):
            lab.add_rank(sw)
        lab.write_config(sw, [])
        lab.start_incd(sw)
        ok = run_ring(lab, check, lab.ranks[:3]) and ok
        ok = run_ring(lab, check, lab.ranks) and ok
        # rank 1 is away 2 s before each of the first collectives: its neighbours retransmit
        # into the silence (no NIC acknowledges for a soft rank outside the library)
        ok = run_ring(lab, check, lab.ranks[:3],
                      lambda r: {"HOST_FALLBACK_SLEEP_MS": "2000"} if r.index == 1 else {},
                      "skewed_rank") and ok
        ok = stuck_ring(lab, check, lab.ranks[:3]) and ok
        # every ring frame crossed incd as transit RoCE, L2-forwarded; none reached the engine
        m = lab.metrics(sw)
        transit = lab.metric(m, "incd_switch_frames_total", disposition="transit_roce") or 0
        forwarded = lab.metric(m, "incd_switch_frames_total", disposition="forwarded") or 0
        to_engine = lab.metric(m, "incd_switch_frames_total", disposition="to_engine") or 0
        l2_ok = transit >= 10000 and forwarded >= transit and to_engine == 0
        print(f"CASE incd_only_switched {'PASS' if l2_ok else 'FAIL'} transit_roce={transit:.0f} "
              f"forwarded={forwarded:.0f} to_engine={to_engine:.0f}")
        ok = ok and l2_ok
        if not ok:
            print(f"--- incd log:\n{lab.log(sw)}")
    print(f"HOST_FALLBACK {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
