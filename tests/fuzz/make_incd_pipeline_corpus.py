#!/usr/bin/python3
"""Regenerate the seed corpus of incd_pipeline_fuzz: scripted loops of the two
workers in the fuzzer's record format (see the comment at the top of
incd_pipeline_fuzz.cc) -- whole collectives on both groups (control messages,
data, rank ACKs, frontiers, the parent's results), ARP, learning and aging,
transit RoCEv2, under each fault profile, and a few mutated frames.

    /usr/bin/python3 tests/fuzz/make_incd_pipeline_corpus.py
"""
import hashlib
import os
import random
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "incd_pipeline")

# Template endpoints (t bits 0-2) and kinds (t bits 3-4).
RANK0, RANK1, RANK2, G2_RANK, G2_SWITCH_CHILD, G2_PARENT, NO_EDGE, TRANSIT = range(8)
CONTROL, DATA, ACK, OTHER = range(4)
# Data opcodes (variant bits 0-2) and payload sizes (variant bits 3-5).
FIRST, MIDDLE, LAST, ONLY = 0, 1, 2, 3
SIZE_PMTU, SIZE_144, SIZE_128, SIZE_88 = 0, 1, 2, 3
# Descriptors (variant bits 0-2 of a control message).
ALLREDUCE_2, ALLREDUCE_1, BARRIER, BROADCAST, REDUCE, REDUCE_SCATTER, ALLGATHER, ALLREDUCE_3 = range(8)
# Port of each endpoint's link at the switch.
PORT = {RANK0: 0, RANK1: 1, RANK2: 2, G2_RANK: 1, G2_SWITCH_CHILD: 2, G2_PARENT: 3,
        NO_EDGE: 0, TRANSIT: 0}


class Seed:
    def __init__(self, flags=0, psn=0x20, faults=0, window=1, seed=1):
        self.b = bytearray([flags, psn, faults, window]) + seed.to_bytes(4, "big")

    def rec(self, kind, port, worker, *args):
        self.b += bytes([kind << 4 | worker << 3 | port]) + bytes(args)
        return self

    def frame(self, ep, kind, delta, variant=0, worker=0, mutation=0, edits=(), port=None, cut=0):
        t = kind << 3 | ep
        port = PORT[ep] if port is None else port
        args = [t, delta & 0xFF, variant, mutation]
        for off, val in edits:
            args += [off, val]
        if mutation & 0x20:
            args.append(cut)
        return self.rec(2, port, worker, *args)

    def arp(self, port, sel, worker=0):
        return self.rec(10, port, worker, sel)

    def l2(self, port, sel, hosts, worker=0):
        return self.rec(12, port, worker, sel, hosts)

    def raw(self, port, data, worker=0):
        return self.rec(0, port, worker, len(data) >> 8, len(data) & 0xFF, *data)

    def loop(self, step=1):
        return self.rec(14, 0, 0, step)


def data_packets(desc):
    """(opcode selector, size selector) of each data packet a rank sends, group 1."""
    return {
        ALLREDUCE_2: [(FIRST, SIZE_PMTU), (LAST, SIZE_PMTU)],
        ALLREDUCE_1: [(ONLY, SIZE_PMTU)],
        BARRIER: [],
        REDUCE: [(ONLY, SIZE_PMTU)],
        REDUCE_SCATTER: [(ONLY, SIZE_PMTU)] * 3,
        ALLREDUCE_3: [(FIRST, SIZE_PMTU), (MIDDLE, SIZE_PMTU), (LAST, SIZE_88)],
    }[desc]


def group1_collective(s, desc, base=0, ranks=(RANK0, RANK1, RANK2), worker=0, acks=True):
    """One collective on group 1: control messages, data, then every rank ACKs its results."""
    for r in ranks:
        s.frame(r, CONTROL, base, desc, worker=worker)
    s.loop()
    pkts = data_packets(desc) if desc in (ALLREDUCE_2, ALLREDUCE_1, BARRIER, REDUCE,
                                          REDUCE_SCATTER, ALLREDUCE_3) else []
    for k, (op, size) in enumerate(pkts):
        for r in ranks:
            s.frame(r, DATA, base + 1 + k, op | size << 3 | 0x80 * (k == len(pkts) - 1),
                    worker=worker)
        s.loop()
    if acks:
        for r in ranks:
            s.frame(r, ACK, base + len(pkts), 0, worker=worker)
        s.loop()
    return base + 1 + len(pkts)


