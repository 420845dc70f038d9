#!/usr/bin/env bash
# rxe_lab.sh - boot N qemu guests with Soft-RoCE (rdma_rxe) and run a script in each (EPIC lab).
#
# Usage:
#   deploy/lab/rxe_lab.sh [options] N GUEST_SCRIPT
#   deploy/lab/rxe_lab.sh --cleanup        remove netns left by lab runs whose shell is gone
#   deploy/lab/rxe_lab.sh --help
#
# Boots N guests (Debian 6.1 kernel under qemu/TCG, initramfs from build_initramfs.sh, built on
# first use) whose NICs are tap devices inside a fresh host network namespace
# epiclab-<pid>-<random>.  The taps are joined by a bridge br0 (default) or left unbridged
# (--no-bridge) for a user-space switch to open them.  Every guest runs `sh GUEST_SCRIPT <g>`
# from a 9p share mounted on /mnt, then powers off.  Nothing leaves the namespace: the host's
# own interfaces are never touched.
#
# Guest g (1..N), NIC n (0..NICS-1):
#   eth<n>, rxe device rxe<n>, IPv4 10.9.<n>.<g>/24 (GID index 1 = IPv4-mapped RoCEv2 GID),
#   with --ipv6 also fd00:9:<n>::<g>/64 (its RoCEv2 GID is at the next free index, usually 2),
#   host tap e<sfx>g<g>n<n>, MAC 52:54:00:<sfx>:<g>:<n>.  RoCE path MTU 1024 (netdev MTU 1500).
#
# Options (environment variable defaults in brackets):
#   -n, --nics K          NICs (and rxe devices) per guest [NICS=1]
#   -w, --pcap PATH       capture UDP 4791 into PATH: on br0 when bridged; with --no-bridge one
#                         file per tap, PATH with .pcap replaced by .g<g>n<n>.pcap   [PCAP]
#   -f, --file F          copy F into the 9p share (the guest sees /mnt/<basename F>); repeatable
#   -a, --add SRC[:DST]   pack SRC (and the libraries it needs) into the guests' initramfs at DST
#                         (default /usr/local/bin/<basename>); repeatable
#   -o, --out DIR         run directory (share/, console.g<g>.log, tcpdump.log); must be new or
#                         empty.  Default: a new directory under $CACHE/runs/ (the 10
#                         most recent are kept)   [OUT]
#   -6, --ipv6            also give the guests IPv6 ULA addresses   [IPV6=0]
#       --no-bridge       leave the taps unbridged   [BRIDGE=0; default BRIDGE=1]
#       --switch CMD      run CMD (bash -c) inside the namespace once the taps exist, before the
#                         guests boot; $EPICLAB_TAPS lists the taps (g1n0 g1n1 ... g2n0 order);
#                         stopped at teardown   [SWITCH_CMD]
#   -t, --timeout S       bound on the whole run, boot to last power-off   [TIMEOUT=600]
#   -m, --mem MB          guest memory   [MEM=256]
#
# Output: per guest "guest <g>: rc=<rc>", the guest script's output in OUT/share/out.g<g>.log,
# the console in OUT/console.g<g>.log.  Exit status: 0 when every guest script exited 0,
# 1 when one failed or never reported, 124 on timeout, 2 on usage errors.
#
# Teardown always runs (EXIT/INT/TERM): it stops only the qemu, tcpdump and switch processes this
# run started (by PID) and deletes its network namespace (taps and bridge go with it).
# Needs root, /dev/net/tun, qemu-system-x86, tcpdump, iproute2 (deploy/install.sh).
set -euo pipefail
trap 'echo "rxe_lab.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

HERE=$(cd "$(dirname "$0")" && pwd)
CALLER=$PWD
CACHE=${EPIC_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epic-rxe-lab}
NICS=${NICS:-1}; PCAP=${PCAP:-}; OUT=${OUT:-}; IPV6=${IPV6:-0}; BRIDGE=${BRIDGE:-1}
SWITCH_CMD=${SWITCH_CMD:-}; TIMEOUT=${TIMEOUT:-600}; MEM=${MEM:-256}
FILES=(); ADDS=()

