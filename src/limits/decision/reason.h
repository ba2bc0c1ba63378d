// Why a stream was rejected (ExceedsLimitsResult.reason). 0-4 are Loki's, as pkg/limits/reason.go
// numbers them on its main ("new reasons must be appended, as the value is sent on the wire");
// limitsd's own reasons start at 1000, out of the range Loki appends to.
//
// Loki's distributor accepts a stream with reason 1 or without a result and rejects every
// other reason as a stream-limit rejection (429, loki_discarded_samples_total{reason=
// "stream_limit"}); ARCHITECTURE.md, "Reason codes", says what each one means to it.
#pragma once

#include <cstdint>
#include <string_view>

namespace limits {

enum Reason : uint32_t {
  kReasonUnknown = 0,
  kReasonFailed = 1,      // not checked: its partition is not ready on this node (or an error)
  kReasonMaxStreams = 2,  // a new stream (or one changing bucket) beyond its bucket's stream limit
  // Loki's, answered only by CheckLimitsAndShard (which limitsd does not implement): the
  // partition is not this instance's; the shard count was capped by the stream budget.
  kReasonNotOwned = 3,
  kReasonStreamShardsCapped = 4,
  // limitsd's own: the stream's rate bucket (the tenant's, or its policy's) is used up on this
  // node. Was 3 before Loki took 3 for "not owned".
  kReasonRateLimited = 1001,
};

// Loki's String() text for its reasons ("unknown reason" for any other value), and ours.
constexpr std::string_view ReasonText(uint32_t reason) {
  switch (reason) {
    case kReasonFailed: return "failed";
    case kReasonMaxStreams: return "max streams";
    case kReasonNotOwned: return "not owned";
    case kReasonStreamShardsCapped: return "shards capped";
    case kReasonRateLimited: return "rate limited";
    default: return "unknown reason";
  }
}

}  // namespace limits
