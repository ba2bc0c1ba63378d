// RateShares: a member's side of its zone's rate buckets — how fast bytes are asked of it per
// bucket (its demand, reported every round to the bucket's home), and the share of the bucket's
// rate it refills at: the one its home last gave it, 0 before the first (the whole burst,
// which every member keeps, serves until then), kept while the home is out of reach, so that
// the shares never sum past the rate (rate_ledger.h). No request waits for a home: a bucket
// first asked of here asks for a round at once.
// Thread-safe (a lock of its own, taken alone).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "limits/zone/exchange.h"

namespace limits::zone {

class RateShares {
 public:
  // The share of the bucket's rate (0 to 1) to refill at now, for a request that asks `bytes`
  // of it, which count towards its demand. `rate`: the bucket's rate here (bytes/s, > 0).
  // `*first` is set when the bucket was not known here (report it soon).
  double ShareFor(const BucketKey& key, double rate, double bytes, bool* first);

  // This round's reports at `now_ms`: every bucket asked of since the last round or holding a
  // share, with its demand since then (rising at once, falling by halves) and its share. A
  // bucket reported with neither is forgotten.
  std::vector<RateReport> Reports(int64_t now_ms);
  // A home's shares, applied.
  void Apply(const std::vector<RateShare>& shares);

  // The share the bucket refills at; nullopt when it is not known here.
  std::optional<double> Current(const BucketKey& key);

 private:
  struct Entry {
    double bytes = 0;    // asked since the last report
    double rate = 0;     // the bucket's rate (bytes/s) when last asked
    double demand = 0;   // millionths of the rate, smoothed
    uint64_t share = 0;  // the home's, in millionths
  };

  std::mutex mu_;
  std::map<BucketKey, Entry> entries_;  // GUARDED_BY(mu_)
  int64_t last_report_ms_ = -1;         // GUARDED_BY(mu_)
};

}  // namespace limits::zone
