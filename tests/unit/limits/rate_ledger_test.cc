#include "limits/zone/rate_ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace limits::zone {
namespace {

constexpr int64_t kLease = 60'000;
constexpr uint64_t W = kWholeRate;
const BucketKey kKey{"tenant", ""};

// The home's answer to one member's report, with a ring of `ring` members all heard from.
uint64_t Ask(RateLedger& ledger, const std::string& member, uint64_t demand, uint64_t applied, int64_t now,
             size_t ring = 2) {
  const std::vector<RateShare> out = ledger.Answer(
      member, {{kKey, demand, applied}}, ring, [](int64_t) { return true; }, now);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? 0 : out[0].share;
}

TEST(RateLedgerTest, BelowTheRateEachGetsItsDemandAndAnEqualPartOfTheRest) {
  RateLedger ledger(kLease);
  // Alone in a ring of two: its demand and half of what nobody asks for.
  EXPECT_EQ(Ask(ledger, "a", W / 5, 0, 0), W / 5 + (W - W / 5) / 2);
  // The other asks for a tenth: its target is its demand and half of what is left, but a's
  // share leaves it less until a's is lowered.
  const uint64_t a = W / 5 + (W - W / 5) / 2;
  EXPECT_EQ(Ask(ledger, "b", W / 10, 0, 1), W - a);
  EXPECT_EQ(Ask(ledger, "a", W / 5, a, 2), W / 5 + (W - W / 5 - W / 10) / 2);
  EXPECT_EQ(Ask(ledger, "b", W / 10, W - a, 3), W - a);  // a still applies its first share
  EXPECT_EQ(Ask(ledger, "a", W / 5, W / 5 + (W - W / 5 - W / 10) / 2, 4), W / 5 + (W - W / 5 - W / 10) / 2);
  EXPECT_EQ(Ask(ledger, "b", W / 10, W - a, 5), W / 10 + (W - W / 5 - W / 10) / 2);
  EXPECT_EQ(*ledger.Held(kKey), W);
}

TEST(RateLedgerTest, AboveTheRateSharesFollowDemandAndALoweredShareCountsUntilApplied) {
  RateLedger ledger(kLease);
  // a asks for 3x the rate, alone: all of it.
  EXPECT_EQ(Ask(ledger, "a", 3 * W, 0, 0), W);
  // b asks for the rate: its target is a quarter, but a holds all of it until it applies less.
  EXPECT_EQ(Ask(ledger, "b", W, 0, 1), 0u);
  // a's next report: its share is lowered to three quarters, but it still applies all.
  EXPECT_EQ(Ask(ledger, "a", 3 * W, W, 2), 3 * W / 4);
  EXPECT_EQ(Ask(ledger, "b", W, 0, 3), 0u);  // a's applied share still counts
  EXPECT_EQ(Ask(ledger, "a", 3 * W, 3 * W / 4, 4), 3 * W / 4);
  EXPECT_EQ(Ask(ledger, "b", W, 0, 5), W / 4);
  EXPECT_EQ(*ledger.Held(kKey), W);
}

TEST(RateLedgerTest, AMemberNotAskingGetsNothingAndIsForgottenOnceItAppliesNothing) {
  RateLedger ledger(kLease);
  EXPECT_EQ(Ask(ledger, "a", W / 2, 0, 0), W / 2 + W / 4);
  EXPECT_EQ(Ask(ledger, "a", 0, W / 2 + W / 4, 1), 0u);
  auto homed = [](const BucketKey&) { return true; };
  ledger.Tick({"a", "b"}, homed, 2);
  EXPECT_EQ(*ledger.Held(kKey), W / 2 + W / 4);  // it still applies its share
  EXPECT_EQ(Ask(ledger, "a", 0, 0, 3), 0u);
  ledger.Tick({"a", "b"}, homed, 4);
  EXPECT_FALSE(ledger.Held(kKey).has_value());
}

TEST(RateLedgerTest, ASilentMemberKeepsItsShareUntilItIsOutOfTheRingAndPastItsLease) {
  RateLedger ledger(kLease);
  EXPECT_EQ(Ask(ledger, "a", 2 * W, 0, 0), W);
  // a is silent (paused, or cut off from this home): it refills at its last share meanwhile.
  auto homed = [](const BucketKey&) { return true; };
  ledger.Tick({"a", "b"}, homed, 10 * kLease);
  EXPECT_EQ(Ask(ledger, "b", 2 * W, 0, 10 * kLease), 0u);
  // Out of the ring, but not yet past its lease.
  ledger.Tick({"b"}, homed, kLease);
  EXPECT_EQ(Ask(ledger, "b", 2 * W, 0, 10 * kLease), 0u);
  ledger.Tick({"b"}, homed, 10 * kLease);
  EXPECT_EQ(Ask(ledger, "b", 2 * W, 0, 10 * kLease + 1), W);
}

TEST(RateLedgerTest, ABucketNewHereRaisesNoShareUntilEveryMemberHasBeenHeard) {
  RateLedger ledger(kLease);
  bool heard_all = false;
  auto ask = [&](const std::string& m, uint64_t demand, uint64_t applied, int64_t now) {
    return ledger
        .Answer(
            m, {{kKey, demand, applied}}, 2, [&](int64_t) { return heard_all; }, now)[0]
        .share;
  };
  // An earlier home gave a three quarters; this home does not know it yet.
  EXPECT_EQ(ask("b", W, W / 4, 0), W / 4);  // kept, not raised to its target
  EXPECT_EQ(ask("b", W, W / 4, 1), W / 4);
  EXPECT_EQ(ask("b", W, W / 8, 2), W / 8);  // lowered: it applies less now
  heard_all = true;
  EXPECT_EQ(ask("a", W, 3 * W / 4, 3), W / 2);  // lowered to its target
  EXPECT_EQ(ask("b", W, W / 8, 4), W / 4);      // a still applies three quarters
  EXPECT_EQ(ask("a", W, W / 2, 5), W / 2);
  EXPECT_EQ(ask("b", W, W / 4, 6), W / 2);
}

TEST(RateLedgerTest, AMovedBucketIsDroppedByTheHomeItLeft) {
  RateLedger ledger(kLease);
  Ask(ledger, "a", W, 0, 0);
  ledger.Tick(
      {"a"}, [](const BucketKey&) { return false; }, 1);
  EXPECT_FALSE(ledger.Held(kKey).has_value());
}

// A zone of members exchanging with one home over a lossy, slow network: reports and answers
// are delayed and reordered, some are lost, members go silent for a while, demands change at
// random, and the home's process restarts (a new ledger, learning). What the members refill
// at never sums past the whole rate, and with steady demands and a working network the shares
// settle in proportion to them.
TEST(RateLedgerTest, ASimulatedZoneNeverRefillsPastTheWholeRate) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const int n = 1 + static_cast<int>(rng() % 6);
    std::optional<RateLedger> ledger(std::in_place, kLease);
    struct Member {
      std::string name;
      uint64_t demand = 0;
      uint64_t share = 0;  // the home's last: what it refills at
      bool in_flight = false;
      int64_t silent_until = 0;
    };
    std::vector<Member> members(static_cast<size_t>(n));
    std::vector<std::string> ring;
    for (int i = 0; i < n; ++i) {
      members[i].name = std::string(1, static_cast<char>('a' + i));
      ring.push_back(members[i].name);
    }
    std::map<std::string, int64_t> answered;
    auto heard_all_since = [&](int64_t since) {
      return std::all_of(ring.begin(), ring.end(),
                         [&](const std::string& m) { return answered.contains(m) && answered[m] >= since; });
    };
    struct Message {
      int member;
      int64_t at;  // delivered then
      RateReport report;
      std::optional<uint64_t> share;  // set: an answer on its way back
    };
    std::deque<Message> wire;
    int64_t now = 0;
    for (int step = 0; step < 4000; ++step) {
      now += 1 + static_cast<int64_t>(rng() % 200);
      const bool settle = step >= 3500;  // steady demands, no loss, nobody silent
      if (step == 3500) {
        for (Member& m : members) m.silent_until = 0;
      }
      for (Member& m : members) {
        if (!settle && rng() % 20 == 0) m.demand = rng() % 3 == 0 ? 0 : rng() % (2 * W);
        if (!settle && rng() % 400 == 0) m.silent_until = now + static_cast<int64_t>(rng() % (2 * kLease));
      }
      if (!settle && rng() % 1000 == 0) {
        ledger.emplace(kLease);  // the home restarts: it knows nothing, and learns
        answered.clear();
      }
      // A member sends its report: at most one exchange in flight, as a round does.
      const int i = static_cast<int>(rng() % static_cast<uint32_t>(n));
      Member& m = members[i];
      if (!m.in_flight && now >= m.silent_until) {
        m.in_flight = true;
        const int64_t delay = settle ? 1 : static_cast<int64_t>(rng() % 500);
        wire.push_back({i, now + delay, {kKey, m.demand, m.share}, std::nullopt});
      }
      // Deliver what is due, in any order.
      std::shuffle(wire.begin(), wire.end(), rng);
      std::vector<Message> answers;  // on their way back, after this step
      for (auto it = wire.begin(); it != wire.end();) {
        if (it->at > now) {
          ++it;
          continue;
        }
        Member& to = members[it->member];
        const bool lost = !settle && rng() % 10 == 0;
        if (!it->share) {
          if (lost) {
            to.in_flight = false;
          } else {
            answered[to.name] = now;
            const std::vector<RateShare> shares =
                ledger->Answer(to.name, {it->report}, ring.size(), heard_all_since, now);
            Message back = *it;
            back.at = now + (settle ? 1 : static_cast<int64_t>(rng() % 500));
            back.share = shares.at(0).share;
            answers.push_back(back);
          }
        } else {
          to.in_flight = false;
          if (!lost) to.share = *it->share;
        }
        it = wire.erase(it);
      }
      wire.insert(wire.end(), answers.begin(), answers.end());
      ledger->Tick(
          ring, [](const BucketKey&) { return true; }, now);
      uint64_t total = 0;
      for (const Member& x : members) total += x.share;
      ASSERT_LE(total, W) << "seed " << seed << " step " << step;
    }
    // Settled: shares in proportion to demand when the zone asks for more than the rate, at
    // least the demand when it asks for less.
    uint64_t demand = 0;
    for (const Member& x : members) demand += x.demand;
    for (const Member& x : members) {
      const double want =
          demand > W ? static_cast<double>(x.demand) * W / static_cast<double>(demand) : static_cast<double>(x.demand);
      EXPECT_GE(static_cast<double>(x.share), want - 0.01 * W) << "seed " << seed << " " << x.name;
    }
  }
}

}  // namespace
}  // namespace limits::zone
