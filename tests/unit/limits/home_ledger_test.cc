#include "limits/zone/home_ledger.h"
#include "limits/zone/member_bucket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace limits::zone {
namespace {

constexpr uint64_t kHome = 3;  // the incarnation of the home under test

MemberReport Report(uint64_t seq, std::vector<PartitionCount> counts, uint64_t unused, uint64_t applied = 0) {
  return MemberReport{seq, std::move(counts), unused, kHome, applied};
}

// A partition's count from an owner that has consumed all of it (and admitted nothing).
PartitionCount Synced(int32_t partition, uint64_t active, int64_t end = 0, uint64_t generation = 1) {
  return PartitionCount{partition, active, end, end, 0, generation, true};
}

TEST(HomeLedgerTest, GrantsOnlyWhatNoPartitionCountsAndNoMemberHolds) {
  HomeLedger ledger(100, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(0, 30), Synced(1, 10)}, 5)));
  ASSERT_TRUE(ledger.Apply("b", Report(1, {Synced(2, 20)}, 15)));
  EXPECT_EQ(ledger.Counted(), 60u);
  EXPECT_EQ(ledger.Held(), 20u);
  EXPECT_EQ(ledger.Free(), 20);

  const Directive g = ledger.Grant("a", 50);
  EXPECT_EQ(g.delta, 20);
  EXPECT_EQ(ledger.Free(), 0);
  EXPECT_EQ(ledger.Grant("b", 1).delta, 0);  // nothing left, but still a directive of its own
}

TEST(HomeLedgerTest, AGrantIsHeldUntilAReportAcknowledgesIt) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(0, 2)}, 0)));
  const Directive g = ledger.Grant("a", 5);
  ASSERT_EQ(g.delta, 5);
  // A report sent before the member applied the grant does not free it.
  ASSERT_TRUE(ledger.Apply("a", Report(2, {Synced(0, 2)}, 0, 0)));
  EXPECT_EQ(ledger.Free(), 3);
  // Applied and partly spent: the places are in the count and the unused headroom.
  ASSERT_TRUE(ledger.Apply("a", Report(3, {Synced(0, 4)}, 3, g.seq)));
  EXPECT_EQ(ledger.Held(), 3u);
  EXPECT_EQ(ledger.Free(), 3);
}

TEST(HomeLedgerTest, ALostGrantIsFreedOnceALaterDirectiveIsApplied) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {}, 0)));
  const Directive lost = ledger.Grant("a", 4);
  ASSERT_EQ(lost.delta, 4);
  const Directive sync = ledger.Grant("a", 0);
  ASSERT_GT(sync.seq, lost.seq);
  EXPECT_EQ(ledger.Free(), 6);
  // The member applied only the later one: it drops the lost grant if it ever arrives.
  ASSERT_TRUE(ledger.Apply("a", Report(2, {}, 0, sync.seq)));
  EXPECT_EQ(ledger.Free(), 10);
}

TEST(HomeLedgerTest, OnlyThisHomesDirectivesAreAcknowledgedByItsNumbers) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {}, 0)));
  const Directive g = ledger.Grant("a", 4);
  ASSERT_EQ(g.home, kHome);
  // Number g.seq from an earlier home acknowledges nothing of this one's.
  ASSERT_TRUE(ledger.Apply("a", MemberReport{2, {}, 0, kHome - 1, g.seq}));
  EXPECT_EQ(ledger.Free(), 6);
  // A member that applied a later home's directive drops this one's: they are settled.
  ASSERT_TRUE(ledger.Apply("a", MemberReport{3, {}, 0, kHome + 1, 1}));
  EXPECT_EQ(ledger.Free(), 10);
}

TEST(HomeLedgerTest, AStartingHomeGrantsNothingUntilItHasLearnt) {
  HomeLedger ledger(100, kHome);
  ledger.StartLearning({"a", "b"}, 2);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(0, 10, 10, 4)}, 5)));
  const Directive hello = ledger.Grant("b", 10);
  EXPECT_EQ(hello.delta, 0);  // b has not reported; a, only before it heard of this home
  // b reports having applied this home's directive, but partition 1's new owner lags behind.
  ASSERT_TRUE(ledger.Apply("b", Report(1, {PartitionCount{1, 3, 1, 4, 0, 7, false}}, 0, hello.seq)));
  ASSERT_TRUE(ledger.Apply("a", Report(2, {Synced(0, 10, 10, 4)}, 5, hello.seq)));
  EXPECT_TRUE(ledger.Learning());
  EXPECT_EQ(ledger.Grant("a", 1).delta, 0);
  ASSERT_TRUE(ledger.Apply("b", Report(2, {Synced(1, 4, 4, 7)}, 0, hello.seq)));
  EXPECT_FALSE(ledger.Learning());
  EXPECT_EQ(ledger.Grant("a", 100).delta, 81);
}

