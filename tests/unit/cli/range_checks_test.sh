#!/bin/sh
# Command-line values out of range are refused at start, with a message naming the value (issue
# 16, "Inputs"): incd's --log-level, inc-manager's durations (a negative number must not wrap to
# 2^64), its --listen port and a tenant declared twice; incctl's plaintext to an address that
# is not local (0.0.0.0: not loopback by the rule, yet nothing leaves this host if it dials).
# No daemon is left running: every case is refused before it binds or starts anything (each
# run is bounded by `timeout` as well).
# usage: range_checks_test.sh PATH/TO/incd PATH/TO/inc-manager PATH/TO/incctl CONFIG.yaml
set -u
incd=$1 manager=$2 incctl=$3 config=$4
fails=0
sock=${TMPDIR:-/tmp}/epic-cli-$$.sock

# case STATUS TEXT CMD...: CMD exits STATUS and says TEXT.
case_() {
  want=$1 text=$2
  shift 2
  out=$(timeout 10 "$@" 2>&1)
  got=$?
  if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -qF -- "$text"; then
    printf 'FAIL: %s\n  exit %s (want %s), wanted "%s" in:\n%s\n' "$*" "$got" "$want" "$text" "$out"
    fails=$((fails + 1))
  fi
}

case_ 105 "--log-level: bogus not in {trace,debug,info,warn,error,critical,off}" \
  "$incd" -c "$config" --check --log-level bogus
case_ 0 "is valid" "$incd" -c "$config" --check --log-level off
for flag in --heartbeat-timeout-ms --install-timeout-ms --rendezvous-timeout-ms \
            --switch-grace-ms --reclaim-idle-ms --max-queue-wait-ms; do
  case_ 105 "$flag: Value -5 not in range" "$manager" --listen "unix:$sock" "$flag" -5
done
case_ 105 "--heartbeat-timeout-ms: Value 99 not in range 100 to 2592000000" \
  "$manager" --listen "unix:$sock" --heartbeat-timeout-ms 99
case_ 1 "--listen 127.0.0.1:99999: the port must be a number in 0..65535" \
  "$manager" --listen 127.0.0.1:99999
case_ 1 "--listen unix:: the unix socket path is empty" "$manager" --listen unix:
# No caller identity (no client certificates) outside a unix socket, unless said out loud.
case_ 1 "--listen 127.0.0.1:0: without client certificates every caller would be the operator" \
  "$manager" --listen 127.0.0.1:0 --no-state
case_ 105 "--socket-mode: Value 0999 is not an octal file mode in 0..0777" \
  "$manager" --listen "unix:$sock" --socket-mode 0999
case_ 105 "--max-agent-streams: Value 0 not in range" "$manager" --listen "unix:$sock" --max-agent-streams 0
case_ 105 "--max-pending-joins-per-tenant: Value -1 not in range" \
  "$manager" --listen "unix:$sock" --max-pending-joins-per-tenant -1
case_ 108 "--state-dir excludes --no-state" "$manager" --listen "unix:$sock" --no-state --state-dir /nonexistent
case_ 3 "incctl: --manager 0.0.0.0:9 is not a unix socket or loopback address" \
  "$incctl" --manager 0.0.0.0:9 --timeout-ms 500 groups

# A tenant declared in both files: refused, never the second kept silently.
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$sock"' EXIT
printf 'tenants: [{name: t, max_groups: 2}]\n' >"$dir/fabric.yaml"
printf 'tenants: [{name: t, max_groups: 9}]\n' >"$dir/tenants.yaml"
case_ 1 "$dir/tenants.yaml: tenant 't' is also declared in $dir/fabric.yaml" \
  "$manager" --listen "unix:$sock" --topology "$dir/fabric.yaml" --tenants "$dir/tenants.yaml"

# The fabric's default mode: 2 or 3, declared once.
printf 'defaults: {mode: 4}\n' >"$dir/modes.yaml"
case_ 1 "$dir/modes.yaml: defaults.mode: expected 2 (Mode-II) or 3 (Mode-III), not '4'" \
  "$manager" --listen "unix:$sock" --topology "$dir/modes.yaml"
printf 'defaults: {mode: 3}\n' >"$dir/modes.yaml"
printf 'defaults: {mode: 2}\n' >"$dir/modes2.yaml"
case_ 1 "$dir/modes2.yaml: defaults.mode is also declared in $dir/modes.yaml" \
  "$manager" --listen "unix:$sock" --topology "$dir/modes.yaml" --tenants "$dir/modes2.yaml"

[ "$fails" -eq 0 ] && echo "range_checks: every case refused as expected"
[ "$fails" -eq 0 ]
