#include "daemon/config/config.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/config/config_loader.h"
#include "daemon/config/traffic_class_validate.h"
#include "proto/vocab/addr.h"

namespace epic::incd {
namespace {

std::string example_path() { return std::string(EPIC_SOURCE_DIR) + "/deploy/examples/incd.yaml"; }

std::string mac_text(const vocab::MacAddr& m) { return vocab::format_mac(m); }

std::string endpoint_text(const engine::Endpoint& e) {
  std::ostringstream s;
  s << mac_text(e.mac) << "/" << vocab::format_ipv4(e.ipv4) << "/" << e.qpn;
  return s.str();
}

// Every field of a loaded config, one per line: two configs are equal iff their dumps are.
std::string dump(const IncdConfig& c) {
  std::ostringstream s;
  s << "eal " << c.eal.lcores << " " << c.eal.hugepages << " " << c.eal.memory_mb << " ["
    << c.eal.file_prefix << "] " << c.eal.log_level;
  for (const auto& a : c.eal.extra_args) s << " arg=" << a;
  s << "\nworkers " << c.workers << " burst " << c.burst << "\n";
  for (const auto& p : c.ports) {
    s << "port " << p.name << " " << p.device << " " << p.mtu << " " << p.rx_descriptors << " "
      << p.tx_descriptors << "\n";
  }
  for (const auto& a : c.sw.inc_addresses) {
    s << "inc " << vocab::format_ipv4(a.ipv4) << " " << mac_text(a.mac) << "\n";
  }
  s << "switch " << c.sw.l2_aging_s << " " << c.sw.l2_table_size << " "
    << static_cast<int>(c.sw.bad_icrc) << " udp " << c.sw.udp_source_ports.first << "-"
    << c.sw.udp_source_ports.last << "\n";
  for (const auto& f : c.faults) {
    s << "fault " << f.port << " " << static_cast<int>(f.direction) << " " << f.drop << " "
      << f.duplicate << " " << f.reorder << " " << f.delay_us << " " << f.seed << "\n";
  }
  for (const auto& g : c.groups) {
    s << "group " << g.group_id << " " << g.num_ranks << " " << g.initial_psn << " " << g.window
      << " " << g.pmtu << " mode " << static_cast<int>(g.mode) << " " << g.hop_timeout_us << "\n";
    for (const auto& ch : g.children) {
      s << "  child " << ch.port << " " << ch.is_rank << " " << ch.first_rank << "+"
        << ch.rank_count << " " << endpoint_text(ch.remote) << " " << endpoint_text(ch.local) << " "
        << ch.udp_src_port << "\n";
    }
    if (g.parent) {
      s << "  parent " << g.parent->port << " " << endpoint_text(g.parent->remote) << " "
        << endpoint_text(g.parent->local) << "\n";
    }
  }
  s << "metrics [" << c.metrics.listen << "] " << c.metrics.stall_after_ms << "\n";
  s << "log " << c.log.level << " [" << c.log.file << "]\n";
  return s.str();
}

std::string errors_text(const LoadResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += "  " + e.to_string() + "\n";
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path for a temporary file that the fixture removes.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix)
      : path_(::testing::TempDir() + "incd_config_test_" + std::to_string(::getpid()) + suffix) {}
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---- the reference config -------------------------------------------------------------------

TEST(IncdConfig, ExampleYamlLoadsWithEveryFieldMapped) {
  const LoadResult r = load_config_file(example_path());
  ASSERT_TRUE(r.config) << errors_text(r);
  EXPECT_TRUE(r.errors.empty());
  const IncdConfig& c = *r.config;

  EXPECT_EQ(c.eal.lcores, "0-1");
  EXPECT_FALSE(c.eal.hugepages);
  EXPECT_EQ(c.eal.memory_mb, 256u);
  EXPECT_EQ(c.eal.file_prefix, "");
  EXPECT_EQ(c.eal.log_level, "warning");
  EXPECT_TRUE(c.eal.extra_args.empty());
  EXPECT_EQ(c.workers, 1u);
  EXPECT_EQ(c.burst, 32u);

  ASSERT_EQ(c.ports.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(c.ports[i].name, "r" + std::to_string(i));
    EXPECT_EQ(c.ports[i].device, "net_af_packet" + std::to_string(i) + ",iface=sw-r" +
                                     std::to_string(i) + ",framecnt=4096");
    EXPECT_EQ(c.ports[i].mtu, 1500);
    EXPECT_EQ(c.ports[i].rx_descriptors, 1024);
    EXPECT_EQ(c.ports[i].tx_descriptors, 1024);
  }

  const vocab::MacAddr switch_mac{0x02, 0xec, 0x00, 0x00, 0x00, 0xfe};
  ASSERT_EQ(c.sw.inc_addresses.size(), 1u);
  EXPECT_EQ(c.sw.inc_addresses[0].ipv4, 0x0a4d00feu);  // 10.77.0.254, host order
  EXPECT_EQ(c.sw.inc_addresses[0].mac, switch_mac);
  EXPECT_EQ(c.sw.l2_aging_s, 300u);
  EXPECT_EQ(c.sw.l2_table_size, 4096u);
  EXPECT_EQ(c.sw.bad_icrc, BadIcrc::kPass);

  ASSERT_EQ(c.faults.size(), 1u);
  EXPECT_EQ(c.faults[0].port, 0);
  EXPECT_EQ(c.faults[0].direction, Direction::kRx);
  EXPECT_DOUBLE_EQ(c.faults[0].drop, 0.01);
  EXPECT_EQ(c.faults[0].duplicate, 0.0);
  EXPECT_EQ(c.faults[0].reorder, 0.0);
  EXPECT_EQ(c.faults[0].delay_us, 0u);
  EXPECT_EQ(c.faults[0].seed, 1u);

  ASSERT_EQ(c.groups.size(), 1u);
  const engine::GroupConfig& g = c.groups[0];
  EXPECT_EQ(g.group_id, 1u);
  EXPECT_EQ(g.num_ranks, 4);
  EXPECT_EQ(g.initial_psn, 0x100u);
  EXPECT_EQ(g.window, 16u);
  EXPECT_EQ(g.pmtu, 1024);
  EXPECT_FALSE(g.parent);
  ASSERT_EQ(g.children.size(), 4u);
  for (uint16_t i = 0; i < 4; ++i) {
    const engine::ChildLink& ch = g.children[i];
    EXPECT_EQ(ch.port, i);
    EXPECT_TRUE(ch.is_rank);
    EXPECT_EQ(ch.first_rank, i);
    EXPECT_EQ(ch.rank_count, 1);
    EXPECT_EQ(ch.remote.mac, (vocab::MacAddr{0x02, 0, 0, 0, 0, static_cast<uint8_t>(i + 1)}));
    EXPECT_EQ(ch.remote.ipv4, 0x0a4d0001u + i);
    EXPECT_EQ(ch.remote.qpn, 0x11u);
    EXPECT_EQ(ch.local.mac, switch_mac);  // defaulted from the inc address
    EXPECT_EQ(ch.local.ipv4, 0x0a4d00feu);
    EXPECT_EQ(ch.local.qpn, 0x1000u + i);
    EXPECT_EQ(ch.udp_src_port, 0xC000);
  }

  EXPECT_EQ(c.metrics.listen, "127.0.0.1:9464");
  EXPECT_EQ(c.metrics.stall_after_ms, 2000u);
  EXPECT_EQ(c.log.level, "info");
  EXPECT_EQ(c.log.file, "");
}

constexpr char kExampleJson[] = R"({
  "eal": { "lcores": "0-1", "hugepages": false, "memory_mb": 256, "file_prefix": "",
           "log_level": "warning", "extra_args": [] },
  "workers": 1,
  "burst": 32,
  "ports": [
    { "name": "r0", "device": "net_af_packet0,iface=sw-r0,framecnt=4096", "mtu": 1500 },
    { "name": "r1", "device": "net_af_packet1,iface=sw-r1,framecnt=4096" },
    { "name": "r2", "device": "net_af_packet2,iface=sw-r2,framecnt=4096" },
    { "name": "r3", "device": "net_af_packet3,iface=sw-r3,framecnt=4096" }
  ],
  "switch": {
    "inc_addresses": [ { "ipv4": "10.77.0.254", "mac": "02:ec:00:00:00:fe" } ],
    "l2_aging_s": 300, "l2_table_size": 4096, "bad_icrc": "pass"
  },
  "faults": [
    { "port": "r0", "direction": "rx", "drop": 0.01, "duplicate": 0.0, "reorder": 0.0,
      "delay_us": 0, "seed": 1 }
  ],
  "groups": [
    { "id": 1, "ranks": 4, "initial_psn": 256, "window": 16, "pmtu": 1024,
      "children": [
        { "port": "r0", "rank": 0,
          "remote": { "mac": "02:00:00:00:00:01", "ipv4": "10.77.0.1", "qpn": 17 },
          "local": { "ipv4": "10.77.0.254", "qpn": 4096 } },
        { "port": "r1", "rank": 1,
          "remote": { "mac": "02:00:00:00:00:02", "ipv4": "10.77.0.2", "qpn": 17 },
          "local": { "ipv4": "10.77.0.254", "qpn": 4097 } },
        { "port": "r2", "rank": 2,
          "remote": { "mac": "02:00:00:00:00:03", "ipv4": "10.77.0.3", "qpn": 17 },
          "local": { "ipv4": "10.77.0.254", "qpn": 4098 } },
        { "port": "r3", "rank": 3,
          "remote": { "mac": "02:00:00:00:00:04", "ipv4": "10.77.0.4", "qpn": 17 },
          "local": { "ipv4": "10.77.0.254", "qpn": 4099 } }
      ] }
  ],
  "metrics": { "listen": "127.0.0.1:9464", "stall_after_ms": 2000 },
  "log": { "level": "info", "file": "" }
})";

