// Why ExceedsLimits rejected a stream (ExceedsLimitsResult.reason). 0-2 are Loki's; 3 is ours
// (Loki's distributor rejects every reason but 1, as a stream-limit rejection).
#pragma once

#include <cstdint>

namespace limits {

enum Reason : uint32_t {
  kReasonUnknown = 0,
  kReasonFailed = 1,       // not checked: its partition is not ready on this node (or an error)
  kReasonMaxStreams = 2,   // a new stream (or one changing bucket) beyond its bucket's stream limit
  kReasonRateLimited = 3,  // the tenant's ingestion rate and burst are used up on this node
};

}  // namespace limits
