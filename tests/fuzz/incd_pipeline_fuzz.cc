// libFuzzer target for incd's DPDK-free packet path, driven the way
// datapath/dpdk/worker.cc drives it: two workers, each with a FaultStage per
// input port (drop, duplicate, reorder, delay), its own SwitchPipeline, and its
// own Mode2Engine. Per loop and port a burst passes the port's fault stage, then
// each frame is classified: forwarded, flooded, dropped, answered (ARP), handed
// to the owning worker's ring, or batched for the engine, which runs once per
// loop on its batch plus the frames handed to it.
//
// Two groups are installed: group 1 (root, three rank children) on INC address
// 1 at worker 0; group 2 (a rank child, a switch child and a parent) on INC
// address 2 at worker 0 or 1; both in Mode-II, or (header flag 32) in Mode-III, summing fp32
// in arrival order, or exactly (window byte bit 2: KULISCH_FIXED; group 2 only in Mode-II, where
// its switch child's data must be an exact partial, proto/vocab/partial.h),
// whose timers the loop runs (Mode2Engine::poll) as the worker does. Frames come from templates of
// that topology (control messages, data, ACKs and frontiers of every edge, transit RoCEv2, ARP,
// plain L2) that the input picks, re-sequences and mutates (with or without re-deriving the
// checksums and ICRC), or raw bytes.
//
// Invariants checked (abort on violation):
//   - every frame handle (input or clone) ends exactly once: freed by a fault
//     stage, or classified and acted upon; fault stages account for every one;
//   - pipeline: frames = forwarded + flooded + to_engine + handed_off +
//     arp_replies + drops, and each equals the verdicts it returned; a verdict's
//     port / worker is in range; a reply is added exactly for kReplied;
//   - a well-formed RoCEv2 frame to an INC address (that the port takes) goes
//     to the engine or to its owner, never elsewhere; only IPv4 UDP 4791 to an
//     INC address does; a bad-ICRC drop happens only when configured;
//   - engines: rx_accounted() == rx_frames == frames given; tx_frames == frames
//     emitted; every emitted frame parses with full checks (IPv4 checksum,
//     ICRC), leaves on a port of the group and comes from an INC address;
//     the edge-binding drops by port add up to the drops by reason, and a UDP
//     source port is refused only under the narrow range (header flag 64), a P_Key only
//     when group 1 is bound to a partition (header flag 128: P_Key 0x8012, which no template
//     carries: every frame to group 1 is then an edge_pkey drop, and group 2 runs as usual);
//   - every ARP reply is a 60-byte reply from an INC address on the request's port.
//
// Input: 8 header bytes (see Header), then records, each starting with a byte
// `c`: port = (c & 7) % 5 (port 4 exists at the worker but not in the
// pipeline's configuration), worker = (c >> 3) & 1, kind = c >> 4:
//   0-1   raw frame: len16 (big endian, mod 1600), bytes
//   2-9   template: t, psn delta (int8), variant, mutation [, edits, cut]
//   10-11 ARP: selector
//   12-13 plain L2: selector, hosts
//   14-15 end of loop: time step
// tests/fuzz/make_incd_pipeline_corpus.py writes seeds in this format.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "datapath/engine/mode2_engine.h"
#include "datapath/switching/arp_responder.h"
#include "datapath/switching/fault_stage.h"
#include "datapath/switching/switch_pipeline.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/bytes.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/layout.h"
#include "datapath/wire/opcode.h"
#include "datapath/wire/parser.h"
#include "proto/vocab/collective.h"
#include "proto/vocab/psn.h"

namespace {

namespace e = epic::engine;
namespace sw = epic::switching;
namespace w = epic::wire;
namespace vocab = epic::vocab;

void require(bool cond) {
  if (!cond) std::abort();
}

constexpr size_t kWorkers = 2;
constexpr uint16_t kPorts = 5;        // at the workers
constexpr uint16_t kConfigPorts = 4;  // in the pipeline configuration
constexpr uint16_t kPmtu = 256;
constexpr uint64_t kAgingNs = 2'000'000;  // 2 ms: the input's time steps can age entries

const sw::IncAddress kInc1{0x0AC80001, {0x02, 0xEE, 0, 0, 0, 0x01}};          // 10.200.0.1
const sw::IncAddress kInc2{0x0AC80002, {0x02, 0xEE, 0, 0, 0, 0x02}};          // 10.200.0.2
const e::Endpoint kUpper{{0x02, 0xEE, 0, 0, 0x01, 0x01}, 0x0AC80101, 0x300};  // group 2's parent
const e::Endpoint kLower{{0x02, 0xEE, 0, 0, 0x02, 0x01}, 0x0AC80201, 0x400};  // its switch child

e::Endpoint host(int i) {  // rank hosts 0..3 (0..2 in group 1, 3 in group 2)
  return {{0x02, 0xAA, 0, 0, 0, static_cast<uint8_t>(i)},
          0x0A640000u + static_cast<uint32_t>(i),
          0x10u + static_cast<uint32_t>(i)};
}

// ---- input ----

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return off_ >= n_; }
  uint8_t byte() { return off_ < n_ ? d_[off_++] : 0; }
  const uint8_t* take(size_t* len) {
    *len = std::min(*len, n_ - std::min(off_, n_));
    const uint8_t* p = d_ + std::min(off_, n_);
    off_ += *len;
    return p;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t off_ = 0;
};

