#!/usr/bin/python3
"""integration.incd_faults — what incd does when things go wrong.

  stuck group: two groups on one incd (group 1 = ranks 0-3, group 2 = ranks 4-7). Rank 1 is
      killed (SIGKILL) in the middle of a long AllReduce of group 1. Group 2 must finish its
      collectives, verified bit for bit, while group 1 is stuck; /metrics must then show
      incd_group_stalled{group="1"} 1 and the missing contribution of rank 1, and group 2
      not stalled. incd must keep running and stop cleanly.
  bad input: frames built by scapy (an implementation we did not write) are sent into incd
      from a rank namespace: a truncated IPv4 frame, a non-IP frame, RoCEv2 to the INC
      address with a bad ICRC, RoCEv2 to the INC address for an unknown QP, transit RoCEv2
      with a bad ICRC; each must be counted under its reason in /metrics, and incd must keep
      switching (a ping still crosses it), and its INC address answers ping.
Prints "INCD_FAULTS PASS|FAIL".
  incd_faults.py BUILD_DIR
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

SCAPY_SEND = r"""
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, conf
from scapy.contrib.roce import BTH
conf.verb = 0
iface, src_mac, sw_mac, src_ip, sw_ip, other_ip, other_mac = sys.argv[1:8]
def roce(dst_mac, dst_ip, qp):
    # RDMA SEND ONLY (opcode 4) with 64 bytes: scapy computes a valid ICRC
    return bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip) /
                 UDP(sport=49152, dport=4791) / BTH(opcode=4, dqpn=qp, psn=1) / Raw(b"x" * 64))
def corrupt(frame):  # flip a payload byte: the ICRC no longer matches
    b = bytearray(frame); b[-10] ^= 0xFF; return bytes(b)
frames = {
  "runt_ipv4": bytes(Ether(src=src_mac, dst=sw_mac, type=0x0800)) + b"\x45\x00\x00",
  "non_ip": bytes(Ether(src=src_mac, dst="01:80:c2:00:00:0e", type=0x88cc) / Raw(b"\x00" * 46)),
  "inc_bad_icrc": corrupt(roce(sw_mac, sw_ip, 0x1000)),
  "inc_unknown_qp": roce(sw_mac, sw_ip, 0x7777),
  "transit_bad_icrc": corrupt(roce(other_mac, other_ip, 0x55)),
}
for name, f in frames.items():
    for _ in range(5):
        sendp(Raw(f), iface=iface)
print("sent", " ".join(frames))
"""


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "faults") as lab:
        sw = lab.add_switch("sw")
        for _ in range(8):
            lab.add_rank(sw)
        g1 = lab.group(1, 4, [lab.rank_child(r) for r in lab.ranks[:4]])
        g2 = lab.group(2, 4, [lab.rank_child(r, first=4) for r in lab.ranks[4:]])
        lab.write_config(sw, [g1, g2])
        lab.start_incd(sw)

        # --- stuck group -----------------------------------------------------------------
        long_plan = ",".join(["allreduce:int32:sum:2000000"] * 4)
        s1 = lab.start_ranks(lab.ranks[:4], long_plan, group_ranks=4, first=0, seed=5,
                             timeout_ms=8000)
        time.sleep(1.5)
        victim = s1[1][1]
        victim.send_signal(signal.SIGKILL)
        print("KILLED rank 1 of group 1")
        s2 = lab.start_ranks(lab.ranks[4:], "allreduce:fp32:sum:100000,barrier,"
                             "broadcast:int32:root=2:5000,reduce:bf16:max:root=3:7000",
                             group_ranks=4, first=4, seed=6, timeout_ms=60000)
        ok2, _, texts2 = lab.wait_ranks(s2, 120)
        print(f"GROUP2 {'PASS' if ok2 else 'FAIL'} while group 1 is stuck")
        if not ok2:
            print("\n".join(texts2))
        time.sleep(2.5)  # > stall_after_ms (1000) + a telemetry period
        m = lab.metrics(sw)
        stalled1 = lab.metric(m, "incd_group_stalled", group="1")
        stalled2 = lab.metric(m, "incd_group_stalled", group="2")
        missing = [line for line in m.splitlines()
                   if line.startswith('incd_group_missing_contribution{group="1"')]
        print(f"METRICS stalled group1={stalled1} group2={stalled2} missing={missing}")
        stuck_ok = (stalled1 == 1 and stalled2 == 0 and len(missing) == 1
                    and 'who="rank 1"' in missing[0])
        print(f"STUCK_GROUP_VISIBLE {'PASS' if stuck_ok else 'FAIL'}")
        # The other ranks of group 1 give up (timeout, exit 3) with their stuck-state dump.
        _, _, texts1 = lab.wait_ranks(s1, 30)
        print("group 1 survivors:", " | ".join(t.splitlines()[0] for t in texts1))
        ok &= ok2 and stuck_ok
        if "stalled" not in lab.log(sw):
            print("FAIL: incd did not log the stall")
            ok = False

        # --- bad input -------------------------------------------------------------------
        r = lab.ranks[0]
        other = lab.ranks[2]
        before = lab.metrics(sw)
        out = subprocess.run(["ip", "netns", "exec", r.ns, "/usr/bin/python3", "-c", SCAPY_SEND, r.ifname,
                              "02:00:00:00:aa:01", sw.mac, "10.77.0.200", sw.ip, other.ip,
                              other.mac], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        print(out.stdout.strip()[-500:])
        time.sleep(0.5)
        after = lab.metrics(sw)

        def delta(name, **labels):
            return (lab.metric(after, name, **labels) or 0) - (lab.metric(before, name, **labels) or 0)

        checks = {
            "runt": delta("incd_switch_drops_total", reason="runt") == 5,
            "non_ip": delta("incd_switch_frames_total", disposition="non_ip") >= 5,
            "inc_bad_icrc": delta("incd_engine_drops_total", reason="parse") == 5,
            "inc_unknown_qp": delta("incd_engine_drops_total", reason="no_route") == 5,
            "transit_bad_icrc": delta("incd_switch_transit_roce_invalid_total", kind="bad_icrc") == 5,
        }
        for k, v in checks.items():
            print(f"BAD_INPUT {k} {'PASS' if v else 'FAIL'}")
        ok &= out.returncode == 0 and all(checks.values())
        ping = subprocess.run(["ip", "netns", "exec", lab.ranks[5].ns, "ping", "-c", "2", "-W",
                               "2", lab.ranks[6].kernel_ip], stdout=subprocess.PIPE, text=True)
        print(f"PING_AFTER {'PASS' if ping.returncode == 0 else 'FAIL'}")
        ok &= ping.returncode == 0
        # The switch's own INC address answers ping (Linux checks the reply's checksums).
        ping_sw = subprocess.run(["ip", "netns", "exec", lab.ranks[5].ns, "ping", "-c", "3", "-i",
                                  "0.2", "-s", "101", "-W", "2", sw.ip],
                                 stdout=subprocess.PIPE, text=True)
        print(f"PING_SWITCH {'PASS' if ping_sw.returncode == 0 else 'FAIL'} "
              f"{[l for l in ping_sw.stdout.splitlines() if 'packet loss' in l]}")
        ok &= ping_sw.returncode == 0
        alive = sw.proc.poll() is None
        rc = lab.stop_incd(sw)
        print(f"INCD alive={alive} exit={rc}")
        ok &= alive and rc == 0
    print(f"INCD_FAULTS {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
