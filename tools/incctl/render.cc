#include "tools/incctl/render.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <vector>

#include "proto/context/context_proto.h"
#include "proto/vocab/arith.h"
#include "proto/vocab/counters.h"
#include "proto/vocab/straggler.h"

namespace epic::incctl {
namespace {

// Columns padded to their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<size_t> w;
    for (const auto& r : rows_) {
      w.resize(std::max(w.size(), r.size()));
      for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    }
    std::ostringstream out;
    for (const auto& r : rows_) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
      }
      out << line << "\n";
    }
    return out.str();
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string n(uint64_t v) { return std::to_string(v); }

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f %%", share * 100);
  return text;
}

// "rx_frames" -> "RX FRAMES"
std::string column_name(std::string_view counter) {
  std::string s(counter);
  for (char& c : s)
    c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string endpoint(const pb::Endpoint& e) {
  char qpn[16];
  std::snprintf(qpn, sizeof qpn, "0x%06x", e.qpn());
  return e.ipv4() + "/" + qpn;
}

}  // namespace

std::string bytes_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return n(bytes);
  double v = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  char human[32];
  if (v == static_cast<double>(static_cast<uint64_t>(v))) {
    std::snprintf(human, sizeof human, "%llu %s", static_cast<unsigned long long>(v), kUnits[unit]);
  } else {
    std::snprintf(human, sizeof human, "%.1f %s", v, kUnits[unit]);
  }
  return n(bytes) + " (" + human + ")";
}

