// An in-memory ring for HostCollectives unit tests: N ranks, each with the two
// RcQps of host/fallback/ring_links.h, whose frames move through mutex-guarded
// queues instead of a network (rank r's right QP feeds rank r+1's left QP and
// the ACKs come back the same way). Each rank runs on its own thread; an
// optional loss drops one frame in k (seeded) to exercise retransmission.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "datapath/wire/parser.h"
#include "host/fallback/ring_links.h"
#include "host/transport/soft/rc_qp.h"
#include "host/transport/soft/soft_endpoint.h"

namespace epic::host::fallback::testing {

class Fabric {
 public:
  explicit Fabric(uint16_t ranks, uint32_t drop_every = 0)
      : ranks_(ranks), drop_every_(drop_every), inbox_(2 * size_t{ranks}) {}
  uint16_t ranks() const { return ranks_; }

  // side 0: the rank's left QP, side 1: its right QP.
  void send(uint16_t to_rank, int side, std::vector<uint8_t> frame) {
    std::lock_guard<std::mutex> g(mu_);
    // seeded pseudo-random loss: a fixed period could hit the same frame of every
    // go-back-N retransmission
    rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;
    if (drop_every_ != 0 && (rng_ >> 33) % drop_every_ == 0) return;
    inbox_[2 * size_t{to_rank} + side].push_back(std::move(frame));
    cv_.notify_all();
  }
  std::deque<std::vector<uint8_t>> take(uint16_t rank, int side) {
    std::lock_guard<std::mutex> g(mu_);
    return std::exchange(inbox_[2 * size_t{rank} + side], {});
  }
  void wait(std::chrono::nanoseconds d) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, d);
  }

 private:
  uint16_t ranks_;
  uint32_t drop_every_;
  uint64_t rng_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::deque<std::vector<uint8_t>>> inbox_;
};

class SimLinks : public RingLinks {
 public:
  SimLinks(Fabric& fabric, uint16_t rank, uint32_t qpn_base)
      : fabric_(fabric), rank_(rank), base_(qpn_base) {}

  uint32_t qpn_base() const override { return base_; }
  soft::io::Status connect(const RingMember& left, const RingMember& right) override {
    left_ = std::make_unique<soft::RcQp>(config(base_, left.qpn_base + 1));
    right_ = std::make_unique<soft::RcQp>(config(base_ + 1, right.qpn_base));
    left_ep_ = std::make_unique<soft::SoftQpEndpoint>(*left_);
    right_ep_ = std::make_unique<soft::SoftQpEndpoint>(*right_);
    return soft::io::Status::success();
  }
  Endpoint& to_right() override { return *right_ep_; }
  Endpoint& from_left() override { return *left_ep_; }

  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (done()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return done();
      if (!step(ns(now))) fabric_.wait(std::chrono::microseconds(200));
    }
  }
  std::string failure() const override { return ""; }
  // The left QP (receives from the left neighbour), for tests that look inside.
  const soft::RcQp& left_qp() const { return *left_; }

 private:
  static uint64_t ns(std::chrono::steady_clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  }
  soft::QpConfig config(uint32_t qpn, uint32_t remote) const {
    soft::QpConfig q;
    q.qpn = qpn;
    q.remote_qpn = remote;
    q.sq_psn = q.rq_psn = 0xFFFFF0;  // wraps during the tests
    q.retransmit_timeout_ns = 5'000'000;
    q.path.local_ipv4 = 0x0A000001 + rank_;
    return q;
  }
  // Moves frames; false when nothing happened.
  bool step(uint64_t now) {
    bool moved = false;
    const uint16_t n = fabric_.ranks();
    soft::RcQp* qps[2] = {left_.get(), right_.get()};
    for (int side = 0; side < 2; ++side) {
      for (auto& f : fabric_.take(rank_, side)) {
        const auto r = wire::parse(f.data(), f.size());
        if (r.ok()) qps[side]->receive(r.view, now);
        moved = true;
      }
    }
    for (int side = 0; side < 2; ++side) {
      if (auto d = qps[side]->next_deadline(); d && *d <= now) qps[side]->on_timer(now);
      // the left QP talks to the left neighbour's right QP, and vice versa
      const auto peer = static_cast<uint16_t>(side == 0 ? (rank_ + n - 1) % n : (rank_ + 1) % n);
      while (auto f = qps[side]->pop_tx(now)) {
        fabric_.send(peer, 1 - side, std::move(*f));
        moved = true;
      }
    }
    return moved;
  }

  Fabric& fabric_;
  uint16_t rank_;
  uint32_t base_;
  std::unique_ptr<soft::RcQp> left_, right_;
  std::unique_ptr<soft::SoftQpEndpoint> left_ep_, right_ep_;
};

}  // namespace epic::host::fallback::testing
