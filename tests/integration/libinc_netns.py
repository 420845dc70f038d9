#!/usr/bin/python3
"""integration.libinc_netns — libinc (the rank library) through incd, soft transport.

One incd in a switch namespace, 4 rank namespaces. Each rank process holds two communicators
(groups 1 and 2 on the same switch, distinct QPNs): tests/integration/libinc_api_check.c runs
every primitive through the C API, blocking and non-blocking, split into 64 KiB collectives,
and bad arguments; then inc-bench sweeps every primitive on group 1 (verified); then a rank
that never starts must make the others fail with a report naming the direction and PSNs
instead of hanging (within INC_TIMEOUT_MS, or sooner when the QP's RC retries run out). Prints "LIBINC_NETNS PASS|FAIL".
  libinc_netns.py BUILD_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

RANKS = 4
GROUP2_QPN = 0x31      # rank QPNs of group 2 (group 1: incd_lab's 0x11 + index)
GROUP2_SWITCH_QPN = 0x2000


def env_of(lab, r, group, extra=None):
    """INC_* peer parameters of lab rank r in group 1 or 2."""
    e = lab.rank_env(r, RANKS, initial_psn=256, extra={"INC_TIMEOUT_MS": "60000"})
    if group == 2:
        e["INC_SWITCH_QPN"] = str(GROUP2_SWITCH_QPN + r.index)
        e["INC_QPN"] = str(GROUP2_QPN + r.index)
    e.update(extra or {})
    return e


def child2(lab, r):
    c = lab.rank_child(r)
    c["remote"]["qpn"] = GROUP2_QPN + r.index
    c["local"]["qpn"] = GROUP2_SWITCH_QPN + r.index
    return c


def main():
    build = os.path.abspath(sys.argv[1])
    check = os.path.join(build, "tests", "integration", "libinc_api_check")
    bench = os.path.join(build, "tools", "inc-bench", "inc-bench")
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "libinc") as lab:
        sw = lab.add_switch("sw")
        for _ in range(RANKS):
            lab.add_rank(sw)
        groups = [lab.group(1, RANKS, [lab.rank_child(r) for r in lab.ranks]),
                  lab.group(2, RANKS, [child2(lab, r) for r in lab.ranks])]
        lab.write_config(sw, groups)
        lab.start_incd(sw)

        # 1. the C API, two communicators per process
        files = {}
        for r in lab.ranks:
            files[r.index] = os.path.join(lab.tmp, f"group2-rank{r.index}.env")
            with open(files[r.index], "w") as f:
                f.write("# group 2 of rank %d\n" % r.index)
                f.writelines(f"{k}={v}\n" for k, v in env_of(lab, r, 2).items())
        t0 = time.time()
        res = lab.run_in_ranks(lab.ranks, lambda r: [check, files[r.index]],
                      lambda r: env_of(lab, r, 1, {"INC_MAX_COLLECTIVE_BYTES": "65536"}), 300)
        passed = all(rc == 0 and f"LIBINC_API rank {r.index} PASS" in out for r, rc, out in res)
        print(f"CASE c_api_two_groups {'PASS' if passed else 'FAIL'} wall={time.time() - t0:.1f}s")
        if not passed:
            for r, rc, out in res:
                print(f"--- rank {r.index} rc={rc}\n{out[-3000:]}")
            print(lab.log(sw))
        ok &= passed

        # 2. inc-bench: every primitive, verified (a fresh incd: group 1 restarts at its PSN)
        lab.stop_incd(sw)
        lab.start_incd(sw)
        t0 = time.time()
        res = lab.run_in_ranks(lab.ranks,
                      lambda r: [bench, "--primitives", "all", "--dtypes", "int32,fp32,bf16",
                                 "--sizes", "4K,64K", "--iters", "3", "--warmup", "1",
                                 "--root", "2", "--json"],
                      lambda r: env_of(lab, r, 1), 300)
        lines = [x for x in res[0][2].splitlines() if x.startswith("{")]
        passed = all(rc == 0 for _, rc, _ in res) and len(lines) == 1 + 5 * 3 * 2 and all(
            '"verified":true' in x for x in lines)
        print(f"CASE inc_bench_all_primitives {'PASS' if passed else 'FAIL'} cases={len(lines)} "
              f"wall={time.time() - t0:.1f}s")
        if not passed:
            for r, rc, out in res:
                print(f"--- rank {r.index} rc={rc}\n{out[-3000:]}")
        ok &= passed

        # 3. a missing rank: the others report what they wait for, bounded
        lab.stop_incd(sw)  # fresh group state: the next run starts again at the initial PSN
        lab.start_incd(sw)
        t0 = time.time()
        res = lab.run_in_ranks(lab.ranks[:RANKS - 1],
                      lambda r: [bench, "--primitives", "allreduce", "--sizes", "4K", "--iters",
                                 "1", "--warmup", "0", "--all-ranks"],
                      lambda r: env_of(lab, r, 1, {"INC_TIMEOUT_MS": "3000"}), 120)
        wall = time.time() - t0
        passed = True
        for r, rc, out in res:
            # Either the library's timeout fires first, or the RC retry budget of the QP runs
            # out (retransmission timeouts while the switch holds the uploads back): both
            # reports must name the collective, the direction and the QP's PSNs.
            good = (rc == 3 and ("no collective finished for 3000 ms" in out or
                                 "completed with retry_exceeded" in out) and
                    "downlink, switch to rank" in out and "expected_psn=" in out)
            passed &= good
            if not good:
                print(f"--- rank {r.index} rc={rc}\n{out[-3000:]}")
        print(f"CASE missing_rank_reported {'PASS' if passed else 'FAIL'} wall={wall:.1f}s")
        if passed:
            print("  rank 0 says: " + [x for x in res[0][2].splitlines() if "inc-bench" in x][0][:300])
        ok &= passed
        ok &= lab.stop_incd(sw) == 0
    print(f"LIBINC_NETNS {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
