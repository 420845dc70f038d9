#!/usr/bin/python3
"""integration.incd_spoofing — forged RoCEv2 frames against a live group (issue 16).

Four rank namespaces run a group behind one incd (Mode-II, then Mode-III) while forgers built
by scapy (valid ICRC, tests/integration/forge_roce.py) send, with the switch QPNs known:
  from a fifth namespace on its own port ("the third host"):
    rank 0's contribution, announcement (a collective of 2^30 elements), ACK (far ahead) and
    sequence NAK, with rank 0's MAC and IPv4; a contribution with its own addresses; a result
    "from the switch" (its INC MAC and IPv4) toward rank 1's QP;
  from rank 0's own namespace (its cable, another process):
    a contribution with another MAC, with rank 0's MAC and another IPv4, and with rank 0's
    addresses but UDP source port 4791 (outside incd's switch.udp_source_ports 49152-65535).
Before the ranks start, the third host also sends, as rank 0, the first collective's exact
announcement and its first two data packets: without the edge binding the switch takes them
for rank 0's and every rank's first AllReduce comes out wrong (checked by taking the check
out, docs/security.md). Every rank verifies every result bit for bit (inc-rank), nothing may hang,
and incd must have
counted each forgery exactly once under its reason (incd_engine_drops_total edge_port,
edge_mac, edge_ipv4, edge_udp_port; incd_switch_drops_total spoofed_switch) and on its port
(incd_port_edge_binding_drops_total). Prints "INCD_SPOOFING PASS|FAIL".
  incd_spoofing.py BUILD_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402
from forge_frames import (ACK, ACK_CREDITS, CONTROL_IMM, NAK_SEQ, SEND_FIRST,  # noqa: E402
                          SEND_MIDDLE, SEND_ONLY, SEND_ONLY_IMM, control_payload, frame)

RANKS = 4
ROUNDS = 40
PSN0 = 0x100
PLAN = ("allreduce:int32:sum:200000,allreduce:fp32:sum:3000,broadcast:int32:root=1:3000,"
        "reduce:int32:sum:root=2:3000,allgather:int32:700,reduce_scatter:int32:sum:700,barrier")
FORGER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forge_roce.py")
FIRST_COUNT = 200000  # PLAN's first collective: AllReduce int32 sum of 200000 elements


def forgeries(sw, r0, r1, third):
    """(namespace, interface, frames, {reason: expected count per round})."""
    to_r0_edge = dict(dst_mac=sw.mac, dst_ip=sw.ip, dqpn=r0.switch_qpn)
    spoof = dict(src_mac=r0.mac, src_ip=r0.ip)
    third_frames = [
        frame("contribution", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024, **spoof,
              **to_r0_edge),
        frame("announcement", opcode=SEND_ONLY_IMM, psn=PSN0, imm=CONTROL_IMM, payload_len=16,
              fill=0x40, **spoof, **to_r0_edge),
        frame("ack", opcode=ACK, psn=(PSN0 + 5000) & 0xFFFFFF, aeth=ACK_CREDITS, **spoof,
              **to_r0_edge),
        frame("nak", opcode=ACK, psn=PSN0, aeth=NAK_SEQ, **spoof, **to_r0_edge),
        frame("own_addresses", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024,
              src_mac=third.mac, src_ip=third.ip, **to_r0_edge),
        frame("result", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024, src_mac=sw.mac,
              src_ip=sw.ip, dst_mac=r1.mac, dst_ip=r1.ip, dqpn=r1.qpn),
    ]
    cable_frames = [
        frame("other_mac", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024,
              src_mac="02:00:00:00:00:77", src_ip=r0.ip, **to_r0_edge),
        frame("other_ipv4", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024, src_mac=r0.mac,
              src_ip="10.77.0.77", **to_r0_edge),
        frame("udp_port", opcode=SEND_ONLY, psn=PSN0 + 1, payload_len=1024, sport=4791,
              **spoof, **to_r0_edge),
    ]
    return [(third.ns, third.ifname, third_frames, {"edge_port": 5, "spoofed_switch": 1}),
            (r0.ns, r0.ifname, cable_frames, {"edge_mac": 1, "edge_ipv4": 1, "edge_udp_port": 1})]


def prelude(sw, r0):
    """The first collective's announcement and first two data packets, exactly as rank 0 would
    send them (AllReduce int32 sum, pmtu 1024), with rank 0's addresses."""
    edge = dict(src_mac=r0.mac, src_ip=r0.ip, dst_mac=sw.mac, dst_ip=sw.ip, dqpn=r0.switch_qpn)
    return [
        frame("announcement", opcode=SEND_ONLY_IMM, psn=PSN0, imm=CONTROL_IMM,
              payload_hex=control_payload(1, 0, 0, 0, FIRST_COUNT), **edge),
        frame("first", opcode=SEND_FIRST, psn=PSN0 + 1, payload_len=1024, fill=0x7F, **edge),
        frame("middle", opcode=SEND_MIDDLE, psn=PSN0 + 2, payload_len=1024, fill=0x7F, **edge),
    ]


