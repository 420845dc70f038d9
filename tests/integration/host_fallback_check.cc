// host_fallback_check: one rank of the host-based collectives
// (host/fallback) on the soft transport. Runs every primitive for int32 sum,
// fp32 sum and fp32 max at several sizes (1 element, odd counts, >= 1 MiB),
// verifies each result bit for bit against host/collective/expected.h (the
// inputs are host/collective/inputs.h's exactly reducible ones, so a ring's
// order gives the same bits) and prints "HOST_FALLBACK_CHECK rank R PASS ...".
//
//   host_fallback_check IFACE MAC IP RANK MEMBERS [TIMEOUT_MS [STOP_AFTER]]
//     MEMBERS: ip/qpn_base,ip/qpn_base,... (every rank, in rank order; MACs by ARP)
//     STOP_AFTER: exit ("STOPPED") after that many collectives, a rank that goes away
//   HOST_FALLBACK_SLEEP_MS=T in the environment: sleep T ms before each of the first 3
//   collectives (a rank busy elsewhere while its neighbours wait and retransmit)
// Exit 0 on PASS (or STOPPED), 1 on a wrong result or a failed call (its report printed).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "host/collective/expected.h"
#include "host/collective/inputs.h"
#include "host/collective/layout.h"
#include "host/fallback/host_collectives.h"
#include "proto/vocab/addr.h"

namespace {

namespace f = epic::host::fallback;
namespace vocab = epic::vocab;
using epic::vocab::DType;
using epic::vocab::ReduceOp;

int usage() {
  std::fprintf(stderr,
               "usage: host_fallback_check IFACE MAC IP RANK ip/qpn,ip/qpn,... [TIMEOUT_MS "
               "[STOP_AFTER]]\n");
  return 2;
}

bool parse_members(const std::string& s, std::vector<f::RingMember>& out) {
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string item = s.substr(pos, comma - pos);
    const size_t slash = item.find('/');
    if (slash == std::string::npos) return false;
    auto ip = epic::vocab::parse_ipv4(item.substr(0, slash));
    if (!ip) return false;
    f::RingMember m;
    m.ipv4 = *ip;
    m.qpn_base = static_cast<uint32_t>(std::strtoul(item.c_str() + slash + 1, nullptr, 0));
    out.push_back(m);
    pos = comma + 1;
  }
  return !out.empty();
}

// Runs d on this rank; "" when the result is right, else why not.
std::string run_one(f::HostCollectives& hc, uint16_t rank, uint16_t ranks,
                    const vocab::CollectiveDescriptor& d, uint64_t index) {
  const auto inputs = epic::host::exact_inputs(d, ranks, 42, index);
  const auto want = epic::host::expected_result(d, rank, inputs);
  std::vector<uint8_t> in = inputs[rank];
  std::vector<uint8_t> got(epic::host::recv_bytes(d, rank, ranks), 0xEE);
  if (d.type == vocab::CollectiveType::kBroadcast && rank == d.root) got = in;
  const f::Status s = hc.run(d, in.data(), got.data());
  const std::string what = std::string(vocab::to_string(d.type)) + " " +
                           std::string(epic::vocab::to_string(d.dtype)) + " " +
                           std::string(epic::vocab::to_string(d.op)) + " count " +
                           std::to_string(d.count) + " root " + std::to_string(d.root);
  if (!s.ok()) return what + ": " + std::string(f::to_string(s.code)) + ": " + s.message;
  if (auto diff = epic::host::first_difference(got, want)) {
    return what + ": wrong result, first difference at byte " + std::to_string(*diff);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || argc > 8) return usage();
  f::RingOptions o;
  o.transport = "soft";
  o.ifname = argv[1];
  auto mac = epic::vocab::parse_mac(argv[2]);
  auto ip = epic::vocab::parse_ipv4(argv[3]);
  if (!mac || !ip) return usage();
  o.mac = *mac;
  o.ipv4 = *ip;
  const auto rank = static_cast<uint16_t>(std::atoi(argv[4]));
  std::vector<f::RingMember> members;
  if (!parse_members(argv[5], members) || rank >= members.size()) return usage();
  o.soft_qpn_base = members[rank].qpn_base;
  o.initial_psn = 0xFFFF00;  // wraps during the run
  o.arp_timeout = std::chrono::milliseconds(20000);
  o.timeout = std::chrono::milliseconds(argc >= 7 ? std::atoi(argv[6]) : 30000);
  const long stop_after = argc == 8 ? std::atol(argv[7]) : -1;
  const auto ranks = static_cast<uint16_t>(members.size());

  auto hc = f::HostCollectives::create(o);
  if (!hc.ok()) {
    std::printf("HOST_FALLBACK_CHECK rank %u FAIL create: %s\n", rank, hc.error.c_str());
    return 1;
  }
  if (f::Status s = hc.value->connect(rank, members); !s.ok()) {
    std::printf("HOST_FALLBACK_CHECK rank %u FAIL connect: %s\n", rank, s.message.c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t counts[] = {1, 7, 1001, (1u << 18) + 3};  // the last: 1 MiB + 12 bytes per rank
  const std::pair<DType, ReduceOp> kinds[] = {{DType::kInt32, ReduceOp::kSum},
                                              {DType::kFp32, ReduceOp::kSum},
                                              {DType::kFp32, ReduceOp::kMax}};
  const vocab::CollectiveType types[] = {
      vocab::CollectiveType::kAllReduce, vocab::CollectiveType::kReduce,
      vocab::CollectiveType::kBroadcast, vocab::CollectiveType::kReduceScatter,
      vocab::CollectiveType::kAllGather, vocab::CollectiveType::kBarrier};
  const char* sleep_env = std::getenv("HOST_FALLBACK_SLEEP_MS");
  const int sleep_ms = sleep_env != nullptr ? std::atoi(sleep_env) : 0;
  uint64_t index = 0;
  for (uint32_t count : counts) {
    for (auto [t, op] : kinds) {
      for (auto type : types) {
        if (stop_after >= 0 && index == static_cast<uint64_t>(stop_after)) {
          std::printf("HOST_FALLBACK_CHECK rank %u STOPPED after %llu collectives\n", rank,
                      static_cast<unsigned long long>(index));
          return 0;
        }
        if (index < 3 && sleep_ms > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        }
        vocab::CollectiveDescriptor d{type, t, op, static_cast<uint16_t>((index * 7) % ranks),
                                      count};
        if (std::string why = run_one(*hc.value, rank, ranks, d, index); !why.empty()) {
          std::printf("HOST_FALLBACK_CHECK rank %u FAIL %s\n", rank, why.c_str());
          return 1;
        }
        ++index;
      }
    }
  }
  hc.value->linger(std::chrono::milliseconds(300));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("HOST_FALLBACK_CHECK rank %u/%u PASS collectives=%llu wall=%.1fs\n", rank, ranks,
              static_cast<unsigned long long>(index), wall);
  return 0;
}
