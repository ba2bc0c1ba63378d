#include "ring/ring_members.h"

#include <gtest/gtest.h>

namespace limits::ring {
namespace {

using namespace std::chrono_literals;

// An instance with [zone] (this node's zone protocol), unless `protocol` says otherwise (0: none).
void Add(::ring::Desc& d, const std::string& id, ::ring::InstanceState state, const std::string& zone, int64_t ts,
         const std::string& addr = "10.0.0.1:9095", uint64_t protocol = kZoneProtocol) {
  ::ring::InstanceDesc& i = (*d.mutable_ingesters())[id];
  i.set_addr(addr);
  i.set_state(state);
  i.set_zone(zone);
  i.set_timestamp(ts);
  (*i.mutable_versions())[7] = 1;  // another component's version: not ours to read
  if (protocol != 0) (*i.mutable_versions())[kZoneProtocolKey] = protocol;
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
  // Without [zone] (a node not restarted yet while a rollout turns it on), or speaking another
  // zone protocol (mid-upgrade): never a home here, which it would never answer as.
  Add(d, "no-zone", ::ring::ACTIVE, "z1", 1000, "10.0.0.3:9095", 0);
  Add(d, "older", ::ring::ACTIVE, "z1", 1000, "10.0.0.4:9095", kZoneProtocol - 1);
  const std::vector<RingMember> m = ZoneMembers(d, "z1", 1000, 1min);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].id, "a");
  EXPECT_EQ(m[0].addr, "10.0.0.1:9095");
  EXPECT_EQ(m[1].id, "b");
  EXPECT_EQ(m[2].id, "just-fresh");
  EXPECT_TRUE(ZoneMembers(d, "z3", 1000, 1min).empty());
  EXPECT_EQ(ZoneOutsiders(d, "z1", 1000, 1min), 2u);  // no-zone and older
  EXPECT_EQ(ZoneOutsiders(d, "z2", 1000, 1min), 0u);
  ZoneMemberView view("z1", 1min);
  view.Read(d, 1'000'000);
  EXPECT_EQ(view.outsiders(), 2u);
  view.ReadFailed();
  EXPECT_EQ(view.outsiders(), 2u);  // a failed read keeps what the last one said
}

std::vector<std::string> Ids(const std::vector<RingMember>& members) {
  std::vector<std::string> out;
  for (const RingMember& m : members) out.push_back(m.id);
  return out;
}

using Ids_ = std::vector<std::string>;

// The ring store was down for 10 s (heartbeat_timeout 3 s): when reads succeed again, a has
// written its heartbeat and b not yet. b stays a member for 3 s of good reads, then goes if it
// is still silent; an instance the ring no longer lists or lists LEAVING goes at once.
TEST(ZoneMemberViewTest, MembersStaleAfterTheRingCouldNotBeReadStayForAHeartbeatTimeout) {
  ZoneMemberView view("z1", 3s);
  ::ring::Desc d;
  Add(d, "a", ::ring::ACTIVE, "z1", 100);
  Add(d, "b", ::ring::ACTIVE, "z1", 100, "10.0.0.2:9095");
  Add(d, "c", ::ring::ACTIVE, "z1", 100);
  EXPECT_EQ(Ids(view.Read(d, 100'000)), (Ids_{"a", "b", "c"}));
  view.ReadFailed();
  view.ReadFailed();
  EXPECT_EQ(Ids(view.members()), (Ids_{"a", "b", "c"}));  // a failed read keeps them

  ::ring::Desc after = d;
  (*after.mutable_ingesters())["a"].set_timestamp(110);
  (*after.mutable_ingesters())["b"].set_addr("10.0.0.22:9095");  // restarted elsewhere meanwhile
  (*after.mutable_ingesters())["c"].set_state(::ring::LEAVING);
  const std::vector<RingMember>& m = view.Read(after, 110'000);
  EXPECT_EQ(Ids(m), (Ids_{"a", "b"}));
  EXPECT_EQ(m[1].addr, "10.0.0.22:9095");
  EXPECT_EQ(Ids(view.Read(after, 112'999)), (Ids_{"a", "b"}));
  (*after.mutable_ingesters())["a"].set_timestamp(113);
  EXPECT_EQ(Ids(view.Read(after, 113'000)), (Ids_{"a"}));  // b silent for the whole grace

  // Without an outage a stale member goes at once; one that comes back is a member again.
  EXPECT_EQ(Ids(view.Read(after, 113'500)), (Ids_{"a"}));
  (*after.mutable_ingesters())["b"].set_timestamp(113);
  EXPECT_EQ(Ids(view.Read(after, 113'600)), (Ids_{"a", "b"}));
  (*after.mutable_ingesters())["a"].set_timestamp(117);
  EXPECT_EQ(Ids(view.Read(after, 117'000)), (Ids_{"a"}));
}

// A member that was never read is not kept: the grace is for the members this node saw.
TEST(ZoneMemberViewTest, AStaleInstanceNeverSeenFreshIsNoMemberAfterAnOutage) {
  ZoneMemberView view("z1", 3s);
  ::ring::Desc d;
  Add(d, "a", ::ring::ACTIVE, "z1", 100);
  view.ReadFailed();
  Add(d, "old", ::ring::ACTIVE, "z1", 90);
  EXPECT_EQ(Ids(view.Read(d, 100'000)), (Ids_{"a"}));
}

// An outsider (no [zone]) whose heartbeat went stale while the ring store was down still
// counts after the store is back, for as long as stale members do: it admits on static shares
// until it writes its heartbeat again, and the others must too.
TEST(ZoneMemberViewTest, OutsidersStaleAfterTheRingCouldNotBeReadStillCount) {
  ZoneMemberView view("z1", 3s);
  ::ring::Desc d;
  Add(d, "a", ::ring::ACTIVE, "z1", 110);
  Add(d, "outsider", ::ring::ACTIVE, "z1", 100, "10.0.0.9:9095", 0);
  view.Read(d, 100'000);
  EXPECT_EQ(view.outsiders(), 1u);
  view.ReadFailed();
  EXPECT_EQ(view.outsiders(), 1u);
  view.Read(d, 110'000);  // back; the outsider's heartbeat is 10 s old
  EXPECT_EQ(view.outsiders(), 1u);
  view.Read(d, 113'500);  // past a heartbeat timeout of good reads, still silent: gone
  EXPECT_EQ(view.outsiders(), 0u);
}

}  // namespace
}  // namespace limits::ring
