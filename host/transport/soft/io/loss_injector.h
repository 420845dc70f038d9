// LossInjector: seeded, reproducible packet loss for tests of RC
// retransmission over real interfaces (the lab machines have no `tc netem`).
// Independent decision streams, so the outgoing and incoming sequences do
// not perturb each other: drop_tx() for every outgoing RoCE frame,
// drop_rx_ack() for every incoming ACK/NAK (opcode 0x11) and drop_rx_request()
// for every other incoming RoCE frame (the peer's requests). Rates are
// probabilities in [0, 1]; all 0 (the default) never drop.
// Thread-safety: none; owned by one port.
#pragma once

#include <cstdint>
#include <random>

namespace epic::soft::io {

struct LossConfig {
  double tx_rate = 0.0;          // fraction of outgoing RoCE frames dropped
  double rx_ack_rate = 0.0;      // fraction of incoming ACK frames (opcode 0x11) dropped
  double rx_request_rate = 0.0;  // fraction of other incoming RoCE frames dropped
  uint64_t seed = 1;
  bool enabled() const { return tx_rate > 0.0 || rx_ack_rate > 0.0 || rx_request_rate > 0.0; }
};

class LossInjector {
 public:
  explicit LossInjector(const LossConfig& c = {})
      : config_(c),
        tx_rng_(c.seed),
        rx_rng_(c.seed ^ 0x9E3779B97F4A7C15ull),
        rx_request_rng_(c.seed ^ 0xD1B54A32D192ED03ull) {}

  bool drop_tx() { return draw(tx_rng_, config_.tx_rate); }
  bool drop_rx_ack() { return draw(rx_rng_, config_.rx_ack_rate); }
  bool drop_rx_request() { return draw(rx_request_rng_, config_.rx_request_rate); }
  const LossConfig& config() const { return config_; }

 private:
  static bool draw(std::mt19937_64& rng, double rate) {
    if (rate <= 0.0) return false;
    // 53 random bits -> [0, 1): the same sequence on every platform, unlike
    // std::uniform_real_distribution, whose algorithm is unspecified.
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return u < rate;
  }

  LossConfig config_;
  std::mt19937_64 tx_rng_;
  std::mt19937_64 rx_rng_;
  std::mt19937_64 rx_request_rng_;
};

}  // namespace epic::soft::io
