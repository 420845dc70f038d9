#!/usr/bin/python3
"""mpi_offload: libepic_mpi.so (host/mpi, docs/mpi.md) under an MPI program that knows nothing of
EPIC (tests/integration/mpi_offload_check.c, compiled here with mpicc), 4 ranks through incd.

  mpi_offload.py BUILD_DIR

BUILD_DIR holds incd, inc-manager, incctl and host/mpi/libepic_mpi.so (CI: the non-sanitizer
build: a sanitizer-built library cannot be preloaded into a program built without it).
Cases (each prints "CASE name PASS|FAIL ..."):
  baseline   the program without the library: its results equal PMPI's (the program is right)
  offload    preloaded: every result equals MPI's bit for bit; each rank's report counts, per
             collective, exactly the calls the program expected EPIC to run and to hand to MPI
             (MPI_PROD, MPI_DOUBLE sums, unsigned max, user ops, count 0), each with its reason;
             MPI_COMM_WORLD, a split, a dup and a split made again became EPIC groups, and
             the manager holds none of them after the job (left at MPI_Comm_free and
             MPI_Finalize); incd aggregated; EPIC_MPI_LOG=1 logged the decisions
  strict     EPIC_MPI_STRICT=1: MPI_PROD fails with MPI_ERR_UNSUPPORTED_OPERATION (counted as
             failed, with its reason), an offloadable call still runs on EPIC
  no_memory  a tenant with room for one group: MPI_COMM_WORLD is EPIC's, a dup's group gets no
             INC memory (host fallback): reported as such, its calls run on MPI, results right
  reproducible  INC_ACCUMULATOR=kulisch_fixed (INC_DTYPE=fp32): float sums whose arrival-order
             result depends on the order are the exact sum rounded once, twice alike, offloaded
  bench      mean time of MPI_Allreduce (1024 ints) and MPI_Barrier, preloaded and PMPI
Prints "MPI_OFFLOAD PASS|FAIL". Removes everything it created; needs root, mpicc and mpirun.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpi_lab  # noqa: E402
from mpi_lab import incd_lab  # noqa: E402

RANKS = 4
CALLS = ["MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce_scatter_block",
         "MPI_Allgather"]


def case(name, ok, detail=""):
    print(f"CASE {name} {'PASS' if ok else 'FAIL'} {detail}".rstrip(), flush=True)
    return ok


def expectations(text):
    """The program's EXPECT lines by rank."""
    out = {}
    for line in text.splitlines():
        if line.startswith("EXPECT "):
            j = json.loads(line[len("EXPECT "):])
            out[j["rank"]] = j
    return out


def checks_ok(text, n):
    lines = [x for x in text.splitlines() if x.startswith("CHECK rank")]
    return len(lines) == n and all(x.endswith("failures=0") for x in lines), lines


def counts_match(reports, expect):
    """[] when every rank's report counts what its program expected, else the differences."""
    diffs = []
    for k in range(RANKS):
        rep, exp = reports[k], expect.get(k)
        if exp is None or "error" in rep:
            diffs.append(f"rank {k}: no expectation or report ({rep.get('error', '')})")
            continue
        for kind in ("offloaded", "fallback", "failed"):
            for c in CALLS:
                if rep[kind][c] != exp[kind][c]:
                    diffs.append(f"rank {k} {kind} {c}: report {rep[kind][c]}, "
                                 f"program {exp[kind][c]}")
    return diffs


def show(text, limit=6000):
    print(text[-limit:])


