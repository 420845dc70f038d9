#!/usr/bin/env bash
# build_initramfs.sh - build the Soft-RoCE lab's guest kernel and initramfs (EPIC).
#
#   deploy/lab/build_initramfs.sh                      build (or reuse) the cached kernel + initramfs
#   deploy/lab/build_initramfs.sh --force              rebuild even when up to date
#   deploy/lab/build_initramfs.sh --overlay OUT SRC[:DST]...
#                                                      pack extra host files (and the shared
#                                                      libraries they need) into a small cpio.gz
#                                                      that is appended to the base initramfs
#   deploy/lab/build_initramfs.sh --print-dir          print the cache directory and exit
#   deploy/lab/build_initramfs.sh --help
#
# The guest is Debian's own 6.1 kernel (booted by qemu with TCG; its rdma_rxe module works) and a
# ~9 MB busybox initramfs with kmod, iproute2 (ip, rdma), rdma-core/libibverbs + the rxe provider,
# ibverbs-utils and perftest, all copied from this (Debian 12) host.  Outputs, in the cache dir
# ${EPIC_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epic-rxe-lab}:
#   vmlinuz            the guest kernel
#   initrd.cpio.gz     the initramfs (its /init is described below)
#   initrd.files       the initramfs's file list (an overlay leaves these out)
#   kernel-version     e.g. 6.1.0-57-amd64
#   stamp              hash of everything the build depends on; equal stamp => nothing to do
#   kernel/            the kernel .deb (extracted only while building)
#
# The kernel package is fetched once with `apt-get download` into $CACHE/kernel/ and reused from
# there.  EPIC_LAB_KERNEL_PKG=linux-image-6.1.0-NN-amd64 picks another one.
#
# Host packages (deploy/install.sh installs them): qemu-system-x86 busybox-static kmod iproute2
#   rdma-core ibverbs-utils ibverbs-providers perftest cpio
#
# Guest /init, configured from the kernel command line:
#   epiclab.id=G                 guest number (hostname gG)
#   epiclab.ip=A/L[,A/L...]      IPv4 address of eth0, eth1, ...; each NIC gets an rxe device rxeN
#   epiclab.ip6=A/L[,A/L...]     optional IPv6 addresses (added with nodad)
#   epiclab.shell                drop to a shell on the console instead of powering off
# It mounts the 9p share (mount tag "share") on /mnt, runs `sh /mnt/guest.sh G` when present,
# with its output in /mnt/out.gG.log and its exit status in /mnt/rc.gG, then powers off.
set -euo pipefail
trap 'echo "build_initramfs.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

CACHE=${EPIC_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epic-rxe-lab}
SELF=$(readlink -f "$0")
LIBDIR=/usr/lib/x86_64-linux-gnu

usage() { sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "build_initramfs.sh: $*" >&2; exit 1; }

# copy_with_libs ROOT HOSTFILE [GUESTPATH]: copy a file and the shared libraries ldd lists for it.
copy_with_libs() {
  local root=$1 src=$2 dst=${3:-$2} lib
  [ -e "$src" ] || die "missing host file $src (install the package that ships it)"
  mkdir -p "$root/$(dirname "$dst")"
  cp -L "$src" "$root/$dst"
  { ldd "$src" 2>/dev/null || true; } | { grep -o '/[^ ]*' || true; } | while read -r lib; do
    [ -e "$root/$lib" ] && continue
    # an overlay leaves out what the base initramfs already has
    [ -n "${BASE_FILES:-}" ] && grep -qxF ".$lib" "$BASE_FILES" && continue
    mkdir -p "$root/$(dirname "$lib")"; cp -L "$lib" "$root/$lib"
  done
}

pack() { # pack DIR OUT
  (cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -n -6 > "$2.tmp"
  mv "$2.tmp" "$2"
}

overlay() { # overlay OUT SRC[:DST]...
  local out=$1; shift
  [ $# -gt 0 ] || die "--overlay needs at least one SRC[:DST]"
  local root; root=$(mktemp -d "${TMPDIR:-/tmp}/epiclab-overlay.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$root'" RETURN
  local spec src dst
  BASE_FILES=""; [ -s "$CACHE/initrd.files" ] && BASE_FILES=$CACHE/initrd.files
  for spec in "$@"; do
    src=${spec%%:*}; dst=${spec#*:}
    [ "$dst" = "$spec" ] && dst=/usr/local/bin/$(basename "$src")
    copy_with_libs "$root" "$src" "$dst"
  done
  pack "$root" "$out"
  echo "overlay: $out ($(stat -c %s "$out") bytes, $# file(s))"
}

FORCE=0
case "${1:-}" in
  -h|--help) usage; exit 0;;
  --print-dir) echo "$CACHE"; exit 0;;
  --overlay) shift; [ $# -ge 1 ] || die "--overlay OUT SRC[:DST]..."; overlay "$@"; exit 0;;
  --force) FORCE=1;;
  "") ;;
  *) usage >&2; exit 2;;
