#!/usr/bin/env bash
# rxe_interop.sh - EPIC's user-space RoCEv2 endpoint against Linux Soft-RoCE (rdma_rxe).
#
#   deploy/lab/rxe_interop.sh --inc-rc-peer PATH [--plan FILE] [--out DIR] [--keep] [-t SEC]
#                             [-w PCAP]
#
# Boots one lab guest (rxe_lab.sh --no-bridge) and runs, for every case of the plan, a real
# RDMA program in the guest (ibv_rc_pingpong or rxe_xfer, guest_interop.sh) against
# inc-rc-peer on the host side of the guest's tap (host_interop.sh, in the lab's namespace).
# Both ends check the data: rxe_xfer and inc-rc-peer check every byte, completion and
# immediate of SEND / SEND with immediate / RDMA WRITE / WRITE with immediate in both
# directions; in pingpong cases inc-rc-peer checks the echo of its pattern data.
#
# -w PCAP captures UDP 4791 on the tap (rxe_lab.sh writes PCAP with .g1n0.pcap for .pcap).
# Plan (default tests/lab/rxe_interop.plan): one case a line, "name | kind | guest args | host
# args [| netdev MTU]", kind pp-gserver (guest is the ibv_rc_pingpong server), pp-gclient (guest
# is the client) or xfer (guest runs rxe_xfer, inc-rc-peer drives it); '#' starts a comment.
#
# Prints one line per case,
#   CASE <name> PASS|FAIL host: <inc-rc-peer verdict, bytes, our retransmissions, timeouts,
#                              injected loss, NAKs, duplicates> | guest: <rc, rxe's counters>
# then "RXE_INTEROP PASS|FAIL cases=N failed=M wall=S". Exit 0 only when every case passed on
# both sides; 1 otherwise; 2 on usage errors. Needs root, /dev/net/tun, the lab packages
# (deploy/install.sh), gcc and libibverbs-dev. About 2-4 minutes on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PEER=""; PLAN=$ROOT/tests/lab/rxe_interop.plan; OUTDIR=""; KEEP=0; TIMEOUT=600; PCAPARGS=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --inc-rc-peer) PEER=$2; shift 2;;
    --plan) PLAN=$2; shift 2;;
    --out) OUTDIR=$2; shift 2;;
    --keep) KEEP=1; shift;;
    -t|--timeout) TIMEOUT=$2; shift 2;;
    -w|--pcap) PCAPARGS=(-w "$2"); shift 2;;
    -h|--help) usage; exit 0;;
    *) echo "rxe_interop.sh: unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
[ -n "$PEER" ] || { echo "rxe_interop.sh: --inc-rc-peer PATH is required" >&2; exit 2; }
PEER=$(cd "$(dirname "$PEER")" && pwd)/$(basename "$PEER")
[ -x "$PEER" ] || { echo "rxe_interop.sh: $PEER is not an executable" >&2; exit 2; }
[ -f "$PLAN" ] || { echo "rxe_interop.sh: no plan $PLAN" >&2; exit 2; }
command -v gcc > /dev/null || { echo "rxe_interop.sh: needs gcc" >&2; exit 2; }

T0=$(date +%s)
TMP=${OUTDIR:-$(mktemp -d "${TMPDIR:-/tmp}/epic-rxe-interop.XXXXXX")}
mkdir -p "$TMP"
cleanup() { if [ "$KEEP" = 1 ] || [ -n "$OUTDIR" ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT

gcc -O2 -Wall -Wextra -Werror -o "$TMP/rxe_xfer" "$HERE/rxe_xfer.c" -libverbs
cp "$PLAN" "$TMP/interop.plan"
RUN=$TMP/run
SWITCH="$(printf '%q ' "$HERE/host_interop.sh" "$PEER" "$RUN/share")"
lab_rc=0
"$HERE/rxe_lab.sh" --no-bridge "${PCAPARGS[@]}" -o "$RUN" -f "$TMP/rxe_xfer" -f "$TMP/interop.plan" -t "$TIMEOUT" \
  --switch "$SWITCH" 1 "$HERE/guest_interop.sh" || lab_rc=$?
echo "lab: rc=$lab_rc"

# one line per case: both sides' verdicts and what each saw
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
total=0; failed=0
while IFS='|' read -r name kind _; do
  name=$(echo $name)
  case $name in ''|'#'*) continue;; esac
  total=$((total + 1))
  h=$(grep -h "^HOST_CASE $name " "$RUN/share/host_cases.txt" 2>/dev/null | tail -n 1 || true)
  g=$(grep -h "^GUEST_CASE $name " "$RUN/share/guest_cases.txt" 2>/dev/null | tail -n 1 || true)
  hrc=$(field rc "$h"); grc=$(field rc "$g")
  verdict=FAIL
  if [ "$hrc" = 0 ] && [ "$grc" = 0 ] && grep -q 'INC_RC_PEER PASS' <<< "$h"; then verdict=PASS; fi
  [ $verdict = PASS ] || failed=$((failed + 1))
  hs="rc=${hrc:-none} bytes=$(field bytes "$h") retransmits=$(field retransmits "$h")"
  hs="$hs timeouts=$(field timeouts "$h")"
  hs="$hs loss_tx/ack/rx=$(field tx_loss_injected "$h")/$(field ack_loss_injected "$h")/$(field rx_loss_injected "$h")"
  hs="$hs nak_rx/tx=$(field rx_nak_seq "$h")/$(field tx_nak_seq "$h") dup_rx=$(field rx_duplicate "$h")"
  hs="$hs time=$(field time "$h")"
  gs="rc=${grc:-none} ${g#*rxe: }"
  [ -n "$g" ] || gs="no result"
  printf 'CASE %-16s %s  host: %s | guest rxe: %s\n' "$name" "$verdict" "$hs" "$gs"
done < "$TMP/interop.plan"
wall=$(( $(date +%s) - T0 ))
if [ "$lab_rc" != 0 ] && [ $failed = 0 ]; then failed=1; echo "the lab run itself failed (rc=$lab_rc)"; fi
if [ $failed != 0 ] || [ $total = 0 ]; then
  echo "--- guest output ($RUN/share/out.g1.log, tail):"; tail -n 40 "$RUN/share/out.g1.log" 2>/dev/null || true
  echo "--- host output ($RUN/switch.log, tail):"; tail -n 40 "$RUN/switch.log" 2>/dev/null || true
  KEEP=1
fi
echo "RXE_INTEROP $([ $failed = 0 ] && [ $total -gt 0 ] && echo PASS || echo FAIL) cases=$total failed=$failed wall=${wall}s"
[ $failed = 0 ] && [ $total -gt 0 ]