TEST(IncdConfig, JsonEquivalentOfTheExampleLoadsToTheSameConfig) {
  const LoadResult yaml = load_config_file(example_path());
  ASSERT_TRUE(yaml.config) << errors_text(yaml);
  TempFile file(".json");
  const LoadResult json = load_config_file(file.write(kExampleJson));
  ASSERT_TRUE(json.config) << errors_text(json);
  EXPECT_EQ(dump(*json.config), dump(*yaml.config));
}

// A file written by protobuf's own JSON printer (lowerCamelCase names, full enum names, 64-bit
// integers as strings) loads too.
TEST(IncdConfig, ProtobufCanonicalJsonOfTheExampleLoadsToTheSameConfig) {
  const ProtoParseResult parsed = parse_config_proto(read_file(example_path()), false);
  ASSERT_TRUE(parsed.errors.empty());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(parsed.message, &json).ok());
  EXPECT_NE(json.find("\"l2AgingS\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"FAULT_DIRECTION_RX\""), std::string::npos) << json;
  const LoadResult from_json = parse_config(json, true);
  ASSERT_TRUE(from_json.config) << errors_text(from_json);
  EXPECT_EQ(dump(*from_json.config), dump(*load_config_file(example_path()).config));
}

// ---- defaults and mapping --------------------------------------------------------------------

TEST(IncdConfig, AbsentFieldsTakeTheDocumentedDefaults) {
  const LoadResult r = parse_config("ports: [{name: p0, device: net_null0}]", false);
  ASSERT_TRUE(r.config) << errors_text(r);
  EXPECT_EQ(dump(*r.config),
            "eal 0-1 0 256 [] warning\n"
            "workers 1 burst 32\n"
            "port p0 net_null0 1500 1024 1024\n"
            "switch 300 4096 0 udp 0-65535\n"
            "metrics [127.0.0.1:9464] 2000\n"
            "log info []\n");
}

TEST(IncdConfig, ExplicitValuesOverrideDefaults) {
  const LoadResult r = parse_config(R"(
eal: { lcores: "0-3", hugepages: true, memory_mb: 1024, file_prefix: lab1, log_level: debug,
       extra_args: ["--vdev=net_null9", "-n", "4"] }
workers: 3
burst: 64
ports: [{name: p0, device: "0000:3b:00.0", mtu: 9000, rx_descriptors: 4096, tx_descriptors: 512}]
switch: { l2_aging_s: 0, l2_table_size: 65536, bad_icrc: drop, udp_source_ports: "49152-65535" }
faults: [{port: p0, direction: tx, drop: 0.5, duplicate: 0.25, reorder: 1, delay_us: 100,
          seed: 0xffffffffffffffff}]
metrics: { listen: "", stall_after_ms: 50 }
log: { level: critical, file: /var/log/incd.log }
)",
                                    false);
  ASSERT_TRUE(r.config) << errors_text(r);
  EXPECT_EQ(dump(*r.config),
            "eal 0-3 1 1024 [lab1] debug arg=--vdev=net_null9 arg=-n arg=4\n"
            "workers 3 burst 64\n"
            "port p0 0000:3b:00.0 9000 4096 512\n"
            "switch 0 65536 1 udp 49152-65535\n"
            "fault 0 1 0.5 0.25 1 100 18446744073709551615\n"
            "metrics [] 50\n"
            "log critical [/var/log/incd.log]\n");
}

