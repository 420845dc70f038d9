#!/usr/bin/python3
"""incd_rxe_forge.py - the forgeries of `incd_rxe.sh --forge` (issue 16) and their check.

The frames themselves are built and sent by scapy in tests/integration/forge_roce.py (valid
ICRC, not EPIC's encoder); this script only says what to forge, from the lab's addressing
(rxe_lab.sh: tap e<sfx>g<g>n0, guest MAC 52:54:00:<sfx>:<g>:00, IPv4 10.9.0.<g>; rank g-1 on
incd's virtual QPN SWITCH_QPN_BASE + g-1) and the QPNs the guests' kernels chose (qpn.p<k>.g<g>),
and checks incd's counters afterwards.

  incd_rxe_forge.py spec SHARE K WHO ROUNDS GAP_S TAP...
      prints forge_roce.py's SPEC_JSON for phase K; WHO is
        prelude  rank 0's exact first announcement (AllReduce int32 sum of 1 element, the
                 plan's first collective) and its data packet, with rank 0's MAC and IPv4, from
                 the forger's port, sent once before the ranks are released;
        third    from the forger's port (a fourth incd port, its own namespace): rank 0's
                 contribution, announcement (2^30 elements), ACK 5000 PSNs ahead and sequence
                 NAK with rank 0's MAC and IPv4; a contribution with the forger's own addresses;
                 a result "from the switch" (its INC MAC and IPv4) toward rank 1's QP;
        cable    on rank 0's own tap (injected on the host side of the tap, so incd reads it on
                 rank 0's port): a contribution with another MAC, with another IPv4, and with
                 rank 0's addresses but UDP source port 4791 (outside switch.udp_source_ports);
                 lossless phases only (incd's fault stage on rank 0's port would eat some).
  incd_rxe_forge.py check METRICS OUTDIR K ROUNDS LOSS
      reads what the forgers sent (OUTDIR/forge.p<K>.{prelude,third,cable}.txt, forge_roce.py's
      "SENT kind=count ..." lines; cable only when LOSS is 0) and incd's scrape METRICS;
      every forgery must be counted
      exactly once under its reason and on its ingress port, and the ranks' ports must show no
      binding drop (rdma_rxe's UDP source ports are within the range). Prints one line
      "forge: ok|WRONG ..." and exits 0 only when all match.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "netns"))
from forge_frames import (ACK, ACK_CREDITS, CONTROL_IMM, NAK_SEQ,  # noqa: E402
                          SEND_ONLY, SEND_ONLY_IMM, control_payload, frame)

FORGER_MAC, FORGER_IP = "02:00:00:00:0f:01", "10.9.0.200"
THIRD = {"contribution": "edge_port", "announcement": "edge_port", "ack": "edge_port",
         "nak": "edge_port", "own_addresses": "edge_port", "result": "spoofed_switch"}
CABLE = {"other_mac": "edge_mac", "other_ipv4": "edge_ipv4", "udp_port": "edge_udp_port"}
PRELUDE = {"announcement": "edge_port", "data": "edge_port"}


def params(share):
    p = {}
    with open(os.path.join(share, "params.sh")) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                key, _, v = line.strip().partition("=")
                p[key] = v.strip('"')
    return p


def spec(share, k, who, rounds, gap, taps):
    p = params(share)
    sfx = taps[0][1:3]
    mac = lambda g: f"52:54:00:{sfx}:{g:02x}:00"  # noqa: E731  rxe_lab.sh's addressing
    psn0 = int(p["INITIAL_PSN"], 0)
    sw_mac, sw_ip = p["SWITCH_MAC"], p["SWITCH_IP"]
    r1_qpn = int(open(os.path.join(share, f"qpn.p{k}.g2")).read().strip())
    edge = dict(dst_mac=sw_mac, dst_ip=sw_ip, dqpn=int(p["SWITCH_QPN_BASE"]))  # rank 0's edge
    spoof = dict(src_mac=mac(1), src_ip="10.9.0.1")
    if who == "prelude":
        rounds, frames = 1, [
            frame("announcement", opcode=SEND_ONLY_IMM, psn=psn0, imm=CONTROL_IMM,
                  payload_hex=control_payload(1, 0, 0, 0, 1), **spoof, **edge),
            frame("data", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=4, fill=0x7F, **spoof,
                  **edge)]
    elif who == "third":
        frames = [
            frame("contribution", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024, **spoof,
                  **edge),
            frame("announcement", opcode=SEND_ONLY_IMM, psn=psn0, imm=CONTROL_IMM,
                  payload_hex=control_payload(1, 0, 0, 0, 1 << 30), **spoof, **edge),
            frame("ack", opcode=ACK, psn=(psn0 + 5000) & 0xFFFFFF, aeth=ACK_CREDITS, **spoof,
                  **edge),
            frame("nak", opcode=ACK, psn=psn0, aeth=NAK_SEQ, **spoof, **edge),
            frame("own_addresses", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024,
                  src_mac=FORGER_MAC, src_ip=FORGER_IP, **edge),
            frame("result", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024, src_mac=sw_mac,
                  src_ip=sw_ip, dst_mac=mac(2), dst_ip="10.9.0.2", dqpn=r1_qpn)]
    elif who == "cable":
        frames = [
            frame("other_mac", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024,
                  src_mac="02:00:00:00:00:77", src_ip="10.9.0.1", **edge),
            frame("other_ipv4", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024,
                  src_mac=mac(1), src_ip="10.77.0.77", **edge),
            frame("udp_port", opcode=SEND_ONLY, psn=psn0 + 1, payload_len=1024, sport=4791,
                  **spoof, **edge)]
    else:
        raise SystemExit(f"incd_rxe_forge.py: unknown forger {who}")
    return json.dumps({"rounds": rounds, "gap_s": gap, "frames": frames})


def metric(text, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`; None when there is none."""
    total, found = 0, False
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] != name:
            continue
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += int(float(value))
            found = True
    return total if found else None


