#!/usr/bin/python3
"""Regenerate the seed corpus of rc_qp_fuzz: sequences of request and ACK
frames (built by scapy) aimed at QP 0x12, in the fuzzer's [len16, bytes] format.

    /usr/bin/python3 tests/fuzz/make_rc_qp_corpus.py
"""
import hashlib
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
import scapy_roce_oracle as o  # noqa: E402

out = os.path.join(HERE, "corpus", "rc_qp")
os.makedirs(out, exist_ok=True)
rng = random.Random(7)
n = 0
for case in range(40):
    header = bytes([case % 16, (case * 3) % 16, case % 5, 1 + case % 32])
    body = b""
    psn = 0xFFFFF0 + (case * 3) % 16
    for k in range(1 + case % 6):
        f = o.random_fields(rng)
        f["dqpn"] = 0x12
        f["ipv6"] = False
        f.pop("vlan_tci", None)
        f["ip_src"], f["ip_dst"] = "10.0.0.17", "10.0.0.18"
        f["tver"] = 0
        if rng.random() < 0.7:
            f["opcode"] = rng.choice([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0A, 0x0B, 0x11])
        ext, has_payload, pos = o.OPCODES[f["opcode"]]
        for name, fmt in ext:
            if name not in f:
                f[name] = 0 if fmt != "16" else bytes(16)
        if "reth_rkey" in f:
            f["reth_rkey"], f["reth_va"] = 0x77, 0x1000
            f["reth_dma_len"] = len(f["payload"])
        size = rng.choice([0, 10, 256, 1024])
        f["payload"] = bytes(size) if has_payload else b""
        f["padcount"] = (4 - size % 4) % 4 if has_payload else 0
        f["psn"] = (psn + k) & 0xFFFFFF
        fr = o.scapy_frame(f)
        body += struct.pack(">H", len(fr)) + fr
    data = header + body
    with open(os.path.join(out, hashlib.sha1(data).hexdigest()[:16]), "wb") as fh:
        fh.write(data)
    n += 1
print("wrote %d seeds to %s" % (n, out))
