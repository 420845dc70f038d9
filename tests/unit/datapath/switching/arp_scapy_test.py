#!/usr/bin/python3
"""Independent-oracle test of the ARP responder (datapath/switching/arp_responder.h).

scapy builds ARP requests (random requesters, tagged and untagged, for our
addresses and for others) and other ARP frames; `arp_reply_tool` runs them
through arp_reply(); scapy parses each reply and checks it answers the request.

Usage: /usr/bin/python3 arp_scapy_test.py PATH/TO/arp_reply_tool
"""
import random
import subprocess
import sys

import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, Dot1Q, Ether, raw  # noqa: E402

SELF = {"10.0.0.1": "02:00:00:00:00:01", "192.168.7.250": "02:aa:bb:cc:dd:ee"}
BCAST = "ff:ff:ff:ff:ff:ff"


def rand_mac(rng):
    return "02:" + ":".join("%02x" % rng.randrange(256) for _ in range(5))


def rand_ip(rng):
    return "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(2, 255))


def cases(rng):
    """(frame, expected) where expected is None (no reply) or (request, our ip)."""
    out = []
    for i in range(400):
        mac, ip = rand_mac(rng), rand_ip(rng)
        target = rng.choice(list(SELF))
        eth = Ether(src=mac, dst=rng.choice([BCAST, SELF[target]]))
        vlan = rng.randrange(4096) if i % 2 else None
        arp = ARP(op=1, hwsrc=mac, psrc=ip, pdst=target)
        pkt = eth / Dot1Q(vlan=vlan, prio=rng.randrange(8)) / arp if vlan is not None else eth / arp
        out.append((pkt, (pkt, target)))
        other = ARP(op=1, hwsrc=mac, psrc=ip, pdst=rand_ip(rng))
        out.append((Ether(src=mac, dst=BCAST) / other, None))
        reply = ARP(op=2, hwsrc=mac, psrc=ip, hwdst=SELF[target], pdst=target)
        out.append((Ether(src=mac, dst=SELF[target]) / reply, None))
        grat = ARP(op=1, hwsrc=mac, psrc=target, pdst=target)
        out.append((Ether(src=mac, dst=BCAST) / grat, None))
    return out


def main():
    tool = sys.argv[1]
    rng = random.Random(20240601)
    todo = cases(rng)
    args = [tool] + ["%s=%s" % kv for kv in SELF.items()]
    stdin = "".join(raw(pkt).hex() + "\n" for pkt, _ in todo)
    res = subprocess.run(args, input=stdin, capture_output=True, text=True, check=True)
    lines = res.stdout.split("\n")[:-1]
    assert len(lines) == len(todo), (len(lines), len(todo))
    failures = 0
    for (pkt, want), got in zip(todo, lines):
        try:
            if want is None:
                assert got == "", "unexpected reply %s" % got
                continue
            req, our_ip = want
            rep = Ether(bytes.fromhex(got))
            assert len(bytes.fromhex(got)) == 60, len(got) // 2
            a = rep[ARP]
            assert a.op == 2, a.op
            assert a.psrc == our_ip and a.hwsrc == SELF[our_ip], (a.psrc, a.hwsrc)
            assert a.pdst == req[ARP].psrc and a.hwdst == req[ARP].hwsrc, (a.pdst, a.hwdst)
            assert rep.dst == req[ARP].hwsrc and rep.src == SELF[our_ip], (rep.dst, rep.src)
            if Dot1Q in req:
                assert Dot1Q in rep and rep[Dot1Q].vlan == req[Dot1Q].vlan
                assert rep[Dot1Q].prio == req[Dot1Q].prio
            else:
                assert Dot1Q not in rep
        except AssertionError as e:
            failures += 1
            if failures <= 5:
                print("FAIL %s: %s" % (pkt.summary(), e))
    replies = sum(1 for _, w in todo if w is not None)
    print("%d frames, %d replies checked, %d failures" % (len(todo), replies, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
