#!/usr/bin/env bash
# Benchmark entry point:  tests/bench/run.sh NAME [ARGS...]
#   Builds the optimized tree (build/release, Release, no sanitizers) if needed and
#   runs benchmark NAME, which prints JSON lines on stdout. `run.sh --list` lists them.
#   tests/bench/run.sh compare OLD_REV [--rounds N]: the engine and incd loop benchmarks
#   of OLD_REV and of this tree, built side by side, interleaved, new/old ratios.
# Example: tests/bench/run.sh wire_bench --reps 9 > wire.jsonl
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${EPIC_BENCH_BUILD:-$ROOT/build/release}
BENCHES=(wire_bench arith_bench engine_bench incd_loop_bench incd_veth_bench loss_tolerance)
case "${1:-}" in
  ""|-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --list) printf '%s\n' "${BENCHES[@]}" compare; exit 0 ;;
  compare) shift; EPIC_BENCH_BUILD=$BUILD exec /usr/bin/python3 "$ROOT/tests/bench/compare.py" "$@" ;;
esac
NAME=$1; shift
printf '%s\n' "${BENCHES[@]}" | grep -qx "$NAME" || { echo "run.sh: unknown benchmark '$NAME' (try --list)" >&2; exit 2; }
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
if [ "$NAME" = incd_veth_bench ]; then  # a script: incd vs dpdk-testpmd over veths (root)
  cmake --build "$BUILD" --target incd veth_blast >&2
  EPIC_BENCH_BUILD=$BUILD exec "$ROOT/tests/bench/incd_veth_bench.sh" --json "$@"
fi
cmake --build "$BUILD" --target "$NAME" >&2
BIN=$(find "$BUILD/tests/bench" -maxdepth 1 -type f -name "$NAME" | head -1)
exec "$BIN" --json "$@"
