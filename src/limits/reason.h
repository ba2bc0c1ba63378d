// Why ExceedsLimits rejected a stream (ExceedsLimitsResult.reason). 0-2 are Loki's; 3 is ours.
#pragma once

#include <cstdint>

namespace limits {

enum Reason : uint32_t {
  kReasonUnknown = 0,
  kReasonFailed = 1,       // not checked: its partition is not ready on this node (or an error)
  kReasonMaxStreams = 2,   // a new stream beyond the tenant's (or its policy's) stream limit
  kReasonRateLimited = 3,  // the tenant's ingestion rate and burst are used up on this node
};

}  // namespace limits
