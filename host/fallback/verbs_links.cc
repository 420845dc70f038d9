// RingLinks on verbs: two VerbsTransports (each its own context, PD and CQ on
// the same device), created with consecutive QPNs. Built with libibverbs only.
#include <algorithm>

#include "host/fallback/ring_links.h"
#include "host/transport/verbs/verbs_transport.h"
#include "proto/vocab/psn.h"

namespace epic::host::fallback {

namespace {

// VerbsTransport derives the destination GID from the IPv4 address.
bool gid_is_ipv4_mapped(const std::array<uint8_t, 16>& g, uint32_t ipv4) {
  std::array<uint8_t, 16> want{};
  want[10] = want[11] = 0xFF;
  want[12] = static_cast<uint8_t>(ipv4 >> 24);
  want[13] = static_cast<uint8_t>(ipv4 >> 16);
  want[14] = static_cast<uint8_t>(ipv4 >> 8);
  want[15] = static_cast<uint8_t>(ipv4);
  return g == std::array<uint8_t, 16>{} || g == want;
}

class VerbsLinks : public RingLinks {
 public:
  VerbsLinks(std::unique_ptr<verbs::VerbsTransport> left,
             std::unique_ptr<verbs::VerbsTransport> right)
      : left_(std::move(left)), right_(std::move(right)) {}

  uint32_t qpn_base() const override { return left_->qpn(); }

  soft::io::Status connect(const RingMember& left, const RingMember& right) override {
    for (const RingMember* m : {&left, &right}) {
      if (!gid_is_ipv4_mapped(m->gid, m->ipv4)) {
        return soft::io::Status::failure(
            "verbs ring: only IPv4-mapped GIDs (::ffff:a.b.c.d) are supported");
      }
    }
    auto s = left_->connect(left.ipv4, left.qpn_base + 1);
    if (!s.ok()) return s;
    return right_->connect(right.ipv4, right.qpn_base);
  }

  Endpoint& to_right() override { return *right_; }
  Endpoint& from_left() override { return *left_; }

  // Each transport only waits on its own completion channel: alternate short slices.
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    constexpr std::chrono::nanoseconds kSlice = std::chrono::microseconds(500);
    for (;;) {
      if (done()) return true;
      if (!failure().empty()) return false;
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds::zero()) return done();
      const auto slice = std::min<std::chrono::nanoseconds>(left, kSlice);
      if (left_->run_until(done, slice)) return true;
      if (right_->run_until(done, slice)) return true;
    }
  }

  std::string failure() const override {
    return !left_->failure().empty() ? left_->failure() : right_->failure();
  }

 private:
  std::unique_ptr<verbs::VerbsTransport> left_, right_;
};

}  // namespace

std::unique_ptr<RingLinks> open_verbs_links(const RingOptions& o, std::string& error) {
  verbs::VerbsConfig c;
  c.device = o.device;
  c.port = o.port;
  c.gid_index = o.gid_index;
  c.local_ipv4 = o.ipv4;
  c.sq_psn = c.rq_psn = o.initial_psn & vocab::kPsnMask;
  c.pmtu = o.pmtu;
  c.max_outstanding = o.max_outstanding;
  // The ring names a rank's QPs by one base: retry (bounded) until the device
  // hands out two consecutive QPNs.
  constexpr int kAttempts = 16;
  auto a = verbs::VerbsTransport::create(c);
  if (!a.ok()) {
    error = a.error;
    return nullptr;
  }
  for (int i = 0; i < kAttempts; ++i) {
    auto b = verbs::VerbsTransport::create(c);
    if (!b.ok()) {
      error = b.error;
      return nullptr;
    }
    if (b.value->qpn() == a.value->qpn() + 1) {
      return std::make_unique<VerbsLinks>(std::move(a.value), std::move(b.value));
    }
    a = std::move(b);
  }
  error = "verbs ring: no two consecutive QPNs in " + std::to_string(kAttempts) + " attempts";
  return nullptr;
}

}  // namespace epic::host::fallback
