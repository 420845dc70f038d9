"""epic_torch: EPIC's torch.distributed backend.

    import epic_torch                      # registers the backend "epic"
    torch.distributed.init_process_group("epic", ...)

Every process group of backend "epic" joins its own inc-manager group (INC_MANAGER and the
rank's endpoint come from the INC_* environment, docs/pytorch.md) and runs the collectives EPIC
aggregates on the switch; anything else runs on a Gloo group on the same store, logged once
per reason. counters() says what was offloaded and what fell back, and why; the same is printed
to stderr at exit (EPIC_TORCH_SUMMARY=0 turns that off). EPIC_TORCH_LOG=1 logs every decision,
EPIC_TORCH_STRICT=1 fails a collective instead of falling back.
"""
import atexit
import datetime
import os
import sys
import weakref

import torch.distributed as dist

from . import _C

__all__ = ["counters", "summary", "offloaded_calls", "fallback_calls", "groups", "BACKEND"]

BACKEND = "epic"
_stats = []  # every group's OffloadStats, kept after the group is gone
_live = weakref.WeakSet()  # groups to leave at exit
_created = 0  # epic groups this process created: the QPN offset (pg_config.h)


def _timeout_s(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _create(opts, pg_options):
    """torch.distributed's creator (extended API): one process group of this process."""
    global _created
    if pg_options is not None:
        raise ValueError("the epic backend takes no pg_options (it is configured by INC_* "
                         "variables, docs/pytorch.md)")
    store, rank, size = opts.store, opts.group_rank, opts.group_size
    timeout = opts.timeout
    # The fallback: a Gloo group of the same members, under its own prefix of the group's store.
    gloo = dist.ProcessGroupGloo(dist.PrefixStore("epic-gloo", store), rank, size, timeout)
    index = _created
    _created += 1
    pg = _C.create(store, rank, size, _timeout_s(timeout), gloo, str(opts.group_id), index)
    _stats.append(pg.stats)
    _live.add(pg)
    return pg


def counters():
    """What every epic process group of this process did:
    {"groups": [{"label", "state", "state_reason", "rows": [{"collective", "path", "reason",
    "calls", "bytes"}]}], "offloaded": calls, "fallback": calls, "failed": calls}."""
    out = {"groups": [], "offloaded": 0, "fallback": 0, "failed": 0}
    for s in _stats:
        rows = s.rows()
        out["groups"].append({"label": s.label, "state": s.state,
                              "state_reason": s.state_reason, "rows": rows})
        for r in rows:
            out[r["path"]] += r["calls"]
    return out


def offloaded_calls(collective=None):
    """Calls run on EPIC (of one collective, or all)."""
    return sum(r["calls"] for g in counters()["groups"] for r in g["rows"]
               if r["path"] == "offloaded" and collective in (None, r["collective"]))


def fallback_calls(collective=None):
    """Calls handed to Gloo (of one collective, or all)."""
    return sum(r["calls"] for g in counters()["groups"] for r in g["rows"]
               if r["path"] == "fallback" and collective in (None, r["collective"]))


def groups():
    """The live epic process groups of this process."""
    return list(_live)


def summary():
    """The counters as text: a line per group, then a line per collective and path."""
    lines = []
    for g in counters()["groups"]:
        head = f"epic_torch: {g['label']}: {g['state']}"
        if g["state_reason"]:
            head += f" ({g['state_reason']})"
        lines.append(head)
        order = sorted(g["rows"], key=lambda r: (r["path"] != "offloaded", r["path"],
                                                 r["collective"]))
        for r in order:
            why = f": {r['reason']}" if r["reason"] else ""
            lines.append(f"  {r['collective']:<22} {r['path']:<9} {r['calls']:>8} calls "
                         f"{r['bytes']:>12} bytes{why}")
    return "\n".join(lines)


def _at_exit():
    for pg in list(_live):
        try:
            pg.shutdown()  # leaves the manager group (LeaveGroup), so the switch memory frees
        except Exception as e:  # noqa: BLE001 -- exit must go on; say what happened
            print(f"epic_torch: shutdown of {pg.group_name} failed: {e}", file=sys.stderr)
    if _stats and os.environ.get("EPIC_TORCH_SUMMARY", "1") != "0":
        print(summary(), file=sys.stderr, flush=True)


dist.Backend.register_backend(BACKEND, _create, extended_api=True)
atexit.register(_at_exit)
