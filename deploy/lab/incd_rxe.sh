#!/usr/bin/env bash
# incd_rxe.sh - real RDMA ranks through incd: Soft-RoCE (rdma_rxe) qemu guests running EPIC
# Mode-II and Mode-III collectives with libibverbs (inc-rank --transport verbs) through the
# user-space switch.
#
#   deploy/lab/incd_rxe.sh [-o OUTDIR] [--loss PCT[,PCT...]] [--modes M[,M]] [--ranks N] [--incd PATH]
#                          [--inc-rank PATH] [--plan PLAN] [--reps K] [--window MW]
#                          [--qp-timeout CODE] [--seed S] [-t SEC] [--no-pcap-check] [--forge]
#                          [--ecn PCT]
#
# Boots N guests (rxe_lab.sh --no-bridge; N >= 3, default 3) with inc-rank packed into their
# initramfs. Guest g is rank g-1 on rxe0 (10.9.0.g, GID index 1, the MAC rxe_lab.sh gives it).
# incd runs in the lab's network namespace with every guest's tap as a DPDK af_packet port and
# answers for the INC address 10.9.0.254; the group (id 1, window MW, path MTU 1024, initial
# PSN 0x100) has one rank child per tap whose remote QPN is the one the guest's kernel chose.
# The rendezvous goes through the 9p share: each rank writes its QPN (inc-rank --qpn-file), this
# script's host side (the rxe_lab.sh --switch command: incd_rxe.sh __switch ...) waits for all of
# them, writes the incd configuration, starts incd, then creates the file the ranks wait for
# (--wait-file); the ranks connect (the kernel ARPs for 10.9.0.254 at RTR) and run the plan,
# each checking every result bit for bit.
#
# Phases: one incd run per mode of --modes (default "2": Mode-II; "2,3": Mode-II, then the
# same group in Mode-III, hop timeout --hop-timeout-us) and entry of --loss (default "0,1":
# lossless, then PCT % of the frames dropped by incd's fault stage as they arrive from every
# port and as they leave on it: both directions of every hop), in one boot of the guests. Each
# phase prints
#   PHASE <k> mode=<m> loss=<pct>% PASS|FAIL ranks_ok=<r>/<N> collectives_verified=<c> ... incd: ...
# The capture (UDP 4791 on every tap, both directions) is checked by check_rxe_pcap.py: every
# ICRC, those rdma_rxe produced and those incd produced (skip with --no-pcap-check).
# The last line is "INCD_RXE PASS ..." or "INCD_RXE FAIL: <reason>".
#
# --forge (issue 16, docs/security.md): every phase also gives incd a fourth port, "forger": a
# veth pair from the lab namespace to a namespace of its own (epicforge-<pid>-<random>, deleted
# on exit), where scapy (tests/integration/forge_roce.py, driven by incd_rxe_forge.py) sends,
# with the switch QPNs known: before the ranks are released, rank 0's exact first announcement
# and data packet; while they run, 40 rounds (0.25 s apart) of rank 0's contribution,
# announcement, ACK far ahead and sequence NAK (rank 0's MAC and IPv4), a contribution with its
# own addresses and a result "from the switch" toward rank 1's QP; and, in lossless phases, on
# rank 0's tap a contribution with another MAC, another IPv4, and UDP source port 4791 (incd
# runs with udp_source_ports 49152-65535).
# The ranks must still verify every result, and incd must count every forgery exactly once
# under its reason and on its port (metrics.p<k>.txt), else the phase FAILs.
# In every lossless phase the rdma_rxe ranks' duplicate contributions (Mode-II) or packets a
# hop acknowledged again (Mode-III) must be at most 1 % of the contributions, else it FAILs.
#
# --ecn PCT (issue 19, docs/congestion.md): the ranks' QPs send ECN-capable packets (GRH traffic
# class 2, ECT(0): rdma_rxe puts it in the IPv4 TOS) and incd's fault stage marks CE on PCT % of
# the ECN-capable frames arriving from rank 0 (g1). Each phase then also prints
#   ecn: marked=<by the stage> ce_in=<CE contributions> ce_out=<CE frames incd sent>
#        cnps=<CNPs from the ranks> cnps_forwarded=<...> cnps_rate_limited=<...>
# and FAILs unless CE reached the ranks in results (ce_out > 0). Whether rdma_rxe answers the
# CE marks with CNPs is reported, not required: it is what this option measures.
# Artefacts in OUTDIR (default: a new /tmp/epic-incd-rxe.XXXXXX, kept): roce.g<g>n0.pcap
# (per tap), incd.p<k>.json / incd.p<k>.log / metrics.p<k>.txt (.err: failed scrape tries),
# pcap_check.g<g>.txt, and
# lab/ (rxe_lab.sh's run directory: share/rank.p<k>.g<g>.out = inc-rank's JSON lines,
# share/rxe.p<k>.g<g>.txt = rdma_rxe's counters, share/out.g<g>.log, console.g<g>.log).
# An OUTDIR given with -o must be new, empty, or a previous incd_rxe.sh run (then cleared).
#
# Binaries: --incd and --inc-rank default to build/release/daemon/incd and
# build/release/tools/inc-rank/inc-rank. inc-rank runs in the guests: build it without
# sanitizers and with libibverbs-dev installed, e.g.
#   cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/release incd inc-rank
# Needs root, /dev/net/tun and the lab packages (deploy/install.sh). About 1-2 minutes on 2
# cores (TCG). Exit 0 on PASS, 1 on FAIL, 2 on usage errors. Everything is torn down on exit
# (rxe_lab.sh's traps: guests, incd, tcpdump, the namespace).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

