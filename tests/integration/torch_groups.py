#!/usr/bin/python3
"""integration.torch_groups — many communicators: every process group its own manager group.

A 4-rank job with backend "epic" opens the world group and two 2-rank subgroups
(new_group([0, 1]), new_group([2, 3])): three manager groups, each with its own QP on every
member (INC_QPN + 4 * index), admitted by the manager's quota and memory, with no lock between
them. The switch (incd) is given memory for exactly three such groups. Each rank then runs 60
rounds of an asynchronous all_reduce on the world group and one on its subgroup at the same time
(each group's worker thread drives its own QP), checking every result; the manager lists the
three groups installed while they run. Then a fourth group (new_group of all ranks) finds no
INC memory: the manager refuses it (RESOURCE_EXHAUSTED), every member says so once and runs its
collectives on Gloo — still right, counted as fallbacks with that reason; a fifth one, created
with EPIC_TORCH_STRICT=1, fails on every rank instead.
Prints "TORCH_GROUPS PASS|FAIL".
  torch_groups.py BUILD_DIR
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_lab  # noqa: E402

RANKS = 4
ROUNDS = 60


def worker():
    import datetime

    import torch
    import torch.distributed as dist

    import epic_torch

    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("epic", init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=n, timeout=datetime.timedelta(seconds=120))
    pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    mine = pairs[rank // 2]
    failures = []
    names = [g.group_name for g in (dist.distributed_c10d._get_default_group(), mine)]
    for i in range(ROUNDS):
        a = torch.full((4096,), float(rank + i))
        b = torch.full((1024,), rank * 10 + i, dtype=torch.int32)
        wa = dist.all_reduce(a, async_op=True)
        wb = dist.all_reduce(b, group=mine, async_op=True)
        wa.wait()
        wb.wait()
        want_a = float(sum(range(n)) + n * i)
        pair = [rank - rank % 2, rank - rank % 2 + 1]
        want_b = sum(q * 10 + i for q in pair)
        if not torch.equal(a, torch.full_like(a, want_a)):
            failures.append(f"world round {i}: {a[:2].tolist()} != {want_a}")
        if not torch.equal(b, torch.full_like(b, want_b)):
            failures.append(f"pair round {i}: {b[:2].tolist()} != {want_b}")
        if i == ROUNDS // 2 and rank == 0:
            seen = torch_lab.incctl_groups()
    dist.barrier()
    # A fourth group: the switch's memory is taken by the three above.
    extra = dist.new_group(list(range(n)))
    t = torch.ones(256)
    dist.all_reduce(t, group=extra)
    if not torch.equal(t, torch.full_like(t, float(n))):
        failures.append(f"fourth group (Gloo): {t[:2].tolist()}")
    dist.barrier()
    # The same without memory under EPIC_TORCH_STRICT=1: creating the group fails on every rank.
    os.environ["EPIC_TORCH_STRICT"] = "1"
    strict_error = ""
    try:
        dist.new_group(list(range(n)))
    except RuntimeError as e:
        strict_error = str(e)
    del os.environ["EPIC_TORCH_STRICT"]
    dist.barrier()
    result = {"rank": rank, "failures": failures, "names": names, "strict_error": strict_error,
              "seen": seen if rank == 0 else {}, "counters": epic_torch.counters()}
    print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()
    return 0


def test(build):
    t0 = time.time()
    ok = True
    with torch_lab.TorchLab(build, "torchgroups", RANKS,
                            capacity_bytes=3 * torch_lab.GROUP_BYTES["fp32_arrival"]) as tl:
        res = tl.run(os.path.abspath(__file__), [], 300)
        if not torch_lab.finished(tl, res, "TORCH_GROUPS", t0):
            return False
        results = [r for _, _, _, r in res]
        failures = [f"rank {r['rank']}: {f}" for r in results for f in r["failures"]]
        ok &= torch_lab.check("results", not failures, f"{len(failures)} wrong")
        for f in failures[:10]:
            print("   " + f)
        names = {name for r in results for name in r["names"]}
        seen = results[0]["seen"]
        installed = sorted(name for name in names if seen.get(name) == "installed")
        ok &= torch_lab.check("three_manager_groups_at_once",
                              len(names) == 3 and len(installed) == 3,
                              f"groups {sorted(names)}; manager listed {seen}")
        per_group = []
        for r in results:
            gs = r["counters"]["groups"]
            offl = [sum(x["calls"] for x in g["rows"] if x["path"] == "offloaded"
                        and x["collective"] == "allreduce") for g in gs[:2]]
            per_group.append(offl)
        ok &= torch_lab.check("each_group_offloaded",
                              all(len(o) == 2 and min(o) >= ROUNDS for o in per_group),
                              f"allreduces offloaded per rank (world, pair): {per_group}")
        fourth = [r["counters"]["groups"][-1] for r in results]
        refused = all(g["state"] in ("gloo", "closed") and "no INC memory" in g["state_reason"]
                      and any(x["path"] == "fallback" and x["collective"] == "allreduce"
                              for x in g["rows"]) for g in fourth)
        ok &= torch_lab.check("fourth_group_falls_back", refused,
                              f"rank 0: {fourth[0]['state_reason'][:300]}")
        strict = [r["strict_error"] for r in results]
        ok &= torch_lab.check("strict_group_fails_without_memory",
                              all("EPIC_TORCH_STRICT=1" in e and "no INC memory" in e
                                  for e in strict), f"rank 0: {strict[0][:200]}")
        said = all("every collective of this group falls back to Gloo" in text
                   for _, _, text, _ in res)
        ok &= torch_lab.check("fallback_said_once_per_rank", said)
        if not ok:
            torch_lab.dump(res, 2500)
    print(f"TORCH_GROUPS {'PASS' if ok else 'FAIL'} wall={torch_lab.wall(t0)}")
    return ok


if __name__ == "__main__":
    sys.exit(torch_lab.main(__doc__, worker, test))
