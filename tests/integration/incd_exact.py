#!/usr/bin/python3
"""integration.incd_exact — exact float sums (KULISCH_FIXED) through incd with real ranks.

  ranks 0-1 behind the leaf incd, ranks 2-3 behind the spine; the leaf's uplink is a switch
  child of the spine, so the leaf sends exact partials (AUTO) up. DPDK 22.11's af_packet ports
  take frames of at most 1518 bytes, so the tree group is sized for fp8 E4M3 at pmtu 256 (its
  largest partial, fp8 E4M3 or fp16, fits 1500 bytes with headers: docs/arithmetic.md); fp32's
  exact partial needs jumbo frames, so fp32 and bf16 run on a second group at one switch (the
  spine's two ranks, pmtu 1024, dtype bf16, which also holds fp32 and fp8 E5M2).
Every inc-rank sends adversarial inputs (cancellation, 1 + tiny terms, subnormals, overflow,
NaN/inf/-0 mixes: host/collective/adversarial.h) and checks its own results; then this script
recomputes every sum from every rank's dumped inputs with tests/harness/exact_reference.py
(Python's Fraction, rounded once — none of EPIC's code) and compares every rank's result bit for
bit. AllReduce, Reduce and ReduceScatter, lossless and with 1 % loss on the uplink. Prints
"INCD_EXACT PASS|FAIL".
  incd_exact.py BUILD_DIR
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "deploy", "netns"))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import exact_reference  # noqa: E402
import incd_lab  # noqa: E402

RANKS = 4
TREE = {"pmtu": 256, "dtype": "fp8_e4m3",
        "plan": ("allreduce:fp16:sum:700,allreduce:fp8_e4m3:sum:1500,reduce_scatter:fp16:sum:300,"
                 "reduce:fp8_e4m3:sum:root=3:900,allreduce:fp16:max:300,barrier")}
ONE = {"pmtu": 1024, "dtype": "bf16",
       "plan": ("allreduce:fp32:sum:2000,allreduce:bf16:sum:3000,reduce_scatter:fp32:sum:700,"
                "allreduce:fp8_e5m2:sum:2500,reduce:fp8_e5m2:sum:root=1:900,barrier")}
WIDTH = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}


def check_dumps(paths, ranks):
    """Every sum of every rank against the exact reference; returns (ok, sums checked)."""
    dumps = []
    for p in paths:
        with open(p) as f:
            dumps.append({d["k"]: d for d in (json.loads(line) for line in f if line.strip())})
    ok, checked = True, 0
    for k in sorted(dumps[0]):
        d0 = dumps[0][k]
        kind, dtype, op = d0["type"], d0["dtype"], d0["op"]
        if op != "sum" or kind not in ("allreduce", "reduce", "reduce_scatter"):
            continue
        fmt, w = exact_reference.FORMATS[dtype], WIDTH[dtype]
        raws = [bytes.fromhex(dumps[r][k]["input"]) for r in range(ranks)]
        full = bytearray()
        for i in range(len(raws[0]) // w):
            bits = [int.from_bytes(x[i * w:(i + 1) * w], "little") for x in raws]
            full += exact_reference.element(fmt, bits).to_bytes(w, "little")
        for r in range(ranks):
            got = bytes.fromhex(dumps[r][k]["result"])
            if kind == "allreduce":
                want = bytes(full)
            elif kind == "reduce":
                want = bytes(full) if r == d0["root"] else b""
            else:
                chunk = len(full) // ranks
                want = bytes(full[r * chunk:(r + 1) * chunk])
            if got != want:
                at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                          min(len(got), len(want)))
                print(f"MISMATCH rank {r} collective {k} ({kind} {dtype}) at byte {at}: "
                      f"got {got[at:at + w].hex()} want {want[at:at + w].hex()}")
                ok = False
            checked += 1
    return ok, checked


def run(lab, name, ranks, first, spec, group_ranks):
    """One job on `ranks`; returns (ok, sums checked against the reference)."""
    dumps = [os.path.join(lab.tmp, f"{name}-rank{r.index}.dump") for r in ranks]
    started = []
    for r, dump in zip(ranks, dumps):
        started += lab.start_ranks([r], spec["plan"], group_ranks=group_ranks, first=first,
                                   seed=21, timeout_ms=120000, pmtu=spec["pmtu"],
                                   extra=("--accumulator", "kulisch_fixed", "--group-dtype",
                                          spec["dtype"], "--inputs", "adversarial",
                                          "--dump", dump))
    job_ok, _, texts = lab.wait_ranks(started, 180)
    if not job_ok:
        for t in texts:
            print(t)
        for s in lab.switches:
            print(f"--- incd {s.name} log:\n{lab.log(s)}")
    sums_ok, checked = check_dumps(dumps, group_ranks) if job_ok else (False, 0)
    return job_ok and sums_ok, checked


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "exact") as lab:
        leaf = lab.add_switch("leaf")
        spine = lab.add_switch("spine")
        lower = [lab.add_rank(leaf) for _ in range(2)]
        upper = [lab.add_rank(spine) for _ in range(2)]
        lab.link(leaf, spine)
        up_qpn, down_qpn = 0x2000, 0x1100
        tree = {"accumulator": "kulisch_fixed", "dtype": TREE["dtype"], "pmtu": TREE["pmtu"]}
        leaf_group = lab.group(1, RANKS, [lab.rank_child(r) for r in lower], parent={
            "port": "up",
            "remote": lab.endpoint(spine.mac, spine.ip, down_qpn),
            "local": {"ipv4": leaf.ip, "qpn": up_qpn}}, **tree)
        spine_children = [{"port": leaf.name, "rank_range": {"first": 0, "count": 2},
                           "remote": lab.endpoint(leaf.mac, leaf.ip, up_qpn),
                           "local": {"ipv4": spine.ip, "qpn": down_qpn}}]
        spine_children += [lab.rank_child(r) for r in upper]
        spine_group = lab.group(1, RANKS, spine_children, **tree)
        for name, lossy in (("lossless", False), ("loss1pct", True)):
            leaf_faults = [{"port": "up", "direction": d, "drop": 0.01, "seed": 3 + i}
                           for i, d in enumerate(("rx", "tx"))] if lossy else []
            lab.write_config(leaf, [leaf_group], faults=leaf_faults)
            lab.write_config(spine, [spine_group])
            lab.start_incd(spine)
            lab.start_incd(leaf)
            job_ok, checked = run(lab, f"tree-{name}", lab.ranks, 0, TREE, RANKS)
            up = lab.metric(lab.metrics(leaf), "incd_engine_events_total",
                            event="partials_sent_up") or 0
            print(f"JOB tree-{name} {'PASS' if job_ok else 'FAIL'} "
                  f"python_reference_results={checked} leaf_partials_sent_up={up:.0f}")
            ok &= job_ok and checked > 0 and up > 0
            ok &= lab.stop_incd(leaf) == 0
            ok &= lab.stop_incd(spine) == 0
        # fp32 and bf16: one switch, the spine's two ranks as a group of their own.
        one = lab.group(2, 2, [lab.rank_child(r, first=upper[0].index) for r in upper],
                        accumulator="kulisch_fixed", dtype=ONE["dtype"], pmtu=ONE["pmtu"])
        lab.write_config(spine, [one])
        lab.start_incd(spine)
        job_ok, checked = run(lab, "one-switch", upper, upper[0].index, ONE, 2)
        print(f"JOB one-switch {'PASS' if job_ok else 'FAIL'} python_reference_results={checked}")
        ok &= job_ok and checked > 0
        ok &= lab.stop_incd(spine) == 0
    print(f"INCD_EXACT {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
