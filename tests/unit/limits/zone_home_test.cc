#include "limits/zone/zone_home.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "limits/zone/zone_member.h"

namespace limits::zone {
namespace {

constexpr int64_t kLease = 60'000;
constexpr int32_t kPartitions = 64;
const BucketKey kKey{"t", ""};
// The ring names this home the home of every bucket.
bool Everywhere(const BucketKey&) { return true; }

BucketReport Report(const BucketKey& key, MemberBucket& b, std::vector<PartitionCount> counts, uint64_t want,
                    bool trigger = false) {
  return BucketReport{key, b.Report(std::move(counts)), want, trigger};
}
PartitionCount Count(int32_t p, uint64_t active) { return PartitionCount{p, active, 10, 10, 0, 1, true}; }

TEST(ZoneHomeTest, ATriggerMakesAClosingLedgerThatGrantsTheMembersRoomAndWhatItWants) {
  // L = 40 over 2 partitions, both a's: floors of 10.
  ZoneHome home(2, kLease, [](const BucketKey&) { return uint64_t{40}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a;  // a's side, before any directive: a cold member's report
  ExchangeAnswer answer = home.Answer({"a", {Report(kKey, a, {Count(0, 3), Count(1, 0)}, 4, true)}}, {"a", "b"}, 1'000);
  ASSERT_EQ(answer.roster, std::vector<BucketKey>{kKey});
  ASSERT_EQ(answer.directives.size(), 1u);
  const HomeLedger* ledger = home.LedgerOf(kKey);
  ASSERT_NE(ledger, nullptr);
  EXPECT_TRUE(ledger->RoomsOpen());
  // 7 + 10 left on its floors, plus 3 of the 4 it asked for: all that is free (40 - 2 floors).
  EXPECT_EQ(answer.directives[0].directive.delta, 17 + 3);
  EXPECT_EQ(answer.directives[0].directive.home, 1'000u << kIncarnationTiebreakBits);
  // b, answered meanwhile without reporting the bucket, is waited on: no directive yet.
  ExchangeAnswer to_b = home.Answer({"b", {}}, {"a", "b"}, 1'100);
  EXPECT_TRUE(to_b.directives.empty());
  EXPECT_EQ(to_b.roster, std::vector<BucketKey>{kKey});
}

// A report request sent to a member while the rooms are open carries its first directive (its
// room left on its floors), once the ledger grants: the member's answer both closes its floors
// and reports, and the rooms close without waiting for its next two rounds. Only once, and not
// before every partition is counted (a directive of 0 would close its floors with nothing).
TEST(ZoneHomeTest, AReportRequestWhileTheRoomsAreOpenCarriesTheMembersFirstDirective) {
  // L = 40 over 2 partitions: a serves partition 0, b partition 1; floors of 10.
  ZoneHome home(2, kLease, [](const BucketKey&) { return uint64_t{40}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a, b;
  ExchangeAnswer to_a = home.Answer({"a", {Report(kKey, a, {Count(0, 10)}, 4, true)}}, {"a", "b"}, 1'000);
  EXPECT_TRUE(to_a.directives.empty()) << "partition 1 is not counted yet";
  EXPECT_TRUE(home.RoomDirectives({kKey}, "b").empty()) << "nothing before the ledger grants";
  home.Acknowledge("b", {Report(kKey, b, {Count(1, 3)}, 0)});  // b's answer to the report request
  ASSERT_TRUE(home.LedgerOf(kKey)->CanGrant());
  const std::vector<BucketDirective> rooms = home.RoomDirectives({kKey}, "b");
  ASSERT_EQ(rooms.size(), 1u);
  EXPECT_EQ(rooms[0].directive.delta, 7);  // its floor of 10, 3 taken
  EXPECT_TRUE(home.RoomDirectives({kKey}, "b").empty()) << "once";
  // b applies it and answers the same request with its report: its floors are closed now.
  ASSERT_TRUE(b.Apply(rooms[0].directive));
  home.Acknowledge("b", {Report(kKey, b, {Count(1, 3)}, 0)});
  to_a = home.Answer({"a", {Report(kKey, a, {Count(0, 10)}, 4)}}, {"a", "b"}, 1'100);
  ASSERT_EQ(to_a.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(to_a.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 10)}, 0)}}, {"a", "b"}, 1'200);
  EXPECT_FALSE(home.LedgerOf(kKey)->RoomsOpen()) << "closed within a's exchanges, no round of b's";
}

TEST(ZoneHomeTest, AMemberFirstHeardFromWhileTheFloorsCloseIsWaitedOnToo) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  home.Answer({"late", {}}, {"a", "late"}, 0);
  // At 100 s, "late" holds no lease from this home: it cannot admit cold, and is not waited on.
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0, true)}}, {"a", "late"}, 100'000);
  ASSERT_EQ(first.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  // Its exchange, answered meanwhile, gives it a lease: it may now admit cold.
  ExchangeAnswer to_late = home.Answer({"late", {}}, {"a", "late"}, 100'050);
  EXPECT_TRUE(to_late.directives.empty());
  home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0)}}, {"a", "late"}, 100'100);
  EXPECT_TRUE(home.LedgerOf(kKey)->RoomsOpen());
  MemberBucket late;
  ExchangeAnswer rooms = home.Answer({"late", {Report(kKey, late, {}, 0)}}, {"a", "late"}, 100'200);
  ASSERT_EQ(rooms.directives.size(), 1u);
  ASSERT_TRUE(late.Apply(rooms.directives[0].directive));
  home.Answer({"late", {Report(kKey, late, {}, 0)}}, {"a", "late"}, 100'300);
  EXPECT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
}

TEST(ZoneHomeTest, AHomeThatStartedTurnsNothingHotBeforeEveryMemberOfTheRingExchangedWithIt) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  MemberBucket a;
  // b may hold headroom of an earlier home for the bucket: a's trigger waits until b is heard.
  ExchangeAnswer early = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 2, true)}}, {"a", "b"}, 1'000);
  EXPECT_TRUE(early.directives.empty());
  EXPECT_EQ(home.LedgerOf(kKey), nullptr);
  MemberBucket b;
  ASSERT_TRUE(b.Apply({4, 9, 500}));
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'100);  // it does: a learning ledger
  ASSERT_NE(home.LedgerOf(kKey), nullptr);
  EXPECT_TRUE(home.LedgerOf(kKey)->Learning());
  // Another bucket none of them holds headroom for is cold everywhere: a trigger turns it hot.
  const BucketKey other{"u", ""};
  MemberBucket u;
  ExchangeAnswer hot = home.Answer({"a", {Report(other, u, {Count(0, 1)}, 2, true)}}, {"a", "b"}, 1'200);
  ASSERT_NE(home.LedgerOf(other), nullptr);
  ASSERT_EQ(hot.directives.size(), 2u);  // and one that makes the learning bucket hot at a
  EXPECT_EQ(hot.directives[0].key, other);
  EXPECT_GT(hot.directives[0].directive.delta, 0);
  EXPECT_EQ(hot.directives[1].key, kKey);
  EXPECT_TRUE(home.LedgerOf(other)->RoomsOpen());
}

TEST(ZoneHomeTest, AHomeTheRingNoLongerNamesStepsDown) {
  bool named = true;
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, [&](const BucketKey&) { return named; }, 0);
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 2, true)}}, {"a"}, 1'000);
  ASSERT_EQ(first.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  ASSERT_NE(home.LedgerOf(kKey), nullptr);
  named = false;  // the ring moved the bucket to another node
  ExchangeAnswer after = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 2)}}, {"a"}, 2'000);
  EXPECT_EQ(home.LedgerOf(kKey), nullptr);
  EXPECT_TRUE(after.directives.empty());
  EXPECT_TRUE(after.roster.empty());
  MemberBucket b;
  home.Answer({"a", {Report(kKey, b, {Count(0, 1)}, 2, true)}}, {"a"}, 3'000);
  EXPECT_EQ(home.LedgerOf(kKey), nullptr);  // nor does it turn it hot again
}

