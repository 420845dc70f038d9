#include "host/transport/verbs/send_window.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace epic::verbs {
namespace {

TEST(SendWindow, PacketsOfAMessage) {
  EXPECT_EQ(SendWindow::packets_of(0, 1024), 1u);  // an empty SEND is one packet
  EXPECT_EQ(SendWindow::packets_of(1, 1024), 1u);
  EXPECT_EQ(SendWindow::packets_of(1024, 1024), 1u);
  EXPECT_EQ(SendWindow::packets_of(1025, 1024), 2u);
  EXPECT_EQ(SendWindow::packets_of(65536, 1024), 64u);
  EXPECT_EQ(SendWindow::packets_of(65537, 256), 257u);
  EXPECT_EQ(SendWindow::packets_of(uint64_t{1} << 40, 256), UINT32_MAX);  // saturates
}

TEST(SendWindow, PostsWhileThePacketsFitAndInOrder) {
  SendWindow w(16, 1024);
  w.push(16);         // control message: 1 packet
  w.push(10 * 1024);  // 10 packets
  w.push(6 * 1024);   // 6 packets: 1 + 10 + 6 = 17 > 16
  w.push(0);          // 1 packet, behind the one that waits (FIFO: never overtakes)
  ASSERT_TRUE(w.can_post());
  w.post();
  ASSERT_TRUE(w.can_post());
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 11u);
  EXPECT_FALSE(w.can_post());  // 11 + 6 > 16, and the 1-packet send behind it waits too
  EXPECT_EQ(w.queued(), 2u);
  w.complete();  // the control message: 10 + 6 = 16 fits exactly
  ASSERT_TRUE(w.can_post());
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 16u);
  EXPECT_FALSE(w.can_post());
  w.complete();
  w.complete();
  EXPECT_EQ(w.outstanding_sends(), 0u);
  ASSERT_TRUE(w.can_post());
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 1u);
  EXPECT_EQ(w.queued(), 0u);
  EXPECT_FALSE(w.can_post());  // nothing queued
}

TEST(SendWindow, ASendLargerThanTheWindowGoesAlone) {
  SendWindow w(4, 1024);
  w.push(1);
  w.push(10 * 1024);  // 10 packets > MW 4
  w.post();
  EXPECT_FALSE(w.can_post());  // waits for the outstanding one
  w.complete();
  ASSERT_TRUE(w.can_post());  // nothing outstanding: it goes
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 10u);
  w.push(1);
  EXPECT_FALSE(w.can_post());
  w.complete();
  EXPECT_TRUE(w.can_post());
}

TEST(SendWindow, UnpostReturnsTheSendToTheHead) {
  SendWindow w(8, 512);
  w.push(512 * 3);
  w.push(512);
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 3u);
  w.unpost();
  EXPECT_EQ(w.outstanding_sends(), 0u);
  EXPECT_EQ(w.queued(), 2u);
  w.post();
  EXPECT_EQ(w.outstanding_packets(), 3u);  // the same send went again, first
  w.clear_queued();
  EXPECT_EQ(w.queued(), 0u);
  EXPECT_EQ(w.outstanding_sends(), 1u);
}

TEST(SendWindow, MisuseThrows) {
  EXPECT_THROW(SendWindow(0, 1024), std::invalid_argument);
  EXPECT_THROW(SendWindow(4, 0), std::invalid_argument);
  SendWindow w(4, 1024);
  EXPECT_THROW(w.post(), std::logic_error);
  EXPECT_THROW(w.complete(), std::logic_error);
  EXPECT_THROW(w.unpost(), std::logic_error);
}

}  // namespace
}  // namespace epic::verbs
