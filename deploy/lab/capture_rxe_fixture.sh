#!/usr/bin/env bash
# capture_rxe_fixture.sh - regenerate the Soft-RoCE wire fixtures in tests/fixtures/rxe/ (EPIC).
#
#   deploy/lab/capture_rxe_fixture.sh            IPv4 RoCEv2 -> tests/fixtures/rxe/rxe_rc_ipv4.pcap
#   deploy/lab/capture_rxe_fixture.sh --ipv6     IPv6 RoCEv2 -> tests/fixtures/rxe/rxe_rc_ipv6.pcap
#   deploy/lab/capture_rxe_fixture.sh --all      both
#   options: --out-dir DIR (default tests/fixtures/rxe), --keep (keep the lab run directories)
#
# Builds deploy/lab/rxe_traffic.c on the host, boots two lab guests (rxe_lab.sh), runs the
# rxe_traffic server in guest 1 and its client in guest 2 (guest_rxe_traffic.sh), captures UDP
# 4791 on the bridge between them, and installs the capture (plus NAME.guests.txt, the two ends'
# output: QPNs, PSNs, rkeys, buffer addresses) only when both ends printed
# "RXE_TRAFFIC PASS" and check_rxe_pcap.py passed (every ICRC, all 18 RC opcodes).  Prints the
# opcode histogram (tshark).  Needs root and the lab packages (deploy/install.sh), gcc and
# libibverbs-dev; takes about 15-30 s per capture on two cores.
set -euo pipefail
trap 'echo "capture_rxe_fixture.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=$ROOT/tests/fixtures/rxe
FAMILIES=(4); KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --ipv6) FAMILIES=(6); shift;;
    --all) FAMILIES=(4 6); shift;;
    --out-dir) OUTDIR=$2; shift 2;;
    --keep) KEEP=1; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
for t in gcc tshark /usr/bin/python3; do command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 2; }; done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/epic-rxe-fixture.XXXXXX")
cleanup() { if [ "$KEEP" = 1 ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT

gcc -O2 -Wall -Wextra -Werror -o "$TMP/rxe_traffic" "$HERE/rxe_traffic.c" -libverbs
mkdir -p "$OUTDIR"

for fam in "${FAMILIES[@]}"; do
  name=rxe_rc_ipv$fam.pcap
  echo "FAMILY=$fam" > "$TMP/traffic.env"
  LABARGS=(-o "$TMP/run$fam" -w "$TMP/$name" -f "$TMP/rxe_traffic" -f "$TMP/traffic.env" -t 600)
  [ "$fam" = 6 ] && LABARGS+=(--ipv6)
  T0=$(date +%s)
  rc=0; "$HERE/rxe_lab.sh" "${LABARGS[@]}" 2 "$HERE/guest_rxe_traffic.sh" || rc=$?
  echo "lab run (IPv$fam): rc=$rc, $(( $(date +%s) - T0 )) s wall"
  for g in 1 2; do
    grep -h 'RXE_TRAFFIC' "$TMP/run$fam/share/out.g$g.log" 2>/dev/null || echo "guest $g: no RXE_TRAFFIC line"
  done
  pass=$(cat "$TMP"/run"$fam"/share/out.g[12].log 2>/dev/null | grep -c '^RXE_TRAFFIC PASS' || true)
  if [ "$rc" != 0 ] || [ "$pass" != 2 ]; then
    echo "IPv$fam capture FAILED; guest output:" >&2
    cat "$TMP"/run"$fam"/share/out.g*.log >&2 2>/dev/null || true
    KEEP=1; exit 1
  fi
  /usr/bin/python3 "$HERE/check_rxe_pcap.py" "$TMP/$name" --require-all-rc || { KEEP=1; exit 1; }
  cp "$TMP/$name" "$OUTDIR/$name"
  # the two ends' own account (QPNs, PSNs, rkeys, buffer addresses, verdicts) beside the capture
  for g in 1 2; do
    echo "### guest $g ($([ $g = 1 ] && echo server || echo client))"
    grep -v '^ ' "$TMP/run$fam/share/out.g$g.log"
  done > "$OUTDIR/${name%.pcap}.guests.txt"
  echo "wrote $OUTDIR/$name ($(stat -c %s "$OUTDIR/$name") bytes) and ${name%.pcap}.guests.txt"
  echo "opcode histogram (tshark -r $name -T fields -e infiniband.bth.opcode | sort | uniq -c):"
  tshark -r "$OUTDIR/$name" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c
done
