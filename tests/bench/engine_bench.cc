// engine_bench: Mode-II aggregation on one core — input packets/s and
// aggregated Gb/s for fp32 and bf16 payloads of 1 KB and 4 KB at fan-in 8 —
// next to, in the same run and on the same frames:
//   forward_only: the same parse (ICRC verified) + lookup + TranslateHeader
//                 (ICRC recomputed) path emitting one frame per input, no slots;
//   memcpy:       copying the same frame bytes.
// Each lap feeds a fresh engine the control messages and 512 PSNs x 8 ranks of
// pre-built frames; only process() is timed. JSON lines (tests/bench/README.md).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/bench/bench_util.h"

namespace {

using namespace epic;
namespace e = epic::engine;
namespace w = epic::wire;

constexpr int kFanIn = 8;
constexpr uint32_t kPsns = 512;
constexpr uint32_t kWindow = 64;

struct Setup {
  e::GroupConfig cfg;
  std::vector<std::vector<uint8_t>> frames;  // control messages first, then PSN-major data
  size_t control_frames = 0;
  uint64_t payload_bytes = 0;  // data payload bytes across all data frames
};

Setup make_setup(vocab::DType t, uint16_t pmtu) {
  Setup s;
  s.cfg.window = kWindow;
  s.cfg.pmtu = pmtu;
  s.cfg.initial_psn = 0;
  s.cfg.num_ranks = kFanIn;
  const vocab::MacAddr sw_mac{2, 0xEE, 0, 0, 0, 1};
  for (int c = 0; c < kFanIn; ++c) {
    e::ChildLink l;
    l.local = {sw_mac, 0x0AC80001, 0x1000u + static_cast<uint32_t>(c)};
    l.remote = {{2, 0xAA, 0, 0, 0, static_cast<uint8_t>(c)},
                0x0A640000u + static_cast<uint32_t>(c),
                0x100u + static_cast<uint32_t>(c)};
    l.port = static_cast<uint16_t>(c);
    l.is_rank = true;
    l.first_rank = static_cast<uint16_t>(c);
    s.cfg.children.push_back(l);
  }
  const uint32_t per_packet = pmtu / static_cast<uint32_t>(vocab::wire_bytes(t));
  const vocab::CollectiveDescriptor d{vocab::CollectiveType::kAllReduce, t, vocab::ReduceOp::kSum,
                                      0, per_packet * kPsns};
  uint8_t ctrl[vocab::kControlPayloadBytes];
  vocab::encode_control(d, ctrl);
  auto base = [&](int c) {
    return w::PacketBuilder()
        .eth(sw_mac, s.cfg.children[static_cast<size_t>(c)].remote.mac)
        .ipv4(s.cfg.children[static_cast<size_t>(c)].remote.ipv4, 0x0AC80001);
  };
  for (int c = 0; c < kFanIn; ++c) {
    auto b = base(c)
                 .bth(w::op::kSendOnlyImm, 0x1000u + static_cast<uint32_t>(c), 0)
                 .immdt(vocab::kControlImm);
    b.payload({ctrl, sizeof ctrl});
    s.frames.push_back(b.build());
  }
  s.control_frames = s.frames.size();
  for (uint32_t p = 0; p < kPsns; ++p) {
    const uint8_t opcode = p == 0           ? w::op::kSendFirst
                           : p + 1 == kPsns ? w::op::kSendLast
                                            : w::op::kSendMiddle;
    for (int c = 0; c < kFanIn; ++c) {
      auto b = base(c)
                   .bth(opcode, 0x1000u + static_cast<uint32_t>(c), 1 + p)
                   .ack_req(opcode == w::op::kSendLast);
      b.payload_pattern(pmtu, static_cast<uint8_t>(p + static_cast<uint32_t>(c)));
      // keep floats finite: clear the top bit of each byte (no NaN/Inf patterns)
      for (auto& x : b.packet().payload) x &= 0x3F;
      s.frames.push_back(b.build());
      s.payload_bytes += pmtu;
    }
  }
  return s;
}

// Baseline: what every packet costs without aggregation.
size_t forward_only(const Setup& s, const std::vector<e::RxFrame>& rx, e::TxBatch& out,
                    const e::LookupTable& table) {
  size_t n = 0;
  for (const e::RxFrame& f : rx) {
    const auto r = w::parse(f.data, f.length);
    if (!r.ok()) continue;
    const e::Route* route = table.find(r.view.ipv4_dst(), r.view.dest_qp());
    if (route == nullptr) continue;
    const e::ChildLink& link = s.cfg.children[static_cast<size_t>(route->child)];
    e::FrameSpec spec;
    spec.src = &link.local;
    spec.dst = &link.remote;
    spec.opcode = r.view.opcode();
    spec.psn = r.view.psn();
    spec.immdt = r.view.op->has(w::kExtImmDt) ? r.view.immdt() : 0;
    spec.payload = r.view.payload();
    spec.payload_len = r.view.data_len();
    uint8_t* buf = out.reserve(e::frame_size(spec));
    out.commit(link.port, e::build_frame(buf, e::frame_size(spec), spec));
    ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7, laps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      reps = 3;
      laps = 1;
    } else if (a == "--json") {
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: engine_bench [--json] [--quick] [--reps N]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  for (vocab::DType t : {vocab::DType::kFp32, vocab::DType::kBf16}) {
    for (uint16_t pmtu : {1024, 4096}) {
      const Setup s = make_setup(t, pmtu);
      std::vector<e::RxFrame> rx;
      // Child c (source MAC 02:aa:00:00:00:c) is on port c: the engine checks the edge binding.
      for (const auto& f : s.frames)
        rx.push_back({f.data(), static_cast<uint16_t>(f.size()), f[11]});
      e::LookupTable table;
      for (size_t c = 0; c < s.cfg.children.size(); ++c) {
        table.insert(s.cfg.children[c].local.ipv4, s.cfg.children[c].local.qpn,
                     {nullptr, static_cast<int16_t>(c)});
      }
      size_t frame_bytes = 0;
      for (const auto& f : s.frames) frame_bytes += f.size();
      std::vector<uint8_t> copy_dst(frame_bytes);
      e::TxBatch tx;
      std::vector<double> agg_v, fwd_v, cp_v;
      for (int r = -1; r < reps; ++r) {
        double t_agg = 0;
        for (int lap = 0; lap < laps; ++lap) {
          e::Mode2Engine engine;
          e::SlotRegion slots(kWindow, pmtu);
          engine.install_group(s.cfg, &slots);
          tx.clear();
          t_agg += bench::time_s([&] { engine.process(rx.data(), rx.size(), tx); });
          if (engine.counters().aggregations_completed != kPsns + 1) {
            std::fprintf(stderr, "engine_bench: %llu aggregations, expected %u\n",
                         static_cast<unsigned long long>(engine.counters().aggregations_completed),
                         kPsns + 1);
            return 1;
          }
        }
        double t_fwd = 0;
        for (int lap = 0; lap < laps; ++lap) {
          tx.clear();
          t_fwd += bench::time_s([&] { bench::keep(forward_only(s, rx, tx, table)); });
        }
        const double t_cp = bench::time_s([&] {
          for (int lap = 0; lap < laps; ++lap) {
            size_t off = 0;
            for (const auto& f : s.frames) {
              std::memcpy(copy_dst.data() + off, f.data(), f.size());
              off += f.size();
            }
            bench::keep(copy_dst[0]);
          }
        });
        if (r < 0) continue;
        agg_v.push_back(static_cast<double>(rx.size()) * laps / t_agg / 1e6);
        fwd_v.push_back(static_cast<double>(rx.size()) * laps / t_fwd / 1e6);
        cp_v.push_back(static_cast<double>(frame_bytes) * laps / t_cp / 1e9);
      }
      const auto agg = bench::summarize(agg_v), fwd = bench::summarize(fwd_v),
                 cp = bench::summarize(cp_v);
      const std::string extra = "\"dtype\":\"" + std::string(vocab::to_string(t)) +
                                "\",\"payload_bytes\":" + std::to_string(pmtu) + ",\"fan_in\":8,";
      bench::emit("engine", "mode2_aggregate", extra, agg, "Mpps", reps);
      bench::emit("engine", "forward_only", extra, fwd, "Mpps", reps);
      bench::emit("engine", "memcpy", extra, cp, "GB/s", reps);
      const double gbps = agg.median * 1e6 * pmtu * 8 / 1e9;
      std::printf(
          "{\"bench\":\"engine\",\"metric\":\"mode2_summary\",%s\"aggregated_gbps\":%.2f,"
          "\"aggregate_vs_forward\":%.3f,\"aggregate_bytes_vs_memcpy\":%.3f}\n",
          extra.c_str(), gbps, agg.median / fwd.median,
          (agg.median * 1e6 * (static_cast<double>(frame_bytes) / static_cast<double>(rx.size()))) /
              (cp.median * 1e9));
    }
  }
  return 0;
}
