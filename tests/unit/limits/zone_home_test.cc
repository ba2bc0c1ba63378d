#include "limits/zone/zone_home.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "limits/zone/zone_member.h"

namespace limits::zone {
namespace {

constexpr int64_t kLease = 60'000;
constexpr int32_t kPartitions = 64;
const BucketKey kKey{"t", ""};

BucketReport Report(const BucketKey& key, MemberBucket& b, std::vector<PartitionCount> counts, uint64_t want,
                    bool trigger = false) {
  return BucketReport{key, b.Report(std::move(counts)), want, trigger};
}
PartitionCount Count(int32_t p, uint64_t active) { return PartitionCount{p, active, 10, 10, 0, 1, true}; }

TEST(ZoneHomeTest, ATriggerMakesAClosingLedgerThatGrantsTheMembersRoomAndWhatItWants) {
  ZoneHome home(kPartitions, kLease, [](const BucketKey&) { return uint64_t{640}; }, 0);
  MemberBucket a;  // a's side, before any directive: a cold member's report
  ExchangeAnswer answer = home.Answer({"a", {Report(kKey, a, {Count(0, 3), Count(1, 0)}, 4, true)}}, {"a", "b"}, 1'000);
  ASSERT_EQ(answer.roster, std::vector<BucketKey>{kKey});
  ASSERT_EQ(answer.directives.size(), 1u);
  const HomeLedger* ledger = home.LedgerOf(kKey);
  ASSERT_NE(ledger, nullptr);
  EXPECT_TRUE(ledger->RoomsOpen());
  // Floors of 5 on partitions 0 and 1: 2 + 5 left, plus the 4 it asked for.
  EXPECT_EQ(answer.directives[0].directive.delta, 7 + 4);
  EXPECT_EQ(answer.directives[0].directive.home, 1'000u);
  // b, answered meanwhile without reporting the bucket, is waited on: no directive yet.
  ExchangeAnswer to_b = home.Answer({"b", {}}, {"a", "b"}, 1'100);
  EXPECT_TRUE(to_b.directives.empty());
  EXPECT_EQ(to_b.roster, std::vector<BucketKey>{kKey});
}

TEST(ZoneHomeTest, AMemberFirstHeardFromWhileTheFloorsCloseIsWaitedOnToo) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, 0);
  // At 100 s, "late" holds no lease from this home: it cannot admit cold, and is not waited on.
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0, true)}}, {"a", "late"}, 100'000);
  ASSERT_TRUE(a.Apply(first.directives[0].directive));
  // Its first exchange, answered meanwhile, gives it a lease: it may now admit cold.
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

TEST(ZoneHomeTest, ASettledLedgerSendsAMemberThatDidNotReportItADirective) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, 0);
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
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, 0);
  MemberBucket a;
  ASSERT_TRUE(a.Apply({3, 4, 5'000}));  // an earlier home, with a clock ahead of ours
  ExchangeAnswer answer = home.Answer({"a", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a"}, 1'000);
  const HomeLedger* ledger = home.LedgerOf(kKey);
  ASSERT_NE(ledger, nullptr);
  EXPECT_TRUE(ledger->Learning());
  ASSERT_EQ(answer.directives.size(), 1u);
  EXPECT_EQ(answer.directives[0].directive.delta, 0);  // nothing granted while learning
  EXPECT_EQ(answer.directives[0].directive.home, 5'001u);
  ASSERT_TRUE(a.Apply(answer.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 2)}, 1)}}, {"a"}, 2'000);
  EXPECT_FALSE(home.LedgerOf(kKey)->Learning());
}

TEST(ZoneHomeTest, OneOutOfHeadroomWithNothingFreeMakesTheOthersGiveBackHalf) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{20}; }, 0);
  MemberBucket a, b;
  ExchangeAnswer to_a = home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 100, true)}}, {"a", "b"}, 1'000);
  ASSERT_TRUE(a.Apply(to_a.directives[0].directive));
  ExchangeAnswer to_b = home.Answer({"b", {Report(kKey, b, {}, 100)}}, {"a", "b"}, 1'000);
  ASSERT_TRUE(b.Apply(to_b.directives[0].directive));
  home.Answer({"a", {Report(kKey, a, {Count(0, 0)}, 0)}}, {"a", "b"}, 1'100);
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'100);
  ASSERT_FALSE(home.LedgerOf(kKey)->RoomsOpen());
  // b asks until nothing is free: a fair share each time, less and less.
  for (int64_t t = 1'110;; t += 10) {
    ExchangeAnswer more = home.Answer({"b", {Report(kKey, b, {}, 100)}}, {"a", "b"}, t);
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
  ASSERT_EQ(ask.directives[0].directive.delta, 0);
  ASSERT_EQ(ask.recalls.size(), 1u);
  EXPECT_EQ(ask.recalls[0].member, "b");
  ASSERT_TRUE(b.Apply(ask.recalls[0].directive.directive));
  EXPECT_EQ(b.unused(), b_held - b_held / 2);
  home.Answer({"b", {Report(kKey, b, {}, 0)}}, {"a", "b"}, 1'300);  // acknowledged: the places are free
  ExchangeAnswer again = home.Answer({"a", {Report(kKey, a, {Count(0, 20 - b_held)}, 5)}}, {"a", "b"}, 1'300);
  EXPECT_GT(again.directives[0].directive.delta, 0);
  EXPECT_TRUE(again.recalls.empty());
}

TEST(ZoneHomeTest, AMemberWhoseLeaseRanOutIsNoLongerWaitedOn) {
  ZoneHome home(1, kLease, [](const BucketKey&) { return uint64_t{10}; }, 0);
  home.Answer({"b", {}}, {"a", "b"}, 500);  // b holds a lease from 500
  MemberBucket a;
  ExchangeAnswer first = home.Answer({"a", {Report(kKey, a, {Count(0, 1)}, 0, true)}}, {"a", "b"}, 1'000);
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
  uint64_t recalls = 0;          // exchanges that made the home recall headroom
};

Outcome RunZone(int members, uint64_t limit, uint32_t seed, int tick) {
  std::mt19937 rng(seed);
  std::vector<std::string> names;
  for (int i = 0; i < members; ++i) names.push_back("m" + std::to_string(i));
  ZoneHome home(kPartitions, kLease, [&](const BucketKey&) { return limit; }, 0);
  std::vector<ZoneMember> side(static_cast<size_t>(members), ZoneMember(kLease));
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
    ++out.recalls;
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
      std::printf("members %d  L %5llu  first rejection at >= %3llu %% of L; synchronous exchanges %llu (%llu below 90 %% of L), 5 seeds\n",
                  members, static_cast<unsigned long long>(limit), static_cast<unsigned long long>(worst),
                  static_cast<unsigned long long>(synchronous), static_cast<unsigned long long>(far));
    }
  }
}

}  // namespace
}  // namespace limits::zone
