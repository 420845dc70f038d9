// The two addressing words of the manager: an Endpoint — one end of an IncTree edge, <IPv4, QP>
// plus the MAC that frames to it carry (a rank NIC's QP, or a switch's virtual QP on its INC
// address) — and a SwitchPort, a named port of a named switch.
// Threading: plain values.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "proto/vocab/addr.h"

namespace epic::manager {

using SwitchId = std::string;  // operator-chosen, e.g. "leaf0"

struct Endpoint {
  uint32_t ipv4 = 0;  // host order
  vocab::MacAddr mac{};
  uint32_t qpn = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

struct SwitchPort {
  SwitchId switch_id{};
  std::string port{};
  friend auto operator<=>(const SwitchPort&, const SwitchPort&) = default;
  friend bool operator==(const SwitchPort&, const SwitchPort&) = default;
};

inline std::string to_string(const SwitchPort& p) { return p.switch_id + ":" + p.port; }

}  // namespace epic::manager
