#!/usr/bin/env bash
# Idempotent installer for EPIC's build, test and lab dependencies on Debian 12.
#
#   deploy/install.sh            everything: toolchain, libraries, oracles, Soft-RoCE lab tools
#   deploy/install.sh --check    list what is missing, install nothing (exit 1 if anything is)
#
# Runs apt only when a package is missing, so a second run takes well under a second.
# See docs/dependencies.md for why each package is here.
set -euo pipefail

PKGS=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang clang-format clang-tidy libclang-rt-14-dev
  # test and benchmark frameworks
  libgtest-dev libgmock-dev libbenchmark-dev libgloo-dev
  # chosen libraries (docs/dependencies.md): DPDK, rdma-core, Boost.Asio, protobuf, gRPC
  dpdk dpdk-dev libdpdk-dev libibverbs-dev rdma-core libboost-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # incd: config (YAML onto protobuf), logging, CLI, Prometheus metrics (docs/dependencies.md)
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libcli11-dev prometheus-cpp-dev
  # CRC baselines for the ICRC benchmark
  zlib1g-dev libisal-dev
  # model checking (Promela)
  spin
  # independent wire oracles
  python3 python3-scapy tshark
  # network namespaces / veth tests
  iproute2 ethtool iputils-ping
  # frameworks (docs/pytorch.md, docs/mpi.md): the PyTorch "epic" backend, the MPI offload library
  python3-torch libtorch-dev pybind11-dev libopenmpi-dev openmpi-bin python3-mpi4py python3-numpy hpcc
  # Soft-RoCE lab (qemu guests running Linux rdma_rxe), see deploy/lab/
  qemu-system-x86 busybox-static kmod ibverbs-utils ibverbs-providers perftest cpio bc tcpdump
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${1:-}" = --check ]; then
  if [ ${#missing[@]} -eq 0 ]; then echo "all ${#PKGS[@]} packages installed"; exit 0; fi
  echo "missing: ${missing[*]}"; exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install.sh: all ${#PKGS[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "install.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -o DPkg::Lock::Timeout=600
$SUDO apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
