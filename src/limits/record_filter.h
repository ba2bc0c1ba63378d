// Which consumed records a partition applies: records of other zones always; during replay
// everything; once ready, not the records this very instance produced (it applied them
// synchronously). Records carry the producing instance in a header; a record without it
// (an older producer, or Loki's) falls back to its zone — so a partition moving between two
// nodes of one zone keeps the old owner's late records (Loki discards by zone and loses them).
#pragma once

#include <optional>
#include <string_view>

#include "limits/partition_state.h"

namespace limits {

inline constexpr char kInstanceHeader[] = "limitsd-instance";

inline bool ShouldApply(PartitionState state, std::string_view record_zone,
                        std::optional<std::string_view> record_instance, std::string_view my_zone,
                        std::string_view my_instance) {
  if (state != PartitionState::kReady) return true;
  if (record_instance) return *record_instance != my_instance;
  return record_zone != my_zone;
}

}  // namespace limits
