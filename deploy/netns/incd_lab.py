#!/usr/bin/python3
"""incd_lab: EPIC's network-namespace lab — incd switches and user-space RoCE ranks.

Builds a topology of network namespaces joined by veth pairs (unique names, checksum
offloads off), starts `incd` in each switch namespace on DPDK af_packet ports and one
`inc-rank` process (the user-space RC endpoint, host/collective) per rank namespace, runs
collectives and collects each rank's JSON results. Everything it creates is removed on
exit, failure included; only processes it started are stopped, by PID.

Used by the integration tests (tests/integration/incd_*.py) and the README's demo
(deploy/demo.sh). Needs root.
"""
import json
import os
import random
import signal
import subprocess
import tempfile
import time

INC_SUBNET = "10.77.0"


def sh(*args, check=True, quiet=False):
    r = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({r.returncode}): {r.stdout.strip()}")
    return r.stdout


class Switch:
    def __init__(self, lab, name, index):
        self.lab, self.name, self.index = lab, name, index
        self.ns = f"epic-{lab.sfx}-{name}"
        self.ip = f"{INC_SUBNET}.{254 - index}"
        self.mac = f"02:ec:00:00:00:{254 - index:02x}"
        self.ports = []  # (port name, ifname)
        self.proc = None
        self.metrics_port = 9464
        self.log_path = os.path.join(lab.tmp, f"incd-{name}.log")
        self.config_path = os.path.join(lab.tmp, f"incd-{name}.json")

    def add_port(self, pname, ifname):
        self.ports.append((pname, ifname))


class Rank:
    def __init__(self, index, switch, port_name):
        self.index, self.switch, self.port_name = index, switch, port_name
        self.ns = None
        self.ifname = None
        self.ip = f"{INC_SUBNET}.{1 + index}"            # the soft endpoint's own address
        self.kernel_ip = f"{INC_SUBNET}.{100 + index}"   # the namespace kernel's (ping, TCP)
        self.mac = f"02:00:00:00:00:{1 + index:02x}"
        self.qpn = 0x11 + index
        self.switch_qpn = 0x1000 + index               # the switch's endpoint of this edge



def wait_procs(procs, timeout):
    """Waits for [(key, Popen, output path)] until `timeout` s from now; kills (by PID) what is
    left. Returns [(key, exit code or "timeout", output text)]."""
    deadline = time.time() + timeout
    res = []
    for key, p, out in procs:
        try:
            rc = p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
        with open(out) as f:
            res.append((key, rc, f.read()))
    return res


