#!/usr/bin/python3
"""mpi_mpi4py: mpi4py's own collective tests (a test program nobody here wrote) on 4 ranks
with libepic_mpi.so preloaded, through incd, against the same tests without the library.

  mpi_mpi4py.py BUILD_DIR CACHE_DIR [TEST_MODULE...]

BUILD_DIR holds incd, inc-manager, incctl and host/mpi/libepic_mpi.so (the non-sanitizer
build). The tests come from the Debian source package of the installed python3-mpi4py,
fetched into CACHE_DIR by mpi_fetch_mpi4py_tests.sh (or EPIC_MPI4PY_SRC=DIR, an unpacked
mpi4py source tree of the same version). When the archive does not give them, the test says
why and exits 77 (skipped): it cannot run without them.
Runs mpi4py's test/runtests.py on the modules (default: the collective ones, test_cco_*, and
test_comm) twice, without and with the library, and compares: the preloaded run must have no
failure or error the plain run does not have, and every rank's report must show each of the six
collectives offloaded (counters), with the reasons of what fell back. Prints each rank's
unittest summary, the counters, and "MPI_MPI4PY PASS|FAIL".
"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpi_lab  # noqa: E402
from mpi_lab import incd_lab  # noqa: E402

RANKS = 4
MODULES = ["test_cco_buf", "test_cco_obj", "test_cco_vec", "test_cco_nb_buf",
           "test_cco_nb_vec", "test_cco_ngh_buf", "test_cco_ngh_obj", "test_comm"]
CALLS = ["MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce_scatter_block",
         "MPI_Allgather"]


def fetch(cache):
    r = subprocess.run([os.path.join(HERE, "mpi_fetch_mpi4py_tests.sh"), cache],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def summaries(text):
    """unittest's result per rank: [(ran, failures, errors, skipped)] in output order."""
    out = []
    ran = None
    for line in text.splitlines():
        m = re.search(r"Ran (\d+) tests? in", line)
        if m:
            ran = int(m.group(1))
            continue
        if ran is not None and (line.startswith("OK") or line.startswith("FAILED")):
            nums = {k: int(v) for k, v in re.findall(r"(failures|errors|skipped)=(\d+)", line)}
            out.append((ran, nums.get("failures", 0), nums.get("errors", 0),
                        nums.get("skipped", 0)))
            ran = None
    return out


def failing_tests(text):
    return sorted(set(re.findall(r"^(?:FAIL|ERROR): (\S+ \(\S+\))", text, re.M)))


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    build, cache = os.path.abspath(args[0]), os.path.abspath(args[1])
    modules = args[2:] or MODULES
    rc, tests, why = fetch(cache)
    if rc != 0:
        print(f"mpi4py's test suite is not available: {why}")
        print("MPI_MPI4PY SKIP (set EPIC_MPI4PY_SRC to an unpacked mpi4py source tree of the "
              "installed version to run it)")
        return 77
    print(f"== mpi4py tests from {tests}; modules {' '.join(modules)}")
    incd_lab.install_signal_exit()
    t0 = time.time()
    ok = True
    with incd_lab.Lab(build, "mpi4py") as lab:
        m = mpi_lab.MpiLab(lab, build, RANKS)
        argv = ["/usr/bin/python3", os.path.join(tests, "runtests.py"), "--no-builddir",
                "--no-threads"]
        for mod in modules:
            argv += ["-i", mod]
        env = m.env(extra={"INC_LINGER_MS": "20"})
        runs = {}
        for label, preload in (("without the library", False), ("preloaded", True)):
            rc, text, secs = m.mpirun(argv, env, 600, preload=preload)
            s = summaries(text)
            runs[label] = (rc, s, failing_tests(text), text)
            print(f"== mpi4py {label}: exit {rc}, {secs:.0f} s; per rank (ran, failures, "
                  f"errors, skipped): {s}")
            for t in failing_tests(text):
                print(f"   failing: {t}")
        reports = m.reports()
        base_rc, base_s, base_fail, _ = runs["without the library"]
        pre_rc, pre_s, pre_fail, pre_text = runs["preloaded"]
        new_failures = sorted(set(pre_fail) - set(base_fail))
        complete = len(pre_s) == RANKS and len(base_s) == RANKS
        same_count = complete and [x[0] for x in pre_s] == [x[0] for x in base_s]
        print(f"== failures only with the library: {new_failures or 'none'}; "
              f"failures without it too: {base_fail or 'none'}")
        offload_ok = True
        for k, rep in enumerate(reports):
            if "error" in rep:
                print(f"   rank {k}: no report ({rep['error']})")
                offload_ok = False
                continue
            print(f"   rank {k}: offloaded {rep['offloaded']} fell back {rep['fallback']} "
                  f"failed {rep['failed']}; {len(rep['communicators'])} communicators, "
                  f"{sum(c['outcome'].startswith('inc:') for c in rep['communicators'])} "
                  f"EPIC groups")
            offload_ok &= all(rep["offloaded"][c] > 0 for c in CALLS)
            offload_ok &= all(v == 0 for v in rep["failed"].values())
        if reports and "error" not in reports[0]:
            top = sorted(reports[0]["reasons"], key=lambda x: -x["count"])[:12]
            for x in top:
                print(f"   rank 0 fell back {x['count']} x {x['call']}: {x['why']}")
        ok = (complete and same_count and not new_failures and offload_ok and
              pre_rc in (0, 1) and base_rc in (0, 1))
        if not ok:
            print(pre_text[-8000:])
            print(f"--- inc-manager log:\n{m.mgr.log()}\n--- incd log:\n{lab.log(m.sw)}")
        ok &= m.close()
    print(f"MPI_MPI4PY {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