def group2_allreduce(s, worker=0):
    """AllReduce of one packet on group 2: children up, parent's result down, frontiers."""
    s.frame(G2_RANK, CONTROL, 0, ALLREDUCE_1, worker=worker)
    s.frame(G2_SWITCH_CHILD, CONTROL, 0, ALLREDUCE_1, worker=worker)
    s.loop()
    s.frame(G2_PARENT, CONTROL, 0, ALLREDUCE_1, worker=worker)  # the result, downward
    s.loop()
    s.frame(G2_RANK, DATA, 1, ONLY, worker=worker)
    s.frame(G2_SWITCH_CHILD, DATA, 1, ONLY, worker=worker)
    s.loop()
    s.frame(G2_PARENT, DATA, 1, ONLY, worker=worker)
    s.loop()
    s.frame(G2_RANK, ACK, 1, 0, worker=worker)
    s.frame(G2_SWITCH_CHILD, ACK, 1, 1, worker=worker)  # frontier (syndrome 0x1F)
    s.loop()
    s.frame(G2_PARENT, ACK, 1, 1, worker=worker)  # global frontier
    s.loop()
    s.frame(G2_SWITCH_CHILD, ACK, 1, 1, worker=worker)  # a repeated report
    s.loop()


seeds = []

# Whole collectives on group 1, each descriptor, under each fault profile and window.
for desc in (ALLREDUCE_2, ALLREDUCE_1, BARRIER, REDUCE, REDUCE_SCATTER, ALLREDUCE_3):
    for faults, window in ((0x00, 1), (0x55, 0), (0xAA, 2), (0xFF, 3)):
        if faults and desc not in (ALLREDUCE_2, ALLREDUCE_3):
            continue
        s = Seed(faults=faults, window=window, psn=0x38)  # two PSNs before the wrap
        group1_collective(s, desc)
        seeds.append(s)

# Mode-III (header flag 0x20): whole collectives on group 1 and group 2's AllReduce, lossless
# and under faults, with time steps that let the hops' timers fire.
for desc, faults in ((ALLREDUCE_2, 0x00), (REDUCE, 0x00), (ALLREDUCE_3, 0xAA)):
    s = Seed(flags=0x20, faults=faults, window=1, psn=0x38)
    group1_collective(s, desc)
    s.loop(0x81)
    seeds.append(s)
for flags, worker in ((0x20, 0), (0x22, 1)):
    s = Seed(flags=flags)
    group2_allreduce(s, worker)
    s.loop(0x81)
    seeds.append(s)

# Two collectives back to back, then retransmissions (duplicates and done PSNs).
s = Seed(window=0)
nxt = group1_collective(s, ALLREDUCE_2)
nxt = group1_collective(s, ALLREDUCE_1, base=nxt)
s.frame(RANK0, DATA, nxt - 1, ONLY)
s.frame(RANK1, DATA, 1, FIRST)
s.loop()
seeds.append(s)

# The same, received by worker 1 (every group-1 frame handed to worker 0), fault stage deferrals.
s = Seed(flags=0x04 | 0x08, faults=0xE4, seed=7)
group1_collective(s, ALLREDUCE_2, worker=1)
seeds.append(s)

# Group 2 at worker 0 and at worker 1, frames received by either worker.
for flags, worker in ((0x00, 0), (0x02, 0), (0x02, 1), (0x03, 1)):
    s = Seed(flags=flags)
    group2_allreduce(s, worker)
    seeds.append(s)

# Both groups interleaved, with transit RoCEv2 and frames to no edge.
s = Seed(flags=0x02, faults=0x1B, seed=99)
for r in (RANK0, RANK1, RANK2):
    s.frame(r, CONTROL, 0, ALLREDUCE_2)
    s.frame(TRANSIT, DATA, r, ONLY | SIZE_128 << 3)
s.frame(G2_RANK, CONTROL, 0, ALLREDUCE_1, worker=1)
s.frame(NO_EDGE, DATA, 0, ONLY)
s.loop()
for r in (RANK0, RANK1, RANK2):
    s.frame(r, DATA, 1, FIRST)
s.frame(G2_SWITCH_CHILD, CONTROL, 0, ALLREDUCE_1)
s.loop(0x81)
for r in (RANK0, RANK1, RANK2):
    s.frame(r, DATA, 2, LAST | 0x80)
