# guest_interop.sh - guest side of rxe_interop.sh (runs in lab guest 1, busybox sh).
#   sh /mnt/guest.sh 1
# Runs the real RDMA side of every case of /mnt/interop.plan (see rxe_interop.sh), in order
# (with the case's netdev MTU when the plan gives one),
# against inc-rc-peer on the host side of the tap (10.9.0.100 kernel, 10.9.0.200 endpoint):
#   pp-gserver  ibv_rc_pingpong -g GIDX -p PORT ARGS            (our endpoint connects)
#   pp-gclient  ibv_rc_pingpong -g GIDX -p PORT ARGS 10.9.0.100 (retried until our server listens)
#   xfer        rxe_xfer -g GIDX -p PORT ARGS                   (our endpoint drives it)
# and records one line per case in /mnt/guest_cases.txt:
#   GUEST_CASE <name> rc=<rc> time=<s> rxe: <rdma_rxe hw counter deltas>
# Then waits (bounded) for the host side to finish (/mnt/host.done) so the lab keeps running.
ID=$1
HOST_KERNEL_IP=10.9.0.100
D=/sys/class/infiniband/rxe0/ports/1
OUT=/mnt/guest_cases.txt
: > "$OUT"

# the IPv4-mapped RoCEv2 GID
GIDX=""
for t in "$D"/gid_attrs/types/*; do
  i=${t##*/}
  [ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
  case $(cat "$D/gids/$i") in 0000:0000:0000:0000:0000:ffff:*) GIDX=$i; break;; esac
done
[ -n "$GIDX" ] || { echo "g$ID: no IPv4 RoCEv2 GID"; exit 1; }
echo "g$ID: kernel $(uname -r), rxe0 GID index $GIDX: $(cat "$D/gids/$GIDX")"
cp /mnt/rxe_xfer /tmp/rxe_xfer && chmod +x /tmp/rxe_xfer || exit 1

# rdma_rxe's own view of the traffic: packets, duplicates and out-of-sequence requests it saw,
# NAK-sequence errors it received, and its retransmissions (completer_retry_err).
COUNTERS="sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_seq_err completer_retry_err retry_exceeded_err rcvd_rnr_err send_rnr_err"
snap() { for c in $COUNTERS; do echo "$c=$(cat $D/hw_counters/$c 2>/dev/null || echo 0)"; done; }
delta() { # BEFORE AFTER
  for c in $COUNTERS; do
    b=$(echo "$1" | sed -n "s/^$c=//p"); a=$(echo "$2" | sed -n "s/^$c=//p")
    printf '%s=%s ' "$c" $(( ${a:-0} - ${b:-0} ))
  done
}

fails=0; idx=0
while IFS='|' read -r name kind gargs hargs mtu; do
  name=$(echo $name); kind=$(echo $kind); mtu=$(echo $mtu)
  case $name in ''|'#'*) continue;; esac
  port=$((18600 + idx)); idx=$((idx + 1))
  echo "=== g$ID case $name ($kind) port $port: $gargs"
  # an optional 5th column sets the netdev MTU for the case (rxe's port MTU follows it)
  [ -n "$mtu" ] && { /usr/sbin/ip link set eth0 mtu "$mtu"; sleep 1; echo "g$ID: eth0 mtu $mtu, rxe0 active MTU $(ibv_devinfo -d rxe0 2>/dev/null | sed -n "s/.*active_mtu:[[:space:]]*//p")"; }
  before=$(snap); t0=$(date +%s)
  case $kind in
    pp-gserver)
      timeout 120 ibv_rc_pingpong -g "$GIDX" -p "$port" $gargs < /dev/null; rc=$? ;;
    pp-gclient)
      rc=1
      for try in $(seq 120); do
        timeout 120 ibv_rc_pingpong -g "$GIDX" -p "$port" $gargs "$HOST_KERNEL_IP" < /dev/null > /tmp/pp.out 2>&1; rc=$?
        grep -q "Couldn't connect" /tmp/pp.out || break
        sleep 0.5
      done
      cat /tmp/pp.out ;;
    xfer)
      timeout 300 /tmp/rxe_xfer -g "$GIDX" -p "$port" -t 60 $gargs < /dev/null; rc=$? ;;
    *) echo "unknown kind $kind"; rc=2 ;;
  esac
  after=$(snap)
  [ -n "$mtu" ] && /usr/sbin/ip link set eth0 mtu 1500
  line="GUEST_CASE $name rc=$rc time=$(( $(date +%s) - t0 ))s rxe: $(delta "$before" "$after")"
  echo "$line"; echo "$line" >> "$OUT"
  [ "$rc" = 0 ] || fails=$((fails + 1))
done < /mnt/interop.plan

echo "g$ID: cases done, $fails failed; waiting for the host side"
for i in $(seq 240); do [ -f /mnt/host.done ] && break; sleep 0.5; done
[ -f /mnt/host.done ] || echo "g$ID: the host side did not finish within 120 s"
/usr/sbin/ip -s link show dev eth0 | sed -n '3,6p'
[ $fails = 0 ]
