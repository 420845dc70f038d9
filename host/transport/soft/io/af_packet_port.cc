#include "host/transport/soft/io/af_packet_port.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace epic::soft::io {
namespace {

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23  // Linux 4.20+
#endif

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

Result<std::unique_ptr<AfPacketPort>> AfPacketPort::open(std::string_view ifname,
                                                         const LossConfig& loss) {
  using R = std::unique_ptr<AfPacketPort>;
  const std::string name(ifname);
  if (name.empty() || name.size() >= IFNAMSIZ) {
    return make_error<R>("interface name '" + name + "' is empty or longer than " +
                         std::to_string(IFNAMSIZ - 1) + " characters");
  }
  const unsigned ifindex = if_nametoindex(name.c_str());
  if (ifindex == 0) {
    return make_error<R>("interface " + name + " does not exist in this network namespace (" +
                         errno_text(errno) + ")");
  }
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) {
    const int e = errno;
    return make_error<R>("cannot open an AF_PACKET socket: " + errno_text(e) +
                         (e == EPERM ? " (needs root or CAP_NET_RAW)" : ""));
  }
  auto fail = [&](const std::string& what) {
    const int e = errno;
    ::close(fd);
    return make_error<R>(what + " on " + name + ": " + errno_text(e));
  };

  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  if (::ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) return fail("SIOCGIFFLAGS");
  if ((ifr.ifr_flags & IFF_UP) == 0) {
    ::close(fd);
    return make_error<R>("interface " + name + " is down (ip link set " + name + " up)");
  }
  PortInfo info;
  info.name = name;
  info.ifindex = static_cast<int>(ifindex);
  if (::ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) return fail("SIOCGIFHWADDR");
  std::memcpy(info.kernel_mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  if (::ioctl(fd, SIOCGIFMTU, &ifr) < 0) return fail("SIOCGIFMTU");
  info.mtu = static_cast<uint32_t>(ifr.ifr_mtu);

  // Our own transmissions would otherwise come back to us as PACKET_OUTGOING.
  const int one = 1;
  (void)::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  // Room for a window of full-size frames while the loop is busy (root may exceed rmem_max).
  const int rcvbuf = 8 << 20, sndbuf = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0) {
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  }
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) < 0) {
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  }

  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(ifindex);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sll), sizeof sll) < 0) return fail("bind");
  // The endpoint's MAC is not the interface's: a real NIC would filter its frames out.
  packet_mreq mr{};
  mr.mr_ifindex = static_cast<int>(ifindex);
  mr.mr_type = PACKET_MR_PROMISC;
  if (::setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) {
    return fail("PACKET_ADD_MEMBERSHIP (promiscuous)");
  }
  return {R(new AfPacketPort(fd, std::move(info), loss)), ""};
}

AfPacketPort::~AfPacketPort() {
  if (fd_ >= 0) ::close(fd_);
}

size_t AfPacketPort::recv(uint8_t* buf, size_t cap) {
  for (int skipped = 0; skipped < 256; ++skipped) {  // bounded: never spins on a flood
    sockaddr_ll from{};
    socklen_t fromlen = sizeof from;
    const ssize_t n =
        ::recvfrom(fd_, buf, cap, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &fromlen);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        rx_errno_ = errno;  // e.g. ENETDOWN: the interface went away
        ++counters_.rx_errors;
      }
      return 0;
    }
    if (from.sll_pkttype == PACKET_OUTGOING) {
      ++counters_.rx_outgoing_skipped;
      continue;
    }
    if (static_cast<size_t>(n) > cap) {
      ++counters_.rx_truncated;
      continue;
    }
    ++counters_.rx_frames;
    counters_.rx_bytes += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
  return 0;
}

SendResult AfPacketPort::send(const uint8_t* frame, size_t len, bool roce) {
  if (roce && loss_.drop_tx()) {
    ++counters_.tx_loss_injected;
    return SendResult::kSent;
  }
  const ssize_t n = ::send(fd_, frame, len, MSG_DONTWAIT);
  if (n == static_cast<ssize_t>(len)) {
    ++counters_.tx_frames;
    counters_.tx_bytes += len;
    return SendResult::kSent;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    ++counters_.tx_would_block;
    return SendResult::kWouldBlock;
  }
  // ENOBUFS (device queue full) included: the frame is lost, as on a congested
  // link, and RC recovers it; waiting for writability would spin.
  last_errno_ = n < 0 ? errno : EMSGSIZE;
  ++counters_.tx_errors;
  return SendResult::kError;
}

bool AfPacketPort::drop_rx_ack() {
  if (!loss_.drop_rx_ack()) return false;
  ++counters_.rx_ack_loss_injected;
  return true;
}

bool AfPacketPort::drop_rx_request() {
  if (!loss_.drop_rx_request()) return false;
  ++counters_.rx_request_loss_injected;
  return true;
}

uint64_t AfPacketPort::kernel_rx_drops() const {
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (::getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
    kernel_rx_drops_ += st.tp_drops;
  return kernel_rx_drops_;
}

}  // namespace epic::soft::io