esac

for t in busybox cpio gzip depmod modprobe ldconfig apt-get dpkg-deb flock; do
  command -v "$t" >/dev/null || die "needs '$t' on the host (see deploy/install.sh)"
done
BUSYBOX=$(command -v busybox)
"$BUSYBOX" --list >/dev/null 2>&1 || die "$BUSYBOX is not a usable busybox"
ldd "$BUSYBOX" >/dev/null 2>&1 && die "$BUSYBOX is dynamic; install busybox-static"

mkdir -p "$CACHE/kernel"
exec 9>"$CACHE/.build.lock"
flock -w 900 9 || die "timed out waiting for another build ($CACHE/.build.lock)"

# --- the kernel package (downloaded once) ----------------------------------------------------
KDIR=$CACHE/kernel
DEB=""
if [ -n "${EPIC_LAB_KERNEL_PKG:-}" ]; then
  DEB=$(ls "$KDIR/${EPIC_LAB_KERNEL_PKG}"_*_amd64.deb 2>/dev/null | head -1 || true)
  KPKG=$EPIC_LAB_KERNEL_PKG
else
  DEB=$(ls "$KDIR"/linux-image-[0-9]*-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -1 || true)
  KPKG=""
fi
if [ -z "$DEB" ]; then
  if [ -z "$KPKG" ]; then
    resolve() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
    KPKG=$(resolve)
    if [ -z "$KPKG" ] && [ "$(id -u)" = 0 ]; then
      echo "package lists do not know linux-image-amd64: running apt-get update"
      apt-get update -o DPkg::Lock::Timeout=600 >/dev/null
      KPKG=$(resolve)
    fi
    [ -n "$KPKG" ] || die "cannot resolve linux-image-amd64 (run apt-get update)"
  fi
  echo "downloading $KPKG ..."
  (cd "$KDIR" && apt-get download "$KPKG" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  DEB=$(ls "$KDIR/${KPKG}"_*_amd64.deb 2>/dev/null | head -1 || true)
  [ -n "$DEB" ] || die "apt-get download $KPKG failed"
fi

# --- up to date? -------------------------------------------------------------------------------
STAMP=$( {
  sha256sum "$SELF" | cut -d' ' -f1
  basename "$DEB"
  dpkg-query -W -f='${Package} ${Version}\n' busybox-static kmod iproute2 rdma-core ibverbs-utils \
    ibverbs-providers libibverbs1 perftest libc6 2>/dev/null || true
} | sha256sum | cut -d' ' -f1)
if [ "$FORCE" = 0 ] && [ -s "$CACHE/vmlinuz" ] && [ -s "$CACHE/initrd.cpio.gz" ] &&
   [ "$(cat "$CACHE/stamp" 2>/dev/null)" = "$STAMP" ]; then
  echo "up to date: $CACHE (kernel $(cat "$CACHE/kernel-version"))"
  exit 0
fi

T0=$(date +%s)
KROOT=$KDIR/root
if [ ! -f "$KROOT/.from" ] || [ "$(cat "$KROOT/.from")" != "$(basename "$DEB")" ]; then
  rm -rf "$KROOT"; mkdir -p "$KROOT"
  dpkg-deb -x "$DEB" "$KROOT"
  basename "$DEB" > "$KROOT/.from"
fi
KV=$(ls "$KROOT/lib/modules" | head -1)
[ -f "$KROOT/boot/vmlinuz-$KV" ] || die "no vmlinuz in $DEB"
depmod -b "$KROOT" "$KV"

R=$CACHE/iroot; rm -rf "$R"
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,run,mnt,etc,root,var/run}

# busybox applets, except where a real tool follows (ip from iproute2, kmod tools)
cp "$BUSYBOX" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
rm -f "$R/bin/ip" "$R/bin/modprobe" "$R/bin/insmod" "$R/bin/rmmod" "$R/bin/lsmod" "$R/bin/depmod" "$R/bin/modinfo"

