#include "limits/zone/home_ledger.h"

#include <algorithm>

namespace limits::zone {

HomeLedger::HomeLedger(uint64_t limit, int64_t handover_grace_ms) : limit_(limit), grace_ms_(handover_grace_ms) {}

HomeLedger::Member& HomeLedger::MemberOf(std::string_view member) {
  auto it = members_.find(member);
  if (it == members_.end()) it = members_.emplace(std::string(member), Member{}).first;
  return it->second;
}

bool HomeLedger::Apply(std::string_view member, const MemberReport& report, int64_t now_ms) {
  Member& m = MemberOf(member);
  if (m.reported && report.seq <= m.last_report) return false;
  m.reported = true;
  m.last_report = report.seq;
  m.unused = report.unused;
  m.applied = std::max(m.applied, report.applied_directive);
  // A directive at or below what the member applied is in its unused, or will never be: it
  // drops directives older than the last it applied.
  std::erase_if(m.in_flight, [&](const Directive& d) { return d.seq <= m.applied; });

  for (const PartitionCount& pc : report.counts) {
    std::vector<Reading>& readings = partitions_[pc.partition];
    auto own = std::find_if(readings.begin(), readings.end(), [&](const Reading& r) { return r.member == member; });
    if (own == readings.end()) {
      readings.push_back({std::string(member), pc.active, now_ms});
    } else {
      own->active = pc.active;
      own->at_ms = now_ms;
    }
    // Other members' readings count only during the handover grace; the newest always counts
    // (a report that omits a partition never clears it).
    const auto newest = std::max_element(readings.begin(), readings.end(),
                                         [](const Reading& a, const Reading& b) { return a.at_ms < b.at_ms; });
    const int64_t newest_at = newest->at_ms;
    std::erase_if(readings, [&](const Reading& r) { return r.at_ms < now_ms - grace_ms_ && r.at_ms != newest_at; });
  }
  return true;
}

uint64_t HomeLedger::EffectiveCount(const std::vector<Reading>& readings, int64_t now_ms) const {
  if (readings.empty()) return 0;
  const Reading* newest = &readings.front();
  for (const Reading& r : readings) {
    if (r.at_ms > newest->at_ms) newest = &r;
  }
  uint64_t count = newest->active;
  for (const Reading& r : readings) {
    if (r.at_ms >= now_ms - grace_ms_) count = std::max(count, r.active);
  }
  return count;
}

uint64_t HomeLedger::Counted(int64_t now_ms) const {
  uint64_t total = 0;
  for (const auto& [partition, readings] : partitions_) total += EffectiveCount(readings, now_ms);
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

int64_t HomeLedger::Free(int64_t now_ms) const {
  return static_cast<int64_t>(limit_) - static_cast<int64_t>(Counted(now_ms)) - static_cast<int64_t>(Held());
}

Directive HomeLedger::Grant(std::string_view member, uint64_t want, int64_t now_ms) {
  const int64_t free = Free(now_ms);
  const uint64_t places = free <= 0 ? 0 : std::min(want, static_cast<uint64_t>(free));
  Directive d{static_cast<int64_t>(places), ++next_seq_};
  if (places > 0) MemberOf(member).in_flight.push_back(d);
  return d;
}

Directive HomeLedger::Return(std::string_view member, uint64_t places) {
  const uint64_t held = ReportedUnused(member);
  return Directive{-static_cast<int64_t>(std::min(places, held)), ++next_seq_};
}

uint64_t HomeLedger::ReportedUnused(std::string_view member) const {
  auto it = members_.find(member);
  return it == members_.end() ? 0 : it->second.unused;
}

void HomeLedger::Forget(std::string_view member) {
  auto it = members_.find(member);
  if (it != members_.end()) members_.erase(it);
}

}  // namespace limits::zone
