#!/usr/bin/env bash
# Model-check EPIC's Promela models with spin: Mode-II (tests/model/mode2.pml, the default) and
# Mode-III (tests/model/mode3.pml, --model mode3).
#
#   tests/model/run_spin.sh [--model M]             every configuration of model M (mode2)
#   tests/model/run_spin.sh [--model M] NAME...     only these (see --list)
#   tests/model/run_spin.sh [--model M] --list      the configurations (--names: names only)
#   tests/model/run_spin.sh [--model M] --custom "-DNR=2 -DNPKT=5 ..." [--expect pass|violation]
#                                            [--checks safety,ltl]   one ad-hoc configuration
#   options: --keep (keep the work directory), --quiet (no counterexample listing)
#
# For each configuration: `spin -a` generates pan.c, gcc compiles it with a memory bound
# (-DMEMLIM, MB), and pan searches exhaustively (no COLLAPSE, no BITSTATE: every state is
# stored). Checks:
#   safety  pan -DSAFETY, depth-first: assertions and invalid end states. The model's Watch
#           process turns "the run stopped before everything was done" into an invalid end
#           state, and every run of the model is finite (docs/model-mode2.md,
#           docs/model-mode3.md), so this is also the termination check.
#   bfs     the same, breadth-first (-DBFS): the shortest counterexample, for negative controls
#   ltl     pan -a with the model's `ltl terminates { <> ALLDONE }`: no run, finite or
#           infinite, avoids the state where everything is done (nested DFS, no fairness
#           needed: the models have no cycles), assertions checked as well.
# One line per configuration and check; for an expected violation, the replayed
# counterexample (protocol events). Exit status 0 when every outcome is the expected one.
# Environment: SPIN (spin), EPIC_MODEL_CC (gcc), EPIC_SPIN_MEMLIM (MB, 2048),
# EPIC_SPIN_TIMEOUT (seconds per pan run, 600), TMPDIR.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SPIN=${SPIN:-spin}
MODEL_CC=${EPIC_MODEL_CC:-gcc}
MEMLIM=${EPIC_SPIN_MEMLIM:-2048}
TLIMIT=${EPIC_SPIN_TIMEOUT:-600}

# name | expected outcome (pass; violation; violation=R1;R2: pan's first error matches one of
# these extended regular expressions) | checks | spin defines | what it shows
CONFIGS_MODE2=(
  "one_switch_2ranks|pass|safety,ltl|-DNR=2 -DNPKT=6 -DMAXLOSS=1 -DMAXDUP=1 -DMAXSPUR=1 -DREORDER=-1|2 ranks, 1 switch, 6 PSNs; links are bags (any order), 1 loss, 1 duplicate, 1 premature timeout"
  "one_switch_3ranks|pass|safety,ltl|-DNR=3 -DNPKT=6 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=2|3 ranks, 1 switch, 6 PSNs; 1 loss, 1 duplicate, 2 reorder events"
  "one_switch_3ranks_2losses|pass|safety|-DNR=3 -DNPKT=6 -DMAXLOSS=2 -DMAXDUP=1 -DREORDER=1|3 ranks, 1 switch, 6 PSNs; 2 losses, 1 duplicate, 1 reorder event"
  "two_level|pass|safety|-DNR=3 -DTWO_LEVEL=1 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|3 ranks under 2 leaves (2+1) and a root, 5 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "two_level_2ranks|pass|safety,ltl|-DNR=2 -DTWO_LEVEL=1 -DNPKT=6 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=-1|2 ranks under 2 leaves (1+1) and a root, 6 PSNs; bags, 1 loss, 1 duplicate"
  "nak|pass|safety,ltl|-DNR=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DNAK=1|2 ranks, 1 switch, 5 PSNs, out-of-sequence results NAKed (go-back-N on the reflected NAK)"
  "negative_wrong_recycle|violation|bfs,ltl|-DNR=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DBUG=1 -DGHOST=0|RecycleBuffer off by one (clears (p+MW+1)%2MW): must not terminate"
  "negative_mw_slots|violation|bfs|-DNR=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DNSLOT=2 -DGHOST=0|MW slots instead of 2*MW: PSN p+MW arrives while its slot still holds p"
  "negative_no_dupcheck|violation|bfs|-DNR=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DBUG=2|CheckDuplicate skipped: a contribution is added twice"
  "negative_unreserved_free_slot|violation|bfs|-DNR=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DBUG=3 -DGHOST=0|an empty slot is claimable by any PSN: a late duplicate takes it back (zombie)"
  "negative_store_stale_result|violation|safety|-DNR=3 -DTWO_LEVEL=1 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DBUG=4|a leaf stores a late duplicate result into a recycled slot"
)