# --- host side: runs inside the lab namespace as rxe_lab.sh's --switch command ----------------
if [ "${1:-}" = __switch ]; then
  set +e
  SHARE=$2; OUTDIR=$3; INCD=$4
  . "$SHARE/params.sh"
  read -r -a TAPS <<< "${EPICLAB_TAPS:?}"
  INCD_PID=""; STOP_S=0; FPIDS=(); FIF=""
  FORGER=$ROOT/tests/integration/forge_roce.py
  stop_incd() {
    [ -n "$INCD_PID" ] || return 0
    kill -TERM "$INCD_PID" 2>/dev/null
    local t=$(date +%s); local deadline=$((t + 60))  # time-based: loaded machines make loops slow
    while kill -0 "$INCD_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$INCD_PID" 2>/dev/null
    wait "$INCD_PID" 2>/dev/null; local rc=$?
    STOP_S=$(( $(date +%s) - t ))
    INCD_PID=""
    return $rc
  }
  stop_forgers() { # bounded: forge_roce.py runs under timeout 60; TERM reaches python (ip execs it)
    local p
    for p in "${FPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${FPIDS[@]}"; do wait "$p" 2>/dev/null; done
    FPIDS=()
  }
  trap 'stop_forgers; stop_incd; touch "$SHARE/host.done"' EXIT
  trap 'exit 143' TERM INT
  # The scrape: TRIES (default 3) tries of 10 s each (a sanitizer build of incd beside qemu
  # guests on 2 cores can take seconds to answer), bounded; the forge check needs the counters.
  scrape() { /usr/bin/python3 - "$METRICS_PORT" "${1:-3}" <<'PY'
import sys, time, urllib.request
tries = int(sys.argv[2])
for attempt in range(tries):
    try:
        url = f"http://127.0.0.1:{sys.argv[1]}/metrics"
        sys.stdout.write(urllib.request.urlopen(url, timeout=10).read().decode())
        sys.exit(0)
    except OSError as e:
        sys.stderr.write(f"scrape attempt {attempt + 1}: {e}\n")
        if attempt + 1 < tries:
            time.sleep(1)
sys.exit(1)
PY
  }
  wait_files() { # PREFIX SECONDS [K]: waits for PREFIX.g1 .. PREFIX.gN; with K, gives up early
    # when a rank of phase K finished (done.pK.gG) without producing its file
    local deadline=$(( $(date +%s) + $2 )) g missing
    while :; do
      missing=""
      for g in $(seq 1 "$RANKS"); do
        [ -f "$1.g$g" ] && continue
        missing="$missing g$g"
        if [ -n "${3:-}" ] && [ -f "$SHARE/done.p$3.g$g" ]; then
          echo "host: rank g$g of phase $3 exited (rc=$(cat "$SHARE/done.p$3.g$g")) before writing $1.g$g"
          return 1
        fi
      done
      [ -z "$missing" ] && return 0
      [ "$(date +%s)" -ge "$deadline" ] && { echo "host: still missing after $2 s:$missing"; return 1; }
      sleep 0.2
    done
  }
  echo "host: taps ${TAPS[*]}"
  if [ "${FORGE:-0}" = 1 ]; then
    # --forge: a fourth incd port "forger", a veth pair whose other end (forge0) lives in the
    # run's forger namespace (incd_rxe.sh created $FORGE_NS and deletes it on exit)
    if ip link add forge-sw type veth peer name forge0 netns "$FORGE_NS" && ip link set forge-sw up \
       && ip -n "$FORGE_NS" link set forge0 up; then
      ethtool -K forge-sw tx off tso off gso off gro off > /dev/null 2>&1
      FIF=forge-sw
      echo "host: forger port forge-sw <-> $FORGE_NS/forge0"
    else
      echo "host: could not create the forger's veth pair: no forgeries (the forge check fails)"
    fi
  fi
  k=0
  for phase in $PHASES; do
    k=$((k + 1))
    mode=${phase%/*}; loss=${phase#*/}
    t0=$(date +%s)
    # the first phase also waits for the guests to boot
    if ! wait_files "$SHARE/qpn.p$k" "$([ $k = 1 ] && echo "$BOOT_WAIT_S" || echo 120)" "$k"; then
      # release the ranks that wait (they fail to connect without incd) and go on
      echo "HOST_PHASE $k rc=1 the ranks' QPNs never came" | tee -a "$SHARE/host_phases.txt"
      touch "$SHARE/go.p$k"; continue
    fi
    cfg=$OUTDIR/incd.p$k.json
    FORGE_IF=$FIF /usr/bin/python3 - "$cfg" "$k" "$loss" "$SHARE" "$mode" "${TAPS[@]}" <<'PY'
