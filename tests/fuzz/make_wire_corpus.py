#!/usr/bin/python3
"""Regenerate the seed corpus of wire_parser_fuzz: frames built by scapy (every
opcode, IPv4/IPv6, VLAN) plus frames from the Linux rxe capture.

    /usr/bin/python3 tests/fuzz/make_wire_corpus.py
"""
import hashlib
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
import scapy_roce_oracle as o  # noqa: E402

out = os.path.join(HERE, "corpus", "wire_parser")
os.makedirs(out, exist_ok=True)
rng = random.Random(1)
frames = []
for opcode in sorted(o.OPCODES):
    for _ in range(2):
        f = o.random_fields(rng)
        while f["opcode"] != opcode:
            f = o.random_fields(rng)
        if len(f["payload"]) > 256:  # keep seeds small; the fuzzer grows them
            f["payload"] = f["payload"][:256 - (256 % 4)]
            f["padcount"] = 0
        frames.append(o.scapy_frame(f))
pcap = os.path.join(HERE, "..", "fixtures", "rxe", "rxe_rc_ipv4.pcap")
if os.path.exists(pcap):
    from scapy.utils import rdpcap
    caps = [bytes(p) for p in rdpcap(pcap)]
    frames += [c for c in caps if len(c) <= 600][:20]
for fr in frames:
    name = hashlib.sha1(fr).hexdigest()[:16]
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(fr)
print("wrote %d seeds to %s" % (len(frames), out))
