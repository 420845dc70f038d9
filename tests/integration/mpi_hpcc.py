#!/usr/bin/python3
"""mpi_hpcc: the HPC Challenge benchmark (Debian's hpcc: HPL, PTRANS, RandomAccess, FFT, STREAM,
DGEMM, b_eff; an MPI program nobody here wrote, which checks its own results) on 4 ranks with
libepic_mpi.so preloaded, through incd, and without the library.

  mpi_hpcc.py BUILD_DIR

BUILD_DIR holds incd, inc-manager, incctl and host/mpi/libepic_mpi.so (the non-sanitizer
build). Skipped (exit 77) where /usr/bin/hpcc is not installed (apt-get install hpcc).
hpcc runs its problems at N=500 on a 2 x 2 grid (Debian's example input otherwise), in a folder
of its own per run. Both runs must pass hpcc's own verification (HPL's scaled residuals
PASSED, no RandomAccess errors, Success=1 in its summary); the preloaded run's reports must
show EPIC ran collectives of every kind hpcc uses with data EPIC handles (MPI_Bcast,
MPI_Barrier, MPI_Allreduce) and nothing failed; what fell back is listed with its reasons.
Prints "MPI_HPCC PASS|FAIL".
"""
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpi_lab  # noqa: E402
from mpi_lab import incd_lab  # noqa: E402

RANKS = 4
HPCC = "/usr/bin/hpcc"
EXAMPLE = "/usr/share/doc/hpcc/examples/_hpccinf.txt"
MUST_OFFLOAD = ["MPI_Bcast", "MPI_Barrier", "MPI_Allreduce"]


def verdict(folder):
    """(hpcc verified its results, what says so) from its output file."""
    try:
        with open(os.path.join(folder, "hpccoutf.txt")) as f:
            out = f.read()
    except OSError as e:
        return False, f"no hpccoutf.txt ({e})"
    passed = len(re.findall(r"\bPASSED\b", out))
    failed = len(re.findall(r"\bFAILED\b", out))
    success = re.search(r"^Success=(\d+)", out, re.M)
    errors = [int(x) for x in re.findall(r"^MPIRandomAccess\w*_Errors=(\d+)", out, re.M)]
    ok = passed > 0 and failed == 0 and success and success.group(1) == "1" and \
        errors and not any(errors)
    return bool(ok), (f"HPL residual checks PASSED {passed}, FAILED {failed}; "
                      f"RandomAccess errors {errors}; Success={success.group(1) if success else None}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not os.access(HPCC, os.X_OK):
        print(f"{HPCC} is not installed (apt-get install hpcc)")
        print("MPI_HPCC SKIP")
        return 77
    build = os.path.abspath(sys.argv[1])
    incd_lab.install_signal_exit()
    t0 = time.time()
    ok = True
    with incd_lab.Lab(build, "hpcc") as lab:
        m = mpi_lab.MpiLab(lab, build, RANKS)
        with open(EXAMPLE) as f:
            inf = re.sub(r"^1000( +Ns)", r"500 \1", f.read(), count=1, flags=re.M)
        results = {}
        for label, preload in (("without the library", False), ("preloaded", True)):
            folder = os.path.join(lab.tmp, "hpcc-" + ("epic" if preload else "mpi"))
            os.makedirs(folder)
            with open(os.path.join(folder, "hpccinf.txt"), "w") as f:
                f.write(inf)
            rc, text, secs = m.mpirun(["-wdir", folder, HPCC], m.env(), 600, preload=preload)
            good, why = verdict(folder)
            results[label] = (rc == 0 and good, text)
            print(f"CASE hpcc_{'epic' if preload else 'mpi'} "
                  f"{'PASS' if rc == 0 and good else 'FAIL'} {label}: exit {rc}, {secs:.0f} s; "
                  f"{why}", flush=True)
            ok &= rc == 0 and good
            if not (rc == 0 and good):
                print(text[-6000:])
                shutil.copy(os.path.join(folder, "hpccinf.txt"), lab.tmp)
        reports = m.reports()
        for k, rep in enumerate(reports):
            if "error" in rep:
                print(f"   rank {k}: no report ({rep['error']})")
                ok = False
                continue
            offloaded = all(rep["offloaded"][c] > 0 for c in MUST_OFFLOAD)
            failed = sum(rep["failed"].values())
            ok &= offloaded and failed == 0
            print(f"   rank {k}: offloaded {rep['offloaded']} fell back {rep['fallback']} "
                  f"failed {failed}; communicators "
                  f"{[c['name'] + ' ' + c['outcome'][:3] for c in rep['communicators']]}")
        if reports and "error" not in reports[0]:
            for x in sorted(reports[0]["reasons"], key=lambda x: -x["count"]):
                print(f"   rank 0 {x['count']} x {x['call']}: {x['why']}")
        if not ok:
            print(f"--- inc-manager log:\n{m.mgr.log()}\n--- incd log:\n{lab.log(m.sw)}")
        ok &= m.close()
    print(f"MPI_HPCC {'PASS' if ok else 'FAIL'} wall={time.time() - t0:.0f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
