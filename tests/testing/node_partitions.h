// A running Node's assignment as tests look at it: which partitions are assigned, which are
// ready, and each one's generation (a re-assignment changes it). Header-only; the test
// target links limits::node.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "node/node.h"

namespace limits::testing {

inline std::set<int32_t> ReadyPartitions(Node& node) {
  std::set<int32_t> out;
  for (const PartitionInfo& info : node.partitions().Snapshot()) {
    if (info.state == PartitionState::kReady) out.insert(info.partition);
  }
  return out;
}

inline std::set<int32_t> AssignedPartitions(Node& node) {
  std::set<int32_t> out;
  for (const PartitionInfo& info : node.partitions().Snapshot()) out.insert(info.partition);
  return out;
}

// Exactly `partitions` assigned, and every one of them ready.
inline bool AllReady(Node& node, size_t partitions) {
  const auto assigned = AssignedPartitions(node);
  return assigned.size() == partitions && ReadyPartitions(node) == assigned;
}

inline std::map<int32_t, int64_t> Generations(Node& node) {
  std::map<int32_t, int64_t> out;
  for (const PartitionInfo& info : node.partitions().Snapshot()) out[info.partition] = info.generation;
  return out;
}

}  // namespace limits::testing