TEST(HomeLedgerTest, AReportNotNewerThanTheLastIsIgnored) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(5, {Synced(0, 4)}, 1)));
  EXPECT_FALSE(ledger.Apply("a", Report(4, {Synced(0, 0)}, 0)));
  EXPECT_FALSE(ledger.Apply("a", Report(5, {Synced(0, 0)}, 0)));
  EXPECT_EQ(ledger.Free(), 5);
}

TEST(HomeLedgerTest, AReturnFreesItsPlacesOnlyWhenAcknowledged) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {}, 8)));
  const Directive r = ledger.Return("a", 20);
  EXPECT_EQ(r.delta, -8);  // at most what it reported
  EXPECT_EQ(ledger.Free(), 2);
  ASSERT_TRUE(ledger.Apply("a", Report(2, {}, 0, r.seq)));
  EXPECT_EQ(ledger.Free(), 10);
}

// A new owner that lags behind and admits streams: its own count lacks the old owner's
// records, the old owner's lacks its admissions.
TEST(HomeLedgerTest, ALaggingNewOwnerCountsOnTopOfTheOldOwnersHistory) {
  HomeLedger ledger(10, kHome);
  // a owns p: 5 streams in offsets [0, 5). b holds 5 places of headroom: the zone is full.
  ASSERT_TRUE(ledger.Apply("a", Report(1, {PartitionCount{0, 5, 5, 5, 5, 1, true}}, 0)));
  ASSERT_TRUE(ledger.Apply("b", Report(1, {}, 0)));
  const Directive g = ledger.Grant("b", 5);
  ASSERT_TRUE(ledger.Apply("b", Report(2, {}, 5, g.seq)));
  ASSERT_EQ(ledger.Free(), 0);
  // p moves to b, which has replayed 2 of the 5 records when it admits 3 streams (offsets 5-7).
  ASSERT_TRUE(ledger.Apply("a", Report(2, {PartitionCount{0, 5, 5, 5, 5, 1, true}}, 0)));
  ASSERT_TRUE(ledger.Apply("b", Report(3, {PartitionCount{0, 5, 2, 8, 3, 2, false}}, 2, g.seq)));
  // 8 streams and 2 places held: nothing to grant (a larger count is only a smaller grant).
  EXPECT_GE(ledger.Counted(), 8u);
  EXPECT_LE(ledger.Free(), 0);
  EXPECT_EQ(ledger.Grant("c", 3).delta, 0);
  // Caught up, b's count holds a's history: a's reading goes.
  ASSERT_TRUE(ledger.Apply("b", Report(4, {PartitionCount{0, 8, 8, 8, 3, 2, true}}, 2, g.seq)));
  EXPECT_EQ(ledger.Counted(), 8u);
  EXPECT_EQ(ledger.Free(), 0);
}

TEST(HomeLedgerTest, AReportThatOmitsAPartitionDoesNotClearIt) {
  HomeLedger ledger(100, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(3, 12)}, 0)));
  ASSERT_TRUE(ledger.Apply("a", Report(2, {}, 0)));
  EXPECT_EQ(ledger.Counted(), 12u);
}

TEST(HomeLedgerTest, StreamsFromAnotherZoneLeaveNothingToGrant) {
  HomeLedger ledger(10, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(0, 12)}, 0)));
  EXPECT_EQ(ledger.Free(), -2);
  EXPECT_EQ(ledger.Grant("a", 1).delta, 0);
}

