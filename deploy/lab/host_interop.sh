#!/usr/bin/env bash
# host_interop.sh - host side of rxe_interop.sh: runs inside the lab's network namespace as the
# rxe_lab.sh --switch command, on the first guest's tap ($EPICLAB_TAPS).
#   host_interop.sh INC_RC_PEER SHARE_DIR
# Gives the tap the kernel address 10.9.0.100/24 (the out-of-band TCP exchange) and runs EPIC's
# user-space endpoint, inc-rc-peer, as 10.9.0.200 (its own MAC; it answers ARP itself, the
# kernel never sees its RoCE traffic) for every case of SHARE_DIR/interop.plan, in order:
#   pp-gserver  inc-rc-peer pingpong ... 10.9.0.1   (client of the guest's ibv_rc_pingpong)
#   pp-gclient  inc-rc-peer pingpong ...            (server for the guest's ibv_rc_pingpong)
#   xfer        inc-rc-peer xfer ... 10.9.0.1       (controller of the guest's rxe_xfer)
# Each case: TCP port 18600+i, QPN 0x100+i, the tap's MTU from the plan's optional 5th column,
# bounded by timeout. Writes SHARE_DIR/host.<name>.log,
# one "HOST_CASE <name> rc=<rc> time=<s> <INC_RC_PEER line>" per case to SHARE_DIR/host_cases.txt,
# and finally SHARE_DIR/host.done (the guest waits for it before powering off).
set -uo pipefail
PEER=$1; SHARE=$2
GUEST_IP=10.9.0.1; KERNEL_IP=10.9.0.100; ENDPOINT_IP=10.9.0.200
TAP=${EPICLAB_TAPS%% *}
OUT=$SHARE/host_cases.txt
: > "$OUT"
trap 'touch "$SHARE/host.done"' EXIT

ip addr add "$KERNEL_IP/24" dev "$TAP"
# the kernel's TCP frames must leave with complete checksums (the guest NIC checks them)
ethtool -K "$TAP" tx off tso off gso off > /dev/null 2>&1 || true
echo "host: tap $TAP, kernel $KERNEL_IP, endpoint $ENDPOINT_IP"

idx=0
while IFS='|' read -r name kind gargs hargs mtu; do
  name=$(echo $name); kind=$(echo $kind); mtu=$(echo $mtu)
  case $name in ''|'#'*) continue;; esac
  port=$((18600 + idx)); qpn=$((0x100 + idx)); idx=$((idx + 1))
  # the first case also waits for the guest to boot
  ct=60; [ $idx = 1 ] && ct=240
  common=(-I "$TAP" --ip "$ENDPOINT_IP" -p "$port" --qpn "$qpn" --label "$name" -t 60 --connect-timeout "$ct")
  case $kind in
    pp-gserver) cmd=("$PEER" pingpong "${common[@]}" $hargs "$GUEST_IP") ;;
    pp-gclient) cmd=("$PEER" pingpong "${common[@]}" $hargs) ;;
    xfer)       cmd=("$PEER" xfer "${common[@]}" $hargs "$GUEST_IP") ;;
    *) echo "HOST_CASE $name rc=2 time=0s unknown kind $kind" >> "$OUT"; continue ;;
  esac
  echo "=== host case $name ($kind) port $port: ${cmd[*]}"
  [ -n "$mtu" ] && ip link set "$TAP" mtu "$mtu"
  t0=$(date +%s)
  timeout -k 5 $((ct + 240)) "${cmd[@]}" < /dev/null > "$SHARE/host.$name.log" 2>&1; rc=$?
  res=$(grep '^INC_RC_PEER ' "$SHARE/host.$name.log" | tail -n 1)
  echo "HOST_CASE $name rc=$rc time=$(( $(date +%s) - t0 ))s ${res:-no summary line}" | tee -a "$OUT"
  [ -n "$mtu" ] && ip link set "$TAP" mtu 1500
  [ $rc = 0 ] || tail -n 5 "$SHARE/host.$name.log"
done < "$SHARE/interop.plan"
echo "host: all cases done"
