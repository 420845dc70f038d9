// incctl: the operator's view of inc-manager (docs/design.md, docs/incctl.md) — switches,
// groups, IncTrees, INC memory, tenants, topology, telemetry — as tables or --json, and the
// few writes an operator needs (create-tenant, add-link, destroy).
// Exit codes: 0 ok, 1 the manager refused the request, 2 the manager could not be reached,
// 3 bad usage.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>

#include "proto/inc/v1/manager.grpc.pb.h"
#include "proto/vocab/grpc_target.h"
#include "tools/incctl/render.h"

namespace {

namespace pb = ::epic::inc::v1;
using namespace epic::incctl;

struct Options {
  std::string manager = "unix:/run/epic/inc-manager.sock";  // inc-manager's default --listen
  bool json = false;
  uint32_t timeout_ms = 5000;
  std::string tls_ca, tls_cert, tls_key;
  bool insecure = false;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<grpc::Channel> connect(const Options& o) {
  if (o.tls_ca.empty() && o.tls_cert.empty()) {
    return grpc::CreateChannel(o.manager, grpc::InsecureChannelCredentials());
  }
  grpc::SslCredentialsOptions ssl;
  if (!o.tls_ca.empty()) ssl.pem_root_certs = slurp(o.tls_ca);
  if (!o.tls_cert.empty()) ssl.pem_cert_chain = slurp(o.tls_cert);
  if (!o.tls_key.empty()) ssl.pem_private_key = slurp(o.tls_key);
  return grpc::CreateChannel(o.manager, grpc::SslCredentials(ssl));
}

int report(const Options& o, const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
      s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::fprintf(stderr, "incctl: cannot reach inc-manager at %s: %s\n", o.manager.c_str(),
                 s.error_message().c_str());
    return 2;
  }
  std::fprintf(stderr, "incctl: %s\n", s.error_message().c_str());
  return 1;
}

// Calls `rpc` with a deadline and prints the answer as JSON or with `render`.
template <class Resp, class Call, class Render>
int call(const Options& o, Call rpc, Render render) {
  auto stub = pb::IncManager::NewStub(connect(o));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(o.timeout_ms));
  Resp resp;
  const grpc::Status s = rpc(*stub, ctx, resp);
  if (!s.ok()) return report(o, s);
  if (o.json) {
    std::string out;
    google::protobuf::util::JsonPrintOptions p;
    p.add_whitespace = true;
    p.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(resp, &out, p);
    std::cout << out;
    if (!out.empty() && out.back() != '\n') std::cout << "\n";
  } else {
    std::cout << render(resp);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"incctl: inspect and steer inc-manager (switches, groups, trees, memory)"};
  app.add_option("--manager", o.manager, "inc-manager address: host:port or unix:/path")
      ->envname("INC_MANAGER")
      ->capture_default_str();
  app.add_flag("--json", o.json, "print the answer as JSON");
  app.add_option("--timeout-ms", o.timeout_ms, "deadline of the call")->capture_default_str();
  app.add_option("--tls-ca", o.tls_ca, "CA (PEM) of the manager's certificate: use TLS");
  app.add_option("--tls-cert", o.tls_cert, "client certificate (PEM) for mutual TLS");
  app.add_option("--tls-key", o.tls_key, "client key (PEM) for mutual TLS");
  app.add_flag("--insecure", o.insecure,
               "plaintext to a manager that is not on a unix socket or loopback address "
               "(trusted lab networks only)");
  app.require_subcommand(1);

