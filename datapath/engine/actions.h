// Actions: what an IncEngine module does besides changing its group's state —
// the frames it sends (each built by TranslateHeader, translate_header.h, into
// the worker's FrameSink) and the engine counters it bumps. Every module that
// sends or counts takes one; a packet-table test reads both back.
// Hot path: no allocation once the batch's arena has grown; no I/O.
#pragma once

#include <cstdint>
#include <optional>

#include "datapath/engine/counters.h"
#include "datapath/engine/frame_sink.h"
#include "datapath/engine/translate_header.h"
#include "datapath/engine/tx_batch.h"
#include "datapath/wire/opcode.h"

namespace epic::engine {

class Actions {
 public:
  Actions(FrameSink& out, EngineCounters& counters) : counters(counters), out_(out) {}

  // Sends the frame `f` describes on `port`. When `icrc_base` is given and empty, it receives
  // the frame's ICRC base for copies of it (FrameSpec::icrc_from; build_frame).
  void send(uint16_t port, const FrameSpec& f,
            std::optional<wire::IcrcDelta>* icrc_base = nullptr) {
    const size_t n = frame_size(f);
    out_.commit(port, build_frame(out_.reserve(n), n, f, icrc_base));
    ++counters.tx_frames;
  }
  // An ACK (or NAK: the AETH syndrome says which) on one edge of the group `cfg`, from this
  // switch's endpoint of it (`link.local`) to the other end; `Link` is a ChildLink or a
  // ParentLink. It carries the group's P_Key and traffic class (not ECN-capable).
  template <typename Link>
  void send_ack(const Link& link, uint32_t psn, uint8_t syndrome, const vocab::GroupContext& cfg) {
    FrameSpec f;
    f.pkey = cfg.wire_pkey();
    f.tos = cfg.tos(0);
    f.src = &link.local;
    f.dst = &link.remote;
    f.udp_src_port = link.udp_src_port;
    f.opcode = wire::op::kAck;
    f.psn = psn;
    f.aeth_syndrome = syndrome;
    send(link.port, f);
  }

  EngineCounters& counters;
  uint64_t now_ns = 0;  // the burst's time (Mode2Engine::process), for telemetry

 private:
  FrameSink& out_;
};

}  // namespace epic::engine