# Mode-III (docs/model-mode3.md). PRIM: 0 AllReduce, 1 Reduce, 2 Broadcast.
CONFIGS_MODE3=(
  "allreduce_2ranks|pass|safety,ltl|-DNR=2 -DMW=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=0 -DREORDER=1|AllReduce, 2 ranks, 1 switch, MW=2, N=4, 5 PSNs (PSN 4 reuses entry 0); 1 loss, 1 reorder event"
  "allreduce_2ranks_faults|pass|safety|-DNR=2 -DMW=1 -DNPKT=4 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1 -DMAXSPUR=1|AllReduce, 2 ranks, 1 switch, MW=1, N=2, 4 PSNs; 1 loss, 1 duplicate, 1 reorder event, 1 premature timeout"
  "allreduce_2ranks_bags|pass|safety,ltl|-DNR=2 -DMW=1 -DNPKT=4 -DMAXLOSS=2 -DMAXDUP=1 -DREORDER=-1|AllReduce, 2 ranks, 1 switch, MW=1, N=2, 4 PSNs; hops are bags (any order), 2 losses, 1 duplicate"
  "allreduce_3ranks|pass|safety|-DNR=3 -DMW=1 -DNPKT=3 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|AllReduce, 3 ranks, 1 switch, MW=1, N=2, 3 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "allreduce_small_pipe|pass|safety,ltl|-DNR=2 -DMW=2 -DPIPE_N=2 -DNPKT=4 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|AllReduce, 2 ranks, 1 switch, N=2 < MW=2: the range check (drop, NAK) throttles the ranks; 1 loss, 1 duplicate, 1 reorder event"
  "reduce_3ranks|pass|safety|-DPRIM=1 -DNR=3 -DMW=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=0 -DREORDER=1|Reduce to rank 0, 3 ranks, 1 switch, MW=2, N=4, 5 PSNs; 1 loss, 1 reorder event"
  "reduce_3ranks_dup|pass|safety,ltl|-DPRIM=1 -DNR=3 -DMW=1 -DNPKT=4 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|Reduce to rank 0, 3 ranks, 1 switch, MW=1, N=2, 4 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "broadcast_3ranks|pass|safety|-DPRIM=2 -DNR=3 -DMW=2 -DNPKT=5 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|Broadcast from rank 0, 3 ranks, 1 switch, MW=2, N=4, 5 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "two_level_allreduce|pass|safety|-DTWO_LEVEL=1 -DNR=2 -DMW=1 -DPIPE_N=1 -DNPKT=2 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|AllReduce, 2 ranks under 2 leaves (1+1) and a root, MW=1, N=1, 2 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "two_level_allreduce_3ranks|pass|safety|-DTWO_LEVEL=1 -DNR=3 -DMW=1 -DPIPE_N=1 -DNPKT=2 -DMAXLOSS=1 -DMAXDUP=0 -DREORDER=0|AllReduce, 3 ranks under 2 leaves (2+1) and a root, MW=1, N=1, 2 PSNs; 1 loss"
  "two_level_reduce|pass|safety|-DPRIM=1 -DTWO_LEVEL=1 -DNR=2 -DMW=1 -DNPKT=3 -DMAXLOSS=1 -DMAXDUP=0 -DREORDER=1|Reduce to rank 0, 2 ranks under 2 leaves and a root, MW=1, N=2, 3 PSNs; 1 loss, 1 reorder event"
  "two_level_broadcast|pass|safety|-DPRIM=2 -DTWO_LEVEL=1 -DNR=2 -DMW=1 -DNPKT=4 -DMAXLOSS=1 -DMAXDUP=1 -DREORDER=1|Broadcast from rank 0, 2 ranks under 2 leaves and a root (4 hops, 3 Pipes), MW=1, N=2, 4 PSNs; 1 loss, 1 duplicate, 1 reorder event"
  "negative_mode2_recycle|violation=invalid end state;acceptance cycle|bfs,ltl|-DNR=2 -DMW=2 -DNPKT=5 -DMAXLOSS=0 -DMAXDUP=0 -DREORDER=0 -DBUG=1 -DGHOST=0|Mode-II's RecycleBuffer inside the Pipe (clear the entry of p-MW when p completes): a fast rank's contribution is wiped, no fault needed; must not terminate"
  "negative_no_range|violation=assertion violated \\(v==|bfs|-DNR=2 -DMW=2 -DNPKT=5 -DMAXLOSS=0 -DMAXDUP=0 -DREORDER=0 -DBUG=2 -DGHOST=0|no range check: PSN p+N lands in the entry still holding p; a rank gets a wrong result"
  "negative_fastest_out|violation=invalid end state|bfs|-DNR=2 -DMW=1 -DNPKT=4 -DMAXLOSS=1 -DMAXDUP=0 -DREORDER=0 -DBUG=3 -DGHOST=0|psnStart from the fastest out-endpoint: an entry a slower child still needs is recycled; must not terminate"
)

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }

KEEP=0 QUIET=0 CUSTOM="" EXPECT=pass CHECKS=safety M=mode2 SHOW=""
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --model) M=$2; shift ;;
    --names|--list) SHOW=$1 ;;
    --keep) KEEP=1 ;;
    --quiet) QUIET=1 ;;
    --custom) CUSTOM=$2; shift ;;
    --expect) EXPECT=$2; shift ;;
    --checks) CHECKS=$2; shift ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) names+=("$1") ;;
  esac
  shift
done

case "$M" in
  mode2) CONFIGS=("${CONFIGS_MODE2[@]}") ;;
  mode3) CONFIGS=("${CONFIGS_MODE3[@]}") ;;
  *) echo "run_spin.sh: no model '$M' (mode2, mode3)" >&2; exit 2 ;;
esac
MODEL=$HERE/$M.pml
if [ "$SHOW" = --names ]; then
  for c in "${CONFIGS[@]}"; do echo "${c%%|*}"; done
  exit 0
elif [ "$SHOW" = --list ]; then
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r n e k d w <<<"$c"
    printf '%-30s %-9s %-11s %s\n    %s\n' "$n" "$e" "$k" "$w" "$d"
  done
  exit 0
fi

command -v "$SPIN" >/dev/null || { echo "run_spin.sh: $SPIN not found (deploy/install.sh installs Debian's spin)" >&2; exit 1; }
command -v "$MODEL_CC" >/dev/null || { echo "run_spin.sh: $MODEL_CC not found" >&2; exit 1; }

selected=()
if [ -n "$CUSTOM" ]; then
  selected=("custom|$EXPECT|$CHECKS|$CUSTOM|ad-hoc")
