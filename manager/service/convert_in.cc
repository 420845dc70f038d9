#include "manager/service/convert_in.h"

#include <algorithm>
#include <set>

#include "manager/core/group.h"
#include "manager/core/limits.h"
#include "proto/context/context_proto.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/limits.h"
#include "proto/vocab/memory.h"

namespace epic::manager::service {
namespace {

std::string join_path(std::string_view parent, std::string_view child) {
  if (parent.empty()) return std::string(child);
  return std::string(parent) + "." + std::string(child);
}

Result<SwitchPort> switch_port_from(std::string_view field, const pb::SwitchPortRef& p) {
  if (!valid_name(p.switch_id())) {
    return invalid(join_path(field, "switch_id"),
                   "'" + p.switch_id() + "' is not a switch name (1-64 of [A-Za-z0-9._-])");
  }
  if (!valid_name(p.port())) {
    return invalid(join_path(field, "port"),
                   "'" + p.port() + "' is not a port name (1-64 of [A-Za-z0-9._-])");
  }
  return SwitchPort{p.switch_id(), p.port()};
}

}  // namespace

Error invalid(std::string_view field, std::string_view why) {
  return make_error(ErrorCode::kInvalidArgument, std::string(field) + ": " + std::string(why));
}

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

Result<uint32_t> parse_ipv4_field(std::string_view field, const std::string& text) {
  if (text.empty()) return invalid(field, "required (a dotted-quad IPv4 address)");
  auto a = vocab::parse_ipv4(text);
  if (!a) return invalid(field, "'" + text + "' is not a dotted-quad IPv4 address");
  if (!is_unicast_ipv4(*a)) return invalid(field, "'" + text + "' is not a unicast address");
  return *a;
}

Result<vocab::MacAddr> parse_mac_field(std::string_view field, const std::string& text) {
  if (text.empty()) return invalid(field, "required (a MAC like 02:00:00:00:00:01)");
  auto m = vocab::parse_mac(text);
  if (!m) return invalid(field, "'" + text + "' is not a MAC like 02:00:00:00:00:01");
  if (!is_unicast_mac(*m)) return invalid(field, "'" + text + "' is not a unicast MAC");
  return *m;
}

Result<SwitchPort> parse_switch_port(std::string_view field, const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return invalid(field, "'" + text + "' is not SWITCH:PORT");
  pb::SwitchPortRef ref;
  ref.set_switch_id(text.substr(0, colon));
  ref.set_port(text.substr(colon + 1));
  return switch_port_from(field, ref);
}

Result<RankRequest> rank_endpoint_from(std::string_view field, const pb::RankEndpoint& e) {
  RankRequest out;
  auto ip = parse_ipv4_field(join_path(field, "ipv4"), e.ipv4());
  if (!ip.ok()) return ip.error();
  if (e.qpn() == 0 || e.qpn() >= kQpnLimit) {
    return invalid(join_path(field, "qpn"), std::to_string(e.qpn()) + " is not a QPN in 1..2^24-1");
  }
  if (!e.gid().empty()) {
    auto gid = vocab::parse_ipv6(e.gid());
    if (!gid) return invalid(join_path(field, "gid"), "'" + e.gid() + "' is not an IPv6 GID");
    if (*gid != ipv4_mapped_gid(ip.value())) {
      return invalid(join_path(field, "gid"), "'" + e.gid() + "' is not the IPv4-mapped GID of " +
                                                  join_path(field, "ipv4") + " " + e.ipv4() +
                                                  " (RoCEv2 over IPv4)");
    }
  }
  out.ipv4 = ip.value();
  out.qpn = e.qpn();
  if (!e.mac().empty()) {
    auto mac = parse_mac_field(join_path(field, "mac"), e.mac());
    if (!mac.ok()) return mac.error();
    out.mac = mac.value();
  }
  return out;
}

Result<RankJoin> rank_join_from(const pb::JoinGroupRequest& r) {
  RankJoin j;
  if (!valid_name(r.tenant())) {
    return invalid("tenant", "'" + r.tenant() + "' is not a tenant name (1-64 of [A-Za-z0-9._-])");
  }
  // Group names may carry a job path ("job-42/dp-0"): printable, no spaces.
  if (r.group().empty() || r.group().size() > 128 ||
      !std::all_of(r.group().begin(), r.group().end(), [](char c) { return c > ' ' && c < 127; })) {
    return invalid("group", "'" + r.group() + "' is not a group name (1-128 printable characters)");
  }
  if (r.size() == 0 || r.size() > kMaxRanks) {
    return invalid("size", "a group has 1.." + std::to_string(kMaxRanks) + " ranks, not " +
                               std::to_string(r.size()));
  }
  if (r.rank() >= r.size()) {
    return invalid("rank", std::to_string(r.rank()) + " is out of range for a group of " +
                               std::to_string(r.size()) + " ranks");
  }
  if (!r.has_endpoint()) return invalid("endpoint", "required (the rank's QP)");
  auto endpoint = rank_endpoint_from("endpoint", r.endpoint());
  if (!endpoint.ok()) return endpoint.error();
  if (r.has_host_endpoint()) {
    auto host = rank_endpoint_from("host_endpoint", r.host_endpoint());
    if (!host.ok()) return host.error();
    if (host.value().qpn + 1 >= kQpnLimit) {
      return invalid("host_endpoint.qpn", std::to_string(host.value().qpn) +
                                              " leaves no room for the right ring QP qpn + 1");
    }
  }
  j.rank = endpoint.value();
  j.rank.rank = r.rank();
  // Unset: 0, the manager sizes the window from the path's bandwidth-delay product.
  j.window = r.has_window() ? r.window() : 0;
  if (r.has_window() && !valid_window(j.window)) {
    return invalid("window", std::to_string(j.window) + " is not a power of two in 1.." +
                                 std::to_string(vocab::kMaxWindow));
  }
  // Unset: 0, the manager picks the largest path MTU the group's IncTree carries.
  j.pmtu = r.has_pmtu() ? r.pmtu() : 0;
  if (r.has_pmtu() && !valid_pmtu(j.pmtu)) {
    return invalid("pmtu",
                   std::to_string(j.pmtu) + " is not one of " + std::string(vocab::kPmtuChoices));
  }
  if (r.mode() != pb::GROUP_MODE_UNSPECIFIED) {
    const std::optional<vocab::GroupMode> mode = vocab::mode_from_proto(r.mode());
    if (!mode) return invalid("mode", vocab::proto_mode_error(r.mode()));
    j.mode = *mode;
  }
  if (r.has_pkey()) {
    if (std::string err = vocab::pkey_error(r.pkey()); !err.empty()) return invalid("pkey", err);
    j.pkey = static_cast<uint16_t>(r.pkey());
  }
  if (r.has_dscp()) {
    if (std::string err = vocab::dscp_error(r.dscp()); !err.empty()) return invalid("dscp", err);
    j.dscp = static_cast<uint8_t>(r.dscp());
  }
  if (!vocab::profile_from_proto(r.accumulator())) {
    return invalid("accumulator", vocab::proto_profile_error(r.accumulator()));
  }
  j.arith.profile = *vocab::profile_from_proto(r.accumulator());
  const auto dtype = vocab::dtype_from_proto(r.dtype());
  if (!dtype) return invalid("dtype", vocab::proto_dtype_error(r.dtype()));
  j.arith.dtype = *dtype;
  if (j.arith.profile == vocab::AccumProfile::kKulischFixed && !j.arith.dtype) {
    return invalid("dtype",
                   "required with accumulator kulisch_fixed: the exact accumulators are sized "
                   "for one element type (PRISM's width W depends on it)");
  }
  j.tenant = r.tenant();
  j.group = r.group();
  j.size = r.size();
  j.queue_timeout = Millis{r.queue_timeout_ms()};
  return j;
}

Result<SwitchSpec> switch_spec_from(const pb::Register& r) {
  SwitchSpec s;
  if (!valid_name(r.switch_id())) {
    return invalid("registration.switch_id",
                   "'" + r.switch_id() + "' is not a switch name (1-64 of [A-Za-z0-9._-])");
  }
  s.id = r.switch_id();
  auto ip = parse_ipv4_field("registration.inc_ipv4", r.inc_ipv4());
  if (!ip.ok()) return ip.error();
  s.inc_ipv4 = ip.value();
  auto mac = parse_mac_field("registration.inc_mac", r.inc_mac());
  if (!mac.ok()) return mac.error();
  s.inc_mac = mac.value();
  if (r.ports().empty()) return invalid("registration.ports", "at least one port is required");
  std::set<std::string> names;
  for (int i = 0; i < r.ports_size(); ++i) {
    const auto& p = r.ports(i);
    const std::string f = "registration.ports[" + std::to_string(i) + "]";
    if (!valid_name(p.name())) {
      return invalid(f + ".name", "'" + p.name() + "' is not a port name (1-64 of [A-Za-z0-9._-])");
    }
    if (!names.insert(p.name()).second) return invalid(f + ".name", "duplicate port " + p.name());
    if (p.mtu() < kMinPortMtu || p.mtu() > kMaxPortMtu) {
      return invalid(f + ".mtu", std::to_string(p.mtu()) + " is not an IP MTU in 68..9600");
    }
    s.ports.push_back({p.name(), static_cast<uint16_t>(p.mtu())});
  }
  if (r.slot_capacity() != 0) {
    return invalid("registration.slot_capacity",
                   "slots are no longer counted: set registration.capacity_bytes (this incd is "
                   "older than the manager; upgrade it)");
  }
  const uint64_t smallest = vocab::group_memory_bytes(1, vocab::kMinPmtu);
  if (r.capacity_bytes() < smallest) {
    return invalid("registration.capacity_bytes",
                   std::to_string(r.capacity_bytes()) + " bytes is less than the smallest group " +
                       "context (" + std::to_string(smallest) + " bytes: window 1, pmtu " +
                       std::to_string(vocab::kMinPmtu) + ")");
  }
  s.capacity_bytes = r.capacity_bytes();
  s.max_window = r.max_window() == 0 ? vocab::kDefaultSwitchMaxWindow : r.max_window();
  if (!valid_window(s.max_window)) {
    return invalid("registration.max_window", std::to_string(s.max_window) +
                                                  " is not a power of two in 1.." +
                                                  std::to_string(vocab::kMaxWindow));
  }
  const uint32_t pmtu = r.max_pmtu() == 0 ? vocab::kMaxPmtu : r.max_pmtu();
  if (!valid_pmtu(pmtu)) {
    return invalid("registration.max_pmtu",
                   std::to_string(pmtu) + " is not one of " + std::string(vocab::kPmtuChoices));
  }
  s.max_pmtu = static_cast<uint16_t>(pmtu);
  return s;
}

Result<Link> link_from(std::string_view field, const pb::Link& l) {
  auto a = switch_port_from(join_path(field, "a"), l.a());
  if (!a.ok()) return a.error();
  auto b = switch_port_from(join_path(field, "b"), l.b());
  if (!b.ok()) return b.error();
  if (a.value() == b.value()) return invalid(field, "a link joins two different ports");
  Link link{a.value(), b.value()};
  if (link.b < link.a) std::swap(link.a, link.b);
  return link;
}

Result<RankAttachment> attachment_from(std::string_view field, const pb::RankAttachment& r) {
  auto ip = parse_ipv4_field(join_path(field, "ipv4"), r.ipv4());
  if (!ip.ok()) return ip.error();
  auto mac = parse_mac_field(join_path(field, "mac"), r.mac());
  if (!mac.ok()) return mac.error();
  auto at = switch_port_from(join_path(field, "at"), r.at());
  if (!at.ok()) return at.error();
  return RankAttachment{ip.value(), mac.value(), at.value()};
}

Result<Tenant> tenant_from(std::string_view field, const pb::Tenant& t) {
  if (!valid_name(t.name())) {
    return invalid(join_path(field, "name"),
                   "'" + t.name() + "' is not a tenant name (1-64 of [A-Za-z0-9._-])");
  }
  Tenant out;
  out.name = t.name();
  const auto& q = t.quota();
  if (q.has_max_slots_per_switch()) {
    return invalid(join_path(field, "quota.max_slots_per_switch"),
                   "slots are no longer counted: set quota.max_bytes_per_switch (bytes)");
  }
  if (q.has_max_slots_total()) {
    return invalid(join_path(field, "quota.max_slots_total"),
                   "slots are no longer counted: set quota.max_bytes_total (bytes)");
  }
  if (!t.reserved().empty()) {
    return invalid(join_path(field, "reserved"),
                   "slots are no longer counted: set reserved_bytes (switch -> bytes)");
  }
  if (q.has_max_bytes_per_switch()) out.quota.max_bytes_per_switch = q.max_bytes_per_switch();
  if (q.has_max_bytes_total()) out.quota.max_bytes_total = q.max_bytes_total();
  if (q.has_max_groups()) {
    if (q.max_groups() == 0) {
      return invalid(join_path(field, "quota.max_groups"),
                     "must be >= 1 when set (leave it out for no limit)");
    }
    out.quota.max_groups = q.max_groups();
  }
  if (q.has_max_ranks_per_group()) {
    if (q.max_ranks_per_group() == 0) {
      return invalid(join_path(field, "quota.max_ranks_per_group"),
                     "must be >= 1 when set (leave it out for no limit)");
    }
    out.quota.max_ranks_per_group = q.max_ranks_per_group();
  }
  for (const auto& [sw, bytes] : t.reserved_bytes()) {
    if (!valid_name(sw)) {
      return invalid(join_path(field, "reserved_bytes"), "'" + sw + "' is not a switch name");
    }
    out.reserved[sw] = bytes;
  }
  if (t.has_default_dscp()) {
    if (std::string err = vocab::dscp_error(t.default_dscp()); !err.empty()) {
      return invalid(join_path(field, "default_dscp"), err);
    }
    out.default_dscp = static_cast<uint8_t>(t.default_dscp());
  }
  return out;
}

}  // namespace epic::manager::service
