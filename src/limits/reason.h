// Why ExceedsLimits rejected a stream (ExceedsLimitsResult.reason). 0-2 are Loki's; 3 and 4
// are ours (Loki's distributor rejects every reason but 1, as a stream-limit rejection).
#pragma once

#include <cstdint>

namespace limits {

enum Reason : uint32_t {
  kReasonUnknown = 0,
  kReasonFailed = 1,       // not checked: its partition is not ready on this node (or an error)
  kReasonMaxStreams = 2,   // a new stream beyond the tenant's (or its policy's) stream limit
  kReasonRateLimited = 3,  // the tenant's ingestion rate and burst are used up on this node
  kReasonTooManyPolicies = 4,  // a new ingestion policy of a tenant using as many as it may
};

}  // namespace limits