  auto* switches = app.add_subcommand("switches", "registered switches and their agents");
  auto* groups = app.add_subcommand("groups", "groups (and rendezvous still forming)");
  std::string tenant_filter;
  groups->add_option("--tenant", tenant_filter, "only this tenant's groups");
  bool mode_costs = false;
  groups->add_flag("--modes", mode_costs,
                   "Mode-II vs Mode-III: each group's window and bytes per switch in either mode");
  auto* tree = app.add_subcommand("tree", "a group's IncTree, switch by switch");
  uint32_t tree_group = 0;
  tree->add_option("GROUP", tree_group, "group id")->required();
  auto* memory = app.add_subcommand("memory", "INC memory (bytes) per switch and tenant");
  auto* tenants = app.add_subcommand("tenants", "tenants, quotas and Spatial Mux partitions");
  auto* topology = app.add_subcommand("topology", "switches, links and rank addresses");
  auto* telemetry = app.add_subcommand(
      "telemetry",
      "per-group counters from the agents and each group's job-wide straggler figure; with GROUP, "
      "that group's goodput, slowest member and per-switch, per-child figures (docs/telemetry.md)");
  uint32_t telemetry_group = 0;
  telemetry->add_option("GROUP", telemetry_group, "group id (default: every group)");

  auto* create_tenant = app.add_subcommand("create-tenant", "create or replace a tenant");
  std::string name;
  std::optional<uint32_t> groups_max, ranks_max;
  std::optional<std::string> per_switch, total;
  std::vector<std::string> reserve;
  create_tenant->add_option("NAME", name, "tenant name")->required();
  create_tenant->add_option("--max-bytes-per-switch", per_switch,
                            "quota: BYTES of switch memory on any switch (suffix KiB, MiB, GiB)");
  create_tenant->add_option("--max-bytes-total", total, "quota: BYTES over all switches");
  create_tenant->add_option("--max-groups", groups_max, "quota");
  create_tenant->add_option("--max-ranks-per-group", ranks_max, "quota");
  create_tenant->add_option("--reserve", reserve,
                            "SWITCH=BYTES Spatial Mux partition (suffix KiB, MiB, GiB; repeat)");

  auto* add_link = app.add_subcommand("add-link", "declare a switch-to-switch link");
  std::string link_a, link_b;
  add_link->add_option("A", link_a, "SWITCH:PORT")->required();
  add_link->add_option("B", link_b, "SWITCH:PORT")->required();

