#!/usr/bin/python3
"""torch_lab: the namespace lab of the PyTorch backend tests (tests/integration/torch_*.py).

One incd (af_packet ports) whose IncAgent registers with an inc-manager on a unix socket; one
"host" namespace shared by N rank processes (python3 with torch): their TCPStore and Gloo meet
on its loopback (GLOO_SOCKET_IFNAME=lo), while each rank's EPIC endpoint (libinc's soft
transport) runs on its own veth to incd, with no kernel address. Ranks join their process
groups through the manager (INC_MANAGER); every process group gets its own QPN (INC_QPN + 4 *
its index, docs/pytorch.md).

Rank processes run `python3 SCRIPT --worker ...` with RANK, WORLD_SIZE, MASTER_ADDR/PORT, the
INC_* variables and PYTHONPATH set to the build's epic_torch package; a worker prints one line
"RESULT {json}" that run() parses. Everything is removed on exit, failure included.
"""
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "deploy", "netns"))
import control_plane  # noqa: E402
import incd_lab  # noqa: E402

PYTHON = "/usr/bin/python3"  # Debian's python3-torch; a pyenv python on PATH has no torch
WINDOW = 16
PMTU = 1024
QPN_BASE = 0x100
# The soft transport's fixed RTO (20 ms by default) times 8 tries is the longest a rank may be
# starved of CPU before its QP fails (retry_exceeded): five python ranks, incd and inc-manager on
# 2 shared CPUs, beside other jobs (a load of 12 measured), exceeded 160 ms. A lossless lab
# never waits for this timer otherwise.
RETRANSMIT_TIMEOUT_US = 200000
# bytes of one group's slots at window 16, pmtu 1024 (arithmetic.md: 2*window*(32+accum+pmtu))
GROUP_BYTES = {"fp32_arrival": 2 * WINDOW * (32 + 2 * PMTU + PMTU),
               "kulisch_fixed/fp32": 2 * WINDOW * (32 + 18688 + PMTU)}


def package_dir(build):
    d = os.path.join(os.path.abspath(build), "host", "torch", "python")
    if not os.path.exists(os.path.join(d, "epic_torch", "__init__.py")):
        raise RuntimeError(f"{d}/epic_torch is missing: build the target epic_torch in {build} "
                           "(a non-sanitizer build with libtorch-dev and pybind11-dev)")
    return d


class TorchLab:
    def __init__(self, build, name, ranks=4, capacity_bytes=8 << 20):
        self.build = os.path.abspath(build)
        self.pkg = package_dir(self.build)
        self.lab = incd_lab.Lab(self.build, name)
        self.n = ranks
        self.capacity = capacity_bytes
        self.port = 20000 + random.randrange(20000)

    def __enter__(self):
        lab = self.lab
        try:
            self.sw = lab.add_switch("sw")
            self.host = lab.add_host("host")
            for _ in range(self.n):
                lab.add_rank(self.sw, host=self.host)
            self.mgr = control_plane.Manager(lab, self.build)
            self.mgr.write_files(
                links=[],
                ranks=[{"ipv4": r.ip, "mac": r.mac, "at": f"sw:{r.port_name}", "rtt_us": 2500}
                       for r in lab.ranks],
                tenants=[{"name": "torch", "max_groups": 64}])
            self.mgr.start()
            lab.write_config(self.sw, [], extra={"manager": {
                "address": self.mgr.address, "switch_id": "sw",
                "memory_capacity_bytes": self.capacity, "heartbeat_ms": 500,
                "reconnect_initial_ms": 100, "reconnect_max_ms": 1000}})
            lab.start_incd(self.sw)
            self.mgr.wait_for("incd registered", lambda: [
                s for s in self.mgr.ctl("switches").get("switches", []) if s.get("connected")], 30)
        except BaseException:
            lab.close()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.mgr.stop()
            self.lab.stop_incd(self.sw)
        finally:
            self.lab.close()

    def env(self, r, extra=None):
        e = {"INC_MANAGER": self.mgr.address, "INC_TENANT": "torch", "INC_TRANSPORT": "soft",
             "INC_IFACE": r.ifname, "INC_MAC": r.mac, "INC_IP": r.ip, "INC_QPN": str(QPN_BASE),
             "INC_WINDOW": str(WINDOW), "INC_PMTU": str(PMTU), "INC_QUEUE_TIMEOUT_MS": "0",
             "INC_JOIN_TIMEOUT_MS": "60000", "INC_TIMEOUT_MS": "30000",
             "INC_RETRANSMIT_TIMEOUT_US": str(RETRANSMIT_TIMEOUT_US),
             "RANK": str(r.index), "WORLD_SIZE": str(self.n), "MASTER_ADDR": "127.0.0.1",
             "MASTER_PORT": str(self.port), "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1",
             "PYTHONPATH": self.pkg, "PYTHONUNBUFFERED": "1",
             "EPIC_TEST_INCCTL": self.mgr.incctl}
        e.update(extra or {})
        return e

    def run(self, script, args, timeout, extra_env=None):
        """Runs `python3 script --worker args` as every rank; returns [(rank, rc, text,
        result dict or None)]. extra_env: a dict, or a function of the rank index."""
        self.port += 1  # a fresh TCPStore per job
        def env_of(r):
            x = extra_env(r.index) if callable(extra_env) else extra_env
            return self.env(r, x)
        res = self.lab.run_in_ranks(self.lab.ranks, lambda r: [PYTHON, script, "--worker", *args],
                                    env_of, timeout)
        out = []
        for r, rc, text in res:
            result = None
            for line in text.splitlines():
                if line.startswith("RESULT "):
                    result = json.loads(line[len("RESULT "):])
            out.append((r.index, rc, text, result))
        return out

    def engine_events(self, event):
        return self.lab.metric(self.lab.metrics(self.sw), "incd_engine_events_total",
                               event=event) or 0


def finished(tl, res, marker, t0):
    """CASE ranks_finished: every rank exited 0 with its RESULT line. If not, prints the ranks'
    output, the manager's and incd's logs and "MARKER FAIL"."""
    ran = all(rc == 0 and r is not None for _, rc, _, r in res)
    check("ranks_finished", ran, f"exit codes {[rc for _, rc, _, _ in res]}")
    if not ran:
        dump(res)
        print(f"--- inc-manager log:\n{tl.mgr.log()}")
        print(f"--- incd log:\n{tl.lab.log(tl.sw)}")
        print(f"{marker} FAIL wall={wall(t0)}")
    return ran


def main(doc, worker, test):
    """A torch_*.py test's entry: `--worker` runs worker() (a rank), `BUILD_DIR` runs
    test(build), which returns whether it passed."""
    if "--worker" in sys.argv:
        return worker()
    if len(sys.argv) != 2:
        print(doc)
        return 2
    incd_lab.install_signal_exit()
    return 0 if test(sys.argv[1]) else 1


def dump(results, tail=4000):
    for rank, rc, text, _ in results:
        print(f"--- rank {rank} rc={rc}:\n{text[-tail:]}")


def incctl_groups():
    """From a worker: the manager's groups as incctl lists them ({name: state})."""
    import subprocess
    r = subprocess.run([os.environ["EPIC_TEST_INCCTL"], "--manager", os.environ["INC_MANAGER"],
                        "--json", "groups"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=20)
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return {g.get("name"): g.get("state") for g in json.loads(r.stdout or "{}").get("groups", [])}


def check(name, ok, detail=""):
    print(f"CASE {name} {'PASS' if ok else 'FAIL'} {detail}".rstrip(), flush=True)
    return ok


def wall(t0):
    return f"{time.time() - t0:.0f}s"