import json, os, sys
cfg, k, loss, share = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
mode, taps = int(sys.argv[5]), sys.argv[6:]
p = {}
for line in open(os.path.join(share, "params.sh")):
    if "=" in line and not line.startswith("#"):
        key, _, v = line.strip().partition("=")
        p[key] = v.strip('"')
ports, children, faults = [], [], []
for i, tap in enumerate(taps):
    # rxe_lab.sh: tap e<sfx>g<g>n0 <-> guest g's eth0, MAC 52:54:00:<sfx>:<g>:00, 10.9.0.<g>
    sfx, g = tap[1:3], int(tap[tap.index("g") + 1:tap.index("n", 3)])
    name = f"g{g}"
    # qdisc_bypass=0: incd's frames pass the tap's taps too, so tcpdump captures them
    ports.append({"name": name, "mtu": 1500,
                  "device": f"net_af_packet{i},iface={tap},framecnt=4096,qdisc_bypass=0"})
    qpn = int(open(os.path.join(share, f"qpn.p{k}.g{g}")).read().strip())
    children.append({"port": name, "rank": g - 1,
                     "remote": {"mac": f"52:54:00:{sfx}:{g:02x}:00", "ipv4": f"10.9.0.{g}", "qpn": qpn},
                     "local": {"ipv4": p["SWITCH_IP"], "qpn": int(p["SWITCH_QPN_BASE"]) + g - 1}})
    ecn = float(p.get("ECN_MARK", "0") or 0)
    if loss > 0 or (ecn > 0 and g == 1):
        for j, d in enumerate(("rx", "tx")):
            f = {"port": name, "direction": d, "drop": loss / 100.0,
                 "seed": 1000 * k + 10 * g + j}
            if ecn > 0 and g == 1 and d == "rx":
                f["mark_ce"] = ecn / 100.0
            faults.append(f)
fif = os.environ.get("FORGE_IF", "")
if fif:  # --forge: the forger's port, no member on it, no faults
    ports.append({"name": "forger", "mtu": 1500,
                  "device": f"net_af_packet{len(taps)},iface={fif},framecnt=4096,qdisc_bypass=0"})
c = {
    "eal": {"lcores": "0-1", "hugepages": False, "memory_mb": 256,
            "file_prefix": f"incd-rxe-{os.getpid()}-p{k}", "log_level": "warning"},
    "workers": 1, "burst": 32, "idle_sleep_us": 50,
    "ports": ports,
    "switch": {"inc_addresses": [{"ipv4": p["SWITCH_IP"], "mac": p["SWITCH_MAC"]}],
               "l2_aging_s": 300, "l2_table_size": 4096, "bad_icrc": "pass"},
    "faults": faults,
    "groups": [dict({"id": 1, "ranks": int(p["RANKS"]), "initial_psn": int(p["INITIAL_PSN"], 0),
                     "window": int(p["WINDOW"]), "pmtu": int(p["PMTU"]), "children": children},
                    **({"mode": 3, "hop_timeout_us": int(p["HOP_TIMEOUT_US"])} if mode == 3 else {}))],
    "metrics": {"listen": f"127.0.0.1:{p['METRICS_PORT']}", "stall_after_ms": 5000},
    "log": {"level": "info", "file": ""},
}
if p.get("FORGE") == "1":  # rdma_rxe's UDP source ports are 49152-65535 (from the QPN)
    c["switch"]["udp_source_ports"] = "49152-65535"
