// A partition's checkpoint: how far into the partition's Kafka log its rows reach. Written
// in the same WriteBatch as the rows it covers, in the "meta" column family.
//   key   = "checkpoint/" | u32 BE partition
//   value = u8 version (1) | u64 LE next offset | i64 LE newest applied record time (unix ms)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::storage {

struct Checkpoint {
  // The next offset to consume: every record below it is reflected in the rows.
  int64_t next_offset = 0;
  // Timestamp of the newest record applied so far, unix ms; 0 when none.
  int64_t newest_record_ms = 0;

  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

inline constexpr char kCheckpointKeyPrefix[] = "checkpoint/";
inline constexpr char kFormatVersionKey[] = "format_version";
// The Kafka topic the checkpoints' offsets (and so the rows) come from: raw topic name.
inline constexpr char kTopicKey[] = "topic";

std::string CheckpointKey(int32_t partition);
std::string EncodeCheckpoint(const Checkpoint& cp);
// kCorruption on short or unknown-version bytes.
Result<Checkpoint> DecodeCheckpoint(std::string_view value);

}  // namespace limits::storage
