#include "ring/ring_members.h"

#include <gtest/gtest.h>

namespace limits::ring {
namespace {

using namespace std::chrono_literals;

void Add(::ring::Desc& d, const std::string& id, ::ring::InstanceState state, const std::string& zone, int64_t ts,
         const std::string& addr = "10.0.0.1:9095") {
  ::ring::InstanceDesc& i = (*d.mutable_ingesters())[id];
  i.set_addr(addr);
  i.set_state(state);
  i.set_zone(zone);
  i.set_timestamp(ts);
}

TEST(RingMembersTest, OnlyActiveFreshMembersOfTheZoneWithAnAddress) {
  ::ring::Desc d;
  Add(d, "b", ::ring::ACTIVE, "z1", 1000, "10.0.0.2:9095");
  Add(d, "a", ::ring::ACTIVE, "z1", 1000, "10.0.0.1:9095");
  Add(d, "other-zone", ::ring::ACTIVE, "z2", 1000);
  Add(d, "leaving", ::ring::LEAVING, "z1", 1000);
  Add(d, "joining", ::ring::JOINING, "z1", 1000);
  Add(d, "silent", ::ring::ACTIVE, "z1", 1000 - 61);
  Add(d, "no-addr", ::ring::ACTIVE, "z1", 1000, "");
  Add(d, "just-fresh", ::ring::ACTIVE, "z1", 1000 - 60);
  const std::vector<RingMember> m = ZoneMembers(d, "z1", 1000, 1min);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].id, "a");
  EXPECT_EQ(m[0].addr, "10.0.0.1:9095");
  EXPECT_EQ(m[1].id, "b");
  EXPECT_EQ(m[2].id, "just-fresh");
  EXPECT_TRUE(ZoneMembers(d, "z3", 1000, 1min).empty());
}

}  // namespace
}  // namespace limits::ring
