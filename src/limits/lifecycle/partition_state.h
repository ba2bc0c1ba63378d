// The states of an assigned partition: pending (offsets being looked up), replaying (catching
// up to the end offset seen at assignment), ready (serving synchronous checks).
#pragma once

#include <cstdint>
#include <string_view>

namespace limits {

enum class PartitionState : uint8_t { kPending = 0, kReplaying = 1, kReady = 2 };

inline std::string_view PartitionStateName(PartitionState s) {
  switch (s) {
    case PartitionState::kPending: return "pending";
    case PartitionState::kReplaying: return "replaying";
    case PartitionState::kReady: return "ready";
  }
  return "unknown";
}

}  // namespace limits
