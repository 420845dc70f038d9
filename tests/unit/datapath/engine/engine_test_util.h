// A two-rank group at one switch for engine unit tests: rank r is child r on port r, behind
// the switch's virtual endpoint (kSwitchIp, qp_base + r).
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/engine/group.h"
#include "datapath/wire/builder.h"

namespace epic::engine::testing {

inline const vocab::MacAddr kSwitchMac{2, 0xEE, 0, 0, 0, 1};
inline constexpr uint32_t kSwitchIp = 0x0AC80001;

inline GroupConfig two_rank_group(uint32_t id, uint32_t qp_base, uint32_t window = 4) {
  GroupConfig cfg;
  cfg.group_id = id;
  cfg.num_ranks = 2;
  cfg.window = window;
  cfg.pmtu = 256;
  cfg.initial_psn = 100;
  for (uint16_t r = 0; r < 2; ++r) {
    ChildLink l;
    l.local = {kSwitchMac, kSwitchIp, qp_base + r};
    l.remote = {{2, 0xAA, 0, 0, 0, static_cast<uint8_t>(r)}, 0x0A640000u + r, 0x100u + r};
    l.port = r;
    l.is_rank = true;
    l.first_rank = r;
    cfg.children.push_back(l);
  }
  return cfg;
}

// A RoCE frame from rank `from` to the switch's endpoint `dest_qp`, with IP ECN bits `ecn`.
inline std::vector<uint8_t> frame(uint32_t dest_qp, uint8_t opcode, uint32_t psn,
                                  std::vector<uint8_t> payload, uint32_t imm = 0, uint8_t from = 0,
                                  uint8_t ecn = 0) {
  auto b = wire::PacketBuilder()
               .eth(kSwitchMac, {2, 0xAA, 0, 0, 0, from})
               .ipv4(0x0A640000u + from, kSwitchIp)
               .ecn(ecn);
  b.bth(opcode, dest_qp, psn).immdt(imm).payload(payload);
  return b.build();
}

// The port a frame of this file's ranks comes in on: rank r (source MAC 02:aa:00:00:00:r) is
// on port r, as two_rank_group installs it (the engine checks the edge binding).
inline uint16_t ingress_port(const std::vector<uint8_t>& f) {
  return f.size() > 11 ? f[11] : 0;  // the last byte of the source MAC
}

// The control message announcing `d`.
inline std::vector<uint8_t> control(const CollectiveDescriptor& d) {
  std::vector<uint8_t> p(kControlPayloadBytes);
  vocab::encode_control(d, p.data());
  return p;
}

}  // namespace epic::engine::testing
