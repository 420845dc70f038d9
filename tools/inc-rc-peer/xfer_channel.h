// EPICXFER1 messages over the TcpChannel: 128-byte frames of text, each read
// bounded by the session timeout. Thread-safety: as TcpChannel.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "host/transport/soft/io/tcp_channel.h"
#include "tools/inc-rc-peer/xfer_wire.h"

namespace epic::tools::rc_peer {

inline soft::io::Status send_xfer(soft::io::TcpChannel& ch, const XferMsg& m,
                                  std::chrono::milliseconds timeout) {
  return ch.write(m.data(), m.size(), timeout);
}

inline soft::io::Status send_xfer(soft::io::TcpChannel& ch, std::string_view text,
                                  std::chrono::milliseconds timeout) {
  return send_xfer(ch, make_xfer_msg(text), timeout);
}

inline soft::io::Result<std::string> recv_xfer(soft::io::TcpChannel& ch,
                                               std::chrono::milliseconds timeout,
                                               std::string_view what) {
  auto r = ch.read(kXferMsgLen, timeout, what);
  if (!r.ok()) return soft::io::make_error<std::string>(r.error);
  return {xfer_msg_text(reinterpret_cast<const char*>(r.value.data()), r.value.size()), ""};
}

}  // namespace epic::tools::rc_peer
