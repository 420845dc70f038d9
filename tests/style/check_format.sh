#!/usr/bin/env bash
# The house format (.clang-format at the repository root) on every C and C++ source of the
# repository: lists each file clang-format would change, with the first place it would change,
# and exits 1 if there is any. Fix with:  clang-format -i FILE...
#   tests/style/check_format.sh [ROOT]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (deploy/install.sh)" >&2; exit 2; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.cc' '*.h' | grep -v '^build/')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||')
fi
# One clang-format for every file; it prints each place it would change as a warning.
out=$(clang-format --style=file --dry-run "${files[@]}" 2>&1 || true)
mapfile -t bad < <(printf '%s\n' "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | cut -d: -f1 | sort -u)
for f in "${bad[@]}"; do
  echo "not formatted: $f"
  printf '%s\n' "$out" | grep -A2 -m1 -F "$f:" | sed 's/^/    /'
done
echo "check_format: ${#files[@]} files, ${#bad[@]} not formatted (fix: clang-format -i FILE)"
[ "${#bad[@]}" -eq 0 ]
