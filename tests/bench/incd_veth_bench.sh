#!/usr/bin/env bash
# incd_veth_bench.sh: frames/s forwarded by incd (two af_packet ports, no groups: the L2
# switch path with the ICRC check of transit RoCEv2) versus a plain DPDK forwarder,
# dpdk-testpmd in io mode, on the same veths, in the same run, interleaved:
#
#   ns S: veth_blast send --veth-- ns W: incd | dpdk-testpmd --veth-- ns R: veth_blast recv
#
# Each rep runs both forwarders (order alternates: A B, B A, ...); a forwarder's figure is
# the receiver's rate, (frames - 1) / (last arrival - first arrival), while the sender
# sends N RoCEv2 frames as fast as its socket accepts them, closed loop: at most --window
# frames (512) sent and not yet received, so neither forwarder is overrun (open loop,
# --window 0, loses most frames and gives chaotic figures).
# Both forwarders use the af_packet PMD with framecnt=4096, one busy-polling worker
# lcore and bursts of 32.
# Prints JSON lines: one per run, then the ratio incd/testpmd per rep and its median.
#
# usage: tests/bench/incd_veth_bench.sh [--reps N] [--frames N] [--size BYTES] [--window W]
#                                       [--quick] [--build DIR] [--json]
#   BUILD dir (default $EPIC_BENCH_BUILD or build/release) must hold daemon/incd and
#   tests/bench/veth_blast. Needs root (network namespaces); exits 77 (skip) without it.
# Creates namespaces/veths with unique names and deletes them on exit; kills only its PIDs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${EPIC_BENCH_BUILD:-$ROOT/build/release}
REPS=3
FRAMES=200000
SIZE=256
WINDOW=512   # closed loop: frames in flight (0: open loop, the sender overruns the forwarder)
MAX_S=300  # wall-clock limit of the whole run
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --frames) FRAMES=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --window) WINDOW=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --quick) REPS=1; FRAMES=50000; MAX_S=90; shift ;;
    --json) shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "incd_veth_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done

skip() { echo "{\"bench\":\"incd_veth\",\"skip\":\"$1\"}"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, AF_PACKET)"
INCD=$BUILD/daemon/incd
BLAST=$BUILD/tests/bench/veth_blast
TESTPMD=$(command -v dpdk-testpmd || true)
[ -x "$INCD" ] || { echo "incd_veth_bench: no $INCD (build target incd)" >&2; exit 1; }
[ -x "$BLAST" ] || { echo "incd_veth_bench: no $BLAST (build target veth_blast)" >&2; exit 1; }
[ -n "$TESTPMD" ] || skip "dpdk-testpmd not installed (Debian package dpdk)"
if ! command -v ip >/dev/null || ! command -v ethtool >/dev/null; then
  skip "needs iproute2 and ethtool"
fi

