// The one set of checks of a group context (group_context.h), used by every component that
// builds or accepts one: incd's static config loader and the IncAgent (through decode_context,
// context_proto.h, which applies these rules field by field while it reads the message),
// inc-manager before it sends a context, and the engine's own defensive check
// (engine::check_config: the datapath does not trust the control plane).
//
// Every error names the field by its path ("groups[0].children[2].remote.qpn") and the limit
// it breaks ("0x1000000 does not fit in 24 bits (must be < 0x1000000)"). The rules:
//   ranks 1..kMaxRanks; initial_psn and every QPN < 2^24; window a power of two in
//   1..kMaxWindow; pmtu one of kPmtuChoices; mode Mode-II or Mode-III; hop_timeout_us in
//   kMinHopTimeoutUs..kMaxHopTimeoutUs; in Mode-III the children's ranks one contiguous range;
//   1..kMaxChildren children; a rank child covers one
//   rank; children's ranks inside [0, ranks), never covered twice, and all covered at a root
//   (no parent); endpoints' IPv4 and MAC unicast; and, against a SwitchView, ports that exist,
//   pmtu + kRoceOverheadBytes within every used port's MTU, local endpoints on one of the
//   switch's INC addresses and remote ones not; a grant of exactly
//   group_memory_bytes(window, pmtu).
// Pure C++: no DPDK, no protobuf.
// Threading: pure functions; RankCover is a plain object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/context/group_context.h"
#include "proto/vocab/addr.h"

namespace epic::vocab {

struct ContextError {
  std::string path;  // e.g. "groups[0].children[2].remote.ipv4"; "" = the whole input
  std::string message;
  std::string to_string() const;  // "path: message" (just the message when path is "")
  friend bool operator==(const ContextError&, const ContextError&) = default;
};
using ContextErrors = std::vector<ContextError>;
std::string join(const ContextErrors& errors);  // "a: x; b: y"

std::string quote(std::string_view s);                 // "\"s\""
std::string hex(uint32_t v);                           // "0x1f"
std::string index(const std::string& path, size_t i);  // "path[i]"

// A switch port as a context sees it: the index in the switch's port list is its id.
struct SwitchPort {
  std::string name;
  uint16_t mtu = 1500;  // IP MTU
};

// The switch a context is checked against: its ports and INC addresses. Names may be empty or
// repeated while a config file is being checked (those errors are reported where the ports are).
struct SwitchView {
  std::vector<SwitchPort> ports;          // by id
  std::map<std::string, size_t> port_of;  // name → first port with it
  // INC address → its MAC (nullopt when the MAC itself is invalid) and its index in the
  // switch's inc_addresses.
  std::map<uint32_t, std::pair<std::optional<MacAddr>, int>> inc_macs;
  std::vector<std::string> inc_address_text;  // every inc address's ipv4 as written

  // From valid ports and INC addresses (ipv4, mac).
  static SwitchView of(std::vector<SwitchPort> ports,
                       const std::vector<std::pair<uint32_t, MacAddr>>& inc_addresses);
};

// One rule each: "" when the value is good, else the message (the caller adds the path).
std::string ranks_error(uint32_t ranks);
std::string psn_error(uint32_t psn);  // initial_psn
std::string qpn_error(uint32_t qpn);
std::string window_error(uint32_t window);
std::string pmtu_error(uint32_t pmtu);
std::string children_count_error(size_t children);
std::string mode_error(GroupMode mode);      // Mode-II or Mode-III
std::string hop_timeout_error(uint32_t us);  // kMinHopTimeoutUs..kMaxHopTimeoutUs
// Mode-III: the children's ranks side by side, one range (overlaps are range_error's).
std::string mode3_ranks_error(const GroupContext& g);
std::string_view mode_name(GroupMode mode);  // "Mode-II", "Mode-III" ("?" for neither)
std::string ipv4_error(uint32_t ipv4);       // unicast host address
std::string mac_error(const MacAddr& mac);
std::string rank_child_count_error(uint32_t rank_count);  // a rank child is one rank
// The side of an edge an endpoint address `ipv4` (written `text`) may be on at switch `sw`: a
// local endpoint on one of its INC addresses, a remote one on any other address.
std::string edge_side_error(const SwitchView& sw, uint32_t ipv4, std::string_view text, bool local);
// pmtu + kRoceOverheadBytes against the IP MTU of port `id` of `sw`.
std::string port_mtu_error(uint32_t pmtu, const SwitchView& sw, size_t id);
// A grant of switch memory for `g`: exactly group_memory_bytes(window, pmtu).
std::string grant_error(const GroupContext& g, uint64_t memory_bytes);

// Which child covers each rank of a group: ranges inside [0, num_ranks), none covered twice,
// and (at a root) all covered.
class RankCover {
 public:
  explicit RankCover(uint32_t num_ranks) : owner_(num_ranks, -1) {}
  // Child `child` (named `children_path`[child]) covers [first, first + count): "" or why not.
  std::string add(size_t child, uint32_t first, uint32_t count, bool is_rank,
                  const std::string& children_path);
  // "" when every rank is covered, else the root-coverage message.
  std::string missing() const;

 private:
  std::vector<int> owner_;  // child covering each rank, -1 none
};

// The shape the engine needs to run a context: ranks, window, pmtu, mode, hop timeout, children
// count, each child's ranks inside the group (a rank child: one rank). What engine::check_config
// checks.
void check_shape(const GroupContext& g, const std::string& path, ContextErrors& errors);

// Every rule on the value alone: check_shape, initial_psn and QPNs in 24 bits, ranks covered
// once (all of them at a root), unicast endpoint addresses. With `sw`: ports exist, pmtu fits
// every used port, local endpoints on an INC address, remote ones not. `path` prefixes every
// error's path ("" for none).
void check_context(const GroupContext& g, const std::string& path, ContextErrors& errors,
                   const SwitchView* sw = nullptr);

}  // namespace epic::vocab
