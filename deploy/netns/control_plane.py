#!/usr/bin/python3
"""control_plane: the whole EPIC system in network namespaces — inc-manager, two incd (leaf,
spine) whose IncAgents register with it, ranks that join their groups through it, incctl.

  control_plane.py BUILD_DIR [--demo]

Topology: a leaf and a spine incd joined by one link; ranks 0-3 and 8-9 behind the leaf,
4-7 and 10 behind the spine. inc-manager serves a unix socket (reachable from every
namespace), keeps its store in a state directory and reads the links, the ranks' addresses
and two tenants from files. The leaf grants only the memory of two groups of window 16 at
pmtu 1024 (the ranks ask for window 16 instead of the manager's path-BDP window).
Every rank runs libinc's inc-bench (soft transport), which verifies every result bit for bit.

Scenarios (each prints "CASE name PASS|FAIL ..."):
  concurrent_tenants   group A (team-a: ranks 0,1,4,5) in Mode-II and B (team-b: 2,3,6,7) in
                       Mode-III (its ranks ask INC_MODE=3) at once, each a two-level IncTree
                       over leaf and spine; incctl shows both trees, their modes and the
                       leaf's memory full; incd's incd_group_mode says which is which
  exhaustion_fallback  group C (team-a: ranks 8,9,10) while A and B hold the leaf's memory: the
                       manager answers "no INC memory", the ranks run host collectives (a ring
                       through incd's L2 switching) and still verify every result
  temporal_mux_queue   group F (team-b: ranks 8,9,10) asks to wait up to 120 s for INC memory:
                       it is queued while A and B hold the leaf, admitted when one leaves, and
                       runs on INC
  teardown             when their ranks have left, A and B are gone and all memory is free
  manager_restart      group D runs; inc-manager is killed (SIGKILL) mid-job and restarted on
                       the same state directory: D's collectives are unaffected, D is recovered,
                       both agents re-register (an agent reconnect), a new group E works
  bad_input            duplicate rank, rank behind no known switch, impossible MTU, group larger
                       than the tenant's quota: each refused with its gRPC status and message;
                       nothing is left pending, granted or installed
--demo runs the first four (what the README's demo shows) and prints incctl's tables.
Prints "CONTROL_PLANE PASS|FAIL". Removes everything it created; needs root.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import incd_lab  # noqa: E402

WINDOW = 16
SLOT_BYTES = 3 * 1024 + 32  # one slot at pmtu 1024 (proto/vocab/memory.h slot_bytes)
LEAF_BYTES = 2 * (2 * WINDOW * SLOT_BYTES)  # two groups of window 16 (2 * window slots each)
SPINE_BYTES = 1024 * SLOT_BYTES
JOB_TIMEOUT_S = 240


class Manager:
    """inc-manager on a unix socket, restartable on the same state directory."""

    def __init__(self, lab, build):
        self.lab = lab
        self.bin = os.path.join(build, "manager", "inc-manager")
        self.incctl = os.path.join(build, "tools", "incctl", "incctl")
        for b in (self.bin, self.incctl):
            if not os.access(b, os.X_OK):
                raise RuntimeError(f"{b} is missing: build first (cmake --build)")
        self.sock = os.path.join(lab.tmp, "inc-manager.sock")
        self.address = "unix:" + self.sock
        self.state = os.path.join(lab.tmp, "manager-state")
        self.log_path = os.path.join(lab.tmp, "inc-manager.log")
        self.topology = os.path.join(lab.tmp, "fabric.json")
        self.tenants = os.path.join(lab.tmp, "tenants.json")
        self.proc = None

    def write_files(self, links, ranks, tenants):
        with open(self.topology, "w") as f:
            json.dump({"links": links, "ranks": ranks}, f, indent=1)
        with open(self.tenants, "w") as f:
            json.dump({"tenants": tenants}, f, indent=1)

    def start(self, timeout=20):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [self.bin, "--listen", self.address, "--state-dir", self.state,
             "--topology", self.topology, "--tenants", self.tenants,
             "--rendezvous-timeout-ms", "15000", "--heartbeat-timeout-ms", "5000",
             "--max-queue-wait-ms", "150000"],
            stdout=log, stderr=subprocess.STDOUT)
        self.lab.procs.append(self.proc)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"inc-manager exited ({self.proc.returncode}):\n{self.log()}")
            if self.ctl("switches", quiet=True) is not None:
                return
            time.sleep(0.2)
        raise RuntimeError(f"inc-manager did not answer in {timeout} s:\n{self.log()}")

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(15)
        return None

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def ctl(self, *args, json_out=True, quiet=False):
        """incctl's answer: parsed JSON (json_out) or text; None when it failed and quiet."""
        cmd = [self.incctl, "--manager", self.address, *(["--json"] if json_out else []), *args]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            if quiet:
                return None
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return json.loads(r.stdout or "{}") if json_out else r.stdout

    def show(self, *args):
        print(f"$ incctl {' '.join(args)}")
        print(self.ctl(*args, json_out=False).rstrip())

    def groups(self):
        return self.ctl("groups").get("groups", [])

    def wait_for(self, what, pred, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = pred()
            if v:
                return v
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


class Bench:
    """One group's inc-bench ranks, started together; every rank joins through the manager."""

    def __init__(self, lab, mgr, name, tenant, ranks, qpn_base, args, extra=None):
        self.name, self.ranks = name, ranks
        self.procs = []
        for k, r in enumerate(ranks):
            env = dict(os.environ)
            env.update({"INC_MANAGER": mgr.address, "INC_GROUP": name, "INC_TENANT": tenant,
                        "INC_RANK": str(k), "INC_RANKS": str(len(ranks)),
                        "INC_TRANSPORT": "soft", "INC_IFACE": r.ifname, "INC_MAC": r.mac,
                        "INC_IP": r.ip, "INC_QPN": str(qpn_base + r.index),
                        "INC_WINDOW": str(WINDOW),
                        "INC_QUEUE_TIMEOUT_MS": "0", "INC_JOIN_TIMEOUT_MS": "60000",
                        "INC_TIMEOUT_MS": "30000"})
            env.update((extra or {}).get(k, {}))
            out = os.path.join(lab.tmp, f"bench-{name}-rank{k}.out")
            f = open(out, "w")
            p = subprocess.Popen(["ip", "netns", "exec", r.ns, lab.inc_bench, "--json",
                                  "--all-ranks", *args], stdout=f, stderr=subprocess.STDOUT,
                                 env=env)
            lab.procs.append(p)
            self.procs.append((r, p, out))

    def finish(self, timeout=JOB_TIMEOUT_S):
        """(every rank exited 0, set of modes reported, verified cases, [(rank, rc, text)])."""
        res = incd_lab.wait_procs(self.procs, timeout)
        ok, modes, cases = True, set(), 0
        for _, rc, text in res:
            ok = ok and rc == 0
            for line in text.splitlines():
                if line.startswith("{"):
                    try:
                        j = json.loads(line)
                    except ValueError:
                        continue
                    modes.add(j.get("mode"))
                    cases += 1
        return ok, modes, cases, res


def table(label, res):
    """Rank 0's verified cases as a table (what the demo shows of each group)."""
    print(f"== {label}: rank 0's inc-bench cases (every rank verified every result)")
    print(f"   {'primitive':<10} {'dtype':<5} {'bytes':>7} {'mode':<4} {'p50 us':>9} {'p99 us':>9}")
    for line in res[0][2].splitlines():
        if not line.startswith("{"):
            continue
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("rank") == 0 and j.get("p50_us") is not None:
            print(f"   {j['primitive']:<10} {j['dtype']:<5} {j['bytes']:>7} {j['mode']:<4} "
                  f"{j['p50_us']:>9.1f} {j['p99_us']:>9.1f}")


def dump(res):
    for r, rc, text in res:
        print(f"--- rank namespace {r.index} rc={rc}:\n{text[-2500:]}")


def case(name, ok, detail=""):
    print(f"CASE {name} {'PASS' if ok else 'FAIL'} {detail}".rstrip(), flush=True)
    return ok


def memory_of(mgr):
    """{switch: granted bytes} from GetMemory (uint64 fields are JSON strings)."""
    return {s["switch_id"]: int(s.get("granted_bytes", 0))
            for s in mgr.ctl("memory").get("switches", [])}


def group_named(mgr, name):
    for g in mgr.groups():
        if g.get("name") == name:
            return g
    return None


def installed(mgr, *names):
    gs = [group_named(mgr, n) for n in names]
    return gs if all(g and g.get("state") == "installed" for g in gs) else None


def registrations(lab, s):
    return lab.metric(lab.metrics(s), "incd_agent_registrations_total") or 0


# --- scenarios -------------------------------------------------------------------------------
MODE_NAMES = {"GROUP_MODE_2": "Mode-II", "GROUP_MODE_3": "Mode-III"}
LAB_RTT_US = 2500
LONG = ["-p", "allreduce,reduce,broadcast,barrier", "-d", "int32,fp32", "-s", "4K,256K",
        "-n", "60", "-w", "2"]
SHORT = ["-p", "allreduce,barrier", "-d", "fp32", "-s", "4K,64K", "-n", "5", "-w", "1"]


def concurrent_and_fallback(lab, mgr, leaf, spine, demo):
    R = lab.ranks
    ok = True
    a = Bench(lab, mgr, "A", "team-a", [R[0], R[1], R[4], R[5]], 0x100, LONG)
    b = Bench(lab, mgr, "B", "team-b", [R[2], R[3], R[6], R[7]], 0x100, LONG,
              {k: {"INC_MODE": "3"} for k in range(4)})
    ga, gb = mgr.wait_for("groups A and B installed", lambda: installed(mgr, "A", "B"), 90)
    mem = memory_of(mgr)
    trees = [mgr.ctl("tree", str(g["group_id"]))["groups"][0].get("tree", {}) for g in (ga, gb)]
    two_level = all(t.get("depth") == 2 and {n["switch_id"] for n in t.get("nodes", [])} ==
                    {"leaf", "spine"} for t in trees)
    modes = {n: g.get("mode") for n, g in (("A", ga), ("B", gb))}
    print(f"== while A ({ga['tenant']}, {MODE_NAMES.get(modes['A'], modes['A'])}) and "
          f"B ({gb['tenant']}, {MODE_NAMES.get(modes['B'], modes['B'])}) run:")
    mgr.show("groups")
    mgr.show("tree", str(ga["group_id"]))
    mgr.show("memory")
    if demo:
        mgr.show("switches")
    # The leaf is full now: group C cannot get INC memory and falls back to host collectives.
    c = Bench(lab, mgr, "C", "team-a", [R[8], R[9], R[10]], 0x200, SHORT)
    c_ok, c_modes, c_cases, c_res = c.finish()
    if demo:
        # A has run a while: who holds it back, switch by switch and job-wide (docs/telemetry.md).
        view = mgr.ctl("telemetry", str(ga["group_id"]), json_out=False, quiet=True)
        if view:
            print(f"== straggler telemetry of group A while it runs:\n"
                  f"$ incctl telemetry {ga['group_id']}\n{view.rstrip()}")
    c_listed = group_named(mgr, "C") is not None
    still = installed(mgr, "A", "B") is not None
    # Temporal Mux: group F (same ranks as C) is willing to wait for INC memory; it queues
    # until A or B leaves, then runs on INC.
    wait = {"INC_QUEUE_TIMEOUT_MS": "120000", "INC_JOIN_TIMEOUT_MS": "180000"}
    f = Bench(lab, mgr, "F", "team-b", [R[8], R[9], R[10]], 0x280, SHORT,
              {k: wait for k in range(3)})
    try:
        mgr.wait_for("group F queued", lambda: (group_named(mgr, "F") or {}).get("state") ==
                     "queued", 30)
        f_queued = installed(mgr, "A", "B") is not None  # queued while both held the leaf
        print("== group F waits for INC memory (Temporal Mux queue):")
        mgr.show("groups")
    except RuntimeError as e:
        print(e)
        f_queued = False
    # The groups' counters exist while they are installed: both switches aggregated, and the
    # non-root one sent its partials up the tree.
    m = {s.name: lab.metrics(s) for s in (leaf, spine)}
    up = sum(lab.metric(t, "incd_engine_events_total", event="partials_sent_up") or 0
             for t in m.values())
    agg = {n: lab.metric(t, "incd_group_aggregations_completed_total") or 0 for n, t in m.items()}
    # incd says each group's mode (incd_group_mode: 2 or 3) on both switches.
    gauge = {(n, g): lab.metric(t, "incd_group_mode", group=str(x["group_id"]))
             for n, t in m.items() for g, x in (("A", ga), ("B", gb))}
    modes_ok = (modes == {"A": "GROUP_MODE_2", "B": "GROUP_MODE_3"} and
                all(gauge[(n, "A")] == 2 and gauge[(n, "B")] == 3 for n in m))
    a_ok, a_modes, a_cases, a_res = a.finish()
    b_ok, b_modes, b_cases, b_res = b.finish()
    if demo:
        print(f"== (A, B and C ran at once: {len(lab.ranks)} ranks and two incd on "
              f"{os.cpu_count()} cores — the latencies include that contention)")
        table("group A (team-a, INC through leaf and spine)", a_res)
        table("group C (team-a, no INC memory left: host collectives)", c_res)
    ok &= case("concurrent_tenants", a_ok and b_ok and a_modes == {"inc"} and b_modes == {"inc"}
               and two_level and mem.get("leaf") == LEAF_BYTES and up > 0
               and min(agg.values()) > 0 and modes_ok,
               f"A={a_ok}/{sorted(a_modes)} cases={a_cases} B={b_ok}/{sorted(b_modes)} "
               f"cases={b_cases} two_level_trees={two_level} leaf_granted={mem.get('leaf')} "
               f"partials_sent_up={up:.0f} aggregations leaf={agg['leaf']:.0f} "
               f"spine={agg['spine']:.0f} modes={modes} incd_group_mode={gauge}")
    if not (a_ok and b_ok):
        dump(a_res + b_res)
    f_ok, f_modes, f_cases, f_res = f.finish()
    ok &= case("temporal_mux_queue", f_queued and f_ok and f_modes == {"inc"},
               f"F_queued_while_A_B_held_the_leaf={f_queued} F={f_ok}/{sorted(f_modes)} "
               f"cases={f_cases}")
    if not f_ok:
        dump(f_res)
    fallback_said = all("using host collectives" in text for _, _, text in c_res)
    ok &= case("exhaustion_fallback", c_ok and c_modes == {"host"} and fallback_said and
               not c_listed and still,
               f"C={c_ok} modes={sorted(c_modes)} cases={c_cases} said_so={fallback_said} "
               f"listed={c_listed} A_B_still_installed_after={still}")
    if not c_ok:
        dump(c_res)
    # Every rank left (LeaveGroup at close): both groups are torn down, all memory is free.
    try:
        mgr.wait_for("A and B torn down", lambda: not mgr.groups(), 30)
        freed = all(v == 0 for v in memory_of(mgr).values())
    except RuntimeError as e:
        print(e)
        freed = False
    ok &= case("teardown", freed, f"groups_left=0 all_memory_free={freed}")
    return ok


def manager_restart(lab, mgr, leaf, spine):
    R = lab.ranks
    d = Bench(lab, mgr, "D", "team-a", [R[0], R[1], R[4], R[5]], 0x300, LONG)
    gd = mgr.wait_for("group D installed", lambda: installed(mgr, "D"), 90)[0]
    before = {s.name: registrations(lab, s) for s in (leaf, spine)}
    mgr.kill()
    print(f"== inc-manager killed (SIGKILL) while group D ({gd['group_id']}) runs")
    time.sleep(1.0)
    running_without = all(p.poll() is None for _, p, _ in d.procs)
    mgr.start()
    recovered = group_named(mgr, "D")
    rec_ok = bool(recovered) and recovered.get("group_id") == gd["group_id"]
    try:
        mgr.wait_for("both agents re-registered", lambda: all(
            registrations(lab, s) > before[s.name] for s in (leaf, spine)), 30)
        sw = mgr.wait_for("both switches connected", lambda: (lambda l: l if len(l) == 2 and all(
            s.get("connected") for s in l) else None)(mgr.ctl("switches").get("switches", [])), 30)
        reconnected = len(sw) == 2
    except RuntimeError as e:
        print(e)
        reconnected = False
    print("== after the restart:")
    mgr.show("groups")
    mgr.show("switches")
    e = Bench(lab, mgr, "E", "team-b", [R[2], R[3], R[6], R[7]], 0x300, SHORT)
    e_ok, e_modes, e_cases, e_res = e.finish()
    d_ok, d_modes, d_cases, d_res = d.finish()
    after = {s.name: registrations(lab, s) for s in (leaf, spine)}
    ok = case("manager_restart", d_ok and d_modes == {"inc"} and running_without and rec_ok
              and reconnected and e_ok and e_modes == {"inc"},
              f"D={d_ok}/{sorted(d_modes)} cases={d_cases} ranks_unaffected={running_without} "
              f"D_recovered={rec_ok} agents_reregistered={reconnected} "
              f"registrations={before}->{after} new_group_E={e_ok}/{sorted(e_modes)} "
              f"cases={e_cases}")
    if not (d_ok and e_ok):
        dump(d_res + e_res)
    try:
        mgr.wait_for("D and E torn down", lambda: not mgr.groups(), 30)
    except RuntimeError as e:
        print(e)
        ok = False
    return ok


def refused(lab, mgr, label, tenant, members, judge, extra=None, join_timeout=None):
    """Runs a group's ranks that the manager must refuse; judge([(rc, text)]) says whether
    every rank failed the way it should."""
    env = {k: {} for k in range(len(members))}
    for k, e in (extra or {}).items():
        env[k].update(e)
    if join_timeout:
        for k in env:
            env[k]["INC_JOIN_TIMEOUT_MS"] = str(join_timeout)
    b = Bench(lab, mgr, label, tenant, members, 0x400, SHORT, env)
    _, _, _, res = b.finish(60)
    for k, (r, rc, text) in enumerate(res):
        line = next((ln for ln in text.splitlines() if "failed" in ln or "error" in ln), "")
        print(f"   {label} process {k}: rc={rc} {line.strip()[:300]}")
    return case(f"bad_input_{label}", judge([(rc, text) for _, rc, text in res]))


def all_fail_with(*words):
    return lambda res: all(rc != 0 and all(w in t for w in words) for rc, t in res)


def bad_input(lab, mgr):
    R = lab.ranks
    ok = True
    # Two processes both claim rank 0 of a 2-rank group: whichever joins second is refused at
    # once; the first gives up at its join deadline (its rank 1 never comes).
    ok &= refused(lab, mgr, "duplicate_rank", "team-a", [R[0], R[1]],
                  lambda res: all(rc != 0 for rc, _ in res) and sum(
                      "ALREADY_EXISTS" in t and "rank 0" in t for _, t in res) == 1,
                  extra={1: {"INC_RANK": "0"}}, join_timeout=4000)
    ok &= refused(lab, mgr, "unknown_rank", "team-a", [R[0]],
                  all_fail_with("NOT_FOUND", "no switch port is known for this address"),
                  extra={0: {"INC_IP": "10.77.0.200"}})
    ok &= refused(lab, mgr, "impossible_mtu", "team-a", [R[1]],
                  all_fail_with("FAILED_PRECONDITION", "pmtu 4096 needs an IP MTU"),
                  extra={0: {"INC_PMTU": "4096"}})
    ok &= refused(lab, mgr, "over_quota", "small", [R[0], R[1]],
                  all_fail_with("FAILED_PRECONDITION", "allows at most 1 per group"))
    # Nothing half-done: no group, no rendezvous left, no memory granted, the agents refused
    # nothing.
    try:
        mgr.wait_for("no rendezvous left", lambda: not mgr.ctl("groups").get("pending")
                     and not mgr.groups(), 25)
        clean = all(v == 0 for v in memory_of(mgr).values())
    except RuntimeError as e:
        print(e)
        clean = False
    failed = sum(lab.metric(lab.metrics(s), "incd_agent_actions_total", result="failed") or 0
                 for s in lab.switches)
    ok &= case("bad_input_nothing_left", clean and failed == 0,
               f"no_groups_no_pending_no_memory={clean} agent_actions_failed={failed:.0f}")
    mgr.show("memory")
    return ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    demo = "--demo" in sys.argv
    if len(args) != 1:
        print(__doc__)
        return 2
    build = os.path.abspath(args[0])
    incd_lab.install_signal_exit()
    ok = True
    t0 = time.time()
    with incd_lab.Lab(build, "ctrl") as lab:
        lab.inc_bench = os.path.join(build, "tools", "inc-bench", "inc-bench")
        mgr = Manager(lab, build)
        leaf = lab.add_switch("leaf")
        spine = lab.add_switch("spine")
        for i in range(11):
            lab.add_rank(leaf if i in (0, 1, 2, 3, 8, 9) else spine)
        lab.link(leaf, spine)
        mgr.write_files(
            # Emulated links (veths, AF_PACKET, a dozen processes on a few cores): their round
            # trip under load is milliseconds, and Mode-III's hop timeout follows it.
            links=[{"a": "leaf:up", "b": f"spine:{leaf.name}", "rtt_us": LAB_RTT_US}],
            ranks=[{"ipv4": r.ip, "mac": r.mac, "at": f"{r.switch.name}:{r.port_name}",
                    "rtt_us": LAB_RTT_US} for r in lab.ranks],
            tenants=[{"name": "team-a", "max_groups": 4},
                     {"name": "team-b", "max_groups": 4,
                      "max_bytes_per_switch": 256 * SLOT_BYTES},
                     {"name": "small", "max_ranks_per_group": 1}])
        mgr.start()
        for s, capacity in ((leaf, LEAF_BYTES), (spine, SPINE_BYTES)):
            lab.write_config(s, [], extra={"manager": {
                "address": mgr.address, "switch_id": s.name, "memory_capacity_bytes": capacity,
                "heartbeat_ms": 500, "reconnect_initial_ms": 100, "reconnect_max_ms": 1000}})
            lab.start_incd(s)
        mgr.wait_for("both switches registered", lambda: len(
            [s for s in mgr.ctl("switches").get("switches", []) if s.get("connected")]) == 2, 30)
        print(f"== inc-manager at {mgr.address}; leaf and spine incd registered")
        mgr.show("topology")
        ok &= concurrent_and_fallback(lab, mgr, leaf, spine, demo)
        if not demo:
            ok &= manager_restart(lab, mgr, leaf, spine)
            ok &= bad_input(lab, mgr)
        if not ok:
            print(f"--- inc-manager log:\n{mgr.log()}")
            for s in lab.switches:
                print(f"--- incd {s.name} log:\n{lab.log(s)}")
        ok &= mgr.stop() == 0
        for s in lab.switches:
            ok &= lab.stop_incd(s) == 0
    print(f"CONTROL_PLANE {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