struct Header {
  bool drop_bad_icrc;
  uint16_t group2_owner;
  size_t fault_out_cap;  // the worker's output array of a fault stage
  size_t hold_capacity;
  uint32_t small_mtu_port3;  // max_frame of port 3
  uint32_t initial_psn;
  uint32_t window;
  bool mode3;        // both groups in Mode-III (hops ACK, NAK and retransmit; timers run at poll)
  bool narrow_udp;   // engines take UDP source ports 0xC000..0xC003 only (edge binding)
  bool group1_pkey;  // group 1 is bound to the partition 0x8012 (edge binding)
  bool exact;        // the groups sum fp32 exactly (KULISCH_FIXED; group 2 only in Mode-II)
  uint8_t fault_profile[kWorkers][kPorts];
  uint64_t seed;
};

Header read_header(Input& in) {
  Header h{};
  const uint8_t flags = in.byte();
  h.drop_bad_icrc = flags & 1;
  h.group2_owner = (flags >> 1) & 1;
  h.fault_out_cap = (flags & 4) ? 4 : 4 * 32 + 64;
  h.hold_capacity = (flags & 8) ? 8 : 1024;
  h.small_mtu_port3 = (flags & 16) ? 300 : 1518;
  h.mode3 = (flags & 32) != 0;
  h.narrow_udp = (flags & 64) != 0;
  h.group1_pkey = (flags & 128) != 0;
  h.initial_psn = (0xFFFFC0u + in.byte()) & vocab::kPsnMask;  // near the wrap
  const uint8_t faults = in.byte();
  for (size_t wk = 0; wk < kWorkers; ++wk) {
    for (size_t p = 0; p < kPorts; ++p)
      h.fault_profile[wk][p] = (faults >> (2 * ((p + wk) % 4))) & 3;
  }
  const uint8_t window = in.byte();
  h.window = 2u << (window & 3);  // 2..16
  h.exact = (window & 4) != 0;
  for (int i = 0; i < 4; ++i) h.seed = h.seed << 8 | in.byte();
  return h;
}

sw::FaultSpec fault_spec(uint8_t profile, uint64_t seed) {
  sw::FaultSpec s;
  s.seed = seed;
  switch (profile) {
    case 1:
      s.drop = 0.2;
      break;
    case 2:
      s.duplicate = 0.2;
      s.reorder = 0.2;
      break;
    case 3:
      s.drop = 0.05;
      s.duplicate = 0.1;
      s.reorder = 0.1;
      s.delay_ns = 3'000;
      break;
    default:
      break;
  }
  return s;
}

// ---- frame handles: what rte_mbuf* is to the DPDK worker ----

enum class State : uint8_t { kLive, kFreed, kConsumed };

struct Frame {
  std::unique_ptr<uint8_t[]> bytes;  // exactly `len` bytes: ASan sees any overread
  uint32_t len = 0;
  State state = State::kLive;
};

struct Store {
  std::vector<Frame> frames;
  int add(const uint8_t* p, size_t n) {
    Frame f;
    f.bytes = std::make_unique<uint8_t[]>(std::max<size_t>(n, 1));
    std::copy(p, p + n, f.bytes.get());
    f.len = static_cast<uint32_t>(n);
    frames.push_back(std::move(f));
    return static_cast<int>(frames.size() - 1);
  }
  void end(int h, State how) {
    Frame& f = frames[static_cast<size_t>(h)];
    require(f.state == State::kLive);
    f.state = how;
  }
};

struct IntOps {
  Store* store;
  bool clone(int in, int* out) const {
    if (store->frames.size() >= 4096) return false;  // the pool is empty
    const Frame& f = store->frames[static_cast<size_t>(in)];
    require(f.state == State::kLive);
    *out = store->add(f.bytes.get(), f.len);
    return true;
  }
  void free(int h) const { store->end(h, State::kFreed); }
};

using Stage = sw::FaultStage<int, IntOps>;

// ---- the switch ----

struct Worker {
  uint16_t index = 0;
  std::unique_ptr<sw::SwitchPipeline> pipeline;
  e::Mode2Engine engine;
  std::array<std::unique_ptr<Stage>, kPorts> stage;
  std::array<uint64_t, kPorts> stage_in{}, stage_out{};
  std::array<std::vector<int>, kPorts> pending;        // this loop's RX burst per port
  std::vector<std::pair<int, uint16_t>> handoff_ring;  // (frame, input port) from others
  std::vector<e::RxFrame> engine_in;
  std::vector<int> engine_frames;
  e::TxBatch* engine_out = nullptr;  // reused across inputs (a TxBatch reserves 1 MiB)
  e::TxBatch* replies = nullptr;
  uint64_t engine_given = 0, engine_emitted = 0;
  std::array<uint64_t, 6> verdicts{};  // by Verdict
  uint64_t classified = 0;
};

struct Switch {
  Header h;
  Store store;
  sw::PipelineConfig config;
  std::vector<e::GroupConfig> groups;  // [0]: group 1, [1]: group 2
  std::vector<std::unique_ptr<e::SlotRegion>> slots;
  std::array<Worker, kWorkers> workers;
  uint64_t now = 1'000'000;
};

