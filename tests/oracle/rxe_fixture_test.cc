// Frames captured from Linux Soft-RoCE (rdma_rxe) ranks — an implementation we
// did not write — must parse, pass our ICRC check, and be reproduced byte for
// byte when rebuilt from the parsed fields. The captures and how they were
// made: tests/fixtures/rxe/README.md (regenerate with
// deploy/lab/capture_rxe_fixture.sh).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "datapath/wire/parser.h"
#include "datapath/wire/roce_packet.h"

namespace epic::wire {
namespace {

std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::array<char, PCAP_ERRBUF_SIZE> err{};
  pcap_t* pc = pcap_open_offline(path.c_str(), err.data());
  EXPECT_NE(pc, nullptr) << err.data();
  std::vector<std::vector<uint8_t>> frames;
  if (pc == nullptr) return frames;
  EXPECT_EQ(pcap_datalink(pc), DLT_EN10MB);
  pcap_pkthdr* h = nullptr;
  const u_char* d = nullptr;
  while (pcap_next_ex(pc, &h, &d) == 1) {
    EXPECT_EQ(h->caplen, h->len) << "capture truncated frames";
    frames.emplace_back(d, d + h->caplen);
  }
  pcap_close(pc);
  return frames;
}

struct Summary {
  size_t frames = 0;
  std::set<uint8_t> opcodes;
};

Summary check_capture(const std::string& path, IpVersion expected_ip) {
  Summary s;
  const auto frames = read_pcap(path);
  s.frames = frames.size();
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    const auto r = parse(f.data(), f.size());
    EXPECT_TRUE(r.ok()) << path << " frame " << i << ": " << to_string(r.error);
    if (!r.ok()) continue;
    EXPECT_EQ(r.view.ip_version, expected_ip) << "frame " << i;
    s.opcodes.insert(r.view.opcode());
    const auto rebuilt = encode(decode(r.view));
    // Anything after the IP datagram would be Ethernet padding, which must be zero.
    EXPECT_EQ(rebuilt.size(), r.view.frame_len) << "frame " << i;
    EXPECT_TRUE(std::equal(rebuilt.begin(), rebuilt.end(), f.begin())) << "frame " << i;
    for (size_t k = r.view.frame_len; k < f.size(); ++k) EXPECT_EQ(f[k], 0) << "frame " << i;
  }
  return s;
}

const std::string kDir = EPIC_RXE_FIXTURE_DIR;

TEST(RxeFixture, Ipv4CaptureParsesVerifiesAndRebuildsExactly) {
  const Summary s = check_capture(kDir + "/rxe_rc_ipv4.pcap", IpVersion::kV4);
  EXPECT_GE(s.frames, 100u);
  // The capture must keep covering every RC opcode rxe sends for SEND, RDMA
  // WRITE and READ (segmented and with immediate) and ACK: 0x00..0x11.
  for (uint8_t op = op::kSendFirst; op <= op::kAck; ++op) {
    EXPECT_TRUE(s.opcodes.count(op)) << "capture lacks " << opcode_info(op).name;
  }
}

TEST(RxeFixture, Ipv6CaptureParsesVerifiesAndRebuildsExactly) {
  const std::string path = kDir + "/rxe_rc_ipv6.pcap";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no IPv6 capture at " << path;
  const Summary s = check_capture(path, IpVersion::kV6);
  EXPECT_GE(s.frames, 100u);
  for (uint8_t op = op::kSendFirst; op <= op::kAck; ++op) {
    EXPECT_TRUE(s.opcodes.count(op)) << "capture lacks " << opcode_info(op).name;
  }
}

}  // namespace
}  // namespace epic::wire
