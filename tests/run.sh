#!/usr/bin/env bash
# EPIC's test command (README quick start; .ci/run calls it):
#   tests/run.sh [CTEST ARGS...]        e.g. tests/run.sh -L oracle
# Installs what it needs (deploy/install.sh), builds the CI configuration —
# clang, -Werror, ASan+UBSan, libFuzzer — in build/ci, checks that gcc builds the
# product warning-free too (its Release inc-rank is what the lab's qemu guests run),
# builds the tsan label's test programs with ThreadSanitizer (build/ci-tsan, only
# those targets), and runs ctest. Exit status is ctest's.
# Environment: EPIC_TEST_BUILD (build dir), EPIC_FUZZ_SECONDS (random fuzz run, default 30).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

"$ROOT/deploy/install.sh"

BUILD=${EPIC_TEST_BUILD:-$ROOT/build/ci}
JOBS=$(nproc)
# Sanitizer reports need file:line, not full debug info: line tables only cut the sanitizer
# builds' compile time by a sixth (measured on the manager's server.cc: 48 s -> 40 s).
LINES_ONLY=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG"
            -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG")
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LINES_ONLY[@]}" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DEPIC_WERROR=ON -DEPIC_SANITIZE=address,undefined -DEPIC_FUZZ=ON \
  -DEPIC_FUZZ_SECONDS="${EPIC_FUZZ_SECONDS:-30}" -DEPIC_LAB_RANK_BUILD="$BUILD-gcc" \
  -DEPIC_TSAN_BUILD="$BUILD-tsan"
cmake --build "$BUILD" -j"$JOBS"

# The second compiler only has to build the product cleanly: the test programs are clang's, above.
# Its Release inc-rank is what the lab's qemu guests run.
cmake -S "$ROOT" -B "$BUILD-gcc" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DEPIC_WERROR=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD-gcc" -j"$JOBS"

# ThreadSanitizer: only the programs of the tsan label (tests/tsan/CMakeLists.txt).
cmake -S "$ROOT" -B "$BUILD-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LINES_ONLY[@]}" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEPIC_WERROR=ON \
  -DEPIC_SANITIZE=thread >/dev/null
cmake --build "$BUILD-tsan" -j"$JOBS" --target engine_unit_tests agent_unit_tests \
  incd_config_tests fallback_unit_tests

cd "$BUILD"
exec ctest --output-on-failure -j"$JOBS" "$@"