// A node's ledgers carry its bits, and one started again in the same millisecond (the ring
// moved the bucket away and back) numbers above the first, whose directive a member applied.
TEST(ZoneHomeTest, IncarnationsCarryTheNodesBitsAndALedgerStartedAgainNumbersAbove) {
  bool named = true;
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, [&](const BucketKey&) { return named; }, 0,
                /*tiebreak=*/7);
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 2, true)}}, {"a"}, 1'000);
  ASSERT_EQ(first.directives.size(), 1u);
  EXPECT_EQ(first.directives[0].directive.home, (1'000u << kIncarnationTiebreakBits) | 7);
  named = false;
  home.Answer({"a", {}}, {"a"}, 1'000);
  ASSERT_EQ(home.LedgerOf(kKey), nullptr);
  named = true;
  MemberBucket b;  // knows no home of the bucket: its trigger starts a ledger again
  home.Answer({"b", {Report(kKey, b, {Count(0, 1)}, 2, true)}}, {"a", "b"}, 1'000);
  ASSERT_NE(home.LedgerOf(kKey), nullptr);
  EXPECT_GT(home.LedgerOf(kKey)->incarnation(), first.directives[0].directive.home);
  EXPECT_EQ(home.LedgerOf(kKey)->incarnation() & 0xffff, 7u);
}

TEST(ZoneHomeTest, ASettledLedgerSendsAMemberThatDidNotReportItADirective) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 2, true)}}, {"a"}, 1'000);
  ASSERT_EQ(first.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0)}}, {"a"}, 2'000);
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  // A member that starts now knows nothing of the bucket: the answer makes it hot there.
  ExchangeAnswer to_c = home.Answer({"c", {}}, {"a", "c"}, 3'000);
  ASSERT_EQ(to_c.directives.size(), 1u);
  EXPECT_EQ(to_c.directives[0].key, kKey);
  EXPECT_EQ(to_c.directives[0].directive.delta, 0);
}

