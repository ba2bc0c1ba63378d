// Ingestion-policy names as the node keeps them. Loki takes a push's policy verbatim from the
// client's X-Loki-Ingestion-Policy header (pkg/validation/ingestion_policies.go, PolicyFor),
// so no name may fail a call or be skipped: a name that is over-long or not UTF-8 — or one a
// tenant cannot have an id for (max_policies_per_tenant) — is counted under no policy, in the
// tenant's default bucket. That is where Loki counts every policy without a limit of its own:
// the name matters only when the overrides give it one, and such names always get an id.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "common/utf8.h"

namespace limits {

// Longest ingestion policy the store keeps (rows store it with a varint length; a record's or
// request's longer name counts under no policy).
inline constexpr size_t kMaxPolicyLength = 255;

enum class PolicyNameCheck : uint8_t { kKept = 0, kTooLong, kNotUtf8, kBeyondCap };
inline constexpr size_t kPolicyNameChecks = 4;

inline PolicyNameCheck CheckPolicyName(std::string_view name) {
  if (name.empty()) return PolicyNameCheck::kKept;
  if (name.size() > kMaxPolicyLength) return PolicyNameCheck::kTooLong;
  if (!IsValidUtf8(name)) return PolicyNameCheck::kNotUtf8;
  return PolicyNameCheck::kKept;
}

inline const char* PolicyNameCheckLabel(PolicyNameCheck c) {
  switch (c) {
    case PolicyNameCheck::kKept: return "kept";
    case PolicyNameCheck::kTooLong: return "too_long";
    case PolicyNameCheck::kNotUtf8: return "not_utf8";
    case PolicyNameCheck::kBeyondCap: return "beyond_cap";
  }
  return "unknown";
}

// Streams counted under no policy because their policy's name was not kept, by why.
// Thread-safe.
class IgnoredPolicies {
 public:
  void Add(PolicyNameCheck why, uint64_t n = 1) {
    counts_[static_cast<size_t>(why)].fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Of(PolicyNameCheck why) const { return counts_[static_cast<size_t>(why)].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kPolicyNameChecks> counts_{};
};

}  // namespace limits