e::GroupConfig group1(const Header& h) {
  e::GroupConfig g;
  g.group_id = 1;
  g.num_ranks = 3;
  g.initial_psn = h.initial_psn;
  g.window = h.window;
  g.pmtu = kPmtu;
  g.mode = h.mode3 ? vocab::GroupMode::kMode3 : vocab::GroupMode::kMode2;
  g.hop_timeout_us = 100;
  for (int c = 0; c < 3; ++c) {
    e::ChildLink l;
    l.local = {kInc1.mac, kInc1.ipv4, 0x100u + static_cast<uint32_t>(c)};
    l.remote = host(c);
    l.port = static_cast<uint16_t>(c);
    l.is_rank = true;
    l.first_rank = static_cast<uint16_t>(c);
    g.children.push_back(l);
  }
  return g;
}

e::GroupConfig group2(const Header& h) {
  e::GroupConfig g;
  g.group_id = 2;
  g.num_ranks = 4;  // rank 0 here, ranks 1-2 below the switch child, rank 3 elsewhere
  g.initial_psn = h.initial_psn;
  g.window = h.window;
  g.pmtu = kPmtu;
  g.mode = h.mode3 ? vocab::GroupMode::kMode3 : vocab::GroupMode::kMode2;
  g.hop_timeout_us = 100;
  e::ChildLink r;
  r.local = {kInc2.mac, kInc2.ipv4, 0x200};
  r.remote = host(3);
  r.port = 1;
  r.is_rank = true;
  r.first_rank = 0;
  g.children.push_back(r);
  e::ChildLink s;
  s.local = {kInc2.mac, kInc2.ipv4, 0x201};
  s.remote = kLower;
  s.port = 2;
  s.first_rank = 1;
  s.rank_count = 2;
  g.children.push_back(s);
  e::ParentLink p;
  p.local = {kInc2.mac, kInc2.ipv4, 0x2FF};
  p.remote = kUpper;
  p.port = 3;
  g.parent = p;
  return g;
}

void build(Switch& s) {
  s.config.inc_addresses = {kInc1, kInc2};
  s.config.max_frame = {1518, 1518, 9018, s.h.small_mtu_port3};
  s.config.drop_bad_icrc = s.h.drop_bad_icrc;
  s.groups = {group1(s.h), group2(s.h)};
  if (s.h.group1_pkey) s.groups[0].pkey = 0x8012;
  if (s.h.exact) {
    // Mode-III hops carry plain values only: an exact group 2 (which has a parent) is Mode-II.
    const vocab::GroupArith exact{vocab::AccumProfile::kKulischFixed, vocab::DType::kFp32};
    s.groups[0].arith = exact;
    if (!s.h.mode3) s.groups[1].arith = exact;
  }
  const uint16_t owner[2] = {0, s.h.group2_owner};
  for (size_t gi = 0; gi < 2; ++gi) {
    const e::GroupConfig& g = s.groups[gi];
    for (const e::ChildLink& c : g.children) {
      s.config.owner[sw::PipelineConfig::key(c.local.ipv4, c.local.qpn)] = owner[gi];
    }
    if (g.parent) {
      s.config.owner[sw::PipelineConfig::key(g.parent->local.ipv4, g.parent->local.qpn)] =
          owner[gi];
    }
  }
  for (size_t wk = 0; wk < kWorkers; ++wk) {
    Worker& wr = s.workers[wk];
    wr.index = static_cast<uint16_t>(wk);
    static e::TxBatch batches[2 * kWorkers];
    wr.engine_out = &batches[2 * wk];
    wr.replies = &batches[2 * wk + 1];
    wr.engine_out->clear();
    wr.replies->clear();
    wr.pipeline = std::make_unique<sw::SwitchPipeline>(wr.index, 64, kAgingNs);
    wr.pipeline->set_config(&s.config);
    for (size_t p = 0; p < kPorts; ++p) {
      const uint64_t seed = s.h.seed ^ (0x9E3779B97F4A7C15ULL * (wk * kPorts + p + 1));
      wr.stage[p] = std::make_unique<Stage>(fault_spec(s.h.fault_profile[wk][p], seed),
                                            IntOps{&s.store}, s.h.hold_capacity);
    }
  }
  if (s.h.narrow_udp) {
    for (Worker& wr : s.workers) wr.engine.set_udp_source_ports({0xC000, 0xC003});
  }
  for (size_t gi = 0; gi < 2; ++gi) {
    s.slots.push_back(std::make_unique<e::SlotRegion>(s.h.window, kPmtu, s.groups[gi].arith,
                                                      s.groups[gi].num_ranks));
    s.workers[owner[gi]].engine.install_group(s.groups[gi], s.slots.back().get());
  }
}

// ---- oracles ----

bool is_inc(uint32_t ipv4) { return ipv4 == kInc1.ipv4 || ipv4 == kInc2.ipv4; }
bool is_inc_mac(const uint8_t* p) {
  return std::equal(p, p + 6, kInc1.mac.begin()) || std::equal(p, p + 6, kInc2.mac.begin());
}

