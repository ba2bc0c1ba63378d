#include "limits/zone/zone_home.h"

#include <algorithm>
#include <set>
#include <utility>

namespace limits::zone {
namespace {
// Of a report's `want`, what streams wait for (never more than it: the codec refuses that).
uint64_t WaitingOf(const BucketReport& r) { return std::min(r.waiting, r.want); }
}  // namespace

ZoneHome::ZoneHome(int32_t num_partitions, int64_t lease_ms, LimitOf limit_of, HomedHere homed_here, int64_t started_ms,
                   uint16_t tiebreak)
    : num_partitions_(num_partitions),
      lease_ms_(lease_ms),
      limit_of_(std::move(limit_of)),
      homed_here_(std::move(homed_here)),
      started_ms_(started_ms),
      tiebreak_(tiebreak),
      rates_(lease_ms) {}

bool ZoneHome::Leased(const std::string& member, int64_t now_ms) const {
  auto it = answered_.find(member);
  const int64_t at = it == answered_.end() ? started_ms_ : it->second;
  // The member times its lease from when it sent the exchange, before this answer; a tenth
  // more covers clocks that run at slightly different rates.
  return now_ms - at <= lease_ms_ + lease_ms_ / 10;
}

std::vector<std::string> ZoneHome::Known(const std::vector<std::string>& members) const {
  std::vector<std::string> out = members;
  for (const auto& [member, at] : answered_) {
    if (std::find(out.begin(), out.end(), member) == out.end()) out.push_back(member);
  }
  return out;
}

std::vector<std::string> ZoneHome::MayAdmitCold(const std::vector<std::string>& members, int64_t now_ms) const {
  std::vector<std::string> out = Known(members);
  std::erase_if(out, [&](const std::string& m) { return !Leased(m, now_ms); });
  return out;
}

HomeLedger& ZoneHome::Start(const BucketKey& key, uint64_t seen_incarnation, bool closing,
                            const std::vector<std::string>& members, int64_t now_ms, int64_t wall_ms) {
  last_incarnation_ =
      NextIncarnation(static_cast<uint64_t>(wall_ms), std::max(seen_incarnation, last_incarnation_), tiebreak_);
  HomeLedger ledger(limit_of_(key), last_incarnation_, num_partitions_, HashOf(key));
  if (closing) {
    ledger.StartClosing(MayAdmitCold(members, now_ms));
  } else {
    // Every member that may hold headroom (the ring's) or admit cold (a lease from here).
    std::vector<std::string> all = Known(members);
    std::erase_if(all, [&](const std::string& m) {
      return !Leased(m, now_ms) && std::find(members.begin(), members.end(), m) == members.end();
    });
    ledger.StartLearning(std::move(all));
  }
  return ledgers_.insert_or_assign(key, std::move(ledger)).first->second;
}

ExchangeAnswer ZoneHome::Answer(const ExchangeRequest& request, const std::vector<std::string>& members,
                                int64_t now_ms, std::optional<int64_t> wall) {
  const int64_t wall_ms = wall.value_or(now_ms);
  answered_[request.member] = now_ms;
  ExchangeAnswer answer;
  std::set<BucketKey> reported;
  // Step down from every bucket the ring moved elsewhere.
  std::erase_if(ledgers_, [&](const auto& entry) { return !homed_here_(entry.first); });
  for (const BucketReport& r : request.reports) {
    if (!homed_here_(r.key)) continue;
    auto it = ledgers_.find(r.key);
    HomeLedger* ledger = it == ledgers_.end() ? nullptr : &it->second;
    if (ledger == nullptr) {
      if (r.report.applied_home != 0) {
        // It holds headroom of an earlier home: the bucket was hot before this node homed it.
        ledger = &Start(r.key, r.report.applied_home, false, members, now_ms, wall_ms);
      } else if (r.trigger && Learnt(members)) {
        ledger = &Start(r.key, 0, true, members, now_ms, wall_ms);
      } else {
        continue;  // a cold bucket nobody asked to turn hot
      }
    }
    ledger->SetLimit(limit_of_(r.key));
    // A report not applied (late, or from a forgotten member) is as if not sent: the bucket
    // gets the answer of one not reported, below. But an urgent ask that crossed a newer
    // report of the same member (a request's exchange and a round's, in flight together)
    // still gets what waits when free: a grant is held until acknowledged whatever the report.
    if (!ledger->Apply(request.member, r.report)) {
      if (r.waiting > 0 && ledger->CanGrant() && !ledger->Forgotten(request.member)) {
        answer.directives.push_back({r.key, ledger->Grant(request.member, r.waiting)});
        reported.insert(r.key);
      }
      continue;
    }
    reported.insert(r.key);
    if (ledger->Superseded() > 0) {
      // Its members apply a later home's directives and drop ours: start above it, learning.
      ledger = &Start(r.key, ledger->Superseded(), false, members, now_ms, wall_ms);
      ledger->Apply(request.member, r.report);
    }
    if (ledger->RoomsOpen() && !ledger->CanGrant()) {
      // Not every partition is counted yet: the member stays cold, on floors the ledger counts
      // in full, rather than closed with nothing (its rooms come with its first directive).
      continue;
    }
    // What streams wait for now, all of it (nothing is stranded); beyond it, what it asks for
    // at most half of a fair share of what is free (little is stranded with members that stop
    // needing it, and near the limit an asker's top-up does not take what another's streams
    // wait for). And, in the first directive of a turn to hot, the room it could still have
    // admitted cold.
    const int64_t free = ledger->Free();
    const uint64_t fair = free <= 0 ? 0 : static_cast<uint64_t>(free) / (2 * std::max<size_t>(1, members.size()));
    const uint64_t waiting = WaitingOf(r);
    uint64_t want = waiting + std::min(r.want - waiting, std::max<uint64_t>(1, fair));
    if (ledger->OwesRooms(request.member)) want += ledger->Rooms(request.member);
    // Before this grant: once it is made, the asker awaits it.
    const bool settled = Settled(*ledger, request.member);
    const Directive grant = ledger->Grant(request.member, want);
    answer.directives.push_back({r.key, grant});
    const uint64_t short_of = waiting - std::min<uint64_t>(waiting, static_cast<uint64_t>(grant.delta));
    const bool starved = waiting > 0 ? short_of > 0 : grant.delta == 0 && r.want > 0 && r.report.unused == 0;
    // Full: it got nothing, nothing is free, and nobody holds places unused or on the way. (One
    // that got the last places is not told: they are its own, and may be recalled from it.)
    if (starved && settled && grant.delta == 0 && ledger->Free() <= 0) {
      answer.full.push_back(r.key);
    } else if (starved && !ledger->Learning()) {
      // Out of headroom with nothing free: half of what each other member holds comes back;
      // for an urgent ask short of what waits, at least each one's share of the shortfall (so
      // that the asker's next exchange gets all of it when the others hold that much).
      uint64_t held_by_others = 0;
      for (const std::string& other : ledger->Members()) {
        if (other != request.member) held_by_others += ledger->ReportedUnused(other);
      }
      for (const std::string& other : ledger->Members()) {
        const uint64_t unused = ledger->ReportedUnused(other);
        if (other == request.member || unused == 0) continue;
        uint64_t back = unused / 2;
        if (waiting > 0 && held_by_others > 0) {
          const uint64_t share = (short_of * unused + held_by_others - 1) / held_by_others;  // values < 2^40
          back = std::min(unused, std::max(back, share));
        }
        if (back > 0) answer.recalls.push_back({other, {r.key, ledger->Return(other, back)}});
      }
    }
  }
  for (auto& [key, ledger] : ledgers_) {
    answer.roster.push_back(key);
    if (reported.contains(key)) continue;
    if (ledger.RoomsOpen()) {
      ledger.AwaitAlso(request.member);  // it reports the bucket next time: the roster lists it
    } else {
      answer.directives.push_back({key, ledger.Grant(request.member, 0)});
    }
  }
  std::vector<RateReport> rates;
  for (const RateReport& r : request.rates) {
    if (homed_here_(r.key)) rates.push_back(r);
  }
  if (!rates.empty()) {
    auto heard_all_since = [&](int64_t since_ms) {
      return std::all_of(members.begin(), members.end(), [&](const std::string& m) {
        auto it = answered_.find(m);
        return it != answered_.end() && it->second >= since_ms;
      });
    };
    answer.rate_shares = rates_.Answer(request.member, rates, members.size(), heard_all_since, now_ms);
  }
  return answer;
}

bool ZoneHome::Settled(const HomeLedger& ledger, const std::string& asker) {
  // Unsettled covers open rooms and the others' unacknowledged grants. A grant the asker has not
  // acknowledged may have been lost on its way (a call that timed out after the home answered):
  // its places are free again once the asker applies a later one.
  if (!ledger.CanGrant() || ledger.Unsettled(asker) || ledger.AwaitsAcknowledgement(asker)) return false;
  const std::vector<std::string> members = ledger.Members();
  return std::all_of(members.begin(), members.end(),
                     [&](const std::string& m) { return m == asker || ledger.ReportedUnused(m) == 0; });
}

void ZoneHome::Acknowledge(const std::string& member, const std::vector<BucketReport>& reports) {
  for (const BucketReport& r : reports) {
    auto it = ledgers_.find(r.key);
    if (it != ledgers_.end() && homed_here_(r.key)) it->second.Apply(member, r.report);
  }
}

void ZoneHome::Renamed(std::string_view placeholder, std::string_view name) {
  for (auto& [key, ledger] : ledgers_) ledger.Replace(placeholder, name);
}

bool ZoneHome::Learnt(const std::vector<std::string>& members) {
  if (!learnt_) {
    learnt_ = std::all_of(members.begin(), members.end(), [&](const std::string& m) { return answered_.contains(m); });
  }
  return learnt_;
}

void ZoneHome::Tick(const std::vector<std::string>& members, int64_t now_ms) {
  const std::vector<std::string> known = Known(members);
  for (auto& [key, ledger] : ledgers_) {
    for (const std::string& member : known) {
      if (Leased(member, now_ms)) continue;
      ledger.Excuse(member);  // it no longer admits cold
      const bool in_ring = std::find(members.begin(), members.end(), member) != members.end();
      if (!in_ring && ledger.Forgettable(member)) ledger.Forget(member);
    }
  }
  rates_.Tick(members, homed_here_, now_ms);
}

std::vector<BucketKey> ZoneHome::Starved(const ExchangeRequest& request) const {
  std::vector<BucketKey> out;
  for (const BucketReport& r : request.reports) {
    auto it = ledgers_.find(r.key);
    if (it == ledgers_.end() || r.want == 0 || r.report.unused > 0) continue;
    const HomeLedger& ledger = it->second;
    // Closing with a partition not counted yet (it grants nothing until then), or short of
    // what waits (or, for a round's ask, of what it asks) while the others' holdings are not
    // known.
    const bool uncounted = ledger.RoomsOpen() && !ledger.CanGrant();
    const uint64_t short_at = r.waiting > 0 ? r.waiting : r.want;
    if (uncounted || (ledger.Free() < static_cast<int64_t>(short_at) && ledger.Unsettled(request.member))) {
      out.push_back(r.key);
    }
  }
  return out;
}

std::vector<BucketDirective> ZoneHome::GrantWaiting(const ExchangeRequest& request, const ExchangeAnswer& answer) {
  std::vector<BucketDirective> out;
  for (const BucketReport& r : request.reports) {
    if (r.waiting == 0 || !homed_here_(r.key)) continue;
    auto it = ledgers_.find(r.key);
    if (it == ledgers_.end()) continue;
    HomeLedger& ledger = it->second;
    if (!ledger.CanGrant() || ledger.Forgotten(request.member) || ledger.Free() <= 0) continue;
    uint64_t granted = 0;
    for (const BucketDirective& d : answer.directives) {
      if (d.key == r.key && d.directive.delta > 0) granted += static_cast<uint64_t>(d.directive.delta);
    }
    const uint64_t waiting = WaitingOf(r);
    uint64_t want = waiting > granted ? waiting - granted : 0;
    if (ledger.OwesRooms(request.member)) want += ledger.Rooms(request.member);
    if (want == 0) continue;
    out.push_back({r.key, ledger.Grant(request.member, want)});
  }
  return out;
}

std::vector<BucketDirective> ZoneHome::RoomDirectives(const std::vector<BucketKey>& keys, const std::string& member) {
  std::vector<BucketDirective> out;
  for (const BucketKey& key : keys) {
    auto it = ledgers_.find(key);
    if (it == ledgers_.end() || !homed_here_(key)) continue;
    HomeLedger& ledger = it->second;
    // Not before it grants: a directive of 0 would close the member's floors with nothing.
    if (!ledger.OwesRooms(member) || !ledger.CanGrant()) continue;
    out.push_back({key, ledger.Grant(member, ledger.Rooms(member))});
  }
  return out;
}

std::vector<BucketKey> ZoneHome::Uncounted() const {
  std::vector<BucketKey> out;
  for (const auto& [key, ledger] : ledgers_) {
    if (ledger.RoomsOpen() && !ledger.CanGrant()) out.push_back(key);
  }
  return out;
}

const HomeLedger* ZoneHome::LedgerOf(const BucketKey& key) const {
  auto it = ledgers_.find(key);
  return it == ledgers_.end() ? nullptr : &it->second;
}

}  // namespace limits::zone
