// Column family names: "meta" for checkpoints and the format version, and one "pNNNNN" per
// partition, zero-padded so a listing sorts by partition.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace limits::storage {

inline constexpr char kMetaCf[] = "meta";
inline constexpr int32_t kMaxPartition = 99999;

std::string PartitionCfName(int32_t partition);
// The partition a column family holds; nullopt for "meta", "default" and anything else.
std::optional<int32_t> ParsePartitionCfName(std::string_view name);

}  // namespace limits::storage
