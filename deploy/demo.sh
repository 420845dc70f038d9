#!/usr/bin/env bash
# EPIC's main job (README quick start):
#   deploy/demo.sh [--ranks N] [--reps K] [--real-ranks auto|yes|no | --no-real-ranks]
#
# Installs what it needs (deploy/install.sh), builds the optimized tree (build/release), then
#  1. runs the netns demo (deploy/netns/incd_demo.py): incd in a switch namespace on DPDK
#     af_packet ports and N (default 8) rank processes in their own namespaces on the soft
#     transport (user-space RoCEv2 RC endpoint), every primitive at several sizes, each result
#     verified bit for bit and timed, incd's metrics, then libinc's inc-bench on the same ranks;
#  2. the control plane (deploy/netns/control_plane.py --demo): inc-manager, a leaf and a spine
#     incd whose IncAgents register with it, ranks that join their groups through it — two
#     tenants' groups on two-level IncTrees at once, one in Mode-II and one in Mode-III, a third group that finds no INC memory and
#     falls back to host collectives, a fourth that waits in the manager's queue for memory —
#     with incctl's view (groups, tree, memory, one group's straggler telemetry) while they run;
#  3. with --real-ranks auto (default) or yes: real RDMA ranks — three qemu guests whose Linux
#     rdma_rxe (Soft-RoCE) NICs run inc-rank on libinc's verbs transport through incd
#     (deploy/lab/incd_rxe.sh, lossless, the group in Mode-II then in Mode-III; about two
#     minutes). auto skips it, saying why, when the machine cannot run the guests
#     (/dev/net/tun, qemu); yes makes that an error.
#  4. a short DDP training (PyTorch, 4 ranks, 40 steps) with the "epic" backend beside "gloo",
#     the loss of every step side by side (docs/pytorch.md; skipped, saying why, where the
#     backend does not build).
# Every step says which transport it used. Removes everything it created. Needs root.
# Exit status: 0 when every collective was verified.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
REAL=auto
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0;;
    --real-ranks) [ $# -ge 2 ] || { echo "demo.sh: --real-ranks needs auto, yes or no" >&2; exit 2; }
                  REAL=$2; shift 2;;
    --real-ranks=*) REAL=${1#*=}; shift;;
    --no-real-ranks) REAL=no; shift;;
    *) PASS+=("$1"); shift;;
  esac
done
case "$REAL" in auto|yes|no) ;; *) echo "demo.sh: --real-ranks must be auto, yes or no, not '$REAL'" >&2; exit 2;; esac
[ "$(id -u)" = 0 ] || { echo "demo.sh: needs root (network namespaces, AF_PACKET, DPDK)" >&2; exit 1; }

"$ROOT/deploy/install.sh"
BUILD=$ROOT/build/release
[ -f "$BUILD/build.ninja" ] || cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)" --target incd inc-rank inc-bench inc-wire inc-manager incctl

echo
for f in "$ROOT"/tests/fixtures/rxe/rxe_rc_ipv4.pcap; do
  echo "== inc-wire verify ${f#"$ROOT"/}  (RoCEv2 frames captured from Linux rdma_rxe ranks)"
  "$BUILD/tools/inc-wire/inc-wire" verify "$f" | tail -n 2
done
echo
/usr/bin/python3 "$ROOT/deploy/netns/incd_demo.py" "$BUILD" ${PASS[@]+"${PASS[@]}"}
echo
echo "== the control plane: inc-manager, leaf and spine incd with IncAgents, ranks joining through the manager (soft transport)"
/usr/bin/python3 "$ROOT/deploy/netns/control_plane.py" "$BUILD" --demo

# Last: a short DDP training through EPIC beside Gloo (docs/pytorch.md), where the PyTorch backend
# builds (libtorch-dev, pybind11-dev).
torch_ddp() {
  echo
  echo "== building the PyTorch backend (epic_torch) ..."
  if ! cmake --build "$BUILD" -j"$(nproc)" --target epic_torch >/dev/null 2>&1; then
    echo "== PyTorch DDP through EPIC: skipped (the epic_torch target does not build here: libtorch-dev and pybind11-dev, docs/pytorch.md)"
    return 0
  fi
  echo "== PyTorch DDP through EPIC: 4 ranks train an MLP, 40 steps with backend gloo, then epic (gradients rounded to 2^-14, so the sums are exact: the losses must match bit for bit)"
  /usr/bin/python3 "$ROOT/tests/integration/torch_ddp.py" "$BUILD" --steps 40 --modes exact --demo
}

[ "$REAL" = no ] && { echo; echo "== real RDMA ranks: skipped (--real-ranks no)"; torch_ddp; exit $?; }
why=""
[ -c /dev/net/tun ] || why="no /dev/net/tun"
command -v qemu-system-x86_64 >/dev/null || why="${why:+$why, }no qemu-system-x86_64"
if [ -n "$why" ]; then
  echo
  if [ "$REAL" = yes ]; then
    echo "demo.sh: real RDMA ranks requested but this machine cannot run the lab guests: $why" >&2
    exit 1
  fi
  echo "== real RDMA ranks: skipped ($why); only the soft transport ran above"
  torch_ddp
  exit $?
fi
echo
echo "== real RDMA ranks: transport verbs (libibverbs on Linux rdma_rxe in 3 qemu guests) through incd"
OUT=$(mktemp -d /tmp/epic-demo-rxe.XXXXXX)
LOG=$OUT.log  # beside the run directory: incd_rxe.sh wants an empty (or its own) directory
set +e
"$ROOT/deploy/lab/incd_rxe.sh" --incd "$BUILD/daemon/incd" --inc-rank "$BUILD/tools/inc-rank/inc-rank" \
  --loss 0 --modes 2,3 -o "$OUT" >"$LOG" 2>&1
rc=$?
set -e
grep -E '^(incd_rxe:|PHASE|pcap|INCD_RXE)' "$LOG" | sed 's/^/   /'
[ "$rc" = 0 ] || { echo "demo.sh: the real-ranks lab failed (exit $rc); last lines of $LOG:" >&2; tail -n 20 "$LOG" >&2; }
echo "   artefacts (pcaps, incd log and metrics, the ranks' JSON lines): $OUT (log: $LOG)"
torch_ddp || rc=1
exit "$rc"
