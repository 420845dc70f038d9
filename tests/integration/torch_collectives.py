#!/usr/bin/python3
"""integration.torch_collectives — torch.distributed's collectives through the "epic" backend.

4 ranks (python3 + torch, one shared namespace, their EPIC endpoints on veths to incd) call
every collective the backend offloads — all_reduce (SUM, MIN, MAX), reduce, broadcast,
all_gather, all_gather_into_tensor (_allgather_base), reduce_scatter, reduce_scatter_tensor
(_reduce_scatter_base), barrier — for int32, float32, float16, bfloat16 and int8, at 1,000
elements and (float32) 100,000 (400 KB: above libinc's 64 KiB input copy), and compare each result bit for bit with the same call on a
Gloo group of the same ranks (Gloo 1.13 has no bfloat16 reductions, ReduceScatter or
_allgather_base: those are compared with Gloo's AllReduce / list AllGather, or with the exact
result each rank computes from every rank's inputs, which every case is also checked against).
Inputs are integers (or eighths) small enough that every sum is exact in its type, so every
order of addition gives the same bits.

Then: float64 and int64 all_reduce and an int32 PRODUCT fall back to Gloo (right results, the
reasons in the counters); a float64 broadcast is offloaded (broadcast moves bytes); the
offload counters of every rank show the offloaded calls; the manager lists the world group's
manager group while it runs and incd's engine counted aggregations; a group created with
EPIC_TORCH_STRICT=1 offloads a float32 all_reduce and fails the float64 one instead of falling
back; a bad INC_QPN on rank 1 fails the creation of a group on every rank, naming rank 1. Prints "TORCH_COLLECTIVES PASS|FAIL".
  torch_collectives.py BUILD_DIR
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_lab  # noqa: E402

RANKS = 4
JOB_TIMEOUT_S = 300


# --- the rank process ------------------------------------------------------------------------
def worker():
    import datetime
    import warnings

    import torch
    import torch.distributed as dist

    import epic_torch

    warnings.filterwarnings("ignore")
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("epic", init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=n, timeout=datetime.timedelta(seconds=120))
    gloo = dist.new_group(backend="gloo")
    world_pg = dist.distributed_c10d._get_default_group()
    failures, checked = [], 0

    def inputs(dtype, count, r, seed):
        g = torch.Generator().manual_seed(seed * 1000 + r)
        lim = {torch.int8: 30, torch.bfloat16: 30, torch.float16: 100}.get(dtype, 1000)
        v = torch.randint(-lim, lim + 1, (count,), generator=g, dtype=torch.int64)
        if dtype in (torch.float32, torch.float64):
            return (v.to(torch.float64) / 8).to(dtype)  # eighths: sums stay exact
        return v.to(dtype)

    def every(dtype, count, seed):
        return [inputs(dtype, count, r, seed) for r in range(n)]

    def reduced(xs, op):
        w = torch.stack([x.to(torch.float64) for x in xs])
        out = {"sum": w.sum(0), "min": w.min(0).values, "max": w.max(0).values,
               "product": w.prod(0)}[op]
        return out.to(xs[0].dtype)

    def same(name, got, want, gloo_got=None):
        nonlocal checked
        checked += 1
        if not torch.equal(got, want):
            bad = (got != want).nonzero()
            failures.append(f"{name}: differs from the exact result at {bad[:3].tolist()} "
                            f"(got {got.flatten()[:4].tolist()} want {want.flatten()[:4].tolist()})")
        if gloo_got is not None and not torch.equal(got, gloo_got):
            failures.append(f"{name}: differs from Gloo's result")

    phases, t_phase = {}, time.time()

    def phase(name):
        nonlocal t_phase
        phases[name] = round(time.time() - t_phase, 1)
        t_phase = time.time()

    ops = {"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX,
           "product": dist.ReduceOp.PRODUCT}
    dtypes = [torch.int32, torch.float32, torch.float16, torch.bfloat16, torch.int8]
    seed = 0
    for dtype in dtypes:
        gloo_reduces = dtype != torch.bfloat16  # Gloo 1.13: "Invalid scalar type"
        sizes = [1000, 100000] if dtype == torch.float32 else [1000]
        for count in sizes:
            tag = f"{str(dtype).replace('torch.', '')}x{count}"
            for opname in ("sum", "min", "max"):
                seed += 1
                xs = every(dtype, count, seed)
                t = xs[rank].clone()
                dist.all_reduce(t, op=ops[opname])
                g = None
                if gloo_reduces:
                    g = xs[rank].clone()
                    dist.all_reduce(g, op=ops[opname], group=gloo)
                same(f"all_reduce {opname} {tag}", t, reduced(xs, opname), g)
            # reduce to rank 1 (only the root's tensor is defined)
            seed += 1
            xs = every(dtype, count, seed)
            t = xs[rank].clone()
            dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
            g = xs[rank].clone()
            if gloo_reduces:
                dist.reduce(g, dst=1, op=dist.ReduceOp.MAX, group=gloo)
            if rank == 1:
                same(f"reduce max root 1 {tag}", t, reduced(xs, "max"), g if gloo_reduces else None)
            # broadcast from rank 2
            seed += 1
            xs = every(dtype, count, seed)
            t = xs[rank].clone()
            dist.broadcast(t, src=2)
            g = None
            if gloo_reduces:
                g = xs[rank].clone()
                dist.broadcast(g, src=2, group=gloo)
            same(f"broadcast root 2 {tag}", t, xs[2], g)
            # all_gather (list) and all_gather_into_tensor (_allgather_base)
            seed += 1
            xs = every(dtype, count, seed)
            outs = [torch.empty_like(xs[0]) for _ in range(n)]
            dist.all_gather(outs, xs[rank])
            gouts = None
            if gloo_reduces:
                gouts = [torch.empty_like(xs[0]) for _ in range(n)]
                dist.all_gather(gouts, xs[rank], group=gloo)
            same(f"all_gather {tag}", torch.cat(outs), torch.cat(xs),
                 torch.cat(gouts) if gouts else None)
            flat = torch.empty(n * count, dtype=dtype)
            dist.all_gather_into_tensor(flat, xs[rank])
            same(f"all_gather_into_tensor {tag}", flat, torch.cat(xs),
                 torch.cat(gouts) if gouts else None)
            # reduce_scatter (list) and reduce_scatter_tensor (_reduce_scatter_base): Gloo 1.13
            # has neither, its AllReduce of the whole input is the comparison.
            seed += 1
            chunk = count // n
            xs = every(dtype, n * chunk, seed)
            want = reduced(xs, "sum").narrow(0, rank * chunk, chunk)
            g = None
            if gloo_reduces:
                whole = xs[rank].clone()
                dist.all_reduce(whole, group=gloo)
                g = whole.narrow(0, rank * chunk, chunk)
            out = torch.empty(chunk, dtype=dtype)
            dist.reduce_scatter(out, list(xs[rank].chunk(n)))
            same(f"reduce_scatter sum {tag}", out, want, g)
            out = torch.empty(chunk, dtype=dtype)
            dist.reduce_scatter_tensor(out, xs[rank], op=dist.ReduceOp.SUM)
            same(f"reduce_scatter_tensor sum {tag}", out, want, g)
    dist.barrier()
    phase("offloaded_cases")

    # Falls back to Gloo, with the reason counted; results still right.
    for dtype, opname in ((torch.float64, "sum"), (torch.int64, "sum"), (torch.int32, "product")):
        seed += 1
        xs = every(dtype, 100, seed)
        if opname == "product":
            xs = [x.clamp(-3, 3) for x in xs]
        t = xs[rank].clone()
        dist.all_reduce(t, op=ops[opname])
        same(f"fallback all_reduce {opname} {dtype}", t, reduced(xs, opname))
    seed += 1
    xs = every(torch.float64, 100, seed)
    t = xs[rank].clone()
    dist.broadcast(t, src=3)
    same("broadcast float64 (offloaded as bytes)", t, xs[3])

    groups_seen = torch_lab.incctl_groups() if rank == 0 else {}
    phase("fallback_cases")

    # Strict mode: a group created with EPIC_TORCH_STRICT=1 fails instead of falling back.
    os.environ["EPIC_TORCH_STRICT"] = "1"
    strict = dist.new_group(backend="epic")
    del os.environ["EPIC_TORCH_STRICT"]
    t = torch.ones(64)
    dist.all_reduce(t, group=strict)
    strict_offloaded = torch.equal(t, torch.full((64,), float(n)))
    strict_error = ""
    try:
        dist.all_reduce(torch.ones(64, dtype=torch.float64), group=strict)
    except RuntimeError as e:
        strict_error = str(e)
    dist.barrier()
    phase("strict_group")
    # A bad INC_* value on one rank fails the group's creation on every rank, naming that rank.
    if rank == 1:
        os.environ["INC_QPN"] = "0x1000000"
    config_error = ""
    try:
        dist.new_group(backend="epic")
    except RuntimeError as e:
        config_error = str(e)
    os.environ["INC_QPN"] = str(torch_lab.QPN_BASE)
    dist.barrier()
    phase("bad_config_group")
    result = {"rank": rank, "checked": checked, "failures": failures, "phases_s": phases,
              "config_error": config_error,
              "counters": epic_torch.counters(), "world_group": world_pg.group_name,
              "world_offloading": world_pg.offloading, "describe": world_pg.describe(),
              "groups_seen": groups_seen, "strict_offloaded": strict_offloaded,
              "strict_error": strict_error}
    print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()
    return 0


# --- the test --------------------------------------------------------------------------------
def rows(result, path):
    return [r for g in result["counters"]["groups"] for r in g["rows"] if r["path"] == path]


def test(build):
    t0 = time.time()
    ok = True
    with torch_lab.TorchLab(build, "torchcoll", RANKS) as tl:
        res = tl.run(os.path.abspath(__file__), [], JOB_TIMEOUT_S)
        aggregations = tl.engine_events("aggregations_completed")
        if not torch_lab.finished(tl, res, "TORCH_COLLECTIVES", t0):
            return False
        results = [r for _, _, _, r in res]
        failures = [f"rank {r['rank']}: {f}" for r in results for f in r["failures"]]
        checked = sum(r["checked"] for r in results)
        ok &= torch_lab.check("same_as_gloo_and_exact", not failures and checked > 0,
                              f"checks={checked} failures={len(failures)}")
        for f in failures[:20]:
            print("   " + f)
        # Offloaded: every collective of the list, on every rank.
        want = {"allreduce", "reduce", "broadcast", "allgather", "_allgather_base",
                "reduce_scatter", "_reduce_scatter_base", "barrier"}
        offloaded = []
        for x in results:
            calls = {}
            for r in rows(x, "offloaded"):
                calls[r["collective"]] = calls.get(r["collective"], 0) + r["calls"]
            offloaded.append(calls)
        all_there = all(want <= set(o) for o in offloaded)
        ok &= torch_lab.check("offload_counters", all_there and all(x["world_offloading"]
                                                                   for x in results),
                              f"rank 0 offloaded {offloaded[0]}")
        print(f"   rank 0 world group: {results[0]['describe']}")
        print(f"   rank 0 phases (s): {results[0]['phases_s']}")
        reasons = [sorted({r["reason"] for r in rows(x, "fallback")}) for x in results]
        expect = ("dtype Double", "dtype Long", "ReduceOp.PRODUCT")
        said = all(any(e in r for r in rs) for rs in reasons for e in expect)
        bcast64 = all(
            any(r["collective"] == "broadcast" and r["bytes"] >= 800 for r in rows(x, "offloaded"))
            for x in results)
        ok &= torch_lab.check("fallback_reported", said and bcast64, f"rank 0 reasons {reasons[0]}")
        groups_seen = results[0]["groups_seen"]
        world = results[0]["world_group"]
        ok &= torch_lab.check("manager_group_and_incd",
                              groups_seen.get(world) == "installed" and aggregations > 0,
                              f"manager groups {groups_seen} incd aggregations_completed="
                              f"{aggregations:.0f}")
        strict_ok = all(x["strict_offloaded"] and "EPIC_TORCH_STRICT=1" in x["strict_error"]
                        and "dtype Double" in x["strict_error"] for x in results)
        ok &= torch_lab.check("strict_mode_fails", strict_ok,
                              f"rank 0: {results[0]['strict_error'][:200]}")
        errs = [x["config_error"] for x in results]
        ok &= torch_lab.check("bad_config_fails_every_rank",
                              all("bad EPIC configuration on rank 1" in e and "INC_QPN=0x1000000"
                                  in e for e in errs), f"rank 0: {errs[0][:240]}")
        print("--- rank 0's summary at exit:")
        print("\n".join(ln for ln in res[0][2].splitlines() if ln.startswith(("epic_torch", "  "))))
        if not ok:
            torch_lab.dump(res, 2500)
        for g in results[0]["counters"]["groups"]:
            print(f"   {g['label']}: {g['state']}")
    print(f"TORCH_COLLECTIVES {'PASS' if ok else 'FAIL'} wall={torch_lab.wall(t0)}")
    return ok


if __name__ == "__main__":
    sys.exit(torch_lab.main(__doc__, worker, test))