// For IPv4 UDP 4791 with room for a BTH (at most one VLAN tag, no options) to an INC
// address: its PipelineConfig::key; otherwise nullopt.
std::optional<uint64_t> inc_edge(const uint8_t* f, uint32_t len) {
  size_t l3 = w::eth::kHeaderLen;
  if (len < l3) return std::nullopt;
  uint16_t type = w::load_be16(f + w::eth::kType);
  if (type == w::eth::kTypeVlan && len >= l3 + w::eth::kVlanTagLen) {
    type = w::load_be16(f + w::eth::kType + w::eth::kVlanTagLen);
    l3 += w::eth::kVlanTagLen;
  }
  const size_t l4 = l3 + w::ipv4::kHeaderLen;
  const size_t bth = l4 + w::udp::kHeaderLen;
  if (type != w::eth::kTypeIpv4 || len < bth + w::bth::kHeaderLen || (f[l3] & 0x0F) != 5 ||
      f[l3 + w::ipv4::kProto] != w::ipv4::kProtoUdp ||
      (w::load_be16(f + l3 + w::ipv4::kFlagsFrag) & w::ipv4::kFragOffsetMask) != 0 ||
      w::load_be16(f + l4 + w::udp::kDstPort) != w::kRoceV2Port) {
    return std::nullopt;
  }
  const uint32_t dst = w::load_be32(f + l3 + w::ipv4::kDst);
  if (!is_inc(dst)) return std::nullopt;
  return sw::PipelineConfig::key(dst, w::load_be24(f + bth + w::bth::kDestQp));
}

void check_arp_reply(const uint8_t* f, size_t len) {
  require(len == 60);
  size_t l3 = w::eth::kHeaderLen;
  uint16_t type = w::load_be16(f + w::eth::kType);
  if (type == w::eth::kTypeVlan) {
    type = w::load_be16(f + w::eth::kType + w::eth::kVlanTagLen);
    l3 += w::eth::kVlanTagLen;
  }
  require(type == w::eth::kTypeArp);
  require(w::load_be16(f + l3 + sw::arp::kOper) == sw::arp::kOperReply);
  require(is_inc_mac(f + w::eth::kSrc));
  require(std::equal(f + w::eth::kSrc, f + w::eth::kSrc + 6, f + l3 + sw::arp::kSha));
  const uint32_t spa = w::load_be32(f + l3 + sw::arp::kSpa);
  const sw::IncAddress& a = spa == kInc1.ipv4 ? kInc1 : kInc2;
  require(spa == a.ipv4 && std::equal(a.mac.begin(), a.mac.end(), f + w::eth::kSrc));
}

// An echo reply: from an INC address's MAC and IP, IPv4 and ICMP checksums valid, type 0.
void check_icmp_reply(const uint8_t* f, size_t len) {
  size_t l3 = w::eth::kHeaderLen;
  if (w::load_be16(f + w::eth::kType) == w::eth::kTypeVlan) l3 += w::eth::kVlanTagLen;
  require(len >= l3 + 28 && w::load_be16(f + l3 - 2) == w::eth::kTypeIpv4);
  require(is_inc_mac(f + w::eth::kSrc));
  const uint32_t src = w::load_be32(f + l3 + w::ipv4::kSrc);
  const sw::IncAddress& a = src == kInc1.ipv4 ? kInc1 : kInc2;
  require(src == a.ipv4 && std::equal(a.mac.begin(), a.mac.end(), f + w::eth::kSrc));
  require(w::internet_checksum(f + l3, w::ipv4::kHeaderLen) == 0);
  const size_t ip_len = w::load_be16(f + l3 + w::ipv4::kTotalLen);
  require(l3 + ip_len == len && f[l3 + w::ipv4::kHeaderLen] == 0);
  require(w::internet_checksum(f + l3 + w::ipv4::kHeaderLen, ip_len - w::ipv4::kHeaderLen) == 0);
}

// Whether the frame's source MAC, or its IPv4 source (behind at most one VLAN tag), is one of
// the switch's INC addresses: the only frames the pipeline may drop as spoofed_switch.
bool from_inc_address(const uint8_t* f, size_t len) {
  if (len < w::eth::kHeaderLen) return false;
  if (is_inc_mac(f + w::eth::kSrc)) return true;
  size_t l3 = w::eth::kHeaderLen;
  uint16_t type = w::load_be16(f + w::eth::kType);
  if (type == w::eth::kTypeVlan && len >= l3 + w::eth::kVlanTagLen) {
    type = w::load_be16(f + w::eth::kType + w::eth::kVlanTagLen);
    l3 += w::eth::kVlanTagLen;
  }
  return type == w::eth::kTypeIpv4 && len >= l3 + w::ipv4::kHeaderLen &&
         is_inc(w::load_be32(f + l3 + w::ipv4::kSrc));
}

// ---- the worker loop ----

