#!/usr/bin/python3
"""integration.incd_single_switch — 8 rank namespaces behind one incd.

  job 1: all six primitives x int32/fp32/bf16 (sum/min/max), sizes 1 element .. 16 MiB,
         no loss, while ping and a TCP transfer cross incd between two rank namespaces;
  restart: incd stopped with SIGTERM (must exit 0) and started again with 1 % seeded loss
         injected on every port (RX);
  job 2: the same primitives and types at up to 1 MiB under that loss.
Every rank verifies every result bit for bit against the reference reduction of all ranks'
inputs (inc-rank). Prints "INCD_SINGLE_SWITCH PASS|FAIL".
  incd_single_switch.py BUILD_DIR
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

RANKS = 8
MIB = 1 << 20


def plan(max_bytes):
    items = []
    for dtype, esz in (("int32", 4), ("fp32", 4), ("bf16", 2)):
        small = 1
        mid = 3000  # several packets, not a multiple of the MTU
        big = max_bytes // esz
        items += [f"allreduce:{dtype}:sum:{small}", f"allreduce:{dtype}:sum:{mid}",
                  f"allreduce:{dtype}:max:{big}", f"reduce:{dtype}:min:root=3:{mid}",
                  f"broadcast:{dtype}:root=5:{mid}",
                  f"reduce_scatter:{dtype}:sum:{mid // RANKS}", f"allgather:{dtype}:{mid // RANKS}"]
    items.append("barrier")
    return ",".join(items)


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "single") as lab:
        sw = lab.add_switch("sw")
        for _ in range(RANKS):
            lab.add_rank(sw)
        group = lab.group(1, RANKS, [lab.rank_child(r) for r in lab.ranks])
        lab.write_config(sw, [group])
        lab.start_incd(sw)

        # Ordinary traffic through incd at the same time: ping and a TCP transfer.
        a, b = lab.ranks[0], lab.ranks[RANKS - 1]
        server = subprocess.Popen(
            ["ip", "netns", "exec", b.ns, "/usr/bin/python3", "-c",
             "import socket,hashlib;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,"
             "socket.SO_REUSEADDR,1);s.bind(('0.0.0.0',5201));s.listen(1);c,_=s.accept();h="
             "hashlib.sha256();n=0\nwhile True:\n d=c.recv(65536)\n if not d: break\n h.update(d);"
             "n+=len(d)\nprint(n,h.hexdigest())"],
            stdout=subprocess.PIPE, text=True)
        lab.procs.append(server)
        time.sleep(0.5)
        payload_cmd = ("import socket,hashlib,os;d=bytes(range(256))*(32*4096);"
                       "s=socket.create_connection(('%s',5201),timeout=30);s.sendall(d);s.close();"
                       "print(len(d),hashlib.sha256(d).hexdigest())" % b.kernel_ip)
        client = subprocess.Popen(["ip", "netns", "exec", a.ns, "/usr/bin/python3", "-c", payload_cmd],
                                  stdout=subprocess.PIPE, text=True)
        pinger = subprocess.Popen(["ip", "netns", "exec", a.ns, "ping", "-c", "20", "-i", "0.2",
                                   "-W", "2", b.kernel_ip], stdout=subprocess.PIPE, text=True)
        lab.procs += [client, pinger]

        ok &= lab.run_job("lossless", plan(16 * MIB), seed=101, timeout=300)

        sent = client.communicate(timeout=60)[0].split()
        got = server.communicate(timeout=60)[0].split()
        tcp_ok = len(sent) == 2 and sent == got
        print(f"TCP {'PASS' if tcp_ok else 'FAIL'} bytes={sent[0] if sent else '?'} "
              f"sha256 match={tcp_ok}")
        ping_out = pinger.communicate(timeout=60)[0]
        ping_ok = pinger.returncode == 0 and " 0% packet loss" in ping_out
        print(f"PING {'PASS' if ping_ok else 'FAIL'} "
              f"{[l for l in ping_out.splitlines() if 'packet loss' in l]}")
        ok &= tcp_ok and ping_ok

        m = lab.metrics(sw)
        agg = lab.metric(m, "incd_group_aggregations_completed_total", group="1")
        fwd = lab.metric(m, "incd_switch_frames_total", disposition="forwarded")
        print(f"METRICS group1 aggregations={agg:.0f} switched_forwarded={fwd:.0f}")
        ok &= (agg or 0) > 0 and (fwd or 0) > 0

        rc = lab.stop_incd(sw)
        print(f"RESTART incd exit={rc}")
        ok &= rc == 0
        faults = [{"port": p, "direction": "rx", "drop": 0.01, "seed": 7 + i}
                  for i, (p, _) in enumerate(sw.ports)]
        lab.write_config(sw, [group], faults=faults)
        lab.start_incd(sw)
        ok &= lab.run_job("loss1pct", plan(1 * MIB), seed=102, timeout=400)
        m = lab.metrics(sw)
        dropped = lab.metric(m, "incd_port_faults_injected_total", fault="dropped")
        print(f"METRICS injected_drops={dropped:.0f}")
        ok &= (dropped or 0) > 0
        ok &= lab.stop_incd(sw) == 0
    print(f"INCD_SINGLE_SWITCH {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
