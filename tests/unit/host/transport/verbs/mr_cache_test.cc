#include "host/transport/verbs/mr_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace epic::verbs {
namespace {

constexpr size_t kPage = 4096;

// A fake NIC: records registrations; handles are 1-based indices.
struct FakeNic {
  struct Mr {
    uintptr_t begin;
    size_t length;
    bool writable;
    bool live;
  };
  std::vector<Mr> mrs;
  bool refuse_writable = false;
  bool refuse_all = false;

  MrCache make(size_t max_idle) {
    return MrCache(
        kPage, max_idle,
        [this](uintptr_t b, size_t l, bool w,
               std::string& error) -> std::optional<MrCache::Registration> {
          if (refuse_all || (w && refuse_writable)) {
            error = "refused";
            return std::nullopt;
          }
          mrs.push_back({b, l, w, true});
          return MrCache::Registration{reinterpret_cast<void*>(mrs.size()),
                                       static_cast<uint32_t>(0x100 + mrs.size())};
        },
        [this](void* h) {
          Mr& m = mrs.at(reinterpret_cast<uintptr_t>(h) - 1);
          if (!m.live) throw std::logic_error("double deregistration");
          m.live = false;
        });
  }
  size_t live() const {
    size_t n = 0;
    for (const Mr& m : mrs) n += m.live;
    return n;
  }
};

const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(MrCache, RegistersThePagesAroundTheBuffer) {
  FakeNic nic;
  MrCache c = nic.make(0);
  auto r = c.acquire(at(0x10010), 5000, true);  // 0x10010 .. 0x11398: pages 0x10000..0x12000
  ASSERT_TRUE(r);
  ASSERT_EQ(nic.mrs.size(), 1u);
  EXPECT_EQ(nic.mrs[0].begin, 0x10000u);
  EXPECT_EQ(nic.mrs[0].length, 2 * kPage);
  EXPECT_TRUE(nic.mrs[0].writable);
  EXPECT_EQ(r->lkey, 0x101u);
  EXPECT_FALSE(c.acquire(at(0x10000), 0, true));  // empty range
}

TEST(MrCache, SharesARegistrationWhileInFlightAndReleasesItAfter) {
  FakeNic nic;
  MrCache c = nic.make(0);
  // a receive buffer of 64 KiB, posted as 4 messages at their offsets
  std::vector<MrCache::Ref> refs;
  refs.push_back(*c.acquire(at(0x20000), 65536, true));
  for (int m = 1; m < 4; ++m) refs.push_back(*c.acquire(at(0x20000 + m * 16384), 16384, true));
  EXPECT_EQ(nic.mrs.size(), 1u);
  EXPECT_EQ(c.hits(), 3u);
  for (const auto& r : refs) EXPECT_EQ(r.id, refs[0].id);
  for (int m = 0; m < 3; ++m) c.release(refs[static_cast<size_t>(m)].id);
  EXPECT_EQ(nic.live(), 1u);  // one request still uses it
  c.release(refs[3].id);
  EXPECT_EQ(nic.live(), 0u);  // max_idle 0: gone with its last request
  EXPECT_EQ(c.size(), 0u);
  EXPECT_THROW(c.release(refs[3].id), std::logic_error);
}

TEST(MrCache, ReusesCoveringIdleRegistrationsAndEvictsTheLeastRecentlyUsed) {
  FakeNic nic;
  MrCache c = nic.make(2);
  auto a = *c.acquire(at(0x100000), 3 * kPage, true);
  auto b = *c.acquire(at(0x200000), kPage, true);
  auto d = *c.acquire(at(0x300000), kPage, true);
  c.release(a.id);
  c.release(b.id);
  c.release(d.id);  // three idle, max 2: the least recently used (a) goes
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(nic.mrs[0].live);
  EXPECT_EQ(c.evictions(), 1u);
  // b is reused (a sub-range it covers); a new registration for a's range.
  auto b2 = *c.acquire(at(0x200100), 100, false);  // a send may use a writable MR
  EXPECT_EQ(b2.id, b.id);
  auto a2 = *c.acquire(at(0x100000 + kPage), 10, true);
  EXPECT_NE(a2.id, a.id);
  EXPECT_EQ(nic.mrs.size(), 4u);
  c.release(b2.id);
  c.release(a2.id);  // idle: d (oldest use), b, a2 -> d evicted
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(nic.mrs[2].live);
  EXPECT_TRUE(nic.mrs[1].live);
  EXPECT_TRUE(nic.mrs[3].live);
}

TEST(MrCache, NeverDeregistersARegistrationInUse) {
  FakeNic nic;
  MrCache c = nic.make(0);
  std::vector<MrCache::Ref> refs;
  for (uintptr_t i = 0; i < 100; ++i)
    refs.push_back(*c.acquire(at(0x1000000 + i * kPage), 8, true));
  EXPECT_EQ(nic.live(), 100u);  // in use: beyond any idle bound
  for (size_t i = 0; i < 50; ++i) c.release(refs[i].id);
  EXPECT_EQ(nic.live(), 50u);
}

TEST(MrCache, ARangeNotCoveredGetsItsOwnRegistration) {
  FakeNic nic;
  MrCache c = nic.make(4);
  auto a = *c.acquire(at(0x40000), kPage, true);
  auto b = *c.acquire(at(0x40800), kPage, true);  // straddles into the next page
  EXPECT_NE(a.id, b.id);
  EXPECT_EQ(nic.mrs[1].begin, 0x40000u);
  EXPECT_EQ(nic.mrs[1].length, 2 * kPage);
  auto c2 = *c.acquire(at(0x40010), 16, true);  // both cover it: the most recently used
  EXPECT_EQ(c2.id, b.id);
}

TEST(MrCache, ReadOnlyMemoryIsRegisteredReadOnlyForSendsOnly) {
  FakeNic nic;
  nic.refuse_writable = true;
  MrCache c = nic.make(4);
  auto s = c.acquire(at(0x50000), 64, false);
  ASSERT_TRUE(s);
  EXPECT_FALSE(nic.mrs[0].writable);
  EXPECT_FALSE(c.acquire(at(0x50000), 64, true));  // a receive needs write access
  EXPECT_NE(c.error().find("refused"), std::string::npos);
  nic.refuse_writable = false;
  auto r = c.acquire(at(0x50000), 64, true);  // the read-only one does not serve it
  ASSERT_TRUE(r);
  EXPECT_NE(r->id, s->id);
  EXPECT_TRUE(nic.mrs[1].writable);
}

TEST(MrCache, FailureIsReportedAndClearDeregistersEverything) {
  FakeNic nic;
  {
    MrCache c = nic.make(8);
    auto a = *c.acquire(at(0x60000), 10, true);
    auto b = *c.acquire(at(0x70000), 10, true);
    c.release(b.id);
    (void)a;
    nic.refuse_all = true;
    EXPECT_FALSE(c.acquire(at(0x80000), 10, false));
    EXPECT_EQ(c.error(), "refused; read-only: refused");
    EXPECT_EQ(nic.live(), 2u);
  }  // the destructor deregisters in-use and idle ones
  EXPECT_EQ(nic.live(), 0u);
}

TEST(MrCache, RejectsABadPageSize) {
  auto reg = [](uintptr_t, size_t, bool, std::string&) -> std::optional<MrCache::Registration> {
    return std::nullopt;
  };
  EXPECT_THROW(MrCache(3000, 0, reg, [](void*) {}), std::invalid_argument);
}

}  // namespace
}  // namespace epic::verbs
