// Which consumed records a partition applies: records of other zones always; during replay
// everything; once ready, not the records this very process produced (it applied them
// synchronously). Records carry the producing process's run tag in a header — the instance
// id plus a per-process random id, because the instance id (a pod name) is reused by the
// next run, which must apply what the previous run produced. A record without the header
// (Loki's own producers) falls back to its zone, as Loki does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "limits/lifecycle/partition_state.h"

namespace limits {

inline constexpr char kInstanceHeader[] = "limitsd-instance";

// "<instance id>/<16 hex digits>": unique per process.
std::string MakeRunTag(std::string_view instance_id);

inline bool ShouldApply(PartitionState state, std::string_view record_zone,
                        std::optional<std::string_view> record_run_tag, std::string_view my_zone,
                        std::string_view my_run_tag) {
  if (state != PartitionState::kReady) return true;
  if (record_run_tag) return *record_run_tag != my_run_tag;
  return record_zone != my_zone;
}

}  // namespace limits