// A leaf switch (ranks 0 and 1 below it, a parent above) and the spine above it (two switch
// children, one covering the leaf's ranks). Explicit local MACs are kept.
TEST(IncdConfig, LeafWithParentAndSpineWithSwitchChildrenMapToChildAndParentLinks) {
  const LoadResult leaf = parse_config(R"(
ports: [{name: r0, device: d0}, {name: r1, device: d1}, {name: up, device: d2}]
switch: { inc_addresses: [{ipv4: 10.77.0.254, mac: "02:ec:00:00:00:fe"}] }
groups:
  - id: 9
    ranks: 4
    children:
      - { port: r1, rank: 1, remote: {mac: "02:00:00:00:00:02", ipv4: 10.77.0.2, qpn: 0x11},
          local: {ipv4: 10.77.0.254, qpn: 0x1001} }
      - { port: r0, rank: 0, remote: {mac: "02:00:00:00:00:01", ipv4: 10.77.0.1, qpn: 0x11},
          local: {ipv4: 10.77.0.254, qpn: 0x1000, mac: "02:ec:00:00:00:aa"} }
    parent:
      port: up
      remote: { mac: "02:ec:00:00:01:fe", ipv4: 10.77.1.254, qpn: 0x1000 }
      local: { ipv4: 10.77.0.254, qpn: 0x2000 }
)",
                                       false);
  ASSERT_TRUE(leaf.config) << errors_text(leaf);
  EXPECT_EQ(dump(*leaf.config).substr(dump(*leaf.config).find("group")),
            "group 9 4 0 16 1024 mode 2 1000\n"
            "  child 1 1 1+1 02:00:00:00:00:02/10.77.0.2/17 02:ec:00:00:00:fe/10.77.0.254/4097 "
            "49152\n"
            "  child 0 1 0+1 02:00:00:00:00:01/10.77.0.1/17 02:ec:00:00:00:aa/10.77.0.254/4096 "
            "49152\n"
            "  parent 2 02:ec:00:00:01:fe/10.77.1.254/4096 02:ec:00:00:00:fe/10.77.0.254/8192\n"
            "metrics [127.0.0.1:9464] 2000\n"
            "log info []\n");

  const LoadResult spine = parse_config(R"(
ports: [{name: leaf0, device: d0}, {name: leaf1, device: d1}]
switch: { inc_addresses: [{ipv4: 10.77.1.254, mac: "02:ec:00:00:01:fe"}] }
groups:
  - id: 9
    ranks: 4
    children:
      - port: leaf0
        rank_range: { first: 0, count: 2 }
        remote: { mac: "02:ec:00:00:00:fe", ipv4: 10.77.0.254, qpn: 0x2000 }
        local: { ipv4: 10.77.1.254, qpn: 0x1000 }
      - port: leaf1
        rank_range: { first: 2, count: 2 }
        remote: { mac: "02:ec:00:00:02:fe", ipv4: 10.77.2.254, qpn: 0x2000 }
        local: { ipv4: 10.77.1.254, qpn: 0x1001 }
)",
                                        false);
  ASSERT_TRUE(spine.config) << errors_text(spine);
  const engine::GroupConfig& g = spine.config->groups.at(0);
  ASSERT_EQ(g.children.size(), 2u);
  EXPECT_FALSE(g.children[0].is_rank);
  EXPECT_EQ(g.children[0].first_rank, 0);
  EXPECT_EQ(g.children[0].rank_count, 2);
  EXPECT_EQ(g.children[1].port, 1);
  EXPECT_FALSE(g.children[1].is_rank);
  EXPECT_EQ(g.children[1].first_rank, 2);
  EXPECT_EQ(g.children[1].rank_count, 2);
  EXPECT_EQ(g.children[1].remote.ipv4, 0x0a4d02feu);
  EXPECT_FALSE(g.parent);
}

// YAML 1.2 integers: decimal, 0x hex, 0o octal; leading zeros are decimal. Quoted numbers are
// accepted for integer fields (protobuf JSON writes 64-bit integers as strings).
TEST(IncdConfig, IntegersAcceptHexOctalAndQuotedForms) {
  const LoadResult r = parse_config(R"(
burst: 0o20
ports: [{name: 12, device: d0, mtu: "0x5dc", rx_descriptors: 0100}]
faults: [{port: "12", seed: "42"}]
)",
                                    false);
  ASSERT_TRUE(r.config) << errors_text(r);
  EXPECT_EQ(r.config->burst, 16u);
  EXPECT_EQ(r.config->ports[0].name, "12");  // a plain scalar is a string where one is expected
  EXPECT_EQ(r.config->ports[0].mtu, 1500);
  EXPECT_EQ(r.config->ports[0].rx_descriptors, 100);
  EXPECT_EQ(r.config->faults[0].seed, 42u);
}

TEST(IncdConfig, PmtuPlusNinetyBytesMayEqualThePortMtu) {
  const std::string base = R"(
ports: [{name: p0, device: d0, mtu: MTU}]
switch: { inc_addresses: [{ipv4: 10.0.0.254, mac: "02:ec:00:00:00:fe"}] }
groups: [{id: 1, ranks: 1, pmtu: 1024, children: [{port: p0, rank: 0,
  remote: {mac: "02:00:00:00:00:01", ipv4: 10.0.0.1, qpn: 1}, local: {ipv4: 10.0.0.254, qpn: 1}}]}]
)";
  auto with_mtu = [&](const char* mtu) {
    std::string s = base;
    s.replace(s.find("MTU"), 3, mtu);
    return parse_config(s, false);
  };
  EXPECT_TRUE(with_mtu("1114").config) << errors_text(with_mtu("1114"));
  const LoadResult r = with_mtu("1113");
  ASSERT_EQ(r.errors.size(), 1u) << errors_text(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "groups[0].pmtu: 1024 + 90 bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, "
            "RETH/ImmDt, ICRC, with margin) exceeds mtu 1113 of port \"p0\" (ports[0])");
}

TEST(IncdConfig, SixtyFourChildrenAreAllowedAndSixtyFiveAreNot) {
  auto group_of = [](int children) {
    std::string s =
        "ports: [{name: p0, device: d0}]\n"
        "switch: {inc_addresses: [{ipv4: 10.0.0.254, mac: \"02:ec:00:00:00:fe\"}]}\n"
        "groups: [{id: 1, ranks: " +
        std::to_string(children) + ", children: [\n";
    for (int i = 0; i < children; ++i) {
      s += "  {port: p0, rank: " + std::to_string(i) +
           ", remote: {mac: \"02:00:00:00:00:01\", ipv4: 10.0.1." + std::to_string(i + 1) +
           ", qpn: 17}, local: {ipv4: 10.0.0.254, qpn: " + std::to_string(100 + i) + "}},\n";
    }
    return parse_config(s + "]}]\n", false);
  };
  const LoadResult ok = group_of(64);
  ASSERT_TRUE(ok.config) << errors_text(ok);
  EXPECT_EQ(ok.config->groups[0].children.size(), 64u);
  const LoadResult bad = group_of(65);
  ASSERT_EQ(bad.errors.size(), 1u) << errors_text(bad);
  EXPECT_EQ(bad.errors[0].to_string(),
            "groups[0].children: a group has 1..64 children at a switch, got 65");
}