void dispatch(Switch& s, Worker& wr, int h, uint16_t port) {
  Frame& f = s.store.frames[static_cast<size_t>(h)];
  const uint8_t* data = f.bytes.get();
  const size_t replies_before = wr.replies->size();
  const sw::Decision d = wr.pipeline->classify(data, f.len, port, s.now, *wr.replies);
  ++wr.classified;
  ++wr.verdicts[static_cast<size_t>(d.verdict)];
  require(wr.replies->size() == replies_before + (d.verdict == sw::Verdict::kReplied ? 1 : 0));

  const bool accepted_port = port < kConfigPorts && f.len <= s.config.max_frame[port] &&
                             f.len >= w::eth::kHeaderLen && !(data[w::eth::kSrc] & 1);
  const auto strict = w::parse(data, f.len);
  // Only the switch sends from its INC addresses: anything else from them is spoofed, dropped.
  const bool spoofed = from_inc_address(data, f.len);
  if (d.verdict == sw::Verdict::kDrop && d.drop == sw::DropReason::kSpoofedSwitch) {
    require(from_inc_address(data, f.len));
  }
  if (strict.ok() && accepted_port && !spoofed && strict.view.ip_version == w::IpVersion::kV4 &&
      is_inc(strict.view.ipv4_dst())) {
    require(d.verdict == sw::Verdict::kEngine || d.verdict == sw::Verdict::kHandoff);
  }
  if (d.verdict == sw::Verdict::kEngine || d.verdict == sw::Verdict::kHandoff) {
    const auto edge = inc_edge(data, f.len);
    require(edge.has_value());
    const auto owner = s.config.owner.find(*edge);
    const bool ours = owner == s.config.owner.end() || owner->second == wr.index;
    require(ours == (d.verdict == sw::Verdict::kEngine));
    if (!ours) require(d.worker == owner->second);
  }
  if (d.verdict == sw::Verdict::kDrop) {
    require(static_cast<size_t>(d.drop) < sw::kDropReasonCount);
    if (d.drop == sw::DropReason::kBadIcrc) require(s.config.drop_bad_icrc && !strict.ok());
  }

  switch (d.verdict) {
    case sw::Verdict::kForward:
      require(d.port < kConfigPorts && d.port != port);
      s.store.end(h, State::kConsumed);
      return;
    case sw::Verdict::kFlood:
    case sw::Verdict::kDrop:
      s.store.end(h, State::kConsumed);
      return;
    case sw::Verdict::kReplied: {
      const auto& r = wr.replies->frame(replies_before);
      require(r.port == port);
      if (sw::is_arp(wr.replies->data(replies_before), r.length)) {
        check_arp_reply(wr.replies->data(replies_before), r.length);
      } else {
        check_icmp_reply(wr.replies->data(replies_before), r.length);
      }
      s.store.end(h, State::kConsumed);
      return;
    }
    case sw::Verdict::kEngine:
      wr.engine_in.push_back({data, static_cast<uint16_t>(f.len), port});
      wr.engine_frames.push_back(h);
      return;
    case sw::Verdict::kHandoff: {
      require(d.worker < kWorkers && d.worker != wr.index);
      s.workers[d.worker].handoff_ring.push_back({h, port});
      return;
    }
  }
  std::abort();
}

void check_engine_output(const Worker& wr) {
  for (size_t i = 0; i < wr.engine_out->size(); ++i) {
    const auto& f = wr.engine_out->frame(i);
    const uint8_t* data = wr.engine_out->data(i);
    const auto r = w::parse(data, f.length);
    require(r.ok());
    require(r.view.frame_len == f.length);
    require(f.port < kConfigPorts);
    require(is_inc_mac(data + w::eth::kSrc));
    require(r.view.ip_version == w::IpVersion::kV4 && is_inc(r.view.ipv4_src()));
  }
}

void run_loop(Switch& s, Worker& wr) {
  wr.replies->clear();
  std::vector<int> faulted(s.h.fault_out_cap);
  for (uint16_t p = 0; p < kPorts; ++p) {
    std::vector<int>& rx = wr.pending[p];
    Stage& st = *wr.stage[p];
    const int* frames = rx.data();
    size_t count = rx.size();
    if (st.spec().enabled() || st.held() > 0) {
      wr.stage_in[p] += rx.size();
      count = st.process(rx.data(), rx.size(), faulted.data(), faulted.size(), s.now);
      count += st.release(s.now, faulted.data() + count, faulted.size() - count);
      wr.stage_out[p] += count;
      frames = faulted.data();
    }
    for (size_t i = 0; i < count; ++i) dispatch(s, wr, frames[i], p);
    rx.clear();
  }
  // run_engine: the frames other workers handed over join the batch.
  for (const auto& [h, port] : wr.handoff_ring) {
    const Frame& f = s.store.frames[static_cast<size_t>(h)];
    require(f.state == State::kLive);
    wr.engine_in.push_back({f.bytes.get(), static_cast<uint16_t>(f.len), port});
    wr.engine_frames.push_back(h);
  }
  wr.handoff_ring.clear();
  // Mode-III's timers and pending Pipes, every loop as the worker does.
  wr.engine_out->clear();
  wr.engine.poll(s.now, *wr.engine_out);
  wr.engine_emitted += wr.engine_out->size();
  check_engine_output(wr);
  if (!wr.engine_in.empty()) {
    wr.engine_out->clear();
    wr.engine.process(wr.engine_in.data(), wr.engine_in.size(), *wr.engine_out, s.now);
    wr.engine_given += wr.engine_in.size();
    wr.engine_emitted += wr.engine_out->size();
    check_engine_output(wr);
    for (int h : wr.engine_frames) s.store.end(h, State::kConsumed);
    wr.engine_in.clear();
    wr.engine_frames.clear();
  }
  for (size_t i = 0; i < wr.replies->size(); ++i) {
    require(wr.replies->frame(i).port < kConfigPorts);
    check_arp_reply(wr.replies->data(i), wr.replies->frame(i).length);
  }
}

void run_loops(Switch& s) {
  for (Worker& wr : s.workers) run_loop(s, wr);
}

// ---- frames from the input ----

struct Sender {
  e::Endpoint from;
  sw::IncAddress to;  // ipv4 0: transit to `peer`
  uint32_t dest_qp;
  e::Endpoint peer;
};