TEST(HomeLedgerTest, AGoneMemberIsForgottenOnceALaterOwnerOfEachPartitionCaughtUp) {
  HomeLedger ledger(20, kHome);
  ASSERT_TRUE(ledger.Apply("a", Report(1, {Synced(0, 3, 3, 1), Synced(1, 2, 2, 1)}, 4)));
  ASSERT_EQ(ledger.Grant("a", 2).delta, 2);
  // a died. Its partitions' new owners: one still replaying, one caught up.
  ASSERT_TRUE(ledger.Apply("b", Report(1, {PartitionCount{0, 1, 1, 1, 0, 2, false}, Synced(1, 2, 2, 2)}, 0)));
  EXPECT_FALSE(ledger.Forgettable("a"));
  ASSERT_TRUE(ledger.Apply("b", Report(2, {Synced(0, 3, 3, 2), Synced(1, 2, 2, 2)}, 0)));
  ASSERT_TRUE(ledger.Forgettable("a"));
  ledger.Forget("a");
  EXPECT_EQ(ledger.Held(), 0u);
  EXPECT_EQ(ledger.Free(), 15);
  // Its late reports are ignored: it would otherwise hold headroom forever.
  EXPECT_FALSE(ledger.Apply("a", Report(2, {}, 6)));
  EXPECT_EQ(ledger.Free(), 15);
}

// A zone simulated step by step: members spend the headroom they hold on the partitions they
// own, streams expire, other zones add streams, partitions move to owners that replay them
// behind the log, and members die, while reports and directives are delayed, reordered,
// duplicated and dropped. After every step the zone's true total (active streams plus the
// headroom live members hold) stays within L, plus what other zones added.
class Zone {
 public:
  Zone(uint32_t seed, int members, int partitions, uint64_t limit)
      : rng_(seed), ledger_(limit, home_), limit_(limit), partitions_(partitions) {
    for (int i = 0; i < members; ++i) {
      MemberState m;
      m.id = "m";
      m.id += std::to_string(i);
      members_.push_back(std::move(m));
    }
    for (int p = 0; p < partitions; ++p) TakeOver(p, static_cast<size_t>(p % members));
  }

  void Step() {
    switch (Pick(11)) {
      case 0: case 1: case 2: Spend(); break;
      case 3: SendReport(Pick(members_.size())); break;
      case 4: case 5: Deliver(); break;
      case 6: GrantSome(); break;
      case 7: if (Pick(4) == 0) Expire(); else ReturnSome(); break;
      case 8: if (Pick(20) == 0) Move(); break;
      case 9: if (Pick(150) == 0) Kill(); break;
      case 10: if (Pick(30) == 0) OtherZone(); else if (Pick(40) == 0) RestartHome(); break;
    }
    ForgetTheGone();
  }

  uint64_t TrueTotal() const {
    uint64_t total = 0;
    for (const PartitionState& p : partitions_) total += p.count;
    for (const MemberState& m : members_) {
      if (m.alive) total += m.bucket.unused();
    }
    return total;
  }
  uint64_t Bound() const { return limit_ + other_zone_; }
  uint64_t spent() const { return spent_; }

  // Every owner caught up, every message delivered and every gone member forgotten: the
  // ledger then knows the zone exactly, so nothing is lost for good.
  void Settle() {
    for (MemberState& m : members_) {
      for (auto& [p, own] : m.owns) {
        own.consumed = partitions_[p].end;
        own.caught_up = true;
      }
    }
    for (int round = 0; round < 3; ++round) {
      // An empty directive settles grants that were lost on the way.
      for (size_t i = 0; i < members_.size(); ++i) {
        if (members_[i].alive) directives_.push_back({i, ledger_.Grant(members_[i].id, 0)});
      }
      while (!directives_.empty()) DeliverOldest();
      for (size_t i = 0; i < members_.size(); ++i) SendReport(i);
      while (!reports_.empty() || !directives_.empty()) DeliverOldest();
      ForgetTheGone();
    }
  }
  int64_t LedgerFree() const { return ledger_.Free(); }
  int64_t TrueFree() const { return static_cast<int64_t>(limit_) - static_cast<int64_t>(TrueTotal()); }

 private:
  struct PartitionState {
    uint64_t count = 0;  // the truth: active streams
    int64_t end = 0;     // the log's end offset (one record per admitted stream)
    size_t owner = 0;
    uint64_t generation = 0;
  };
  struct Ownership {
    uint64_t generation = 0;
    int64_t snapshot_end = 0;  // the log end when it took the partition over
    int64_t consumed = 0;
    int64_t horizon = 0;
    uint64_t admitted = 0;
    bool caught_up = false;
  };
  struct MemberState {
    std::string id;
    bool alive = true;
    MemberBucket bucket;
    std::map<int, Ownership> owns;
    std::map<int, PartitionCount> revoked;  // final counts, reported at least once
    std::set<int> revoked_unreported;
  };
  struct InFlight {
    size_t member;
    MemberReport report;
  };
  struct DirectiveInFlight {
    size_t member;
    Directive directive;
  };

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // What an owner counts: exact once it has consumed the whole log; while it lags behind, at
  // most the records it consumed plus its own admissions (never less than their live streams).
  PartitionCount CountOf(int p, const Ownership& own) const {
    const PartitionState& ps = partitions_[p];
    const uint64_t active = own.consumed >= ps.end
                                ? ps.count
                                : std::min<uint64_t>(ps.count, static_cast<uint64_t>(own.consumed)) + own.admitted;
    return PartitionCount{p, active, own.consumed, std::max(own.consumed, own.horizon), own.admitted,
                          own.generation, own.caught_up};
  }

