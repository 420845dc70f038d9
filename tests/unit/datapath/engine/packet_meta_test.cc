// classify() (packet_meta.h) turns a parsed RoCEv2 frame and the LookupTable's route into the
// PacketMeta the IncEngine modules act on: the kind of packet on its edge (an RC SEND from a
// child is an upload, from the parent a result; an ACK is a rank's ACK/NAK to reflect, a switch
// child's subtree frontier or the parent's group frontier; a CNP from any edge is a CNP;
// anything else is unsupported), the
// control flag (SEND_ONLY_WITH_IMM whose immediate is kControlImm, and nothing else), whether an
// immediate is present, the AETH syndrome, the PSN, and where the payload lies in the frame.
// The table: every known BTH opcode — RC SEND first/middle/last/only with and without an
// immediate from rank children, the switch child and the parent; SEND with invalidate (IETH),
// RDMA WRITE, RDMA READ request and responses, atomics, every UC opcode and UD, all
// unsupported; CNPs from each kind of edge; ACKs with each syndrome kind from a rank child, the
// switch child and the parent; control detection against near and other immediates and other
// opcodes; payload offset (54 bytes of Ethernet + IPv4 + UDP + BTH, 4 more for ImmDt and 4 more for
// a VLAN tag) and length (pad excluded), and the 24-bit PSN. Frames are built with
// wire::PacketBuilder and parsed with wire::parse, as the engine's burst loop does.
#include "datapath/engine/packet_meta.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datapath/engine/group_instance.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/aeth.h"
#include "tests/unit/datapath/engine/slots_test_util.h"