def run(build):
    ok = True
    with incd_lab.Lab(build, "mpi") as lab:
        prog = os.path.join(lab.tmp, "mpi_offload_check")
        r = subprocess.run(["mpicc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", prog,
                            os.path.join(HERE, "mpi_offload_check.c"), "-lm"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not case("compile", r.returncode == 0, "mpicc -Wall -Wextra -Werror"):
            print(r.stdout)
            return False
        m = mpi_lab.MpiLab(lab, build, RANKS)
        print(f"== incd, inc-manager at {m.mgr.address}, {RANKS} ranks in {m.host}; "
              f"preloading {m.lib}", flush=True)

        rc, text, secs = m.mpirun([prog, "check"], m.env(), 120, preload=False)
        good, lines = checks_ok(text, RANKS)
        ok &= case("baseline", rc == 0 and good, f"without the library: {len(lines)} ranks, "
                   f"{'every result right' if good else 'WRONG'} ({secs:.1f} s)")
        if not good:
            show(text)

        before = m.engine_events("aggregations_completed")
        rc, text, secs = m.mpirun([prog, "check"], m.env(extra={"EPIC_MPI_LOG": "1"}), 300)
        reports = m.reports()
        expect = expectations(text)
        good, lines = checks_ok(text, RANKS)
        diffs = counts_match(reports, expect)
        rep0 = reports[0] if "error" not in reports[0] else {}
        comms = rep0.get("communicators", [])
        comms_inc = [c for c in comms if c["outcome"].startswith("inc:")]
        reasons = {x["why"] for x in rep0.get("reasons", [])}
        wanted = ["MPI_PROD is not", "MPI_DOUBLE", "MPI_UNSIGNED with MPI_MAX",
                  "a user-defined op is not", "no data", "MPI_BAND is not"]
        missing = [w for w in wanted if not any(w in why for why in reasons)]
        aggregated = m.engine_events("aggregations_completed") - before
        # Every group was left: at MPI_Comm_free (split, dup, split again) or MPI_Finalize.
        deadline = time.time() + 15
        while m.mgr.groups() and time.time() < deadline:
            time.sleep(0.2)
        left = [g.get("name") for g in m.mgr.groups()]
        logged = text.count("offloaded to EPIC")
        off = rep0.get("offloaded", {})
        fb = rep0.get("fallback", {})
        ok &= case("offload", rc == 0 and good and not diffs and len(comms) == 4 and
                   len(comms_inc) == 4 and not missing and aggregated > 0 and logged > 0 and
                   not left,
                   f"rank 0 offloaded {off} fell back {fb}; {len(comms_inc)}/{len(comms)} "
                   f"communicators EPIC groups, {len(left)} left in the manager after the job "
                   f"{left or ''}; incd aggregations +{aggregated:.0f}; "
                   f"{logged} decisions logged; {secs:.1f} s")
        print(f"   rank 0 fallback reasons: {sorted(reasons)}")
        if not (rc == 0 and good and not diffs and not missing and len(comms_inc) == 4):
            print(f"   rc={rc} differences={diffs[:12]} missing reasons={missing} "
                  f"communicators={comms}")
            show(text)

        rc, text, secs = m.mpirun([prog, "strict"], m.env(extra={"EPIC_MPI_STRICT": "1"}), 120)
        reports = m.reports()
        diffs = counts_match(reports, expectations(text))
        good, _ = checks_ok(text, RANKS)
        refused = [x for x in reports[0].get("reasons", []) if x.get("failed")]
        ok &= case("strict", rc == 0 and good and not diffs and len(refused) == 1 and
                   "EPIC_MPI_STRICT=1" in refused[0]["why"],
                   f"failed: {refused[0]['why'] if refused else None}")
        if not (rc == 0 and good and not diffs):
            print(f"   rc={rc} differences={diffs}")
            show(text)

        rc, text, secs = m.mpirun([prog, "nomem"], m.env(tenant="tight"), 180)
        reports = m.reports()
        diffs = counts_match(reports, expectations(text))
        good, _ = checks_ok(text, RANKS)
        comms = reports[0].get("communicators", [])
        world = [c for c in comms if c["name"] == "MPI_COMM_WORLD"]
        others = [c for c in comms if c["name"] != "MPI_COMM_WORLD"]
        nomem = bool(others) and all("no INC memory" in c["outcome"] for c in others)
        ok &= case("no_memory", rc == 0 and good and not diffs and bool(world) and
                   world[0]["outcome"].startswith("inc:") and nomem,
                   f"{[c['name'] + ': ' + c['outcome'] for c in comms]}")
        if not (rc == 0 and good and not diffs and nomem):
            print(f"   rc={rc} differences={diffs}")
            show(text)

        rc, text, secs = m.mpirun([prog, "exact"], m.env(extra={
            "INC_ACCUMULATOR": "kulisch_fixed", "INC_DTYPE": "fp32"}), 120)
        reports = m.reports()
        diffs = counts_match(reports, expectations(text))
        good, _ = checks_ok(text, RANKS)
        world = [c["outcome"] for c in reports[0].get("communicators", [])]
        kulisch = bool(world) and "accumulator kulisch_fixed, dtype fp32" in world[0]
        ok &= case("reproducible", rc == 0 and good and not diffs and kulisch,
                   f"INC_ACCUMULATOR=kulisch_fixed: {world[0] if world else None}")
        if not (rc == 0 and good and not diffs and kulisch):
            print(f"   rc={rc} differences={diffs}")
            show(text)

        rc, text, secs = m.mpirun([prog, "bench", "300"], m.env(), 180)
        reports = m.reports()
        diffs = counts_match(reports, expectations(text))
        bench = [x for x in text.splitlines() if x.startswith("BENCH")]
        ok &= case("bench", rc == 0 and not diffs and len(bench) == 1,
                   bench[0] if bench else "no BENCH line")
        if rc != 0 or diffs:
            print(f"   rc={rc} differences={diffs}")
            show(text)
        if not ok:
            print(f"--- inc-manager log:\n{m.mgr.log()}\n--- incd log:\n{lab.log(m.sw)}")
        ok &= m.close()
    return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    incd_lab.install_signal_exit()
    t0 = time.time()
    ok = run(os.path.abspath(sys.argv[1]))
    print(f"MPI_OFFLOAD {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