// ---- errors ----------------------------------------------------------------------------------

TEST(IncdConfig, EveryErrorIsReportedNotJustTheFirst) {
  const LoadResult r = parse_config(R"(
workers: 0
ports: [{name: p0, device: d0, mtu: 20}, {name: p0, device: d1}]
log: { level: loud, file: x }
metrics: { listen: nowhere }
)",
                                    false);
  EXPECT_FALSE(r.config);
  std::vector<std::string> got;
  for (const auto& e : r.errors) got.push_back(e.to_string());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "log.level: \"loud\" is not one of trace|debug|info|warn|error|critical|off",
                     "workers: must be >= 1",
                     "ports[0].mtu: 20 is outside 68..9600",
                     "ports[1].name: \"p0\" is already the name of ports[0]",
                     std::string("metrics.listen: \"nowhere\" is not host:port (e.g. "
                                 "127.0.0.1:9464, [::1]:9464); \"\" disables metrics"),
                 }));
}

TEST(IncdConfig, UnreadableFileIsOneErrorNamingTheFileAndTheReason) {
  const LoadResult r = load_config_file("/nonexistent/incd.yaml");
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "");
  EXPECT_EQ(r.errors[0].to_string(),
            "cannot open config file \"/nonexistent/incd.yaml\": No such file or directory");
}

TEST(IncdConfig, UnknownExtensionIsRejected) {
  const LoadResult r = load_config_file(example_path() + ".txt");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "");
  EXPECT_NE(r.errors[0].message.find("must end in .yaml, .yml or .json"), std::string::npos);
}

TEST(IncdConfig, ErrorToStringIsPathColonMessage) {
  EXPECT_EQ((ConfigError{"groups[0].window", "bad"}).to_string(), "groups[0].window: bad");
  EXPECT_EQ((ConfigError{"", "bad file"}).to_string(), "bad file");
}

// The base of the table below: a valid two-rank group on two ports. Each case edits it.
constexpr char kBase[] = R"(ports:
  - name: p0
    device: net_null0
  - name: p1
    device: net_null1
switch:
  inc_addresses:
    - { ipv4: 10.0.0.254, mac: "02:ec:00:00:00:fe" }
faults:
  - { port: p0, drop: 0.1 }
groups:
  - id: 7
    ranks: 2
    children:
      - port: p0
        rank: 0
        remote: { mac: "02:00:00:00:00:01", ipv4: 10.0.0.1, qpn: 0x11 }
        local: { ipv4: 10.0.0.254, qpn: 0x100 }
      - port: p1
        rank: 1
        remote: { mac: "02:00:00:00:00:02", ipv4: 10.0.0.2, qpn: 0x11 }
        local: { ipv4: 10.0.0.254, qpn: 0x101 }
)";

constexpr char kSecondGroup[] = R"(  - id: 8
    ranks: 1
    children:
      - port: p0
        rank: 0
        remote: { mac: "02:00:00:00:00:03", ipv4: 10.0.0.3, qpn: 0x11 }
        local: { ipv4: 10.0.0.254, qpn: 0x200 }
)";

TEST(IncdConfig, ModeIIAndModeIIIGroupsLoadSideBySide) {
  // The short name of GROUP_MODE_3 is its number; the full name is taken too, and JSON's number.
  for (const char* mode : {"3", "GROUP_MODE_3", "\"3\""}) {
    std::string text = std::string(kBase) + kSecondGroup;
    text.replace(
        text.find("  - id: 8\n    ranks: 1\n"), 22,
        std::string("  - id: 8\n    ranks: 1\n    mode: ") + mode + "\n    hop_timeout_us: 40\n");
    const LoadResult r = parse_config(text, false);
    ASSERT_TRUE(r.config) << mode << "\n" << errors_text(r);
    ASSERT_EQ(r.config->groups.size(), 2u);
    EXPECT_EQ(r.config->groups[0].mode, vocab::GroupMode::kMode2);
    EXPECT_EQ(r.config->groups[0].hop_timeout_us, vocab::kDefaultHopTimeoutUs);
    EXPECT_EQ(r.config->groups[1].mode, vocab::GroupMode::kMode3) << mode;
    EXPECT_EQ(r.config->groups[1].hop_timeout_us, 40u);
  }
  const LoadResult json = parse_config(
      R"({"ports": [{"name": "p0", "device": "d"}],
          "switch": {"inc_addresses": [{"ipv4": "10.0.0.254", "mac": "02:ec:00:00:00:fe"}]},
          "groups": [{"id": 1, "ranks": 1, "mode": 3, "children": [{"port": "p0", "rank": 0,
            "remote": {"mac": "02:00:00:00:00:01", "ipv4": "10.0.0.1", "qpn": 1},
            "local": {"ipv4": "10.0.0.254", "qpn": 1}}]}]})",
      true);
  ASSERT_TRUE(json.config) << errors_text(json);
  EXPECT_EQ(json.config->groups[0].mode, vocab::GroupMode::kMode3);
  EXPECT_EQ(json.config->groups[0].hop_timeout_us, vocab::kDefaultHopTimeoutUs);
}

// A static group's arithmetic: accumulator and dtype by their short names (YAML and JSON); an
// unknown name is refused with the choices, an exact group without a dtype by path.
TEST(IncdConfig, AStaticGroupNamesItsAccumulatorProfileAndDtype) {
  std::string text = std::string(kBase) + kSecondGroup;
  text.replace(text.find("  - id: 8\n    ranks: 1\n"), 22,
               "  - id: 8\n    ranks: 1\n    accumulator: kulisch_fixed\n    dtype: fp8_e5m2\n");
  const LoadResult r = parse_config(text, false);
  ASSERT_TRUE(r.config) << errors_text(r);
  EXPECT_EQ(r.config->groups[0].arith, vocab::GroupArith{});
  EXPECT_EQ(r.config->groups[1].arith.profile, vocab::AccumProfile::kKulischFixed);
  EXPECT_EQ(r.config->groups[1].arith.dtype, vocab::DType::kFp8E5M2);
  const LoadResult json = parse_config(
      R"({"ports": [{"name": "p0", "device": "d"}],
          "switch": {"inc_addresses": [{"ipv4": "10.0.0.254", "mac": "02:ec:00:00:00:fe"}]},
          "groups": [{"id": 1, "ranks": 1, "accumulator": "kulisch_fixed", "dtype": "fp32",
            "children": [{"port": "p0", "rank": 0,
            "remote": {"mac": "02:00:00:00:00:01", "ipv4": "10.0.0.1", "qpn": 1},
            "local": {"ipv4": "10.0.0.254", "qpn": 1}}]}]})",
      true);
  ASSERT_TRUE(json.config) << errors_text(json);
  EXPECT_EQ(json.config->groups[0].arith.dtype, vocab::DType::kFp32);
  std::string bad = std::string(kBase) + kSecondGroup;
  bad.replace(bad.find("  - id: 8\n    ranks: 1\n"), 22,
              "  - id: 8\n    ranks: 1\n    accumulator: exact\n");
  const LoadResult refused = parse_config(bad, false);
  EXPECT_FALSE(refused.config);
  EXPECT_NE(errors_text(refused).find("\"exact\" is not one of kulisch_fixed|fp32_arrival"),
            std::string::npos)
      << errors_text(refused);
  std::string nodtype = std::string(kBase) + kSecondGroup;
  nodtype.replace(nodtype.find("  - id: 8\n    ranks: 1\n"), 22,
                  "  - id: 8\n    ranks: 1\n    accumulator: kulisch_fixed\n");
  const LoadResult missing = parse_config(nodtype, false);
  EXPECT_FALSE(missing.config);
  EXPECT_NE(errors_text(missing).find("groups[1].dtype: required with accumulator kulisch_fixed"),
            std::string::npos)
      << errors_text(missing);
}

