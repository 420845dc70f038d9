#include "manager/core/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "tests/unit/manager/fabric.h"

namespace epic::manager {
namespace {

using testing::hosts_on;
using testing::make_request;
using testing::slots;

const Policy kPolicy{.reclaim_idle_after = Millis{10'000}};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// 1-based number of the first line containing `needle`.
size_t line_with(const std::vector<std::string>& lines, const std::string& needle) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos) return i + 1;
  }
  ADD_FAILURE() << "no line contains " << needle;
  return 0;
}

void replace_in(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Three leaves, two spines, 64 slots per switch; tenant "a" owns a partition on leaf2. Groups:
// "local" reclaimed (idle), "across" installed on spine0, "tenant-a" installed in its partition,
// "lost" broken (spine1 removed).
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::build_fabric(
        m, {.leaves = 3, .spines = 2, .ranks_per_leaf = 4, .leaf_slots = 64, .spine_slots = 64});
    ASSERT_TRUE(m.set_tenant({.name = "a",
                              .quota = {.max_bytes_per_switch = slots(32), .max_groups = 4},
                              .reserved = {{"leaf2", slots(32)}}})
                    .ok());
    local = testing::install(m, make_request("local", {{0, 2}, {0, 3}}, 32, 0x100), Millis{1000});
    across = testing::install(m, make_request("across", hosts_on(2, 2), 8, 0x200), Millis{50'000});
    tenant_a = testing::install(m, make_request("tenant-a", {{2, 2}, {2, 3}}, 8, 0x300, "a"),
                                Millis{50'000});
    lost = testing::install(m, make_request("lost", {{1, 2}, {1, 3}, {2, 0}, {2, 1}}, 8, 0x400),
                            Millis{50'000});
    ASSERT_EQ(m.find_group(local)->state, GroupState::kReclaimed);
    ASSERT_EQ(m.find_group(lost)->tree.root, "spine1");
    ASSERT_TRUE(m.remove_switch("spine1", Millis{60'000}).ok());
    ASSERT_EQ(m.find_group(lost)->state, GroupState::kBroken);
  }
  IncManager m{kPolicy};
  uint32_t local = 0, across = 0, tenant_a = 0, lost = 0;
};

TEST_F(StoreTest, ARestartedManagerRecoversSwitchesGroupsAndGrants) {
  const std::string path = ::testing::TempDir() + "/manager-store-" + std::to_string(::getpid());
  ASSERT_TRUE(save_store(path, m).ok());
  EXPECT_NE(::access(path.c_str(), F_OK), -1);
  EXPECT_EQ(::access((path + ".tmp").c_str(), F_OK), -1);  // renamed, not left behind
  auto loaded = load_store(path, kPolicy, Millis{70'000});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const IncManager& r = loaded.value().manager;
  EXPECT_TRUE(loaded.value().reconcile.actions.empty());
  EXPECT_EQ(r.topology(), m.topology());
  EXPECT_EQ(r.tenants(), m.tenants());
  EXPECT_EQ(r.groups(), m.groups());
  EXPECT_EQ(r.ledger(), m.ledger());
  EXPECT_EQ(r.qpns(), m.qpns());
  EXPECT_EQ(r.next_group_id(), m.next_group_id());
  EXPECT_EQ(encode_store(r), encode_store(m));
  ::unlink(path.c_str());
}

TEST_F(StoreTest, ModesRoundTripAndAStoreWithoutThemHoldsModeIIGroups) {
  GroupRequest r = make_request("mode3", {{0, 0}, {0, 1}}, 8, 0x500);
  r.mode = vocab::GroupMode::kMode3;
  const uint32_t mode3 = testing::install(m, r, Millis{60'000});
  ASSERT_EQ(m.find_group(mode3)->request.mode, vocab::GroupMode::kMode3);
  ASSERT_EQ(m.find_group(mode3)->hop_timeout_us, 42u);  // 4 x 10 us + 2 x 0.66 us (window 8)
  auto loaded = decode_store(encode_store(m), kPolicy, Millis{70'000});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  EXPECT_EQ(loaded.value().manager.groups(), m.groups());
  EXPECT_EQ(loaded.value().manager.find_group(mode3)->request.mode, vocab::GroupMode::kMode3);
  EXPECT_EQ(loaded.value().manager.find_group(mode3)->hop_timeout_us, 42u);

  // A store written before groups had a mode: its groups are Mode-II.
  auto lines = lines_of(encode_store(m));
  const size_t old = line_with(lines, "\"name\":\"across\"");
  replace_in(lines[old - 1], "\"mode\":2,", "");
  replace_in(lines[old - 1], "\"hop_timeout_us\":42,", "");
  auto before = decode_store(join_lines(lines), kPolicy, Millis{70'000});
  ASSERT_TRUE(before.ok()) << before.error().to_string();
  const Group* g = before.value().manager.find_group(across);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->request.mode, vocab::GroupMode::kMode2);
  EXPECT_EQ(g->hop_timeout_us, vocab::kDefaultHopTimeoutUs);
}

TEST_F(StoreTest, APartitionKeyRoundTripsAndABadOneIsRefused) {
  GroupRequest r = make_request("pkey", {{0, 0}, {0, 1}}, 8, 0x500);
  r.pkey = 0x8012;
  const uint32_t id = testing::install(m, r, Millis{60'000});
  auto loaded = decode_store(encode_store(m), kPolicy, Millis{70'000});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  EXPECT_EQ(loaded.value().manager.groups(), m.groups());
  EXPECT_EQ(loaded.value().manager.find_group(id)->request.pkey, 0x8012);
  EXPECT_FALSE(loaded.value().manager.find_group(across)->request.pkey) << "none: unset";
  auto lines = lines_of(encode_store(m));
  const size_t at = line_with(lines, "\"pkey\":32786");
  replace_in(lines[at - 1], "\"pkey\":32786", "\"pkey\":32768");
  auto bad = decode_store(join_lines(lines), kPolicy, Millis{70'000});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("pkey: 32768 is not a P_Key"), std::string::npos)
      << bad.error().message;
}

TEST_F(StoreTest, ATrafficClassAndATenantsDefaultRoundTrip) {
  GroupRequest r = make_request("ef", {{0, 0}, {0, 1}}, 8, 0x600);
  r.dscp = 46;
  const uint32_t id = testing::install(m, r, Millis{60'000});
  ASSERT_TRUE(m.set_tenant(Tenant{.name = "latency", .default_dscp = 34}).ok());
  auto loaded = decode_store(encode_store(m), kPolicy, Millis{70'000});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  EXPECT_EQ(loaded.value().manager.groups(), m.groups());
  EXPECT_EQ(loaded.value().manager.find_group(id)->request.dscp, 46);
  EXPECT_EQ(loaded.value().manager.find_group(across)->request.dscp, 0) << "resolved at join";
  EXPECT_EQ(loaded.value().manager.tenants().at("latency").default_dscp, 34);
}

TEST_F(StoreTest, TheRecoveredManagerCarriesOn) {
  auto loaded = decode_store(encode_store(m), kPolicy, Millis{70'000});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  IncManager& r = loaded.value().manager;
  // The reclaimed group resumes into memory the restored ledger shows free once "across" leaves.
  ASSERT_TRUE(r.teardown(across, Millis{70'000}).ok());
  auto resumed = r.resume(local, Millis{70'000});
  ASSERT_TRUE(resumed.ok()) << resumed.error().to_string();
  // A new group gets a fresh id and QPNs that do not collide with restored ones.
  auto j = r.join(make_request("new", {{1, 0}, {1, 1}}, 8, 0x500), Millis{70'000});
  ASSERT_TRUE(j.ok()) << j.error().to_string();
  EXPECT_EQ(j.value().group_id, m.next_group_id());
}

TEST_F(StoreTest, AnInstallInFlightIsRolledBackOnLoad) {
  IncManager fresh{kPolicy};
  testing::build_fabric(fresh, {.leaves = 2, .spines = 1, .ranks_per_leaf = 2});
  auto j = fresh.join(make_request("g", hosts_on(2, 2)), Millis{0});
  ASSERT_TRUE(fresh.ack(j.value().group_id, "leaf0", Millis{0}).ok());
  auto loaded = decode_store(encode_store(fresh), kPolicy, Millis{5});
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const Effects& fx = loaded.value().reconcile;
  EXPECT_EQ(testing::action_list(fx),
            (std::vector<std::pair<ActionKind, SwitchId>>{{ActionKind::kRemoveContext, "spine0"},
                                                          {ActionKind::kRemoveContext, "leaf0"},
                                                          {ActionKind::kRemoveContext, "leaf1"}}));
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0].kind, GroupEventKind::kFailed);
  EXPECT_EQ(fx.events[0].error->message, "the manager restarted while group 1 was being installed");
  EXPECT_TRUE(loaded.value().manager.groups().empty());
  EXPECT_EQ(loaded.value().manager.ledger().held_total("t"), 0u);
  EXPECT_TRUE(loaded.value().manager.qpns().used().empty());
}

TEST_F(StoreTest, ACorruptedStoreIsRefusedWithItsLineNumber) {
  const auto good = lines_of(encode_store(m));
  struct Case {
    const char* what;
    std::function<void(std::vector<std::string>&)> corrupt;
    std::string expected;  // exact, or a prefix when `prefix`
    bool prefix = false;
  };
  const size_t link_line = line_with(good, "\"record\":\"link\"");
  const size_t leaf0_line = line_with(good, "\"id\":\"leaf0\"");
  const size_t group_line = line_with(good, "\"name\":\"across\"");
  const Case cases[] = {
      {"not JSON", [](auto& l) { l[2] = "{\"record\": \"switch\", "; }, "line 3: JSON parse error",
       true},
      {"not a record", [](auto& l) { l[2] = "[1, 2]"; },
       "line 3: not a record (an object with a \"record\" string)"},
      {"not a store", [](auto& l) { l[0] = "{\"record\":\"something-else\"}"; },
       "line 1: not an inc-manager store (no \"epic-manager-store\" header)"},
      {"newer version", [](auto& l) { replace_in(l[0], "\"version\":2", "\"version\":3"); },
       "line 1: store version 3; this manager reads version 2"},
      {"a store that counted slots",
       [](auto& l) { replace_in(l[0], "\"version\":2", "\"version\":1"); },
       "line 1: store version 1; this manager reads version 2"},
      {"unknown record",
       [](auto& l) { replace_in(l[2], "\"record\":\"switch\"", "\"record\":\"swtich\""); },
       "line 3: unknown record \"swtich\""},
      {"missing field",
       [&](auto& l) { replace_in(l[leaf0_line - 1], "\"capacity_bytes\":198656,", ""); },
       "line " + std::to_string(leaf0_line) + ": switch: missing field \"capacity_bytes\""},
      {"bad address", [&](auto& l) { replace_in(l[leaf0_line - 1], "10.77.0.254", "10.77.0"); },
       "line " + std::to_string(leaf0_line) +
           ": switch: field \"inc_ipv4\": \"10.77.0\" is not an IPv4 address"},
      {"link to an unknown switch",
       [&](auto& l) { replace_in(l[link_line - 1], "\"spine0\"", "\"spine9\""); },
       "line " + std::to_string(link_line) +
           ": link: link leaf0:up0 - spine9:d0: unknown switch 'spine9'"},
      {"a mode that is neither II nor III",
       [&](auto& l) { replace_in(l[group_line - 1], "\"mode\":2", "\"mode\":4"); },
       "line " + std::to_string(group_line) +
           ": group: mode: 4 is not a mode (2: Mode-II, 3: Mode-III)"},
      {"a hop timeout below its limit",
       [&](auto& l) {
         replace_in(l[group_line - 1], "\"hop_timeout_us\":42", "\"hop_timeout_us\":5");
       },
       "line " + std::to_string(group_line) +
           ": group: hop_timeout_us: 5 us is outside 10..1000000 us (Mode-III's per-hop ACK "
           "timeout)"},
      {"grant beyond the capacity",
       [&](auto& l) {
         replace_in(l[leaf0_line - 1], "\"capacity_bytes\":198656", "\"capacity_bytes\":24832");
       },
       "line " + std::to_string(group_line) +
           ": group: group 2: grant of 49664 bytes (0 from the "
           "partition) on switch 'leaf0' does not fit: partition free 0, shared free 24832 "
           "(capacity 24832)"},
      {"a QPN used twice",
       [&](auto& l) { replace_in(l[group_line - 1], "\"qpn\":257", "\"qpn\":256"); },
       "line " + std::to_string(group_line) +
           ": group: group 2: virtual QPN 0x000100 on switch 'spine0' is used twice"},
      {"cut short", [](auto& l) { l.pop_back(); },
       "line " + std::to_string(good.size() - 1) +
           ": the store ends without its end record (cut short?)"},
      {"a record lost", [&](auto& l) { l.erase(l.end() - 2); },
       "line " + std::to_string(good.size() - 1) + ": the end record counts " +
           std::to_string(good.size() - 1) + " records but the file holds " +
           std::to_string(good.size() - 2)},
  };
  for (const auto& c : cases) {
    auto lines = good;
    c.corrupt(lines);
    auto r = decode_store(join_lines(lines), kPolicy, Millis{0});
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.error().code, ErrorCode::kDataLoss) << c.what;
    if (c.prefix) {
      EXPECT_TRUE(starts_with(r.error().message, c.expected))
          << c.what << ": " << r.error().message;
    } else {
      EXPECT_EQ(r.error().message, c.expected) << c.what;
    }
  }
}

TEST(Store, AMissingFileIsNotFoundAndACorruptOneNamesItsPath) {
  const std::string path =
      ::testing::TempDir() + "/manager-store-missing-" + std::to_string(::getpid());
  auto r = load_store(path, {}, Millis{0});
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().message, "store " + path + " does not exist");
  std::ofstream(path) << "{\"record\":\"epic-manager-store\",\"version\":2,\"next_group_id\":1}\n";
  r = load_store(path, {}, Millis{0});
  EXPECT_EQ(r.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(r.error().message,
            "store " + path + " line 1: the store ends without its end record (cut short?)");
  ::unlink(path.c_str());
}

TEST(Store, SavingIntoAMissingDirectoryFails) {
  IncManager m;
  Status s = save_store("/nonexistent-dir-for-epic/store.jsonl", m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_EQ(s.error().message,
            "cannot create /nonexistent-dir-for-epic/store.jsonl.tmp: No such file or directory");
}

TEST(Store, AnEmptyManagerRoundTrips) {
  IncManager m;
  const std::string text = encode_store(m);
  EXPECT_EQ(text,
            "{\"record\":\"epic-manager-store\",\"version\":2,\"next_group_id\":1}\n"
            "{\"record\":\"end\",\"records\":1}\n");
  auto r = decode_store(text, {}, Millis{0});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().manager.topology().switches().empty());
}

}  // namespace
}  // namespace epic::manager