  void TakeOver(int p, size_t to) {
    PartitionState& ps = partitions_[p];
    Ownership own;
    own.generation = ++ps.generation;
    own.snapshot_end = ps.end;
    own.consumed = ps.end - static_cast<int64_t>(std::min<size_t>(static_cast<size_t>(ps.end), Pick(5)));
    own.horizon = own.consumed;
    own.caught_up = own.consumed >= own.snapshot_end;
    ps.owner = to;
    members_[to].owns[p] = own;
    members_[to].revoked.erase(p);
    members_[to].revoked_unreported.erase(p);
  }

  void Spend() {
    MemberState& m = members_[Pick(members_.size())];
    if (!m.alive || m.owns.empty() || !m.bucket.TrySpend()) return;
    auto it = m.owns.begin();
    std::advance(it, Pick(m.owns.size()));
    PartitionState& ps = partitions_[it->first];
    Ownership& own = it->second;
    const bool in_sync = own.consumed == ps.end;
    ++ps.count;
    ++ps.end;  // its record
    ++own.admitted;
    own.horizon = ps.end;
    if (in_sync) own.consumed = ps.end;
    ++spent_;
  }
  void Expire() {
    PartitionState& ps = partitions_[Pick(partitions_.size())];
    if (ps.count > 0) --ps.count;
  }
  void OtherZone() {
    PartitionState& ps = partitions_[Pick(partitions_.size())];
    ++ps.count;
    ++ps.end;
    ++other_zone_;
  }

  void SendReport(size_t i) {
    MemberState& m = members_[i];
    if (!m.alive) return;
    std::vector<PartitionCount> counts;
    for (auto& [p, own] : m.owns) {
      // Replay moves on between reports.
      own.consumed = std::min(partitions_[p].end, own.consumed + static_cast<int64_t>(Pick(3)));
      if (own.consumed >= own.snapshot_end) own.caught_up = true;
      counts.push_back(CountOf(p, own));
    }
    // A revoked partition's final count goes out in the first report after the revocation;
    // later ones may or may not repeat it.
    for (auto it = m.revoked.begin(); it != m.revoked.end();) {
      const bool first = m.revoked_unreported.erase(it->first) > 0;
      if (first || Pick(2) == 0) counts.push_back(it->second);
      it = (!first && Pick(4) == 0) ? m.revoked.erase(it) : std::next(it);
    }
    reports_.push_back({i, m.bucket.Report(std::move(counts))});
  }

  // The home's process restarts: a ledger that knows nothing, under a later incarnation,
  // learning from the live members (the directives of the earlier home may still arrive).
  void RestartHome() {
    ledger_ = HomeLedger(limit_, ++home_);
    std::vector<std::string> live;
    for (const MemberState& m : members_) {
      if (m.alive) live.push_back(m.id);
    }
    ledger_.StartLearning(live, static_cast<int32_t>(partitions_.size()));
    for (size_t i = 0; i < members_.size(); ++i) {
      if (members_[i].alive) directives_.push_back({i, ledger_.Grant(members_[i].id, 0)});
    }
    ++restarts_;
  }

  void GrantSome() {
    const size_t i = Pick(members_.size());
    if (!members_[i].alive) return;
    directives_.push_back({i, ledger_.Grant(members_[i].id, 1 + Pick(8))});
  }
  void ReturnSome() {
    const size_t i = Pick(members_.size());
    if (!members_[i].alive) return;
    directives_.push_back({i, ledger_.Return(members_[i].id, 1 + Pick(4))});
  }