Sender sender(int endpoint) {
  switch (endpoint) {
    case 0:
    case 1:
    case 2:
      return {host(endpoint), kInc1, 0x100u + static_cast<uint32_t>(endpoint), {}};
    case 3:
      return {host(3), kInc2, 0x200, {}};
    case 4:
      return {kLower, kInc2, 0x201, {}};
    case 5:
      return {kUpper, kInc2, 0x2FF, {}};
    case 6:
      return {host(0), kInc1, 0x1FF, {}};  // no group edge
    default:
      return {host(0), {}, 0x11, host(1)};  // transit between two hosts
  }
}

constexpr vocab::CollectiveDescriptor kDescriptors[8] = {
    {vocab::CollectiveType::kAllReduce, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kSum, 0,
     128},
    {vocab::CollectiveType::kAllReduce, epic::vocab::DType::kFp32, epic::vocab::ReduceOp::kSum, 0,
     64},
    {vocab::CollectiveType::kBarrier, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kSum, 0,
     0},
    {vocab::CollectiveType::kBroadcast, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kSum, 0,
     100},
    {vocab::CollectiveType::kReduce, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kMax, 1,
     64},
    {vocab::CollectiveType::kReduceScatter, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kSum,
     0, 64},
    {vocab::CollectiveType::kAllGather, epic::vocab::DType::kInt32, epic::vocab::ReduceOp::kSum, 0,
     32},
    {vocab::CollectiveType::kAllReduce, epic::vocab::DType::kBf16, epic::vocab::ReduceOp::kMin, 0,
     300},
};

// t: endpoint (bits 0-2), kind (bits 3-4: control, data, ACK, other).
// variant: opcode / descriptor / syndrome (bits 0-2), payload size (bits 3-5),
// VLAN tag (bit 6), AckReq (bit 7).
std::vector<uint8_t> template_frame(const Switch& s, uint8_t t, int8_t psn_delta, uint8_t variant) {
  const Sender snd = sender(t & 7);
  const int kind = (t >> 3) & 3;
  const uint32_t psn = vocab::psn_add(s.h.initial_psn, psn_delta);
  w::PacketBuilder b;
  if (snd.to.ipv4 != 0) {
    b.eth(snd.to.mac, snd.from.mac).ipv4(snd.from.ipv4, snd.to.ipv4);
  } else {
    b.eth(snd.peer.mac, snd.from.mac).ipv4(snd.from.ipv4, snd.peer.ipv4);
  }
  if (variant & 0x40) b.vlan(0x0064);
  b.ack_req((variant & 0x80) != 0).udp_src_port(static_cast<uint16_t>(0xC000 | (t & 7)));
  const uint8_t sel = variant & 7;
  static constexpr uint16_t kSizes[8] = {kPmtu, 144, 128, 88, 4, 0, kPmtu + 4, 64};
  const uint16_t size = kSizes[(variant >> 3) & 7];
  switch (kind) {
    case 0: {
      uint8_t ctrl[vocab::kControlPayloadBytes];
      vocab::encode_control(kDescriptors[sel], ctrl);
      b.bth(w::op::kSendOnlyImm, snd.dest_qp, psn).immdt(vocab::kControlImm);
      b.payload({ctrl, sizeof ctrl});
      break;
    }
    case 1: {
      static constexpr uint8_t kOps[8] = {
          w::op::kSendFirst,   w::op::kSendMiddle,  w::op::kSendLast, w::op::kSendOnly,
          w::op::kSendLastImm, w::op::kSendOnlyImm, w::op::kSendOnly, w::op::kSendLast};
      b.bth(kOps[sel], snd.dest_qp, psn).immdt(0x01020304);
      b.payload_pattern(size, static_cast<uint8_t>(psn * 7 + (t & 7)));
      for (auto& x : b.packet().payload) x &= 0x3F;  // finite floats
      break;
    }
    case 2: {
      static constexpr uint8_t kSyndromes[8] = {0x00, 0x1F, 0x60, 0x2C, 0x61, 0x00, 0x1F, 0x63};
      b.bth(w::op::kAck, snd.dest_qp, psn).aeth(kSyndromes[sel], variant);
      break;
    }
    default: {
      static constexpr uint8_t kOps[8] = {
          w::op::kWriteOnly,   w::op::kReadRequest, w::op::kCnp,       w::op::kUdSendOnly,
          w::op::kSendOnlyInv, w::op::kWriteFirst,  w::op::kAtomicAck, w::op::kFetchAdd};
      b.bth(kOps[sel], snd.dest_qp, psn);
      if (w::opcode_info(kOps[sel]).has_payload) b.payload_pattern(size & 0xFC);
      break;
    }
  }
  return b.build();
}

// Re-derives the IPv4 header checksum and the ICRC of a frame whose header fields were edited,
// so that edits reach past the integrity checks.
void fix_integrity(std::vector<uint8_t>& f) {
  const w::ParseOptions lenient{.verify_ipv4_checksum = false, .verify_icrc = false};
  const auto r = w::parse(f.data(), f.size(), lenient);
  if (!r.ok()) return;
  if (r.view.ip_version == w::IpVersion::kV4) {
    w::store_be16(f.data() + r.view.l3_off + w::ipv4::kChecksum, 0);
    w::store_be16(f.data() + r.view.l3_off + w::ipv4::kChecksum,
                  w::ipv4_header_checksum(f.data() + r.view.l3_off));
  }
  w::store_icrc(f.data(), r.view.ip_version, r.view.l3_off, r.view.icrc_off);
}

