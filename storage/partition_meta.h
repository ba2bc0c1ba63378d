// Partition lifecycle facts that must survive a restart: when the partition was revoked
// from this node and when its data is to be dropped unless it is assigned again.
//   key   = "partition/" | u32 BE partition            (column family "meta")
//   value = u8 version (1) | i64 LE revoked at (unix ms) | i64 LE evict after (unix ms)
// Absent while the partition is assigned (or was never revoked).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::storage {

struct PartitionMeta {
  int64_t revoked_at_ms = 0;
  int64_t evict_after_ms = 0;

  friend bool operator==(const PartitionMeta&, const PartitionMeta&) = default;
};

inline constexpr char kPartitionMetaKeyPrefix[] = "partition/";

std::string PartitionMetaKey(int32_t partition);
std::string EncodePartitionMeta(const PartitionMeta& meta);
Result<PartitionMeta> DecodePartitionMeta(std::string_view value);

// "<prefix>" | u32 BE partition, and back; shared by the meta keys of partitions.
std::string MetaKey(std::string_view prefix, int32_t partition);
bool ParseMetaKey(std::string_view key, std::string_view prefix, int32_t* partition);

}  // namespace limits::storage