json.dump(c, open(cfg, "w"), indent=1)
PY
    "$INCD" -c "$cfg" > "$OUTDIR/incd.p$k.log" 2>&1 &
    INCD_PID=$!
    up=0; deadline=$(( $(date +%s) + 60 ))
    while [ "$(date +%s)" -lt "$deadline" ] && kill -0 "$INCD_PID" 2>/dev/null; do
      scrape 1 > /dev/null 2>&1 && { up=1; break; }
      sleep 0.2
    done
    if [ $up = 0 ]; then
      echo "host: incd did not come up; its log:"; tail -n 20 "$OUTDIR/incd.p$k.log"
      echo "HOST_PHASE $k rc=1 incd did not start" >> "$SHARE/host_phases.txt"
      stop_incd; touch "$SHARE/go.p$k"; continue
    fi
    echo "host: phase $k (Mode-$mode, loss $loss%): incd pid $INCD_PID up after $(( $(date +%s) - t0 ))s; ranks go"
    forge_spec() { /usr/bin/python3 "$HERE/incd_rxe_forge.py" spec "$SHARE" "$k" "$1" "$FORGE_ROUNDS" "$FORGE_GAP_S" "${TAPS[@]}"; }
    if [ -n "$FIF" ]; then
      # The rounds (bounded: FORGE_ROUNDS rounds FORGE_GAP_S apart, and timeout 60) start with
      # the prelude, so that scapy's slow start on a loaded machine overlaps it and the rounds
      # run while the ranks connect and run: the third host on its own port; and in lossless
      # phases rank 0's cable (frames written on the host side of rank 0's tap reach incd's
      # socket on that port; with loss, incd's fault stage on that port would eat some of them).
      timeout --foreground 60 ip netns exec "$FORGE_NS" /usr/bin/python3 "$FORGER" forge0 "$(forge_spec third)" \
        > "$OUTDIR/forge.p$k.third.txt" 2>&1 &
      FPIDS+=($!)
      if awk -v l="$loss" 'BEGIN { exit !(l == 0) }'; then
        tap1=$(printf '%s\n' "${TAPS[@]}" | grep 'g1n0$')
        timeout --foreground 60 /usr/bin/python3 "$FORGER" "$tap1" "$(forge_spec cable)" \
          > "$OUTDIR/forge.p$k.cable.txt" 2>&1 &
        FPIDS+=($!)
      fi
      # before the ranks are released: rank 0's exact first announcement and data packet
      timeout --foreground 60 ip netns exec "$FORGE_NS" /usr/bin/python3 "$FORGER" forge0 "$(forge_spec prelude)" \
        > "$OUTDIR/forge.p$k.prelude.txt" 2>&1
      echo "host: phase $k prelude: $(tail -n 1 "$OUTDIR/forge.p$k.prelude.txt")"
    fi
    touch "$SHARE/go.p$k"; tgo=$(date +%s)
    wait_files "$SHARE/done.p$k" "$PHASE_WAIT_S"; waited=$?
    if [ -n "$FIF" ]; then
      tdone=$(date +%s)
      for p in "${FPIDS[@]}"; do wait "$p" 2>/dev/null; done; FPIDS=()
      for f in third cable; do
        [ -f "$OUTDIR/forge.p$k.$f.txt" ] || continue
        echo "host: phase $k $f forger: rounds ended $(( $(stat -c %Y "$OUTDIR/forge.p$k.$f.txt") - tgo )) s after go" \
          "(ranks done after $(( tdone - tgo )) s): $(tail -n 1 "$OUTDIR/forge.p$k.$f.txt")"
      done
    fi
    scrape > "$OUTDIR/metrics.p$k.txt" 2> "$OUTDIR/metrics.p$k.err"
    alive=0; kill -0 "$INCD_PID" 2>/dev/null && alive=1
    stop_incd; incd_rc=$?
    echo "HOST_PHASE $k rc=$waited incd_alive=$alive incd_exit=$incd_rc incd_stop=${STOP_S}s time=$(( $(date +%s) - t0 ))s" \
      | tee -a "$SHARE/host_phases.txt"
  done
  echo "host: done"
  exit 0
fi

