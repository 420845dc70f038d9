#!/usr/bin/python3
"""integration.incd_workers — two polled workers, groups owned by different workers.

incd runs two worker lcores (EAL --lcores 0@0,1@1,2@1: this machine may have two CPUs) and
af_packet ports with two queue pairs each, whose kernel fan-out spreads flows over both
workers' queues. Group 1 (ranks 0-3) belongs to worker 0, group 2 (ranks 4-7) to worker 1, so
frames that land on the other worker's queue cross the hand-off ring. Both groups run all six
primitives at once; every rank verifies every result bit for bit; /metrics must show
hand-offs, no hand-off drops, and each group's aggregations on its own worker.
Prints "INCD_WORKERS PASS|FAIL".
  incd_workers.py BUILD_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

PLAN = ("allreduce:int32:sum:200000,allreduce:fp32:max:3000,reduce:bf16:sum:root=2:5000,"
        "broadcast:fp32:root=1:5000,reduce_scatter:int32:sum:700,allgather:bf16:700,barrier")


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "workers") as lab:
        sw = lab.add_switch("sw")
        for _ in range(8):
            lab.add_rank(sw)
        groups = []
        for gid, members in ((1, lab.ranks[:4]), (2, lab.ranks[4:])):
            groups.append(lab.group(gid, 4, [lab.rank_child(r, first=members[0].index)
                                             for r in members]))
        lab.write_config(sw, groups, workers=2, lcores="0@0,1@1,2@1")
        lab.start_incd(sw)
        s1 = lab.start_ranks(lab.ranks[:4], PLAN, group_ranks=4, first=0, seed=31, reps=3,
                             timeout_ms=120000)
        s2 = lab.start_ranks(lab.ranks[4:], PLAN, group_ranks=4, first=4, seed=32, reps=3,
                             timeout_ms=120000)
        ok1, r1, t1 = lab.wait_ranks(s1, 300)
        ok2, r2, t2 = lab.wait_ranks(s2, 300)
        n = sum(1 for lines in r1 + r2 for x in lines if x.get("ok") is True and "k" in x)
        print(f"JOB two_groups {'PASS' if ok1 and ok2 else 'FAIL'} collectives_verified={n}")
        if not (ok1 and ok2):
            print("\n".join(t1 + t2))
            print(lab.log(sw))
        ok &= ok1 and ok2
        m = lab.metrics(sw)
        handoffs = [lab.metric(m, "incd_worker_handoff_in_total", worker=str(w)) or 0
                    for w in (0, 1)]
        dropped = lab.metric(m, "incd_worker_handoff_dropped_total") or 0
        agg = {w: lab.metric(m, "incd_engine_events_total", worker=str(w),
                             event="aggregations_completed") or 0 for w in (0, 1)}
        print(f"METRICS handoff_in={handoffs} handoff_dropped={dropped:.0f} "
              f"aggregations_by_worker={agg}")
        metrics_ok = sum(handoffs) > 0 and dropped == 0 and agg[0] > 0 and agg[1] > 0
        print(f"HANDOFF {'PASS' if metrics_ok else 'FAIL'}")
        ok &= metrics_ok
        ok &= lab.stop_incd(sw) == 0
    print(f"INCD_WORKERS {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