ID=ivb$(($$ % 100000))
NS_S=${ID}s NS_W=${ID}w NS_R=${ID}r
IF_S=${ID}s0 IF_WA=${ID}wa IF_WB=${ID}wb IF_R=${ID}r0  # <= 15 characters
MAC_S=02:1b:00:00:00:01 MAC_R=02:1b:00:00:00:02
TMP=$(mktemp -d /tmp/incd_veth_bench.XXXXXX)
PIDS=()  # our live background processes (removed once reaped: a PID is never reused on us)
WATCHDOG=
untrack() { local keep=() p; for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; PIDS=("${keep[@]}"); }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${PIDS[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  if [ -n "$WATCHDOG" ]; then kill -TERM "$WATCHDOG" 2>/dev/null || true; fi  # it kills its sleep
  for ns in "$NS_S" "$NS_W" "$NS_R"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
(
  sleep "$MAX_S" &
  s=$!
  trap 'kill $s 2>/dev/null; exit 0' TERM
  wait $s
  echo "incd_veth_bench: wall-clock limit of ${MAX_S}s reached" >&2
  kill -TERM $$
) &
WATCHDOG=$!

# --- topology ---------------------------------------------------------------------------
for ns in "$NS_S" "$NS_W" "$NS_R"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip link add "$IF_S" netns "$NS_S" type veth peer name "$IF_WA" netns "$NS_W"
ip link add "$IF_R" netns "$NS_R" type veth peer name "$IF_WB" netns "$NS_W"
ip -n "$NS_S" link set "$IF_S" address "$MAC_S"
ip -n "$NS_R" link set "$IF_R" address "$MAC_R"
for pair in "$NS_S:$IF_S" "$NS_W:$IF_WA" "$NS_W:$IF_WB" "$NS_R:$IF_R"; do
  ns=${pair%%:*} ifn=${pair#*:}
  ip -n "$ns" link set "$ifn" up
  # veth TX leaves partial checksums, which a forwarded frame would carry (docs/incd.md, offloads on veth)
  ip netns exec "$ns" ethtool -K "$ifn" tx off tso off gso off gro off >/dev/null 2>&1 || true
done

cat > "$TMP/incd.json" <<EOF
{
 "eal": {"lcores": "0-1", "hugepages": false, "memory_mb": 512,
         "file_prefix": "${ID}-incd", "log_level": "warning"},
 "workers": 1, "burst": 32, "idle_sleep_us": 0,
 "ports": [
  {"name": "a", "device": "net_af_packet0,iface=${IF_WA},framecnt=4096", "mtu": 1500},
  {"name": "b", "device": "net_af_packet1,iface=${IF_WB},framecnt=4096", "mtu": 1500}
 ],
 "switch": {"inc_addresses": [{"ipv4": "10.110.0.254", "mac": "02:ec:00:00:00:fe"}],
            "l2_aging_s": 300, "l2_table_size": 4096, "bad_icrc": "pass"},
 "faults": [], "groups": [],
 "metrics": {"listen": ""},
 "log": {"level": "info", "file": ""}
}
EOF

FWD_PID=
start_forwarder() {  # $1 = incd | testpmd
  local log=$TMP/$1.log
  case "$1" in
    incd)
      ip netns exec "$NS_W" "$INCD" -c "$TMP/incd.json" >"$log" 2>&1 </dev/null &
      ;;
    testpmd)
      # --stats-period keeps the non-interactive testpmd running until a signal (with 0 it
      # would wait for a key on stdin); io mode forwards port 0 <-> port 1 untouched.
      ip netns exec "$NS_W" "$TESTPMD" -l 0-1 --no-huge -m 512 --no-pci --no-shconf \
        --no-telemetry --file-prefix "${ID}-tp" --log-level=lib.eal:warning \
        "--vdev=net_af_packet0,iface=${IF_WA},framecnt=4096" \
        "--vdev=net_af_packet1,iface=${IF_WB},framecnt=4096" -- \
        --forward-mode=io --auto-start --stats-period 3600 --nb-cores=1 --rxq=1 --txq=1 \
        --burst=32 --total-num-mbufs=16384 >"$log" 2>&1 </dev/null &
      ;;
  esac
  FWD_PID=$!  # ip netns exec execs the program: this is its PID
  PIDS+=("$FWD_PID")
  # Ready once a frame crosses it: R -> S (this also teaches incd where R's MAC lives).
  local deadline=$((SECONDS + 30))
  while :; do
    if ! kill -0 "$FWD_PID" 2>/dev/null; then
      echo "incd_veth_bench: $1 exited:" >&2; tail -20 "$log" >&2; return 1
    fi
    rm -f "$TMP/ready"
    ip netns exec "$NS_S" "$BLAST" recv "$IF_S" --count 1 --src "$MAC_R" --dst "$MAC_S" \
      --timeout 0.5 --ready-file "$TMP/ready" >"$TMP/probe.json" &
    local probe=$!
    PIDS+=("$probe")
    while [ ! -e "$TMP/ready" ] && kill -0 "$probe" 2>/dev/null; do sleep 0.02; done
    ip netns exec "$NS_R" "$BLAST" prime "$IF_R" --count 3 --src "$MAC_R" --dst "$MAC_S" >/dev/null
    wait "$probe" || true
    untrack "$probe"
    grep -q '"received":[1-9]' "$TMP/probe.json" && break
    if [ $SECONDS -ge $deadline ]; then
      echo "incd_veth_bench: $1 forwarded nothing within 30 s:" >&2; tail -20 "$log" >&2; return 1
    fi
  done
}

stop_forwarder() {
  kill -INT "$FWD_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$FWD_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$FWD_PID" 2>/dev/null || true
  wait "$FWD_PID" 2>/dev/null || true
  untrack "$FWD_PID"
}

json_field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"; }

run_one() {  # $1 = forwarder, $2 = rep; prints one JSON line
  start_forwarder "$1"
  rm -f "$TMP/ready"
  ip netns exec "$NS_R" "$BLAST" recv "$IF_R" --count "$FRAMES" --src "$MAC_S" --dst "$MAC_R" \
    --idle 1.0 --timeout 60 --ready-file "$TMP/ready" --shared "$TMP/count" >"$TMP/rx.json" &
  local rx=$!
  PIDS+=("$rx")
  while [ ! -e "$TMP/ready" ] && kill -0 "$rx" 2>/dev/null; do sleep 0.02; done
  local win=()
  [ "$WINDOW" -gt 0 ] && win=(--window "$WINDOW" --shared "$TMP/count")
  ip netns exec "$NS_S" timeout 60 "$BLAST" send "$IF_S" --count "$FRAMES" --size "$SIZE" \
    --src "$MAC_S" --dst "$MAC_R" "${win[@]}" >"$TMP/tx.json"
  wait "$rx"
  untrack "$rx"
  stop_forwarder
  local pps rcv sent spps bytes stalls
  pps=$(json_field "$TMP/rx.json" pps) rcv=$(json_field "$TMP/rx.json" received)
  sent=$(json_field "$TMP/tx.json" sent) spps=$(json_field "$TMP/tx.json" pps)
  bytes=$(json_field "$TMP/tx.json" frame_bytes) stalls=$(json_field "$TMP/tx.json" stalls)
  echo "{\"bench\":\"incd_veth\",\"metric\":\"forwarded\",\"forwarder\":\"$1\",\"rep\":$2,\"pps\":$pps,\"received\":$rcv,\"sent\":$sent,\"send_pps\":$spps,\"frame_bytes\":$bytes,\"window\":$WINDOW,\"window_stalls\":$stalls,\"lost\":$((sent - rcv))}"
}

RESULTS=$TMP/results.jsonl
: >"$RESULTS"
for rep in $(seq 0 $((REPS - 1))); do
  if [ $((rep % 2)) = 0 ]; then order="incd testpmd"; else order="testpmd incd"; fi
  for f in $order; do
    run_one "$f" "$rep" >"$TMP/run.json"  # not in a pipeline: PIDS must stay in this shell
    cat "$TMP/run.json" >>"$RESULTS"
    cat "$TMP/run.json"
  done
done

# Ratio incd/testpmd per rep, median and spread.
/usr/bin/env python3 - "$RESULTS" "$FRAMES" <<'EOF'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
reps = sorted({r["rep"] for r in runs})
def pps(f, rep): return next(r["pps"] for r in runs if r["forwarder"] == f and r["rep"] == rep)
ratios = [pps("incd", k) / pps("testpmd", k) if pps("testpmd", k) else 0.0 for k in reps]
def med(v): s = sorted(v); return s[len(s) // 2]
out = {"bench": "incd_veth", "metric": "incd_vs_testpmd", "frames": int(sys.argv[2]),
       "frame_bytes": runs[0]["frame_bytes"], "window": runs[0]["window"], "reps": len(reps)}
for f in ("incd", "testpmd"):
    v = [pps(f, k) for k in reps]
    out[f] = {"median_pps": med(v), "min_pps": min(v), "max_pps": max(v)}
out.update({"ratio_median": round(med(ratios), 4), "ratio_min": round(min(ratios), 4),
            "ratio_max": round(max(ratios), 4), "ratio_per_rep": [round(r, 4) for r in ratios]})
print(json.dumps(out, separators=(",", ":")))
EOF