TEST(IncdConfig, TrafficClassesAndPortRatesMakeEachPortsEgress) {
  std::string text = kBase;
  text.replace(text.find("switch:"), 7,
               "traffic_classes:\n"
               "  - {name: collectives, dscp: [46, 48], priority: 0, max_rate_mbps: 500}\n"
               "  - {name: bulk, priority: 1, weight: 3, queue_kb: 1024, ecn_threshold_kb: 100}\n"
               "  - {name: scavenger, dscp: [8], priority: 1}\n"
               "switch:");
  text.replace(text.find("    device: net_null0\n"), 22,
               "    device: net_null0\n    rate_mbps: 1000\n");
  const LoadResult r = parse_config(text, false);
  ASSERT_TRUE(r.config) << errors_text(r);
  const IncdConfig& c = *r.config;
  ASSERT_EQ(c.traffic_classes.size(), 3u);
  EXPECT_EQ(c.ports[0].rate_mbps, 1000u);
  const switching::EgressSpec e0 = egress_spec(c, 0);
  ASSERT_TRUE(e0.enabled());
  EXPECT_EQ(e0.port_rate_bps, 1'000'000'000u);
  ASSERT_EQ(e0.classes.size(), 3u);
  EXPECT_EQ(e0.class_of_dscp[46], 0);
  EXPECT_EQ(e0.class_of_dscp[48], 0);
  EXPECT_EQ(e0.class_of_dscp[8], 2);
  EXPECT_EQ(e0.class_of_dscp[0], 1);  // the class that lists none takes the rest
  EXPECT_EQ(e0.class_of_dscp[63], 1);
  EXPECT_EQ(e0.classes[0].max_rate_bps, 500'000'000u);
  EXPECT_EQ(e0.classes[1].priority, 1u);
  EXPECT_EQ(e0.classes[1].weight, 3u);
  EXPECT_EQ(e0.classes[1].queue_bytes, 1024u * 1024);
  EXPECT_EQ(e0.classes[1].ecn_threshold_bytes, 100u * 1024);
  EXPECT_EQ(e0.classes[2].queue_bytes, 512u * 1024);  // the default
  EXPECT_EQ(egress_spec(c, 1).port_rate_bps, 0u);     // classes without a rate still order

  // No classes: a port with a rate gets one FIFO of every DSCP, a port without none at all.
  const LoadResult plain =
      parse_config(std::string(kBase).replace(std::string(kBase).find("    device: net_null0\n"),
                                              22, "    device: net_null0\n    rate_mbps: 10\n"),
                   false);
  ASSERT_TRUE(plain.config) << errors_text(plain);
  const switching::EgressSpec one = egress_spec(*plain.config, 0);
  ASSERT_EQ(one.classes.size(), 1u);
  EXPECT_EQ(one.port_rate_bps, 10'000'000u);
  EXPECT_FALSE(egress_spec(*plain.config, 1).enabled());
}

TEST(IncdConfig, TheBaseOfTheErrorTableIsValid) {
  const LoadResult r = parse_config(kBase, false);
  EXPECT_TRUE(r.config) << errors_text(r);
  const LoadResult two = parse_config(std::string(kBase) + kSecondGroup, false);
  EXPECT_TRUE(two.config) << errors_text(two);
}

struct BadCase {
  const char* name;
  const char* from;  // replaced in kBase (+ kSecondGroup when `two_groups`); "" = whole text
  const char* to;
  const char* path;     // of the expected error
  const char* message;  // a substring of its message
  size_t errors = 1;    // errors in all
  bool json = false;
  bool two_groups = false;
};

// gtest prints a case by its name; gtest fixes the function's name.
// NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class IncdConfigRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(IncdConfigRejects, WithAnErrorNamingTheField) {
  const BadCase& c = GetParam();
  std::string text;
  if (*c.from == '\0') {
    text = c.to;
  } else {
    text = kBase;
    if (c.two_groups) text += kSecondGroup;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << "case edits text that is not in the base: " << c.from;
    text.replace(at, std::strlen(c.from), c.to);
  }
  const LoadResult r = parse_config(text, c.json);
  EXPECT_FALSE(r.config);
  EXPECT_EQ(r.errors.size(), c.errors) << errors_text(r);
  bool found = false;
  for (const ConfigError& e : r.errors) {
    found |= e.path == c.path && e.message.find(c.message) != std::string::npos;
  }
  EXPECT_TRUE(found) << "want " << c.path << ": …" << c.message << "…\ngot:\n" << errors_text(r);
}

