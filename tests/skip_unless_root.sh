#!/usr/bin/env bash
# skip_unless_root.sh - run a lab or integration test only where it can run.
#   skip_unless_root.sh [--tun] COMMAND [ARGS...]
# Exits 77 (ctest SKIP_RETURN_CODE) with a reason when not root, or with --tun when
# /dev/net/tun is missing; otherwise execs COMMAND, whose status is the test's. Nothing else
# skips: a missing package or a broken lab fails the test.
set -euo pipefail
need_tun=0
[ "${1:-}" = --tun ] && { need_tun=1; shift; }
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: needs root (network namespaces, taps, AF_PACKET)"; exit 77
fi
if [ $need_tun = 1 ] && [ ! -c /dev/net/tun ]; then
  echo "SKIP: needs /dev/net/tun (the lab's qemu guests use taps)"; exit 77
fi
exec "$@"
