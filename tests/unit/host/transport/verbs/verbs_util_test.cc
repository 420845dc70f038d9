#include "host/transport/verbs/verbs_util.h"

#include <gtest/gtest.h>

namespace epic::verbs {
namespace {

TEST(VerbsUtil, PathMtu) {
  for (uint32_t b : {256u, 512u, 1024u, 2048u, 4096u}) {
    ASSERT_TRUE(mtu_enum(b)) << b;
    EXPECT_EQ(mtu_bytes(*mtu_enum(b)), b);
  }
  EXPECT_FALSE(mtu_enum(1500));
  EXPECT_FALSE(mtu_enum(0));
}

TEST(VerbsUtil, Ipv4MappedGid) {
  const ibv_gid g = gid_of_ipv4(0x0A090001);  // 10.9.0.1
  EXPECT_EQ(format_gid(g), "0000:0000:0000:0000:0000:ffff:0a09:0001");
  ASSERT_TRUE(ipv4_of_gid(g));
  EXPECT_EQ(*ipv4_of_gid(g), 0x0A090001u);
  ibv_gid link_local{};
  link_local.raw[0] = 0xfe;
  link_local.raw[1] = 0x80;
  link_local.raw[15] = 1;
  EXPECT_FALSE(ipv4_of_gid(link_local));
  ibv_gid v4_compat = gid_of_ipv4(0x0A090001);
  v4_compat.raw[10] = 0;  // ::10.9.0.1 is not IPv4-mapped
  EXPECT_FALSE(ipv4_of_gid(v4_compat));
}

TEST(VerbsUtil, CompletionStatus) {
  using W = soft::WcStatus;
  EXPECT_EQ(map_status(IBV_WC_SUCCESS), W::kSuccess);
  EXPECT_EQ(map_status(IBV_WC_LOC_LEN_ERR), W::kLocLenErr);
  EXPECT_EQ(map_status(IBV_WC_REM_INV_REQ_ERR), W::kRemInvReqErr);
  EXPECT_EQ(map_status(IBV_WC_REM_ACCESS_ERR), W::kRemAccessErr);
  EXPECT_EQ(map_status(IBV_WC_REM_OP_ERR), W::kRemOpErr);
  EXPECT_EQ(map_status(IBV_WC_RETRY_EXC_ERR), W::kRetryExcErr);
  EXPECT_EQ(map_status(IBV_WC_RNR_RETRY_EXC_ERR), W::kRnrRetryExcErr);
  EXPECT_EQ(map_status(IBV_WC_WR_FLUSH_ERR), W::kWrFlushErr);
  EXPECT_EQ(map_status(IBV_WC_LOC_PROT_ERR), W::kRemOpErr);  // no counterpart
  EXPECT_EQ(map_status(IBV_WC_GENERAL_ERR), W::kRemOpErr);
}

TEST(VerbsUtil, StateNames) {
  EXPECT_STREQ(qp_state_name(IBV_QPS_RTS), "RTS");
  EXPECT_STREQ(qp_state_name(IBV_QPS_ERR), "ERR");
  EXPECT_EQ(port_state_name(IBV_PORT_ACTIVE), "ACTIVE");
  EXPECT_EQ(port_state_name(IBV_PORT_DOWN), "DOWN");
}

}  // namespace
}  // namespace epic::verbs