s.loop()
seeds.append(s)

# ARP: for both INC addresses, tagged, unpadded, a probe, a reply, for a host.
s = Seed()
for sel in (0x00, 0x05, 0x40, 0x10, 0x20, 0x80, 0x08, 0x4C):
    s.arp(sel & 3, sel)
s.loop()
seeds.append(s)

# Learning, forwarding, hairpin, aging (2 ms) and relearning; every plain L2 frame kind.
s = Seed()
s.l2(0, 0, 0x04)  # host 0 -> host 1: flood, learns host 0 on port 0
s.l2(1, 0, 0x01)  # host 1 -> host 0: forward to 0
s.l2(0, 0, 0x04)  # forward to 1
s.l2(0, 0, 0x00)  # host 0 -> host 0 on port 0: hairpin
s.loop(0x95)  # 2.1 ms: everything aged
s.l2(0, 0, 0x04)
s.l2(3, 1, 0x14)
s.l2(2, 2, 0x00)
s.l2(1, 3, 0x36)
s.l2(0, 4, 0x00)
s.l2(0, 5, 0x00)
s.l2(0, 6, 0x00)
s.l2(0, 6, 0x10)  # one byte longer than the port takes
s.l2(3, 6, 0x00)  # port 3 is small in some configurations
s.l2(1, 7, 0x00)
s.l2(4, 0, 0x04)  # a port the pipeline configuration lacks
s.loop()
seeds.append(s)
s2 = Seed(flags=0x11)
s2.b += s.b[8:]
seeds.append(s2)

# Mutated frames: header edits with and without re-derived checksums, bad ICRC, cut frames.
rng = random.Random(5)
for k in range(8):
    s = Seed(flags=k & 1, faults=rng.randrange(256), seed=k)
    for r in (RANK0, RANK1, RANK2):
        s.frame(r, CONTROL, 0, ALLREDUCE_2)
    s.loop()
    for r in (RANK0, RANK1, RANK2):
        edits = [(rng.randrange(14, 80), rng.randrange(256)) for _ in range(1 + k % 3)]
        mutation = len(edits) | (0x08 if k % 2 == 0 else 0) | (0x10 if k == 3 else 0)
        s.frame(r, DATA, 1, FIRST, mutation=mutation, edits=edits)
        s.frame(TRANSIT, rng.randrange(4), rng.randrange(8), rng.randrange(256),
                mutation=0x21 if k % 4 == 1 else 0x11, edits=[(rng.randrange(64), 0)], cut=1)
    s.loop()
    seeds.append(s)

# Edge binding (issue 16): every template to its edge from the wrong port (a third host that
# knows the switch QPNs), then a whole collective with the narrow UDP source range (header flag
# 0x40: templates with UDP source ports 0xC004.. are refused).
s = Seed()
for ep in range(8):
    s.frame(ep, CONTROL, 0, ALLREDUCE_1, port=(PORT[ep] + 1) % 4)
    s.frame(ep, ACK, 0, 0, port=(PORT[ep] + 2) % 4)
s.loop()
group1_collective(s, ALLREDUCE_1)
seeds.append(s)
for flags in (0x40, 0x60):
    s = Seed(flags=flags, window=1, psn=0x38)
    group1_collective(s, ALLREDUCE_2)
    group2_allreduce(s)
    s.loop(0x81)
    seeds.append(s)

# Exact sums (window byte bit 2: both groups KULISCH_FIXED fp32): group 1's fp32 AllReduce is
# deposited exactly; group 2's switch child sends plain data, which is no partial (refused).
for flags in (0x00, 0x20):
    s = Seed(flags=flags, window=1 | 4, psn=0x38)
    group1_collective(s, ALLREDUCE_1)
    group2_allreduce(s)
    s.loop(0x81)
    seeds.append(s)

# A raw frame, and unsupported opcodes to every edge.
s = Seed()
s.raw(0, bytes(range(64)))
for ep in range(8):
    s.frame(ep, OTHER, 0, rng.randrange(8))
s.loop()
seeds.append(s)

if os.path.isdir(OUT):
    shutil.rmtree(OUT)
os.makedirs(OUT)
for s in seeds:
    data = bytes(s.b)
    with open(os.path.join(OUT, hashlib.sha1(data).hexdigest()[:16]), "wb") as fh:
        fh.write(data)
print("wrote %d seeds to %s" % (len(seeds), OUT))
