// dskit's ring merge rules (ring/model.go Desc.Merge, resolveConflicts, RemoveTombstones).
#include "ring/memberlist/ring_merge.h"

#include <google/protobuf/util/message_differencer.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace limits::ring::memberlist {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

::ring::InstanceDesc Inst(int64_t ts, ::ring::InstanceState state, std::vector<uint32_t> tokens = {},
                          const std::string& addr = "a:1") {
  ::ring::InstanceDesc i;
  i.set_addr(addr);
  i.set_timestamp(ts);
  i.set_state(state);
  for (uint32_t t : tokens) i.add_tokens(t);
  return i;
}

::ring::Desc Ring(std::initializer_list<std::pair<std::string, ::ring::InstanceDesc>> entries) {
  ::ring::Desc d;
  for (const auto& [id, inst] : entries) (*d.mutable_ingesters())[id] = inst;
  return d;
}

std::vector<uint32_t> Tokens(const ::ring::Desc& d, const std::string& id) {
  const auto& t = d.ingesters().at(id).tokens();
  return {t.begin(), t.end()};
}

bool Same(const ::ring::Desc& a, const ::ring::Desc& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

TEST(RingMergeTest, TheNewerTimestampWinsPerInstance) {
  ::ring::Desc ours = Ring({{"x", Inst(10, ::ring::ACTIVE, {1}, "old")}, {"y", Inst(20, ::ring::ACTIVE, {2})}});
  ::ring::Desc theirs = Ring({{"x", Inst(11, ::ring::LEAVING, {1}, "new")}, {"y", Inst(19, ::ring::JOINING, {2})}});
  const ::ring::Desc change = MergeRing(&ours, &theirs, false, 100);
  EXPECT_EQ(ours.ingesters().at("x").addr(), "new");
  EXPECT_EQ(ours.ingesters().at("x").state(), ::ring::LEAVING);
  EXPECT_EQ(ours.ingesters().at("y").state(), ::ring::ACTIVE);  // older: ignored
  EXPECT_THAT(MergeContent(change), ElementsAre("x"));
}

TEST(RingMergeTest, AnEqualTimestampChangesNothingExceptToLeft) {
  ::ring::Desc ours = Ring({{"x", Inst(10, ::ring::ACTIVE, {1})}, {"y", Inst(10, ::ring::ACTIVE, {2})}});
  ::ring::Desc theirs = Ring({{"x", Inst(10, ::ring::LEAVING, {1})}, {"y", Inst(10, ::ring::LEFT, {2})}});
  const ::ring::Desc change = MergeRing(&ours, &theirs, false, 100);
  EXPECT_EQ(ours.ingesters().at("x").state(), ::ring::ACTIVE);
  EXPECT_EQ(ours.ingesters().at("y").state(), ::ring::LEFT);
  EXPECT_EQ(ours.ingesters().at("y").tokens_size(), 0);  // LEFT holds no tokens
  EXPECT_THAT(MergeContent(change), ElementsAre("y"));
  // A LEFT entry is not revived at the same timestamp.
  ::ring::Desc revive = Ring({{"y", Inst(10, ::ring::ACTIVE, {2})}});
  EXPECT_EQ(MergeRing(&ours, &revive, false, 100).ingesters_size(), 0);
}

TEST(RingMergeTest, ANewInstanceNeedsATimestampOrLeft) {
  ::ring::Desc ours;
  ::ring::Desc zero = Ring({{"x", Inst(0, ::ring::ACTIVE)}, {"gone", Inst(0, ::ring::LEFT)}});
  const ::ring::Desc change = MergeRing(&ours, &zero, false, 100);
  EXPECT_THAT(MergeContent(change), ElementsAre("gone"));
}

TEST(RingMergeTest, ALocalCasMarksMissingInstancesLeftNow) {
  ::ring::Desc ours = Ring({{"x", Inst(10, ::ring::ACTIVE, {1})}, {"y", Inst(10, ::ring::ACTIVE, {2})},
                            {"z", Inst(5, ::ring::LEFT)}});
  ::ring::Desc updated = Ring({{"x", Inst(11, ::ring::ACTIVE, {1})}});
  const ::ring::Desc change = MergeRing(&ours, &updated, true, 100);
  EXPECT_EQ(ours.ingesters().at("y").state(), ::ring::LEFT);
  EXPECT_EQ(ours.ingesters().at("y").timestamp(), 100);  // "now": beats any pending older update
  EXPECT_EQ(ours.ingesters().at("y").tokens_size(), 0);
  EXPECT_EQ(ours.ingesters().at("z").timestamp(), 5);    // already LEFT: untouched
  EXPECT_THAT(MergeContent(change), ElementsAre("x", "y"));
  // Without the local CAS flag a missing instance is just not mentioned.
  ::ring::Desc again = Ring({{"x", Inst(12, ::ring::ACTIVE, {1})}});
  MergeRing(&ours, &again, false, 200);
  EXPECT_EQ(ours.ingesters().at("y").timestamp(), 100);
}

TEST(RingMergeTest, TokenConflictsGoToTheNonLeavingThenTheSmallerId) {
  ::ring::Desc ours = Ring({{"b", Inst(10, ::ring::ACTIVE, {1, 2, 3})}});
  ::ring::Desc theirs = Ring({{"a", Inst(10, ::ring::ACTIVE, {3, 4})}, {"c", Inst(10, ::ring::LEAVING, {1, 5})}});
  MergeRing(&ours, &theirs, false, 100);
  EXPECT_THAT(Tokens(ours, "a"), ElementsAre(3, 4));  // a < b
  EXPECT_THAT(Tokens(ours, "b"), ElementsAre(1, 2));  // c is LEAVING: b keeps 1
  EXPECT_THAT(Tokens(ours, "c"), ElementsAre(5));
}

TEST(RingMergeTest, IncomingTokensAreSortedAndDeduplicated) {
  ::ring::Desc ours;
  ::ring::Desc theirs = Ring({{"x", Inst(10, ::ring::ACTIVE, {9, 3, 3, 1})}});
  MergeRing(&ours, &theirs, false, 100);
  EXPECT_THAT(Tokens(ours, "x"), ElementsAre(1, 3, 9));
}

TEST(RingMergeTest, MergesCommuteAndRepeatsChangeNothing) {
  const ::ring::Desc a = Ring({{"x", Inst(10, ::ring::ACTIVE, {1})}, {"y", Inst(12, ::ring::LEFT)}});
  const ::ring::Desc b = Ring({{"x", Inst(11, ::ring::LEAVING, {1})}, {"y", Inst(11, ::ring::ACTIVE, {2})},
                               {"z", Inst(3, ::ring::JOINING, {7})}});
  ::ring::Desc ab = a;
  ::ring::Desc b_copy = b;
  MergeRing(&ab, &b_copy, false, 0);
  ::ring::Desc ba = b;
  ::ring::Desc a_copy = a;
  MergeRing(&ba, &a_copy, false, 0);
  EXPECT_TRUE(Same(ab, ba)) << ab.DebugString() << "\nvs\n" << ba.DebugString();
  ::ring::Desc b_again = b;
  EXPECT_EQ(MergeRing(&ab, &b_again, false, 0).ingesters_size(), 0);
}

TEST(RingMergeTest, TombstonesAreRemovedByAge) {
  ::ring::Desc d = Ring({{"old", Inst(100, ::ring::LEFT)}, {"new", Inst(200, ::ring::LEFT)}, {"x", Inst(50, ::ring::ACTIVE)}});
  EXPECT_EQ(RemoveTombstones(&d, 150'000), std::make_pair(1, 1));
  EXPECT_THAT(MergeContent(d), UnorderedElementsAre("new", "x"));
  EXPECT_EQ(RemoveTombstones(&d, 0), std::make_pair(0, 1));  // 0: every tombstone
  EXPECT_THAT(MergeContent(d), ElementsAre("x"));
}

}  // namespace
}  // namespace limits::ring::memberlist
