// inc-rc-peer's command line: defaults, derived values, and rejected input.
#include "tools/inc-rc-peer/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace epic::tools::rc_peer {
namespace {

ParsedOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "inc-rc-peer");
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return parse_options(static_cast<int>(args.size()), argv.data());
}

TEST(Options, PingpongDefaultsFollowIbvRcPingpong) {
  auto p = parse({"pingpong", "-I", "tap0", "--ip", "10.9.0.200", "10.9.0.1"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.mode, Mode::kPingpong);
  EXPECT_EQ(p.options.peer, "10.9.0.1");
  EXPECT_EQ(p.options.tcp_port, 18515);
  EXPECT_EQ(p.options.mtu, 1024);
  EXPECT_EQ(p.options.size, 4096u);
  EXPECT_EQ(p.options.mac, (vocab::MacAddr{0x02, 0x00, 10, 9, 0, 200}));
  EXPECT_EQ(p.options.tx_loss, 0.0);
}

TEST(Options, XferTakesListsAndLossRates) {
  auto p = parse({"xfer",      "-I",         "v",
                  "--ip",      "10.0.0.1",   "--sizes",
                  "0,4096",    "--ops",      "WRITE,SEND_IMM",
                  "--dirs",    "a2c",        "--tx-loss",
                  "0.05",      "--ack-loss", "0.1",
                  "--rx-loss", "0.02",       "--seed",
                  "9",         "--mtu",      "512"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.tcp_port, 18516);
  EXPECT_EQ(p.options.sizes, (std::vector<uint32_t>{0, 4096}));
  EXPECT_EQ(p.options.ops, (std::vector<XferOp>{XferOp::kWrite, XferOp::kSendImm}));
  EXPECT_EQ(p.options.dirs, (std::vector<XferDir>{XferDir::kToController}));
  EXPECT_EQ(p.options.tx_loss, 0.05);
  EXPECT_EQ(p.options.ack_loss, 0.1);
  EXPECT_EQ(p.options.rx_loss, 0.02);
  EXPECT_EQ(p.options.seed, 9u);
  EXPECT_EQ(p.options.mtu, 512);
  EXPECT_TRUE(p.options.peer.empty());
}

TEST(Options, RejectsWhatCannotWork) {
  EXPECT_NE(parse({}).error, "");
  EXPECT_NE(parse({"ping"}).error, "");
  EXPECT_NE(parse({"xfer", "--ip", "10.0.0.1"}).error, "");  // no interface
  EXPECT_NE(parse({"xfer", "-I", "v"}).error, "");           // no address
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.300"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "--mac", "01:00:5e:00:00:01"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "--mtu", "1500"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "--tx-loss", "1.5"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "--retry", "8"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "--ops", "READ"}).error, "");
  EXPECT_NE(parse({"xfer", "-I", "v", "--ip", "10.0.0.1", "a", "b"}).error, "");
  EXPECT_TRUE(parse({"--help"}).options.help);
  EXPECT_TRUE(parse({"xfer", "-h"}).options.help);
}

}  // namespace
}  // namespace epic::tools::rc_peer
