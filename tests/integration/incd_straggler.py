#!/usr/bin/python3
"""integration.incd_straggler — straggler telemetry in the namespace lab (docs/telemetry.md):
inc-manager, a leaf and a spine incd with their IncAgents, inc-bench ranks that join through
the manager. A rank or a link is slowed in the lab itself — incd's fault stage holds every frame
of one port (the kernel has no netem) — never mocked; then `incctl telemetry GROUP --json` (the
manager's job-wide view) and incd's /metrics (the switch's local view) must name it.

  incd_straggler.py BUILD_DIR

Ranks 0-1 behind the leaf, 2-5 behind the spine. Cases (each prints "CASE name PASS|FAIL ..."):
  slowed_rank   group of lab ranks 2-5 (one switch, fan-in 4); frames from and to lab rank 4
                (the group's rank 2) held 1 ms at the spine: the job-wide view names "rank 2",
                pinned >= 90 %, its p50 lag >= 0.5 ms and at least twice the others'; the local
                incd_group_slowest_child_share names it too
  jitter        the same group; every rank port holds half its frames an extra 1-50 us at
                random: nobody is pinned (the slowest share stays under the threshold between
                1/fan-in and 1) and the verdict is "noise"
  slowed_link   group of lab ranks 0, 1, 2, 3 (leaf and spine); the leaf-spine link held 1 ms
                in both directions: the view names the link from the root's side ("link spine
                -> leaf (ranks 2-3)" when the manager roots the tree at the leaf), although
                below it one rank is always a little later than its neighbour
Every rank verifies every result bit for bit. Prints "INCD_STRAGGLER PASS|FAIL".
Removes everything it created; needs root.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "deploy", "netns"))
import control_plane  # noqa: E402
import incd_lab  # noqa: E402

DELAY_US = 1000
BENCH = ["-p", "allreduce", "-d", "int32", "-s", "4K", "-n", "500", "-w", "2"]


def port_faults(ports, **fault):
    """The same fault on both directions of each port, each with its own seed."""
    return [{"port": p, "direction": d, "seed": 7 + 2 * i + k, **fault}
            for i, p in enumerate(ports) for k, d in enumerate(("rx", "tx"))]


def start_switches(lab, mgr, faults):
    for s in lab.switches:
        lab.write_config(s, [], faults=faults.get(s.name, []), extra={"manager": {
            "address": mgr.address, "switch_id": s.name,
            "memory_capacity_bytes": 64 << 20, "heartbeat_ms": 300,
            "reconnect_initial_ms": 100, "reconnect_max_ms": 1000}})
        lab.start_incd(s)
    mgr.wait_for("both switches registered", lambda: len(
        [s for s in mgr.ctl("switches").get("switches", []) if s.get("connected")]) == 2, 30)


def stop_switches(lab):
    ok = True
    for s in lab.switches:
        ok &= lab.stop_incd(s) == 0
    return ok


def run_case(lab, mgr, name, ranks, qpn_base, watch):
    """Runs inc-bench on `ranks` as group `name`; while it runs, reads the job-wide view and
    each switch's metrics. Returns (bench ok, last job view with timed slots, metrics)."""
    bench = control_plane.Bench(lab, mgr, name, "lab", ranks, qpn_base, BENCH)
    job, metrics, text = None, {}, ""
    deadline = time.time() + control_plane.JOB_TIMEOUT_S
    gid = None
    while time.time() < deadline and any(p.poll() is None for _, p, _ in bench.procs):
        if gid is None:
            g = control_plane.group_named(mgr, name)
            if g and g.get("state") == "installed":
                gid = g["group_id"]
        if gid is not None:
            view = mgr.ctl("telemetry", str(gid), quiet=True)
            jobs = (view or {}).get("jobs", [])
            if jobs and jobs[0].get("path") and int(jobs[0]["path"][0].get("slots", 0)) > 0:
                job = jobs[0]
                for s in watch:
                    # Under load a scrape can time out, or land after the group left: keep the
                    # last scrape that holds the group's series.
                    text_s = lab.metrics(s, quiet=True) or ""
                    if "incd_group_slowest_child_share" in text_s:
                        metrics[s.name] = text_s
                text = mgr.ctl("telemetry", str(gid), json_out=False, quiet=True) or text
        time.sleep(0.5)
    ok, modes, cases, res = bench.finish()
    print(f"== {name}: the last job-wide view read while it ran ($ incctl telemetry {gid}):")
    print(text.rstrip())
    if not ok or modes != {"inc"}:
        control_plane.dump(res)
    return ok and modes == {"inc"}, job, metrics


