#include "limits/zone/home_ledger.h"

#include <algorithm>
#include <cstdint>

namespace limits::zone {

HomeLedger::HomeLedger(uint64_t limit, uint64_t incarnation, int32_t num_partitions, uint64_t rotation)
    : limit_(limit), incarnation_(incarnation), rotation_(rotation), floors_(limit, num_partitions, rotation) {}

void HomeLedger::SetLimit(uint64_t limit) {
  limit_ = limit;
  floors_ = PartitionFloors(limit, floors_.partitions(), rotation_);
}

HomeLedger::Member& HomeLedger::MemberOf(std::string_view member) {
  auto it = members_.find(member);
  if (it == members_.end()) it = members_.emplace(std::string(member), Member{}).first;
  return it->second;
}

bool HomeLedger::Apply(std::string_view member, const MemberReport& report) {
  if (forgotten_.contains(member)) return false;
  // From the network: a count or headroom no zone can hold is refused, so that sums never wrap.
  constexpr uint64_t kMost = uint64_t{1} << 40;
  if (report.unused > kMost) return false;
  for (const PartitionCount& pc : report.counts) {
    if (pc.active > kMost || pc.admitted > kMost) return false;
  }
  Member& m = MemberOf(member);
  if (m.reported && report.seq <= m.last_report) return false;
  m.reported = true;
  m.last_report = report.seq;
  m.unused = report.unused;
  // A directive of ours at or below what the member applied is in its unused, or will never
  // be: it drops directives older than the last it applied. (One of another home's tells
  // nothing of ours.)
  if (report.applied_home == incarnation_ && report.applied_directive > 0) {
    m.applied = std::max(m.applied, report.applied_directive);
    m.knows_us = true;
  }
  if (report.applied_home > incarnation_) {
    m.applied = UINT64_MAX;  // it moved on to a later home
    superseded_ = std::max(superseded_, report.applied_home);
  }
  std::erase_if(m.in_flight, [&](const Directive& d) { return d.seq <= m.applied; });

  for (const PartitionCount& pc : report.counts) {
    uint64_t& generation = m.generations[pc.partition];
    generation = std::max(generation, pc.generation);
    std::vector<Reading>& readings = partitions_[pc.partition];
    auto own = std::find_if(readings.begin(), readings.end(), [&](const Reading& r) { return r.member == member; });
    if (own == readings.end()) {
      readings.push_back({std::string(member), pc});
    } else {
      own->count = pc;
    }
    // A reading whose whole history another member has consumed adds nothing to that one's.
    // Two that hold each other's (both consumed to the same end) keep the later owner's. (A
    // report that omits a partition never clears it.)
    auto covers = [](const PartitionCount& r, const PartitionCount& s) { return r.consumed >= s.horizon; };
    std::vector<bool> drop(readings.size(), false);
    for (size_t i = 0; i < readings.size(); ++i) {
      const PartitionCount& s = readings[i].count;
      for (size_t j = 0; j < readings.size() && !drop[i]; ++j) {
        const PartitionCount& r = readings[j].count;
        if (i == j || drop[j] || !covers(r, s)) continue;
        drop[i] = !covers(s, r) || r.generation > s.generation || (r.generation == s.generation && j > i);
      }
    }
    std::vector<Reading> kept;
    for (size_t i = 0; i < readings.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(readings[i]));
    }
    readings.swap(kept);
  }
  StopWaitingIfDone();
  return true;
}

uint64_t HomeLedger::PartitionTotal(const std::vector<Reading>& readings) {
  // Each reading's history, plus what the members lagging behind it admitted since they took
  // the partition over (after that history, or counted twice: never less). The largest counts.
  uint64_t total = 0;
  for (const Reading& s : readings) {
    uint64_t with_later = s.count.active;
    for (const Reading& r : readings) {
      if (&r != &s && r.count.consumed < s.count.horizon) with_later += r.count.admitted;
    }
    total = std::max(total, with_later);
  }
  return total;
}

uint64_t HomeLedger::Counted() const {
  uint64_t total = 0;
  for (const auto& [partition, readings] : partitions_) {
    const uint64_t t = PartitionTotal(readings);
    // While members may still admit on their floors, a partition holds its floor, filled or not.
    total += RoomsOpen() ? std::max(t, floors_.Of(partition)) : t;
  }
  if (RoomsOpen()) {
    for (int32_t p = 0; p < floors_.partitions(); ++p) {
      if (!partitions_.contains(p)) total += floors_.Of(p);
    }
  }
  return total;
}

uint64_t HomeLedger::Held() const {
  uint64_t total = 0;
  for (const auto& [name, m] : members_) {
    total += m.unused;
    for (const Directive& d : m.in_flight) total += static_cast<uint64_t>(d.delta);
  }
  return total;
}

int64_t HomeLedger::Free() const {
  return static_cast<int64_t>(limit_) - static_cast<int64_t>(Counted()) - static_cast<int64_t>(Held());
}

void HomeLedger::StartClosing(std::vector<std::string> members) { Start(std::move(members), true); }
void HomeLedger::StartLearning(std::vector<std::string> members) { Start(std::move(members), false); }