  void Move() {
    const int p = static_cast<int>(Pick(partitions_.size()));
    const size_t to = Pick(members_.size());
    const size_t from = partitions_[p].owner;
    if (to == from || !members_[to].alive) return;
    MemberState& old = members_[from];
    old.revoked[p] = CountOf(p, old.owns.at(p));
    old.revoked_unreported.insert(p);
    old.owns.erase(p);
    TakeOver(p, to);
  }

  void Kill() {
    std::vector<size_t> alive;
    for (size_t i = 0; i < members_.size(); ++i) {
      if (members_[i].alive) alive.push_back(i);
    }
    if (alive.size() < 2) return;
    const size_t dead = alive[Pick(alive.size())];
    MemberState& m = members_[dead];
    m.alive = false;
    // Kafka gives its partitions to the others. Its reports still on the way arrive late.
    std::vector<int> owned;
    for (const auto& [p, own] : m.owns) owned.push_back(p);
    m.owns.clear();
    m.revoked.clear();
    for (int p : owned) {
      size_t to = dead;
      while (to == dead || !members_[to].alive) to = Pick(members_.size());
      TakeOver(p, to);
    }
    dying_.push_back(dead);
  }

  void ForgetTheGone() {
    std::erase_if(dying_, [&](size_t dead) {
      if (!ledger_.Forgettable(members_[dead].id)) return false;
      ledger_.Forget(members_[dead].id);
      return true;
    });
  }

  void Deliver() {
    if (reports_.empty() && directives_.empty()) return;
    const bool report = directives_.empty() || (!reports_.empty() && Pick(2) == 0);
    if (report) {
      const size_t k = Pick(std::min<size_t>(reports_.size(), 4));  // out of order
      InFlight f = reports_[k];
      if (Pick(8) == 0) {
        reports_.erase(reports_.begin() + static_cast<std::ptrdiff_t>(k));  // dropped
        return;
      }
      // Else delivered, and once in eight times kept to be delivered again.
      if (Pick(8) != 0) reports_.erase(reports_.begin() + static_cast<std::ptrdiff_t>(k));
      ledger_.Apply(members_[f.member].id, f.report);
    } else {
      const size_t k = Pick(std::min<size_t>(directives_.size(), 4));
      DirectiveInFlight d = directives_[k];
      directives_.erase(directives_.begin() + static_cast<std::ptrdiff_t>(k));
      if (Pick(8) == 0) return;  // dropped
      if (members_[d.member].alive) members_[d.member].bucket.Apply(d.directive);
    }
  }
  void DeliverOldest() {
    if (!reports_.empty()) {
      const InFlight f = reports_.front();
      reports_.pop_front();
      ledger_.Apply(members_[f.member].id, f.report);
    } else {
      const DirectiveInFlight d = directives_.front();
      directives_.pop_front();
      if (members_[d.member].alive) members_[d.member].bucket.Apply(d.directive);
    }
  }

  std::mt19937 rng_;
  uint64_t home_ = 1;  // the home's incarnation
  HomeLedger ledger_;
  uint64_t limit_;
  std::vector<PartitionState> partitions_;
  std::vector<MemberState> members_;
  std::deque<InFlight> reports_;
  std::deque<DirectiveInFlight> directives_;
  std::vector<size_t> dying_;
  uint64_t other_zone_ = 0;
  uint64_t spent_ = 0;
  uint64_t restarts_ = 0;

 public:
  uint64_t restarts() const { return restarts_; }
};

TEST(HomeLedgerTest, ASimulatedZoneNeverHoldsMoreThanItsLimit) {
  uint64_t spent = 0, restarts = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    const uint64_t limit = 8 + seed % 120;
    Zone zone(seed, 2 + static_cast<int>(seed % 7), 16, limit);
    for (int step = 0; step < 3000; ++step) {
      zone.Step();
      ASSERT_LE(zone.TrueTotal(), zone.Bound()) << "seed " << seed << " step " << step;
    }
    zone.Settle();
    ASSERT_LE(zone.TrueTotal(), zone.Bound()) << "seed " << seed;
    // Nothing leaks for good: once everything is reported, the ledger frees exactly what the
    // zone has left (0 or less when other zones filled it).
    EXPECT_EQ(zone.LedgerFree(), zone.TrueFree()) << "seed " << seed;
    spent += zone.spent();
    restarts += zone.restarts();
  }
  // The property is not vacuous: members did admit streams with granted headroom, and homes
  // restarted.
  EXPECT_GT(spent, 10'000u);
  EXPECT_GT(restarts, 300u);
}

}  // namespace
}  // namespace limits::zone