usage() { sed -n '2,/^set -euo/p' "$HERE/rxe_lab.sh" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "rxe_lab.sh: $*" >&2; exit 2; }
abspath() { case $1 in /*) echo "$1";; *) echo "$CALLER/$1";; esac; }

cleanup_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^epiclab-[0-9]*-[0-9]*$' || true); do
    pid=${ns#epiclab-}; pid=${pid%%-*}
    if ! kill -0 "$pid" 2>/dev/null; then
      if [ -z "$(ip netns pids "$ns" 2>/dev/null)" ]; then
        ip netns del "$ns" && echo "removed stale $ns"
      else
        echo "kept $ns: processes still inside it: $(ip netns pids "$ns" | tr '\n' ' ')"
      fi
    fi
  done
}

POS=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0;;
    --cleanup) cleanup_stale; exit 0;;
    -n|--nics) NICS=$2; shift 2;;
    -w|--pcap) PCAP=$2; shift 2;;
    -f|--file) FILES+=("$(abspath "$2")"); shift 2;;
    -a|--add) ADDS+=("$2"); shift 2;;
    -o|--out) OUT=$2; shift 2;;
    -6|--ipv6) IPV6=1; shift;;
    --no-bridge) BRIDGE=0; shift;;
    --switch) SWITCH_CMD=$2; shift 2;;
    -t|--timeout) TIMEOUT=$2; shift 2;;
    -m|--mem) MEM=$2; shift 2;;
    --) shift; POS+=("$@"); break;;
    -*) die "unknown option $1 (see --help)";;
    *) POS+=("$1"); shift;;
  esac
done
[ ${#POS[@]} -eq 2 ] || { usage >&2; exit 2; }
N=${POS[0]}; GS=$(abspath "${POS[1]}")
[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 1 ] && [ "$N" -le 200 ] || die "N must be 1..200"
[[ $NICS =~ ^[0-9]+$ ]] && [ "$NICS" -ge 1 ] && [ "$NICS" -le 8 ] || die "NICS must be 1..8"
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "TIMEOUT must be seconds"
[ -f "$GS" ] || die "no guest script $GS"
for f in "${FILES[@]}"; do [ -f "$f" ] || die "no such file $f"; done
[ "$(id -u)" = 0 ] || die "needs root (network namespace, taps)"
[ -c /dev/net/tun ] || die "needs /dev/net/tun"
for t in qemu-system-x86_64 ip; do command -v "$t" >/dev/null || die "needs $t (deploy/install.sh)"; done
[ -z "$PCAP" ] || command -v tcpdump >/dev/null || die "needs tcpdump for --pcap"

# --- kernel + initramfs (idempotent) ------------------------------------------------------------
"$HERE/build_initramfs.sh" | sed 's/^/[build] /'
KERNEL=$CACHE/vmlinuz; INITRD=$CACHE/initrd.cpio.gz

# --- run directory ------------------------------------------------------------------------------
SFX=$(printf '%02x' $((RANDOM % 256)))
NS=epiclab-$$-$RANDOM
if [ -z "$OUT" ]; then
  mkdir -p "$CACHE/runs"
  # keep the 10 most recent default run directories
  { ls -1dt "$CACHE"/runs/epiclab-* 2>/dev/null || true; } | tail -n +10 | while read -r d; do rm -rf -- "$d"; done
  OUT=$(mktemp -d "$CACHE/runs/$NS.XXXX")
fi
OUT=$(abspath "$OUT"); mkdir -p "$OUT"
[ -z "$(ls -A "$OUT")" ] || die "run directory $OUT is not empty"
SHARE=$OUT/share; mkdir -p "$SHARE"
cp "$GS" "$SHARE/guest.sh"
for f in "${FILES[@]}"; do cp "$f" "$SHARE/"; done
if [ ${#ADDS[@]} -gt 0 ]; then
  "$HERE/build_initramfs.sh" --overlay "$OUT/overlay.cpio.gz" "${ADDS[@]}"
  cat "$INITRD" "$OUT/overlay.cpio.gz" > "$OUT/initrd.cpio.gz"; INITRD=$OUT/initrd.cpio.gz
fi
[ -z "$PCAP" ] || { PCAP=$(abspath "$PCAP"); mkdir -p "$(dirname "$PCAP")"; rm -f "$PCAP"; }

# --- teardown (always) --------------------------------------------------------------------------
PIDS=()        # every process this run started: qemu, tcpdump, switch
QPIDS=()       # qemu, one per guest
TDPIDS=()      # tcpdump
SWPID=""
NS_MADE=0
teardown() {
  local p alive i
  trap - EXIT INT TERM
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  [ -n "$SWPID" ] && kill -TERM -- "-$SWPID" 2>/dev/null
  for i in $(seq 50); do
    alive=0; for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break; sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done
  [ -n "$SWPID" ] && kill -KILL -- "-$SWPID" 2>/dev/null
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if [ $NS_MADE = 1 ]; then
    # anything still inside this run's private namespace was started by this run
    for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$NS" 2>/dev/null
  fi
  return 0
}
trap 'teardown' EXIT
trap 'echo "rxe_lab.sh: interrupted" >&2; teardown; exit 130' INT
trap 'echo "rxe_lab.sh: terminated" >&2; teardown; exit 143' TERM

# --- namespace, bridge, taps --------------------------------------------------------------------
ip netns add "$NS"; NS_MADE=1
# Background processes are started as `ip netns exec NS prog &` (never through a shell function):
# ip execs prog, so $! is prog's own PID and teardown can stop exactly it.
nsx() { ip netns exec "$NS" "$@"; }
ip -n "$NS" link set lo up
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
if [ "$BRIDGE" = 1 ]; then
  ip -n "$NS" link add br0 type bridge stp_state 0 mcast_snooping 0
  ip -n "$NS" link set br0 up
fi
TAPS=(); LABELS=()
for g in $(seq 1 "$N"); do
  for n in $(seq 0 $((NICS-1))); do
    t=e${SFX}g${g}n${n}
    ip -n "$NS" tuntap add dev "$t" mode tap
    ip -n "$NS" link set "$t" up
    [ "$BRIDGE" = 1 ] && ip -n "$NS" link set "$t" master br0
    TAPS+=("$t"); LABELS+=("g${g}n${n}")
  done
done
echo "lab: netns $NS, $N guest(s) x $NICS NIC(s), bridge=$BRIDGE, run dir $OUT"

# --- capture --------------------------------------------------------------------------------------
start_tcpdump() { # IFACE FILE LOG
  ip netns exec "$NS" tcpdump -i "$1" -nn -s 0 -U -Z root -w "$2" udp port 4791 > "$3" 2>&1 &
  local p=$!; PIDS+=("$p"); TDPIDS+=("$p")
  local i; for i in $(seq 200); do
    grep -q 'listening on' "$3" 2>/dev/null && return 0
    kill -0 "$p" 2>/dev/null || { cat "$3" >&2; echo "rxe_lab.sh: tcpdump on $1 failed" >&2; exit 1; }
    sleep 0.1
  done
  echo "rxe_lab.sh: tcpdump on $1 not ready after 20 s" >&2; exit 1
}
if [ -n "$PCAP" ]; then
  if [ "$BRIDGE" = 1 ]; then
    start_tcpdump br0 "$PCAP" "$OUT/tcpdump.log"
  else
    for i in "${!TAPS[@]}"; do
      start_tcpdump "${TAPS[$i]}" "${PCAP%.pcap}.${LABELS[$i]}.pcap" "$OUT/tcpdump.${LABELS[$i]}.log"
    done
  fi
fi

# --- optional user-space switch -------------------------------------------------------------------
if [ -n "$SWITCH_CMD" ]; then
  EPICLAB_TAPS="${TAPS[*]}" EPICLAB_NS=$NS ip netns exec "$NS" setsid bash -c "$SWITCH_CMD" > "$OUT/switch.log" 2>&1 &
  SWPID=$!; PIDS+=("$SWPID")
  sleep 1
  kill -0 "$SWPID" 2>/dev/null || { cat "$OUT/switch.log" >&2; echo "rxe_lab.sh: switch exited" >&2; exit 1; }
fi

# --- guests ---------------------------------------------------------------------------------------
T0=$(date +%s.%N)
for g in $(seq 1 "$N"); do
  NET=(); IP4=""; IP6=""
  for n in $(seq 0 $((NICS-1))); do
    t=e${SFX}g${g}n${n}
    NET+=(-netdev "tap,id=n$n,ifname=$t,script=no,downscript=no"
          -device "virtio-net-pci,netdev=n$n,mac=52:54:00:$SFX:$(printf %02x "$g"):$(printf %02x "$n"),csum=off,guest_csum=off")
    IP4="${IP4:+$IP4,}10.9.$n.$g/24"
    IP6="${IP6:+$IP6,}fd00:9:$n::$(printf %x "$g")/64"
  done
  APPEND="console=ttyS0 quiet panic=-1 epiclab.id=$g epiclab.ip=$IP4"
  [ "$IPV6" = 1 ] && APPEND="$APPEND epiclab.ip6=$IP6"
  # Guest checksum offload stays off (csum=off,guest_csum=off): frames leave the guest with
  # complete checksums, so a user-space switch reading the taps can forward them as they are.
  ip netns exec "$NS" qemu-system-x86_64 -nodefaults -no-user-config -accel tcg,tb-size=64 -m "$MEM" -smp 1 \
    -display none -monitor none -serial "file:$OUT/console.g$g.log" -no-reboot \
    -kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" "${NET[@]}" \
    -virtfs "local,path=$SHARE,mount_tag=share,security_model=none,id=share" \
    < /dev/null > "$OUT/qemu.g$g.log" 2>&1 &
  PIDS+=($!); QPIDS+=($!)
done

DEADLINE=$(( $(date +%s) + TIMEOUT )); TIMED_OUT=0
while :; do
  alive=0; for p in "${QPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  if [ "$(date +%s)" -ge "$DEADLINE" ]; then TIMED_OUT=1; break; fi
  sleep 1
done
ELAPSED=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
if [ $TIMED_OUT = 1 ]; then
  echo "rxe_lab.sh: timeout after ${TIMEOUT} s; stopping the guests" >&2
else
  echo "lab: all $N guest(s) powered off after $ELAPSED s"
fi

# stop the capture cleanly (SIGTERM: background jobs ignore SIGINT) so the pcap is complete
for p in "${TDPIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${TDPIDS[@]}"; do
  for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null || wait "$p" 2>/dev/null || true
done
if [ -n "$PCAP" ]; then
  for f in "$OUT"/tcpdump*.log; do
    echo "capture $(basename "$f" .log): $( (grep -h 'captured\|received by filter\|dropped by kernel' "$f" || true) | tr '\n' ' ')"
  done
fi

RC=0
for g in $(seq 1 "$N"); do
  grep -ah 'EPICLAB GUEST .* READY' "$OUT/console.g$g.log" 2>/dev/null || echo "guest $g: never got ready"
  if [ -f "$SHARE/rc.g$g" ]; then
    r=$(cat "$SHARE/rc.g$g"); echo "guest $g: rc=$r (output: $SHARE/out.g$g.log)"
    [ "$r" = 0 ] || RC=1
  else
    echo "guest $g: no result; console tail ($OUT/console.g$g.log):"
    tail -n 15 "$OUT/console.g$g.log" 2>/dev/null | sed 's/^/    /'
    RC=1
  fi
done
[ $TIMED_OUT = 1 ] && RC=124
exit $RC
