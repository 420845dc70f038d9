#include "tools/inc-rc-peer/xfer_common.h"

#include <cstdio>
#include <cstring>

#include "tools/inc-rc-peer/pattern.h"

namespace epic::tools::rc_peer {

XferMemory::XferMemory(uint32_t max_size)
    : window_len_((uint64_t{max_size} + kMaxWriteOffset + kGuardLen + 4095) / 4096 * 4096),
      buf_(3 * window_len_, kGuardByte) {}

soft::MemoryRegion XferMemory::region(uint32_t rkey) {
  soft::MemoryRegion mr;
  mr.va = window_va();
  mr.data = window();
  mr.length = window_len_;
  mr.rkey = rkey;
  return mr;
}

std::string step_fits(const XferStep& s, uint64_t window_len) {
  if (uint64_t{s.offset} + s.size + kGuardLen > window_len || s.offset >= kMaxWriteOffset) {
    return "step " + std::to_string(s.id) + ": " + std::to_string(s.size) + " bytes at offset " +
           std::to_string(s.offset) + " do not fit the " + std::to_string(window_len) +
           "-byte window";
  }
  return "";
}

std::string check_bytes(const uint8_t* p, uint32_t size, uint32_t seed) {
  const size_t at = pattern_mismatch(p, size, seed);
  char buf[160];
  if (at != size) {
    std::snprintf(buf, sizeof buf, "byte %zu of %u is 0x%02x, expected 0x%02x", at, size, p[at],
                  pattern_byte(seed, at));
    return buf;
  }
  for (size_t i = size; i < size + kGuardLen; ++i) {
    if (p[i] != kGuardByte) {
      std::snprintf(buf, sizeof buf, "byte %zu after the %u-byte message was overwritten (0x%02x)",
                    i, size, p[i]);
      return buf;
    }
  }
  return "";
}

std::string check_recv_completion(const soft::Completion& c, const XferStep& s) {
  const soft::WcOpcode want =
      s.op == XferOp::kWriteImm ? soft::WcOpcode::kRecvRdmaWithImm : soft::WcOpcode::kRecv;
  char buf[160];
  if (c.opcode != want) {
    std::snprintf(buf, sizeof buf, "receive completion opcode %d, expected %d",
                  static_cast<int>(c.opcode), static_cast<int>(want));
    return buf;
  }
  if (c.byte_len != s.size) {
    std::snprintf(buf, sizeof buf, "byte_len %u, expected %u", c.byte_len, s.size);
    return buf;
  }
  if (c.with_imm != op_has_imm(s.op)) return c.with_imm ? "unexpected immediate" : "no immediate";
  if (c.with_imm && c.imm_data != s.imm) {
    std::snprintf(buf, sizeof buf, "immediate 0x%08x, expected 0x%08x", c.imm_data, s.imm);
    return buf;
  }
  return "";
}

soft::SendWr step_send_wr(const XferStep& s, const uint8_t* src, uint64_t remote_va,
                          uint32_t rkey) {
  soft::SendWr wr;
  wr.wr_id = s.id;
  wr.data = src;
  wr.length = s.size;
  wr.imm_data = s.imm;
  switch (s.op) {
    case XferOp::kSend:
      wr.op = soft::SendOp::kSend;
      break;
    case XferOp::kSendImm:
      wr.op = soft::SendOp::kSendWithImm;
      break;
    case XferOp::kWrite:
      wr.op = soft::SendOp::kRdmaWrite;
      break;
    case XferOp::kWriteImm:
      wr.op = soft::SendOp::kRdmaWriteWithImm;
      break;
  }
  if (op_is_write(s.op)) {
    wr.remote_va = remote_va + s.offset;
    wr.rkey = rkey;
  }
  return wr;
}

void prepare_receiver_bytes(const XferStep& s, XferMemory& mem) {
  if (op_is_write(s.op)) {
    std::memset(mem.window() + s.offset, kGuardByte, s.size + kGuardLen);
  } else {
    std::memset(mem.recv_area(), kGuardByte, s.size + kGuardLen);
  }
}

}  // namespace epic::tools::rc_peer
