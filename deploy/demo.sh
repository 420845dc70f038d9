#!/usr/bin/env bash
# EPIC's main job (README quick start):  deploy/demo.sh [--ranks N] [--reps K]
#
# Installs what it needs (deploy/install.sh), builds the optimized tree (build/release), then
# runs the netns demo (deploy/netns/incd_demo.py): incd in a switch namespace on DPDK
# af_packet ports and N (default 8) rank processes in their own namespaces, every primitive at
# several sizes, each result verified bit for bit and timed; prints a table and incd's metrics,
# and removes everything it created. Needs root. The manager (trees and memory grants over
# gRPC) is not built yet: groups are static in incd's configuration.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ "$(id -u)" = 0 ] || { echo "demo.sh: needs root (network namespaces, AF_PACKET, DPDK)" >&2; exit 1; }

"$ROOT/deploy/install.sh"
BUILD=$ROOT/build/release
[ -f "$BUILD/build.ninja" ] || cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)" --target incd inc-rank inc-wire

echo
for f in "$ROOT"/tests/fixtures/rxe/rxe_rc_ipv4.pcap; do
  echo "== inc-wire verify ${f#"$ROOT"/}  (RoCEv2 frames captured from Linux rdma_rxe ranks)"
  "$BUILD/tools/inc-wire/inc-wire" verify "$f" | tail -n 2
done
echo
exec /usr/bin/python3 "$ROOT/deploy/netns/incd_demo.py" "$BUILD" "$@"
