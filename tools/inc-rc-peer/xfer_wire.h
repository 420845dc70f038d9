// EPICXFER1: the out-of-band protocol of inc-rc-peer's `xfer` mode, spoken
// with deploy/lab/rxe_xfer.c (a verbs program in a Soft-RoCE guest) or with
// another inc-rc-peer. The controller drives, the agent obeys. Every message
// is 128 bytes of NUL-padded ASCII over TCP.
//
//   both:        EPICXFER1 <qpn> <psn> <rkey> <va> <len> <gid>     (hex; va/len: the
//                                                                   peer's WRITE window)
//   controller:  STEP <id> <op> <dir> <size> <seed> <imm> <offset> <late_ms>
//                  op  SEND | SEND_IMM | WRITE | WRITE_IMM
//                  dir c2a (controller -> agent) | a2c (agent -> controller)
//   c2a: agent prepares (guard-fills, posts a receive) -> READY <id>;
//        controller sends, waits for its completion   -> CHECK <id>;
//        agent checks completion and bytes            -> RESULT <id> PASS|FAIL <why>
//   a2c: controller prepared before STEP; agent sends, waits for its
//        completion                                   -> RESULT <id> PASS|FAIL <why>;
//        the controller then checks its own side.
//   late_ms > 0: the receiver posts its receive that long after the sender
//        was told to go (c2a: the agent after READY; a2c: the controller after
//        STEP), so the sender meets RNR NAKs and must retry.
//   controller:  END   ->   agent: BYE <failures>
//
// Payload bytes: pattern_byte(seed, i) (pattern.h); WRITEs land at the
// receiver's va + offset; immediates are host-order values (wire big-endian).
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tools/inc-rc-peer/pingpong_wire.h"

namespace epic::tools::rc_peer {

inline constexpr size_t kXferMsgLen = 128;
inline constexpr uint16_t kXferDefaultPort = 18516;
using XferMsg = std::array<char, kXferMsgLen>;

struct XferParams {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint32_t rkey = 0;
  uint64_t va = 0;   // start of the window the peer may RDMA WRITE into
  uint64_t len = 0;  // its length
  Gid gid{};
  friend bool operator==(const XferParams&, const XferParams&) = default;
};

enum class XferOp : uint8_t { kSend, kSendImm, kWrite, kWriteImm };
enum class XferDir : uint8_t { kToAgent, kToController };

struct XferStep {
  uint32_t id = 0;
  XferOp op = XferOp::kSend;
  XferDir dir = XferDir::kToAgent;
  uint32_t size = 0;
  uint32_t seed = 0;
  uint32_t imm = 0;
  uint32_t offset = 0;
  uint32_t late_ms = 0;  // receive posted this late (RNR)
  friend bool operator==(const XferStep&, const XferStep&) = default;
};

std::string_view to_string(XferOp op);
std::string_view to_string(XferDir dir);
std::optional<XferOp> parse_xfer_op(std::string_view s);
bool op_has_imm(XferOp op);
bool op_is_write(XferOp op);

// Any text as one message (truncated to 127 characters).
XferMsg make_xfer_msg(std::string_view text);
// The text of a received message (up to its first NUL).
std::string xfer_msg_text(const char* data, size_t len);

XferMsg format_xfer_params(const XferParams& p);
std::optional<XferParams> parse_xfer_params(std::string_view text);
XferMsg format_xfer_step(const XferStep& s);
std::optional<XferStep> parse_xfer_step(std::string_view text);

}  // namespace epic::tools::rc_peer
