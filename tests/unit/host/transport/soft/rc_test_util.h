// Helpers for RcQp tests: QP configurations for a connected pair, request
// frames built with the wire builder, and compact descriptions of the frames
// a QP emits, for packet tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "host/transport/soft/rc_qp.h"
#include "proto/vocab/psn.h"

namespace epic::soft::testing {

inline constexpr uint32_t kQpA = 0x11, kQpB = 0x12;

// Config of QP `self` talking to QP `peer`; `sq` is self's first send PSN, `rq` the peer's.
inline QpConfig config(uint32_t self, uint32_t peer, uint32_t sq, uint32_t rq,
                       uint16_t pmtu = 256) {
  QpConfig c;
  c.qpn = self;
  c.remote_qpn = peer;
  c.sq_psn = sq;
  c.rq_psn = rq;
  c.pmtu = pmtu;
  c.path.local_mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(self)};
  c.path.remote_mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(peer)};
  c.path.local_ipv4 = 0x0A000000 | self;
  c.path.remote_ipv4 = 0x0A000000 | peer;
  return c;
}

// A request frame from QP A to QP B.
inline std::vector<uint8_t> request(uint8_t opcode, uint32_t psn, size_t payload,
                                    bool ack_req = true, uint8_t seed = 0) {
  return wire::PacketBuilder()
      .eth({2, 0, 0, 0, 0, kQpB}, {2, 0, 0, 0, 0, kQpA})
      .ipv4(0x0A000000 | kQpA, 0x0A000000 | kQpB)
      .bth(opcode, kQpB, psn)
      .ack_req(ack_req)
      .payload_pattern(payload, seed)
      .build();
}

// An ACK/NAK frame from B to A.
inline std::vector<uint8_t> ack(uint32_t psn, uint8_t syndrome, uint32_t msn = 0) {
  return wire::PacketBuilder()
      .eth({2, 0, 0, 0, 0, kQpA}, {2, 0, 0, 0, 0, kQpB})
      .ipv4(0x0A000000 | kQpB, 0x0A000000 | kQpA)
      .bth(wire::op::kAck, kQpA, psn)
      .aeth(syndrome, msn)
      .build();
}

inline void feed(RcQp& qp, const std::vector<uint8_t>& frame, uint64_t now = 0) {
  const auto r = wire::parse(frame.data(), frame.size());
  ASSERT_TRUE(r.ok()) << wire::to_string(r.error);
  qp.receive(r.view, now);
}

// What a test checks of an emitted frame.
struct Out {
  uint8_t opcode;
  uint32_t psn;
  int syndrome = -1;  // AETH syndrome, when the frame is an ACK/NAK
  int msn = -1;
  int ack_req = -1;
  int payload = -1;
  friend bool operator==(const Out&, const Out&) = default;
};

inline std::string describe(const Out& o) {
  char b[160];
  std::snprintf(b, sizeof b, "{%s psn=%06x syn=%d msn=%d ackreq=%d payload=%d}",
                std::string(wire::opcode_info(o.opcode).name).c_str(), o.psn, o.syndrome, o.msn,
                o.ack_req, o.payload);
  return b;
}

// Drains the QP's output; fields the expectation leaves at -1 are not compared.
inline std::vector<Out> drain(RcQp& qp, const std::vector<Out>& like, uint64_t now = 0) {
  std::vector<Out> got;
  while (auto f = qp.pop_tx(now)) {
    const auto r = wire::parse(f->data(), f->size());
    EXPECT_TRUE(r.ok()) << "QP emitted a malformed frame: " << wire::to_string(r.error);
    if (!r.ok()) continue;
    Out o{r.view.opcode(), r.view.psn()};
    const size_t i = got.size();
    const Out* e = i < like.size() ? &like[i] : nullptr;
    if (r.view.op->has(wire::kExtAeth)) {
      if (!e || e->syndrome >= 0) o.syndrome = r.view.aeth().syndrome;
      if (!e || e->msn >= 0) o.msn = static_cast<int>(r.view.aeth().msn);
    }
    if (!e || e->ack_req >= 0) o.ack_req = r.view.ack_req();
    if (!e || e->payload >= 0) o.payload = r.view.data_len();
    got.push_back(o);
  }
  return got;
}

inline std::string describe(const std::vector<Out>& v) {
  std::string s;
  for (const auto& o : v) s += describe(o) + " ";
  return s;
}

}  // namespace epic::soft::testing