def summary(job):
    if not job:
        return "no job-wide view was read"
    path = " / ".join(f"{h['switch_id']}:{h.get('child', '-')}={h.get('share', 0):.2f}"
                      for h in job.get("path", []))
    return (f"slowest='{job.get('slowest', '')}' pinned={job.get('pinned', 0):.3f} "
            f"verdict={job.get('verdict')} walk=[{path}] "
            f"goodput={job.get('rate_bytes_per_s', 0):.0f}B/s at {job.get('rate_switch', '-')} "
            f"collectives={job.get('collectives_completed', 0)}")


def children_of(job, switch):
    for s in (job or {}).get("switches", []):
        if s["switch_id"] == switch:
            return s.get("children", [])
    return []


def slowed_rank(lab, mgr, spine):
    R = lab.ranks
    start_switches(lab, mgr, {"spine": port_faults([R[4].port_name], delay_us=DELAY_US)})
    ok, job, m = run_case(lab, mgr, "slow-rank", R[2:6], 0x100, [spine])
    lags = {c.get("first_rank", 0): int(c.get("lag_p50_ns", 0)) for c in children_of(job, "spine")}
    local = lab.metric(m.get("spine") or "", "incd_group_slowest_child_share", who="rank 2")
    good = (job is not None and job.get("slowest") == "rank 2" and job.get("pinned", 0) >= 0.9
            and job.get("verdict") == "straggler" and lags.get(2, 0) >= DELAY_US * 500
            and all(2 * v <= lags[2] for k, v in lags.items() if k != 2)
            and local is not None and local >= 0.9)
    ok &= stop_switches(lab)
    return control_plane.case("slowed_rank", ok and good,
                              f"{summary(job)} p50_lag_ns={lags} spine_local_share={local}")


def jitter(lab, mgr, spine):
    R = lab.ranks
    start_switches(lab, mgr, {"spine": port_faults([r.port_name for r in R[2:6]], reorder=0.5)})
    ok, job, _ = run_case(lab, mgr, "jitter", R[2:6], 0x200, [])
    good = (job is not None and job.get("verdict") == "noise" and job.get("slowest", "") == ""
            and job.get("pinned", 1) < 0.625)
    ok &= stop_switches(lab)
    return control_plane.case("jitter", ok and good, summary(job))


def slowed_link(lab, mgr, leaf, spine):
    R = lab.ranks
    start_switches(lab, mgr, {"leaf": port_faults(["up"], delay_us=DELAY_US),
                              "spine": port_faults([leaf.name], delay_us=DELAY_US)})
    ok, job, _ = run_case(lab, mgr, "slow-link", R[0:4], 0x300, [])
    # The manager roots the tree at either switch: the link is named from the root's side.
    root = ((job or {}).get("path") or [{}])[0].get("switch_id")
    want = ("link spine -> leaf (ranks 2-3)" if root == "leaf"
            else "link leaf -> spine (ranks 0-1)")
    good = (job is not None and job.get("slowest") == want
            and job.get("verdict") == "straggler" and job.get("pinned", 0) >= 0.9)
    ok &= stop_switches(lab)
    return control_plane.case("slowed_link", ok and good, summary(job))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    incd_lab.install_signal_exit()
    ok = True
    t0 = time.time()
    with incd_lab.Lab(build, "strag") as lab:
        lab.inc_bench = os.path.join(build, "tools", "inc-bench", "inc-bench")
        mgr = control_plane.Manager(lab, build)
        leaf = lab.add_switch("leaf")
        spine = lab.add_switch("spine")
        for i in range(6):
            lab.add_rank(leaf if i < 2 else spine)
        lab.link(leaf, spine)
        mgr.write_files(
            links=[{"a": "leaf:up", "b": f"spine:{leaf.name}", "rtt_us": control_plane.LAB_RTT_US}],
            ranks=[{"ipv4": r.ip, "mac": r.mac, "at": f"{r.switch.name}:{r.port_name}",
                    "rtt_us": control_plane.LAB_RTT_US} for r in lab.ranks],
            tenants=[{"name": "lab", "max_groups": 4}])
        mgr.start()
        try:
            ok &= slowed_rank(lab, mgr, spine)
            ok &= jitter(lab, mgr, spine)
            ok &= slowed_link(lab, mgr, leaf, spine)
        except RuntimeError as e:
            print(f"ERROR {e}")
            ok = False
        if not ok:
            print(f"--- inc-manager log:\n{mgr.log()}")
            for s in lab.switches:
                print(f"--- incd {s.name} log:\n{lab.log(s)}")
        ok &= mgr.stop() == 0
    print(f"INCD_STRAGGLER {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
