// VerbsTransport without a device (CI machines have no RDMA): open() fails
// with an actionable message; configuration errors are caught before any
// device is touched. With a device (the Soft-RoCE lab), see
// deploy/lab/incd_rxe.sh.
#include "host/transport/verbs/verbs_transport.h"

#include <gtest/gtest.h>

namespace epic::verbs {
namespace {

bool has_devices() { return !list_devices().empty(); }

TEST(VerbsTransport, NoDeviceIsAClearError) {
  if (has_devices()) GTEST_SKIP() << "this machine has RDMA devices";
  VerbsConfig c;
  c.remote_ipv4 = 0x0A0900FE;
  c.remote_qpn = 0x1000;
  auto t = VerbsTransport::open(c);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.value, nullptr);
  EXPECT_NE(t.error.find("no RDMA device found (ibv_get_device_list returned none"),
            std::string::npos)
      << t.error;
  EXPECT_NE(t.error.find("load rdma_rxe / check the NIC, or use the soft transport"),
            std::string::npos)
      << t.error;
}

TEST(VerbsTransport, ANamedDeviceThatIsMissingIsNamed) {
  VerbsConfig c;
  c.device = "nope";
  auto t = VerbsTransport::create(c);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error.find("'nope'"), std::string::npos) << t.error;
  if (has_devices()) {
    EXPECT_NE(t.error.find("present: "), std::string::npos) << t.error;
  }
}

TEST(VerbsTransport, BadConfigurationFailsBeforeTouchingADevice) {
  VerbsConfig c;
  c.pmtu = 1500;
  auto t = VerbsTransport::create(c);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error.find("path MTU 1500 is not one of 256, 512, 1024, 2048, 4096"),
            std::string::npos)
      << t.error;
  c = VerbsConfig{};
  c.max_outstanding = 0;
  EXPECT_NE(VerbsTransport::create(c).error.find("max_outstanding"), std::string::npos);
  c = VerbsConfig{};
  c.timeout_code = 32;
  EXPECT_NE(VerbsTransport::create(c).error.find("timeout_code"), std::string::npos);
  c = VerbsConfig{};
  c.rnr_retry = 8;
  EXPECT_NE(VerbsTransport::create(c).error.find("rnr_retry"), std::string::npos);
}

}  // namespace
}  // namespace epic::verbs
