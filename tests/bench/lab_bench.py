"""Pieces the netns-lab benchmarks share (inc_vs_gloo.py, shaped_lab.py): progress on stderr,
a failed run, the tools' JSON lines, which EPIC group the ranks use, and the facts of the
machine and build a result was measured on."""
import json
import os
import platform
import subprocess
import sys


class RunFailed(Exception):
    """A tool's run of a case did not finish: `wrong` = a result differed (never retried)."""
    def __init__(self, msg, wrong=False):
        super().__init__(msg)
        self.wrong = wrong


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def json_lines(text):
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def use_group(lab, g):
    """Points the lab's ranks at EPIC group number g (0-based): its own QP numbers on both
    ends. A group's QPs keep their PSNs in incd, so every EPIC run gets a fresh group."""
    for r in lab.ranks:
        r.qpn = 0x10000 + 0x100 * g + 1 + r.index
        r.switch_qpn = 0x200000 + 0x100 * g + r.index


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def proc_cpu_s(pid):
    """utime + stime of a process, seconds (None if gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def ping_rtt(lab, count=50):
    """Kernel ICMP echo rank 0 -> rank 1 through incd: "min/avg/max" in µs (the path's floor
    for one message and its answer)."""
    a, b = lab.ranks[0], lab.ranks[1]
    r = subprocess.run(["ip", "netns", "exec", a.ns, "ping", "-q", "-c", str(count), "-i", "0.01",
                        "-W", "2", b.kernel_ip], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    for line in r.stdout.splitlines():
        if line.startswith("rtt") or line.startswith("round-trip"):
            mn, avg, mx = (float(x) * 1000 for x in line.split("=")[1].split()[0].split("/")[:3])
            return f"{mn:.0f}/{avg:.0f}/{mx:.0f}"
    return "?"


def build_facts(build):
    facts = {}
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                for key in ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER"):
                    if line.startswith(key + ":"):
                        facts[key] = line.split("=", 1)[1].strip()
    except OSError:
        pass
    return facts
