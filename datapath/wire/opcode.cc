#include "datapath/wire/opcode.h"

#include <array>

#include "datapath/wire/layout.h"

namespace epic::wire {
namespace {

constexpr OpcodeInfo make(uint8_t opcode, std::string_view name, Transport t, OpKind k,
                          Position pos, uint8_t ext, bool payload) {
  OpcodeInfo i;
  i.known = true;
  i.opcode = opcode;
  i.name = name;
  i.transport = t;
  i.kind = k;
  i.position = pos;
  i.ext = ext;
  i.has_payload = payload;
  // Lay the extension headers out in IBA order; record each offset.
  uint8_t off = 0;
  auto place = [&](Ext e, size_t len, uint8_t& field) {
    if ((ext & e) != 0) {
      field = off;
      off = static_cast<uint8_t>(off + len);
    }
  };
  place(kExtDeth, deth::kLen, i.off_deth);
  place(kExtReth, reth::kLen, i.off_reth);
  place(kExtAtomicEth, atomic_eth::kLen, i.off_atomic_eth);
  place(kExtAeth, aeth::kLen, i.off_aeth);
  place(kExtAtomicAckEth, atomic_ack_eth::kLen, i.off_atomic_ack_eth);
  place(kExtImmDt, immdt::kLen, i.off_immdt);
  place(kExtIeth, ieth::kLen, i.off_ieth);
  if ((ext & kExtCnpPad) != 0) off = static_cast<uint8_t>(off + cnp::kLen);
  i.ext_len = off;
  return i;
}

using P = Position;
using K = OpKind;

// SEND and RDMA WRITE opcodes are shared by RC and UC (UC = RC + 0x20).
constexpr void add_send_write(std::array<OpcodeInfo, 256>& t, uint8_t base, Transport tr,
                              std::string_view prefix_names[12]) {
  constexpr struct {
    uint8_t code;
    OpKind kind;
    Position pos;
    uint8_t ext;
  } kRows[12] = {
      {op::kSendFirst, K::kSend, P::kFirst, 0},
      {op::kSendMiddle, K::kSend, P::kMiddle, 0},
      {op::kSendLast, K::kSend, P::kLast, 0},
      {op::kSendLastImm, K::kSend, P::kLast, kExtImmDt},
      {op::kSendOnly, K::kSend, P::kOnly, 0},
      {op::kSendOnlyImm, K::kSend, P::kOnly, kExtImmDt},
      {op::kWriteFirst, K::kWrite, P::kFirst, kExtReth},
      {op::kWriteMiddle, K::kWrite, P::kMiddle, 0},
      {op::kWriteLast, K::kWrite, P::kLast, 0},
      {op::kWriteLastImm, K::kWrite, P::kLast, kExtImmDt},
      {op::kWriteOnly, K::kWrite, P::kOnly, kExtReth},
      {op::kWriteOnlyImm, K::kWrite, P::kOnly, kExtReth | kExtImmDt},
  };
  for (int r = 0; r < 12; ++r) {
    const auto code = static_cast<uint8_t>(base + kRows[r].code);
    t[code] = make(code, prefix_names[r], tr, kRows[r].kind, kRows[r].pos, kRows[r].ext, true);
  }
}

constexpr std::array<OpcodeInfo, 256> build_table() {
  std::array<OpcodeInfo, 256> t{};
  for (int c = 0; c < 256; ++c) t[c].opcode = static_cast<uint8_t>(c);

  std::string_view rc[12] = {"RC_SEND_FIRST",       "RC_SEND_MIDDLE",
                             "RC_SEND_LAST",        "RC_SEND_LAST_WITH_IMMEDIATE",
                             "RC_SEND_ONLY",        "RC_SEND_ONLY_WITH_IMMEDIATE",
                             "RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE",
                             "RC_RDMA_WRITE_LAST",  "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
                             "RC_RDMA_WRITE_ONLY",  "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"};
  std::string_view uc[12] = {"UC_SEND_FIRST",       "UC_SEND_MIDDLE",
                             "UC_SEND_LAST",        "UC_SEND_LAST_WITH_IMMEDIATE",
                             "UC_SEND_ONLY",        "UC_SEND_ONLY_WITH_IMMEDIATE",
                             "UC_RDMA_WRITE_FIRST", "UC_RDMA_WRITE_MIDDLE",
                             "UC_RDMA_WRITE_LAST",  "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
                             "UC_RDMA_WRITE_ONLY",  "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"};
  add_send_write(t, 0x00, Transport::kRc, rc);
  add_send_write(t, op::kUcBase, Transport::kUc, uc);

  const Transport rct = Transport::kRc;
  t[op::kReadRequest] = make(op::kReadRequest, "RC_RDMA_READ_REQUEST", rct, K::kReadRequest,
                             P::kOnly, kExtReth, false);
  t[op::kReadResponseFirst] = make(op::kReadResponseFirst, "RC_RDMA_READ_RESPONSE_FIRST", rct,
                                   K::kReadResponse, P::kFirst, kExtAeth, true);
  t[op::kReadResponseMiddle] = make(op::kReadResponseMiddle, "RC_RDMA_READ_RESPONSE_MIDDLE", rct,
                                    K::kReadResponse, P::kMiddle, 0, true);
  t[op::kReadResponseLast] = make(op::kReadResponseLast, "RC_RDMA_READ_RESPONSE_LAST", rct,
                                  K::kReadResponse, P::kLast, kExtAeth, true);
  t[op::kReadResponseOnly] = make(op::kReadResponseOnly, "RC_RDMA_READ_RESPONSE_ONLY", rct,
                                  K::kReadResponse, P::kOnly, kExtAeth, true);
  t[op::kAck] = make(op::kAck, "RC_ACKNOWLEDGE", rct, K::kAck, P::kNone, kExtAeth, false);
  t[op::kAtomicAck] = make(op::kAtomicAck, "RC_ATOMIC_ACKNOWLEDGE", rct, K::kAtomicAck, P::kNone,
                           kExtAeth | kExtAtomicAckEth, false);
  t[op::kCompareSwap] =
      make(op::kCompareSwap, "RC_COMPARE_SWAP", rct, K::kAtomic, P::kOnly, kExtAtomicEth, false);
  t[op::kFetchAdd] =
      make(op::kFetchAdd, "RC_FETCH_ADD", rct, K::kAtomic, P::kOnly, kExtAtomicEth, false);
  t[op::kSendLastInv] = make(op::kSendLastInv, "RC_SEND_LAST_WITH_INVALIDATE", rct, K::kSend,
                             P::kLast, kExtIeth, true);
  t[op::kSendOnlyInv] = make(op::kSendOnlyInv, "RC_SEND_ONLY_WITH_INVALIDATE", rct, K::kSend,
                             P::kOnly, kExtIeth, true);

  t[op::kUdSendOnly] =
      make(op::kUdSendOnly, "UD_SEND_ONLY", Transport::kUd, K::kSend, P::kOnly, kExtDeth, true);
  t[op::kUdSendOnlyImm] = make(op::kUdSendOnlyImm, "UD_SEND_ONLY_WITH_IMMEDIATE", Transport::kUd,
                               K::kSend, P::kOnly, kExtDeth | kExtImmDt, true);

  t[op::kCnp] = make(op::kCnp, "CNP", Transport::kCnp, K::kCnp, P::kNone, kExtCnpPad, false);
  return t;
}

constexpr std::array<OpcodeInfo, 256> kTable = build_table();

}  // namespace

const OpcodeInfo& opcode_info(uint8_t opcode) { return kTable[opcode]; }

}  // namespace epic::wire
