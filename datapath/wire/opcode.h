// Table-driven description of BTH opcodes (IBA 9.2.1, RoCEv2 CNP).
//
// One entry per opcode gives its transport, operation, position in a
// message, which extension headers follow the BTH (and at which offset) and
// whether it carries a payload. Parser, builder and endpoints read the table;
// none of them switch on opcode values. Unsupported opcodes (RD, reserved)
// have `known == false`. Thread-safe: the table is constant.
#pragma once

#include <cstdint>
#include <string_view>

namespace epic::wire {

enum class Transport : uint8_t { kRc, kUc, kUd, kCnp };
enum class OpKind : uint8_t {
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAck,
  kAtomic,
  kAtomicAck,
  kCnp,
};
enum class Position : uint8_t { kFirst, kMiddle, kLast, kOnly, kNone };

// Extension headers, as bits, in wire order.
enum Ext : uint8_t {
  kExtDeth = 1 << 0,
  kExtReth = 1 << 1,
  kExtAtomicEth = 1 << 2,
  kExtAeth = 1 << 3,
  kExtAtomicAckEth = 1 << 4,
  kExtImmDt = 1 << 5,
  kExtIeth = 1 << 6,
  kExtCnpPad = 1 << 7,
};

inline constexpr uint8_t kNoOffset = 0xFF;

struct OpcodeInfo {
  bool known = false;
  uint8_t opcode = 0;
  std::string_view name = "UNKNOWN";
  Transport transport = Transport::kRc;
  OpKind kind = OpKind::kSend;
  Position position = Position::kNone;
  uint8_t ext = 0;           // Ext bits
  bool has_payload = false;  // a payload (possibly empty) may follow the headers
  uint8_t ext_len = 0;       // bytes of extension headers after the BTH
  // Offsets of each extension header from the end of the BTH (kNoOffset: absent).
  uint8_t off_deth = kNoOffset, off_reth = kNoOffset, off_atomic_eth = kNoOffset,
          off_aeth = kNoOffset, off_atomic_ack_eth = kNoOffset, off_immdt = kNoOffset,
          off_ieth = kNoOffset;

  bool has(Ext e) const { return (ext & e) != 0; }
  // First or only packet of a request message (starts a new message).
  bool starts_message() const {
    return position == Position::kFirst || position == Position::kOnly;
  }
  bool ends_message() const { return position == Position::kLast || position == Position::kOnly; }
};

const OpcodeInfo& opcode_info(uint8_t opcode);

// Opcode values used by name in code and tests.
namespace op {
inline constexpr uint8_t kUcBase = 0x20, kUdBase = 0x60;
inline constexpr uint8_t kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02,
                         kSendLastImm = 0x03, kSendOnly = 0x04, kSendOnlyImm = 0x05,
                         kWriteFirst = 0x06, kWriteMiddle = 0x07, kWriteLast = 0x08,
                         kWriteLastImm = 0x09, kWriteOnly = 0x0A, kWriteOnlyImm = 0x0B,
                         kReadRequest = 0x0C, kReadResponseFirst = 0x0D, kReadResponseMiddle = 0x0E,
                         kReadResponseLast = 0x0F, kReadResponseOnly = 0x10, kAck = 0x11,
                         kAtomicAck = 0x12, kCompareSwap = 0x13, kFetchAdd = 0x14,
                         kSendLastInv = 0x16, kSendOnlyInv = 0x17, kUdSendOnly = 0x64,
                         kUdSendOnlyImm = 0x65, kCnp = 0x81;
}  // namespace op

}  // namespace epic::wire