std::vector<uint8_t> ether(const vocab::MacAddr& dst, const vocab::MacAddr& src, uint16_t type,
                           size_t len) {
  std::vector<uint8_t> f(std::max<size_t>(len, 14), 0);
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  w::store_be16(f.data() + 12, type);
  for (size_t i = 14; i < f.size(); ++i) f[i] = static_cast<uint8_t>(i);
  return f;
}

std::vector<uint8_t> ipv4_udp(const e::Endpoint& a, const e::Endpoint& b, uint16_t dport,
                              uint16_t frag, size_t payload) {
  std::vector<uint8_t> f = ether(b.mac, a.mac, w::eth::kTypeIpv4, 14 + 28 + payload);
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[1] = 0;
  w::store_be16(ip + 2, static_cast<uint16_t>(28 + payload));
  w::store_be16(ip + 6, frag);
  ip[8] = 64;
  ip[9] = w::ipv4::kProtoUdp;
  w::store_be32(ip + 12, a.ipv4);
  w::store_be32(ip + 16, b.ipv4);
  w::store_be16(ip + 10, 0);
  w::store_be16(ip + 10, w::ipv4_header_checksum(ip));
  w::store_be16(ip + 20, 0xC000);
  w::store_be16(ip + 22, dport);
  w::store_be16(ip + 24, static_cast<uint16_t>(8 + payload));
  w::store_be16(ip + 26, 0);
  if (f.size() < 60) f.resize(60, 0);
  return f;
}

// A valid ICMP echo request from `a` to an INC address (odd and even data lengths).
std::vector<uint8_t> echo_to_inc(const e::Endpoint& a, uint8_t hosts) {
  const sw::IncAddress& inc = (hosts & 0x40) ? kInc2 : kInc1;
  const size_t data = hosts & 0x1F;
  std::vector<uint8_t> f = ether(inc.mac, a.mac, w::eth::kTypeIpv4, 14 + 28 + data);
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  w::store_be16(ip + 2, static_cast<uint16_t>(28 + data));
  ip[8] = 64;
  ip[9] = 1;  // ICMP
  w::store_be32(ip + 12, a.ipv4);
  w::store_be32(ip + 16, inc.ipv4);
  w::store_be16(ip + 10, w::ipv4_header_checksum(ip));
  ip[20] = 8;  // echo request
  w::store_be16(ip + 24, hosts);
  for (size_t i = 0; i < data; ++i) ip[28 + i] = static_cast<uint8_t>(i);
  w::store_be16(ip + 22, w::internet_checksum(ip + 20, 8 + data));
  return f;
}

