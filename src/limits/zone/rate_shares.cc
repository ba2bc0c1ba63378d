#include "limits/zone/rate_shares.h"

#include <algorithm>
#include <cmath>

namespace limits::zone {
namespace {
constexpr double kWhole = static_cast<double>(kWholeRate);
// A demand below a thousandth of the rate, with nothing asked since the last round, is none.
constexpr double kNoDemand = kWhole / 1000;
// The first round's window when there was none before.
constexpr int64_t kFirstWindowMs = 1000;
// Rounds brought forward (a new bucket asks for one) may follow each other closely: bytes of
// a shorter window count as spread over this long, so that a burst does not read as a flood.
constexpr int64_t kMinWindowMs = 100;
// Reported demands stop at 2^40 millionths (the codec's bound); the home weighs at most 1000x.
constexpr double kMaxDemand = 1099511627776.0;
}  // namespace

double RateShares::ShareFor(const BucketKey& key, double rate, double bytes, bool* first) {
  std::lock_guard lock(mu_);
  auto [it, created] = entries_.try_emplace(key);
  Entry& e = it->second;
  e.bytes += bytes;
  e.rate = rate;
  *first = created;
  return static_cast<double>(e.share) / kWhole;
}

std::vector<RateReport> RateShares::Reports(int64_t now_ms) {
  std::lock_guard lock(mu_);
  const int64_t window_ms = last_report_ms_ < 0 ? kFirstWindowMs : std::max(kMinWindowMs, now_ms - last_report_ms_);
  last_report_ms_ = now_ms;
  std::vector<RateReport> out;
  out.reserve(entries_.size());
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    const double asked = e.rate > 0 ? e.bytes * 1000.0 / static_cast<double>(window_ms) / e.rate * kWhole : 0;
    e.bytes = 0;
    // Up at once (a burst is served now), down by halves (a pause between pushes keeps it).
    e.demand = std::min(kMaxDemand, asked >= e.demand ? asked : (asked + e.demand) / 2);
    if (asked == 0 && e.demand < kNoDemand) e.demand = 0;
    const auto demand = static_cast<uint64_t>(std::llround(e.demand));
    out.push_back({it->first, demand, e.share});
    it = demand == 0 && e.share == 0 ? entries_.erase(it) : std::next(it);
  }
  return out;
}

void RateShares::Apply(const std::vector<RateShare>& shares) {
  std::lock_guard lock(mu_);
  for (const RateShare& s : shares) {
    auto it = entries_.find(s.key);
    if (it != entries_.end()) it->second.share = std::min(s.share, kWholeRate);
  }
}

std::optional<double> RateShares::Current(const BucketKey& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return static_cast<double>(it->second.share) / kWhole;
}

}  // namespace limits::zone
