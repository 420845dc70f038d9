// ARP for an endpoint that owns its own IPv4 address and MAC on a shared
// Linux interface (RFC 826, Ethernet/IPv4 only):
//
//   parse_arp / build_arp   the 42-byte Ethernet ARP frame <-> ArpMessage
//   ArpAgent                answers requests for our address, learns the
//                           senders that talk to us, builds our requests
//
// The kernel never owns the endpoint's address, so the endpoint must answer
// for it itself, or the peer (rdma_rxe resolves through the kernel's neighbour
// table) could never reach it. Thread-safety: functions are pure; ArpAgent has
// none (one thread owns it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

#include "datapath/wire/roce_packet.h"

namespace epic::soft::io {

inline constexpr size_t kArpFrameLen = 42;  // Ethernet 14 + ARP 28 (senders pad to 60)
using ArpFrame = std::array<uint8_t, kArpFrameLen>;
inline constexpr vocab::MacAddr kBroadcastMac = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

enum class ArpOp : uint16_t { kRequest = 1, kReply = 2 };

struct ArpMessage {
  ArpOp op = ArpOp::kRequest;
  vocab::MacAddr sender_mac{};
  uint32_t sender_ip = 0;  // host order
  vocab::MacAddr target_mac{};
  uint32_t target_ip = 0;
  friend bool operator==(const ArpMessage&, const ArpMessage&) = default;
};

// nullopt unless the frame is an untagged Ethernet/IPv4 ARP request or reply.
std::optional<ArpMessage> parse_arp(const uint8_t* frame, size_t len);
// Ethernet source = m.sender_mac.
ArpFrame build_arp(const vocab::MacAddr& eth_dst, const ArpMessage& m);

class ArpAgent {
 public:
  static constexpr size_t kMaxEntries = 1024;

  ArpAgent(const vocab::MacAddr& mac, uint32_t ipv4) : mac_(mac), ip_(ipv4) {}

  // Handles one received ARP message. Learns the sender of any message aimed
  // at our address (request or reply); returns the reply to send when it asks
  // for our address.
  std::optional<ArpFrame> handle(const ArpMessage& m);
  // Broadcast request: who has `target_ip`? tell our address.
  ArpFrame request(uint32_t target_ip) const;
  std::optional<vocab::MacAddr> lookup(uint32_t ipv4) const;

  uint64_t requests_answered() const { return requests_answered_; }

 private:
  vocab::MacAddr mac_;
  uint32_t ip_;
  std::map<uint32_t, vocab::MacAddr> table_;
  uint64_t requests_answered_ = 0;
};

}  // namespace epic::soft::io
