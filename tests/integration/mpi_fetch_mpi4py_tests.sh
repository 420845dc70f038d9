#!/usr/bin/env bash
# mpi_fetch_mpi4py_tests.sh CACHE_DIR
# Puts the test suite of the installed python3-mpi4py (its Debian source package, which has
# test/; the binary package does not ship it) under CACHE_DIR and prints the test/ folder.
#
# From the Debian archive through apt's own machinery, without touching the system's apt
# configuration: a private sources list (the system's deb entries turned into deb-src), lists
# and cache under CACHE_DIR/apt; apt checks the .dsc and tarball against the signed Sources
# index. The exact source version of the installed binary package is asked for.
# EPIC_MPI4PY_SRC=DIR uses an unpacked mpi4py source tree (with test/runtests.py) of the same
# version instead (nothing is fetched).
# Exit status: 0 found (path on stdout), 3 the archive does not have it (why on stderr),
# 2 usage or no python3-mpi4py.
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
CACHE=$1
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

src=$(dpkg-query -W -f='${source:Package} ${source:Version}' python3-mpi4py 2>/dev/null) || {
  echo "python3-mpi4py is not installed (apt-get install python3-mpi4py)" >&2; exit 2; }
pkg=${src% *}
ver=${src#* }
upstream=${ver%-*}
upstream=${upstream#*:}

if [ -n "${EPIC_MPI4PY_SRC:-}" ]; then
  [ -f "$EPIC_MPI4PY_SRC/test/runtests.py" ] || {
    echo "EPIC_MPI4PY_SRC=$EPIC_MPI4PY_SRC has no test/runtests.py" >&2; exit 2; }
  echo "$EPIC_MPI4PY_SRC/test"
  exit 0
fi

tree="$CACHE/$pkg-$upstream"
if [ -f "$tree/test/runtests.py" ]; then
  echo "$tree/test"
  exit 0
fi

apt_dir="$CACHE/apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" \
  "$apt_dir/download"
# The system's deb sources as deb-src (deb822 files and one-line lists alike).
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  sed 's/^Types:.*/Types: deb-src/' "$f" > "$apt_dir/parts/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >> "$apt_dir/parts/system.list"
done
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/parts"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
if ! apt-get -q "${apt_opts[@]}" update > "$apt_dir/update.log" 2>&1; then
  echo "apt-get update of the deb-src indexes failed:" >&2
  tail -5 "$apt_dir/update.log" >&2
  exit 3
fi
if ! (cd "$apt_dir/download" &&
      apt-get -q "${apt_opts[@]}" source --download-only "$pkg=$ver") \
    > "$apt_dir/source.log" 2>&1; then
  echo "the Debian archive did not give the source of $pkg $ver (apt-get source):" >&2
  grep -E '^(E|Err):' "$apt_dir/source.log" >&2 || tail -5 "$apt_dir/source.log" >&2
  exit 3
fi
orig=$(ls "$apt_dir/download/${pkg}_${upstream}".orig.tar.* 2>/dev/null | head -1)
[ -n "$orig" ] || { echo "no ${pkg}_${upstream}.orig.tar.* among the downloaded files" >&2; exit 3; }
mkdir -p "$tree.tmp"
tar -xf "$orig" -C "$tree.tmp" --strip-components=1
rm -rf "$tree"
mv "$tree.tmp" "$tree"
echo "$tree/test"