void HomeLedger::Start(std::vector<std::string> members, bool closing) {
  waiting_on_ = std::move(members);
  std::erase_if(waiting_on_, [&](const std::string& m) { return forgotten_.contains(m); });
  closing_ = closing;
  waiting_ = true;
  StopWaitingIfDone();
}

void HomeLedger::Excuse(std::string_view member) {
  if (!closing_) return;
  std::erase_if(waiting_on_, [&](const std::string& m) { return m == member; });
  StopWaitingIfDone();
}

void HomeLedger::AwaitAlso(std::string_view member) {
  if (!RoomsOpen() || forgotten_.contains(member)) return;
  if (std::find(waiting_on_.begin(), waiting_on_.end(), member) == waiting_on_.end()) waiting_on_.emplace_back(member);
}

void HomeLedger::Replace(std::string_view from, std::string_view to) {
  auto it = std::find(waiting_on_.begin(), waiting_on_.end(), from);
  if (it == waiting_on_.end()) return;
  waiting_on_.erase(it);
  if (!forgotten_.contains(to) && std::find(waiting_on_.begin(), waiting_on_.end(), to) == waiting_on_.end()) {
    waiting_on_.emplace_back(to);
  }
  StopWaitingIfDone();
}

const HomeLedger::Reading* HomeLedger::Newest(int32_t partition) const {
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || it->second.empty()) return nullptr;
  return &*std::max_element(it->second.begin(), it->second.end(),
                            [](const Reading& a, const Reading& b) { return a.count.generation < b.count.generation; });
}

void HomeLedger::StopWaitingIfDone() {
  if (!waiting_) return;
  for (const std::string& name : waiting_on_) {
    auto it = members_.find(name);
    if (it == members_.end() || !it->second.knows_us) return;
  }
  if (!AllCounted()) return;
  waiting_ = false;
  waiting_on_.clear();
}

uint64_t HomeLedger::Rooms(std::string_view member) const {
  uint64_t rooms = 0;
  for (int32_t p = 0; p < floors_.partitions(); ++p) {
    const Reading* newest = Newest(p);
    if (newest == nullptr || newest->member != member) continue;
    const uint64_t t = PartitionTotal(partitions_.at(p));
    const uint64_t f = floors_.Of(p);
    rooms += t < f ? f - t : 0;
  }
  return rooms;
}

bool HomeLedger::AllCounted() const {
  for (int32_t p = 0; p < floors_.partitions(); ++p) {
    const Reading* newest = Newest(p);
    if (newest == nullptr || !newest->count.caught_up) return false;
  }
  return true;
}

Directive HomeLedger::Grant(std::string_view member, uint64_t want) {
  // A closing ledger grants once every partition is counted: one over its floor (streams a
  // hot bucket admitted before this ledger, or another zone's) is in no floor.
  const int64_t free = CanGrant() ? Free() : 0;
  const uint64_t places = free <= 0 ? 0 : std::min(want, static_cast<uint64_t>(free));
  Directive d{static_cast<int64_t>(places), ++next_seq_, incarnation_};
  Member& m = MemberOf(member);
  m.directed = true;
  if (places > 0) m.in_flight.push_back(d);
  return d;
}

std::vector<std::string> HomeLedger::Members() const {
  std::vector<std::string> out;
  for (const auto& [name, m] : members_) out.push_back(name);
  return out;
}

bool HomeLedger::Unsettled(std::string_view member) const {
  if (RoomsOpen()) return true;
  return std::any_of(members_.begin(), members_.end(),
                     [&](const auto& m) { return m.first != member && !m.second.in_flight.empty(); });
}

bool HomeLedger::AwaitsAcknowledgement(std::string_view member) const {
  auto it = members_.find(member);
  return it != members_.end() && !it->second.in_flight.empty();
}

bool HomeLedger::Directed(std::string_view member) const {
  auto it = members_.find(member);
  return it != members_.end() && it->second.directed;
}

Directive HomeLedger::Return(std::string_view member, uint64_t places) {
  MemberOf(member).directed = true;
  const uint64_t held = ReportedUnused(member);
  return Directive{-static_cast<int64_t>(std::min(places, held)), ++next_seq_, incarnation_};
}

uint64_t HomeLedger::ReportedUnused(std::string_view member) const {
  auto it = members_.find(member);
  return it == members_.end() ? 0 : it->second.unused;
}

bool HomeLedger::Forgettable(std::string_view member) const {
  auto it = members_.find(member);
  if (it == members_.end()) return true;
  for (const auto& entry : it->second.generations) {
    const uint64_t generation = entry.second;  // a plain name: clang 14 captures no structured binding
    auto p = partitions_.find(entry.first);
    if (p == partitions_.end()) return false;
    const bool taken_over = std::any_of(p->second.begin(), p->second.end(), [&](const Reading& r) {
      return r.member != member && r.count.caught_up && r.count.generation > generation;
    });
    if (!taken_over) return false;
  }
  return true;
}

void HomeLedger::Forget(std::string_view member) {
  auto it = members_.find(member);
  if (it != members_.end()) members_.erase(it);
  forgotten_.emplace(member);
  // Its partitions have later owners, caught up: they count what it admitted.
  std::erase_if(waiting_on_, [&](const std::string& m) { return m == member; });
  StopWaitingIfDone();
}

}  // namespace limits::zone