# --- the command ----------------------------------------------------------------------------
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "incd_rxe.sh: $*" >&2; echo "INCD_RXE FAIL: $*"; exit 2; }
OUTDIR=""; LOSS="0,1"; MODES=2; HOP_TIMEOUT_US=20000; RANKS=3; INCD=$ROOT/build/release/daemon/incd
INC_RANK=$ROOT/build/release/tools/inc-rank/inc-rank; REPS=1; WINDOW=64; QP_TIMEOUT=18
TIMEOUT=420; PCAP_CHECK=1; SEED=1; SWITCH_MAC=02:ec:00:00:00:fe; FORGE=0; FORGE_ROUNDS=40
ECN_MARK=0
FORGE_GAP_S=0.25
# AllReduce int32 and fp32 sum, Barrier, Broadcast (root 1), Reduce (root 2); up to 64 KiB a
# rank (64 packets at path MTU 1024: within the window, as the verbs window needs). Mode-III
# phases also run ReduceScatter and AllGather (PLAN3_EXTRA; not in Mode-II phases: with loss,
# Mode-II's ReduceScatter through rdma_rxe ranks can stall in a retransmission storm, see
# docs/mode2.md "Known limits"), unless --plan is given.
PLAN="allreduce:int32:sum:1,allreduce:int32:sum:1000,allreduce:int32:sum:16384"
PLAN="$PLAN,allreduce:fp32:sum:300,allreduce:fp32:sum:16384,barrier"
PLAN="$PLAN,broadcast:int32:root=1:16384,broadcast:fp32:root=1:777"
PLAN="$PLAN,reduce:int32:sum:root=2:16384,reduce:fp32:sum:root=2:2500,barrier"
PLAN3_EXTRA="reduce_scatter:int32:sum:4096,allgather:fp32:4096"
while [ $# -gt 0 ]; do
  case $1 in
    -o|--out) OUTDIR=$2; shift 2;;
    --loss) LOSS=$2; shift 2;;
    --modes) MODES=$2; shift 2;;
    --hop-timeout-us) HOP_TIMEOUT_US=$2; shift 2;;
    --ranks) RANKS=$2; shift 2;;
    --incd) INCD=$2; shift 2;;
    --inc-rank) INC_RANK=$2; shift 2;;
    --plan) PLAN=$2; PLAN3_EXTRA=""; shift 2;;
    --reps) REPS=$2; shift 2;;
    --window) WINDOW=$2; shift 2;;
    --qp-timeout) QP_TIMEOUT=$2; shift 2;;
    --seed) SEED=$2; shift 2;;
    -t|--timeout) TIMEOUT=$2; shift 2;;
    --no-pcap-check) PCAP_CHECK=0; shift;;
    --forge) FORGE=1; shift;;
    --ecn) ECN_MARK=$2; shift 2;;
    -h|--help) usage; exit 0;;
    *) echo "incd_rxe.sh: unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
[[ $RANKS =~ ^[0-9]+$ ]] && [ "$RANKS" -ge 3 ] && [ "$RANKS" -le 64 ] || die "--ranks must be 3..64"
[[ $LOSS =~ ^[0-9.]+(,[0-9.]+)*$ ]] || die "--loss is a comma-separated list of percentages"
[[ $ECN_MARK =~ ^[0-9.]+$ ]] && awk -v x="$ECN_MARK" 'BEGIN{exit !(x <= 100)}' \
  || die "--ecn is a percentage 0..100"
[[ $MODES =~ ^[23](,[23])*$ ]] || die "--modes is a comma-separated list of 2 (Mode-II) and 3 (Mode-III)"
[[ $HOP_TIMEOUT_US =~ ^[0-9]+$ ]] && [ "$HOP_TIMEOUT_US" -ge 10 ] && [ "$HOP_TIMEOUT_US" -le 1000000 ] \
  || die "--hop-timeout-us must be 10..1000000"
PHASES=""
for m in $(tr , ' ' <<< "$MODES"); do
  for l in $(tr , ' ' <<< "$LOSS"); do PHASES="$PHASES $m/$l"; done
