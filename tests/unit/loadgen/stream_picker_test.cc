#include "loadgen/stream_picker.h"

#include <gtest/gtest.h>

#include <set>

namespace limits::loadgen {
namespace {

Universe MakeUniverse(uint32_t tenants, uint64_t streams) {
  UniverseOptions o;
  o.tenants = tenants;
  o.streams_per_tenant = streams;
  return Universe(o);
}

TEST(StreamPickerTest, FirstRequestIsAllNewThenTheFractionIsNew) {
  const Universe u = MakeUniverse(1, 1000);
  StreamPicker picker(u, 0.1, 100);
  PickedRequest r;
  picker.NextRequest(&r);
  EXPECT_EQ(r.streams.size(), 100u);  // nothing known yet: new streams fill the request
  EXPECT_EQ(r.fresh, 100u);
  EXPECT_EQ(picker.Sent(0), 100u);
  for (int i = 0; i < 5; ++i) {
    picker.NextRequest(&r);
    EXPECT_EQ(r.streams.size(), 100u);
    EXPECT_EQ(r.fresh, 10u);
    const uint64_t sent = picker.Sent(0);
    for (size_t j = 0; j < r.streams.size(); ++j) {
      if (j < 90) EXPECT_LT(r.streams[j], sent - 10) << "known streams come first, from those sent before";
      else EXPECT_EQ(r.streams[j], sent - 100 + j) << "new streams are the next unsent ones";
    }
  }
}

TEST(StreamPickerTest, NoStreamTwiceInARequest) {
  const Universe u = MakeUniverse(1, 250);
  StreamPicker picker(u, 0.3, 100);
  PickedRequest r;
  for (int i = 0; i < 50; ++i) {
    picker.NextRequest(&r);
    EXPECT_EQ(std::set<uint64_t>(r.streams.begin(), r.streams.end()).size(), r.streams.size()) << i;
    for (uint64_t s : r.streams) EXPECT_LT(s, 250u);
  }
}

TEST(StreamPickerTest, FractionIsExactOverRequests) {
  const Universe u = MakeUniverse(1, 1'000'000);
  StreamPicker picker(u, 0.025, 100);  // 2.5 new streams per request
  PickedRequest r;
  picker.NextRequest(&r);  // the all-new first request
  uint64_t fresh = 0;
  for (int i = 0; i < 400; ++i) {
    picker.NextRequest(&r);
    EXPECT_TRUE(r.fresh == 2 || r.fresh == 3) << r.fresh;
    fresh += r.fresh;
  }
  EXPECT_NEAR(static_cast<double>(fresh), 1000.0, 3.0);
}

TEST(StreamPickerTest, OnceEveryStreamWasSentOnlyKnownStreamsGo) {
  const Universe u = MakeUniverse(1, 300);
  StreamPicker picker(u, 0.5, 100);
  PickedRequest r;
  for (int i = 0; i < 10; ++i) picker.NextRequest(&r);
  EXPECT_EQ(picker.Sent(0), 300u);
  picker.NextRequest(&r);
  EXPECT_EQ(r.fresh, 0u);
  EXPECT_EQ(r.streams.size(), 100u);
}

TEST(StreamPickerTest, FewerStreamsThanARequestHolds) {
  const Universe u = MakeUniverse(1, 30);
  StreamPicker picker(u, 0.1, 100);
  PickedRequest r;
  picker.NextRequest(&r);
  EXPECT_EQ(r.streams.size(), 30u);
  picker.NextRequest(&r);
  EXPECT_EQ(r.streams.size(), 30u);
  EXPECT_EQ(r.fresh, 0u);
}

TEST(StreamPickerTest, TenantsTakeTurnsEachWithItsOwnStreams) {
  const Universe u = MakeUniverse(3, 1000);
  StreamPicker picker(u, 0.1, 10);
  PickedRequest r;
  for (uint32_t i = 0; i < 7; ++i) {
    picker.NextRequest(&r);
    EXPECT_EQ(r.tenant, i % 3);
  }
  EXPECT_EQ(picker.Sent(0), 12u);  // 10, then 1, then 1
  EXPECT_EQ(picker.Sent(1), 11u);
  EXPECT_EQ(picker.Sent(2), 11u);
}

TEST(StreamPickerTest, SameUniverseSameRequests) {
  const Universe u = MakeUniverse(2, 5000);
  StreamPicker a(u, 0.2, 50), b(u, 0.2, 50);
  PickedRequest ra, rb;
  for (int i = 0; i < 100; ++i) {
    a.NextRequest(&ra);
    b.NextRequest(&rb);
    ASSERT_EQ(ra.tenant, rb.tenant);
    ASSERT_EQ(ra.streams, rb.streams) << i;
  }
  // UpdateRates requests draw from their own sequence: they do not shift ExceedsLimits ones.
  PickedRequest known;
  for (int i = 0; i < 7; ++i) b.NextKnown(&known);
  a.NextRequest(&ra);
  b.NextRequest(&rb);
  EXPECT_EQ(ra.streams, rb.streams);
}

TEST(StreamPickerTest, UpdateRatesCarryKnownStreams) {
  const Universe u = MakeUniverse(1, 1000);
  StreamPicker picker(u, 0.1, 100);
  PickedRequest r;
  picker.NextKnown(&r);  // nothing sent yet: the tenant's first streams
  EXPECT_EQ(r.streams.size(), 100u);
  EXPECT_EQ(r.streams.front(), 0u);
  EXPECT_EQ(picker.Sent(0), 0u);  // and they do not count as sent
  picker.NextRequest(&r);
  picker.NextRequest(&r);
  for (int i = 0; i < 20; ++i) {
    picker.NextKnown(&r);
    EXPECT_EQ(r.streams.size(), 100u);
    for (uint64_t s : r.streams) EXPECT_LT(s, picker.Sent(0));
  }
}

}  // namespace
}  // namespace limits::loadgen
