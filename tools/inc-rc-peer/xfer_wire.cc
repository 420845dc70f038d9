#include "tools/inc-rc-peer/xfer_wire.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "proto/vocab/psn.h"

namespace epic::tools::rc_peer {

std::string_view to_string(XferOp op) {
  switch (op) {
    case XferOp::kSend:
      return "SEND";
    case XferOp::kSendImm:
      return "SEND_IMM";
    case XferOp::kWrite:
      return "WRITE";
    case XferOp::kWriteImm:
      return "WRITE_IMM";
  }
  return "?";
}

std::string_view to_string(XferDir dir) { return dir == XferDir::kToAgent ? "c2a" : "a2c"; }

std::optional<XferOp> parse_xfer_op(std::string_view s) {
  for (XferOp op : {XferOp::kSend, XferOp::kSendImm, XferOp::kWrite, XferOp::kWriteImm}) {
    if (s == to_string(op)) return op;
  }
  return std::nullopt;
}

bool op_has_imm(XferOp op) { return op == XferOp::kSendImm || op == XferOp::kWriteImm; }
bool op_is_write(XferOp op) { return op == XferOp::kWrite || op == XferOp::kWriteImm; }

XferMsg make_xfer_msg(std::string_view text) {
  XferMsg m{};
  std::memcpy(m.data(), text.data(), std::min(text.size(), m.size() - 1));
  return m;
}

std::string xfer_msg_text(const char* data, size_t len) { return {data, strnlen(data, len)}; }

XferMsg format_xfer_params(const XferParams& p) {
  char buf[kXferMsgLen] = {};
  std::snprintf(buf, sizeof buf, "EPICXFER1 %06x %06x %08x %016" PRIx64 " %016" PRIx64 " %s",
                p.qpn & 0xFFFFFFu, p.psn & 0xFFFFFFu, p.rkey, p.va, p.len,
                gid_to_wire(p.gid).c_str());
  return make_xfer_msg(buf);
}

std::optional<XferParams> parse_xfer_params(std::string_view text) {
  const std::string s(text);
  XferParams p;
  char gid[33] = {};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "EPICXFER1 %x %x %x %" SCNx64 " %" SCNx64 " %32s%n", &p.qpn, &p.psn,
                  &p.rkey, &p.va, &p.len, gid, &consumed) != 6 ||
      static_cast<size_t>(consumed) != s.size() || p.qpn > vocab::kQpnMask ||
      p.psn > vocab::kPsnMask) {
    return std::nullopt;
  }
  auto g = gid_from_wire(gid);
  if (!g) return std::nullopt;
  p.gid = *g;
  return p;
}

XferMsg format_xfer_step(const XferStep& s) {
  char buf[kXferMsgLen] = {};
  std::snprintf(buf, sizeof buf, "STEP %u %s %s %u %u %08x %u %u", s.id,
                std::string(to_string(s.op)).c_str(), std::string(to_string(s.dir)).c_str(), s.size,
                s.seed, s.imm, s.offset, s.late_ms);
  return make_xfer_msg(buf);
}

std::optional<XferStep> parse_xfer_step(std::string_view text) {
  const std::string s(text);
  XferStep st;
  char op[16] = {}, dir[8] = {};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "STEP %u %15s %7s %u %u %x %u %u%n", &st.id, op, dir, &st.size,
                  &st.seed, &st.imm, &st.offset, &st.late_ms, &consumed) != 8 ||
      static_cast<size_t>(consumed) != s.size()) {
    return std::nullopt;
  }
  auto o = parse_xfer_op(op);
  if (!o) return std::nullopt;
  st.op = *o;
  const std::string_view d(dir);
  if (d == "c2a") {
    st.dir = XferDir::kToAgent;
  } else if (d == "a2c") {
    st.dir = XferDir::kToController;
  } else {
    return std::nullopt;
  }
  return st;
}

}  // namespace epic::tools::rc_peer