def sent(path):
    try:
        with open(path) as f:
            lines = [x for x in f.read().splitlines() if x.startswith("SENT ")]
    except OSError:
        return None
    if not lines:
        return None
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", lines[-1])}


def check(metrics_path, outdir, k, rounds, loss):
    problems, want = [], {r: 0 for r in ("edge_port", "edge_mac", "edge_ipv4", "edge_udp_port",
                                         "spoofed_switch")}
    port_want = {"forger": 0, "g1": 0}
    total = 0
    forgers = [("prelude", PRELUDE, 1, "forger"), ("third", THIRD, rounds, "forger")]
    if loss == 0:
        forgers.append(("cable", CABLE, rounds, "g1"))
    for who, kinds, per, port in forgers:
        s = sent(os.path.join(outdir, f"forge.p{k}.{who}.txt"))
        if s is None:
            problems.append(f"the {who} forger reported nothing")
            continue
        for kind, reason in kinds.items():
            n = s.get(kind, 0)
            if n != per:
                problems.append(f"{who} sent {kind}={n}, not {per}")
            want[reason] += n
            total += n
            if reason != "spoofed_switch":
                port_want[port] += n
    try:
        text = open(metrics_path).read()
    except OSError:
        text = ""
    if "incd_engine_drops_total" not in text:
        problems.append(f"no incd metrics in {metrics_path}")
    fields = []
    for reason, n in want.items():
        name = "incd_switch_drops_total" if reason == "spoofed_switch" else "incd_engine_drops_total"
        got = metric(text, name, reason=reason) or 0
        fields.append(f"{reason}={got}/{n}")
        if got != n:
            problems.append(f"{reason} counted {got}, expected {n}")
    ranks = int(params(outdir)["RANKS"])  # OUTDIR/params.sh, written by incd_rxe.sh
    for g in range(2, ranks + 1):
        port_want[f"g{g}"] = 0
    for port, n in port_want.items():
        got = metric(text, "incd_port_edge_binding_drops_total", port=port) or 0
        fields.append(f"port[{port}]={got}/{n}")
        if got != n:
            problems.append(f"port {port} counted {got} binding drops, expected {n}")
    verdict = "ok" if not problems else "WRONG"
    print(f"forge: {verdict} forged={total} (got/expected) {' '.join(fields)}" +
          (f" | {'; '.join(problems)}" if problems else ""))
    return 0 if not problems else 1


def main(argv):
    if len(argv) >= 8 and argv[1] == "spec":
        print(spec(argv[2], int(argv[3]), argv[4], int(argv[5]), float(argv[6]), argv[7:]))
        return 0
    if len(argv) == 7 and argv[1] == "check":
        return check(argv[2], argv[3], int(argv[4]), int(argv[5]), float(argv[6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