class Lab:
    def __init__(self, build_dir, name="lab", mtu=1500):
        """`mtu`: of every veth and incd port (above 1500: jumbo frames, e.g. 4200 carries
        RoCE path MTU 4096; incd sizes its af_packet ring slots for it)."""
        self.build = os.path.abspath(build_dir)
        self.mtu = mtu
        self.incd = os.path.join(self.build, "daemon", "incd")
        self.inc_rank = os.path.join(self.build, "tools", "inc-rank", "inc-rank")
        for b in (self.incd, self.inc_rank):
            if not os.access(b, os.X_OK):
                raise RuntimeError(f"{b} is missing: build first (cmake --build)")
        self.sfx = f"{os.getpid() % 100000:05d}{random.randrange(256):02x}"
        self.tmp = tempfile.mkdtemp(prefix=f"epic-{name}-")
        self.namespaces, self.procs = [], []
        self.switches, self.ranks = [], []
        self._veth = 0

    # --- topology ---------------------------------------------------------------------------
    def _ns(self, ns):
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")

    def _veth_pair(self, ns_a, ns_b):
        self._veth += 1
        a, b = f"v{self.sfx}a{self._veth}", f"v{self.sfx}b{self._veth}"
        sh("ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b)
        for ns, dev in ((ns_a, a), (ns_b, b)):
            if self.mtu != 1500:
                sh("ip", "-n", ns, "link", "set", dev, "mtu", str(self.mtu))
            sh("ip", "-n", ns, "link", "set", dev, "up")
            # veth TX leaves partial checksums that AF_PACKET forwarding breaks (docs/incd.md, offloads on veth)
            sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off", "tso", "off", "gso",
               "off", "gro", "off", check=False)
        return a, b

    def add_switch(self, name):
        s = Switch(self, name, len(self.switches))
        self._ns(s.ns)
        self.switches.append(s)
        return s

    def add_host(self, name):
        """A namespace that several ranks share (add_rank(..., host=...)): processes that must
        meet outside EPIC too (a PyTorch store on loopback, MPI's shared memory) run there, each
        rank's user-space endpoint on its own veth to the switch."""
        ns = f"epic-{self.sfx}-{name}"
        self._ns(ns)
        return ns

    def add_rank(self, switch, host=None):
        """A rank behind `switch`: in a namespace of its own, or in `host` (add_host()), where
        its veth carries no kernel address (the soft endpoint has its own; several interfaces
        of one namespace on one subnet would confuse the kernel's routes)."""
        i = len(self.ranks)
        r = Rank(i, switch, f"r{i}")
        r.ns = host or f"epic-{self.sfx}-rank{i}"
        if host is None:
            self._ns(r.ns)
        sw_if, r.ifname = self._veth_pair(switch.ns, r.ns)
        switch.add_port(r.port_name, sw_if)
        if host is None:
            sh("ip", "-n", r.ns, "addr", "add", f"{r.kernel_ip}/24", "dev", r.ifname)
        self.ranks.append(r)
        return r

    def link(self, leaf, spine):
        """An uplink: port 'up' on the leaf, port '<leaf name>' on the spine."""
        up, down = self._veth_pair(leaf.ns, spine.ns)
        leaf.add_port("up", up)
        spine.add_port(leaf.name, down)

    # --- incd ---------------------------------------------------------------------------------
    def write_config(self, s, groups, faults=(), workers=1, lcores="0-1", extra=None,
                     rate_mbps=None):
        """incd's config for switch s; `rate_mbps` sets every port's line rate (incd's egress,
        docs/traffic-classes.md), `extra` adds top-level keys."""
        cfg = {
            "eal": {"lcores": lcores, "hugepages": False, "memory_mb": 256,
                    "file_prefix": f"incd-{self.sfx}-{s.name}", "log_level": "warning"},
            "workers": workers,
            "burst": 32,
            "idle_sleep_us": 50,
            # Ring slots of a jumbo MTU take a block each: fewer of them, about the same memory.
            "ports": [{"name": p, "mtu": self.mtu,
                       "device": f"net_af_packet{i},iface={ifn},"
                                 f"framecnt={4096 if self.mtu <= 1500 else 2048}",
                       **({"rate_mbps": rate_mbps} if rate_mbps else {})}
                      for i, (p, ifn) in enumerate(s.ports)],
            "switch": {"inc_addresses": [{"ipv4": s.ip, "mac": s.mac}],
                       "l2_aging_s": 300, "l2_table_size": 4096, "bad_icrc": "pass"},
            "faults": list(faults),
            "groups": groups,
            "metrics": {"listen": f"127.0.0.1:{s.metrics_port}", "stall_after_ms": 1000},
            "log": {"level": "info", "file": ""},
        }
        if extra:
            cfg.update(extra)
        with open(s.config_path, "w") as f:
            json.dump(cfg, f, indent=1)
        return s.config_path

    def start_incd(self, s, timeout=20):
        log = open(s.log_path, "a")
        s.proc = subprocess.Popen(["ip", "netns", "exec", s.ns, self.incd, "-c", s.config_path],
                                  stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(s.proc)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if s.proc.poll() is not None:
                raise RuntimeError(f"incd {s.name} exited ({s.proc.returncode}):\n" + self.log(s))
            if self.metrics(s, quiet=True) is not None:
                return
            time.sleep(0.2)
        raise RuntimeError(f"incd {s.name} did not come up in {timeout} s:\n" + self.log(s))

    def stop_incd(self, s, timeout=10):
        if s.proc is None or s.proc.poll() is not None:
            return s.proc.returncode if s.proc else None
        s.proc.send_signal(signal.SIGTERM)
        try:
            return s.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            s.proc.kill()
            s.proc.wait()
            raise RuntimeError(f"incd {s.name} ignored SIGTERM for {timeout} s")

    def log(self, s):
        try:
            with open(s.log_path) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def metrics(self, s, quiet=False):
        code = ("import urllib.request,sys;sys.stdout.write(urllib.request.urlopen("
                f"'http://127.0.0.1:{s.metrics_port}/metrics',timeout=2).read().decode())")
        r = subprocess.run(["ip", "netns", "exec", s.ns, "/usr/bin/python3", "-c", code],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            if quiet:
                return None
            raise RuntimeError(f"cannot scrape incd {s.name}: {r.stderr.strip()[-300:]}")
        return r.stdout

    @staticmethod
    def metric(text, name, **labels):
        """Sum of the samples of `name` whose labels include `labels`."""
        total, found = 0.0, False
        for line in text.splitlines():
            if not line.startswith(name) or line.startswith("#"):
                continue
            head, _, value = line.rpartition(" ")
            metric_name = head.split("{")[0]
            if metric_name != name:
                continue
            if all(f'{k}="{v}"' in head for k, v in labels.items()):
                total += float(value)
                found = True
        return total if found else None

    # --- groups --------------------------------------------------------------------------------
    @staticmethod
    def endpoint(mac, ip, qpn):
        return {"mac": mac, "ipv4": ip, "qpn": qpn}

    def rank_child(self, r, first=0):
        """A rank child of r's switch; `first` = the lab index of the group's rank 0."""
        return {"port": r.port_name, "rank": r.index - first,
                "remote": self.endpoint(r.mac, r.ip, r.qpn),
                "local": {"ipv4": r.switch.ip, "qpn": r.switch_qpn}}

    def group(self, gid, ranks, children, parent=None, window=16, pmtu=1024, initial_psn=0x100,
              accumulator=None, dtype=None):
        """A static group; `accumulator` ("kulisch_fixed") and `dtype` ("fp32") set its
        arithmetic (docs/arithmetic.md), unset: fp32_arrival sized for the default types."""
        g = {"id": gid, "ranks": ranks, "initial_psn": initial_psn, "window": window,
             "pmtu": pmtu, "children": children}
        if parent:
            g["parent"] = parent
        if accumulator:
            g["accumulator"] = accumulator
        if dtype:
            g["dtype"] = dtype
        return g

    # --- ranks ---------------------------------------------------------------------------------
    def start_ranks(self, ranks, plan, group_ranks=None, first=0, window=16, pmtu=1024,
                    initial_psn=0x100, seed=1, reps=1, timeout_ms=60000, extra=()):
        """Starts one inc-rank per rank; returns [(rank, Popen, out_path)]."""
        n = group_ranks or len(ranks)
        started = []
        for r in ranks:
            out = os.path.join(self.tmp, f"rank{r.index}-{len(self.procs)}.out")
            cmd = ["ip", "netns", "exec", r.ns, self.inc_rank,
                   "--iface", r.ifname, "--mac", r.mac, "--ip", r.ip, "--qpn", str(r.qpn),
                   "--switch-ip", r.switch.ip, "--switch-qpn", str(r.switch_qpn),
                   "--rank", str(r.index - first), "--ranks", str(n),
                   "--initial-psn", str(initial_psn), "--window", str(window),
                   "--pmtu", str(pmtu), "--plan", plan, "--reps", str(reps),
                   "--seed", str(seed), "--timeout-ms", str(timeout_ms), "--json", *extra]
            f = open(out, "w")
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
            self.procs.append(p)
            started.append((r, p, out))
        return started

    def wait_ranks(self, started, timeout):
        """Waits for every rank; returns (all ok, [parsed JSON lines per rank], texts)."""
        ok = True
        results, texts = [], []
        for r, rc, text in wait_procs(started, timeout):
            lines = []
            for line in text.splitlines():
                if line.startswith("{"):
                    try:
                        lines.append(json.loads(line))
                    except ValueError:
                        pass
            results.append(lines)
            texts.append(f"rank {r.index} rc={rc}\n{text[-3000:]}")
            if rc != 0:
                ok = False
        return ok, results, texts

    def run_job(self, name, plan, seed, timeout, **kw):
        """Runs `plan` on every rank, prints "JOB name PASS|FAIL ..." (and, on failure, each
        rank's output); returns whether every rank verified every result."""
        t0 = time.time()
        started = self.start_ranks(self.ranks, plan, seed=seed, timeout_ms=int(timeout * 1000), **kw)
        ok, results, texts = self.wait_ranks(started, timeout + 30)
        done = sum(1 for lines in results for x in lines if x.get("ok") is True and "k" in x)
        print(f"JOB {name} {'PASS' if ok else 'FAIL'} collectives_verified={done} "
              f"wall={time.time() - t0:.1f}s")
        if not ok:
            for t in texts:
                print(t)
            for s in self.switches:
                print(f"--- incd {s.name} log:\n{self.log(s)}")
        return ok

    def rank_env(self, r, ranks, first=0, window=16, pmtu=1024, initial_psn=0x100, extra=None):
        """libinc's INC_* peer parameters of lab rank r (soft transport), as rank_child()
        configures it in incd; `first` = the lab index of the group's rank 0."""
        e = {"INC_RANK": str(r.index - first), "INC_RANKS": str(ranks), "INC_TRANSPORT": "soft",
             "INC_SWITCH_IP": r.switch.ip, "INC_SWITCH_QPN": str(r.switch_qpn),
             "INC_PSN": str(initial_psn), "INC_PMTU": str(pmtu), "INC_WINDOW": str(window),
             "INC_IFACE": r.ifname, "INC_MAC": r.mac, "INC_IP": r.ip, "INC_QPN": str(r.qpn)}
        e.update(extra or {})
        return e

    def run_in_ranks(self, ranks, argv_of, env_of, timeout):
        """Runs argv_of(r) in each rank's namespace with env_of(r) added to the environment,
        all at once; returns [(rank, exit code or "timeout", output)]."""
        procs = []
        for r in ranks:
            out = os.path.join(self.tmp, f"run-rank{r.index}-{len(self.procs)}.out")
            env = dict(os.environ)
            env.update(env_of(r))
            f = open(out, "w")
            p = subprocess.Popen(["ip", "netns", "exec", r.ns, *argv_of(r)], stdout=f,
                                 stderr=subprocess.STDOUT, env=env)
            self.procs.append(p)
            procs.append((r, p, out))
        return wait_procs(procs, timeout)

    # --- teardown -------------------------------------------------------------------------------
    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + 10
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for ns in reversed(self.namespaces):
            sh("ip", "netns", "del", ns, check=False)
        self.namespaces = []
        subprocess.run(["rm", "-rf", self.tmp])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def rdma_devices():
    """Names of the host's RDMA devices (empty without any)."""
    try:
        return sorted(os.listdir("/sys/class/infiniband"))
    except OSError:
        return []


def install_signal_exit():
    """SIGTERM/SIGINT raise SystemExit so `with Lab(...)` tears everything down."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