def send(lab, ns, ifname, frames, rounds, gap_s):
    spec = json.dumps({"rounds": rounds, "gap_s": gap_s, "frames": frames})
    p = subprocess.Popen(["ip", "netns", "exec", ns, "/usr/bin/python3", FORGER, ifname, spec],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lab.procs.append(p)
    return p


def run_mode(lab, sw, mode, seed):
    members, third = lab.ranks[:RANKS], lab.ranks[RANKS]
    children = [lab.rank_child(r) for r in members]
    group = lab.group(1, RANKS, children)
    if mode == 3:
        group.update({"mode": 3, "hop_timeout_us": 2000})
    lab.write_config(sw, [group], extra=None)
    with open(sw.config_path) as f:
        cfg = json.load(f)
    cfg["switch"]["udp_source_ports"] = "49152-65535"
    with open(sw.config_path, "w") as f:
        json.dump(cfg, f, indent=1)
    lab.start_incd(sw)

    first = send(lab, third.ns, third.ifname, prelude(sw, members[0]), 1, 0)
    out = first.communicate(timeout=60)[0]
    print(f"MODE{mode} prelude: {out.strip()[-300:]}")
    sent_ok = first.returncode == 0 and "SENT" in out
    started = lab.start_ranks(members, PLAN, seed=seed, reps=2, timeout_ms=120000)
    plan = forgeries(sw, members[0], members[1], third)
    forgers = [send(lab, ns, ifname, frames, ROUNDS, 0.05) for ns, ifname, frames, _ in plan]
    for p in forgers:
        out = p.communicate(timeout=120)[0]
        print(f"MODE{mode} forger: {out.strip()[-300:]}")
        sent_ok &= p.returncode == 0 and "SENT" in out
    ok, results, texts = lab.wait_ranks(started, 180)
    done = sum(1 for lines in results for x in lines if x.get("ok") is True and "k" in x)
    print(f"MODE{mode} JOB {'PASS' if ok else 'FAIL'} collectives_verified={done}")
    if not ok:
        for t in texts:
            print(t)
        print(lab.log(sw))

    m = lab.metrics(sw)
    expected = {"edge_port": 3}  # the prelude
    for _, _, _, per_round in plan:
        for reason, n in per_round.items():
            expected[reason] = expected.get(reason, 0) + n * ROUNDS
    counts_ok = True
    for reason, want in sorted(expected.items()):
        if reason == "spoofed_switch":
            got = lab.metric(m, "incd_switch_drops_total", reason=reason)
        else:
            got = lab.metric(m, "incd_engine_drops_total", reason=reason)
        good = (got or 0) == want
        counts_ok &= good
        print(f"MODE{mode} DROPS {reason} want={want} got={got} {'ok' if good else 'WRONG'}")
    third_port = lab.metric(m, "incd_port_edge_binding_drops_total", port=third.port_name)
    cable_port = lab.metric(m, "incd_port_edge_binding_drops_total", port=members[0].port_name)
    ports_ok = third_port == 5 * ROUNDS + 3 and cable_port == 3 * ROUNDS
    print(f"MODE{mode} PORTS {third.port_name}={third_port} (want {5 * ROUNDS + 3}) "
          f"{members[0].port_name}={cable_port} (want {3 * ROUNDS}) {'ok' if ports_ok else 'WRONG'}")
    rc = lab.stop_incd(sw)
    print(f"MODE{mode} incd exit={rc}")
    return sent_ok and ok and counts_ok and ports_ok and rc == 0


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "spoof") as lab:
        sw = lab.add_switch("sw")
        for _ in range(RANKS + 1):  # the last one is the third host: on the switch, no member
            lab.add_rank(sw)
        ok &= run_mode(lab, sw, 2, seed=201)
        ok &= run_mode(lab, sw, 3, seed=202)
    print(f"INCD_SPOOFING {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
