// The GroupContext message reader (proto/context/context_proto.h): port names become port ids,
// text forms become values, and every rule of context_validate.h is applied by field path.
#include "proto/context/context_proto.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace epic::vocab {
namespace {

GroupContextMsg msg(const std::string& text) {
  GroupContextMsg m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

const char* const kGood =
    "id: 7 ranks: 2 window: 32 pmtu: 2048 initial_psn: 5"
    " children { port: 'r1' rank: 0 remote { mac: '02:00:00:00:00:01' ipv4: '10.77.0.1' qpn: 256 }"
    "            local { ipv4: '10.77.0.254' qpn: 512 } }"
    " children { port: 'r0' rank: 1 remote { mac: '02:00:00:00:00:02' ipv4: '10.77.0.2' qpn: 257 }"
    "            local { ipv4: '10.77.0.254' qpn: 513 mac: '02:ec:00:00:00:01' } }";

SwitchView view() {
  return SwitchView::of({{"r0", 9000}, {"r1", 9000}},
                        {{*parse_ipv4("10.77.0.254"), *parse_mac("02:ec:00:00:00:fe")}});
}

TEST(ContextReader, ResolvesPortNamesAndTextForms) {
  const SwitchView sw = view();
  ContextErrors errors;
  ContextReader reader(sw, errors);
  const auto g = reader.read(msg(kGood), "context");
  ASSERT_TRUE(g) << join(errors);
  EXPECT_EQ(g->group_id, 7u);
  EXPECT_EQ(g->num_ranks, 2);
  EXPECT_EQ(g->window, 32u);
  EXPECT_EQ(g->mode, GroupMode::kMode2);  // mode unset
  EXPECT_EQ(g->hop_timeout_us, kDefaultHopTimeoutUs);
  EXPECT_EQ(g->pmtu, 2048);
  EXPECT_EQ(g->initial_psn, 5u);
  ASSERT_EQ(g->children.size(), 2u);
  EXPECT_EQ(g->children[0].port, 1);  // "r1"
  EXPECT_EQ(g->children[1].port, 0);  // "r0"
  EXPECT_TRUE(g->children[0].is_rank);
  EXPECT_EQ(g->children[1].first_rank, 1);
  EXPECT_EQ(format_mac(g->children[0].local.mac), "02:ec:00:00:00:fe");  // the INC address's
  EXPECT_EQ(format_mac(g->children[1].local.mac), "02:ec:00:00:00:01");
  EXPECT_EQ(g->children[1].remote.qpn, 257u);
  EXPECT_FALSE(g->parent);
  // What the reader accepts, the value checks accept.
  ContextErrors again;
  check_context(*g, "context", again, &sw);
  EXPECT_EQ(join(again), "");
}

TEST(ContextReader, ReportsEveryErrorByPathWithTheRulesMessage) {
  const SwitchView sw = view();
  ContextErrors errors;
  ContextReader reader(sw, errors);
  std::string text = kGood;
  text.replace(text.find("window: 32"), 10, "window: 24");
  text.replace(text.find("qpn: 257"), 8, "qpn: 16777216");
  text.replace(text.find("port: 'r0'"), 10, "port: 'up'");
  EXPECT_FALSE(reader.read(msg(text), "context"));
  EXPECT_EQ(join(errors),
            "context.window: 24 is not a power of two in 1..1048576 (the engine keeps 2*window "
            "slots indexed by psn mod 2*window); context.children[1].port: no port named \"up\" "
            "(ports: r0, r1); context.children[1].remote.qpn: 0x1000000 does not fit in 24 bits "
            "(must be < 0x1000000)");
}

TEST(ContextReader, ReadsModeIIIAndItsHopTimeout) {
  const SwitchView sw = view();
  for (const auto& [fields, mode, us] :
       {std::tuple{" mode: GROUP_MODE_3 hop_timeout_us: 40", GroupMode::kMode3, 40u},
        std::tuple{" mode: GROUP_MODE_3", GroupMode::kMode3, kDefaultHopTimeoutUs},
        std::tuple{" mode: GROUP_MODE_2", GroupMode::kMode2, kDefaultHopTimeoutUs}}) {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    const auto g = reader.read(msg(std::string(kGood) + fields), "context");
    ASSERT_TRUE(g) << fields << ": " << join(errors);
    EXPECT_EQ(g->mode, mode) << fields;
    EXPECT_EQ(g->hop_timeout_us, us) << fields;
  }
}

TEST(ContextReader, ReadsAPartitionKeyAndRefusesAnInvalidOne) {
  const SwitchView sw = view();
  {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    const auto plain = reader.read(msg(kGood), "context");
    ASSERT_TRUE(plain) << join(errors);
    EXPECT_FALSE(plain->pkey) << "off by default";
    EXPECT_EQ(plain->wire_pkey(), 0xFFFF);
    ContextReader fresh(sw, errors);  // a reader keeps the endpoints it has read
    const auto bound = fresh.read(msg(std::string(kGood) + " pkey: 32786"), "context");
    ASSERT_TRUE(bound) << join(errors);
    EXPECT_EQ(bound->pkey, 0x8012);
    GroupContextMsg out;
    write_pkey(*bound, out);
    EXPECT_EQ(out.pkey(), 0x8012u);
    write_pkey(*plain, out);
    EXPECT_FALSE(out.has_pkey());
  }
  for (const char* bad : {" pkey: 0", " pkey: 32768", " pkey: 65536"}) {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    EXPECT_FALSE(reader.read(msg(std::string(kGood) + bad), "context")) << bad;
    EXPECT_NE(join(errors).find("context.pkey: "), std::string::npos) << join(errors);
    EXPECT_NE(join(errors).find("is not a P_Key"), std::string::npos) << join(errors);
  }
}

TEST(ContextReader, ReadsAndWritesTheTrafficClassAndRefusesABadOne) {
  const SwitchView sw = view();
  {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    const auto plain = reader.read(msg(kGood), "context");
    ASSERT_TRUE(plain) << join(errors);
    EXPECT_EQ(plain->dscp, 0) << "best effort by default";
    EXPECT_EQ(plain->tos(2), 2);
    ContextReader fresh(sw, errors);
    const auto ef = fresh.read(msg(std::string(kGood) + " dscp: 46"), "context");
    ASSERT_TRUE(ef) << join(errors);
    EXPECT_EQ(ef->dscp, 46);
    EXPECT_EQ(ef->tos(3), 0xBB);  // 46 << 2 | CE
    GroupContextMsg out;
    write_dscp(*ef, out);
    EXPECT_EQ(out.dscp(), 46u);
  }
  ContextErrors errors;
  ContextReader reader(sw, errors);
  EXPECT_FALSE(reader.read(msg(std::string(kGood) + " dscp: 64"), "context"));
  EXPECT_NE(join(errors).find("context.dscp: 64 is not a DSCP"), std::string::npos) << join(errors);
  GroupContext g;
  g.dscp = 64;
  ContextErrors shape;
  check_shape(g, "g", shape);
  EXPECT_NE(join(shape).find("g.dscp: 64 is not a DSCP"), std::string::npos) << join(shape);
}

TEST(ContextReader, RefusesAnUnknownModeAndABadHopTimeoutByPath) {
  const SwitchView sw = view();
  const struct {
    const char* fields;
    const char* error;
  } rows[] = {
      {" mode: 1", "context.mode: 1 is not a mode (2: Mode-II, 3: Mode-III; unset: Mode-II)"},
      {" mode: 7 hop_timeout_us: 5",
       "context.mode: 7 is not a mode (2: Mode-II, 3: Mode-III; unset: Mode-II)"},
      {" mode: GROUP_MODE_3 hop_timeout_us: 9",
       "context.hop_timeout_us: 9 us is outside 10..1000000 us (Mode-III's per-hop ACK timeout)"},
      {" mode: GROUP_MODE_3 hop_timeout_us: 1000001",
       "context.hop_timeout_us: 1000001 us is outside 10..1000000 us (Mode-III's per-hop ACK "
       "timeout)"},
      {" hop_timeout_us: 100",
       "context.hop_timeout_us: set, but the group is Mode-II, which keeps no per-hop timer (set "
       "mode: 3 for Mode-III, or leave hop_timeout_us out)"},
  };
  for (const auto& row : rows) {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    EXPECT_FALSE(reader.read(msg(std::string(kGood) + row.fields), "context")) << row.fields;
    EXPECT_EQ(join(errors), row.error) << row.fields;
  }
}

TEST(WriteMode, ModeIIIsUnsetAndModeIIIRoundTrips) {
  const SwitchView sw = view();
  ContextErrors errors;
  ContextReader reader(sw, errors);
  GroupContext g = *reader.read(msg(kGood), "context");
  GroupContextMsg out = msg(kGood);
  out.set_mode(inc::v1::GROUP_MODE_2);
  out.set_hop_timeout_us(7);
  write_mode(g, out);
  EXPECT_EQ(out.mode(), inc::v1::GROUP_MODE_UNSPECIFIED);
  EXPECT_FALSE(out.has_hop_timeout_us());
  g.mode = GroupMode::kMode3;
  g.hop_timeout_us = 250;
  write_mode(g, out);
  EXPECT_EQ(out.mode(), inc::v1::GROUP_MODE_3);
  EXPECT_EQ(out.hop_timeout_us(), 250u);
  GroupContextMsg again = out;  // a second group: its endpoints must not clash with the first's
  again.set_id(8);
  for (auto& c : *again.mutable_children()) {
    c.mutable_local()->set_qpn(c.local().qpn() + 100);
    c.mutable_remote()->set_qpn(c.remote().qpn() + 100);
  }
  const auto back = reader.read(again, "context");
  ASSERT_TRUE(back) << join(errors);
  EXPECT_EQ(back->mode, GroupMode::kMode3);
  EXPECT_EQ(back->hop_timeout_us, 250u);
}

TEST(ContextReader, EndpointsOfReservedGroupsAreTaken) {
  const SwitchView sw = view();
  ContextErrors errors;
  ContextReader first(sw, errors);
  const auto g = first.read(msg(kGood), "context");
  ASSERT_TRUE(g);
  ContextReader reader(sw, errors);
  reader.reserve(*g, "group 7");
  std::string text = kGood;
  text.replace(text.find("id: 7"), 5, "id: 8");
  EXPECT_FALSE(reader.read(msg(text), "context"));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].to_string(),
            "context.children[0].remote: (10.77.0.1, qpn 0x100) is already used by group 7 "
            "(children[0].remote); a queue pair connects to exactly one peer");
}

}  // namespace
}  // namespace epic::vocab

