#include "limits/zone/rate_ledger.h"

#include <algorithm>

namespace limits::zone {
namespace {
// A demand above a thousand times the rate weighs no more: sums stay far from wrapping.
constexpr uint64_t kMaxDemand = 1000 * kWholeRate;
}  // namespace

uint64_t RateLedger::Target(const Bucket& b, const std::string& member, size_t ring_size) {
  const uint64_t own = b.holders.at(member).demand;
  if (own == 0) return 0;
  uint64_t total = 0;
  for (const auto& [name, h] : b.holders) total += h.demand;
  if (total <= kWholeRate) {
    const uint64_t members = std::max<uint64_t>({ring_size, b.holders.size(), 1});
    return own + (kWholeRate - total) / members;
  }
  return own * kWholeRate / total;  // own <= kMaxDemand: no wrap
}

std::vector<RateShare> RateLedger::Answer(const std::string& member, const std::vector<RateReport>& reports,
                                          size_t ring_size, const HeardAllSince& heard_all_since, int64_t now_ms) {
  std::vector<RateShare> out;
  for (const RateReport& r : reports) {
    auto [it, created] = buckets_.try_emplace(r.key);
    Bucket& b = it->second;
    if (created) b.started_ms = now_ms;
    if (!b.learnt) b.learnt = heard_all_since(b.started_ms);
    Holder& h = b.holders[member];
    h.demand = std::min(r.demand, kMaxDemand);
    h.applied = std::min(r.applied, kWholeRate);
    h.heard_ms = now_ms;
    uint64_t others = 0;
    for (const auto& [name, o] : b.holders) {
      if (name != member) others += HeldBy(o);
    }
    uint64_t share = std::min(Target(b, member, ring_size), others < kWholeRate ? kWholeRate - others : 0);
    // Until every member has told this home what it applies, an earlier home's shares may be
    // out there: raise none.
    if (!b.learnt) share = std::min(share, h.applied);
    h.given = share;
    out.push_back({r.key, share});
  }
  return out;
}

void RateLedger::Tick(const std::vector<std::string>& members, const std::function<bool(const BucketKey&)>& homed_here,
                      int64_t now_ms) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    std::erase_if(it->second.holders, [&](const auto& holder) {
      const Holder& h = holder.second;
      if (h.demand == 0 && h.given == 0 && h.applied == 0) return true;
      // The member times its lease from when it sent, before this home heard it; a tenth more
      // covers clocks running at slightly different rates (as ZoneHome's leases).
      const bool listed = std::find(members.begin(), members.end(), holder.first) != members.end();
      return !listed && now_ms - h.heard_ms > lease_ms_ + lease_ms_ / 10;
    });
    it = !homed_here(it->first) || it->second.holders.empty() ? buckets_.erase(it) : std::next(it);
  }
}

std::optional<uint64_t> RateLedger::Held(const BucketKey& key) const {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return std::nullopt;
  uint64_t total = 0;
  for (const auto& [name, h] : it->second.holders) total += HeldBy(h);
  return total;
}

}  // namespace limits::zone
