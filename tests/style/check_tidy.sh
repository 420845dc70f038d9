#!/usr/bin/env bash
# clang-tidy, with the repository's .clang-tidy checks, on every datapath/ source: any warning
# fails (the packet path's code stays clean of the bugprone, performance and modernize checks).
#   tests/style/check_tidy.sh BUILD_DIR [ROOT]     BUILD_DIR has compile_commands.json
set -euo pipefail
BUILD=${1:?usage: check_tidy.sh BUILD_DIR [ROOT]}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
command -v clang-tidy >/dev/null || { echo "check_tidy: clang-tidy is not installed (deploy/install.sh)" >&2; exit 2; }
[ -f "$BUILD/compile_commands.json" ] || { echo "check_tidy: no $BUILD/compile_commands.json" >&2; exit 2; }
mapfile -t files < <(ls datapath/*/*.cc)
out=$(printf '%s\n' "${files[@]}" |
      xargs -P "$(nproc)" -n 4 clang-tidy -p "$BUILD" --quiet 2>/dev/null || true)
warnings=$(printf '%s\n' "$out" | grep -E ': (warning|error): ' || true)
n=$(printf '%s' "$warnings" | grep -c . || true)
[ "$n" -eq 0 ] || printf '%s\n' "$warnings"
echo "check_tidy: ${#files[@]} datapath sources, $n warnings"
[ "$n" -eq 0 ]
