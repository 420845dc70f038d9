#!/usr/bin/python3
"""integration.torch_ddp — DDP training through the "epic" backend gives Gloo's model.

4 ranks train the same MLP (16-64-64-1, ReLU, SGD) with DistributedDataParallel on synthetic
regression data (each rank its own batches of 32) for --steps steps (200), once with backend
"gloo" and once with "epic", and compare rank 0's loss at every step and every rank's final
parameters:
  exact   every gradient is rounded (a hook on each parameter, before DDP's bucket) to a
          multiple of 2^-14 with |g| <= 2^7: DDP's division by 4 and the sum of 4 such values
          are exact in float32 in any order, so Gloo's ring and EPIC's switch (fp32_arrival)
          must give the same bits — losses and parameters compared bit for bit;
  float   plain gradients; EPIC with the reproducible profile (INC_ACCUMULATOR=kulisch_fixed,
          INC_DTYPE=fp32: each sum exact, rounded once), Gloo with its ring order: the bits
          may differ in the last place of a sum, so losses and parameters are compared within
          a relative tolerance of 1e-4 (the test says what it measured).
Also checks that the epic runs offloaded DDP's allreduces (one per step) and its initial
broadcast, and prints the mean time per training step of each backend (rank 0, after 10 warm-up
steps; the 2-CPU lab machine runs 4 ranks and incd: figures of this lab, not of a network).
Prints "TORCH_DDP PASS|FAIL".
  torch_ddp.py BUILD_DIR [--steps 200] [--modes exact,float] [--demo]
--demo prints the loss of every step of both backends side by side (deploy/demo.sh).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_lab  # noqa: E402

RANKS = 4
TOLERANCE = 1e-4
WARMUP = 10
GRAD_QUANTUM = 2.0 ** -14
GRAD_LIMIT = 2.0 ** 7


# --- the rank process ------------------------------------------------------------------------
def worker(backend, mode, steps):
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if backend == "epic":
        import epic_torch
    torch.set_num_threads(1)
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=n, timeout=datetime.timedelta(seconds=120))
    torch.manual_seed(rank + 1)  # different on purpose: DDP's broadcast from rank 0 must fix it
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 1))
    if mode == "exact":
        for p in model.parameters():
            p.register_hook(lambda g: torch.round(g.clamp(-GRAD_LIMIT, GRAD_LIMIT) / GRAD_QUANTUM)
                            * GRAD_QUANTUM)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1234 + rank)
    w_true = torch.linspace(-1, 1, 16)
    losses, times = [], []
    for step in range(steps):
        x = torch.randn(32, 16, generator=gen)
        y = torch.tanh((x @ w_true).unsqueeze(1) / 2) + 0.05 * torch.randn(32, 1, generator=gen)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    result = {"rank": rank, "losses": [float(v).hex() for v in losses],
              "params": [float(v).hex() for v in params.tolist()],
              "step_ms": 1000 * sum(times[WARMUP:]) / max(1, len(times) - WARMUP)}
    if backend == "epic":
        result["counters"] = epic_torch.counters()
        result["describe"] = dist.distributed_c10d._get_default_group().describe()
    print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()
    return 0


# --- the test --------------------------------------------------------------------------------
def values(hexes):
    return [float.fromhex(h) for h in hexes]


def rel_diff(a, b):
    return max((abs(x - y) / max(abs(x), abs(y), 1e-6) for x, y in zip(a, b)), default=0.0)


def offloaded(result, collective):
    return sum(r["calls"] for g in result["counters"]["groups"] for r in g["rows"]
               if r["path"] == "offloaded" and r["collective"] == collective)


def train(tl, backend, mode, steps):
    extra = {}
    if backend == "epic" and mode == "float":
        extra = {"INC_ACCUMULATOR": "kulisch_fixed", "INC_DTYPE": "fp32"}
    t0 = time.time()
    res = tl.run(os.path.abspath(__file__),
                 ["--backend", backend, "--mode", mode, "--steps", str(steps)], 300, extra)
    ok = all(rc == 0 and r is not None for _, rc, _, r in res)
    print(f"   {backend:<4} {mode:<5}: {'ran' if ok else 'FAILED'} in {time.time() - t0:.0f} s"
          + (f", {res[0][3]['step_ms']:.2f} ms per step (rank 0)" if ok else ""))
    if not ok:
        torch_lab.dump(res)
    return ok, [r for _, _, _, r in res]


def main():
    if "--worker" in sys.argv:
        p = argparse.ArgumentParser()
        p.add_argument("--worker", action="store_true")
        p.add_argument("--backend")
        p.add_argument("--mode")
        p.add_argument("--steps", type=int)
        a = p.parse_args()
        return worker(a.backend, a.mode, a.steps)
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("build")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--modes", default="exact,float")
    p.add_argument("--demo", action="store_true")
    a = p.parse_args()
    torch_lab.incd_lab.install_signal_exit()
    t0 = time.time()
    ok = True
    # Room for one group in either profile (each run's group leaves before the next joins).
    with torch_lab.TorchLab(a.build, "torchddp", RANKS,
                            capacity_bytes=2 * torch_lab.GROUP_BYTES["kulisch_fixed/fp32"]) as tl:
        for mode in a.modes.split(","):
            print(f"== {mode}: {a.steps} steps, {RANKS} ranks, DDP over gloo then epic")
            g_ok, gloo = train(tl, "gloo", mode, a.steps)
            e_ok, epic = train(tl, "epic", mode, a.steps)
            if not (g_ok and e_ok):
                ok &= torch_lab.check(f"ddp_{mode}", False, "a run failed")
                continue
            gl, el = values(gloo[0]["losses"]), values(epic[0]["losses"])
            same_params = all(g["params"] == e["params"] for g, e in zip(gloo, epic))
            p_diff = max(rel_diff(values(g["params"]), values(e["params"]))
                         for g, e in zip(gloo, epic))
            l_diff = rel_diff(gl, el)
            allreduces = min(offloaded(e, "allreduce") for e in epic)
            broadcasts = min(offloaded(e, "broadcast") for e in epic)
            if a.demo or mode == a.modes.split(",")[0]:
                print(f"   {'step':>5} {'loss gloo':>12} {'loss epic':>12}")
                for s in range(0, a.steps, 1 if a.demo else 50):
                    print(f"   {s:>5} {gl[s]:>12.6f} {el[s]:>12.6f}")
                if not a.demo:
                    print(f"   {a.steps - 1:>5} {gl[-1]:>12.6f} {el[-1]:>12.6f}")
            print(f"   epic group: {epic[0]['describe']}")
            print(f"   time per step (rank 0): gloo {gloo[0]['step_ms']:.2f} ms, epic "
                  f"{epic[0]['step_ms']:.2f} ms")
            offload_ok = allreduces >= a.steps and broadcasts >= 1
            if mode == "exact":
                ok &= torch_lab.check(
                    "ddp_exact_bitwise", gl == el and same_params and offload_ok,
                    f"losses_equal={gl == el} params_equal={same_params} "
                    f"max_rel_diff losses={l_diff:.3g} params={p_diff:.3g} "
                    f"allreduces_offloaded={allreduces} broadcasts_offloaded={broadcasts}")
            else:
                ok &= torch_lab.check(
                    "ddp_float_within_tolerance",
                    l_diff <= TOLERANCE and p_diff <= TOLERANCE and offload_ok,
                    f"tolerance={TOLERANCE} max_rel_diff losses={l_diff:.3g} params={p_diff:.3g} "
                    f"bitwise_equal={gl == el and same_params} "
                    f"allreduces_offloaded={allreduces} broadcasts_offloaded={broadcasts}")
    print(f"TORCH_DDP {'PASS' if ok else 'FAIL'} wall={torch_lab.wall(t0)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