TEST(ZoneHomeTest, AReportOfHeadroomOfAnEarlierHomeMakesALearningLedgerAboveIt) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  MemberBucket a;
  ASSERT_TRUE(a.Apply({3, 4, 5'000u << kIncarnationTiebreakBits}));  // an earlier home, its clock ahead of ours
  ExchangeAnswer answer = home.Answer({"a", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a"}, 1'000);
  const HomeLedger* ledger = home.LedgerOf(kKey);
  ASSERT_NE(ledger, nullptr);
  EXPECT_TRUE(ledger->Learning());
  ASSERT_EQ(answer.directives.size(), 1u);
  EXPECT_EQ(answer.directives[0].directive.delta, 0);  // nothing granted while learning
  EXPECT_EQ(answer.directives[0].directive.home, 5'001u << kIncarnationTiebreakBits);
  ASSERT_TRUE(a.Apply(answer.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a"}, 2'000);
  EXPECT_FALSE(home.LedgerOf(kKey)->Learning());
}

// A learning ledger waits on every ring member; one not heard from yet is listed under a
// placeholder, which is replaced by its name once it exchanges.
TEST(ZoneHomeTest, ALearningLedgerWaitsOnARingMemberNotHeardFromUnderItsRealNameOnceHeard) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  MemberBucket a, b;
  ASSERT_TRUE(a.Apply({3, 4, 5'000}));
  ExchangeAnswer to_a = home.Answer({"a@1", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a@1", "b@?"}, 1'000);
  ASSERT_TRUE(home.LedgerOf(kKey)->Learning());
  ASSERT_TRUE(a.Apply(to_a.directives[0].directive));
  home.Answer({"a@1", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a@1", "b@?"}, 1'100);
  EXPECT_TRUE(home.LedgerOf(kKey)->Learning());  // b, under its placeholder
  home.Renamed("b@?", "b@7");
  EXPECT_TRUE(home.LedgerOf(kKey)->Learning());  // b@7 now
  ExchangeAnswer to_b = home.Answer({"b@7", {}}, {"a@1", "b@7"}, 1'200);
  ASSERT_EQ(to_b.directives.size(), 1u);
  ASSERT_TRUE(b.Apply(to_b.directives[0].directive));
  home.Answer({"b@7", {Report(kKey, b, {}, 0)}}, {"a@1", "b@7"}, 1'300);
  EXPECT_FALSE(home.LedgerOf(kKey)->Learning());
}

// A request's urgent exchange and a round's cross: the round's report (newer) is applied first,
// and the urgent one, not newer, is not applied — but what waits is granted all the same.
TEST(ZoneHomeTest, AnUrgentAskThatCrossedANewerReportStillGetsWhatWaits) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{40}; }, Everywhere, 0);
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 4, true)}}, {"a"}, 1'000);
  ASSERT_EQ(first.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  while (a.TrySpend()) {
  }
  BucketReport urgent = Report(kKey, a, {Count(0, 4)}, 6);  // built first...
  urgent.waiting = 6;
  const BucketReport round = Report(kKey, a, {Count(0, 4)}, 0);  // ...sent after, arrives first
  home.Answer({"a", {round}}, {"a"}, 1'100);
  ExchangeAnswer late = home.Answer({"a", {urgent}}, {"a"}, 1'100);
  ASSERT_EQ(late.directives.size(), 1u);
  EXPECT_EQ(late.directives[0].directive.delta, 6);
  // Not urgent, the same late report gets the answer of one not reported: nothing.
  BucketReport stale = Report(kKey, a, {Count(0, 4)}, 6);
  home.Answer({"a", {Report(kKey, a, {Count(0, 4)}, 0)}}, {"a"}, 1'200);
  ExchangeAnswer nothing = home.Answer({"a", {stale}}, {"a"}, 1'200);
  ASSERT_EQ(nothing.directives.size(), 1u);
  EXPECT_EQ(nothing.directives[0].directive.delta, 0);
}

// Near the limit, members out of headroom ask at once (Loki's frontend calls every owner of a
// push together). Each ask gets what its streams wait for in full, but its top-up only as a
// round's ask would (half a fair share of what is free): the first asker's top-up does not take
// what the next one's streams wait for.
TEST(ZoneHomeTest, AnUrgentAsksTopUpDoesNotTakeWhatAnothersStreamsWaitFor) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{40}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a, b;
  auto apply = [](MemberBucket& m, const ExchangeAnswer& answer) {
    for (const BucketDirective& d : answer.directives) ASSERT_TRUE(m.Apply(d.directive));
  };
  apply(a, home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 0, true)}}, {"a", "b"}, 1'000));
  apply(b, home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'000));
  home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 0)}}, {"a", "b"}, 1'100);
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'100);
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  const int64_t free = home.LedgerOf(kKey)->Free();
  ASSERT_GE(free, 8);
  auto urgent = [&](MemberBucket& m, const std::string& name, uint64_t waiting, int64_t t) {
    BucketReport r = Report(kKey, m, name == "a" ? std::vector<PartitionCount>{Count(0, 0)} : std::vector<PartitionCount>{},
                            waiting + 1'000);  // and a top-up of 1 000
    r.waiting = waiting;
    ExchangeAnswer answer = home.Answer({name, {r}}, {"a", "b"}, t);
    EXPECT_EQ(answer.directives.size(), 1u);
    return answer.directives.empty() ? int64_t{-1} : answer.directives[0].directive.delta;
  };
  const int64_t to_a = urgent(a, "a", 2, 1'200);
  EXPECT_EQ(to_a, 2 + free / 4);  // half a fair share of 2 members: free / 4
  const auto rest = static_cast<uint64_t>(free - to_a);
  EXPECT_EQ(urgent(b, "b", rest, 1'210), static_cast<int64_t>(rest));
  EXPECT_EQ(home.LedgerOf(kKey)->Free(), 0);
}

// Once the calls an urgent ask needed are done, what they freed goes to its waiting streams in
// the same exchange (the agent asks GrantWaiting before it answers): the rest of what waits,
// and, at a turn to hot whose partitions were counted only by those calls, the first directive
// with the asker's room. A round's report (nothing waits) gets nothing more.
TEST(ZoneHomeTest, WhatAnUrgentAsksCallsFreedGoesToItsWaitingStreams) {
  // L = 40 over 2 partitions: a serves partition 0, b partition 1; floors of 10.
  ZoneHome home(2, kLease, [](const BucketKey&) { return uint64_t{40}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a, b;
  ExchangeRequest turn{"a", {Report(kKey, a, {Count(0, 10)}, 4, true)}};
  turn.reports[0].waiting = 3;
  ExchangeAnswer answer = home.Answer(turn, {"a", "b"}, 1'000);
  EXPECT_TRUE(answer.directives.empty());  // b's partition is not counted yet
  EXPECT_TRUE(home.GrantWaiting(turn, answer).empty());
  home.Acknowledge("b", {Report(kKey, b, {Count(1, 4)}, 0)});  // the report request's answer
  const std::vector<BucketDirective> first = home.GrantWaiting(turn, answer);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].directive.delta, 3);  // what waits; a's floor is full: no room
  ASSERT_TRUE(a.Apply(first[0].directive));
  ExchangeRequest round{"a", {Report(kKey, a, {Count(0, 10)}, 4)}};
  EXPECT_TRUE(home.GrantWaiting(round, home.Answer(round, {"a", "b"}, 1'100)).empty());

  // Later, 5 wait and the answer granted 2: 3 more.
  ExchangeRequest ask{"a", {Report(kKey, a, {Count(0, 13)}, 5)}};
  ask.reports[0].waiting = 5;
  ExchangeAnswer partial;
  partial.directives.push_back({kKey, Directive{2, 0, 0}});
  const std::vector<BucketDirective> rest = home.GrantWaiting(ask, partial);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].directive.delta, 3);
}

TEST(ZoneHomeTest, OneOutOfHeadroomWithNothingFreeMakesTheOthersGiveBackHalf) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{20}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a, b;
  ExchangeAnswer to_a = home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 100, true)}}, {"a", "b"}, 1'000);
  ASSERT_EQ(to_a.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(to_a.directives[0].directive));
  ExchangeAnswer to_b = home.Answer({"b", {Report(kKey, b, {}, 100)}}, {"a", "b"}, 1'000);
  ASSERT_EQ(to_b.directives.size(), 1u);
  ASSERT_TRUE(b.Apply(to_b.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 0)}}, {"a", "b"}, 1'100);
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'100);
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  // b asks until nothing is free: a fair share each time, less and less.
  for (int64_t t = 1'110;; t += 10) {
    ExchangeAnswer more = home.Answer({"b", {Report(kKey, b, {}, 100)}}, {"a", "b"}, t);
    ASSERT_EQ(more.directives.size(), 1u);
    if (more.directives[0].directive.delta == 0) break;
    ASSERT_TRUE(b.Apply(more.directives[0].directive));
  }
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'190);
  // a spent all it held and nothing is free: b, which holds the rest, gives back half.
  const uint64_t b_held = b.unused();
  ASSERT_GE(b_held, 2u);
  while (a.TrySpend()) {
  }
  ExchangeAnswer ask = home.Answer({"a", {Report(kKey, a, {Count(0, 20 - b_held)}, 5)}}, {"a", "b"}, 1'200);
  ASSERT_EQ(home.LedgerOf(kKey)->Free(), 0);
  ASSERT_EQ(ask.directives.size(), 1u);
  ASSERT_EQ(ask.directives[0].directive.delta, 0);
  ASSERT_EQ(ask.recalls.size(), 1u);
  EXPECT_EQ(ask.recalls[0].member, "b");
  ASSERT_TRUE(b.Apply(ask.recalls[0].directive.directive));
  EXPECT_EQ(b.unused(), b_held - b_held / 2);
  // b's answer to the recall (Direct) acknowledges it: the places are free, and nothing is
  // granted to b for it.
  const uint64_t held = home.LedgerOf(kKey)->Held();
  home.Acknowledge("b", {Report(kKey, b, {}, 100)});
  EXPECT_EQ(home.LedgerOf(kKey)->Held(), held - b_held / 2);
  EXPECT_EQ(home.LedgerOf(kKey)->Free(), static_cast<int64_t>(b_held / 2));
  home.Acknowledge("b", {Report({"other", ""}, b, {}, 0)});  // a bucket it keeps no ledger of: nothing
  EXPECT_EQ(home.LedgerOf({"other", ""}), nullptr);
  ExchangeAnswer again = home.Answer({"a", {Report(kKey, a, {Count(0, 20 - b_held)}, 5)}}, {"a", "b"}, 1'300);
  ASSERT_EQ(again.directives.size(), 1u);
  EXPECT_GT(again.directives[0].directive.delta, 0);
  EXPECT_TRUE(again.recalls.empty());
}

// An ask short of what it wants is told the bucket is full only once the zone is settled at
// its limit: nothing free, no grant unacknowledged, nothing held unused by another member (which
// a recall would bring back). The member then refuses without asking again until its next round.
TEST(ZoneHomeTest, AnAskAtASettledLimitIsToldTheBucketIsFull) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 900);
  MemberBucket a, b;
  auto ask = [&](MemberBucket& m, const std::string& name, uint64_t count, uint64_t want, int64_t t) {
    BucketReport r = Report(kKey, m, name == "a" ? std::vector<PartitionCount>{Count(0, count)} : std::vector<PartitionCount>{},
                            want, home.LedgerOf(kKey) == nullptr);
    r.waiting = want;
    ExchangeAnswer answer = home.Answer({name, {r}}, {"a", "b"}, t);
    for (const BucketDirective& d : answer.directives) EXPECT_TRUE(m.Apply(d.directive));
    return answer;
  };
  EXPECT_TRUE(ask(a, "a", 0, 4, 1'000).full.empty());
  ask(b, "b", 0, 2, 1'010);
  ask(a, "a", 0, 0, 1'020);
  ask(b, "b", 0, 0, 1'030);
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  ask(b, "b", 0, 2, 1'040);  // b holds places it does not use
  ask(b, "b", 0, 0, 1'050);
  ASSERT_GT(b.unused(), 0u);
  uint64_t admitted = 0;
  for (int64_t t = 1'100; t < 2'000; t += 10) {
    while (a.TrySpend()) ++admitted;
    const ExchangeAnswer more = ask(a, "a", admitted, 1, t);
    if (!more.full.empty()) break;
    // b holds places unused: they are recalled, never "full"
    for (const Recall& r : more.recalls) {
      ASSERT_EQ(r.member, "b");
      ASSERT_TRUE(b.Apply(r.directive.directive));
      home.Acknowledge("b", {Report(kKey, b, {}, 0)});
    }
  }
  EXPECT_EQ(admitted, 10u);
  EXPECT_EQ(b.unused(), 0u);
  EXPECT_EQ(home.LedgerOf(kKey)->Free(), 0);
  const ExchangeAnswer at_limit = ask(a, "a", admitted, 3, 2'000);
  EXPECT_EQ(at_limit.full, std::vector<BucketKey>{kKey});
  EXPECT_TRUE(at_limit.recalls.empty());
}

// A grant lost on its way (the asker's call timed out after the home answered) keeps its places
// held until the asker applies a later directive: an ask meanwhile finds nothing free, but is not
// told the bucket is full; the directive of that answer settles the lost grant, and the places
// come back.
TEST(ZoneHomeTest, AnAskWhoseEarlierGrantWasLostIsNotToldTheBucketIsFull) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  MemberBucket a;
  auto ask = [&](uint64_t count, uint64_t want, int64_t t, bool apply) {
    BucketReport r = Report(kKey, a, {Count(0, count)}, want, home.LedgerOf(kKey) == nullptr);
    r.waiting = want;
    ExchangeAnswer answer = home.Answer({"a", {r}}, {"a"}, t);
    for (const BucketDirective& d : answer.directives) {
      if (apply) {
        EXPECT_TRUE(a.Apply(d.directive));
      }
    }
    return answer;
  };
  ask(0, 4, 1'000, true);
  ask(0, 0, 1'010, true);  // the rooms close
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  uint64_t admitted = 0;
  while (a.TrySpend()) ++admitted;
  ASSERT_LT(admitted, 10u);
  const ExchangeAnswer lost = ask(admitted, 10 - admitted, 1'020, /*apply=*/false);
  ASSERT_EQ(lost.directives.size(), 1u);
  ASSERT_EQ(static_cast<uint64_t>(lost.directives[0].directive.delta), 10 - admitted);
  EXPECT_TRUE(lost.full.empty());
  // Nothing free now (the lost grant holds the rest), yet not full: the grant may be lost.
  const ExchangeAnswer again = ask(admitted, 10 - admitted, 1'030, true);
  EXPECT_EQ(home.LedgerOf(kKey)->Free(), 0);
  EXPECT_TRUE(again.full.empty());
  // Its answer's directive, applied and reported, settles the lost grant: the places come back.
  // It asks for more than are left and gets the rest: not told full (they are its own now, and
  // could be recalled from it).
  const ExchangeAnswer back = ask(admitted, 10 - admitted + 5, 1'040, true);
  ASSERT_EQ(back.directives.size(), 1u);
  EXPECT_EQ(static_cast<uint64_t>(back.directives[0].directive.delta), 10 - admitted);
  EXPECT_TRUE(back.full.empty());
  while (a.TrySpend()) ++admitted;
  EXPECT_EQ(admitted, 10u);
  EXPECT_EQ(ask(admitted, 1, 1'050, true).full, std::vector<BucketKey>{kKey});  // got nothing: full
}

TEST(ZoneHomeTest, AMemberWhoseLeaseRanOutIsNoLongerWaitedOn) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, Everywhere, 0);
  home.Answer({"b", {}}, {"a", "b"}, 500);  // b holds a lease from 500
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0, true)}}, {"a", "b"}, 1'000);
  ASSERT_EQ(first.directives.size(), 1u);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0)}}, {"a", "b"}, 2'000);
  EXPECT_TRUE(home.LedgerOf(kKey)->RoomsOpen());  // b may still admit cold
  home.Tick({"a", "b"}, 500 + kLease);
  EXPECT_TRUE(home.LedgerOf(kKey)->RoomsOpen());
  home.Tick({"a", "b"}, 500 + kLease + kLease / 10 + 1);
  EXPECT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
}

// A zone of n members and one home, exchanging in lockstep once every `tick` pushes: new
// streams arrive on uniformly random partitions, each admitted by its owner as ZoneQuota does.
// The zone never holds more than L, and reports how far it got before the first rejection.
struct Outcome {
  uint64_t first_rejection = 0;  // accepted streams when the first one was rejected
  uint64_t total = 0;
  uint64_t synchronous = 0;      // exchanges a stream waited for
  uint64_t synchronous_far = 0;  // ... while the zone was below 90 % of L
};

Outcome RunZone(int members, uint64_t limit, uint32_t seed, int tick) {
  std::mt19937 rng(seed);
  std::vector<std::string> names;
  for (int i = 0; i < members; ++i) {
    std::string name = "m";  // built in steps: GCC 12's -Wrestrict misfires on "m" + to_string
    name += std::to_string(i);
    names.push_back(std::move(name));
  }
  ZoneHome home(kPartitions, kLease, [&](const BucketKey&) { return limit; }, Everywhere, 0);
  std::vector<ZoneMember> side;
  for (int i = 0; i < members; ++i) side.emplace_back(kLease);
  std::vector<uint64_t> counts(kPartitions, 0);
  std::vector<uint64_t> since(static_cast<size_t>(members), 0);  // admitted since the last exchange
  int64_t now = 0;
  auto owner = [&](int32_t p) { return static_cast<size_t>(p % members); };
  Outcome out;
  std::function<void(size_t, bool, bool)> exchange;
  exchange = [&](size_t i, bool trigger, bool ack_only) {
    MemberBucket* b = side[i].Find(kKey);
    std::vector<PartitionCount> served;
    for (int32_t p = 0; p < kPartitions; ++p) {
      if (owner(p) == i) served.push_back(PartitionCount{p, counts[static_cast<size_t>(p)], 1, 1, 0, 1, true});
    }
    const bool report = b != nullptr || trigger || !side[i].Pending("home").empty();
    ExchangeRequest request{names[i], {}};
    if (report) {
      const uint64_t unused = b != nullptr ? b->unused() : 0;
      const uint64_t want = ack_only ? 0 : std::max<uint64_t>(8, 4 * since[i]);
      request.reports.push_back(side[i].ReportOf(kKey, served, want > unused ? want - unused : 0, trigger));
    }
    since[i] = 0;
    ExchangeAnswer answer = home.Answer(request, names, now);
    side[i].Heard("home", answer.roster, now);
    for (const BucketDirective& d : answer.directives) side[i].Apply(d.key, d.directive);
    if (answer.recalls.empty()) return;
    // The home recalls at once; each member gives back and says so; the asker asks again.
    for (const Recall& r : answer.recalls) {
      const auto j = static_cast<size_t>(std::find(names.begin(), names.end(), r.member) - names.begin());
      side[j].Apply(r.directive.key, r.directive.directive);
      exchange(j, false, true);
    }
    exchange(i, false, false);
  };
  for (size_t i = 0; i < side.size(); ++i) exchange(i, false, false);

  uint64_t accepted = 0;
  for (int push = 0; push < static_cast<int>(limit) * 3; ++push) {
    now += 1;
    if (push % tick == 0) {
      for (size_t i = 0; i < side.size(); ++i) exchange(i, false, false);
    }
    const auto p = static_cast<int32_t>(rng() % kPartitions);
    const size_t i = owner(p);
    // The owner's decision, as ZoneQuota makes it from the bucket's count in the partition.
    // A stream it cannot admit makes one synchronous exchange (Acquire, or the wait at the
    // turn to hot), then is decided again.
    bool admitted = false;
    for (int attempt = 0; attempt < 2 && !admitted; ++attempt) {
      const ZoneBucket state = side[i].StateOf(kKey, "home", limit, kPartitions, now);
      bool trigger = false;
      if (state.mode == ZoneBucket::Mode::kHot) {
        admitted = state.member->TrySpend();
      } else if (state.mode == ZoneBucket::Mode::kCold) {
        const uint64_t c = counts[static_cast<size_t>(p)];
        admitted = c < state.floors.Of(p);
        trigger = !admitted || c + 1 >= state.floors.Trigger(p);
      }
      const bool hot_here = side[i].Find(kKey) != nullptr;
      if (trigger && home.LedgerOf(kKey) == nullptr) {
        // It asks to turn hot at once, not at the next tick; the home tells every member at
        // once (the roster), and each answers at once: its report, then its acknowledgement.
        exchange(i, true, false);
        for (int round = 0; round < 3; ++round) {
          for (size_t j = 0; j < side.size(); ++j) exchange(j, false, false);
        }
      } else if (!admitted && attempt == 0) {
        ++out.synchronous;
        if (accepted * 10 < limit * 9) ++out.synchronous_far;
        exchange(i, !hot_here, false);  // a cold member asks to turn hot, ledger or not
      }
    }
    if (admitted) {
      ++counts[static_cast<size_t>(p)];
      ++accepted;
      ++since[i];
    } else if (out.first_rejection == 0) {
      out.first_rejection = accepted;
    }
    // The zone's potential: streams, headroom held, and cold room still usable.
    uint64_t potential = accepted;
    for (size_t m = 0; m < side.size(); ++m) {
      if (const MemberBucket* b = side[m].Find(kKey)) potential += b->unused();
    }
    for (int32_t q = 0; q < kPartitions; ++q) {
      const ZoneBucket s = side[owner(q)].StateOf(kKey, "home", limit, kPartitions, now);
      if (s.mode == ZoneBucket::Mode::kCold && counts[static_cast<size_t>(q)] < s.floors.Of(q)) {
        potential += s.floors.Of(q) - counts[static_cast<size_t>(q)];
      }
    }
    EXPECT_LE(potential, limit) << "push " << push;
    if (potential > limit) break;
  }
  out.total = accepted;
  return out;
}

TEST(ZoneHomeTest, ASimulatedZoneFillsToItsLimitAndNeverPastIt) {
  for (int members : {1, 2, 4, 8}) {
    for (uint64_t limit : {64u, 640u, 6400u}) {
      uint64_t worst = 100, synchronous = 0, far = 0;
      for (uint32_t seed = 1; seed <= 5; ++seed) {
        const Outcome o = RunZone(members, limit, seed, 20);
        EXPECT_EQ(o.total, limit) << members << " members, L = " << limit;
        worst = std::min<uint64_t>(worst, o.first_rejection * 100 / limit);
        synchronous += o.synchronous;
        far += o.synchronous_far;
      }
      // What the bench must show (issue 27): >= 90 % of L at L = 64, >= 97 % above.
      EXPECT_GE(worst, limit == 64 ? 90u : 97u) << members << " members, L = " << limit;
      std::printf("members %d  L %5llu  first rejection at >= %3llu %% of L; "
                  "synchronous exchanges %llu (%llu below 90 %% of L), 5 seeds\n",
                  members, static_cast<unsigned long long>(limit), static_cast<unsigned long long>(worst),
                  static_cast<unsigned long long>(synchronous), static_cast<unsigned long long>(far));
    }
  }
}

// A zone whose messages are late, lost, duplicated and reordered; whose members restart (as new
// members, knowing nothing), whose partitions move, whose home restarts (a new process) and
// whose clock runs past leases. After every step its potential — streams, headroom live
// members hold, and floor room a member may still admit cold — is within L.
class LossyZone {
 public:
  LossyZone(uint32_t seed, int members, uint64_t limit)
      : rng_(seed), limit_(limit), home_(std::make_unique<ZoneHome>(kParts, kLease, LimitFn(), Everywhere, 0)) {
    for (int i = 0; i < members; ++i) slots_.push_back(Slot{Id(i, 0), std::make_unique<ZoneMember>(kLease), 0});
    for (int32_t p = 0; p < kParts; ++p) owner_.push_back(static_cast<size_t>(p) % slots_.size());
  }

  void Step() {
    now_ += 1 + static_cast<int64_t>(Pick(400));  // leases (60 s) run out now and then
    switch (Pick(12)) {
      case 0: case 1: case 2: case 3: Push(); break;
      case 4: case 5: Send(Pick(slots_.size()), false); break;
      case 6: case 7: case 8: Deliver(); break;
      case 9: if (Pick(40) == 0) RestartMember(); break;
      case 10: if (Pick(20) == 0) Move(); break;
      case 11: if (Pick(120) == 0) RestartHome(); else home_->Tick(Ring(), now_); break;
    }
  }

  uint64_t Potential() {
    uint64_t total = 0;
    for (uint64_t c : counts_) total += c;
    for (Slot& s : slots_) {
      if (const MemberBucket* b = s.member->Find(kKey)) total += b->unused();
    }
    for (int32_t p = 0; p < kParts; ++p) {
      const ZoneBucket st = slots_[owner_[static_cast<size_t>(p)]].member->StateOf(kKey, "home", limit_, kParts, now_);
      const uint64_t c = counts_[static_cast<size_t>(p)];
      if (st.mode == ZoneBucket::Mode::kCold && c < st.floors.Of(p)) total += st.floors.Of(p) - c;
    }
    return total;
  }
  uint64_t admitted() const { return admitted_; }
  uint64_t cold_admitted() const { return cold_admitted_; }

 private:
  static constexpr int32_t kParts = 16;
  struct Slot {
    std::string id;
    std::unique_ptr<ZoneMember> member;
    int restarts;
  };
  struct Message {
    size_t slot;
    std::string id;  // the member that sent it: a restarted one no longer takes the answer
    ExchangeRequest request;
    int64_t sent;
  };
  struct Reply {
    size_t slot;
    std::string id;
    ExchangeAnswer answer;
    int64_t sent;
  };

  ZoneHome::LimitOf LimitFn() const {
    return [limit = limit_](const BucketKey&) { return limit; };
  }
  static std::string Id(int slot, int restarts) {
    std::string id = "m";  // built in steps: GCC 12's -Wrestrict misfires on "m" + to_string
    id += std::to_string(slot);
    id += '#';
    id += std::to_string(restarts);
    return id;
  }
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  std::vector<std::string> Ring() const {
    std::vector<std::string> ids;
    for (const Slot& s : slots_) ids.push_back(s.id);
    return ids;
  }

  std::vector<PartitionCount> Served(size_t slot) const {
    std::vector<PartitionCount> out;
    for (int32_t p = 0; p < kParts; ++p) {
      if (owner_[static_cast<size_t>(p)] == slot) {
        const auto i = static_cast<size_t>(p);
        out.push_back(PartitionCount{p, counts_[i], 1, 1, 0, generation_[i], true});
      }
    }
    return out;
  }

  void Send(size_t slot, bool trigger) {
    Slot& s = slots_[slot];
    ExchangeRequest request{s.id, {}};
    MemberBucket* b = s.member->Find(kKey);
    if (b != nullptr || trigger || !s.member->Pending("home").empty()) {
      request.reports.push_back(s.member->ReportOf(kKey, Served(slot), Pick(6), trigger));
    }
    requests_.push_back({slot, s.id, std::move(request), now_});
  }

  void Deliver() {
    const bool reply = !replies_.empty() && (requests_.empty() || Pick(2) == 0);
    if (reply) {
      const size_t k = Pick(std::min<size_t>(replies_.size(), 3));
      Reply r = replies_[k];
      if (Pick(6) != 0) replies_.erase(replies_.begin() + static_cast<std::ptrdiff_t>(k));  // else again later
      if (Pick(8) == 0) return;  // lost
      Slot& s = slots_[r.slot];
      if (s.id != r.id) return;  // for a process that is gone
      s.member->Heard("home", r.answer.roster, r.sent);
      for (const BucketDirective& d : r.answer.directives) s.member->Apply(d.key, d.directive);
      for (const Recall& rc : r.answer.recalls) {
        for (Slot& o : slots_) {
          if (o.id == rc.member) o.member->Apply(rc.directive.key, rc.directive.directive);
        }
      }
    } else if (!requests_.empty()) {
      const size_t k = Pick(std::min<size_t>(requests_.size(), 3));
      Message m = requests_[k];
      requests_.erase(requests_.begin() + static_cast<std::ptrdiff_t>(k));
      if (Pick(8) == 0) return;  // lost
      replies_.push_back({m.slot, m.id, home_->Answer(m.request, Ring(), now_), m.sent});
    }
  }

  void Push() {
    const auto p = static_cast<int32_t>(Pick(kParts));
    const size_t slot = owner_[static_cast<size_t>(p)];
    Slot& s = slots_[slot];
    const ZoneBucket st = s.member->StateOf(kKey, "home", limit_, kParts, now_);
    uint64_t& c = counts_[static_cast<size_t>(p)];
    if (st.mode == ZoneBucket::Mode::kHot) {
      if (st.member->TrySpend()) {
        ++c;
        ++admitted_;
      } else {
        Send(slot, false);
      }
    } else if (st.mode == ZoneBucket::Mode::kCold) {
      const bool room = c < st.floors.Of(p);
      if (room) {
        ++c;
        ++admitted_;
        ++cold_admitted_;
      }
      if (!room || c >= st.floors.Trigger(p)) Send(slot, true);
    } else {
      Send(slot, false);
    }
    if (Pick(10) == 0) {  // a stream expires somewhere
      uint64_t& e = counts_[Pick(kParts)];
      if (e > 0) --e;
    }
  }

  void RestartMember() {
    const size_t slot = Pick(slots_.size());
    Slot& s = slots_[slot];
    s.id = Id(static_cast<int>(slot), ++s.restarts);
    s.member = std::make_unique<ZoneMember>(kLease);
  }
  void Move() {
    const auto p = static_cast<size_t>(Pick(kParts));
    owner_[p] = Pick(slots_.size());
    ++generation_[p];
  }
  // The process dies: its connections with it, so nothing on the way to or from it arrives.
  void RestartHome() {
    home_ = std::make_unique<ZoneHome>(kParts, kLease, LimitFn(), Everywhere, now_);
    requests_.clear();
    replies_.clear();
  }

  std::mt19937 rng_;
  uint64_t limit_;
  std::unique_ptr<ZoneHome> home_;
  std::vector<Slot> slots_;
  std::vector<size_t> owner_;
  std::vector<uint64_t> counts_ = std::vector<uint64_t>(kParts, 0);
  std::vector<uint64_t> generation_ = std::vector<uint64_t>(kParts, 1);
  std::deque<Message> requests_;
  std::deque<Reply> replies_;
  int64_t now_ = 0;
  uint64_t admitted_ = 0, cold_admitted_ = 0;
};

TEST(ZoneHomeTest, ALossyZoneNeverHoldsMoreThanItsLimit) {
  uint64_t admitted = 0, cold = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    LossyZone zone(seed, 2 + static_cast<int>(seed % 5), 8 + seed % 120);
    for (int step = 0; step < 3000; ++step) {
      zone.Step();
      ASSERT_LE(zone.Potential(), 8 + seed % 120) << "seed " << seed << " step " << step;
    }
    admitted += zone.admitted();
    cold += zone.cold_admitted();
  }
  // Not vacuous: streams were admitted, cold and hot (fewer hot since a member whose lease ran
  // out drops its headroom: 2 887 in all, against 5 000+ before it did).
  EXPECT_GT(cold, 5'000u);
  EXPECT_GT(admitted - cold, 1'000u);
}

}  // namespace
}  // namespace limits::zone