namespace epic::vocab {
namespace {

// The accumulator profile and element type travel as AccumProfile / ElementType (dtype code + 1)
// and come back as GroupContext::arith; unknown values, an exact group without a dtype and an
// exact Mode-III tree of several switches are refused by path.
TEST(ContextReader, ReadsAndWritesTheGroupsArithmeticAndRefusesBadOnes) {
  const SwitchView sw = view();
  {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    const auto g = reader.read(
        msg(std::string(kGood) + " accumulator: ACCUM_KULISCH_FIXED dtype: ELEMENT_FP8_E4M3"),
        "context");
    ASSERT_TRUE(g) << join(errors);
    EXPECT_EQ(g->arith.profile, AccumProfile::kKulischFixed);
    EXPECT_EQ(g->arith.dtype, DType::kFp8E4M3);
    GroupContextMsg out;
    write_arith(*g, out);
    EXPECT_EQ(out.accumulator(), inc::v1::ACCUM_KULISCH_FIXED);
    EXPECT_EQ(out.dtype(), inc::v1::ELEMENT_FP8_E4M3);
    ContextErrors fresh_errors;
    ContextReader fresh(sw, fresh_errors);
    const auto plain = fresh.read(msg(kGood), "context");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->arith, GroupArith{});
  }
  const struct {
    const char* fields;
    const char* error;
  } rows[] = {
      {" accumulator: 7", "context.accumulator: 7 is not an accumulator profile"},
      {" dtype: 8", "context.dtype: 8 is not an element type"},
      {" accumulator: ACCUM_KULISCH_FIXED",
       "context.dtype: required with accumulator kulisch_fixed"},
  };
  for (const auto& row : rows) {
    ContextErrors errors;
    ContextReader reader(sw, errors);
    EXPECT_FALSE(reader.read(msg(std::string(kGood) + row.fields), "context")) << row.fields;
    EXPECT_NE(join(errors).find(row.error), std::string::npos) << join(errors);
  }
}

TEST(CheckContext, AnExactTreeNeedsPortsThatCarryItsPartialsAndModeII) {
  const SwitchView sw =
      SwitchView::of({{"r0", 1500}, {"up", 1500}, {"jumbo", 9600}},
                     {{*parse_ipv4("10.77.0.254"), *parse_mac("02:ec:00:00:00:fe")}});
  GroupContext g;
  g.group_id = 1;
  g.num_ranks = 2;
  g.arith = {AccumProfile::kKulischFixed, DType::kFp32};
  ChildLink c;
  c.is_rank = true;
  c.port = 0;
  c.remote = {*parse_mac("02:00:00:00:00:01"), *parse_ipv4("10.77.0.1"), 256};
  c.local = {*parse_mac("02:ec:00:00:00:fe"), *parse_ipv4("10.77.0.254"), 512};
  g.children = {c};
  ParentLink p;
  p.port = 1;
  p.remote = {*parse_mac("02:00:00:00:00:09"), *parse_ipv4("10.77.0.9"), 300};
  p.local = {*parse_mac("02:ec:00:00:00:fe"), *parse_ipv4("10.77.0.254"), 513};
  g.parent = p;
  ContextErrors errors;
  check_context(g, "context", errors, &sw);
  EXPECT_NE(join(errors).find("context.parent.port: an exact partial of a 1024-byte packet of this "
                              "group (kulisch_fixed, dtype fp32) takes up to 9570 bytes"),
            std::string::npos)
      << join(errors);
  g.parent->port = 2;  // a jumbo uplink
  errors.clear();
  check_context(g, "context", errors, &sw);
  EXPECT_EQ(join(errors), "");
  g.mode = GroupMode::kMode3;
  errors.clear();
  check_context(g, "context", errors, &sw);
  EXPECT_NE(join(errors).find("context.accumulator: an exact sum (kulisch_fixed) on a Mode-III "
                              "tree of several switches is not supported"),
            std::string::npos)
      << join(errors);
}

}  // namespace
}  // namespace epic::vocab
