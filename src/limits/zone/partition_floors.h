// PartitionFloors: the room a cold bucket has in each partition. While a bucket is cold (far
// from its limit, no ledger anywhere) the owner of partition p admits into it only while the
// bucket's active streams there are below floor(p), with no message to anyone. The floors sum
// to half the limit. Counts live per partition and move with it through Kafka, so no sequence
// of rebalances can take a cold bucket past that sum (a share per member could: a member that
// inherits full partitions and one that inherits empty ones would both admit to their share).
// Half, not all: when the bucket turns hot, the home must be able to grant each member the
// room it had left before that room is given up (ARCHITECTURE.md, "Exact limits across a zone").
#pragma once

#include <cstdint>

namespace limits::zone {

class PartitionFloors {
 public:
  PartitionFloors() = default;  // no partitions: no room anywhere
  // `rotation` (a hash of the tenant and bucket) picks which partitions get the larger floors,
  // so that tenants' rounding does not land on the same partitions.
  PartitionFloors(uint64_t limit, int32_t partitions, uint64_t rotation)
      : total_(limit / 2), partitions_(partitions > 0 ? partitions : 0),
        rotation_(partitions > 0 ? rotation % static_cast<uint64_t>(partitions) : 0) {}

  int32_t partitions() const { return partitions_; }
  // The rooms of every partition together: floor(limit / 2).
  uint64_t total() const { return partitions_ == 0 ? 0 : total_; }

  // floor(total / P) or one more: the first `total mod P` partitions from the rotation get one more.
  uint64_t Of(int32_t partition) const {
    if (partition < 0 || partition >= partitions_) return 0;
    const auto n = static_cast<uint64_t>(partitions_);
    const uint64_t index = (static_cast<uint64_t>(partition) + n - rotation_) % n;
    return total_ / n + (index < total_ % n ? 1 : 0);
  }

  // The count at which a cold owner asks for the bucket to turn hot: half its floor (at least
  // one stream), well before the partition is full.
  uint64_t Trigger(int32_t partition) const {
    const uint64_t f = Of(partition);
    return f < 2 ? 1 : (f + 1) / 2;
  }

 private:
  uint64_t total_ = 0;
  int32_t partitions_ = 0;
  uint64_t rotation_ = 0;
};

}  // namespace limits::zone
