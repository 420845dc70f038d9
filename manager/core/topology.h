// Topology: what IncManager knows of the fabric — the switches (each an incd with one INC
// address, named ports, a memory capacity in bytes and the largest window and pmtu its engine
// accepts), which rank NIC address sits behind which switch port, and the switch-to-switch links.
// Every mutation is validated as a whole and either applies or returns a precise error; a
// Topology is always consistent (links and ranks name existing switches and ports, a port
// carries one link or only ranks).
// Threading: a plain value, owned by the IncManager.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "manager/core/endpoint.h"
#include "manager/core/error.h"
#include "proto/vocab/limits.h"

namespace epic::manager {

struct PortSpec {
  std::string name{};
  uint16_t mtu = 1500;  // IP MTU, 68..9600
  friend bool operator==(const PortSpec&, const PortSpec&) = default;
};

struct SwitchSpec {
  SwitchId id{};
  uint32_t inc_ipv4 = 0;  // the INC address the switch's virtual QPs live on (host order)
  vocab::MacAddr inc_mac{};
  std::vector<PortSpec> ports{};
  // Bytes of slot memory the indirection layer can grant (docs/manager.md; a group context
  // costs vocab::group_memory_bytes(window, pmtu)).
  uint64_t capacity_bytes = 0;
  uint32_t max_window =
      vocab::kDefaultSwitchMaxWindow;   // largest MW the switch accepts (a power of two)
  uint16_t max_pmtu = vocab::kMaxPmtu;  // largest pmtu the switch accepts
  friend bool operator==(const SwitchSpec&, const SwitchSpec&) = default;
};

// A cable between two switch ports. Stored with a < b.
struct Link {
  SwitchPort a{}, b{};
  friend auto operator<=>(const Link&, const Link&) = default;
  friend bool operator==(const Link&, const Link&) = default;
};
std::string to_string(const Link& l);  // "leaf0:up0 - spine0:d0"
// The link between two switch ports, its ends in the order links are kept in.
inline Link link_between(const SwitchPort& x, const SwitchPort& y) {
  return {std::min(x, y), std::max(x, y)};
}

// A rank NIC address and the switch port it is plugged into. Several ranks may share one
// address (several QPs of one NIC) and several addresses one port.
struct RankAttachment {
  uint32_t ipv4 = 0;
  vocab::MacAddr mac{};
  SwitchPort at{};
  friend bool operator==(const RankAttachment&, const RankAttachment&) = default;
};

// A link seen from one of its switches.
struct Neighbour {
  std::string port{};  // the local port
  SwitchPort peer{};   // the other end
};

class Topology {
 public:
  Status add_switch(SwitchSpec spec);
  Status add_link(Link link);
  Status attach_rank(RankAttachment rank);
  // Removes the switch with its links and the rank attachments behind it.
  Status remove_switch(const SwitchId& id);

  const SwitchSpec* find_switch(const SwitchId& id) const;
  const PortSpec* find_port(const SwitchPort& p) const;
  const RankAttachment* find_rank(uint32_t ipv4) const;
  // The other end of the link on `p`, or nullptr when `p` carries no link.
  const SwitchPort* link_peer(const SwitchPort& p) const;
  // The links of `id`, sorted by local port.
  std::vector<Neighbour> neighbours(const SwitchId& id) const;

  const std::map<SwitchId, SwitchSpec>& switches() const { return switches_; }
  const std::set<Link>& links() const { return links_; }
  const std::map<uint32_t, RankAttachment>& ranks() const { return ranks_; }

  friend bool operator==(const Topology&, const Topology&) = default;

 private:
  Status check_port_free(const SwitchPort& p) const;

  std::map<SwitchId, SwitchSpec> switches_{};
  std::set<Link> links_{};
  std::map<SwitchPort, SwitchPort> peer_{};  // both directions of every link
  std::map<uint32_t, RankAttachment> ranks_{};
};

}  // namespace epic::manager