elif [ ${#names[@]} -eq 0 ]; then
  selected=("${CONFIGS[@]}")
else
  for n in "${names[@]}"; do
    found=""
    for c in "${CONFIGS[@]}"; do [ "${c%%|*}" = "$n" ] && found=$c; done
    [ -n "$found" ] || { echo "run_spin.sh: no $M configuration '$n' (--list)" >&2; exit 2; }
    selected+=("$found")
  done
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/epic-spin.XXXXXX")
if [ $KEEP = 0 ]; then trap 'rm -rf "$WORK"' EXIT; else echo "work directory: $WORK"; fi

# value of the first match of a sed -n expression in file $1
field() { sed -n "$2" "$1" | head -n 1; }

echo "$("$SPIN" -V) | model $MODEL | MEMLIM ${MEMLIM} MB"
status=0
for c in "${selected[@]}"; do
  IFS='|' read -r name expect checks defs what <<<"$c"
  echo "model.$M.$name: $what ($defs)"
  dir=$WORK/$name
  mkdir -p "$dir"
  cp "$MODEL" "$dir/$M.pml"
  # shellcheck disable=SC2086  # defs is a list of -D words
  if ! (cd "$dir" && "$SPIN" -a $defs "$M.pml" >spin.log 2>&1); then
    echo "model.$M.$name: spin -a FAILED"; cat "$dir/spin.log"; status=1; continue
  fi
  IFS=',' read -ra cks <<<"$checks"
  for ck in "${cks[@]}"; do
    case "$ck" in
      safety) cflags="-DSAFETY -DNOCLAIM"; run="-m200000 -w24" ;;
      bfs) cflags="-DSAFETY -DNOCLAIM -DBFS"; run="-m200000 -w24" ;;
      ltl) cflags=""; run="-a -m200000 -w24 -N terminates" ;;
      *) echo "run_spin.sh: unknown check $ck" >&2; exit 2 ;;
    esac
    bin=pan_$ck
    # shellcheck disable=SC2086
    if ! (cd "$dir" && "$MODEL_CC" -O2 -w -DMEMLIM="$MEMLIM" $cflags -o "$bin" pan.c >cc.log 2>&1); then
      echo "model.$M.$name $ck: compiling pan.c FAILED"; cat "$dir/cc.log"; status=1; continue
    fi
    rm -f "$dir/$M.pml.trail"
    out=$dir/$ck.out
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$dir" && timeout "$TLIMIT" "./$bin" $run >"$out" 2>&1) && rc=0 || rc=$?
    wall=$(echo "$(date +%s.%N) - $t0" | bc)
    errors=$(field "$out" 's/.*errors: \([0-9]*\).*/\1/p')
    stored=$(field "$out" 's/^ *\([0-9.e+]*\) states, stored.*/\1/p')
    nominal=$(field "$out" 's/^ *\([0-9.e+]*\) nominal states.*/\1/p')
    trans=$(field "$out" 's/^ *\([0-9.e+]*\) transitions.*/\1/p')
    depth=$(field "$out" 's/.*depth reached \([0-9]*\).*/\1/p')
    mem=$(field "$out" 's/^ *\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p')
    first=$(field "$out" 's/^pan:1: \(.*\)/\1/p')
    stats="states=${stored:-?}${nominal:+ (nominal $nominal)} transitions=${trans:-?} depth=${depth:-?} mem=${mem:-?}MB time=$(printf '%.1f' "$wall")s"
    incomplete=""
    grep -q -e 'Search not completed' -e 'reached -DMEMLIM bound' -e 'max search depth too small' \
      -e 'out of memory' "$out" && incomplete=1
    [ "$rc" -eq 124 ] && incomplete=1
    label="model.$M.$name $ck"
    if [ -z "$errors" ]; then
      echo "$label: NO RESULT (pan exit $rc) $stats"; tail -n 20 "$out"; status=1
    elif [ "$expect" = pass ]; then
      if [ "$errors" = 0 ] && [ -z "$incomplete" ]; then
        echo "$label: PASS  $stats"
      elif [ "$errors" = 0 ]; then
        echo "$label: INCOMPLETE (search not exhaustive)  $stats"; status=1
      else
        echo "$label: FAIL  $first  $stats"; status=1
      fi
    else
      # `violation=R1;R2`: the first error pan reports must match R1 or R2 (extended regular
      # expressions), not just any error (an indexing error is no counterexample)
      want=""
      case "$expect" in violation=*) want=${expect#violation=}; want=${want//;/|} ;; esac
      if [ "$errors" != 0 ] && [ -n "$want" ] && ! grep -qE -- "$want" <<<"$first"; then
        echo "$label: WRONG VIOLATION: '$first', expected one matching '$want'  $stats"; status=1
      elif [ "$errors" != 0 ] && [ -f "$dir/$M.pml.trail" ]; then
        steps=$(wc -l <"$dir/$M.pml.trail")
        # shellcheck disable=SC2086
        (cd "$dir" && "$SPIN" -t -T $defs "$M.pml" >replay.txt 2>&1) || true
        grep -E '^(r[0-9]|sw[0-9]|  \()' "$dir/replay.txt" >"$dir/events.txt" || true
        events=$(wc -l <"$dir/events.txt")
        echo "$label: VIOLATION FOUND, as expected: $first; counterexample $steps steps, $events protocol events  $stats"
        if [ $QUIET = 0 ]; then
          if [ "$events" -gt 45 ]; then
            echo "      ... $((events - 40)) earlier events (--keep: $dir/replay.txt)"
            tail -n 40 "$dir/events.txt" | sed 's/^/      /'
          else
            sed 's/^/      /' "$dir/events.txt"
          fi
        fi
      elif [ -n "$incomplete" ]; then
        echo "$label: INCOMPLETE, no violation found within the bounds, but this configuration must fail  $stats"
        status=1
      else
        echo "$label: NO VIOLATION FOUND, but this configuration must fail  $stats"; status=1
      fi
    fi
  done
done
exit $status