std::optional<uint64_t> parse_bytes(std::string_view text) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  int shift = 0;
  if (suffix == "K" || suffix == "KiB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MiB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GiB") {
    shift = 30;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (shift && v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

std::string render_switches(const pb::ListSwitchesResponse& r) {
  Table t({"SWITCH", "INC ADDRESS", "PORTS", "MEMORY BYTES", "GRANTED BYTES", "GROUPS", "AGENT",
           "LAST SEEN"});
  for (const auto& s : r.switches()) {
    t.add({s.switch_id(), s.inc_ipv4() + " " + s.inc_mac(), n(s.ports_size()),
           bytes_text(s.capacity_bytes()), bytes_text(s.granted_bytes()), n(s.groups()),
           s.connected() ? "connected " + s.agent_peer() : "away",
           s.last_seen_age_ms() ? n(s.last_seen_age_ms()) + " ms ago" : "-"});
  }
  return t.str();
}

namespace {

std::string mode_text(pb::GroupMode m) {
  switch (m) {
    case pb::GROUP_MODE_UNSPECIFIED:
    case pb::GROUP_MODE_2:
      return "Mode-II";
    case pb::GROUP_MODE_3:
      return "Mode-III";
    default:
      return "mode " + std::to_string(static_cast<int>(m));
  }
}

// The bytes a group holds on each switch of its tree ("-" when it holds none): every switch of
// a tree is granted the same, group_memory_bytes(window, pmtu).
std::string bytes_per_switch(const pb::GroupInfo& g) {
  if (g.grants().empty()) return "-";
  const uint64_t first = g.grants(0).bytes();
  for (const auto& s : g.grants()) {
    if (s.bytes() != first) return "differs";
  }
  return bytes_text(first);
}

// The group's accumulator profile: "fp32_arrival", with the element type its memory is sized
// for when it named one, and for KULISCH_FIXED PRISM's width W ("kulisch_fixed fp32 W=286").
std::string accum_text(const pb::GroupInfo& g) {
  // A stream, not string concatenation: gcc 12 -O3 reports a false -Wrestrict on the latter.
  std::ostringstream out;
  if (const auto profile = vocab::profile_from_proto(g.accumulator())) {
    out << vocab::to_string(*profile);
  } else {
    out << "accumulator " << static_cast<int>(g.accumulator());
  }
  const auto dtype = vocab::dtype_from_proto(g.dtype());
  if (!dtype) {
    out << " dtype " << static_cast<int>(g.dtype());
  } else if (*dtype) {
    out << " " << vocab::to_string(**dtype);
  }
  if (g.exact_width_bits() != 0) out << " W=" << g.exact_width_bits();
  return out.str();
}

}  // namespace

std::string render_groups(const pb::ListGroupsResponse& r) {
  Table t({"ID", "TENANT", "NAME", "STATE", "MODE", "ACCUM", "RANKS", "WINDOW", "PMTU",
           "BYTES/SWITCH", "ROOT", "SWITCHES", "REASON"});
  for (const auto& g : r.groups()) {
    t.add({n(g.group_id()), g.tenant(), g.name(), g.state(), mode_text(g.mode()), accum_text(g),
           n(g.size()), n(g.window()), n(g.pmtu()), bytes_per_switch(g),
           g.tree().root().empty() ? "-" : g.tree().root(), n(g.tree().nodes_size()), g.reason()});
  }
  for (const auto& p : r.pending()) {
    t.add({"-", p.tenant(), p.name(), "rendezvous", "-", "-",
           n(p.joined_size()) + "/" + n(p.size()), "-", "-", "-", "-", "-", "waiting for ranks"});
  }
  return t.str();
}

std::string render_mode_costs(const pb::ListGroupsResponse& r) {
  Table t({"ID", "NAME", "MODE", "SWITCHES", "MODE-II WINDOW", "MODE-II BYTES/SWITCH",
           "MODE-III WINDOW", "MODE-III BYTES/SWITCH"});
  for (const auto& g : r.groups()) {
    std::string w2 = "-", b2 = "-", w3 = "-", b3 = "-";
    for (const auto& c : g.mode_costs()) {
      (c.mode() == pb::GROUP_MODE_3 ? w3 : w2) = n(c.window());
      (c.mode() == pb::GROUP_MODE_3 ? b3 : b2) = bytes_text(c.bytes_per_switch());
    }
    t.add(
        {n(g.group_id()), g.name(), mode_text(g.mode()), n(g.tree().nodes_size()), w2, b2, w3, b3});
  }
  return t.str();
}

std::string render_tree(const pb::GroupInfo& g) {
  std::ostringstream out;
  out << "group " << g.group_id() << " (" << g.name() << " of " << g.tenant() << "), " << g.state()
      << ", " << mode_text(g.mode());
  if (g.mode() == pb::GROUP_MODE_3) out << " (hop timeout " << g.hop_timeout_us() << " us)";
  out << ", " << g.size() << " ranks, window " << g.window() << ", pmtu " << g.pmtu()
      << ", initial psn " << g.initial_psn() << "\n";
  out << "accumulator: " << accum_text(g);
  if (g.accum_bytes_per_element() != 0) {
    out << " (" << g.accum_bytes_per_element() << " bytes of accumulator per element)";
  }
  out << "\n";
  out << "traffic class: DSCP " << g.dscp() << (g.dscp() == 0 ? " (best effort)" : "") << "\n";
  out << "switch memory: " << bytes_per_switch(g) << " bytes per switch";
  for (const auto& c : g.mode_costs()) {
    out << "; " << mode_text(c.mode()) << " would size window " << c.window() << ", "
        << bytes_text(c.bytes_per_switch());
  }
  out << "\n";
  if (g.tree().nodes().empty()) {
    out << "no IncTree yet\n";
    return out.str();
  }
  for (const auto& node : g.tree().nodes()) {
    const std::string indent(2 * node.level(), ' ');
    out << indent << node.switch_id();
    if (node.has_parent()) {
      out << "  (up " << node.parent().port() << " -> " << node.parent().parent_port().switch_id()
          << ":" << node.parent().parent_port().port() << ")";
    } else {
      out << "  (root)";
    }
    out << "\n";
    for (const auto& c : node.children()) {
      out << indent << "  " << c.port() << ": ";
      if (c.is_rank()) {
        out << "rank " << c.first_rank();
      } else {
        out << "switch " << c.child_port().switch_id() << " ranks " << c.first_rank() << ".."
            << c.first_rank() + c.rank_count() - 1;
      }
      out << "  remote " << endpoint(c.remote()) << "  local " << endpoint(c.local()) << "\n";
    }
  }
  return out.str();
}

std::string render_memory(const pb::GetMemoryResponse& r) {
  const auto b = [](uint64_t v) { return bytes_text(v); };
  Table t({"SWITCH", "CAPACITY BYTES", "GRANTED", "FREE", "SHARED", "SHARED USED"});
  for (const auto& s : r.switches()) {
    t.add({s.switch_id(), b(s.capacity_bytes()), b(s.granted_bytes()), b(s.free_bytes()),
           b(s.shared_capacity_bytes()), b(s.shared_used_bytes())});
  }
  Table u({"TENANT", "SWITCH", "RESERVED BYTES", "HELD", "FREE FOR IT"});
  for (const auto& s : r.switches()) {
    for (const auto& m : s.tenants()) {
      u.add(
          {m.tenant(), s.switch_id(), b(m.reserved_bytes()), b(m.held_bytes()), b(m.free_bytes())});
    }
  }
  Table v({"TENANT", "BYTES HELD", "GROUPS"});
  for (const auto& x : r.tenants()) v.add({x.tenant(), b(x.held_bytes()), n(x.groups())});
  return t.str() + "\n" + u.str() + "\n" + v.str();
}

std::string render_tenants(const pb::ListTenantsResponse& r) {
  Table t({"TENANT", "BYTES/SWITCH", "BYTES TOTAL", "GROUPS", "RANKS/GROUP", "RESERVED BYTES"});
  const auto opt = [](bool has, uint64_t v) { return has ? n(v) : std::string("-"); };
  const auto opt_bytes = [](bool has, uint64_t v) { return has ? bytes_text(v) : "-"; };
  for (const auto& x : r.tenants()) {
    const auto& q = x.quota();
    std::string reserved;
    for (const auto& [sw, bytes] : x.reserved_bytes()) {
      reserved += (reserved.empty() ? "" : ",") + sw + "=" + bytes_text(bytes);
    }
    t.add({x.name(), opt_bytes(q.has_max_bytes_per_switch(), q.max_bytes_per_switch()),
           opt_bytes(q.has_max_bytes_total(), q.max_bytes_total()),
           opt(q.has_max_groups(), q.max_groups()),
           opt(q.has_max_ranks_per_group(), q.max_ranks_per_group()),
           reserved.empty() ? "-" : reserved});
  }
  return t.str();
}

std::string render_topology(const pb::GetTopologyResponse& r) {
  Table l({"LINK A", "LINK B", "A->B", "B->A", "LOAD", "QUEUE A/B"});
  for (int i = 0; i < r.links_size(); ++i) {
    const auto& x = r.links(i);
    std::vector<std::string> row = {x.a().switch_id() + ":" + x.a().port(),
                                    x.b().switch_id() + ":" + x.b().port(),
                                    "-",
                                    "-",
                                    "-",
                                    "-"};
    if (i < r.link_loads_size()) {
      const auto& y = r.link_loads(i);
      if (y.measured()) {
        row[2] = rate_text(true, y.a_to_b_bytes_per_s());
        row[3] = rate_text(true, y.b_to_a_bytes_per_s());
        row[4] = percent(y.load());
      }
      if (y.a_queue_bytes() + y.b_queue_bytes() > 0) {
        row[5] = bytes_text(y.a_queue_bytes()) + " / " + bytes_text(y.b_queue_bytes());
      }
      if (y.hot()) row[4] += " (hot)";
    }
    l.add(row);
  }
  Table k({"RANK ADDRESS", "MAC", "BEHIND"});
  for (const auto& x : r.ranks())
    k.add({x.ipv4(), x.mac(), x.at().switch_id() + ":" + x.at().port()});
  pb::ListSwitchesResponse sw;
  *sw.mutable_switches() = r.switches();
  return render_switches(sw) + "\n" + l.str() + "\n" + k.str();
}

std::string render_telemetry(const pb::GetTelemetryResponse& r) {
  // One column per group counter (proto/vocab/counters.h), named after it.
  std::vector<std::string> head = {"SWITCH", "GROUP"};
#define EPIC_COLUMN(name, help) head.push_back(column_name(#name));
  EPIC_GROUP_COUNTERS(EPIC_COLUMN)
#undef EPIC_COLUMN
  head.emplace_back("LAST PROGRESS");
  Table t(head);
  for (const auto& s : r.switches()) {
    const std::string sw = s.switch_id() + (s.connected() ? "" : " (away)");
    if (s.groups().empty()) {
      std::vector<std::string> row(head.size(), "-");
      row[0] = sw;
      t.add(row);
    }
    for (const auto& g : s.groups()) {
      std::vector<std::string> row = {sw, n(g.group_id())};
#define EPIC_CELL(name, help) row.push_back(n(g.name()));
      EPIC_GROUP_COUNTERS(EPIC_CELL)
#undef EPIC_CELL
      row.push_back(n(g.last_progress_age_ms()) + " ms ago");
      t.add(row);
    }
  }
  if (r.jobs().empty()) return t.str();
  Table j({"GROUP", "TENANT/NAME", "GOODPUT (MIN)", "AT", "COLLECTIVES", "SLOWEST", "PINNED",
           "VERDICT"});
  for (const auto& x : r.jobs()) {
    j.add({n(x.group_id()), x.tenant() + "/" + x.name(),
           rate_text(x.rate_known(), x.rate_bytes_per_s()),
           x.rate_switch().empty() ? "-" : x.rate_switch(), n(x.collectives_completed()),
           x.slowest().empty() ? "-" : x.slowest(), percent(x.pinned()), x.verdict()});
  }
  return t.str() + "\n" + j.str();
}

std::string rate_text(bool known, double bytes_per_s) {
  if (!known) return "-";
  static constexpr const char* kUnits[] = {"B/s", "KB/s", "MB/s", "GB/s"};
  size_t u = 0;
  while (bytes_per_s >= 1000 && u + 1 < std::size(kUnits)) {
    bytes_per_s /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", bytes_per_s, kUnits[u]);
  return text;
}

std::string lag_text(uint64_t ns) {
  if (ns == 0) return "-";
  char text[32];
  if (ns < 1'000'000) {
    std::snprintf(text, sizeof text, "%llu us", static_cast<unsigned long long>(ns / 1000));
  } else {
    std::snprintf(text, sizeof text, "%.1f ms", static_cast<double>(ns) / 1e6);
  }
  return text;
}

std::string render_job(const pb::JobTelemetry& x) {
  std::string out = "group " + n(x.group_id()) + " (" + x.tenant() + "/" + x.name() + ")\n";
  out += "  goodput:      " + rate_text(x.rate_known(), x.rate_bytes_per_s()) +
         (x.rate_switch().empty() ? "" : " (the minimum, at " + x.rate_switch() + ")") + "\n";
  out += "  collectives:  " + n(x.collectives_completed()) + " completed\n";
  const std::string nobody = x.verdict() == "extra hop"
                                 ? "a switch child, late by no more than its link's round trip"
                                 : "nobody stands out";
  out += "  slowest:      " + (x.slowest().empty() ? nobody : x.slowest()) + " — last of " +
         percent(x.pinned()) + " of the slots (" + x.verdict() + ")\n\n";
  Table path(
      {"WALK: SWITCH", "LAST MOST OFTEN", "SHARE", "SLOTS", "PINNED ABOVE", "PINNED", "LAG P50"});
  for (const auto& h : x.path()) {
    path.add({h.switch_id(), h.child().empty() ? "-" : h.child(), percent(h.share()), n(h.slots()),
              percent(h.threshold()), h.pinned() ? "yes" : "no", lag_text(h.lag_p50_ns())});
  }
  Table local({"SWITCH (LOCAL)", "CHILD", "LAST", "SHARE", "LAG P50", "LAG P99", "GOODPUT"});
  for (const auto& s : x.switches()) {
    if (!s.reported()) {
      local.add({s.switch_id(), "(no report yet)", "-", "-", "-", "-", "-"});
      continue;
    }
    for (const auto& c : s.children()) {
      const double share =
          s.slots_timed() > 0 ? static_cast<double>(c.last()) / static_cast<double>(s.slots_timed())
                              : 0;
      const std::string who =
          vocab::child_name(c.is_rank(), c.child(), c.first_rank(), c.rank_count());
      local.add({s.switch_id(), who, n(c.last()), percent(share), lag_text(c.lag_p50_ns()),
                 lag_text(c.lag_p99_ns()), rate_text(s.rate_known(), s.rate_bytes_per_s())});
    }
  }
  return out + path.str() + "\n" + local.str();
}

}  // namespace epic::incctl
