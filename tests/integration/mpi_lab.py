"""mpi_lab: an MPI job whose collectives run through EPIC, in the namespace lab.

One incd switch whose IncAgent registers with inc-manager (unix socket), and one host
namespace in which mpirun starts every rank (Open MPI's shared-memory transport between them);
each rank's libinc soft endpoint has its own veth to incd (incd_lab.add_rank(host=...)), and
its own INC_* parameters in a file (EPIC_MPI_CONFIG=rank%r.env). libepic_mpi.so is preloaded
into every rank. Used by tests/integration/mpi_offload.py and mpi_mpi4py.py. Needs root.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "deploy", "netns"))
import control_plane  # noqa: E402
import incd_lab  # noqa: E402

SLOT_BYTES = 3 * 1024 + 32  # one slot at pmtu 1024 (proto/vocab/memory.h slot_bytes)
WINDOW = 16
# Tenants: "mpi" has room for every communicator the tests open; "tight" for one group at a
# time, so that a second communicator of the job gets no INC memory (host fallback).
TENANTS = [{"name": "mpi", "max_groups": 16}, {"name": "tight", "max_groups": 1}]
MPI_BASE = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader",
            "--mca", "btl_vader_single_copy_mechanism", "none", "--bind-to", "none"]


def library(build):
    return os.path.join(build, "host", "mpi", "libepic_mpi.so")


class MpiLab:
    """incd + inc-manager + `n` ranks sharing one host namespace."""

    def __init__(self, lab, build, n):
        self.lab, self.build, self.n = lab, os.path.abspath(build), n
        self.jobs = 0
        self.lib = library(self.build)
        if not os.access(self.lib, os.R_OK):
            raise RuntimeError(f"{self.lib} is missing: build the epic_mpi target")
        self.sw = lab.add_switch("sw")
        self.host = lab.add_host("mpi")
        self.ranks = [lab.add_rank(self.sw, host=self.host) for _ in range(n)]
        self.mgr = control_plane.Manager(lab, self.build)
        self.mgr.write_files(
            links=[],
            ranks=[{"ipv4": r.ip, "mac": r.mac, "at": f"{self.sw.name}:{r.port_name}",
                    "rtt_us": control_plane.LAB_RTT_US} for r in self.ranks],
            tenants=TENANTS)
        self.mgr.start()
        lab.write_config(self.sw, [], extra={"manager": {
            "address": self.mgr.address, "switch_id": self.sw.name,
            "memory_capacity_bytes": 64 * 2 * WINDOW * SLOT_BYTES, "heartbeat_ms": 500,
            "reconnect_initial_ms": 100, "reconnect_max_ms": 1000}})
        lab.start_incd(self.sw)
        self.mgr.wait_for("the switch registered", lambda: any(
            s.get("connected") for s in self.mgr.ctl("switches").get("switches", [])), 30)
        # Each rank's own endpoint: EPIC_MPI_CONFIG=<tmp>/rank%r.env.
        for k, r in enumerate(self.ranks):
            with open(os.path.join(lab.tmp, f"rank{k}.env"), "w") as f:
                f.write(f"# rank {k}: its veth to incd and its soft endpoint\n"
                        f"INC_TRANSPORT=soft\nINC_IFACE={r.ifname}\nINC_MAC={r.mac}\n"
                        f"INC_IP={r.ip}\nINC_QPN=0x100\n")

    def env(self, tenant="mpi", extra=None):
        """The job's environment: what mpirun passes to every rank with -x. Each job gets QPNs
        of its own (INC_QPN overrides the files'): a job that died without leaving its groups
        keeps their endpoints in the manager until it reclaims them."""
        self.jobs += 1
        e = {"LD_PRELOAD": self.lib, "INC_QPN": str(0x100 + 0x100 * self.jobs),
             "EPIC_MPI_CONFIG": os.path.join(self.lab.tmp, "rank%r.env"),
             "EPIC_MPI_REPORT": os.path.join(self.lab.tmp, "report-%r.json"),
             "INC_MANAGER": self.mgr.address, "INC_TENANT": tenant,
             "INC_WINDOW": str(WINDOW), "INC_QUEUE_TIMEOUT_MS": "0",
             "INC_JOIN_TIMEOUT_MS": "60000", "INC_TIMEOUT_MS": "30000",
             # The soft transport gives up after INC_RETRY_COUNT (7) retransmission timeouts
             # in a row: at the default 20 ms, a peer that lags 0.15 s breaks the group
             # (docs/mpi.md, Limits). Four python ranks, incd and a compiler on 2 CPUs lag that
             # much; 100 ms gives them about a second.
             "INC_RETRANSMIT_TIMEOUT_US": "100000"}
        e.update(extra or {})
        return e

    def reports(self):
        """Every rank's EPIC_MPI_REPORT JSON (removed after reading, for the next job)."""
        out = []
        for k in range(self.n):
            path = os.path.join(self.lab.tmp, f"report-{k}.json")
            try:
                with open(path) as f:
                    out.append(json.load(f))
                os.unlink(path)
            except (OSError, ValueError) as e:
                out.append({"error": str(e)})
        return out

    def mpirun(self, argv, env, timeout, np=None, preload=True):
        """Runs `argv` on np ranks in the host namespace; (exit code or "timeout", output)."""
        env = dict(env)
        if not preload:
            env.pop("LD_PRELOAD", None)
        cmd = ["ip", "netns", "exec", self.host, *MPI_BASE, "-np", str(np or self.n)]
        for k in sorted(env):
            cmd += ["-x", f"{k}={env[k]}"]  # to the ranks only, not to mpirun itself
        cmd += argv
        full = dict(os.environ)
        full.pop("LD_PRELOAD", None)
        for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
            full[k] = "1"
        out = os.path.join(self.lab.tmp, f"mpirun-{len(self.lab.procs)}.out")
        with open(out, "w") as f:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=full)
            self.lab.procs.append(p)
            t0 = time.time()
            try:
                rc = p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.terminate()  # mpirun stops its ranks on SIGTERM
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                rc = "timeout"
        with open(out) as f:
            text = f.read()
        return rc, text, time.time() - t0

    def engine_events(self, event):
        """incd's count of engine events `event` (e.g. "aggregations_completed"), all workers."""
        return self.lab.metric(self.lab.metrics(self.sw), "incd_engine_events_total",
                               event=event) or 0.0

    def close(self):
        ok = self.mgr.stop() == 0
        return self.lab.stop_incd(self.sw) == 0 and ok