  auto* destroy = app.add_subcommand("destroy", "tear a group down (frees its memory)");
  uint32_t destroy_group = 0;
  destroy->add_option("GROUP", destroy_group, "group id")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 3;
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    std::fprintf(stderr, "incctl: --tls-cert and --tls-key go together (mutual TLS)\n");
    return 3;
  }
  if (o.tls_ca.empty() && o.tls_cert.empty() && !o.insecure &&
      !epic::vocab::is_local_grpc_target(o.manager)) {
    std::fprintf(stderr,
                 "incctl: --manager %s is not a unix socket or loopback address: give --tls-ca "
                 "(and --tls-cert/--tls-key for mutual TLS), or --insecure for plaintext\n",
                 o.manager.c_str());
    return 3;
  }
  for (const std::string* f : {&o.tls_ca, &o.tls_cert, &o.tls_key}) {
    if (!f->empty() && !std::ifstream(*f)) {
      std::fprintf(stderr, "incctl: cannot read %s\n", f->c_str());
      return 3;
    }
  }

  using Stub = pb::IncManager::Stub;
  if (*switches) {
    return call<pb::ListSwitchesResponse>(
        o, [](Stub& s, auto& c, auto& r) { return s.ListSwitches(&c, {}, &r); },
        [](const auto& r) { return render_switches(r); });
  }
  if (*groups) {
    pb::ListGroupsRequest req;
    req.set_tenant(tenant_filter);
    return call<pb::ListGroupsResponse>(
        o, [&](Stub& s, auto& c, auto& r) { return s.ListGroups(&c, req, &r); },
        [&](const auto& r) { return mode_costs ? render_mode_costs(r) : render_groups(r); });
  }
  if (*tree) {
    pb::ListGroupsRequest req;
    req.set_group_id(tree_group);
    return call<pb::ListGroupsResponse>(
        o,
        [&](Stub& s, auto& c, auto& r) {
          grpc::Status st = s.ListGroups(&c, req, &r);
          if (st.ok() && r.groups().empty()) {
            return grpc::Status(grpc::StatusCode::NOT_FOUND,
                                "unknown group " + std::to_string(tree_group));
          }
          return st;
        },
        [](const auto& r) { return render_tree(r.groups(0)); });
  }
  if (*memory) {
    return call<pb::GetMemoryResponse>(
        o, [](Stub& s, auto& c, auto& r) { return s.GetMemory(&c, {}, &r); },
        [](const auto& r) { return render_memory(r); });
  }
  if (*tenants) {
    return call<pb::ListTenantsResponse>(
        o, [](Stub& s, auto& c, auto& r) { return s.ListTenants(&c, {}, &r); },
        [](const auto& r) { return render_tenants(r); });
  }
  if (*topology) {
    return call<pb::GetTopologyResponse>(
        o, [](Stub& s, auto& c, auto& r) { return s.GetTopology(&c, {}, &r); },
        [](const auto& r) { return render_topology(r); });
  }
  if (*telemetry) {
    pb::GetTelemetryRequest req;
    req.set_group_id(telemetry_group);
    return call<pb::GetTelemetryResponse>(
        o, [&](Stub& s, auto& c, auto& r) { return s.GetTelemetry(&c, req, &r); },
        [&](const auto& r) {
          if (telemetry_group == 0 || r.jobs().empty()) return render_telemetry(r);
          return render_job(r.jobs(0));
        });
  }
  if (*create_tenant) {
    pb::SetTenantRequest req;
    auto* t = req.mutable_tenant();
    t->set_name(name);
    const std::pair<const std::optional<std::string>*, const char*> quotas[] = {
        {&per_switch, "--max-bytes-per-switch"}, {&total, "--max-bytes-total"}};
    for (const auto& [value, flag] : quotas) {
      if (!*value) continue;
      const std::optional<uint64_t> bytes = parse_bytes(**value);
      if (!bytes) {
        std::fprintf(stderr, "incctl: %s %s: expected BYTES (digits, optional KiB/MiB/GiB)\n", flag,
                     (*value)->c_str());
        return 3;
      }
      if (value == &per_switch) {
        t->mutable_quota()->set_max_bytes_per_switch(*bytes);
      } else {
        t->mutable_quota()->set_max_bytes_total(*bytes);
      }
    }
    if (groups_max) t->mutable_quota()->set_max_groups(*groups_max);
    if (ranks_max) t->mutable_quota()->set_max_ranks_per_group(*ranks_max);
    for (const std::string& r : reserve) {
      const auto eq = r.find('=');
      const std::optional<uint64_t> bytes = eq == std::string::npos || eq == 0
                                                ? std::nullopt
                                                : parse_bytes(std::string_view(r).substr(eq + 1));
      if (!bytes) {
        std::fprintf(stderr,
                     "incctl: --reserve %s: expected SWITCH=BYTES (digits, optional KiB/MiB/GiB)\n",
                     r.c_str());
        return 3;
      }
      (*t->mutable_reserved_bytes())[r.substr(0, eq)] = *bytes;
    }
    return call<pb::SetTenantResponse>(
        o, [&](Stub& s, auto& c, auto& r) { return s.SetTenant(&c, req, &r); },
        [&](const auto&) { return "tenant " + name + " set\n"; });
  }
  if (*add_link) {
    pb::AddLinkRequest req;
    const auto split = [](const std::string& sp, pb::SwitchPortRef* out) {
      const auto colon = sp.find(':');
      out->set_switch_id(sp.substr(0, colon));
      if (colon != std::string::npos) out->set_port(sp.substr(colon + 1));
    };
    split(link_a, req.mutable_link()->mutable_a());
    split(link_b, req.mutable_link()->mutable_b());
    return call<pb::AddLinkResponse>(
        o, [&](Stub& s, auto& c, auto& r) { return s.AddLink(&c, req, &r); },
        [&](const auto&) { return "link " + link_a + " - " + link_b + " added\n"; });
  }
  if (*destroy) {
    pb::DestroyGroupRequest req;
    req.set_group_id(destroy_group);
    return call<pb::DestroyGroupResponse>(
        o, [&](Stub& s, auto& c, auto& r) { return s.DestroyGroup(&c, req, &r); },
        [](const auto& r) { return "group " + std::to_string(r.group_id()) + " destroyed\n"; });
  }
  return 3;
}
