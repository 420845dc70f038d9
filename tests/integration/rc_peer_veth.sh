#!/usr/bin/env bash
# rc_peer_veth.sh - two inc-rc-peer endpoints in two network namespaces joined by a veth pair.
#   rc_peer_veth.sh INC_RC_PEER
# Creates epicrc-<pid>-<rand>-{a,b} and a veth pair (offloads off, as the lab notes require),
# gives each namespace a kernel address (the TCP exchange) and each endpoint its own address
# and MAC (it answers ARP itself), then runs, each bounded by a timeout:
#   xfer           the SEND/SEND_IMM/WRITE/WRITE_IMM matrix both ways, 0 B .. 1 MiB, PSNs at the wrap
#   xfer_loss      the same with seeded loss on both sides (outgoing, incoming ACKs, incoming requests)
#   pingpong_loss  ibv_rc_pingpong's exchange between two inc-rc-peers, with loss
# Prints "CASE <name> PASS|FAIL <controller summary> | <agent summary>" and
# "RC_PEER_VETH PASS|FAIL". Everything it created is removed on exit, failure included;
# only processes it started are stopped, by PID. Needs root.
set -uo pipefail
PEER=$1
SFX=$$-$RANDOM
NA=epicrc-$SFX-a; NB=epicrc-$SFX-b; VA=vrc${RANDOM}a; VB=${VA%a}b
TMP=$(mktemp -d "${TMPDIR:-/tmp}/epic-rc-veth.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NA" && ip netns add "$NB" || { echo "cannot create network namespaces"; exit 1; }
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB" || { echo "cannot create veth"; exit 1; }
for x in "$NA $VA 10.78.0.1" "$NB $VB 10.78.0.2"; do
  set -- $x
  ip -n "$1" link set lo up; ip -n "$1" link set "$2" up; ip -n "$1" addr add "$3/24" dev "$2"
  ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off > /dev/null 2>&1 || true
done

# run_case NAME "AGENT ARGS" "CONTROLLER ARGS" (MODE first in both)
failed=0
run_case() {
  local name=$1 aargs=$2 cargs=$3 arc crc a c
  ip netns exec "$NA" timeout 120 "$PEER" $aargs -I "$VA" --ip 10.78.0.11 --label "$name" \
    --connect-timeout 30 -t 30 < /dev/null > "$TMP/$name.agent" 2>&1 &
  local apid=$!; PIDS+=("$apid")
  ip netns exec "$NB" timeout 120 "$PEER" $cargs -I "$VB" --ip 10.78.0.12 --label "$name" \
    --connect-timeout 30 -t 30 10.78.0.1 < /dev/null > "$TMP/$name.ctl" 2>&1; crc=$?
  wait "$apid"; arc=$?
  a=$(grep '^INC_RC_PEER' "$TMP/$name.agent" | tail -n 1); c=$(grep '^INC_RC_PEER' "$TMP/$name.ctl" | tail -n 1)
  if [ $arc = 0 ] && [ $crc = 0 ]; then
    echo "CASE $name PASS ${c#INC_RC_PEER PASS } | ${a#INC_RC_PEER PASS }"
  else
    failed=$((failed + 1))
    echo "CASE $name FAIL controller rc=$crc agent rc=$arc"
    echo "--- controller:"; tail -n 15 "$TMP/$name.ctl"; echo "--- agent:"; tail -n 15 "$TMP/$name.agent"
  fi
}

T0=$(date +%s)
run_case xfer "xfer --psn 0xfffff0" "xfer --psn 0xffff80"
run_case xfer_loss "xfer --tx-loss 0.03 --ack-loss 0.1 --rx-loss 0.03 --seed 21 --rto-ms 20" \
  "xfer --tx-loss 0.03 --ack-loss 0.1 --rx-loss 0.03 --seed 22 --rto-ms 20"
run_case pingpong_loss "pingpong -s 3000 -n 50 --tx-loss 0.05 --ack-loss 0.05 --rx-loss 0.05 --seed 23 --rto-ms 20" \
  "pingpong -s 3000 -n 50 --tx-loss 0.05 --ack-loss 0.05 --rx-loss 0.05 --seed 24 --rto-ms 20"
echo "RC_PEER_VETH $([ $failed = 0 ] && echo PASS || echo FAIL) failed=$failed wall=$(( $(date +%s) - T0 ))s"
[ $failed = 0 ]