constexpr BadCase kBadCases[] = {
    // reading: syntax, unknown keys, types
    {"YamlSyntax", "", "ports: [p0", "", "YAML syntax error at line"},
    {"JsonSyntax", "", "{\"ports\": [}", "", "JSON syntax error: parse error at line 1", 1, true},
    {"TopLevelNotAMapping", "", "- a\n- b\n", "", "must be a mapping at the top level"},
    {"JsonTopLevelArray", "", "[1]", "", "must be a mapping at the top level", 1, true},
    {"MisspelledGroupKey", "    ranks: 2\n", "    ranks: 2\n    windw: 16\n", "groups[0].windw",
     R"(unknown field "windw" (did you mean "window"?))"},
    {"UnknownTopLevelKey", "switch:", "foo: 1\nswitch:", "foo",
     "unknown field \"foo\"; known fields: eal, workers, burst, ports, switch"},
    {"JsonUnknownKeyHasPath", "", R"({"ports": [{"name": "p0", "device": "d", "mtuu": 1500}]})",
     "ports[0].mtuu", R"(unknown field "mtuu" (did you mean "mtu"?))", 1, true},
    {"DuplicateKey", "    ranks: 2\n", "    ranks: 2\n    ranks: 3\n", "groups[0].ranks",
     "duplicate key"},
    {"QuotedBool", "switch:", "eal: {hugepages: \"true\"}\nswitch:", "eal.hugepages",
     "expected true or false (unquoted), got \"true\""},
    {"JsonStringForBool", "", R"({"eal": {"hugepages": "yes"}})", "eal.hugepages",
     "expected true or false", 2, true},
    {"NotANumber", "qpn: 0x100", "qpn: abc", "groups[0].children[0].local.qpn",
     "expected an unsigned integer (decimal or 0x hex), got \"abc\""},
    {"NegativeUnsigned", "    device: net_null0\n", "    device: net_null0\n    mtu: -1\n",
     "ports[0].mtu", "expected an unsigned integer"},
    {"IntegerOutOfRange", "switch:", "eal: {memory_mb: 4294967296}\nswitch:", "eal.memory_mb",
     "4294967296 is out of range (at most 4294967295)"},
    {"ScalarWhereListExpected", "switch:", "eal: {extra_args: --x}\nswitch:", "eal.extra_args",
     "expected a list, got a scalar"},
    {"ListWhereScalarExpected", "    device: net_null0\n", "    device: net_null0\n    mtu: [1]\n",
     "ports[0].mtu", "expected an unsigned integer, got a list"},
    {"ScalarWhereMappingExpected", "switch:", "eal: fast\nswitch:", "eal",
     "expected a mapping, got a scalar"},
    {"NotANumberForProbability", "drop: 0.1", "drop: lots", "faults[0].drop",
     "expected a number, got \"lots\""},
    // eal, workers, burst
    {"EmptyLcores", "switch:", "eal: {lcores: \"\"}\nswitch:", "eal.lcores", "must not be empty"},
    {"BadDpdkLogLevel", "switch:", "eal: {log_level: loud}\nswitch:", "eal.log_level",
     "\"loud\" is not one of emergency|alert|critical|error|warning|notice|info|debug"},
    {"FilePrefixWithSlash", "switch:", "eal: {file_prefix: a/b}\nswitch:", "eal.file_prefix",
     "must not contain '/'"},
    {"ZeroWorkers", "switch:", "workers: 0\nswitch:", "workers", "must be >= 1"},
    {"MoreWorkersThanLcores", "switch:", "workers: 2\nswitch:", "workers",
     "2 workers need 3 lcores (the main lcore plus one per worker), but eal.lcores \"0-1\" has 2"},
    {"ZeroBurst", "switch:", "burst: 0\nswitch:", "burst", "0 is outside 1..512"},
    {"BurstTooLarge", "switch:", "burst: 513\nswitch:", "burst", "513 is outside 1..512"},
    // ports
    {"NoPorts", "", "{}", "ports", "at least one port is required"},
    {"EmptyFileHasNoPorts", "", "", "ports", "at least one port is required"},
    {"DuplicatePortName", "    device: net_null1\n",
     "    device: net_null1\n  - name: p0\n    device: net_null2\n", "ports[2].name",
     "\"p0\" is already the name of ports[0]"},
    {"MissingPortName", "    device: net_null1\n", "    device: net_null1\n  - device: d2\n",
     "ports[2].name", "required"},
    {"EmptyDevice", "device: net_null1", "device: \"\"", "ports[1].device", "required"},
    {"DuplicateDevice", "device: net_null1", "device: net_null0", "ports[1].device",
     "\"net_null0\" is already the device of ports[0]"},
    {"MtuTooSmall", "    device: net_null0\n", "    device: net_null0\n    mtu: 67\n",
     "ports[0].mtu", "67 is outside 68..9600"},
    {"MtuTooLarge", "    device: net_null0\n", "    device: net_null0\n    mtu: 9601\n",
     "ports[0].mtu", "9601 is outside 68..9600"},
    {"ZeroDescriptors", "    device: net_null0\n", "    device: net_null0\n    rx_descriptors: 0\n",
     "ports[0].rx_descriptors", "0 is outside 1..32768"},
    {"PortRateTooHigh", "    device: net_null0\n", "    device: net_null0\n    rate_mbps: 400001\n",
     "ports[0].rate_mbps", "400001 is above 400000"},
    // traffic classes
    {"TrafficClassBadName", "switch:", "traffic_classes: [{name: Bulk}]\nswitch:",
     "traffic_classes[0].name", "\"Bulk\" is not a class name ([a-z0-9_-], 1..32 characters)"},
    {"TrafficClassNameTwice",
     "switch:", "traffic_classes: [{name: a, dscp: [1]}, {name: a, dscp: [2]}]\nswitch:",
     "traffic_classes[1].name", "\"a\" is already the name of traffic_classes[0]"},
    {"DscpInTwoClasses",
     "switch:", "traffic_classes: [{name: a, dscp: [46]}, {name: b, dscp: [0, 46]}]\nswitch:",
     "traffic_classes[1].dscp", "DSCP 46 is already in traffic_classes[0]"},
    {"DscpAbove63", "switch:", "traffic_classes: [{name: a, dscp: [64]}]\nswitch:",
     "traffic_classes[0].dscp", "64 is not a DSCP (0..63"},
    {"TwoClassesTakeTheRest", "switch:", "traffic_classes: [{name: a}, {name: b}]\nswitch:",
     "traffic_classes[1].dscp", "only one class may take the unlisted DSCPs"},
    {"PriorityLevelTooHigh", "switch:", "traffic_classes: [{name: a, priority: 8}]\nswitch:",
     "traffic_classes[0].priority", "8 is outside 0..7"},
    {"ZeroWeight", "switch:", "traffic_classes: [{name: a, weight: 0}]\nswitch:",
     "traffic_classes[0].weight", "0 is outside 1..1000"},
    {"MarkingDepthNotBelowTheQueue",
     "switch:", "traffic_classes: [{name: a, queue_kb: 64, ecn_threshold_kb: 64}]\nswitch:",
     "traffic_classes[0].ecn_threshold_kb", "64 is not below queue_kb 64"},
    {"NineClasses", "switch:",
     "traffic_classes: [{name: a}, {name: b, dscp: [1]}, {name: c, dscp: [2]}, {name: d, dscp: "
     "[3]},"
     " {name: e, dscp: [4]}, {name: f, dscp: [5]}, {name: g, dscp: [6]}, {name: h, dscp: [7]},"
     " {name: i, dscp: [8]}]\nswitch:",
     "traffic_classes", "9 classes; at most 8"},
    // switch
    {"IncAddressBadIpv4", "ipv4: 10.0.0.254, mac", "ipv4: 10.0.0.300, mac",
     "switch.inc_addresses[0].ipv4", "\"10.0.0.300\" is not an IPv4 address", 3},
    {"IncAddressMulticastIpv4", "ipv4: 10.0.0.254, mac", "ipv4: 224.0.0.1, mac",
     "switch.inc_addresses[0].ipv4", "\"224.0.0.1\" is not a unicast host address", 3},
    {"IncAddressBadMac", "mac: \"02:ec:00:00:00:fe\"", "mac: \"02:ec:00:00:fe\"",
     "switch.inc_addresses[0].mac", "is not a MAC address (six hex bytes"},
    {"IncAddressMulticastMac", "mac: \"02:ec:00:00:00:fe\"", "mac: \"03:ec:00:00:00:fe\"",
     "switch.inc_addresses[0].mac", "is a multicast MAC (the low bit of the first byte is set)"},
    {"DuplicateIncAddress", "    - { ipv4: 10.0.0.254, mac: \"02:ec:00:00:00:fe\" }\n",
     "    - { ipv4: 10.0.0.254, mac: \"02:ec:00:00:00:fe\" }\n"
     "    - { ipv4: 10.0.0.254, mac: \"02:ec:00:00:00:fd\" }\n",
     "switch.inc_addresses[1].ipv4", "\"10.0.0.254\" is already switch.inc_addresses[0].ipv4"},
    {"BadIcrcAction", "  inc_addresses:", "  bad_icrc: maybe\n  inc_addresses:", "switch.bad_icrc",
     "\"maybe\" is not one of pass|drop"},
    {"ZeroL2TableSize", "  inc_addresses:", "  l2_table_size: 0\n  inc_addresses:",
     "switch.l2_table_size", "must be >= 1"},
    {"UdpSourcePortsNotARange", "  inc_addresses:",
     "  udp_source_ports: \"49152\"\n  inc_addresses:", "switch.udp_source_ports",
     "\"49152\": must be \"FIRST-LAST\" (decimal UDP ports, e.g. \"49152-65535\") or \"any\""},
    {"UdpSourcePortAbove65535", "  inc_addresses:",
     "  udp_source_ports: \"49152-65536\"\n  inc_addresses:", "switch.udp_source_ports",
     "\"49152-65536\": a UDP port is at most 65535"},
    {"UdpSourcePortsReversed", "  inc_addresses:",
     "  udp_source_ports: \"65535-49152\"\n  inc_addresses:", "switch.udp_source_ports",
     "\"65535-49152\": FIRST 65535 is above LAST 49152"},
    {"UdpSourcePortsNegative", "  inc_addresses:",
     "  udp_source_ports: \"-1-100\"\n  inc_addresses:", "switch.udp_source_ports",
     "must be \"FIRST-LAST\""},
    // faults
    {"FaultUnknownPort", "{ port: p0, drop", "{ port: p9, drop", "faults[0].port",
     "no port named \"p9\" (ports: p0, p1)"},
    {"FaultProbabilityAboveOne", "drop: 0.1", "drop: 1.5", "faults[0].drop",
     "probability 1.5 is outside [0, 1]"},
    {"FaultProbabilityNegative", "drop: 0.1", "drop: 0.1, reorder: -0.5", "faults[0].reorder",
     "outside [0, 1]"},
    {"FaultMarkCeAboveOne", "drop: 0.1", "drop: 0.1, mark_ce: 2", "faults[0].mark_ce",
     "probability 2 is outside [0, 1]"},
    {"FaultDirection", "drop: 0.1", "drop: 0.1, direction: sideways", "faults[0].direction",
     "\"sideways\" is not one of rx|tx"},
    {"TwoFaultsOnOnePortAndDirection", "  - { port: p0, drop: 0.1 }\n",
     "  - { port: p0, drop: 0.1 }\n  - { port: p0, direction: rx, reorder: 0.1 }\n", "faults[1]",
     "port \"p0\" already has a fault in direction rx (faults[0])"},
    // groups
    {"GroupIdRequired", "  - id: 7\n    ranks: 2\n", "  - ranks: 2\n", "groups[0].id", "required"},
    {"DuplicateGroupId", "  - id: 8\n", "  - id: 7\n", "groups[1].id",
     "group id 7 is already used by groups[0]", 1, false, true},
    {"ZeroRanks", "ranks: 2", "ranks: 0", "groups[0].ranks", "0 is outside 1..65535"},
    {"RanksRequired", "    ranks: 2\n", "", "groups[0].ranks", "required"},
    {"WindowNotPowerOfTwo", "    ranks: 2\n", "    ranks: 2\n    window: 24\n", "groups[0].window",
     "24 is not a power of two in 1..1048576"},
    {"WindowZero", "    ranks: 2\n", "    ranks: 2\n    window: 0\n", "groups[0].window",
     "0 is not a power of two"},
    {"WindowTooLarge", "    ranks: 2\n", "    ranks: 2\n    window: 2097152\n", "groups[0].window",
     "2097152 is not a power of two in 1..1048576"},
    {"PmtuNotAnIbMtu", "    ranks: 2\n", "    ranks: 2\n    pmtu: 1500\n", "groups[0].pmtu",
     "1500 is not one of 256, 512, 1024, 2048, 4096"},
    {"PmtuTooLargeForAPort", "    device: net_null1\n", "    device: net_null1\n    mtu: 1000\n",
     "groups[0].pmtu",
     "1024 + 90 bytes of RoCEv2 overhead (Ethernet, IPv4, UDP, BTH, RETH/ImmDt, ICRC, with "
     "margin) exceeds mtu 1000 of port \"p1\" (ports[1])"},
    {"ModeNotTwoOrThree", "    ranks: 2\n", "    ranks: 2\n    mode: 1\n", "groups[0].mode",
     "\"1\" is not one of 2|3"},
    {"HopTimeoutBelowLimit", "    ranks: 2\n", "    ranks: 2\n    mode: 3\n    hop_timeout_us: 9\n",
     "groups[0].hop_timeout_us", "9 us is outside 10..1000000 us (Mode-III's per-hop ACK timeout)"},
    {"HopTimeoutOnAModeIIGroup", "    ranks: 2\n", "    ranks: 2\n    hop_timeout_us: 100\n",
     "groups[0].hop_timeout_us", "set, but the group is Mode-II, which keeps no per-hop timer"},
    {"InitialPsnBeyond24Bits", "    ranks: 2\n", "    ranks: 2\n    initial_psn: 0x1000000\n",
     "groups[0].initial_psn", "0x1000000 does not fit in 24 bits"},
    {"NoChildren", "", "ports: [{name: p0, device: d}]\ngroups: [{id: 1, ranks: 1, children: []}]",
     "groups[0].children", "a group has 1..64 children at a switch, got 0"},
    {"ChildWithoutRankOrRange", "        rank: 1\n", "", "groups[0].children[1]",
     "set exactly one of rank (a rank NIC) or rank_range (a lower switch)", 2},
    {"ChildWithRankAndRange", "        rank: 1\n",
     "        rank: 1\n        rank_range: { first: 1, count: 1 }\n",
     "groups[0].children[1].rank_range",
     "conflicts with rank: set exactly one of rank or rank_range"},
    {"RankOutsideGroup", "        rank: 1\n", "        rank: 2\n", "groups[0].children[1].rank",
     "rank 2 is outside [0, 2) (the group has 2 ranks)", 2},
    {"RankCoveredTwice", "        rank: 1\n", "        rank: 0\n", "groups[0].children[1].rank",
     "rank 0 is already covered by groups[0].children[0]", 2},
    {"RankRangeOverlaps", "        rank: 1\n", "        rank_range: { first: 0, count: 2 }\n",
     "groups[0].children[1].rank_range", "rank 0 is already covered by groups[0].children[0]"},
    {"RankRangeOutsideGroup", "        rank: 1\n", "        rank_range: { first: 1, count: 3 }\n",
     "groups[0].children[1].rank_range", "ranks [1, 4) are outside [0, 2)", 2},
    {"RankRangeZeroCount", "        rank: 1\n", "        rank_range: { first: 1, count: 0 }\n",
     "groups[0].children[1].rank_range.count", "must be >= 1", 2},
    {"RootDoesNotCoverAllRanks", "ranks: 2", "ranks: 4", "groups[0].children",
     "ranks 2, 3 are not covered by any child; at the root switch (no parent) the children must "
     "cover all 4 ranks"},
    {"ChildUnknownPort", "      - port: p1\n", "      - port: up\n", "groups[0].children[1].port",
     "no port named \"up\" (ports: p0, p1)"},
    {"ChildPortRequired", "      - port: p1\n        rank: 1\n", "      - rank: 1\n",
     "groups[0].children[1].port", "required"},
    {"RemoteRequired",
     "        remote: { mac: \"02:00:00:00:00:02\", ipv4: 10.0.0.2, qpn: 0x11 }\n", "",
     "groups[0].children[1].remote", "required (mac, ipv4, qpn)"},
    {"RemoteMacRequired", "mac: \"02:00:00:00:00:02\", ", "", "groups[0].children[1].remote.mac",
     "required"},
    {"RemoteMulticastMac", "mac: \"02:00:00:00:00:02\"", "mac: \"ff:ff:ff:ff:ff:ff\"",
     "groups[0].children[1].remote.mac", "is a multicast MAC"},
    {"RemoteBadIpv4", "ipv4: 10.0.0.2,", "ipv4: 10.0.0,", "groups[0].children[1].remote.ipv4",
     "\"10.0.0\" is not an IPv4 address"},
    {"RemoteIsOurOwnAddress", "ipv4: 10.0.0.2,", "ipv4: 10.0.0.254,",
     "groups[0].children[1].remote.ipv4", "is this switch's own inc address"},
    {"RemoteQpnRequired", "ipv4: 10.0.0.2, qpn: 0x11", "ipv4: 10.0.0.2",
     "groups[0].children[1].remote.qpn", "required"},
    {"RemoteQpnBeyond24Bits", "ipv4: 10.0.0.2, qpn: 0x11", "ipv4: 10.0.0.2, qpn: 0x1000000",
     "groups[0].children[1].remote.qpn", "0x1000000 does not fit in 24 bits"},
    {"RemoteQueuePairUsedTwice", "ipv4: 10.0.0.2, qpn: 0x11", "ipv4: 10.0.0.1, qpn: 0x11",
     "groups[0].children[1].remote",
     "(10.0.0.1, qpn 0x11) is already used by groups[0].children[0].remote"},
    {"LocalNotAnIncAddress", "local: { ipv4: 10.0.0.254, qpn: 0x101 }",
     "local: { ipv4: 10.0.0.253, qpn: 0x101 }", "groups[0].children[1].local.ipv4",
     "\"10.0.0.253\" is not one of switch.inc_addresses (10.0.0.254)"},
    {"LocalBadMac", "local: { ipv4: 10.0.0.254, qpn: 0x101 }",
     "local: { ipv4: 10.0.0.254, qpn: 0x101, mac: bad }", "groups[0].children[1].local.mac",
     "\"bad\" is not a MAC address"},
    {"LocalEndpointUsedTwiceInAGroup", "qpn: 0x101", "qpn: 0x100", "groups[0].children[1].local",
     "(10.0.0.254, qpn 0x100) is already used by groups[0].children[0].local; the switch finds a "
     "group's edge by its local (ipv4, qpn), so each must be unique"},
    {"LocalEndpointUsedTwiceAcrossGroups", "qpn: 0x200", "qpn: 0x101",
     "groups[1].children[0].local", "is already used by groups[0].children[1].local", 1, false,
     true},
    {"ParentUnknownPort", "    ranks: 2\n",
     "    ranks: 2\n    parent: { port: up, remote: { mac: \"02:ec:00:00:01:fe\", ipv4: "
     "10.0.1.254, "
     "qpn: 0x1000 }, local: { ipv4: 10.0.0.254, qpn: 0x2000 } }\n",
     "groups[0].parent.port", "no port named \"up\""},
    {"ParentLocalRequired", "    ranks: 2\n",
     "    ranks: 2\n    parent: { port: p1, remote: { mac: \"02:ec:00:00:01:fe\", ipv4: "
     "10.0.1.254, qpn: 0x1000 } }\n",
     "groups[0].parent.local", "required (ipv4, qpn; mac optional)"},
    {"ParentLocalSharedWithAChild", "    ranks: 2\n",
     "    ranks: 2\n    parent: { port: p1, remote: { mac: \"02:ec:00:00:01:fe\", ipv4: "
     "10.0.1.254, qpn: 0x1000 }, local: { ipv4: 10.0.0.254, qpn: 0x100 } }\n",
     "groups[0].parent.local", "is already used by groups[0].children[0].local"},
    // metrics, log
    {"MetricsListenWithoutPort", "switch:", "metrics: {listen: \"127.0.0.1\"}\nswitch:",
     "metrics.listen", "\"127.0.0.1\" is not host:port"},
    {"MetricsListenPortZero", "switch:", "metrics: {listen: \"127.0.0.1:0\"}\nswitch:",
     "metrics.listen", "is not host:port"},
    {"ZeroStallAfter", "switch:", "metrics: {stall_after_ms: 0}\nswitch:", "metrics.stall_after_ms",
     "must be >= 1"},
    {"LogLevel", "switch:", "log: {level: verbose}\nswitch:", "log.level",
     "\"verbose\" is not one of trace|debug|info|warn|error|critical|off"},
};

INSTANTIATE_TEST_SUITE_P(Table, IncdConfigRejects, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return std::string(info.param.name);
                         });

// A field that fails to parse is reported once: validation does not add "required" for it.
TEST(IncdConfig, AFieldThatFailsToParseIsNotReportedAgainAsMissing) {
  std::string text = kBase;
  text.replace(text.find("rank: 1"), 7, "rank: one");
  const LoadResult r = parse_config(text, false);
  ASSERT_EQ(r.errors.size(), 1u) << errors_text(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "groups[0].children[1].rank: expected an unsigned integer (decimal or 0x hex), got "
            "\"one\"");
}

}  // namespace
}  // namespace epic::incd
