#!/usr/bin/python3
"""integration.incd_two_level — a two-level IncTree: a leaf incd and a spine incd.

  ranks 0-3 behind the leaf (namespace "leaf"), ranks 4-7 behind the spine ("spine");
  the leaf's uplink is a switch child of the spine. The leaf aggregates its four ranks and
  sends one partial up; the spine aggregates that with its own four ranks and sends results
  down (to its ranks and to the leaf, which replicates them to its ranks).
All six primitives, int32/fp32/bf16, no loss then 1 % loss injected on the leaf's uplink
(both directions). Each rank verifies every result bit for bit. Prints
"INCD_TWO_LEVEL PASS|FAIL".
  incd_two_level.py BUILD_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "netns"))
import incd_lab  # noqa: E402

RANKS = 8


def plan(max_elems):
    items = []
    for dtype in ("int32", "fp32", "bf16"):
        items += [f"allreduce:{dtype}:sum:{max_elems}", f"allreduce:{dtype}:min:1",
                  f"reduce:{dtype}:max:root=6:2000", f"reduce:{dtype}:sum:root=1:2000",
                  f"broadcast:{dtype}:root=2:2000", f"broadcast:{dtype}:root=7:700",
                  f"reduce_scatter:{dtype}:sum:300", f"allgather:{dtype}:300"]
    items.append("barrier")
    return ",".join(items)


def main():
    build = sys.argv[1]
    incd_lab.install_signal_exit()
    ok = True
    with incd_lab.Lab(build, "twolevel") as lab:
        leaf = lab.add_switch("leaf")
        spine = lab.add_switch("spine")
        lower = [lab.add_rank(leaf) for _ in range(4)]
        upper = [lab.add_rank(spine) for _ in range(4)]
        lab.link(leaf, spine)
        up_qpn, down_qpn = 0x2000, 0x1100
        leaf_group = lab.group(1, RANKS, [lab.rank_child(r) for r in lower], parent={
            "port": "up",
            "remote": lab.endpoint(spine.mac, spine.ip, down_qpn),
            "local": {"ipv4": leaf.ip, "qpn": up_qpn}})
        spine_children = [{"port": leaf.name, "rank_range": {"first": 0, "count": 4},
                           "remote": lab.endpoint(leaf.mac, leaf.ip, up_qpn),
                           "local": {"ipv4": spine.ip, "qpn": down_qpn}}]
        spine_children += [lab.rank_child(r) for r in upper]
        spine_group = lab.group(1, RANKS, spine_children)
        for name, faults in (("lossless", []), ("loss1pct", "uplink")):
            if faults == "uplink":
                leaf_faults = [{"port": "up", "direction": d, "drop": 0.01, "seed": 3 + i}
                               for i, d in enumerate(("rx", "tx"))]
                spine_faults = [{"port": leaf.name, "direction": "rx", "drop": 0.01, "seed": 9}]
            else:
                leaf_faults = spine_faults = []
            lab.write_config(leaf, [leaf_group], faults=leaf_faults)
            lab.write_config(spine, [spine_group], faults=spine_faults)
            lab.start_incd(spine)
            lab.start_incd(leaf)
            job_ok = lab.run_job(name, plan(1 << 18 if name == "lossless" else 1 << 16),
                                 seed=11 if name == "lossless" else 12, timeout=240)
            ml, ms = lab.metrics(leaf), lab.metrics(spine)
            up = lab.metric(ml, "incd_engine_events_total", event="partials_sent_up")
            down = lab.metric(ml, "incd_engine_frames_total", disposition="downward_accepted")
            agg = lab.metric(ms, "incd_group_aggregations_completed_total", group="1")
            injected = sum(lab.metric(x, "incd_port_faults_injected_total", fault="dropped") or 0
                           for x in (ml, ms))
            print(f"METRICS leaf partials_sent_up={up:.0f} leaf downward_accepted={down:.0f} "
                  f"spine aggregations={agg:.0f} injected_drops={injected:.0f}")
            ok &= job_ok and (up or 0) > 0 and (down or 0) > 0 and (agg or 0) > 0
            ok &= (injected > 0) == (name != "lossless")
            ok &= lab.stop_incd(leaf) == 0
            ok &= lab.stop_incd(spine) == 0
    print(f"INCD_TWO_LEVEL {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