done
PHASES=${PHASES# }
for b in "$INCD" "$INC_RANK"; do
  [ -x "$b" ] || die "$b is not an executable: build it (cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build/release incd inc-rank) or pass --incd/--inc-rank"
done
INCD=$(cd "$(dirname "$INCD")" && pwd)/$(basename "$INCD")
INC_RANK=$(cd "$(dirname "$INC_RANK")" && pwd)/$(basename "$INC_RANK")
LIBS=$(ldd "$INC_RANK" 2>&1 || true)  # (not piped into grep -q: pipefail and SIGPIPE)
if grep -q -E 'libasan|libubsan|libtsan' <<< "$LIBS"; then
  die "$INC_RANK is built with sanitizers; the guests need a plain build (build/release)"
fi
grep -q libibverbs <<< "$LIBS" || die "$INC_RANK has no verbs transport (install libibverbs-dev, reconfigure, rebuild)"
[ "$(id -u)" = 0 ] || die "needs root (network namespace, taps)"

if [ -z "$OUTDIR" ]; then
  OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/epic-incd-rxe.XXXXXX")
else
  mkdir -p "$OUTDIR"; OUTDIR=$(cd "$OUTDIR" && pwd)
  if [ -n "$(ls -A "$OUTDIR")" ]; then
    [ -f "$OUTDIR/.incd_rxe" ] || die "$OUTDIR is not empty and not an incd_rxe.sh run directory"
    find "$OUTDIR" -mindepth 1 -delete
  fi
fi
touch "$OUTDIR/.incd_rxe"
T0=$(date +%s)
FORGE_NS=""
forge_ns_del() { # whatever runs in the forger's namespace was started by this run
  [ -n "$FORGE_NS" ] || return 0
  local p
  for p in $(ip netns pids "$FORGE_NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  ip netns del "$FORGE_NS" 2>/dev/null
  FORGE_NS=""
}
if [ $FORGE = 1 ]; then
  command -v ethtool > /dev/null && /usr/bin/python3 -c 'import scapy.contrib.roce' 2> /dev/null \
    || die "--forge needs ethtool and python3-scapy (deploy/install.sh)"
  FORGE_NS=epicforge-$$-$RANDOM
  trap forge_ns_del EXIT
  ip netns add "$FORGE_NS" || die "cannot create the network namespace $FORGE_NS"
  ip -n "$FORGE_NS" link set lo up
  ip netns exec "$FORGE_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1 > /dev/null 2>&1 || true  # no IPv6 chatter
fi
nphases=$(wc -w <<< "$PHASES")
echo "incd_rxe: $RANKS ranks, phases (mode/loss %): $PHASES, hop timeout ${HOP_TIMEOUT_US} us (Mode-III), window $WINDOW, qp timeout code $QP_TIMEOUT, seed $SEED, out $OUTDIR${FORGE_NS:+, forger namespace $FORGE_NS}"

cat > "$OUTDIR/params.sh" <<EOF
RANKS=$RANKS
PHASES="$PHASES"
PLAN="$PLAN"
PLAN3="$PLAN${PLAN3_EXTRA:+,$PLAN3_EXTRA}"
REPS=$REPS
WINDOW=$WINDOW
HOP_TIMEOUT_US=$HOP_TIMEOUT_US
PMTU=1024
INITIAL_PSN=0x100
SEED=$SEED
SWITCH_IP=10.9.0.254
SWITCH_MAC=$SWITCH_MAC
SWITCH_QPN_BASE=4096
QP_TIMEOUT=$QP_TIMEOUT
TIMEOUT_MS=90000
WAIT_MS=420000
METRICS_PORT=9464
BOOT_WAIT_S=300
PHASE_WAIT_S=300
FORGE=$FORGE
FORGE_NS=$FORGE_NS
FORGE_ROUNDS=$FORGE_ROUNDS
FORGE_GAP_S=$FORGE_GAP_S
ECN_MARK=$ECN_MARK
TRAFFIC_CLASS=$(awk -v x="$ECN_MARK" 'BEGIN{print (x > 0) ? 2 : 0}')
EOF

LAB=$OUTDIR/lab
SWITCH_CMD="$(printf '%q ' "$HERE/incd_rxe.sh" __switch "$LAB/share" "$OUTDIR" "$INCD")"
lab_rc=0
# rxe_lab.sh tears everything down itself; forward our termination to it.
"$HERE/rxe_lab.sh" --no-bridge -o "$LAB" -w "$OUTDIR/roce.pcap" -m 256 -t "$TIMEOUT" \
  -a "$INC_RANK:/usr/local/bin/inc-rank" -f "$OUTDIR/params.sh" \
  --switch "$SWITCH_CMD" "$RANKS" "$HERE/guest_incd_rank.sh" &
LAB_PID=$!
trap 'kill -TERM $LAB_PID 2>/dev/null; wait $LAB_PID 2>/dev/null || true
      echo "INCD_RXE FAIL: interrupted (artefacts: $OUTDIR)"; exit 143' TERM INT
wait $LAB_PID || lab_rc=$?
trap - TERM INT
echo "lab: rc=$lab_rc"
forge_ns_del
SHARE=$LAB/share

# --- verdicts ------------------------------------------------------------------------------
set +e +o pipefail  # missing outputs are verdicts, not reasons to stop
expected2=$(( $(tr ',' '\n' <<< "$PLAN" | grep -c .) * REPS ))
expected3=$(( $(tr ',' '\n' <<< "$PLAN${PLAN3_EXTRA:+,$PLAN3_EXTRA}" | grep -c .) * REPS ))
metric() { # FILE NAME [LABEL-SUBSTRING]: sum of the samples
  awk -v n="$1" -v l="${3:-}" '$1 ~ "^"n"({|$)" && index($0, l) { s += $NF } END { printf "%d", s }' "$2" 2>/dev/null
}
fail_reasons=(); total_verified=0; k=0; total_forged=0
for phase in $PHASES; do
  k=$((k + 1))
  mode=${phase%/*}; loss=${phase#*/}
  expected=$expected2; [ "$mode" = 3 ] && expected=$expected3
  ok=0; verified=0; worst=0; detail=""
  for g in $(seq 1 "$RANKS"); do
    f=$SHARE/rank.p$k.g$g.out
    n=$(grep -c '"ok":true' "$f" 2>/dev/null || true)
    rc=$(cat "$SHARE/done.p$k.g$g" 2>/dev/null || echo none)
    verified=$((verified + ${n:-0}))
    lat=$(grep -o '"latency_us":[0-9.]*' "$f" 2>/dev/null | cut -d: -f2 | sort -n | tail -n 1)
    [ -n "$lat" ] && worst=$(awk -v a="$worst" -v b="$lat" 'BEGIN{print (b>a)?b:a}')
    if [ "$rc" = 0 ] && [ "${n:-0}" = "$expected" ]; then
      ok=$((ok + 1))
    else
      detail="$detail g$g(rc=$rc verified=${n:-0}/$expected)"
    fi
  done
  total_verified=$((total_verified + verified))
  m=$OUTDIR/metrics.p$k.txt
  host=$(grep -h "^HOST_PHASE $k " "$SHARE/host_phases.txt" 2>/dev/null | tail -n 1)
  incd_ok=0; grep -q 'rc=0 incd_alive=1 incd_exit=0' <<< "$host" && incd_ok=1
  verdict=FAIL; [ $ok = "$RANKS" ] && [ $incd_ok = 1 ] && verdict=PASS
  forge_line=""; forge_ok=1
  if [ $FORGE = 1 ]; then
    forge_line=$(/usr/bin/python3 "$HERE/incd_rxe_forge.py" check "$m" "$OUTDIR" "$k" "$FORGE_ROUNDS" "$loss" 2>&1) || forge_ok=0
    [ $forge_ok = 1 ] || verdict=FAIL
    n=$(sed -n 's/^forge: ok forged=\([0-9]*\).*/\1/p' <<< "$forge_line")
    total_forged=$((total_forged + ${n:-0}))
  fi
  printf 'PHASE %d mode=%s loss=%s%% %s ranks_ok=%d/%d collectives_verified=%d worst_latency_ms=%.0f %s | incd: aggregations=%s retransmissions=%s faults_injected=%s engine_drops=%s\n' \
    "$k" "$mode" "$loss" "$verdict" "$ok" "$RANKS" "$verified" "$(awk -v x="$worst" 'BEGIN{print x/1000}')" \
    "${host#HOST_PHASE $k }" \
    "$(metric incd_group_aggregations_completed_total "$m")" "$(metric incd_group_retransmissions_total "$m")" \
    "$(metric incd_port_faults_injected_total "$m")" "$(metric incd_engine_drops_total "$m")"
  [ -n "$forge_line" ] && echo "  $forge_line"
  if awk -v x="$ECN_MARK" 'BEGIN{exit !(x > 0)}'; then
    ev() { metric incd_engine_events_total "$m" "event=\"$1\""; }
    ce_out=$(ev ecn_ce_out)
    echo "  ecn: marked=$(metric incd_port_faults_injected_total "$m" 'fault="ce_marked"') ce_in=$(ev ecn_ce_in) ce_out=$ce_out cnps=$(metric incd_engine_frames_total "$m" 'disposition="cnps"') cnps_forwarded=$(ev cnps_forwarded) cnps_rate_limited=$(ev cnps_rate_limited)"
    if [ "${ce_out:-0}" = 0 ]; then
      verdict=FAIL
      fail_reasons+=("phase $k (Mode-$mode, loss $loss%): --ecn $ECN_MARK: no CE reached the ranks (ecn_ce_out 0)")
    fi
  fi
  for g in $(seq 1 "$RANKS"); do
    echo "  g$g rxe: $(cat "$SHARE/rxe.p$k.g$g.txt" 2>/dev/null || echo none)"
  done
  if [ $ok != "$RANKS" ] || [ $incd_ok != 1 ]; then
    fail_reasons+=("phase $k (Mode-$mode, loss $loss%):${detail:- incd: ${host:-no host result}}")
  fi
  [ $forge_ok = 1 ] || fail_reasons+=("phase $k (Mode-$mode, loss $loss%): the forgeries were not counted as expected: ${forge_line#forge: }")
  # The lossless counter identity (as integration.incd_lossless for the soft transport): the
  # rdma_rxe ranks' retransmissions reach the switch as duplicate contributions (Mode-II) or
  # as packets a hop acknowledges again (Mode-III); on a lossless network at most 1 % of the
  # contributions.
  if awk -v l="$loss" 'BEGIN { exit !(l == 0) }'; then
    d() { metric incd_engine_frames_total "$m" "disposition=\"$1\""; }
    if [ "$mode" = 3 ]; then
      took=$(d hop_taken); dups=$(d hop_ack_again)
    else
      took=$(d upward_accepted)
      dups=$(( $(d upward_duplicate) + $(d upward_done) + $(d upward_stale) + $(d upward_slot_busy) ))
    fi
    echo "  lossless identity: duplicate contributions $dups of $took"
    if [ "${took:-0}" -eq 0 ] || [ $(( dups * 100 )) -gt "$took" ]; then
      fail_reasons+=("phase $k (Mode-$mode, lossless): duplicate contributions $dups > 1 % of $took")
    fi
  fi
done
[ "$lab_rc" = 0 ] || fail_reasons+=("the lab run failed (rxe_lab.sh rc=$lab_rc)")
for g in $(seq 1 "$RANKS"); do
  if grep -q -i 'icrc' "$SHARE/dmesg.g$g.txt" 2>/dev/null; then
    fail_reasons+=("guest $g's rdma_rxe logged ICRC errors (share/dmesg.g$g.txt)")
  fi
done

if [ $PCAP_CHECK = 1 ]; then
  for g in $(seq 1 "$RANKS"); do
    p=$OUTDIR/roce.g${g}n0.pcap
    if [ ! -s "$p" ]; then fail_reasons+=("no capture $p"); continue; fi
    # who sent what: rdma_rxe (the guest's MAC) or incd (the switch's)
    from_incd=$(tcpdump -nn -e -r "$p" 2>/dev/null | awk -v m="$SWITCH_MAC" '$2 == m' | wc -l)
    total=$(tcpdump -nn -r "$p" 2>/dev/null | wc -l)
    # bounded (scapy needs ~1.5 ms a frame; a retransmission storm can capture 10^5 frames):
    # 120 s a capture, and the whole run within TIMEOUT + 140 s (ctest allows 600)
    budget=$(( T0 + TIMEOUT + 140 - $(date +%s) )); [ $budget -gt 120 ] && budget=120
    if [ $budget -lt 5 ]; then fail_reasons+=("no time left to check $p"); continue; fi
    if timeout $budget /usr/bin/python3 "$HERE/check_rxe_pcap.py" "$p" > "$OUTDIR/pcap_check.g$g.txt" 2>&1; then
      forged=""  # --forge: the frames written on rank 0's tap are in its capture too
      [ $FORGE = 1 ] && [ "$g" = 1 ] && forged=", of which $(cat "$OUTDIR"/forge.p*.cable.txt 2>/dev/null |
        grep -o '=[0-9]*' | tr -d = | awk '{ s += $1 } END { print s + 0 }') forged on the tap"
      echo "pcap g$g: $total frames ($((total - from_incd)) from rdma_rxe$forged, $from_incd from incd):" \
        "$(grep -h 'ICRC' "$OUTDIR/pcap_check.g$g.txt" | sed 's/  */ /g' | paste -sd';')"
      [ "$from_incd" -gt 0 ] || fail_reasons+=("the capture $p holds no frame from incd")
    else
      fail_reasons+=("check_rxe_pcap.py failed or timed out (${budget} s) on $p (pcap_check.g$g.txt)")
      tail -n 5 "$OUTDIR/pcap_check.g$g.txt"
    fi
  done
fi

wall=$(( $(date +%s) - T0 ))
if [ ${#fail_reasons[@]} -gt 0 ]; then
  for g in $(seq 1 "$RANKS"); do
    echo "--- guest $g ($SHARE/out.g$g.log, tail):"; tail -n 15 "$SHARE/out.g$g.log" 2>/dev/null || true
  done
  echo "--- host side ($LAB/switch.log, tail):"; tail -n 20 "$LAB/switch.log" 2>/dev/null || true
  echo "artefacts: $OUTDIR"
  echo "INCD_RXE FAIL: $(IFS=';'; echo "${fail_reasons[*]}") wall=${wall}s"
  exit 1
fi
echo "artefacts: $OUTDIR"
forged=""; [ $FORGE = 1 ] && forged=" forged_frames_dropped=$total_forged"
echo "INCD_RXE PASS phases=$nphases ranks=$RANKS collectives_verified=$total_verified$forged wall=${wall}s"