namespace epic::engine {
namespace {

namespace op = wire::op;
namespace aeth = vocab::aeth;
using K = PacketKind;

const char* name(PacketKind k) {
  switch (k) {
    case K::kUpload:
      return "upload";
    case K::kResult:
      return "result";
    case K::kRankAck:
      return "rank_ack";
    case K::kChildFrontier:
      return "child_frontier";
    case K::kParentFrontier:
      return "parent_frontier";
    case K::kCnp:
      return "cnp";
    case K::kUnsupported:
      return "unsupported";
  }
  return "?";
}

// Edges of slots_test::three_child_group(): ranks 0 and 1, the switch child, the parent.
constexpr int16_t kRank0 = 0, kRank1 = 1, kSwitch = 2, kParent = -1;
constexpr uint32_t kOtherImm = 0x45504944;  // kControlImm + 1
constexpr size_t kNone = 0;                 // no payload: PacketMeta::payload stays nullptr
constexpr size_t kPlain = 54;               // 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH
constexpr size_t kImm = 58;                 // + 4 ImmDt
constexpr size_t kVlan = 4;                 // an 802.1Q tag before the IPv4 header

struct Row {
  const char* name;
  uint8_t opcode;
  int16_t child;  // the route's edge
  uint32_t imm = 0;
  uint8_t syndrome = 0;  // AETH, for opcodes that carry one
  uint16_t payload = 0;  // bytes sent
  bool vlan = false;
  uint32_t psn = 0x123456;
  // Expected:
  PacketKind kind = K::kUnsupported;
  bool control = false;
  bool has_immdt = false;
  size_t payload_off = kNone;  // offset of the payload in the frame
  uint16_t payload_len = 0;
  uint8_t meta_syndrome = 0;
};

// Row builders, one per kind of row, so that each row reads as one call.
Row send(const char* n, uint8_t opcode, int16_t child, uint16_t payload, PacketKind kind,
         size_t off, uint32_t imm = 0, bool control = false, bool has_immdt = false) {
  Row r{n, opcode, child};
  r.imm = imm;
  r.payload = payload;
  r.kind = kind;
  r.control = control;
  r.has_immdt = has_immdt;
  r.payload_off = off;
  r.payload_len = payload;
  return r;
}
Row unsupported(const char* n, uint8_t opcode, int16_t child, uint16_t payload = 0,
                uint32_t imm = 0, uint8_t syndrome = 0) {
  Row r{n, opcode, child};
  r.imm = imm;
  r.payload = payload;
  r.syndrome = syndrome;
  r.kind = K::kUnsupported;
  return r;
}
Row cnp(const char* n, int16_t child) {
  Row r{n, op::kCnp, child};
  r.kind = K::kCnp;
  return r;
}
Row ack(const char* n, int16_t child, uint8_t syndrome, PacketKind kind, uint32_t psn = 0x123456) {
  Row r{n, op::kAck, child};
  r.syndrome = syndrome;
  r.meta_syndrome = syndrome;
  r.kind = kind;
  r.psn = psn;
  return r;
}
Row with_vlan(Row r, size_t off) {
  r.vlan = true;
  r.payload_off = off;
  return r;
}
Row with_psn(Row r, uint32_t psn) {
  r.psn = psn;
  return r;
}

const std::vector<Row> kRows = {
    // RC SEND from a child: an upload.
    send("RC SEND_FIRST from rank 0", op::kSendFirst, kRank0, 256, K::kUpload, kPlain),
    send("RC SEND_MIDDLE from rank 1", op::kSendMiddle, kRank1, 256, K::kUpload, kPlain),
    send("RC SEND_LAST from the switch child", op::kSendLast, kSwitch, 64, K::kUpload, kPlain),
    send("RC SEND_LAST_WITH_IMM from rank 0, kControlImm: an immediate, not a control message",
         op::kSendLastImm, kRank0, 16, K::kUpload, kImm, kControlImm, false, true),
    send("RC SEND_ONLY from rank 0", op::kSendOnly, kRank0, 16, K::kUpload, kPlain),
    send("RC SEND_ONLY from the switch child", op::kSendOnly, kSwitch, 256, K::kUpload, kPlain),
    send("RC SEND_ONLY of 5 bytes (3 pad bytes not counted)", op::kSendOnly, kRank1, 5, K::kUpload,
         kPlain),
    send("RC SEND_ONLY of 0 bytes", op::kSendOnly, kRank0, 0, K::kUpload, kPlain),
    send("RC SEND_ONLY_WITH_IMM from rank 0, kControlImm: control", op::kSendOnlyImm, kRank0, 16,
         K::kUpload, kImm, kControlImm, true, true),
    send("RC SEND_ONLY_WITH_IMM from the switch child, kControlImm: control", op::kSendOnlyImm,
         kSwitch, 16, K::kUpload, kImm, kControlImm, true, true),
    send("RC SEND_ONLY_WITH_IMM, kControlImm + 1: not control", op::kSendOnlyImm, kRank1, 16,
         K::kUpload, kImm, kOtherImm, false, true),
    send("RC SEND_ONLY_WITH_IMM, immediate 0: not control", op::kSendOnlyImm, kRank0, 8, K::kUpload,
         kImm, 0, false, true),
    send("RC SEND_ONLY_WITH_IMM, kControlImm byte-swapped: not control", op::kSendOnlyImm, kRank0,
         16, K::kUpload, kImm, 0x43495045, false, true),
    with_vlan(send("RC SEND_ONLY behind a VLAN tag", op::kSendOnly, kRank0, 32, K::kUpload, kPlain),
              kPlain + kVlan),
    with_vlan(send("RC SEND_ONLY_WITH_IMM control behind a VLAN tag", op::kSendOnlyImm, kRank1, 16,
                   K::kUpload, kImm, kControlImm, true, true),
              kImm + kVlan),
    with_psn(send("RC SEND_ONLY at PSN 0xFFFFFF", op::kSendOnly, kRank0, 4, K::kUpload, kPlain),
             0xFFFFFF),
    with_psn(send("RC SEND_ONLY at PSN 0", op::kSendOnly, kRank1, 4, K::kUpload, kPlain), 0),

    // RC SEND from the parent: a result.
    send("RC SEND_FIRST from the parent", op::kSendFirst, kParent, 256, K::kResult, kPlain),
    send("RC SEND_MIDDLE from the parent", op::kSendMiddle, kParent, 256, K::kResult, kPlain),
    send("RC SEND_LAST from the parent", op::kSendLast, kParent, 12, K::kResult, kPlain),
    send("RC SEND_LAST_WITH_IMM from the parent", op::kSendLastImm, kParent, 12, K::kResult, kImm,
         kControlImm, false, true),
    send("RC SEND_ONLY from the parent", op::kSendOnly, kParent, 128, K::kResult, kPlain),
    send("RC SEND_ONLY_WITH_IMM from the parent, kControlImm: control", op::kSendOnlyImm, kParent,
         16, K::kResult, kImm, kControlImm, true, true),
    send("RC SEND_ONLY_WITH_IMM from the parent, another immediate", op::kSendOnlyImm, kParent, 16,
         K::kResult, kImm, 7, false, true),

    // SEND with invalidate (IETH): unsupported, from any edge.
    unsupported("RC SEND_LAST_WITH_INVALIDATE from rank 0", op::kSendLastInv, kRank0, 16),
    unsupported("RC SEND_ONLY_WITH_INVALIDATE from rank 1", op::kSendOnlyInv, kRank1, 16),
    unsupported("RC SEND_ONLY_WITH_INVALIDATE from the parent", op::kSendOnlyInv, kParent, 16),

    // RDMA WRITE, READ and atomics: unsupported.
    unsupported("RC RDMA_WRITE_FIRST", op::kWriteFirst, kRank0, 256),
    unsupported("RC RDMA_WRITE_MIDDLE", op::kWriteMiddle, kRank0, 256),
    unsupported("RC RDMA_WRITE_LAST", op::kWriteLast, kRank0, 16),
    unsupported("RC RDMA_WRITE_LAST_WITH_IMM, kControlImm", op::kWriteLastImm, kRank1, 16,
                kControlImm),
    unsupported("RC RDMA_WRITE_ONLY", op::kWriteOnly, kSwitch, 16),
    unsupported("RC RDMA_WRITE_ONLY_WITH_IMM from the parent, kControlImm", op::kWriteOnlyImm,
                kParent, 16, kControlImm),
    unsupported("RC RDMA_READ_REQUEST", op::kReadRequest, kRank0),
    unsupported("RC RDMA_READ_RESPONSE_FIRST (carries an AETH, is no ACK)", op::kReadResponseFirst,
                kRank0, 256, 0, aeth::kAckUnlimitedCredits),
    unsupported("RC RDMA_READ_RESPONSE_MIDDLE", op::kReadResponseMiddle, kRank1, 256),
    unsupported("RC RDMA_READ_RESPONSE_LAST", op::kReadResponseLast, kSwitch, 16, 0,
                aeth::kAckUnlimitedCredits),
    unsupported("RC RDMA_READ_RESPONSE_ONLY from the parent", op::kReadResponseOnly, kParent, 16, 0,
                aeth::kAckUnlimitedCredits),
    unsupported("RC ATOMIC_ACKNOWLEDGE (carries an AETH, is no ACK)", op::kAtomicAck, kRank0, 0, 0,
                aeth::kAckUnlimitedCredits),
    unsupported("RC COMPARE_SWAP", op::kCompareSwap, kRank0),
    unsupported("RC FETCH_ADD", op::kFetchAdd, kParent),

    // UC (every opcode) and UD: unsupported, SEND-with-immediate and kControlImm included.
    unsupported("UC SEND_FIRST", op::kUcBase + op::kSendFirst, kRank0, 256),
    unsupported("UC SEND_MIDDLE", op::kUcBase + op::kSendMiddle, kRank0, 256),
    unsupported("UC SEND_LAST", op::kUcBase + op::kSendLast, kRank0, 16),
    unsupported("UC SEND_LAST_WITH_IMM", op::kUcBase + op::kSendLastImm, kRank0, 16, kControlImm),
    unsupported("UC SEND_ONLY from rank 0", op::kUcBase + op::kSendOnly, kRank0, 16),
    unsupported("UC SEND_ONLY from the parent", op::kUcBase + op::kSendOnly, kParent, 16),
    unsupported("UC SEND_ONLY_WITH_IMM, kControlImm: not control", op::kUcBase + op::kSendOnlyImm,
                kRank1, 16, kControlImm),
    unsupported("UC RDMA_WRITE_FIRST", op::kUcBase + op::kWriteFirst, kRank0, 256),
    unsupported("UC RDMA_WRITE_MIDDLE", op::kUcBase + op::kWriteMiddle, kRank0, 256),
    unsupported("UC RDMA_WRITE_LAST", op::kUcBase + op::kWriteLast, kRank0, 16),
    unsupported("UC RDMA_WRITE_LAST_WITH_IMM", op::kUcBase + op::kWriteLastImm, kRank0, 16, 1),
    unsupported("UC RDMA_WRITE_ONLY", op::kUcBase + op::kWriteOnly, kSwitch, 16),
    unsupported("UC RDMA_WRITE_ONLY_WITH_IMM", op::kUcBase + op::kWriteOnlyImm, kRank0, 16, 1),
    unsupported("UD SEND_ONLY", op::kUdSendOnly, kRank0, 16),
    unsupported("UD SEND_ONLY_WITH_IMM, kControlImm: not control", op::kUdSendOnlyImm, kRank0, 16,
                kControlImm),
    unsupported("UD SEND_ONLY from the parent", op::kUdSendOnly, kParent, 16),
    cnp("CNP from rank 0", kRank0),
    cnp("CNP from the switch child", kSwitch),
    cnp("CNP from the parent", kParent),

    // ACKs: by the edge they came on; the syndrome is carried whatever it says.
    ack("ACK from rank 0", kRank0, aeth::kAckUnlimitedCredits, K::kRankAck),
    ack("ACK with 0 credits from rank 1", kRank1, 0x00, K::kRankAck),
    ack("RNR NAK (timer 12) from rank 0", kRank0, aeth::rnr_nak(12), K::kRankAck),
    ack("NAK PSN sequence error from rank 1", kRank1, aeth::kNakPsnSequenceError, K::kRankAck),
    ack("NAK invalid request from rank 0", kRank0, aeth::kNakInvalidRequest, K::kRankAck),
    ack("NAK remote access error from rank 0", kRank0, aeth::kNakRemoteAccessError, K::kRankAck),
    ack("NAK remote operational error from rank 1", kRank1, aeth::kNakRemoteOperationalError,
        K::kRankAck),
    ack("ACK from rank 0 at PSN 0xFFFFFF", kRank0, aeth::kAckUnlimitedCredits, K::kRankAck,
        0xFFFFFF),
    ack("ACK from the switch child: its subtree's frontier", kSwitch, aeth::kAckUnlimitedCredits,
        K::kChildFrontier),
    ack("NAK PSN sequence error from the switch child", kSwitch, aeth::kNakPsnSequenceError,
        K::kChildFrontier),
    ack("ACK from the switch child at PSN 0", kSwitch, aeth::kAckUnlimitedCredits,
        K::kChildFrontier, 0),
    ack("ACK from the parent: the group's frontier", kParent, aeth::kAckUnlimitedCredits,
        K::kParentFrontier),
    ack("RNR NAK from the parent", kParent, aeth::rnr_nak(1), K::kParentFrontier),
    ack("ACK from the parent at PSN 0xFFFFFF", kParent, 0x00, K::kParentFrontier, 0xFFFFFF),
};

std::vector<uint8_t> build(const Row& r) {
  std::vector<uint8_t> payload(r.payload);
  for (size_t k = 0; k < payload.size(); ++k) payload[k] = static_cast<uint8_t>(0xA0 + k);
  wire::PacketBuilder b;
  b.eth({2, 0xEE, 0, 0, 0, 1}, {2, 0xAA, 0, 0, 0, 1}).ipv4(0x0A640000, 0x0AC80001);
  if (r.vlan) b.vlan(0x0064);
  b.bth(r.opcode, 0x4000, r.psn).immdt(r.imm).aeth(r.syndrome, 5).payload(payload);
  return b.build();
}

TEST(PacketMetaTable, ClassifyEveryOpcodeOnEveryEdge) {
  SlotRegion slots(4, 256);
  std::string error;
  const auto group = prepare_group(slots_test::three_child_group(), &slots, error);
  ASSERT_NE(group, nullptr) << error;
  GroupState* g = &group->state;
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    const std::vector<uint8_t> f = build(r);
    const wire::ParseResult p = wire::parse(f.data(), f.size());
    ASSERT_TRUE(p.ok()) << int{static_cast<uint8_t>(p.error)};
    const PacketMeta m = classify(p.view, Route{g, r.child});
    EXPECT_EQ(m.group, g);
    EXPECT_EQ(m.child, r.child);
    EXPECT_STREQ(name(m.kind), name(r.kind));
    EXPECT_EQ(m.opcode, r.opcode);
    EXPECT_EQ(m.psn, r.psn);
    EXPECT_EQ(m.control, r.control);
    EXPECT_EQ(m.has_immdt, r.has_immdt);
    EXPECT_EQ(m.syndrome, r.meta_syndrome);
    EXPECT_EQ(m.payload_len, r.payload_len);
    if (r.payload_off == kNone) {
      EXPECT_EQ(m.payload, nullptr);
    } else {
      EXPECT_EQ(m.payload, f.data() + r.payload_off);
      if (r.payload_len > 0) {
        EXPECT_EQ(m.payload[0], 0xA0);  // the first byte sent
        EXPECT_EQ(m.payload[r.payload_len - 1], static_cast<uint8_t>(0xA0 + r.payload_len - 1));
      }
    }
  }
}

// The table names every opcode the wire layer knows: none is left unclassified by a row.
TEST(PacketMetaTable, TableCoversEveryKnownOpcode) {
  std::vector<bool> seen(256, false);
  for (const Row& r : kRows) seen[r.opcode] = true;
  for (int code = 0; code < 256; ++code) {
    if (wire::opcode_info(static_cast<uint8_t>(code)).known) {
      EXPECT_TRUE(seen[static_cast<size_t>(code)]) << "opcode 0x" << std::hex << code;
    }
  }
}

}  // namespace
}  // namespace epic::engine
