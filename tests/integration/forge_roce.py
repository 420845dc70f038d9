#!/usr/bin/python3
"""forge_roce.py — sends forged RoCEv2 frames, built by scapy (valid ICRC), on one interface.

Run inside a lab namespace by tests/integration/incd_spoofing.py:
  forge_roce.py IFACE SPEC_JSON
SPEC_JSON: {"rounds": N, "gap_s": S, "frames": [{"kind": NAME, "eth_src", "eth_dst", "ip_src",
"ip_dst", "udp_sport", "opcode", "dqpn", "psn", "imm" (optional), "aeth" (optional syndrome),
"payload_len" and "fill" (optional: that many bytes of one value) or "payload_hex"}]}. Sends every frame once per round (rounds
<= 1000, gap_s <= 1: the loop is bounded in count and time), then prints one line
`SENT kind=count ...`. scapy is the independent builder: lengths, IPv4 checksum and the RoCEv2
ICRC are its own, not EPIC's.
"""
import json
import struct
import sys
import time

from scapy.all import IP, UDP, Ether, Raw, conf  # noqa: E402  (Debian python3-scapy)
from scapy.contrib.roce import AETH, BTH  # noqa: E402

conf.verb = 0


def build(f):
    bth = BTH(opcode=f["opcode"], dqpn=f["dqpn"], psn=f["psn"], ackreq=1, pkey=0xFFFF)
    pkt = (Ether(src=f["eth_src"], dst=f["eth_dst"]) / IP(src=f["ip_src"], dst=f["ip_dst"]) /
           UDP(sport=f["udp_sport"], dport=4791, chksum=0) / bth)
    if "aeth" in f:
        return pkt / AETH(syndrome=f["aeth"], msn=0)
    body = b""
    if "imm" in f:
        body += struct.pack(">I", f["imm"])
    payload = (bytes.fromhex(f["payload_hex"]) if "payload_hex" in f
               else bytes([f.get("fill", 0x7F)]) * f.get("payload_len", 0))
    n = len(payload)
    body += payload
    pad = (4 - n % 4) % 4
    bth.padcount = pad
    return pkt / Raw(body + b"\x00" * pad) if body or pad else pkt


def main():
    iface, spec = sys.argv[1], json.loads(sys.argv[2])
    rounds = min(int(spec["rounds"]), 1000)
    gap = min(float(spec.get("gap_s", 0.01)), 1.0)
    frames = [(f["kind"], bytes(build(f))) for f in spec["frames"]]
    sent = {k: 0 for k, _ in frames}
    sock = conf.L2socket(iface=iface)
    try:
        for _ in range(rounds):
            for kind, raw_frame in frames:
                sock.send(raw_frame)
                sent[kind] += 1
            time.sleep(gap)
    finally:
        sock.close()
    print("SENT " + " ".join(f"{k}={v}" for k, v in sent.items()), flush=True)


if __name__ == "__main__":
    main()
