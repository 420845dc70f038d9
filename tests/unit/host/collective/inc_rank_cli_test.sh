#!/bin/sh
# inc-rank's command line without a network: --help exits 0 with the usage
# text; every bad option exits 2 with a message naming the option.
# usage: inc_rank_cli_test.sh PATH/TO/inc-rank
set -u
bin=$1
fails=0
ok="--iface lo --ip 10.0.0.1 --qpn 0x11 --switch-ip 10.0.0.254 --switch-qpn 0x1000 --rank 1 --ranks 4 --initial-psn 0x100 --window 16"

# expect STATUS SUBSTRING ARGS...: runs inc-rank ARGS, checks the exit status and that
# stdout+stderr contain SUBSTRING.
expect() {
  want=$1 text=$2
  shift 2
  out=$("$bin" "$@" 2>&1)
  got=$?
  if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -qF -- "$text"; then
    echo "FAIL: inc-rank $*: exit $got (want $want), output:"
    echo "$out"
    echo "(wanted '$text')"
    fails=$((fails + 1))
  fi
}

expect 0 "usage: inc-rank --iface IF" --help
expect 0 "exit status: 0 every result matched" $ok -h
expect 2 "--iface is required"
# shellcheck disable=SC2086
{
  expect 2 "--plan is required" $ok
  expect 2 "--rank 4 is not a rank of a group of 4" $ok --plan barrier --rank 4
  expect 2 "--window must be a power of two" $ok --plan barrier --window 12
  expect 2 "--initial-psn: Value 0x1000000 not in range" $ok --plan barrier --initial-psn 0x1000000
  expect 2 "--pmtu: path MTU 1000 is not one of 256, 512, 1024, 2048, 4096" $ok --plan barrier --pmtu 1000
  expect 2 "--retry-count: Value 8 not in range" $ok --plan barrier --retry-count 8
  expect 2 "--ip: '10.0.0' is not an IPv4 address" $ok --plan barrier --ip 10.0.0
  expect 2 "--mac: '03:00:00:00:00:01' is not a unicast MAC address" $ok --plan barrier \
    --mac 03:00:00:00:00:01
  expect 2 "--ip and --switch-ip must differ" $ok --plan barrier --switch-ip 10.0.0.1
  expect 2 "--tx-loss is a fraction in [0, 1]" $ok --plan barrier --tx-loss 2
  expect 2 "--plan: plan item 1: allreduce needs an op" $ok --plan barrier,allreduce:int32:4
  expect 2 "--plan: plan item 0 (broadcast:fp32:root=4:8): root 4 is not a rank" $ok \
    --plan broadcast:fp32:root=4:8
  expect 2 "not expected: --bogus" $ok --plan barrier --bogus
}
[ "$fails" -eq 0 ] && echo "inc-rank CLI: all cases passed"
exit "$fails"