# kernel modules: closure of what the guest loads (modprobe resolves the dependencies)
MODS="rdma_rxe crc32_generic crc32-pclmul virtio_net virtio_pci 9pnet_virtio 9p bridge veth"
for m in $MODS; do
  modprobe -d "$KROOT" -S "$KV" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | sort -u | while read -r f; do
  rel=${f#"$KROOT"/}
  mkdir -p "$R/$(dirname "$rel")"; cp "$f" "$R/$rel"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
  cp "$KROOT/lib/modules/$KV/$f" "$R/lib/modules/$KV/" 2>/dev/null || true
done
depmod -b "$R" "$KV"

# user space: rdma-core, perftest, iproute2, kmod, and the libraries they link
BINS="/usr/bin/kmod /usr/bin/rdma /usr/sbin/ip /usr/sbin/bridge /usr/sbin/ldconfig
  /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong
  /usr/bin/ib_write_bw /usr/bin/ib_write_lat /usr/bin/ib_send_bw /usr/bin/ib_send_lat
  /usr/bin/ib_read_bw /usr/bin/ib_read_lat"
for b in $BINS; do copy_with_libs "$R" "$b"; done
for p in "$LIBDIR"/libibverbs/librxe-rdmav*.so; do copy_with_libs "$R" "$p"; done
mkdir -p "$R/etc/libibverbs.d"; cp /etc/libibverbs.d/rxe.driver "$R/etc/libibverbs.d/"
for a in modprobe insmod lsmod rmmod depmod modinfo; do ln -sf /usr/bin/kmod "$R/sbin/$a"; done
ln -sf /usr/sbin/ip "$R/sbin/ip"
echo "$LIBDIR" > "$R/etc/ld.so.conf"; ldconfig -r "$R"
echo 'root:x:0:0:root:/root:/bin/sh' > "$R/etc/passwd"; echo 'root:x:0:' > "$R/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$R/etc/hosts"

cat > "$R/init" <<'INIT'
#!/bin/sh
# EPIC Soft-RoCE lab guest init (written by deploy/lab/build_initramfs.sh)
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# busybox sh prefers its own applets over PATH: call iproute2 and kmod by full path
IP=/usr/sbin/ip MODPROBE=/sbin/modprobe
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
ID=0; IP4=""; IP6=""; SHELL_AT_END=0
for x in $(cat /proc/cmdline); do
  case $x in
    epiclab.id=*) ID=${x#*=};;
    epiclab.ip=*) IP4=$(echo "${x#*=}" | tr , ' ');;
    epiclab.ip6=*) IP6=$(echo "${x#*=}" | tr , ' ');;
    epiclab.shell) SHELL_AT_END=1;;
  esac
done
hostname "g$ID"
for m in virtio_pci virtio_net 9pnet_virtio 9p crc32_generic rdma_rxe; do $MODPROBE "$m" || echo "modprobe $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /mnt 2>/dev/null || echo "no 9p share"
$IP link set lo up
echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
i=0
for a in $IP4; do
  echo 0 > /proc/sys/net/ipv6/conf/eth$i/accept_dad 2>/dev/null
  $IP addr add "$a" dev "eth$i"; $IP link set "eth$i" up
  rdma link add "rxe$i" type rxe netdev "eth$i" || echo "rdma link add rxe$i failed"
  i=$((i+1))
done
i=0
for a in $IP6; do $IP -6 addr add "$a" dev "eth$i" nodad; i=$((i+1)); done
echo "EPICLAB GUEST $ID READY uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
rdma link show
if [ -f /mnt/guest.sh ]; then
  sh /mnt/guest.sh "$ID" > "/mnt/out.g$ID.log" 2>&1; rc=$?
  echo "$rc" > "/mnt/rc.g$ID"
  echo "EPICLAB GUEST $ID guest.sh rc=$rc"
  cat "/mnt/out.g$ID.log"
fi
[ "$SHELL_AT_END" = 1 ] && setsid cttyhack sh
sync; umount /mnt 2>/dev/null; poweroff -f
INIT
chmod +x "$R/init"

pack "$R" "$CACHE/initrd.cpio.gz"
(cd "$R" && find . | LC_ALL=C sort) > "$CACHE/initrd.files"
cp "$KROOT/boot/vmlinuz-$KV" "$CACHE/vmlinuz"
echo "$KV" > "$CACHE/kernel-version"
echo "$STAMP" > "$CACHE/stamp"
rm -rf "$R" "$KROOT"   # the extracted package is ~400 MB; the .deb (70 MB) stays for rebuilds
echo "built in $(( $(date +%s) - T0 )) s: $CACHE/vmlinuz (kernel $KV)," \
     "$CACHE/initrd.cpio.gz ($(stat -c %s "$CACHE/initrd.cpio.gz") bytes)"
