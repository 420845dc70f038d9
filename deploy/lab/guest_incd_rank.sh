# guest_incd_rank.sh - guest side of incd_rxe.sh (runs in lab guest G, busybox sh).
#   sh /mnt/guest.sh G
# One rank of the group: rank G-1, rxe0 (GID index 1, IPv4 10.9.0.G), running
# inc-rank --transport verbs (packed into the initramfs at /usr/local/bin) against incd on the
# host side of the taps (10.9.0.254, virtual QPN SWITCH_QPN_BASE + rank). For every phase k of
# /mnt/params.sh (one incd run each; the phases differ in injected loss):
#   1. inc-rank creates its QP and writes the QPN the kernel chose to /mnt/qpn.p<k>.g<G>;
#   2. the host side collects every rank's QPN, configures and starts incd, creates /mnt/go.p<k>;
#   3. inc-rank connects (RTR: the kernel ARPs for 10.9.0.254, which incd answers), runs the
#      plan and checks every result bit for bit; its output goes to /mnt/rank.p<k>.g<G>.out;
#   4. its exit status goes to /mnt/done.p<k>.g<G> (the host waits for all before stopping incd),
#      rdma_rxe's counter deltas to /mnt/rxe.p<k>.g<G>.txt.
# Finally the guest waits (bounded) for /mnt/host.done, saves rxe's kernel messages to
# /mnt/dmesg.g<G>.txt and exits 0 only when every phase passed.
ID=$1
RANK=$((ID - 1))
. /mnt/params.sh
D=/sys/class/infiniband/rxe0/ports/1
echo "g$ID: rank $RANK of $RANKS, kernel $(uname -r), rxe0 GID 1 $(cat $D/gids/1 2>/dev/null)" \
  "type '$(cat $D/gid_attrs/types/1 2>/dev/null)'," \
  "active MTU $(ibv_devinfo -d rxe0 2>/dev/null | sed -n 's/.*active_mtu:[[:space:]]*//p')"

COUNTERS="sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_seq_err rcvd_rnr_err completer_retry_err retry_exceeded_err send_rnr_err rdma_sends rdma_recvs ack_deferred"
snap() { for c in $COUNTERS; do echo "$c=$(cat $D/hw_counters/$c 2>/dev/null || echo 0)"; done; }
delta() { # BEFORE AFTER
  for c in $COUNTERS; do
    b=$(echo "$1" | sed -n "s/^$c=//p"); a=$(echo "$2" | sed -n "s/^$c=//p")
    printf '%s=%s ' "$c" $(( ${a:-0} - ${b:-0} ))
  done
}

fails=0; k=0
for loss in $PHASES; do
  k=$((k + 1))
  plan=$PLAN; [ "${loss%/*}" = 3 ] && plan=${PLAN3:-$PLAN}  # a phase is MODE/LOSS
  out=/mnt/rank.p$k.g$ID.out
  before=$(snap); t0=$(date +%s)
  inc-rank --transport verbs --device rxe0 --gid-index 1 --ip "10.9.0.$ID" \
    --switch-ip "$SWITCH_IP" --switch-qpn $((SWITCH_QPN_BASE + RANK)) \
    --rank "$RANK" --ranks "$RANKS" --initial-psn "$INITIAL_PSN" --window "$WINDOW" \
    --pmtu "$PMTU" --plan "$plan" --reps "$REPS" --seed $((SEED + k)) \
    --timeout-ms "$TIMEOUT_MS" --qp-timeout "$QP_TIMEOUT" --linger-ms 500 \
    --traffic-class "${TRAFFIC_CLASS:-0}" \
    --qpn-file "/mnt/qpn.p$k.g$ID" --wait-file "/mnt/go.p$k" --wait-timeout-ms "$WAIT_MS" \
    --json < /dev/null > "$out" 2>&1
  rc=$?
  after=$(snap)
  echo "$(delta "$before" "$after")" > "/mnt/rxe.p$k.g$ID.txt"
  echo "$rc" > "/mnt/done.p$k.g$ID.tmp" && mv "/mnt/done.p$k.g$ID.tmp" "/mnt/done.p$k.g$ID"
  echo "g$ID phase $k (mode/loss $loss%): inc-rank rc=$rc in $(( $(date +%s) - t0 ))s;" \
    "rxe: $(cat "/mnt/rxe.p$k.g$ID.txt")"
  tail -n 3 "$out"
  [ "$rc" = 0 ] || fails=$((fails + 1))
done

for i in $(seq 600); do [ -f /mnt/host.done ] && break; sleep 0.5; done
[ -f /mnt/host.done ] || echo "g$ID: the host side did not finish within 300 s"
dmesg | grep -i -E 'rxe|rdma|icrc' > "/mnt/dmesg.g$ID.txt" 2>/dev/null
echo "g$ID: kernel messages about rxe: $(wc -l < "/mnt/dmesg.g$ID.txt")"
/usr/sbin/ip -s link show dev eth0 | sed -n '3,6p'
[ $fails = 0 ]