std::vector<uint8_t> plain_l2(uint8_t sel, uint8_t hosts) {
  const e::Endpoint a = host(hosts & 3), b = host((hosts >> 2) & 3);
  switch (sel & 7) {
    case 0:
      if (hosts & 0x20) return echo_to_inc(a, hosts);
      return ipv4_udp(a, b, 53, 0x4000, 30);
    case 1: {
      std::vector<uint8_t> f = ether(b.mac, a.mac, w::eth::kTypeIpv6, 14 + 40 + 8 + 20);
      f[14] = 0x60;
      w::store_be16(f.data() + 18, 28);
      f[20] = w::ipv6::kNextHeaderUdp;
      w::store_be16(f.data() + 54 + 2, (hosts & 0x10) ? w::kRoceV2Port : 53);
      return f;
    }
    case 2:
      return ether({0x01, 0x80, 0xC2, 0, 0, 0x0E}, a.mac, 0x88CC, 60);
    case 3: {
      w::PacketBuilder r;
      r.eth(b.mac, a.mac)
          .ipv6({0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
          .bth(w::op::kSendOnly, 0x11, hosts)
          .payload_pattern(hosts & 0x3C);
      return r.build();
    }
    case 4:
      return ipv4_udp(a, {{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 0xFFFFFFFF, 0}, 67, 0x4000, 30);
    case 5:
      return ipv4_udp({{0x03, 0, 0, 0, 0, 1}, a.ipv4, 0}, b, 53, 0x4000, 30);
    case 6:
      return ipv4_udp(a, b, 9, 0x4000, (hosts & 0x10) ? 1519 - 42 : 1518 - 42);
    default:  // a non-first fragment whose data reads like UDP 4791, to us
      return ipv4_udp(a, {kInc1.mac, kInc1.ipv4, 0}, w::kRoceV2Port, 0x00B9, 30);
  }
}

std::vector<uint8_t> arp_frame(uint8_t sel) {
  const e::Endpoint a = host(sel & 3);
  const uint32_t targets[4] = {kInc1.ipv4, kInc2.ipv4, host(1).ipv4, a.ipv4};
  const bool tagged = sel & 0x40;
  std::vector<uint8_t> f = ether({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, a.mac,
                                 tagged ? w::eth::kTypeVlan : w::eth::kTypeArp, 60);
  size_t l3 = 14;
  if (tagged) {
    w::store_be16(f.data() + 14, 0x0064);
    w::store_be16(f.data() + 16, w::eth::kTypeArp);
    l3 = 18;
  }
  uint8_t* p = f.data() + l3;
  w::store_be16(p + sw::arp::kHtype, 1);
  w::store_be16(p + sw::arp::kPtype, 0x0800);
  p[sw::arp::kHlen] = 6;
  p[sw::arp::kPlen] = 4;
  w::store_be16(p + sw::arp::kOper, (sel & 0x80) ? sw::arp::kOperReply : sw::arp::kOperRequest);
  std::copy(a.mac.begin(), a.mac.end(), p + sw::arp::kSha);
  w::store_be32(p + sw::arp::kSpa, (sel & 0x20) ? 0 : a.ipv4);
  std::fill(p + sw::arp::kTha, p + sw::arp::kTha + 6, 0);
  w::store_be32(p + sw::arp::kTpa, targets[(sel >> 2) & 3]);
  f.resize(60 - ((sel & 0x10) ? 18 : 0));  // unpadded, as a NIC that strips padding gives it
  return f;
}

void check_totals(const Switch& s) {
  for (const Worker& wr : s.workers) {
    const sw::PipelineCounters& c = wr.pipeline->counters();
    uint64_t drops = 0;
    for (uint64_t d : c.drops) drops += d;
    require(c.frames == wr.classified);
    require(c.frames == c.forwarded + c.flooded + c.to_engine + c.handed_off + c.arp_replies +
                            c.icmp_replies + drops);
    require(c.forwarded == wr.verdicts[static_cast<size_t>(sw::Verdict::kForward)]);
    require(c.flooded == wr.verdicts[static_cast<size_t>(sw::Verdict::kFlood)]);
    require(c.to_engine == wr.verdicts[static_cast<size_t>(sw::Verdict::kEngine)]);
    require(c.handed_off == wr.verdicts[static_cast<size_t>(sw::Verdict::kHandoff)]);
    require(c.arp_replies + c.icmp_replies ==
            wr.verdicts[static_cast<size_t>(sw::Verdict::kReplied)]);
    require(drops == wr.verdicts[static_cast<size_t>(sw::Verdict::kDrop)]);
    require(c.transit_roce >= c.transit_bad_icrc + c.transit_malformed);
    const e::EngineCounters& ec = wr.engine.counters();
    require(ec.rx_frames == wr.engine_given);
    require(ec.rx_accounted() == ec.rx_frames);
    require(ec.tx_frames == wr.engine_emitted);
    uint64_t bound_drops = 0;
    for (uint64_t n : wr.engine.binding_drops()) bound_drops += n;
    require(bound_drops == ec.drop_edge_port + ec.drop_edge_mac + ec.drop_edge_ipv4 +
                               ec.drop_edge_udp_port + ec.drop_edge_pkey);
    require(s.h.narrow_udp || ec.drop_edge_udp_port == 0);
    require(s.h.group1_pkey || ec.drop_edge_pkey == 0);
    for (size_t p = 0; p < kPorts; ++p) {
      const sw::FaultCounters& fc = wr.stage[p]->counters();
      require(fc.passed + fc.dropped == wr.stage_in[p]);
      require(wr.stage_in[p] + fc.duplicated ==
              fc.dropped + fc.lost + fc.drained + wr.stage_out[p]);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  Input in(data, size);
  Switch s;
  s.h = read_header(in);
  build(s);

  while (!in.empty()) {
    const uint8_t c = in.byte();
    const uint16_t port = static_cast<uint16_t>((c & 7) % kPorts);
    Worker& wr = s.workers[(c >> 3) & 1];
    const int kind = c >> 4;
    std::vector<uint8_t> f;
    if (kind <= 1) {
      size_t len = (size_t{in.byte()} << 8 | in.byte()) % 1600;
      const uint8_t* p = in.take(&len);
      f.assign(p, p + len);
    } else if (kind <= 9) {
      const uint8_t t = in.byte();
      const int8_t psn_delta = static_cast<int8_t>(in.byte());
      const uint8_t variant = in.byte();
      const uint8_t mutation = in.byte();
      f = template_frame(s, t, psn_delta, variant);
      for (int k = 0; k < (mutation & 7); ++k) {
        const size_t off = in.byte() % f.size();
        f[off] = in.byte();
      }
      if (mutation & 0x08) fix_integrity(f);
      if (mutation & 0x10) f.back() ^= 0x80;
      if (mutation & 0x20) f.resize(f.size() - std::min<size_t>(f.size(), 1 + in.byte() % 32));
    } else if (kind <= 11) {
      f = arp_frame(in.byte());
    } else if (kind <= 13) {
      const uint8_t sel = in.byte();
      f = plain_l2(sel, in.byte());
    } else {
      run_loops(s);
      const uint8_t step = in.byte();
      s.now += uint64_t{step & 0x7Fu} * ((step & 0x80) ? 100'000 : 1'000);
      continue;
    }
    wr.pending[port].push_back(s.store.add(f.data(), f.size()));
  }

  // Drain: loops until the fault stages have let everything go and no hand-off is in flight.
  for (int i = 0; i < 64; ++i) {
    run_loops(s);
    s.now += 100'000;
    bool idle = true;
    for (const Worker& wr : s.workers) {
      idle &= wr.handoff_ring.empty();
      for (const auto& st : wr.stage) idle &= st->held() == 0;
    }
    if (idle) break;
  }
  // Shutdown: what the stages still hold is freed; what was handed off meanwhile is processed.
  for (Worker& wr : s.workers) {
    for (auto& st : wr.stage) st->drain();
  }
  run_loops(s);
  run_loops(s);
  for (const Worker& wr : s.workers) require(wr.handoff_ring.empty());
  for (const Frame& f : s.store.frames) require(f.state != State::kLive);
  check_totals(s);
  return 0;
}
