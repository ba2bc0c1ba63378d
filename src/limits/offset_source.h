// OffsetSource: the Kafka offsets a newly assigned partition's lifecycle depends on, behind
// an interface so limits/ sees no Kafka type (the implementation is kafka/).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace limits {

struct PartitionOffsets {
  int32_t partition = -1;
  bool ok = false;
  std::string error;  // why not, when !ok
  int64_t start = -1;  // log start offset (retention has deleted everything below)
  int64_t end = -1;    // next offset to be produced ("last produced" + 1)
  // First offset whose record time is at or after the window start; `end` when none is.
  int64_t window_start = -1;
};

class OffsetSource {
 public:
  virtual ~OffsetSource() = default;
  // Looks up every partition at once. Never throws; a failure is per partition (!ok).
  // Called off the rebalance callback: it waits on the network.
  virtual std::vector<PartitionOffsets> Lookup(std::span<const int32_t> partitions, int64_t window_start_ms) = 0;
};

}  // namespace limits
